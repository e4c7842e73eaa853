"""Numeric building blocks of the op table (:mod:`pyasc_mlir.dialects.opset`).

* Reference functions shared by several records: the exact error function :func:`erf`.
* The constants of the ``tanh`` and ``erf`` decompositions (polynomial coefficients derived
  with :func:`fit_polynomial`, reproduced by :func:`derive_coefficients`) and the accuracy
  each composite meets, :data:`ULP_BOUNDS` (the "Numerics" table of docs/DESIGN.md).
* The units of the fuzzer's first-order error model (``pyasc_mlir.fuzzing.evaluator``):
  :data:`U`, :data:`TU`, :data:`TINY` and :func:`rel`. A record's fuzz model states its bound
  in these units.

Only NumPy and the standard library are imported, so the dialects can import the table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from pyasc_mlir.dialects.opset import Builder

__all__ = [
    "ERF_P",
    "ERF_Q",
    "ERF_SMALL",
    "ERF_Y",
    "GELU_AMAX",
    "GELU_P",
    "GELU_R",
    "TANH_P",
    "TANH_SMALL",
    "TINY",
    "TU",
    "U",
    "ULP_BOUNDS",
    "decompose_erf",
    "decompose_gelu",
    "decompose_sigmoid",
    "decompose_softplus",
    "decompose_tanh",
    "derive_coefficients",
    "erf",
    "fit_polynomial",
    "gelu64",
    "horner",
    "rel",
    "with_sign_of",
]

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


# --------------------------------------------------------------------------- decomposition data


def _hex(*values: str) -> tuple[float, ...]:
    """Floats from their exact hexadecimal spelling (``float.fromhex``)."""
    return tuple(float.fromhex(v) for v in values)


TANH_SMALL = 0.625
"""``tanh`` uses its polynomial for ``|x| < TANH_SMALL``, else ``(1 - e) / (1 + e)`` with
``e = exp(-2|x|)`` (there ``e <= 0.29``: no cancellation in ``1 - e``)."""
TANH_P = _hex(
    "-0x1.555532p-2", "0x1.110726p-3", "-0x1.b83c54p-5", "0x1.522678p-6", "-0x1.75e13ap-8"
)
"""``tanh(x) = x * (1 + s * P(s))``, ``s = x*x``, ``P(s) = sum TANH_P[k] s^k`` on
``|x| < TANH_SMALL``: a near-minimax fit of ``(tanh(x)/x - 1)/s`` (relative error of the
result 4.4e-9; Taylor: ``-1/3, 2/15, -17/315, ...``), coefficients rounded to fp32."""
ERF_SMALL = 1.0
"""``erf`` uses ``x + x * Y(x*x)`` for ``|x| < ERF_SMALL``, else the complementary form."""
ERF_Y = _hex(
    "0x1.06eba8p-3",
    "-0x1.81273ep-2",
    "0x1.ce2cf8p-4",
    "-0x1.b7f90cp-6",
    "0x1.5405b0p-8",
    "-0x1.a3f6f0p-11",
    "0x1.496a0ap-14",
)
"""``erf(x) = x + x * Y(s)``, ``s = x*x``, on ``|x| < 1``: a near-minimax fit of
``erf(x)/x - 1`` (Taylor: ``2/sqrt(pi) * (1 - s/3 + s^2/10 - ...) - 1``; relative error of the
result 1.2e-9). Adding ``x`` last keeps the leading term exact (relative accuracy down to the
subnormals) and ``erf(-0) = -0``."""
ERF_P = 0.47
"""``t = 1 / (1 + ERF_P |x|)`` of the complementary form (the form of Abramowitz & Stegun
7.1.25-7.1.28; the value and the fit below are this project's own)."""
ERF_Q = _hex(
    "0x1.0dadaep-2",
    "0x1.1ee8bap-2",
    "0x1.89a2b6p-3",
    "0x1.b541b0p-3",
    "0x1.4bbb54p-3",
    "-0x1.c92b00p-4",
)
"""``erf(|x|) = 1 - t * Q(t) * exp(-x*x)`` for ``|x| >= 1``: a near-minimax fit of
``erfc(x) exp(x^2) / t`` on ``x`` in ``[1, 4]`` weighted by the absolute error it causes in
``erf`` (at most 0.002 fp32 ulp; beyond 4 the product is below half an ulp of 1)."""

GELU_P = 0.3
"""``t = 1 / (1 + GELU_P |x|)`` of the GELU decomposition (this project's choice: the fit
below is best near it among 0.2..0.5)."""
GELU_AMAX = 14.0
"""The fit of :data:`GELU_R` covers ``|x| <= GELU_AMAX``; beyond it ``exp(-x*x/2)`` underflows
fp32, so ``Phi(-|x|)`` is 0 there whatever the polynomial gives."""
GELU_R = _hex(
    "0x1.ea0068p-4",
    "0x1.ee9bc2p-4",
    "0x1.993e86p-4",
    "0x1.074bfap-3",
    "-0x1.b7cc16p-5",
    "0x1.a69e32p-3",
    "-0x1.41f49ep-3",
    "0x1.244058p-5",
)
"""``Phi(-|x|) = t R(t) exp(-x*x/2)`` (``Phi`` the standard normal CDF, ``Phi(-a) = erfc(a /
sqrt 2) / 2``) for every ``x``: a near-minimax fit of ``Phi(-a) exp(a^2/2) / t`` in ``t`` over
``a`` in ``[0, GELU_AMAX]``, weighted by its relative error (1.6e-7 with the coefficients rounded
to fp32). One formula on the whole line -- no branch, no cancellation: ``Phi(-|x|)`` keeps its
relative accuracy deep in the tail (the form of Abramowitz & Stegun 7.1.26; the fit is this
project's own)."""

ULP_BOUNDS: dict[str, dict[str, float]] = {
    "tanh": {"float32": 2, "float16": 1},
    "erf": {"float32": 2, "float16": 1},
    "sigmoid": {"float32": 3, "float16": 1},
}
"""Accuracy of the composites in every executor that evaluates the decomposition (tile and
ascendc interpreters, CPU build), in ulps of the correctly rounded result, over the whole
range (subnormals, ``±inf``; NaN propagates, ``±0`` keep their sign). The tensor interpreter
is the float64 reference rounded once (0.5 ulp). fp16 inputs are computed in fp32 and rounded
once, so fp16 results are correctly rounded but for rare double roundings."""


def fit_polynomial(
    target: Callable[[np.ndarray], np.ndarray],
    weight: Callable[[np.ndarray], np.ndarray],
    lo: float,
    hi: float,
    degree: int,
    nodes: int = 2000,
    iterations: int = 30,
) -> np.ndarray:
    """Coefficients (lowest first, float64) of a near-minimax polynomial of ``degree``
    approximating ``target`` on ``[lo, hi]``, minimising ``max |weight * (p - target)|``.

    Method: least squares on ``nodes`` Chebyshev nodes, then ``iterations`` steps of Lawson's
    algorithm (each node's weight multiplied by its current error), which converges to the
    weighted minimax (Chebyshev) approximation on the nodes.
    """
    k = np.arange(nodes)
    s = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / nodes)
    y, w = target(s), weight(s)
    v = np.vander(s, degree + 1, increasing=True)
    lawson = np.full(nodes, 1.0 / nodes)
    coeffs = np.zeros(degree + 1)
    for _ in range(iterations):
        sw = np.sqrt(lawson) * w
        coeffs = np.linalg.lstsq(v * sw[:, None], y * sw, rcond=None)[0]
        err = np.abs((v @ coeffs - y) * w)
        lawson = lawson * err / np.sum(lawson * err)
    return coeffs


