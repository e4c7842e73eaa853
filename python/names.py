"""The frontend's op-name tables: which ``pyasc_mlir`` functions and tensor methods exist.

One place for these names: the AST visitor (:mod:`.code_generator`), the call resolver
(:mod:`.calls`) and the semantics layer (:mod:`.semantic`) read them from here.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

from pyasc_mlir import ops

__all__ = ["LAYOUT", "MARKERS", "METHODS", "OP_NAMES", "PY_UNARY", "REDUCE", "SHAPE_HELPERS",
           "SUPPORTED_FUNCS", "UNARY"]

UNARY = ("exp", "log", "sqrt", "rsqrt", "abs", "relu", "sigmoid", "tanh", "erf", "sin", "cos")
REDUCE = ("sum", "mean", "max", "min", "var")
LAYOUT = ("matmul", "transpose", "concat")
SHAPE_HELPERS = ("match_shape", "assert_same_rank", "assert_compatible")
OP_NAMES = (*UNARY, *REDUCE, "maximum", "minimum", "where", "cast", *LAYOUT,
            *SHAPE_HELPERS)
MARKERS: dict[Callable[..., Any], str] = {getattr(ops, n): n for n in OP_NAMES}
METHODS = (*UNARY, *REDUCE, "reshape", "astype", "transpose", "permute")
SUPPORTED_FUNCS = ", ".join(OP_NAMES)
PY_UNARY: dict[str, Callable[[float], float]] = {
    "exp": math.exp, "log": math.log, "sqrt": math.sqrt, "sin": math.sin, "cos": math.cos,
    "rsqrt": lambda v: 1.0 / math.sqrt(v),
    "abs": builtins.abs, "relu": lambda v: builtins.max(v, 0.0),
    "sigmoid": lambda v: 1.0 / (1.0 + math.exp(-v)), "tanh": math.tanh, "erf": math.erf,
}
"""Compile-time (Python float) versions of the unary functions, for constant arguments."""
