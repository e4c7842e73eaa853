"""Small helpers shared by the example operators' references and input generators."""

from __future__ import annotations

from typing import Any

import numpy as np


def f64(*arrays: np.ndarray) -> list[np.ndarray]:
    """The arrays widened to float64 (references compute in float64)."""
    return [np.asarray(a, dtype=np.float64) for a in arrays]


def round_to(y: np.ndarray, dtype: Any) -> np.ndarray:
    """``y`` rounded (to nearest even) to ``dtype``, as a C-contiguous array."""
    return np.ascontiguousarray(np.asarray(y).astype(np.dtype(dtype)))


def normal(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    dtype: Any,
    scale: float = 1.0,
    loc: float = 0.0,
) -> np.ndarray:
    """Normally distributed values of ``shape``, rounded to ``dtype``."""
    return round_to(rng.normal(loc, scale, size=shape), dtype)
