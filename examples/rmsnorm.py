"""RMSNorm over the last axis (LLaMA/T5 style):

    y = x / sqrt(mean(x^2) + eps) * weight

``x`` is ``[..., H]``, ``weight`` is ``[H]``; ``eps`` is a compile-time constant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import pyasc_mlir as pa

from ._common import f64, normal, round_to

CONSTS = {"eps": 1e-6}
SHAPES = [(4, 384), (8, 1536), (2, 3, 64), (1, 1), (5, 7), (3, 33), (2, 513)]
REDUCTION = True


def rmsnorm(x, weight, eps):
    ms = pa.mean(x * x, -1, keepdim=True)
    return x * pa.rsqrt(ms + eps) * weight


KERNEL = rmsnorm


def reference(x: np.ndarray, weight: np.ndarray, eps: float = CONSTS["eps"]) -> np.ndarray:
    """float64 NumPy RMSNorm, rounded to ``x``'s dtype."""
    xs, w = f64(x, weight)
    rms = np.sqrt(np.mean(xs**2, axis=-1, keepdims=True) + eps)
    return round_to(xs / rms * w, x.dtype)


def make_inputs(
    rng: np.random.Generator, dtype: Any, shape: tuple[int, ...] = (4, 384), **consts: Any
) -> tuple[np.ndarray, ...]:
    """``(x, weight)``."""
    return normal(rng, shape, dtype, 1.0), normal(rng, (shape[-1],), dtype, 0.1, 1.0)
