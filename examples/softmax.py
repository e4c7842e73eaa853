"""Numerically stable softmax over the last axis:

    y = exp(x - max(x)) / sum(exp(x - max(x)))

Subtracting the row maximum keeps ``exp`` from overflowing (fp16 ``exp`` overflows above
~11.09; the kernel computes in fp32, but large logits such as attention masks of -1e4 or
+100 would still overflow without it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import pyasc_mlir as pa

from ._common import f64, normal, round_to

CONSTS: dict[str, Any] = {}
SHAPES = [(4, 128), (2, 12, 16, 16), (1, 1), (6, 7), (3, 33), (2, 513)]
REDUCTION = True


def softmax(x):
    shifted = x - x.max(-1, keepdim=True)
    e = pa.exp(shifted)
    return e / e.sum(-1, keepdim=True)


KERNEL = softmax


def reference(x: np.ndarray) -> np.ndarray:
    """float64 NumPy softmax over the last axis, rounded to ``x``'s dtype."""
    (xs,) = f64(x)
    z = np.exp(xs - np.max(xs, axis=-1, keepdims=True))
    return round_to(z / z.sum(axis=-1, keepdims=True), x.dtype)


def make_inputs(
    rng: np.random.Generator, dtype: Any, shape: tuple[int, ...] = (4, 128), **consts: Any
) -> tuple[np.ndarray, ...]:
    """``(x,)``: logits with a spread of 3 around an offset of 20 (so that a softmax without
    the max subtraction would overflow fp16 ``exp``)."""
    return (normal(rng, shape, dtype, 3.0, 20.0),)
