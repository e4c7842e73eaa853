"""Conditional scale: ``y = where(x > threshold, x * scale, x)`` with compile-time
``threshold`` and ``scale`` (a generalised leaky/parametric ramp)."""

from __future__ import annotations

from typing import Any

import numpy as np

import pyasc_mlir as pa

from ._common import f64, normal, round_to

CONSTS = {"threshold": 0.25, "scale": 1.7}
"""``threshold`` is exactly representable in fp16 and fp32, so the comparison does not depend
on how the constant is rounded."""
SHAPES = [(4, 1536), (2, 3, 64), (1, 1), (5, 7), (3, 33), (2, 513)]
REDUCTION = False


def conditional_scale(x, threshold, scale):
    return pa.where(x > threshold, x * scale, x)


KERNEL = conditional_scale


def reference(
    x: np.ndarray, threshold: float = CONSTS["threshold"], scale: float = CONSTS["scale"]
) -> np.ndarray:
    """float64 NumPy, rounded to ``x``'s dtype."""
    (xs,) = f64(x)
    y = xs.copy()
    above = xs > threshold
    y[above] = xs[above] * scale
    return round_to(y, x.dtype)


def make_inputs(
    rng: np.random.Generator, dtype: Any, shape: tuple[int, ...] = (4, 1536), **consts: Any
) -> tuple[np.ndarray, ...]:
    """``(x,)``: unit-normal values (about 40% above the default threshold)."""
    return (normal(rng, shape, dtype),)
