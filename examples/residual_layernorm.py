"""Residual add + LayerNorm over the last axis (the BERT/MiniLM "Add & Norm" block).

    h = x + residual
    y = (h - mean(h)) / sqrt(var(h) + eps) * weight + bias

with ``mean``/``var`` over the last axis and the variance computed as ``mean((h - mean)^2)``
(never ``E[h^2] - E[h]^2``, which can go negative). ``eps`` is a compile-time constant.
``x``/``residual`` are ``[..., H]``; ``weight``/``bias`` are ``[H]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import pyasc_mlir as pa

from ._common import f64, normal, round_to

CONSTS = {"eps": 1e-5}
"""Compile-time arguments (BERT-style models use 1e-12; MiniLM's config says 1e-12)."""
SHAPES = [(4, 384), (16, 384), (2, 3, 64), (1, 1), (5, 7), (3, 33), (2, 513)]
"""Shapes of ``x`` (``weight``/``bias`` are ``[shape[-1]]``) used by the tests."""
REDUCTION = True
"""fp32 results are checked at the reduction tolerance (1e-4)."""


def residual_layernorm(x, residual, weight, bias, eps):
    h = x + residual
    mean = h.mean(-1, keepdim=True)
    d = h - mean
    var = (d * d).mean(-1, keepdim=True)
    return d * pa.rsqrt(var + eps) * weight + bias


KERNEL = residual_layernorm


def reference(
    x: np.ndarray,
    residual: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray,
    eps: float = CONSTS["eps"],
) -> np.ndarray:
    """float64 NumPy residual + LayerNorm, rounded to ``x``'s dtype."""
    xs, rs, w, b = f64(x, residual, weight, bias)
    h = xs + rs
    centred = h - h.sum(axis=-1, keepdims=True) / h.shape[-1]
    variance = np.square(centred).sum(axis=-1, keepdims=True) / h.shape[-1]
    y = centred / np.sqrt(variance + eps) * w + b
    return round_to(y, x.dtype)


def make_inputs(
    rng: np.random.Generator, dtype: Any, shape: tuple[int, ...] = (4, 384), **consts: Any
) -> tuple[np.ndarray, ...]:
    """``(x, residual, weight, bias)``: activations around a non-zero mean, a smaller
    residual, weights near 1 and small biases."""
    h = shape[-1]
    return (
        normal(rng, shape, dtype, 1.0, 0.3),
        normal(rng, shape, dtype, 0.5),
        normal(rng, (h,), dtype, 0.1, 1.0),
        normal(rng, (h,), dtype, 0.1),
    )