_erfc_scalar = np.frompyfunc(math.erfc, 1, 1)


def _tanh_target(s: np.ndarray) -> np.ndarray:
    x = np.sqrt(s)
    pos = s > 0
    return np.where(pos, (np.tanh(x) / np.where(pos, x, 1.0) - 1) / np.where(pos, s, 1.0), -1 / 3)


def _erf_target(s: np.ndarray) -> np.ndarray:
    x = np.sqrt(s)
    pos = s > 0
    return np.where(pos, erf(x) / np.where(pos, x, 1.0) - 1, 2 / math.sqrt(math.pi) - 1)


def _erfc_x(t: np.ndarray) -> np.ndarray:
    return (1 / t - 1) / ERF_P


def _erfc_target(t: np.ndarray) -> np.ndarray:
    x = _erfc_x(t)
    return np.asarray(_erfc_scalar(x), np.float64) * np.exp(x * x) / t


def _gelu_target(t: np.ndarray) -> np.ndarray:
    a = (1 / t - 1) / GELU_P
    return 0.5 * np.asarray(_erfc_scalar(a / math.sqrt(2)), np.float64) * np.exp(a * a / 2) / t


def derive_coefficients() -> dict[str, tuple[float, ...]]:
    """Refit :data:`TANH_P`, :data:`ERF_Y`, :data:`ERF_Q` and :data:`GELU_R` (float64
    references: NumPy's ``tanh``, ``math.erf``/``math.erfc``), each coefficient rounded to
    fp32."""
    fits = {
        "TANH_P": fit_polynomial(
            _tanh_target,
            lambda s: s / (1 + s * _tanh_target(s)),
            0.0,
            TANH_SMALL**2,
            len(TANH_P) - 1,
        ),
        "ERF_Y": fit_polynomial(
            _erf_target, lambda s: 1 / (1 + _erf_target(s)), 0.0, ERF_SMALL**2, len(ERF_Y) - 1
        ),
        "ERF_Q": fit_polynomial(
            _erfc_target,
            lambda t: t * np.exp(-(_erfc_x(t) ** 2)) / U,
            1 / (1 + 4 * ERF_P),
            1 / (1 + ERF_SMALL * ERF_P),
            len(ERF_Q) - 1,
        ),
        "GELU_R": fit_polynomial(
            _gelu_target,
            lambda t: 1 / _gelu_target(t),
            1 / (1 + GELU_P * GELU_AMAX),
            1.0,
            len(GELU_R) - 1,
        ),
    }
    return {k: tuple(float(np.float32(c)) for c in v) for k, v in fits.items()}


