"""The arithmetic of the ``ascendc`` interpreter: the op table's per-call semantics, compute
lanes, ``Cast`` values and ``ReduceSum``'s summation order (as the CPU runtime)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects import opset
from pyasc_mlir.interpreter.ascendc_state import F16
from pyasc_mlir.interpreter.tile_cast import convert
from pyasc_mlir.platform import VECTOR_REPEAT_BYTES, ceil_div
from pyasc_mlir.types import BF16, astype

__all__ = [
    "BINARY",
    "COMPARE",
    "REDUCE_EXTREME",
    "ROUND_MODES",
    "SCALAR",
    "UNARY",
    "cast_values",
    "compute_lanes",
    "reduce_sum",
]


def reduce_sum(x: np.ndarray) -> Any:
    """``ReduceSum`` of the 1-D f16/f32 array ``x`` in the CPU runtime's order: 256-byte
    repeats (the last one zero-padded), a pairwise tree within each repeat
    (``v[i] = v[2i] + v[2i+1]``), then the repeat results added left to right; every addition
    is rounded to ``x.dtype`` (f16 additions are exact in f32 and rounded once, as numpy's
    float16 add does). Returns a numpy scalar of ``x.dtype``."""
    dt = x.dtype
    lanes = VECTOR_REPEAT_BYTES // dt.itemsize
    n = x.size
    reps = ceil_div(n, lanes)
    v = np.zeros(reps * lanes, dt)
    v[:n] = x
    v = v.reshape(reps, lanes)
    with np.errstate(all="ignore"):
        while v.shape[1] > 1:
            v = v[:, 0::2] + v[:, 1::2]
        col = v[:, 0]
        return np.add.accumulate(col)[-1] if reps > 1 else col[0]


def _by_call(records: dict[str, opset.OpRecord]) -> dict[str, Callable[..., Any]]:
    """Ascend C call name -> the op table's ascendc-level semantics (on compute lanes)."""
    return {
        r.call.name: f
        for r in records.values()
        if r.call is not None and (f := r.ascendc_impl()) is not None
    }


UNARY = _by_call(opset.UNARY)
"""``Exp`` ... -> ``f(lanes)`` (see :func:`compute_lanes`)."""
BINARY = _by_call(opset.BINARY)
"""``Add`` ... -> ``f(a, b[, out=])`` on compute lanes."""
SCALAR = _by_call(opset.SCALAR)
"""``Adds`` ... -> ``f(src, scalar[, out=])`` on compute lanes."""
COMPARE = _by_call(opset.COMPARE)
"""``CMPMODE`` name -> ``f(a, b)`` giving ``bool`` lanes."""
REDUCE_EXTREME = {
    r.call.name: r.numpy
    for r in opset.REDUCE.values()
    if r.call is not None and r.numpy is not None
}
"""The non-sum reductions (``ReduceMax``/``ReduceMin``: NaN if any element is NaN; a zero
result's sign by :mod:`pyasc_mlir.dialects.opset_special`)."""
ROUND_MODES = {v: k for k, v in ac.ROUND.items()}
"""``RoundMode`` name -> ``asc.vcast`` round mode (``"CAST_RINT"`` -> ``"rint"``)."""


def compute_lanes(x: np.ndarray) -> np.ndarray:
    """Compute lanes: f16 and bf16 are widened to f32; everything else computes in its own
    type."""
    return astype(x, np.dtype(np.float32)) if x.dtype in (F16, BF16) else x


def cast_values(src: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    """``Cast`` values: the tile interpreter's :func:`convert`, plus round-to-odd to integers
    and saturating integer -> integer conversions (as the CPU runtime)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if src.dtype.kind in "iu":
            return np.clip(src.astype(np.int64), info.min, info.max).astype(dtype)
        if mode == "odd":
            with np.errstate(all="ignore"):
                x = src.astype(np.float64)
                r = np.trunc(x)
                bump = (r != x) & (np.fmod(r, 2.0) == 0.0) & np.isfinite(x)
                r = np.where(bump, r + np.sign(x), r)
                r = np.nan_to_num(r, nan=0.0, posinf=info.max, neginf=info.min)
                return np.clip(r, info.min, info.max).astype(dtype)
    if mode == "odd" and dtype == src.dtype:  # integral value, rounded to odd
        with np.errstate(all="ignore"):
            x = src.astype(np.float64)
            r = np.trunc(x)
            bump = (r != x) & (np.fmod(r, 2.0) == 0.0) & np.isfinite(x)
            return np.where(bump, r + np.sign(x), r).astype(dtype)
    return convert(src, dtype, mode)
