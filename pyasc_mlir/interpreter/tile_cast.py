"""Ascend C ``Cast`` semantics on numpy arrays: float and integer conversions with a round mode.

Used by ``asc.vcast`` (tile level) and by the ``ascendc`` interpreter's ``Cast``.
"""

from __future__ import annotations

import numpy as np
from xdsl.utils.exceptions import InterpretationError

from pyasc_mlir.types import BF16, astype

__all__ = ["convert"]


def _round_integral(x: np.ndarray, mode: str) -> np.ndarray:
    """Round float values to integral values (same dtype) with an Ascend round mode."""
    if mode in ("none", "rint"):
        return np.rint(x)
    if mode == "floor":
        return np.floor(x)
    if mode == "ceil":
        return np.ceil(x)
    if mode == "trunc":
        return np.trunc(x)
    if mode == "round":  # half away from zero
        t = np.trunc(x)
        frac = np.abs(x - t)
        return np.where(frac >= 0.5, t + np.sign(x), t)
    raise InterpretationError(
        f"round mode {mode!r} does not apply to a cast to an integer or an integral float"
    )


def _round_float(x: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    """Convert ``x`` to the float ``dtype`` rounding with ``mode`` (``none``/``rint``: to
    nearest even; ``floor``; ``ceil``; ``trunc``; ``round``: to nearest, ties away from zero;
    ``odd``: to odd)."""
    y = x.astype(dtype)  # correctly rounded, ties to even
    if mode in ("none", "rint") or x.dtype.itemsize <= dtype.itemsize and x.dtype.kind == "f":
        return y
    x64 = x.astype(np.float64)
    y64 = y.astype(np.float64)
    if mode == "floor":
        fix = y64 > x64
        toward = -np.inf
    elif mode == "ceil":
        fix = y64 < x64
        toward = np.inf
    elif mode in ("trunc", "odd"):
        fix = np.abs(y64) > np.abs(x64)
        toward = 0.0
    elif mode == "round":
        # differs from ties-to-even only at an exact tie rounded toward zero
        away = np.nextafter(y, np.copysign(np.inf, y64).astype(dtype))
        tie = (np.abs(y64) < np.abs(x64)) & (
            np.abs(away.astype(np.float64) - x64) == np.abs(x64 - y64)
        )
        return np.where(tie, away, y)
    else:
        raise InterpretationError(f"unknown round mode {mode!r}")
    if fix.any():
        y = np.where(fix, np.nextafter(y, dtype.type(toward)), y)
    if mode == "odd":
        inexact = y.astype(np.float64) != x64
        inexact &= np.isfinite(x64)
        bits = y.view(f"uint{dtype.itemsize * 8}")
        y = np.where(inexact, (bits | 1).view(dtype), y)
    return y


def _convert_bf16(src: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    """A ``Cast`` with bfloat16 on one side, the pairs the Atlas A2 table documents: bf16 ->
    f32 (exact), f32 -> bf16 (``none``/``rint``: to nearest even, bit for bit as the CPU
    runtime; the directed modes through the generic float rounding) and bf16 -> int32."""
    f32 = np.dtype(np.float32)
    if src.dtype == BF16:
        wide = astype(src, f32)
        return wide if dtype == f32 else _convert(wide, dtype, mode)
    if src.dtype != f32:
        raise InterpretationError(f"Cast from {src.dtype} to bfloat16 is not supported")
    if mode in ("none", "rint"):
        return astype(src, BF16)
    nearest = astype(src, BF16)
    near64 = astype(nearest, np.dtype(np.float64))
    x64 = src.astype(np.float64)
    up = _bf16_step(nearest, +1)
    down = _bf16_step(nearest, -1)
    if mode == "floor":
        return np.where(near64 > x64, down, nearest)
    if mode == "ceil":
        return np.where(near64 < x64, up, nearest)
    if mode == "trunc":
        toward = np.where(x64 > 0, down, up)
        return np.where(np.abs(near64) > np.abs(x64), toward, nearest)
    if mode == "round":
        away = np.where(x64 > 0, up, down)
        away64 = astype(away, np.dtype(np.float64))
        tie = (np.abs(near64) < np.abs(x64)) & (np.abs(away64 - x64) == np.abs(x64 - near64))
        return np.where(tie, away, nearest)
    raise InterpretationError(f"round mode {mode!r} does not apply to a cast to bfloat16")


def _bf16_step(x: np.ndarray, direction: int) -> np.ndarray:
    """The bfloat16 neighbour of ``x`` towards +inf (``direction`` 1) or -inf (-1)."""
    return astype(
        np.nextafter(astype(x, np.dtype(np.float32)), np.float32(direction * np.inf)).astype(
            np.float32
        ),
        BF16,
    )


def convert(src: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    """``Cast`` of ``src`` to ``dtype`` with an Ascend round mode (see ``asc.vcast``): to a
    float type, the nearest value in the direction the mode says (``odd``: round to odd);
    float to the same float type or to an integer type: round to an integral value (integers
    saturate, NaN -> 0)."""
    with np.errstate(all="ignore"):
        return _convert(src, dtype, mode)


def _convert(src: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    if BF16 in (src.dtype, dtype) and src.dtype != dtype:
        return _convert_bf16(src, dtype, mode)
    if dtype.kind == "f":
        if src.dtype == dtype:
            return src.copy() if mode == "none" else _round_integral(src, mode)
        return _round_float(src, dtype, mode)
    if src.dtype.kind == "f":
        info = np.iinfo(dtype)
        r = _round_integral(src.astype(np.float64), mode)
        r = np.nan_to_num(r, nan=0.0, posinf=info.max, neginf=info.min)
        return np.clip(r, info.min, info.max).astype(dtype)
    return src.astype(dtype)
