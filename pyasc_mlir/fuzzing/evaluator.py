"""The fuzzer's reference: a float64 evaluation of a program's op list with an error bound.

:func:`reference` evaluates a :class:`~pyasc_mlir.fuzzing.program.Program` independently of the
compiler (NumPy, float64, inputs rounded to their dtype, explicit casts rounding) and carries,
per element, a first-order bound ``e`` on the error of an fp32 evaluation of the same op list.

Tolerances. ``u = 2**-24`` per rounded fp32 op (``4u`` for exp/log/rsqrt), the propagated
operand errors (``|a|e_b + |b|e_a`` for products, ``e/(|b|-e_b)`` for quotients, ``e/x`` for
logs, ...), ``(8 + L/64 + M) u sum|x|`` for sums (the documented ``ReduceSum`` order: a tree
within 64-lane repeats, then sequential; ``M`` whole-row adds), 2e-6 absolute for the erf
polynomial (its 1.5e-7 plus the rounding of its ops), one float16 ulp per explicit cast of an
inexact value, and comparisons whose operands are within their bounds of each other are
"uncertain" (``where`` then allows either branch, a cast mask 0 or 1). The unary functions'
bounds are the op table's (each :data:`pyasc_mlir.dialects.opset.UNARY` record's ``fuzz``
model, in the units of :mod:`pyasc_mlir.dialects.opset_numerics`). How a stage's outputs are
judged against the bound: :mod:`pyasc_mlir.fuzzing.verdicts`.

Special values (NaN, +-inf, +-0; semantics in :mod:`pyasc_mlir.fuzzing.specials`). Each value
also carries ``x``: its IEEE class is certain -- an input or constant, a value-exact op
(``neg``, ``abs``, ``relu``, ``maximum``, ``minimum``, a certain ``where``, casts, reshapes,
``max``/``min`` reductions) of certain values, a NaN operand that is certain (NaN propagates
through everything but a ``where``), or a special result of certain operands (``x - x = +0``,
``inf + 1 = inf``, ``exp(-inf) = +0``), also when the other operand is only known to be finite
(and, for products and quotients, of certain sign: ``|v| > 4 e``). A certain value's bound is
0; an uncertain non-finite value's bound is infinite (not checked). A float16 cast that may
overflow (``|v| + e >= 65520``) has an infinite bound unless it certainly does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyasc_mlir.dialects.opset_numerics import TINY, U, rel
from pyasc_mlir.fuzzing.program import (
    GUARDED,
    MODELS,
    Meta,
    Node,
    Program,
    axes_of,
    bshape,
    const_value,
)
from pyasc_mlir.fuzzing.specials import is_special, sprinkle

SIGN_SAFE = 4.0
"""A value's sign is certain where ``|v| > SIGN_SAFE * e`` (the verdicts' ``K_REF``)."""
F32_BIG = 1e38
"""A value is certainly finite where ``|v| + e`` is below this (fp32 overflows at 3.4e38)."""
F16_OVERFLOW = 65520.0
"""Float16 rounds this and larger magnitudes to inf (round to nearest even)."""


@dataclass
class EV:
    """A reference value: float64 values ``v``, error bounds ``e`` (masks: bool ``v`` and
    ``e`` = "uncertain" flags) and ``x``, where the IEEE class of ``v`` is certain (None: of no
    element; see the module docstring)."""

    v: np.ndarray
    e: np.ndarray
    x: np.ndarray | None = None

    def xs(self) -> np.ndarray:
        """``x`` as a bool array of ``v``'s shape."""
        if self.x is None:
            return np.zeros(np.shape(self.v), bool)
        return np.broadcast_to(self.x, np.shape(self.v))


def exact(v: Any) -> EV:
    """A value known exactly (an input or a constant): bound 0, class certain."""
    a = np.asarray(v, np.float64)
    return EV(a, np.zeros(a.shape), np.ones(a.shape, bool))