# --------------------------------------------------------------------------- decompositions
# ``decompose(builder, x)`` of the composite records of :mod:`pyasc_mlir.dialects.opset`:
# each expands the op into vector kinds with the ``Builder`` protocol (``asc-decompose``).


def horner(b: Builder, coeffs: tuple[float, ...], v: Any) -> Any:
    """``sum coeffs[k] v^k`` by Horner's rule (``coeffs`` lowest first)."""
    acc = b.const(coeffs[-1], v)
    for c in reversed(coeffs[:-1]):
        acc = b.binary_const("add", b.binary("mul", acc, v), c)
    return acc


def with_sign_of(b: Builder, x: Any, y: Any) -> Any:
    """``-y`` where ``x < 0``, else ``y`` (an odd function from its value at ``|x|``)."""
    return b.select(b.compare("lt", x, b.const(0.0, x)), b.unary("neg", y), y)


def decompose_sigmoid(b: Builder, x: Any) -> Any:
    """``e = exp(-|x|)`` (never overflows), ``u = 1 + e``; ``1/u`` for ``x >= 0`` and ``e/u``
    for ``x < 0``: relative accuracy everywhere, subnormal results included (``u`` is then 1,
    so the result is ``exp(x)`` itself, correctly rounded). NaN propagates through ``exp``."""
    e = b.unary("exp", b.unary("neg", b.unary("abs", x)))
    u = b.binary_const("add", e, 1.0)
    neg = b.compare("lt", x, b.const(0.0, x))
    return b.select(neg, b.binary("div", e, u), b.unary("reciprocal", u))


def decompose_tanh(b: Builder, x: Any) -> Any:
    """``|x| < TANH_SMALL``: ``x * (1 + s P(s))``, ``s = x*x`` (:data:`TANH_P`; odd, keeps
    ``tanh(-0) = -0`` and the subnormals); else ``±(1 - e) / (1 + e)`` with ``e =
    exp(-2|x|)`` (1 at ``±inf``; NaN propagates: ``NaN < TANH_SMALL`` is false)."""
    s = b.binary("mul", x, x)
    small = b.binary("mul", x, b.binary_const("add", b.binary("mul", s, horner(b, TANH_P, s)), 1.0))
    ax = b.unary("abs", x)
    e = b.unary("exp", b.binary_const("mul", ax, -2.0))
    big = b.binary("div", b.binary("sub", b.const(1.0, x), e), b.binary_const("add", e, 1.0))
    return b.select(b.compare("lt", ax, b.const(TANH_SMALL, x)), small, with_sign_of(b, x, big))


