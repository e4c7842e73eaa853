"""The fuzzer's model of each unary op kind (``FuzzModel.interval`` / ``FuzzModel.error`` of the
op table's records, :mod:`pyasc_mlir.dialects.opset`): the value range of a result and a
first-order bound on the error of its fp32 evaluation, in the units of
:mod:`pyasc_mlir.dialects.opset_numerics` (``U`` = fp32 unit roundoff, ``TU`` = libm tolerance).
Each ``*_error(v, e)`` returns the float64 reference of ``v`` and the bound given operand errors
``e``; the bounds cover the ulp bounds in ``ULP_BOUNDS`` (tests/test_transcendental_accuracy.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pyasc_mlir.dialects.opset_numerics import TU, U, erf, gelu64, rel, sigmoid64, softplus64


def abs_interval(lo: float, hi: float) -> tuple[float, float]:
    return (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))


def exp_error(v: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = np.exp(v)
    return r, r * np.expm1(e) + rel(r, TU)


def log_error(v: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = np.log(v)
    low = v - e
    bound = np.where(low > 0, -np.log1p(-np.minimum(e / v, 0.5)), np.inf)
    bound = np.where((low > 0) & (e / v > 0.5), np.log(v) - np.log(low), bound)
    return r, bound + rel(r, TU) + U * 1e-30


def sqrt_error(v: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = np.sqrt(v)
    low = np.maximum(v - e, 0.0)
    den = r + np.sqrt(low)
    lin = np.where(den > 0, e / np.where(den > 0, den, 1.0), np.inf)
    return r, np.minimum(lin, np.sqrt(e)) + rel(r, 2 * U)


def rsqrt_error(v: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = 1.0 / np.sqrt(v)
    low = v - e
    bound = np.where(low > 0, 1.0 / np.sqrt(np.where(low > 0, low, 1.0)) - r, np.inf)
    return r, bound + rel(r, TU)


def recip_error(v: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = 1.0 / v
    d = np.abs(v) - e
    bound = np.where(d > 0, 1.0 / np.where(d > 0, d, 1.0) - np.abs(r), np.inf)
    return r, bound + rel(r, 2 * U)


def sigmoid_error(v: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lipschitz 1/4; the fp32 decomposition within 3 ulps (``ULP_BOUNDS``, 1 ulp <= 2U)."""
    r = sigmoid64(v)
    return r, 0.25 * e + rel(r, 8 * U)


def tanh_error(v: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1-Lipschitz; the fp32 decomposition within 2 ulps (``ULP_BOUNDS``), doubled."""
    r = np.tanh(v)
    return r, e + rel(r, 8 * U)


def erf_error(v: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lipschitz ``2/sqrt(pi)``; the fp32 decomposition within 2 ulps (``ULP_BOUNDS``),
    doubled."""
    r = erf(v)
    return r, 1.1284 * e + rel(r, 8 * U)


GELU_MIN_AT = -0.7517915246
"""Where GELU takes its minimum (``Phi(x) + x phi(x) = 0``; the value is about -0.17)."""


def gelu_interval(lo: float, hi: float) -> tuple[float, float]:
    """GELU falls on ``(-inf, GELU_MIN_AT]`` and rises after it."""
    ends = [float(gelu64(np.array(v))) for v in (lo, hi)]
    low = float(gelu64(np.array(min(max(GELU_MIN_AT, lo), hi))))
    return min(low, *ends), max(ends)


def gelu_error(v: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lipschitz 1.13 (``max |Phi(x) + x phi(x)|``); the fp32 decomposition within a relative
    4.5e-6 (about 75 U: ``exp(-x*x/2)`` of a rounded square, deep in the tail), doubled."""
    r = gelu64(v)
    return r, 1.13 * e + rel(r, 160 * U)


def libm_error(
    f: Callable[[np.ndarray], np.ndarray],
) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """A 1-Lipschitz function computed by libm within an ulp or two (sin, cos)."""

    def error(v: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = f(v)
        return r, e + rel(r, TU)

    return error


def unit_range(lo: float, hi: float) -> tuple[float, float]:
    return -1.0, 1.0


def softplus_error(v: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1-Lipschitz (the derivative is sigmoid); the fp32 expansion is within a few ulps."""
    r = softplus64(v)
    return r, e + rel(r, 8 * U)
