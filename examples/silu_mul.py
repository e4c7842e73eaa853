"""SiLU-gated product (the SwiGLU MLP's gate): ``y = silu(a) * b`` with
``silu(a) = a * sigmoid(a) = a / (1 + exp(-a))``."""

from __future__ import annotations

from typing import Any

import numpy as np

import pyasc_mlir as pa

from ._common import f64, normal, round_to

CONSTS: dict[str, Any] = {}
SHAPES = [(4, 768), (2, 3, 64), (1, 1), (5, 7), (3, 33), (2, 513)]
REDUCTION = False


def silu_mul(a, b):
    return a * pa.sigmoid(a) * b


KERNEL = silu_mul


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """float64 NumPy ``a / (1 + exp(-a)) * b``, rounded to ``a``'s dtype."""
    av, bv = f64(a, b)
    return round_to(av / (1.0 + np.exp(-av)) * bv, a.dtype)


def make_inputs(
    rng: np.random.Generator, dtype: Any, shape: tuple[int, ...] = (4, 768), **consts: Any
) -> tuple[np.ndarray, ...]:
    """``(a, b)``: gate pre-activations over [-8, 8] and unit-normal up projections."""
    return round_to(rng.uniform(-8.0, 8.0, size=shape), dtype), normal(rng, shape, dtype)
