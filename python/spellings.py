"""Hints for misspelled names and keywords: the supported spelling nearest to what was written.

:func:`keyword_hint` answers an unknown keyword argument (``dims=`` -> ``dim=``),
:func:`name_hint` an unknown ``pyasc_mlir`` function or tensor method (``pa.cat`` is
supported; ``pa.argmax`` is not, and the hint says what to write instead).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

__all__ = ["KEYWORD_ALIASES", "NAME_ALTERNATIVES", "keyword_hint", "name_hint", "unknown_keyword"]

KEYWORD_ALIASES: dict[str, str] = {
    "dims": "dim",
    "axes": "dim",
    "keep_dim": "keepdim",
    "keep_dims": "keepdim",
    "keepDim": "keepdim",
    "approx": "approximate",
    "epsilon": "eps",
    "w": "weight",
    "b": "bias",
    "a_min": "min",
    "a_max": "max",
    "exp": "exponent",
    "value": "fill_value",
}
"""Keywords people write for the ones the functions take (PyTorch's, NumPy's or neither)."""

NAME_ALTERNATIVES: dict[str, str] = {
    "argmax": "argmax/argmin are not supported (no index results); use pyasc_mlir.amax(x, dim)",
    "argmin": "argmax/argmin are not supported (no index results); use pyasc_mlir.amin(x, dim)",
    "std": "use pyasc_mlir.sqrt(pyasc_mlir.var(x, dim, unbiased=...))",
    "mm": "use pyasc_mlir.matmul(a, b) or a @ b",
    "bmm": "use pyasc_mlir.matmul(a, b) or a @ b (batch dims broadcast)",
    "einsum": "use pyasc_mlir.matmul with transpose_a/transpose_b, and permute",
    "concatenate": "use pyasc_mlir.concat(tensors, dim=...) or pyasc_mlir.cat",
    "stack": "use pyasc_mlir.cat([t.unsqueeze(d) for t in ts], dim=d)",
    "relu6": "use pyasc_mlir.clamp(x, 0.0, 6.0)",
    "leaky_relu": "use pyasc_mlir.where(x > 0, x, slope * x)",
    "swish": "use pyasc_mlir.silu(x)",
    "square": "use x * x",
    "exp2": "use pyasc_mlir.exp(x * math.log(2))",
    "expm1": "use pyasc_mlir.exp(x) - 1",
    "log1p": "use pyasc_mlir.softplus or pyasc_mlir.log(1 + x)",
    "zeros": "inside an operator use pyasc_mlir.zeros_like(x)",
    "ones": "inside an operator use pyasc_mlir.ones_like(x)",
    "full": "inside an operator use pyasc_mlir.full_like(x, value)",
    "double": "float64 is not supported; use x.float()",
    "item": "a tensor's values are not known at compile time; use pyasc_mlir.where",
    "tolist": "a tensor's values are not known at compile time",
    "numpy": "a tensor's values are not known at compile time; return the tensor",
    "contiguous": "not needed: tensors here are always contiguous; drop the call",
    "clone": "not needed: tensors are immutable values; use the tensor itself",
    "float": "the dtype is pyasc_mlir.float32 (torch.float's name here); x.float() casts",
    "half": "the dtype is pyasc_mlir.float16 (torch.half's name here); x.half() casts",
}
"""Names people reach for that are not supported, with what to write instead."""


def name_hint(name: str, supported: Sequence[str], kind: str = "function") -> str:
    """The hint for an unknown function or method ``name``: an alternative, the closest
    supported spellings, or the list of ``supported`` names."""
    if name in NAME_ALTERNATIVES:
        return NAME_ALTERNATIVES[name]
    close = difflib.get_close_matches(name, list(supported), n=3, cutoff=0.6)
    if close:
        return "did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
    return f"supported tensor {kind}s: " + ", ".join(supported)


def unknown_keyword(exc: TypeError) -> str | None:
    """The keyword named by a ``TypeError`` from ``inspect.Signature.bind``, if any."""
    m = re.search(r"unexpected keyword argument '([^']+)'", str(exc))
    return m.group(1) if m else None


def keyword_hint(bad: str, params: Sequence[str]) -> str | None:
    """The hint for the unknown keyword ``bad`` of a function taking ``params``."""
    alias = KEYWORD_ALIASES.get(bad)
    if alias is not None and alias in params:
        return f"use {alias}= (this function takes {', '.join(p + '=' for p in params)})"
    close = difflib.get_close_matches(bad, list(params), n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]}=? (this function takes {', '.join(params)})"
    return None
