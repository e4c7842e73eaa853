"""The frontend's op-name tables: which ``pyasc_mlir`` functions and tensor methods exist.

One place for these names: the AST visitor (:mod:`.code_generator`), the call resolver
(:mod:`.calls`) and the semantics layer (:mod:`.semantic`) read them from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyasc_mlir import ops, ops_torch
from pyasc_mlir.dialects import opset

__all__ = [
    "BINARY",
    "LAYOUT",
    "MARKERS",
    "METHODS",
    "OP_NAMES",
    "PY_UNARY",
    "REDUCE",
    "SHAPE_HELPERS",
    "SUPPORTED_FUNCS",
    "TORCH",
    "TORCH_METHODS",
    "UNARY",
]

UNARY = tuple(r.function for r in opset.UNARY.values() if r.function is not None)
REDUCE = ("sum", "mean", "max", "min", "var")
LAYOUT = ("matmul", "transpose", "concat")
SHAPE_HELPERS = ("match_shape", "assert_same_rank", "assert_compatible")
BINARY = tuple(r.function for r in opset.BINARY.values() if r.function is not None)
TORCH = ops_torch.TORCH_FUNCTIONS
"""PyTorch's spellings (:mod:`pyasc_mlir.ops_torch`), handled by :mod:`.dispatch_torch`."""
OP_NAMES = (*UNARY, *REDUCE, *BINARY, "where", "cast", *LAYOUT, *SHAPE_HELPERS, *TORCH)
MARKERS: dict[Callable[..., Any], str] = {getattr(ops, n): n for n in OP_NAMES}
TORCH_METHODS = (
    "expand",
    "expand_as",
    "view",
    "view_as",
    "float",
    "half",
    "to",
    "size",
    "dim",
    "numel",
)
"""Tensor methods without a function of the same name (``x.view(...)``, ``x.float()``)."""
METHODS = (
    *(m for r in opset.UNARY.values() for m in r.methods),
    *REDUCE,
    "reshape",
    "astype",
    "transpose",
    "permute",
    *(
        n
        for n in TORCH
        if n
        not in (
            "cat",
            "zeros_like",
            "ones_like",
            "full_like",
            "permute",
            "reshape",
            "scaled_dot_product_attention",
        )
    ),
    *TORCH_METHODS,
)
SUPPORTED_FUNCS = ", ".join(OP_NAMES)
PY_UNARY: dict[str, Callable[[float], float]] = {
    k: r.py_fold for k, r in opset.UNARY.items() if r.py_fold is not None
}
"""Compile-time (Python float) versions of the unary functions, for constant arguments."""
