"""Explicit tiles of the kernel language: local buffers and the 2-D copies between them and
global memory (README "Kernel language", "Explicit tiles").

Inside ``@lang.kernel`` these are markers the frontend (``python/lang_tiles.py``) compiles:
a blocked loop ``for i in lang.range(0, M, BM)`` that ``lang.load_2d``s slices
``a[i:i+BM, k:k+BK]`` into ``lang.local_buffer``s, computes on them and ``lang.store_2d``s
the result is lowered with the person's block sizes. Called as plain Python (the debugger
mode, or outside a kernel) they compute with NumPy, tails included: a slice that runs past
the array is shorter than the buffer, and only its part of the buffer is copied (``load_2d``
zeroes the rest).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pyasc_mlir.language.types import DType, float32

__all__ = ["SCOPES", "TILE_FNS", "global_buffer", "load_2d", "local_buffer", "store_2d"]

SCOPES = ("UB", "L1", "L0A", "L0B", "L0C")
"""Where a local buffer lives: the Unified Buffer (vector operands, the default), L1 (Cube
operands), L0A/L0B (Cube inputs), L0C (the Cube accumulator)."""


def _shape(shape: int | tuple[int, ...]) -> tuple[int, ...]:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def local_buffer(
    shape: int | tuple[int, ...], dtype: DType = float32, scope: str = "UB"
) -> np.ndarray:
    """A tile of ``shape`` (compile-time ints) and ``dtype`` in on-chip memory ``scope`` (one
    of :data:`SCOPES`). Its bytes (times 2 when double-buffered) count against the scope's
    capacity at compile time."""
    if scope not in SCOPES:
        raise ValueError(f"scope {scope!r} is not one of {', '.join(SCOPES)}")
    return np.zeros(_shape(shape), dtype.np_dtype)


def global_buffer(shape: int | tuple[int, ...], dtype: DType = float32) -> np.ndarray:
    """An array in global memory (GM) of ``shape`` and ``dtype``: ``lang.empty``, named for
    kernels that stage results with ``store_2d``."""
    return np.zeros(_shape(shape), dtype.np_dtype)


def _common(src: np.ndarray, dst: np.ndarray) -> tuple[slice, ...]:
    if src.ndim != dst.ndim:
        raise ValueError(f"copy between rank {src.ndim} and rank {dst.ndim}")
    return tuple(slice(0, min(a, b)) for a, b in zip(src.shape, dst.shape, strict=True))


def load_2d(src: np.ndarray, dst: np.ndarray) -> None:
    """Copy the slice ``src`` (of a global array, e.g. ``a[i:i+BM, k:k+BK]``) into the local
    buffer ``dst``; a tail slice (shorter than the buffer) fills its leading part and the rest
    is zero (so a tail K block adds nothing to a matmul's accumulator)."""
    part = _common(src, dst)
    if tuple(src.shape) != tuple(dst.shape):
        dst[...] = 0
    dst[part] = src[part]


def store_2d(src: np.ndarray, dst: np.ndarray) -> None:
    """Copy the local buffer ``src`` into the slice ``dst`` of a global array (a tail slice
    takes the buffer's leading part)."""
    part = _common(src, dst)
    dst[part] = src[part]


TILE_FNS: dict[Callable[..., Any], str] = {
    local_buffer: "local_buffer",
    global_buffer: "global_buffer",
    load_2d: "load_2d",
    store_2d: "store_2d",
}
"""Marker function -> what the frontend compiles it as."""