def _done(v: np.ndarray, e: np.ndarray, x: np.ndarray) -> EV:
    """A result: a certain value's bound is 0, an uncertain non-finite value's (or a NaN
    bound) infinite."""
    v = np.asarray(v, np.float64)
    x = np.broadcast_to(x, v.shape)
    e = np.broadcast_to(e, v.shape)
    with np.errstate(invalid="ignore"):
        e = np.where(x, 0.0, np.where(np.isfinite(v) & ~np.isnan(e), e, np.inf))
    return EV(v, e, x.copy())


def _finite(v: np.ndarray, e: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return np.isfinite(v) & (np.abs(v) + e < F32_BIG)


def _signed(v: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Certainly finite and of certain sign."""
    with np.errstate(invalid="ignore", over="ignore"):
        return _finite(v, e) & (np.abs(v) > SIGN_SAFE * e)


def _full(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(a, shape).copy()


def _ev_guard(x: EV, guard: str, c: float) -> EV:
    c = float(np.float32(c))
    if guard == "abs":  # abs(x) + c
        return _ev_binary("add", _ev_unary("abs", x), exact(c))
    if guard == "max":
        return _ev_binary("maximum", x, exact(c))
    if guard == "where":  # where(x > c, x, c): 1-Lipschitz; NaN gives c
        cond = _ev_compare("gt", x, exact(c))
        return _ev_where(cond, x, exact(c))
    return x


_VALUE_EXACT = ("neg", "abs", "relu")
"""Unary functions whose result is exact (its class is certain when the operand's is)."""


def _ev_unary(fn: str, x: EV) -> EV:
    if fn == "square":
        return _ev_binary("mul", x, x)
    if fn == "cube":
        return _ev_binary("mul", _ev_binary("mul", x, x), x)
    if fn not in MODELS:
        raise ValueError(fn)
    with np.errstate(all="ignore"):
        v, e = MODELS[fn].error(x.v, x.e)
    v = np.array(v, np.float64)
    if fn == "abs":  # abs(-0) = +0; relu keeps -0 (torch.relu; dialects/opset_special.py)
        v[v == 0] = 0.0
    xs = x.xs()
    cert = xs if fn in _VALUE_EXACT else xs & is_special(v)
    return _done(v, e, cert)


def ieee_max(a: np.ndarray, b: np.ndarray, smaller: bool = False) -> np.ndarray:
    """IEEE 754-2019 ``maximum`` (``minimum`` if ``smaller``): NaN propagates, ``-0 < +0``."""
    with np.errstate(invalid="ignore"):
        r = np.array((np.minimum if smaller else np.maximum)(a, b), np.float64)
        z = (a == 0) & (b == 0)
        neg = (np.signbit(a) | np.signbit(b)) if smaller else (np.signbit(a) & np.signbit(b))
    r[z] = np.where(neg, -0.0, 0.0)[z]
    return r


def _binary_value(
    fn: str, av: np.ndarray, bv: np.ndarray, ae: np.ndarray, be: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    if fn in ("add", "sub"):
        r = av + bv if fn == "add" else av - bv
        return r, ae + be + rel(r, U)
    if fn == "mul":
        r = av * bv
        return r, np.abs(av) * be + np.abs(bv) * ae + ae * be + rel(r, U)
    if fn == "div":
        r = av / bv
        den = np.abs(bv) - be
        bound = np.where(den > 0, (ae + np.abs(r) * be) / np.where(den > 0, den, 1.0), np.inf)
        return r, bound + rel(r, U)
    if fn in ("maximum", "minimum"):
        return ieee_max(av, bv, fn == "minimum"), np.maximum(ae, be)
    raise ValueError(fn)


def _binary_certain(
    fn: str,
    av: np.ndarray,
    bv: np.ndarray,
    ae: np.ndarray,
    be: np.ndarray,
    xa: np.ndarray,
    xb: np.ndarray,
    r: np.ndarray,
) -> np.ndarray:
    """Where the class of ``r = fn(a, b)`` is certain (see the module docstring)."""
    cert = (xa & np.isnan(av)) | (xb & np.isnan(bv))  # NaN propagates
    if fn in ("maximum", "minimum"):
        return cert | (xa & xb)
    cert |= xa & xb & is_special(r)
    inf_a, inf_b = xa & np.isinf(av), xb & np.isinf(bv)
    zero_a, zero_b = xa & (av == 0), xb & (bv == 0)
    if fn in ("add", "sub"):
        return cert | (np.isinf(r) & ((inf_a & _finite(bv, be)) | (inf_b & _finite(av, ae))))
    sa, sb = _signed(av, ae), _signed(bv, be)
    if fn == "mul":
        return cert | (is_special(r) & (((inf_a | zero_a) & sb) | ((inf_b | zero_b) & sa)))
    return cert | (np.isinf(r) & inf_a & sb) | ((r == 0) & ((zero_a & sb) | (inf_b & sa)))


def _ev_binary(fn: str, a: EV, b: EV) -> EV:
    av, bv = np.broadcast_arrays(a.v, b.v)
    ae, be = np.broadcast_arrays(a.e, b.e)
    xa, xb = np.broadcast_arrays(a.xs(), b.xs())
    with np.errstate(all="ignore"):
        r, e = _binary_value(fn, av, bv, ae, be)
        cert = _binary_certain(fn, av, bv, ae, be, xa, xb, r)
    return _done(r, e, cert)


_CMP_NP = {
    "lt": np.less,
    "gt": np.greater,
    "le": np.less_equal,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}


def _ev_compare(pred: str, a: EV, b: EV) -> EV:
    """A mask (false against NaN, ``!=`` true); uncertain where the operands are within their
    bounds of each other, or one is an uncertain NaN."""
    av, bv = np.broadcast_arrays(a.v, b.v)
    xa, xb = np.broadcast_arrays(a.xs(), b.xs())
    tol = np.broadcast_to(a.e + b.e, av.shape) if np.ndim(a.e + b.e) else (a.e + b.e)
    with np.errstate(invalid="ignore"):
        r = _CMP_NP[pred](av, bv)
        unc = (tol > 0) & ~(np.abs(av - bv) > tol)
    unc &= ~((xa & np.isnan(av)) | (xb & np.isnan(bv)))
    unc = np.broadcast_to(unc, r.shape).copy()
    return EV(r, unc, ~unc)


def _sum_gamma(shape: tuple[int, ...], axes: list[int]) -> float:
    last = len(shape) - 1
    length = shape[last] if last in axes else 1
    mid = math.prod(shape[i] for i in axes if i != last)
    return (8 + math.ceil(length / 64) + mid) * U


def _ev_sum(x: EV, axes: list[int], keep: bool = True) -> EV:
    """A sum; its class is certain where a term is a certain NaN, where every term is certain
    and the sum special (but not for all-``-0`` terms: left undefined), or where it is
    infinite and every term certain or certainly finite."""
    ax = tuple(axes)
    xs = x.xs()
    with np.errstate(all="ignore"):
        v = np.sum(x.v, axis=ax, keepdims=keep)
        n = math.prod(x.v.shape[i] for i in axes)
        e = (
            np.sum(x.e, axis=ax, keepdims=keep)
            + _sum_gamma(x.v.shape, axes) * np.sum(np.abs(x.v), axis=ax, keepdims=keep)
            + TINY * n
        )

        def every(m: np.ndarray) -> np.ndarray:
            return np.all(m, axis=ax, keepdims=keep)

        neg0 = every((x.v == 0) & np.signbit(x.v))
        cert = np.any(xs & np.isnan(x.v), axis=ax, keepdims=keep)
        cert |= every(xs) & is_special(v) & ~neg0
        cert |= np.isinf(v) & every(xs | _finite(x.v, x.e))
    if n:
        v = np.where(neg0, 0.0, v)  # the undefined sign: +0 (any zero passes)
    return _done(v, e, cert)


def _ev_extreme(fn: str, x: EV, axes: list[int], keep: bool) -> EV:
    """Row ``max`` / ``min``: NaN propagates, ``-0 < +0``; exact (certain where every element
    is, or one is a certain NaN)."""
    ax = tuple(axes)
    xs = x.xs()
    with np.errstate(invalid="ignore"):
        f = np.max if fn == "max" else np.min
        v = np.array(f(x.v, axis=ax, keepdims=keep), np.float64)
        zero = v == 0
        if fn == "max":
            signed = np.all((x.v != 0) | np.signbit(x.v), axis=ax, keepdims=keep)
        else:
            signed = np.any((x.v == 0) & np.signbit(x.v), axis=ax, keepdims=keep)
        v[zero] = np.where(signed, -0.0, 0.0)[zero]
        cert = np.all(xs, axis=ax, keepdims=keep) | np.any(
            xs & np.isnan(x.v), axis=ax, keepdims=keep
        )
    return _done(v, np.max(x.e, axis=ax, keepdims=keep), cert)


def _ev_reduce(fn: str, x: EV, axes: list[int], keep: bool, unbiased: bool) -> EV:
    n = math.prod(x.v.shape[i] for i in axes)
    if fn == "sum":
        return _ev_sum(x, axes, keep)
    if fn in ("max", "min"):
        return _ev_extreme(fn, x, axes, keep)
    if fn == "mean":
        s = _ev_sum(x, axes, keep)
        v = s.v / n
        return _done(v, s.e / n + rel(v, 2 * U), s.xs() & is_special(v))
    if fn == "var":
        mean = _ev_reduce("mean", x, axes, True, False)
        d = _ev_binary("sub", x, mean)
        s = _ev_sum(_ev_binary("mul", d, d), axes, keep)
        denom = n - (1 if unbiased else 0)
        with np.errstate(all="ignore"):
            v = s.v / denom
        return _done(v, s.e / denom + rel(v, 2 * U), s.xs() & is_special(v))
    raise ValueError(fn)


def _ev_cast16(x: EV) -> EV:
    """Round to float16 (nearest even; 65520 and above to inf): one fp16 ulp; an infinite
    bound where the value may or may not overflow."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = x.v.astype(np.float16).astype(np.float64)
        mag = np.minimum(np.abs(x.v) + x.e, 65504.0).astype(np.float16)
        sp = np.spacing(mag).astype(np.float64)
        e = np.where(x.e > 0, x.e + sp, 0.0)
        big = np.abs(x.v) + x.e >= F16_OVERFLOW
        over = np.abs(x.v) - SIGN_SAFE * x.e >= F16_OVERFLOW
    e = np.where(big & ~over, np.inf, e)
    return _done(r, e, x.xs() | (np.isinf(r) & over))


def _ev_logic(fn: str, args: Sequence[EV]) -> EV:
    if fn == "not":
        return EV(~args[0].v, args[0].e.copy(), ~args[0].e)
    a, b = args
    f = {"and_": np.logical_and, "or_": np.logical_or, "xor": np.logical_xor}[fn]
    r = f(a.v, b.v)
    unc = np.broadcast_to(a.e | b.e, r.shape).copy()
    return EV(r, unc, ~unc)


def _ev_where(c: EV, a: EV, b: EV) -> EV:
    """A selection: exact (certain where the mask and the chosen branch are)."""
    shape = bshape(c.v.shape, a.v.shape, b.v.shape)
    cv, cu = _full(c.v, shape), _full(c.e, shape)
    av, bv, ae, be = (_full(z, shape) for z in (a.v, b.v, a.e, b.e))
    xa, xb = _full(a.xs(), shape), _full(b.xs(), shape)
    with np.errstate(invalid="ignore"):
        e = np.where(cu, np.maximum(ae, be) + np.abs(av - bv), np.where(cv, ae, be))
    return _done(np.where(cv, av, bv), e, ~cu & np.where(cv, xa, xb))


def _ev_pattern(n: Node, a: EV) -> EV:
    """softmax, layernorm or logsumexp over the last axis, as the frontend spells them."""
    last = [a.v.ndim - 1]
    if n.kind == "softmax":
        m = _ev_reduce("max", a, last, True, False)
        ex = _ev_unary("exp", _ev_binary("sub", a, m))
        return _ev_binary("div", ex, _ev_sum(ex, last))
    if n.kind == "layernorm":
        d = _ev_binary("sub", a, _ev_reduce("mean", a, last, True, False))
        var = _ev_reduce("var", a, last, True, False)
        eps = float(np.float32(n.p("eps")))
        r = _ev_unary("rsqrt", _ev_binary("add", var, exact(eps)))
        return _ev_binary("mul", d, r)
    m = _ev_reduce("max", a, last, True, False)
    s = _ev_sum(_ev_unary("exp", _ev_binary("sub", a, m)), last)
    return _ev_binary("add", m, _ev_unary("log", s))


def _ev_node(n: Node, vals: list[EV], ms: list[Meta]) -> EV:
    def arg(a: tuple[str, Any]) -> EV:
        if a[0] == "v":
            return vals[a[1]]
        return exact(float(np.float32(const_value(a, ms))))

    args = [arg(a) for a in n.args]
    k = n.kind
    if k == "unary":
        fn = n.p("fn")
        x = args[0]
        if fn in GUARDED:
            x = _ev_guard(x, n.p("guard", "none"), n.p("c", 0.0))
        return _ev_unary(fn, x)
    if k == "binary":
        a, b = args
        if n.p("fn") == "div":
            b = _ev_guard(b, n.p("guard", "none"), n.p("c", 0.0))
        return _ev_binary(n.p("fn"), a, b)
    if k == "compare":
        return _ev_compare(n.p("pred"), *args)
    if k == "logic":
        return _ev_logic(n.p("fn"), args)
    if k == "where":
        c, a, b = args
        return _ev_where(c, a, b)
    if k == "cast":
        (a,) = args
        if a.v.dtype == np.bool_:
            return _done(a.v.astype(np.float64), a.e.astype(np.float64), ~a.e)
        return _ev_cast16(a) if n.p("to") == "float16" else a
    if k == "reduce":
        (a,) = args
        axes = axes_of(n.p("axis"), a.v.ndim)
        if not axes:
            return a
        return _ev_reduce(n.p("fn"), a, axes, n.p("keepdim"), bool(n.p("unbiased")))
    if k == "reshape":
        (a,) = args
        shape = tuple(n.p("shape"))
        return EV(
            a.v.reshape(shape),
            np.broadcast_to(a.e, a.v.shape).reshape(shape),
            a.xs().reshape(shape),
        )
    if k in ("softmax", "layernorm", "logsumexp"):
        (a,) = args
        return _ev_pattern(n, a)
    raise ValueError(k)


def make_inputs(p: Program) -> list[np.ndarray]:
    """The program's input arrays (deterministic in ``p.data_seed``), rounded to their dtype;
    an input with a special class has some elements replaced (drawn from a generator of its
    own: the other elements are those of the same input without the class)."""
    rng = np.random.default_rng(p.data_seed)
    out = []
    for j, i in enumerate(p.inputs):
        lo, hi = min(i.lo, i.hi), max(i.lo, i.hi)
        if i.dist == "grid":
            x = lo + (hi - lo) * rng.integers(0, 9, i.shape) / 8.0
        elif i.dist == "normal":
            x = np.clip(rng.normal((lo + hi) / 2, (hi - lo) / 6, i.shape), lo, hi)
        else:
            x = rng.uniform(lo, hi, i.shape)
        if i.special:
            x = sprinkle(x, i.special, i.dtype, np.random.default_rng([p.data_seed, j, 1]))
        with np.errstate(over="ignore"):  # 65520 and above become inf in float16
            out.append(np.asarray(x, np.float64).astype(i.dtype))
    return out


def reference(p: Program, arrays: Sequence[np.ndarray]) -> list[tuple[EV, str]]:
    """Reference value, error bound and dtype of every output of ``p`` on ``arrays``."""
    ms = p.metas()
    vals: list[EV] = [exact(a) for a in arrays]
    for n in p.nodes:
        vals.append(_ev_node(n, vals, ms))
    return [
        (EV(vals[i].v, np.broadcast_to(vals[i].e, vals[i].v.shape), vals[i].xs()), ms[i].dtype)
        for i in p.outputs
    ]