def decompose_erf(b: Builder, x: Any) -> Any:
    """``|x| < ERF_SMALL``: ``x + x * Y(x*x)`` (:data:`ERF_Y`; relative accuracy down to the
    subnormals, ``erf(-0) = -0``); else ``±(1 - t Q(t) exp(-x*x))``, ``t = 1/(1 + ERF_P|x|)``
    (:data:`ERF_Q`; ``t`` and ``exp`` stay bounded, so ``±inf`` give ``±1`` and NaN
    propagates)."""
    s = b.binary("mul", x, x)
    small = b.binary("add", x, b.binary("mul", x, horner(b, ERF_Y, s)))
    ax = b.unary("abs", x)
    t = b.unary("reciprocal", b.binary_const("add", b.binary_const("mul", ax, ERF_P), 1.0))
    tail = b.binary(
        "mul", b.binary("mul", horner(b, ERF_Q, t), t), b.unary("exp", b.unary("neg", s))
    )
    big = b.binary("sub", b.const(1.0, x), tail)
    return b.select(b.compare("lt", ax, b.const(ERF_SMALL, x)), small, with_sign_of(b, x, big))


def decompose_gelu(b: Builder, x: Any) -> Any:
    """GELU ``x Phi(x)`` (the erf form, ``0.5 x (1 + erf(x / sqrt 2))``) in one branch:
    ``h = t R(t) exp(-x*x/2) = Phi(-|x|)``, ``t = 1/(1 + GELU_P |x|)`` (:data:`GELU_R`), then
    ``x h`` for ``x < 0`` and ``x (1 - h)`` else: 27 vector ops where ``0.5 x (1 + erf)``
    takes 43 (erf's two branches), and relative accuracy for ``x << 0``, where ``1 + erf``
    cancels. ``t`` and ``exp`` stay bounded, so ``gelu(+inf) = +inf``; ``gelu(-inf) =
    -inf * 0 = NaN`` as PyTorch's ``0.5 x (1 + erf)``; ``gelu(-0) = -0``; NaN propagates."""
    ax = b.unary("abs", x)
    t = b.unary("reciprocal", b.binary_const("add", b.binary_const("mul", ax, GELU_P), 1.0))
    e = b.unary("exp", b.binary_const("mul", b.binary("mul", x, x), -0.5))
    h = b.binary("mul", b.binary("mul", horner(b, GELU_R, t), t), e)
    phi = b.select(b.compare("lt", x, b.const(0.0, x)), h, b.binary("sub", b.const(1.0, x), h))
    return b.binary("mul", x, phi)


def gelu64(x: np.ndarray) -> np.ndarray:
    """``x Phi(x) = x erfc(-x / sqrt 2) / 2`` in float64 (the tensor-level reference; NaN at
    ``-inf`` as ``0.5 x (1 + erf(x / sqrt 2))``)."""
    x64 = np.asarray(x, dtype=np.float64)
    phi = 0.5 * np.asarray(_erfc_scalar(-x64 / math.sqrt(2)), np.float64).reshape(x64.shape)
    with np.errstate(invalid="ignore"):
        r = x64 * phi
        # gelu(x) > x/2 for every x != 0; where float64 rounds Phi to 0.5 (|x| < 1e-16), a
        # result of exactly x/2 would round to fp32/fp16 as a tie: nudge it up (a sticky bit)
        tie = (r == 0.5 * x64) & (x64 != 0) & np.isfinite(x64)
        return np.where(tie, np.nextafter(r, np.inf), r)


def decompose_softplus(b: Builder, x: Any) -> Any:
    """``relu(x) + log1p(exp(-|x|))``: ``exp`` never overflows. ``log1p(e)`` by Goldberg's
    trick (no log1p instruction): ``u = 1 + e``; ``e`` where ``u == 1``, else
    ``log(u) * e / (u - 1)`` (``u - 1`` is exact; the ratio cancels the rounding of ``u``)."""
    e = b.unary("exp", b.unary("neg", b.unary("abs", x)))
    u = b.binary_const("add", e, 1.0)
    ratio = b.binary("div", b.binary("mul", b.unary("log", u), e), b.binary_const("sub", u, 1.0))
    log1p = b.select(b.compare("eq", u, b.const(1.0, x)), e, ratio)
    return b.binary("add", b.unary("relu", x), log1p)


def sigmoid64(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-x))`` in float64 without overflow (the tensor-level reference)."""
    x64 = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x64))
    return np.where(x64 >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def tanh64(x: np.ndarray) -> np.ndarray:
    """``tanh`` in float64 (the tensor-level reference)."""
    return np.tanh(np.asarray(x, dtype=np.float64))


def softplus64(x: np.ndarray) -> np.ndarray:
    """``log(1 + exp(x))`` in float64 without overflow (the tensor-level reference)."""
    x64 = np.asarray(x, dtype=np.float64)
    return np.maximum(x64, 0.0) + np.log1p(np.exp(-np.abs(x64)))
