"""Numeric building blocks of the op table (:mod:`pyasc_mlir.dialects.opset`).

* Reference functions shared by several records: the exact error function :func:`erf`.
* The units of the fuzzer's first-order error model (``pyasc_mlir.fuzzing.evaluator``):
  :data:`U`, :data:`TU`, :data:`TINY` and :func:`rel`. A record's fuzz model states its bound
  in these units.

Only NumPy and the standard library are imported, so the dialects can import the table.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["TINY", "TU", "U", "erf", "rel"]

U = 2.0**-24
"""Unit roundoff of fp32 (every kernel op computes in fp32)."""
TU = 4 * U
"""Relative error allowed for exp / log / rsqrt (libm within 1-2 ulp, plus the double rounding
of ``1/sqrt``)."""
TINY = 2.0**-126
"""Absolute error floor per op (underflow, flush to zero)."""

_erf_scalar = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """Exact (``math.erf``) error function of a float array, in float64 (same shape)."""
    x64 = np.asarray(x, dtype=np.float64)
    return np.asarray(_erf_scalar(x64), dtype=np.float64).reshape(x64.shape)


def rel(v: np.ndarray, r: float) -> np.ndarray:
    """The bound ``r * |v| + TINY``: a relative error ``r`` of the value ``v`` plus the
    absolute floor :data:`TINY`."""
    return r * np.abs(v) + TINY
