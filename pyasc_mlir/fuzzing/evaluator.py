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


@dataclass
class EV:
    """A reference value: float64 values ``v`` and error bounds ``e`` (masks: bool ``v`` and
    ``e`` = "uncertain" flags)."""

    v: np.ndarray
    e: np.ndarray


def _full(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(a, shape).copy()


def _ev_guard(x: EV, guard: str, c: float) -> EV:
    c = float(np.float32(c))
    if guard == "abs":
        v = np.abs(x.v) + c
        return EV(v, x.e + rel(v, U))
    if guard in ("max", "where"):  # max(x, c) is 1-Lipschitz
        return EV(np.maximum(x.v, c), x.e)
    return x


def _ev_unary(fn: str, x: EV) -> EV:
    if fn == "square":
        return _ev_binary("mul", x, x)
    if fn == "cube":
        return _ev_binary("mul", _ev_binary("mul", x, x), x)
    if fn not in MODELS:
        raise ValueError(fn)
    with np.errstate(all="ignore"):
        return EV(*MODELS[fn].error(x.v, x.e))


def _ev_binary(fn: str, a: EV, b: EV) -> EV:
    av, bv = np.broadcast_arrays(a.v, b.v)
    ae, be = np.broadcast_arrays(a.e, b.e)
    with np.errstate(all="ignore"):
        if fn == "add":
            r = av + bv
            return EV(r, ae + be + rel(r, U))
        if fn == "sub":
            r = av - bv
            return EV(r, ae + be + rel(r, U))
        if fn == "mul":
            r = av * bv
            return EV(r, np.abs(av) * be + np.abs(bv) * ae + ae * be + rel(r, U))
        if fn == "div":
            r = av / bv
            den = np.abs(bv) - be
            bound = np.where(den > 0, (ae + np.abs(r) * be) / np.where(den > 0, den, 1.0), np.inf)
            return EV(r, bound + rel(r, U))
        if fn == "maximum":
            return EV(np.maximum(av, bv), np.maximum(ae, be))
        if fn == "minimum":
            return EV(np.minimum(av, bv), np.maximum(ae, be))
    raise ValueError(fn)


_CMP_NP = {
    "lt": np.less,
    "gt": np.greater,
    "le": np.less_equal,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}


def _ev_compare(pred: str, a: EV, b: EV) -> EV:
    av, bv = np.broadcast_arrays(a.v, b.v)
    tol = np.broadcast_to(a.e + b.e, av.shape) if np.ndim(a.e + b.e) else (a.e + b.e)
    r = _CMP_NP[pred](av, bv)
    unc = (tol > 0) & (np.abs(av - bv) <= tol)
    return EV(r, np.broadcast_to(unc, r.shape).copy())


def _sum_gamma(shape: tuple[int, ...], axes: list[int]) -> float:
    last = len(shape) - 1
    length = shape[last] if last in axes else 1
    mid = math.prod(shape[i] for i in axes if i != last)
    return (8 + math.ceil(length / 64) + mid) * U


def _ev_sum(x: EV, axes: list[int], keep: bool = True) -> EV:
    ax = tuple(axes)
    v = np.sum(x.v, axis=ax, keepdims=keep)
    n = math.prod(x.v.shape[i] for i in axes)
    e = (
        np.sum(x.e, axis=ax, keepdims=keep)
        + _sum_gamma(x.v.shape, axes) * np.sum(np.abs(x.v), axis=ax, keepdims=keep)
        + TINY * n
    )
    return EV(v, e)


def _ev_reduce(fn: str, x: EV, axes: list[int], keep: bool, unbiased: bool) -> EV:
    ax = tuple(axes)
    n = math.prod(x.v.shape[i] for i in axes)
    if fn == "sum":
        return _ev_sum(x, axes, keep)
    if fn in ("max", "min"):
        f = np.max if fn == "max" else np.min
        return EV(f(x.v, axis=ax, keepdims=keep), np.max(x.e, axis=ax, keepdims=keep))
    if fn == "mean":
        s = _ev_sum(x, axes, keep)
        v = s.v / n
        return EV(v, s.e / n + rel(v, 2 * U))
    if fn == "var":
        mean = _ev_reduce("mean", x, axes, True, False)
        d = _ev_binary("sub", x, mean)
        s = _ev_sum(_ev_binary("mul", d, d), axes, keep)
        denom = n - (1 if unbiased else 0)
        v = s.v / denom
        return EV(v, s.e / denom + rel(v, 2 * U))
    raise ValueError(fn)


def _ev_cast16(x: EV) -> EV:
    with np.errstate(over="ignore"):
        r = x.v.astype(np.float16).astype(np.float64)
        mag = np.minimum(np.abs(x.v) + x.e, 65504.0).astype(np.float16)
        sp = np.spacing(mag).astype(np.float64)
    return EV(r, np.where(x.e > 0, x.e + sp, 0.0))


def _ev_logic(fn: str, args: Sequence[EV]) -> EV:
    if fn == "not":
        return EV(~args[0].v, args[0].e.copy())
    a, b = args
    f = {"and_": np.logical_and, "or_": np.logical_or, "xor": np.logical_xor}[fn]
    r = f(a.v, b.v)
    return EV(r, np.broadcast_to(a.e | b.e, r.shape).copy())


def _ev_where(c: EV, a: EV, b: EV) -> EV:
    shape = bshape(c.v.shape, a.v.shape, b.v.shape)
    cv, cu = _full(c.v, shape), _full(c.e, shape)
    av, bv, ae, be = (_full(z, shape) for z in (a.v, b.v, a.e, b.e))
    e = np.where(cu, np.maximum(ae, be) + np.abs(av - bv), np.where(cv, ae, be))
    return EV(np.where(cv, av, bv), e)


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
        r = _ev_unary("rsqrt", _ev_binary("add", var, EV(np.array(eps), np.array(0.0))))
        return _ev_binary("mul", d, r)
    m = _ev_reduce("max", a, last, True, False)
    s = _ev_sum(_ev_unary("exp", _ev_binary("sub", a, m)), last)
    return _ev_binary("add", m, _ev_unary("log", s))


def _ev_node(n: Node, vals: list[EV], ms: list[Meta]) -> EV:
    def arg(a: tuple[str, Any]) -> EV:
        if a[0] == "v":
            return vals[a[1]]
        return EV(np.array(float(np.float32(const_value(a, ms)))), np.array(0.0))

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
            return EV(a.v.astype(np.float64), a.e.astype(np.float64))
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
        return EV(a.v.reshape(shape), np.broadcast_to(a.e, a.v.shape).reshape(shape))
    if k in ("softmax", "layernorm", "logsumexp"):
        (a,) = args
        return _ev_pattern(n, a)
    raise ValueError(k)


def make_inputs(p: Program) -> list[np.ndarray]:
    """The program's input arrays (deterministic in ``p.data_seed``), rounded to their dtype."""
    rng = np.random.default_rng(p.data_seed)
    out = []
    for i in p.inputs:
        lo, hi = min(i.lo, i.hi), max(i.lo, i.hi)
        if i.dist == "grid":
            x = lo + (hi - lo) * rng.integers(0, 9, i.shape) / 8.0
        elif i.dist == "normal":
            x = np.clip(rng.normal((lo + hi) / 2, (hi - lo) / 6, i.shape), lo, hi)
        else:
            x = rng.uniform(lo, hi, i.shape)
        out.append(np.asarray(x, np.float64).astype(i.dtype))
    return out


def reference(p: Program, arrays: Sequence[np.ndarray]) -> list[tuple[EV, str]]:
    """Reference value, error bound and dtype of every output of ``p`` on ``arrays``."""
    ms = p.metas()
    vals: list[EV] = [EV(np.asarray(a, np.float64), np.zeros(np.shape(a))) for a in arrays]
    for n in p.nodes:
        vals.append(_ev_node(n, vals, ms))
    return [
        (EV(vals[i].v, np.broadcast_to(vals[i].e, vals[i].v.shape)), ms[i].dtype) for i in p.outputs
    ]
