"""Scalar math for kernel bodies (``from pyasc_mlir.language import math as lm``): the op
table's unary functions and ``maximum``/``minimum``, plus the constants ``pi`` and ``e``
(Python's ``math.pi``/``math.e`` work in kernel bodies as well)."""

from __future__ import annotations

import math as _math

from pyasc_mlir.language.builtins import (
    abs,
    cos,
    erf,
    exp,
    log,
    maximum,
    minimum,
    neg,
    reciprocal,
    relu,
    rsqrt,
    sigmoid,
    sin,
    softplus,
    sqrt,
    tanh,
)

pi = _math.pi
e = _math.e

__all__ = [
    "abs",
    "cos",
    "e",
    "erf",
    "exp",
    "log",
    "maximum",
    "minimum",
    "neg",
    "pi",
    "reciprocal",
    "relu",
    "rsqrt",
    "sigmoid",
    "sin",
    "softplus",
    "sqrt",
    "tanh",
]
