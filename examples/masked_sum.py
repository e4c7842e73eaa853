"""Masked sum over the sequence axis (the numerator of masked mean pooling):

    y[b, h] = sum_s x[b, s, h] * mask[b, s, 0]

``x`` is ``[B, S, H]``, ``mask`` is ``[B, S, 1]`` of 1.0 (token) / 0.0 (padding), in the
dtype of ``x``; the result is ``[B, H]``. The reduction runs over the second-to-last axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import f64, normal, round_to

CONSTS: dict[str, Any] = {}
SHAPES = [(4, 16, 384), (2, 1, 1), (3, 5, 7), (2, 9, 33), (2, 4, 513)]
REDUCTION = True


def masked_sum(x, mask):
    return (x * mask).sum(1)


KERNEL = masked_sum


def reference(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """float64 NumPy masked sum over axis 1, rounded to ``x``'s dtype."""
    xs, m = f64(x, mask)
    return round_to(np.einsum("bsh,bs->bh", xs, m[:, :, 0]), x.dtype)


def make_inputs(
    rng: np.random.Generator, dtype: Any, shape: tuple[int, ...] = (4, 16, 384), **consts: Any
) -> tuple[np.ndarray, ...]:
    """``(x, mask)``: unit-normal ``x``; each sequence ``b`` has a random length in
    ``[1, S]`` of ones followed by zero padding (as a right-padded attention mask)."""
    b, s, _ = shape
    lengths = rng.integers(1, s + 1, size=b)
    mask = (np.arange(s)[None, :] < lengths[:, None])[:, :, None]
    return normal(rng, shape, dtype), round_to(mask, dtype)
