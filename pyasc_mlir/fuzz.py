"""Differential fuzzer: random tensor operators, compiled and checked at every stage.

``pyasc fuzz --programs N --seed S`` (and ``tests/test_fuzz.py``) generates random operators
with `Hypothesis <https://hypothesis.readthedocs.io>`_ strategies -- DAGs of 1-15 ops (plus a
cast when a mask is returned) drawn from everything the frontend supports (elementwise
functions including sin/cos, arithmetic with tensors and Python numbers, ``len(x)`` and
``x.shape[d]``, comparisons, masks and ``where``, casts, reductions with and without ``keepdim``,
size-1 reshapes, softmax / layer-norm / logsumexp patterns, inlined helpers, augmented
assignment), ranks 1-4, shapes with tails (1, 7, 33, 513, ...), broadcasting between operands
of different ranks, float16 / float32 inputs and value ranges that stress ``exp``/``log``/
``rsqrt`` (inputs up to +-15 before exponentials, float16 near overflow) -- and compares, on the
same inputs:

* an independent NumPy reference (this module's own evaluator of the program's op list, float64,
  inputs rounded to their dtype, explicit casts rounding, outputs rounded to the dtype) with a
  per-element forward error bound (see "Tolerances"),
* the IR interpreter at every stage (``tensor``, ``tile``, ``ascendc``),
* the CPU build of the emitted Ascend C (``kernel_operator.h``).

Programs are Python source (the frontend reads source): each is written to a ``.py`` file and
imported. Many kernels share one g++ translation unit (``PYASC_CPU_ENTRY_NAMED``), so a batch of
programs costs one library build.

Verdicts: ``ok``; ``rejected`` -- the compiler refused the program with a
:class:`~pyasc_mlir.errors.PyAscCompileError` (a documented limit such as a row too long for UB
or an unsupported reduction pattern; counted and reported by message, not a failure);
``mismatch`` -- a stage disagrees with the reference or with another stage; ``crash`` -- any other
exception (lowering, emission, g++, a kernel error, an interpreter error, a process killed by
memory corruption: the CPU builds run in a forked child). A mismatch or crash is shrunk by
Hypothesis to a minimal program and written as a ready-to-paste pytest file
``fuzz_failures/test_fz_<hash>.py``. Program ``i`` of seed ``S`` is the second example of a
Hypothesis run seeded with ``(S, i)`` (the first is always the simplest program); shrinking
replays that run with the failure's verdict known, so Hypothesis sees the failure and shrinks it
on its own (new candidates are compiled and checked on the failing stage only).

Usage: ``pyasc fuzz --programs 2000 --seed 1`` (``--workers`` processes, default 2;
``--out`` folder for regression tests; ``--max-ops``; ``--shrink-budget`` seconds per failure;
``--show I`` prints program ``I`` of the seed). Exit status 0 when there is no mismatch and no
crash. The same seed gives the same programs for a given Hypothesis version. Speed on 2 cores:
about 0.2-0.35 s per program, mostly g++ (25 kernels per library build).

Tolerances. The reference carries, per element, a first-order bound ``e`` on the error of an
fp32 evaluation of the same op list: ``u = 2**-24`` per rounded fp32 op (``4u`` for
exp/log/rsqrt), the propagated operand errors (``|a|e_b + |b|e_a`` for products,
``e/(|b|-e_b)`` for quotients, ``e/x`` for logs, ...), ``(8 + L/64 + M) u sum|x|`` for sums
(the documented ``ReduceSum`` order: a tree within 64-lane repeats, then sequential; ``M``
whole-row adds), 2e-6 absolute for the erf polynomial (its 1.5e-7 plus the rounding of its
ops), one float16 ulp per explicit cast of an
inexact value, and comparisons whose operands are within their bounds of each other are
"uncertain" (``where`` then allows either branch, a cast mask 0 or 1). A stage passes when
every output element ``g`` satisfies ``round(r - K e) <= g <= round(r + K e)`` with ``r`` the
float64 reference, ``round`` the rounding to the output dtype and ``K = 4`` -- so fp16 outputs
get exactly their one rounding plus the scaled fp32 error, and exact cases (max of inputs,
copies) must be exact. Stages are also compared with each other with ``K = 1`` (tile vs
ascendc vs CPU; tensor is compared with the reference only, it does not decompose). An element
whose bound is infinite (an operand of log/rsqrt/division within its error of zero) is not
checked; such elements are counted.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import importlib.util
import json
import math
import os
import re
import shutil
import sys
import tempfile
import textwrap
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pyasc_mlir.dialects import opset
from pyasc_mlir.dialects.opset_numerics import TINY, U, rel
from pyasc_mlir.platform import DEFAULT_PLATFORM, ceil_div

__all__ = [
    "FuzzReport", "Input", "Node", "Program", "Verdict", "assert_program_ok", "check_programs",
    "generate", "main", "programs", "reference", "run_fuzz",
]

K_REF = 4.0
"""Safety factor on the error bound when comparing a stage with the reference."""
K_STAGE = 1.0
"""Factor on the error bound when comparing two post-decompose stages with each other."""
MAX_ELEMS = 20000
"""Soft cap on the elements of the largest tensor of a program."""
BIG = 1e30
"""Largest magnitude an intermediate may reach (fp32 overflows at 3.4e38)."""
STAGES = ("tensor", "tile", "ascendc", "cpu")
PLATFORM_CYCLE = (DEFAULT_PLATFORM, "310P3", DEFAULT_PLATFORM, "910B4")
"""Platforms of successive chunks (a batch library is built for one platform)."""
CHUNK = 25
"""Programs per library build (one g++ translation unit) and per worker task."""
DEFAULT_OUT = "fuzz_failures"


# =============================================================================================
# Programs
# =============================================================================================

@dataclass(frozen=True)
class Input:
    """A tensor parameter: shape, dtype, value range and distribution."""

    shape: tuple[int, ...]
    dtype: str
    lo: float
    hi: float
    dist: str = "uniform"
    """``uniform``, ``grid`` (9 levels: ties and exact zeros) or ``normal`` (clipped)."""


@dataclass(frozen=True)
class Node:
    """One op. ``args``: operands, each ``("v", value_id)`` or ``("c", python_number)``;
    ``params``: sorted ``(key, value)`` pairs."""

    kind: str
    args: tuple[tuple[str, Any], ...]
    params: tuple[tuple[str, Any], ...] = ()

    def p(self, key: str, default: Any = None) -> Any:
        for k, v in self.params:
            if k == key:
                return v
        return default


@dataclass(frozen=True)
class Program:
    """A random operator: parameters, ops and returned values (value ids: inputs first, then
    one per node)."""

    inputs: tuple[Input, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[int, ...]
    platform: str = DEFAULT_PLATFORM
    double_buffer: bool = True
    data_seed: int = 0

    # -- identity ---------------------------------------------------------------------------
    def to_json(self) -> str:
        def enc(o: Any) -> Any:
            if dataclasses.is_dataclass(o):
                return {f.name: enc(getattr(o, f.name)) for f in dataclasses.fields(o)}
            if isinstance(o, tuple | list):
                return [enc(x) for x in o]
            return o
        return json.dumps(enc(self), sort_keys=True)

    @staticmethod
    def from_json(text: str | dict) -> Program:
        d = json.loads(text) if isinstance(text, str) else text

        def tup(x: Any) -> Any:
            return tuple(tup(y) for y in x) if isinstance(x, list) else x
        ins = tuple(Input(tuple(i["shape"]), i["dtype"], i["lo"], i["hi"], i["dist"])
                    for i in d["inputs"])
        nodes = tuple(Node(n["kind"], tup(n["args"]), tup(n["params"])) for n in d["nodes"])
        return Program(ins, nodes, tuple(d["outputs"]), d["platform"], d["double_buffer"],
                       d["data_seed"])

    @property
    def key(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:12]

    @property
    def name(self) -> str:
        return f"fz_{self.key}"

    def metas(self) -> list[Meta]:
        """Shape / dtype / value interval of every value (raises ``ValueError`` if invalid)."""
        ms = [Meta(i.shape, i.dtype, min(i.lo, i.hi), max(i.lo, i.hi)) for i in self.inputs]
        for n in self.nodes:
            ms.append(node_meta(n, ms))
        return ms

    def source(self) -> str:
        return render(self)


@dataclass(frozen=True)
class Meta:
    shape: tuple[int, ...]
    dtype: str  # float16 | float32 | bool
    lo: float = 0.0
    hi: float = 0.0

    @property
    def mag(self) -> float:
        return max(abs(self.lo), abs(self.hi))


def _bshape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(d) for d in np.broadcast_shapes(*shapes))


def _promote(dts: Sequence[str]) -> str:
    dts = [d for d in dts if d != "bool"]
    return "float16" if dts and all(d == "float16" for d in dts) else "float32"


def _axes(axis: Any, rank: int) -> list[int]:
    if axis is None:
        return list(range(rank))
    if isinstance(axis, int):
        return [axis % rank]
    return sorted(a % rank for a in axis)


def _reduced_shape(shape: tuple[int, ...], axes: list[int], keep: bool) -> tuple[int, ...]:
    if keep:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


_MODELS: dict[str, opset.FuzzModel] = {
    r.fuzz.name: r.fuzz for r in opset.UNARY.values() if r.fuzz is not None}
"""The op table's unary functions, by the fuzzer's name (``recip`` = ``reciprocal``)."""
_METHOD_FNS = {r.fuzz.name for r in opset.UNARY.values()
               if r.fuzz is not None and r.fuzz.name in r.methods}
"""Functions also spelled as a tensor method (``x.exp()``)."""
_GUARDED = tuple(name for name, m in _MODELS.items() if m.positive)


def _guard_interval(m: Meta, guard: str, c: float) -> tuple[float, float]:
    if guard == "abs":
        lo = 0.0 if m.lo <= 0 <= m.hi else min(abs(m.lo), abs(m.hi))
        return lo + c, m.mag + c
    if guard in ("max", "where"):
        return max(m.lo, c), max(m.hi, c)
    return m.lo, m.hi


def _unary_interval(fn: str, lo: float, hi: float) -> tuple[float, float]:
    if fn == "square":
        m = max(abs(lo), abs(hi))
        return (0.0 if lo <= 0 <= hi else min(lo * lo, hi * hi)), m * m
    if fn == "cube":
        return lo ** 3, hi ** 3
    if fn in _MODELS:
        return _MODELS[fn].interval(lo, hi)
    raise ValueError(fn)


def _binary_interval(fn: str, a: tuple[float, float], b: tuple[float, float]
                     ) -> tuple[float, float]:
    if fn == "add":
        return a[0] + b[0], a[1] + b[1]
    if fn == "sub":
        return a[0] - b[1], a[1] - b[0]
    if fn == "mul":
        ps = [x * y for x in a for y in b]
        return min(ps), max(ps)
    if fn == "div":  # b is bounded away from zero and of one sign
        ps = [x / y for x in a for y in b]
        return min(ps), max(ps)
    if fn == "maximum":
        return max(a[0], b[0]), max(a[1], b[1])
    if fn == "minimum":
        return min(a[0], b[0]), min(a[1], b[1])
    raise ValueError(fn)


def _operand_meta(arg: tuple[str, Any], ms: Sequence[Meta]) -> Meta:
    tag, x = arg
    if tag == "v":
        return ms[x]
    c = float(np.float32(_const_value(arg, ms)))
    return Meta((), "const", c, c)


def _const_value(arg: tuple[str, Any], ms: Sequence[Meta]) -> float:
    """A Python-number operand: a literal (``"c"``) or an input's extent (``"s"``:
    ``x.shape[d]`` / ``len(x)`` in the source)."""
    if arg[0] == "s":
        i, d = arg[1]
        return float(ms[i].shape[d])
    return float(arg[1])


def node_meta(n: Node, ms: Sequence[Meta]) -> Meta:
    """Shape, dtype and value interval of a node's result (``ValueError`` if ill-formed)."""
    ops = [_operand_meta(a, ms) for a in n.args]
    tensors = [m for m in ops if m.dtype != "const"]
    k = n.kind
    if k == "unary":
        (a,) = ops
        fn, guard, c = n.p("fn"), n.p("guard", "none"), n.p("c", 0.0)
        lo, hi = _guard_interval(a, guard, c) if fn in _GUARDED else (a.lo, a.hi)
        if fn in _GUARDED and lo <= 0:
            raise ValueError(f"{fn} of a non-positive interval")
        lo, hi = _unary_interval(fn, lo, hi)
        return Meta(a.shape, a.dtype, lo, hi)
    if k == "binary":
        a, b = ops
        fn = n.p("fn")
        bi = (b.lo, b.hi)
        if fn == "div":
            guard, c = n.p("guard", "none"), n.p("c", 0.0)
            bi = _guard_interval(b, guard, c)
            if bi[0] <= 0 < bi[1] or bi[0] < 0 <= bi[1] or bi[0] == bi[1] == 0:
                raise ValueError("divisor interval contains zero")
        lo, hi = _binary_interval(fn, (a.lo, a.hi), bi)
        shape = _bshape(*(m.shape for m in tensors))
        return Meta(shape, _promote([m.dtype for m in tensors]), lo, hi)
    if k == "compare":
        return Meta(_bshape(*(m.shape for m in tensors)), "bool")
    if k == "logic":
        return Meta(_bshape(*(m.shape for m in tensors)), "bool")
    if k == "where":
        c, a, b = ops
        shape = _bshape(*(m.shape for m in tensors))
        return Meta(shape, _promote([m.dtype for m in (a, b) if m.dtype != "const"]),
                    min(a.lo, b.lo), max(a.hi, b.hi))
    if k == "cast":
        (a,) = ops
        if a.dtype == "bool":
            return Meta(a.shape, n.p("to"), 0.0, 1.0)
        return Meta(a.shape, n.p("to"), a.lo, a.hi)
    if k == "reduce":
        (a,) = ops
        axes = _axes(n.p("axis"), len(a.shape))
        cnt = math.prod(a.shape[i] for i in axes)
        fn = n.p("fn")
        shape = _reduced_shape(a.shape, axes, n.p("keepdim"))
        if fn == "sum":
            lo, hi = a.lo * cnt, a.hi * cnt
        elif fn == "var":
            lo, hi = 0.0, (a.hi - a.lo) ** 2
        else:
            lo, hi = a.lo, a.hi
        return Meta(shape, a.dtype, lo, hi)
    if k == "reshape":
        (a,) = ops
        return Meta(tuple(n.p("shape")), a.dtype, a.lo, a.hi)
    if k == "softmax":
        (a,) = ops
        return Meta(a.shape, a.dtype, 0.0, 1.0)
    if k == "layernorm":
        (a,) = ops
        if (a.hi - a.lo) ** 2 * a.shape[-1] > BIG:
            raise ValueError("the variance's sum of squares would overflow fp32")
        r = math.sqrt(max(a.shape[-1], 1))
        return Meta(a.shape, a.dtype, -r, r)
    if k == "logsumexp":
        (a,) = ops
        return Meta(a.shape[:-1] + (1,), a.dtype, a.lo, a.hi + math.log(a.shape[-1]))
    raise ValueError(f"unknown node kind {k}")


# =============================================================================================
# Source rendering
# =============================================================================================

_HELPERS = {
    "add": "def _fz_add(a, b):\n    return a + b\n",
    "mul": "def _fz_mul(a, b):\n    return a * b\n",
    "sub": "def _fz_sub(a, b):\n    return a - b\n",
    "scale": "def _fz_scale(a, k=2.0):\n    for _ in range(1):\n        a = a * k\n    return a\n",
}
_BINOP_SYM = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_CMP_SYM = {"lt": "<", "gt": ">", "le": "<=", "ge": ">=", "eq": "==", "ne": "!="}


def _num(x: Any) -> str:
    if isinstance(x, bool):
        x = int(x)
    if isinstance(x, int):
        return str(x)
    r = repr(float(x))
    return f"({r})" if r.startswith("-") else r


def _guard_src(a: str, guard: str, c: float) -> str:
    if guard == "abs":
        return f"(abs({a}) + {_num(c)})"
    if guard == "max":
        return f"pa.maximum({a}, {_num(c)})"
    if guard == "where":
        return f"pa.where({a} > {_num(c)}, {a}, {_num(c)})"
    return a


def _axis_src(axis: Any) -> str:
    return repr(tuple(axis)) if isinstance(axis, tuple | list) else repr(axis)


def _node_lines(n: Node, out: str, name: Callable[[tuple[str, Any]], str],
                helpers: set[str]) -> list[str]:
    k, form = n.kind, n.p("form", 0)
    args = [name(a) for a in n.args]
    if k == "unary":
        (a,) = args
        fn = n.p("fn")
        g = _guard_src(a, n.p("guard", "none"), n.p("c", 0.0)) if fn in _GUARDED else a
        if fn == "neg":
            return [f"{out} = -{a}"]
        if fn == "abs":
            return [f"{out} = " + ("abs({})", "pa.abs({})", "{}.abs()")[form % 3].format(a)]
        if fn == "square":
            return [f"{out} = " + ("{0} ** 2", "{0} * {0}", "pow({0}, 2)")[form % 3].format(a)]
        if fn == "cube":
            return [f"{out} = {a} ** 3"]
        if fn == "recip":
            return [f"{out} = " + ("1.0 / {}", "{} ** -1", "1 / {}")[form % 3].format(g)]
        if fn == "sqrt" and form % 2:
            return [f"{out} = {g} ** 0.5"]
        if fn == "rsqrt" and form % 3 == 1:
            return [f"{out} = {g} ** -0.5"]
        if fn == "rsqrt" and form % 3 == 2:
            return [f"{out} = 1.0 / pa.sqrt({g})"]
        if form % 2 and fn not in _GUARDED and fn in _METHOD_FNS:
            return [f"{out} = {g}.{fn}()"]
        return [f"{out} = pa.{fn}({g})"]
    if k == "binary":
        a, b = args
        fn = n.p("fn")
        if fn == "div":
            b = _guard_src(b, n.p("guard", "none"), n.p("c", 0.0))
        if fn in ("maximum", "minimum"):
            return [f"{out} = pa.{fn}({a}, {b})"]
        sym = _BINOP_SYM[fn]
        if form % 4 == 1 and n.args[0][0] == "v":
            return [f"{out} = {a}", f"{out} {sym}= {b}"]
        if form % 4 == 2 and fn in ("add", "mul", "sub"):
            helpers.add(fn)
            return [f"{out} = _fz_{fn}({a}, {b})"]
        return [f"{out} = {a} {sym} {b}"]
    if k == "compare":
        a, b = args
        return [f"{out} = {a} {_CMP_SYM[n.p('pred')]} {b}"]
    if k == "logic":
        fn = n.p("fn")
        if fn == "not":
            return [f"{out} = ~{args[0]}"]
        return [f"{out} = {args[0]} {dict(and_='&', or_='|', xor='^')[fn]} {args[1]}"]
    if k == "where":
        return [f"{out} = pa.where({args[0]}, {args[1]}, {args[2]})"]
    if k == "cast":
        (a,) = args
        to = n.p("to")
        return [f"{out} = " + ("pa.cast({}, pa.{})", "{}.astype(pa.{})",
                               "pa.cast({}, '{}')")[form % 3].format(a, to)]
    if k == "reduce":
        (a,) = args
        fn, axis, keep = n.p("fn"), n.p("axis"), n.p("keepdim")
        extra = ", unbiased=True" if n.p("unbiased") else ""
        ax = _axis_src(axis)
        if axis is None and not keep and form % 2 == 0:
            return [f"{out} = {a}.{fn}({extra[2:]})"]
        if form % 3 == 1:
            return [f"{out} = pa.{fn}({a}, {ax}, {keep}{extra})"]
        return [f"{out} = {a}.{fn}({ax}, keepdim={keep}{extra})"]
    if k == "reshape":
        (a,) = args
        shape = list(n.p("shape"))
        if form % 2 and len(shape) > 1 and math.prod(shape) > 0:
            i = max(range(len(shape)), key=lambda j: shape[j])
            shape[i] = -1
            return [f"{out} = {a}.reshape({', '.join(map(str, shape))})"]
        return [f"{out} = {a}.reshape({tuple(shape)!r})"]
    if k == "softmax":
        (a,) = args
        return [f"{out}_e = pa.exp({a} - {a}.max(-1, keepdim=True))",
                f"{out} = {out}_e / {out}_e.sum(-1, keepdim=True)"]
    if k == "layernorm":
        (a,) = args
        eps = _num(n.p("eps"))
        return [f"{out}_d = {a} - {a}.mean(-1, keepdim=True)",
                f"{out} = {out}_d * pa.rsqrt({a}.var(-1, keepdim=True) + {eps})"]
    if k == "logsumexp":
        (a,) = args
        return [f"{out}_m = {a}.max(-1, keepdim=True)",
                f"{out} = {out}_m + pa.log(pa.exp({a} - {out}_m).sum(-1, keepdim=True))"]
    raise ValueError(k)


def render(p: Program) -> str:
    """The Python source of the program (``import pyasc_mlir as pa`` + helpers + the op)."""
    n_in = len(p.inputs)

    def vname(i: int) -> str:
        return f"x{i}" if i < n_in else f"t{i - n_in}"

    def name(a: tuple[str, Any]) -> str:
        if a[0] == "s":
            i, d = a[1]
            return f"len({vname(i)})" if d == 0 else f"{vname(i)}.shape[{d}]"
        return vname(a[1]) if a[0] == "v" else _num(a[1])

    helpers: set[str] = set()
    body: list[str] = []
    for j, n in enumerate(p.nodes):
        body += _node_lines(n, vname(n_in + j), name, helpers)
    outs = [vname(i) for i in p.outputs]
    if p.nodes and p.nodes[-1].kind == "binary" and p.nodes[-1].p("form", 0) % 4 == 3 \
            and len(outs) == 1 and p.outputs[0] == n_in + len(p.nodes) - 1:
        helpers.add("scale")  # an extra inlined helper with a compile-time loop: *2 then /2
        body += [f"{outs[0]} = _fz_scale({outs[0]}) * 0.5"]
    ret = ", ".join(outs) + ("," if len(outs) == 1 and p.data_seed % 7 == 0 else "")
    params = ", ".join(vname(i) for i in range(n_in))
    lines = ["import pyasc_mlir as pa", ""]
    for h in sorted(helpers):
        lines += [_HELPERS[h]]
    lines += [f"def {p.name}({params}):"] + ["    " + b for b in body] + [f"    return {ret}", ""]
    return "\n".join(lines)


# =============================================================================================
# Reference: float64 evaluation with a forward error bound per element
# =============================================================================================

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
    if fn not in _MODELS:
        raise ValueError(fn)
    with np.errstate(all="ignore"):
        return EV(*_MODELS[fn].error(x.v, x.e))


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
            bound = np.where(den > 0, (ae + np.abs(r) * be) / np.where(den > 0, den, 1.0),
                             np.inf)
            return EV(r, bound + rel(r, U))
        if fn == "maximum":
            return EV(np.maximum(av, bv), np.maximum(ae, be))
        if fn == "minimum":
            return EV(np.minimum(av, bv), np.maximum(ae, be))
    raise ValueError(fn)


_CMP_NP = {"lt": np.less, "gt": np.greater, "le": np.less_equal, "ge": np.greater_equal,
           "eq": np.equal, "ne": np.not_equal}


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
    e = np.sum(x.e, axis=ax, keepdims=keep) + _sum_gamma(x.v.shape, axes) * np.sum(
        np.abs(x.v), axis=ax, keepdims=keep) + TINY * n
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


def _ev_node(n: Node, vals: list[EV], ms: list[Meta]) -> EV:
    def arg(a: tuple[str, Any]) -> EV:
        if a[0] == "v":
            return vals[a[1]]
        return EV(np.array(float(np.float32(_const_value(a, ms)))), np.array(0.0))

    args = [arg(a) for a in n.args]
    k = n.kind
    if k == "unary":
        fn = n.p("fn")
        x = args[0]
        if fn in _GUARDED:
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
        fn = n.p("fn")
        if fn == "not":
            return EV(~args[0].v, args[0].e.copy())
        a, b = args
        f = {"and_": np.logical_and, "or_": np.logical_or, "xor": np.logical_xor}[fn]
        r = f(a.v, b.v)
        return EV(r, np.broadcast_to(a.e | b.e, r.shape).copy())
    if k == "where":
        c, a, b = args
        shape = _bshape(c.v.shape, a.v.shape, b.v.shape)
        cv, cu = _full(c.v, shape), _full(c.e, shape)
        av, bv, ae, be = (_full(z, shape) for z in (a.v, b.v, a.e, b.e))
        e = np.where(cu, np.maximum(ae, be) + np.abs(av - bv), np.where(cv, ae, be))
        return EV(np.where(cv, av, bv), e)
    if k == "cast":
        (a,) = args
        if a.v.dtype == np.bool_:
            return EV(a.v.astype(np.float64), a.e.astype(np.float64))
        return _ev_cast16(a) if n.p("to") == "float16" else a
    if k == "reduce":
        (a,) = args
        axes = _axes(n.p("axis"), a.v.ndim)
        if not axes:
            return a
        return _ev_reduce(n.p("fn"), a, axes, n.p("keepdim"), bool(n.p("unbiased")))
    if k == "reshape":
        (a,) = args
        shape = tuple(n.p("shape"))
        return EV(a.v.reshape(shape), np.broadcast_to(a.e, a.v.shape).reshape(shape))
    if k == "softmax":
        (a,) = args
        last = [a.v.ndim - 1]
        m = _ev_reduce("max", a, last, True, False)
        ex = _ev_unary("exp", _ev_binary("sub", a, m))
        return _ev_binary("div", ex, _ev_sum(ex, last))
    if k == "layernorm":
        (a,) = args
        last = [a.v.ndim - 1]
        d = _ev_binary("sub", a, _ev_reduce("mean", a, last, True, False))
        var = _ev_reduce("var", a, last, True, False)
        eps = float(np.float32(n.p("eps")))
        r = _ev_unary("rsqrt", _ev_binary("add", var, EV(np.array(eps), np.array(0.0))))
        return _ev_binary("mul", d, r)
    if k == "logsumexp":
        (a,) = args
        last = [a.v.ndim - 1]
        m = _ev_reduce("max", a, last, True, False)
        s = _ev_sum(_ev_unary("exp", _ev_binary("sub", a, m)), last)
        return _ev_binary("add", m, _ev_unary("log", s))
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
    return [(EV(vals[i].v, np.broadcast_to(vals[i].e, vals[i].v.shape)), ms[i].dtype)
            for i in p.outputs]


# =============================================================================================
# Generation (Hypothesis strategies)
# =============================================================================================

LAST_DIMS = (1, 7, 33, 2, 3, 4, 5, 8, 16, 17, 31, 64, 100, 128, 129, 255, 257, 513, 1000, 1024,
             2049, 4097)
"""Trailing extents, simplest first (Hypothesis shrinks towards the front)."""
LEAD_DIMS = (1, 2, 3, 4, 5, 7, 8, 16, 33, 64)
RANGES = ((-1.0, 1.0), (-3.0, 3.0), (0.0, 1.0), (0.5, 2.0), (-15.0, 15.0), (-100.0, 100.0),
          (-1e4, 1e4), (-6e4, 6e4), (1.0, 1.0))
CONSTS = (1.0, 2.0, 0.5, -1.0, 0.0, 3.0, -0.5, 0.25, 10.0, 1e-3, 1e-5, -2.5, 100.0, 0.1, 2, -3,
          7, 1e4)
GUARD_CONSTS = (1.0, 0.5, 1e-3, 0.1, 1e-5, 2.0)
EPS = (1e-5, 1e-6, 1e-3, 0.1)
_SEEDED_UNARY = ("exp", "abs", "neg", "relu", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf",
                 "square", "cube", "recip", "sin", "cos")
"""The unary functions in the order earlier seeds drew them (``square``/``cube`` are ``x ** 2``
and ``x ** 3``); the op table's other unary functions follow, so a seed keeps its programs."""
UNARY_FNS = (*_SEEDED_UNARY, *(f for f in _MODELS if f not in _SEEDED_UNARY))
BINARY_FNS = ("add", "mul", "sub", "div", "maximum", "minimum")
KINDS = ("binary", "unary", "binary", "unary", "reduce", "compare_where", "binary", "reduce",
         "cast", "where", "softmax", "layernorm", "logsumexp", "reshape", "mask", "unary",
         "binary", "reduce")


def _valid_meta(m: Meta) -> bool:
    return m.dtype == "bool" or (math.isfinite(m.lo) and math.isfinite(m.hi) and m.mag <= BIG)


def _strategies() -> Any:
    from hypothesis import strategies as st
    return st


def programs(platform: str = DEFAULT_PLATFORM, max_ops: int = 15) -> Any:
    """A Hypothesis strategy of :class:`Program` for ``platform``."""
    st = _strategies()

    @st.composite
    def strat(draw: Any) -> Program:
        # Hypothesis's second example of a run differs from the first (the simplest) in its
        # first choice: spend that choice on this unused salt, not on the rank.
        draw(st.integers(0, 255))
        rank = draw(st.integers(1, 4))
        budget = MAX_ELEMS
        last = draw(st.sampled_from([d for d in LAST_DIMS if d <= budget]))
        dims = [last]
        for _ in range(rank - 1):
            room = budget // math.prod(dims)
            dims.insert(0, draw(st.sampled_from([d for d in LEAD_DIMS if d <= max(room, 1)])))
        base = tuple(dims)
        mode = draw(st.sampled_from(("float16", "float32", "mixed")))
        n_in = draw(st.integers(1, 4))
        inputs = []
        for j in range(n_in):
            if j == 0:
                shape = base
            else:
                r = draw(st.integers(1, rank))
                shape = tuple(d if d == 1 or draw(st.booleans()) is False else 1
                              for d in base[rank - r:])
            dt = mode if mode != "mixed" else draw(st.sampled_from(("float16", "float32")))
            lo, hi = draw(st.sampled_from(RANGES))
            dist = draw(st.sampled_from(("uniform", "grid", "normal")))
            inputs.append(Input(shape, dt, lo, hi, dist))
        ms = [Meta(i.shape, i.dtype, i.lo, i.hi) for i in inputs]
        nodes: list[Node] = []
        # List-style length: a "go on" choice before every op after the first (7 in 8: about
        # 8 ops on average, at most max_ops), so the shrinker can delete one op's choices.
        while len(nodes) < max_ops and (not nodes or draw(st.integers(0, 7)) != 0):
            new = None
            for _attempt in range(3):
                new = _draw_nodes(draw, st, ms)
                if new is not None:
                    break
            if new is None:  # always valid: a bounded function of the latest float value
                src = max(i for i, m in enumerate(ms) if m.dtype != "bool")
                new = [Node("unary", (("v", src),), (("fn", "tanh"),))]
            for node in new[:max_ops - len(nodes)]:  # a truncated chain leaves a dead mask
                nodes.append(node)
                ms.append(node_meta(node, ms))
        # The last value is returned; a mask is returned as a float.
        if ms[-1].dtype == "bool":
            node = Node("cast", (("v", len(ms) - 1),),
                        (("form", 0), ("to", draw(st.sampled_from(("float32", "float16"))))))
            nodes.append(node)
            ms.append(node_meta(node, ms))
        outs = [len(ms) - 1]
        extra = draw(st.integers(0, 2))
        floats = [i for i, m in enumerate(ms) if m.dtype != "bool" and i >= n_in]
        # Mostly full-size extra outputs (an output that does not span the leading dims is a
        # compile limit: a few of those are enough).
        big = max(math.prod(ms[i].shape) for i in floats)
        full = [i for i in floats if math.prod(ms[i].shape) == big]
        for _ in range(extra):
            i = draw(st.sampled_from(full if draw(st.integers(0, 3)) else floats))
            if i not in outs or draw(st.integers(0, 9)) == 9:  # rare (and not the simplest)
                outs.append(i)
        if draw(st.integers(0, 19)) == 19:
            outs.append(draw(st.integers(0, n_in - 1)))  # an input returned unchanged
        outs = draw(st.permutations(outs)) if len(outs) > 1 else outs
        db = draw(st.integers(0, 4)) != 4
        seed = draw(st.integers(0, 2 ** 31 - 1))
        return Program(tuple(inputs), tuple(nodes), tuple(outs), platform, db, seed)

    return strat()


def _pick(draw: Any, st: Any, ms: Sequence[Meta], ok: Callable[[int, Meta], bool]
          ) -> int | None:
    cands = [i for i, m in enumerate(ms) if ok(i, m)]
    if not cands:
        return None
    return cands[len(cands) - 1 - draw(st.integers(0, len(cands) - 1))]


def _fits(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        s = _bshape(*shapes)
    except ValueError:
        return None
    return s if math.prod(s) <= MAX_ELEMS else None


def _params(**kw: Any) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(kw.items()))


def _draw_nodes(draw: Any, st: Any, ms: list[Meta]) -> list[Node] | None:
    """One op (or a compare followed by its where / mask logic), or ``None`` if the drawn
    op is out of domain here (the caller draws again)."""
    kind = draw(st.sampled_from(KINDS))
    isf = (lambda i, m: m.dtype != "bool")  # noqa: E731
    form = draw(st.integers(0, 5))
    nodes: list[Node]
    if kind == "unary":
        a = _pick(draw, st, ms, isf)
        fn = draw(st.sampled_from(UNARY_FNS))
        m = ms[a]
        guard, c = "none", 0.0
        if fn in _GUARDED:
            guard = draw(st.sampled_from(("abs", "max", "where", "none")))
            c = draw(st.sampled_from(GUARD_CONSTS))
            if guard == "none" and m.lo <= 1e-3:
                guard = "abs"
        if fn in _MODELS and m.hi > _MODELS[fn].max_input:
            return None
        nodes = [Node("unary", (("v", a),), _params(fn=fn, guard=guard, c=c, form=form))]
    elif kind == "binary":
        a = _pick(draw, st, ms, isf)
        fn = draw(st.sampled_from(BINARY_FNS))
        if draw(st.integers(0, 3)) == 0:
            b: tuple[str, Any] = ("c", draw(st.sampled_from(CONSTS)))
            if fn == "div" and b[1] == 0:
                b = ("c", 2.0)
            if draw(st.integers(0, 5)) == 0 and ms[0].shape:  # x0.shape[d] or len(x0)
                b = ("s", (0, draw(st.integers(0, len(ms[0].shape) - 1))))
        else:
            bi = _pick(draw, st, ms, lambda i, m: isf(i, m) and _fits(m.shape, ms[a].shape)
                       is not None)
            if bi is None:
                return None
            b = ("v", bi)
        args: tuple[tuple[str, Any], ...] = (("v", a), b)
        if b[0] == "c" and fn != "div" and draw(st.integers(0, 3)) == 0:
            args = (b, ("v", a))
        guard, c = "none", 0.0
        if fn == "div" and b[0] == "v":
            guard = draw(st.sampled_from(("abs", "max", "none")))
            c = draw(st.sampled_from(GUARD_CONSTS))
            bm = ms[b[1]]
            if guard == "none" and not (bm.lo > 1e-2 or bm.hi < -1e-2):
                guard = "abs"
        nodes = [Node("binary", args, _params(fn=fn, guard=guard, c=c, form=form))]
    elif kind in ("compare_where", "mask"):
        a = _pick(draw, st, ms, isf)
        pred = draw(st.sampled_from(tuple(_CMP_SYM)))
        b = ("c", draw(st.sampled_from(CONSTS)))
        if draw(st.booleans()):
            bi = _pick(draw, st, ms, lambda i, m: isf(i, m) and i != a and _fits(
                m.shape, ms[a].shape) is not None)
            if bi is not None:
                b = ("v", bi)
        cmp = Node("compare", (("v", a), b), _params(pred=pred))
        ms2 = [*ms, node_meta(cmp, ms)]
        ci = len(ms)
        if kind == "mask":
            fn = draw(st.sampled_from(("and_", "or_", "xor", "not")))
            if fn == "not":
                nodes = [cmp, Node("logic", (("v", ci),), _params(fn=fn))]
            else:
                mi = _pick(draw, st, ms, lambda i, m: m.dtype == "bool" and _fits(
                    m.shape, ms2[ci].shape) is not None)
                nodes = [cmp] if mi is None else [
                    cmp, Node("logic", (("v", mi), ("v", ci)), _params(fn=fn))]
        else:
            nodes = [cmp, _where_after(draw, st, ms2, ci)]
    elif kind == "where":
        c = _pick(draw, st, ms, lambda i, m: m.dtype == "bool")
        if c is None:
            return None
        nodes = [_where_after(draw, st, ms, c)]
    elif kind == "cast":
        a = _pick(draw, st, ms, lambda i, m: True)
        to = draw(st.sampled_from(("float16", "float32")))
        m = ms[a]
        if to == "float16" and m.dtype != "bool" and m.mag > 6e4:
            return None
        nodes = [Node("cast", (("v", a),), _params(to=to, form=form))]
    elif kind == "reduce":
        a = _pick(draw, st, ms, lambda i, m: isf(i, m) and len(m.shape) >= 1)
        if a is None:
            return None
        shape = ms[a].shape
        r = len(shape)
        opts: list[Any] = [-1, -1, -1]
        if r >= 2:
            opts += [(-2, -1), -2, -2, 0]
        if r >= 3:
            opts += [(0, r - 1), (1, 2), (0, 1)]
        opts.append(None)
        axis = draw(st.sampled_from(opts))
        fn = draw(st.sampled_from(("sum", "mean", "max", "min", "var")))
        keep = draw(st.sampled_from((True, True, False)))
        axes = _axes(axis, r)
        cnt = math.prod(shape[i] for i in axes)
        unbiased = fn == "var" and cnt > 1 and draw(st.booleans())
        nodes = [Node("reduce", (("v", a),), _params(fn=fn, axis=axis, keepdim=keep,
                                                      unbiased=unbiased, form=form))]
    elif kind == "reshape":
        a = _pick(draw, st, ms, isf)
        shape = list(ms[a].shape)
        ones = [i for i, d in enumerate(shape) if d == 1]
        if ones and (draw(st.booleans()) or len(shape) >= 5):
            del shape[draw(st.sampled_from(ones))]
        else:
            shape.insert(draw(st.integers(0, len(shape))), 1)
        nodes = [Node("reshape", (("v", a),), _params(shape=tuple(shape), form=form))]
    elif kind in ("softmax", "layernorm", "logsumexp"):
        a = _pick(draw, st, ms, lambda i, m: isf(i, m) and len(m.shape) >= 1)
        if a is None:
            return None
        params = _params(eps=draw(st.sampled_from(EPS))) if kind == "layernorm" else ()
        nodes = [Node(kind, (("v", a),), params)]
    else:  # pragma: no cover
        raise AssertionError(kind)
    tmp = list(ms)
    for node in nodes:
        try:
            m = node_meta(node, tmp)
        except ValueError:
            return None
        if not _valid_meta(m) or math.prod(m.shape) > MAX_ELEMS:
            return None
        tmp.append(m)
    return nodes


def _where_after(draw: Any, st: Any, ms: list[Meta], c: int) -> Node:
    isf = (lambda i, m: m.dtype != "bool")  # noqa: E731

    def operand() -> tuple[str, Any]:
        if draw(st.integers(0, 3)) == 0:
            return ("c", draw(st.sampled_from(CONSTS)))
        i = _pick(draw, st, ms, lambda i, m: isf(i, m) and _fits(m.shape, ms[c].shape)
                  is not None)
        return ("c", 0.0) if i is None else ("v", i)

    return Node("where", (("v", c), operand(), operand()))


# =============================================================================================
# Checking: lower, build many kernels per library, run every stage, compare
# =============================================================================================

@dataclass
class Verdict:
    """Outcome of one program: ``status`` is ``ok``, ``rejected``, ``mismatch`` or ``crash``;
    ``where`` the stage (``lower``, ``emit``, ``build``, ``tensor``, ``tile``, ``ascendc``,
    ``cpu``, or a pair such as ``ascendc~cpu``); ``detail`` the message."""

    status: str
    where: str = ""
    detail: str = ""
    seconds: float = 0.0
    unchecked: int = 0
    ratio: float = 0.0
    """Largest |stage - reference| / bound over checked elements (calibration)."""

    @property
    def failed(self) -> bool:
        return self.status in ("mismatch", "crash")

    @property
    def signature(self) -> str:
        first = self.detail.splitlines()[0] if self.detail else ""
        exc = first.split(":")[0] if self.status == "crash" else ""
        return f"{self.status}:{self.where}:{exc}"


_MODULE_DIR: Path | None = None


def _module_dir() -> Path:
    """A temporary folder for the programs' ``.py`` files (removed at exit)."""
    global _MODULE_DIR
    if _MODULE_DIR is None or not _MODULE_DIR.exists():
        import atexit

        _MODULE_DIR = Path(tempfile.mkdtemp(prefix="pyasc-fuzz-"))
        owner, path = os.getpid(), _MODULE_DIR
        atexit.register(lambda: os.getpid() == owner and shutil.rmtree(path, True))
    return _MODULE_DIR


def load_function(p: Program, source: str | None = None) -> Callable[..., Any]:
    """Write the program's source to a ``.py`` file and import its function."""
    path = _module_dir() / f"{p.name}.py"
    text = source if source is not None else p.source()
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    mod_name = f"_pyasc_fuzz_{p.name}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return getattr(module, p.name)


@dataclass
class _Lowered:
    prog: Program
    op: Any  # CompiledOp
    kernel_name: str
    kernel_src: str


def _lower_program(p: Program, fn: Callable[..., Any] | None = None) -> _Lowered | Verdict:
    from pyasc_mlir.artifacts import describe
    from pyasc_mlir.compiled_op import CompiledOp
    from pyasc_mlir.emitter import emit_cpu_entry, emit_host_source, emit_kernel_source, kernels
    from pyasc_mlir.errors import PyAscCompileError
    from pyasc_mlir.pipeline import lower
    from pyasc_mlir.types import TensorDesc

    descs = [TensorDesc(i.shape, i.dtype) for i in p.inputs]
    where = "lower"
    try:
        fn = fn if fn is not None else load_function(p)
        stages, _, _ = lower(fn, descs, p.name, p.platform, p.double_buffer)
        where = "emit"
        module = stages["ascendc"]
        kernel_src = emit_kernel_source(module)
        emit_host_source(module, [list(d.shape) for d in descs])
        emit_cpu_entry(module)
        info = describe(stages, p.name, descs, p.platform)
        (k,) = kernels(module)
    except PyAscCompileError as exc:
        if where == "lower":
            return Verdict("rejected", "lower", exc.message)
        return Verdict("crash", where, _exc_text(exc))
    except Exception as exc:  # noqa: BLE001 - every other exception is a compiler failure
        return Verdict("crash", where, _exc_text(exc))
    info["library"] = ""
    op = CompiledOp(_module_dir(), info, lambda: stages)
    op._stages = stages
    return _Lowered(p, op, k.sym_name.data, kernel_src)


def _exc_text(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


def batch_source(kernel_sources: Sequence[str], kernel_names: Sequence[str]) -> str:
    """One translation unit holding several emitted kernels, with one named CPU entry each."""
    parts = list(kernel_sources)
    parts += [f"PYASC_CPU_ENTRY_NAMED({n})" for n in kernel_names]
    parts += ["PYASC_CPU_LAST_ERROR()", ""]
    return "\n".join(parts)


def _fuzz_cache() -> Path:
    from pyasc_mlir.runtime.cpu import default_cache_dir
    return default_cache_dir() / "fuzz"


def _build(lowered: Sequence[_Lowered], platform: str) -> tuple[Path | None, dict[str, str]]:
    """Build one library for ``lowered``; on a g++ failure, build each kernel alone and name
    the culprits. Returns (library or None, {program key: g++ error})."""
    from pyasc_mlir.platform import get_platform
    from pyasc_mlir.runtime.cpu import build_library

    plat = get_platform(platform)
    src = batch_source([x.kernel_src for x in lowered], [x.kernel_name for x in lowered])
    try:
        return build_library({"kernels.cpp": src}, plat, cache_dir=_fuzz_cache()), {}
    except Exception as exc:  # noqa: BLE001
        if len(lowered) == 1:
            return None, {lowered[0].prog.key: _exc_text(exc)[:4000]}
    errors: dict[str, str] = {}
    good = []
    for x in lowered:
        lib, err = _build([x], platform)
        if lib is None:
            errors.update(err)
        else:
            good.append(x)
    if not good or len(good) == len(lowered):  # every kernel builds alone: a harness problem
        return None, errors or {x.prog.key: "the batch library failed to build; every "
                                "kernel builds alone" for x in lowered}
    lib, err = _build(good, platform)
    errors.update(err)
    return lib, errors


def _fmt(x: float) -> str:
    return f"{x:.9g}"


def compare(got: Any, ref: EV, dtype: str, k: float) -> tuple[str | None, int, float]:
    """Check ``got`` against the reference within ``k`` times its error bound (see the module
    docstring). Returns (first failure description or None, unchecked elements, max ratio)."""
    want = np.dtype(dtype)
    g = np.asarray(got)
    if g.shape != ref.v.shape:
        return f"shape {list(g.shape)}, expected {list(ref.v.shape)}", 0, math.inf
    if g.dtype != want:
        return f"dtype {g.dtype}, expected {want}", 0, math.inf
    e = np.broadcast_to(ref.e, ref.v.shape)
    checked = np.isfinite(e)
    tol = np.where(checked, k * e, 0.0)
    with np.errstate(all="ignore"):
        lo = (ref.v - tol).astype(want).astype(np.float64)
        hi = (ref.v + tol).astype(want).astype(np.float64)
        g64 = g.astype(np.float64)
        ok = ((g64 >= lo) & (g64 <= hi)) | ~checked
        diff = np.abs(g64 - ref.v)
        spacing = np.abs(np.spacing(np.abs(ref.v).astype(want))).astype(np.float64)
        ratio_arr = np.where(checked & np.isfinite(diff),
                             np.maximum(diff - spacing, 0) / np.maximum(e, TINY), 0.0)
    ratio = float(ratio_arr.max()) if ratio_arr.size else 0.0
    if ok.all():
        return None, int((~checked).sum()), ratio
    bad = np.argwhere(~ok)
    idx = tuple(int(i) for i in bad[0])
    with np.errstate(all="ignore"):
        rounded = float(np.asarray(ref.v[idx]).astype(want))
    return (f"{len(bad)} of {g.size} elements outside the bound; first at {idx}: got "
            f"{_fmt(g64[idx])}, expected {_fmt(ref.v[idx])} (rounded {_fmt(rounded)}) +- "
            f"{_fmt(tol[idx])} (bound {_fmt(e[idx])} x {k:g})"), int((~checked).sum()), ratio


def _pair(a: Any, b: Any, ref: EV, dtype: str, k: float) -> str | None:
    """Two stages agree within ``k`` times the bound (plus one ulp of the dtype)."""
    want = np.dtype(dtype)
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a64.shape != b64.shape:
        return f"shapes {list(a64.shape)} vs {list(b64.shape)}"
    e = np.broadcast_to(ref.e, ref.v.shape)
    checked = np.isfinite(e)
    with np.errstate(all="ignore"):
        mag = np.maximum(np.abs(a64), np.abs(b64))
        sp = np.abs(np.spacing(mag.astype(want))).astype(np.float64)
        same = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))
        ok = same | (np.abs(a64 - b64) <= k * np.where(checked, e, 0) + sp) | ~checked
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    idx = tuple(int(i) for i in bad[0])
    return (f"{len(bad)} of {a64.size} elements differ; first at {idx}: {_fmt(a64[idx])} vs "
            f"{_fmt(b64[idx])} (reference {_fmt(ref.v[idx])}, bound {_fmt(e[idx])} x {k:g})")


def _cpu_outputs(items: Sequence[tuple[_Lowered, Path]]) -> dict[str, list[np.ndarray] | str]:
    """Run the CPU build of every item in ONE forked child process (a kernel that corrupts
    memory kills the child, not the fuzzer); if the child dies, each item runs in its own
    child to find the culprit. Returns {program key: outputs, or an error text}."""
    import multiprocessing as mp

    from pyasc_mlir.runtime.cpu import CpuKernel

    def work(conn: Any, todo: Sequence[tuple[_Lowered, Path]]) -> None:
        res: dict[str, Any] = {}
        for x, lib in todo:
            try:
                x.op._cpu = CpuKernel(lib, entry=f"pyasc_run_block_{x.kernel_name}")
                res[x.prog.key] = x.op.run_cpu(*make_inputs(x.prog))
            except Exception as exc:  # noqa: BLE001
                res[x.prog.key] = _exc_text(exc)
        conn.send(res)
        conn.close()

    if not items:
        return {}
    ctx = mp.get_context("fork")

    def run(todo: Sequence[tuple[_Lowered, Path]]) -> tuple[dict[str, Any] | None, int]:
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=work, args=(send, todo))
        with warnings_ignored():
            proc.start()
        send.close()
        try:
            res = recv.recv()
        except EOFError:
            res = None
        proc.join()
        return res, proc.exitcode or 0

    res, code = run(items)
    if res is not None:
        return res
    out: dict[str, Any] = {}
    for item in items:
        one, code = run([item])
        out[item[0].prog.key] = one[item[0].prog.key] if one is not None else (
            f"the CPU build crashed the process (exit code {code}: "
            f"{_signal_name(code)}) -- memory corruption")
    return out


def _signal_name(code: int) -> str:
    import signal
    try:
        return signal.Signals(-code).name if code < 0 else "exit"
    except ValueError:
        return "unknown"


@contextlib.contextmanager
def warnings_ignored() -> Any:
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fork() in a multi-threaded process (numpy, xdsl)
        yield


def _run_checks(x: _Lowered, cpu: list[np.ndarray] | str | None,
                stages: Sequence[str] = STAGES, k_ref: float = K_REF,
                k_stage: float = K_STAGE) -> Verdict:
    p, op = x.prog, x.op
    arrays = make_inputs(p)
    refs = reference(p, arrays)
    results: dict[str, list[np.ndarray]] = {}
    for stage in stages:
        if stage == "cpu":
            if isinstance(cpu, str):
                return Verdict("crash", "cpu", cpu)
            assert cpu is not None
            outs = cpu
        else:
            try:
                outs = op.run_stage(stage, *[a.copy() for a in arrays])
            except Exception as exc:  # noqa: BLE001
                return Verdict("crash", stage, _exc_text(exc))
        if len(outs) != len(refs):
            return Verdict("mismatch", stage, f"{len(outs)} outputs, expected {len(refs)}")
        results[stage] = outs
    unchecked, ratio = 0, 0.0
    for stage in stages:
        for j, (got, (ref, dt)) in enumerate(zip(results[stage], refs, strict=True)):
            msg, unc, r = compare(got, ref, dt, k_ref)
            unchecked = max(unchecked, unc)
            ratio = max(ratio, r)
            if msg is not None:
                return Verdict("mismatch", stage, f"{stage} output {j}: {msg}", 0.0, unchecked,
                               ratio)
    order = [s for s in ("tile", "ascendc", "cpu") if s in results]
    for s1, s2 in zip(order, order[1:], strict=False):
        for j, (a, b, (ref, dt)) in enumerate(zip(results[s1], results[s2], refs,
                                                  strict=True)):
            msg = _pair(a, b, ref, dt, k_stage)
            if msg is not None:
                return Verdict("mismatch", f"{s1}~{s2}", f"{s1} vs {s2} output {j}: {msg}",
                               0.0, unchecked, ratio)
    return Verdict("ok", "", "", 0.0, unchecked, ratio)


def check_programs(progs: Sequence[Program], stages: Sequence[str] = STAGES) -> list[Verdict]:
    """Lower, build (one library per platform) and check every program."""
    verdicts: dict[int, Verdict] = {}
    lowered: dict[int, _Lowered] = {}
    spent: dict[int, float] = {}
    first: dict[str, int] = {}
    for i, p in enumerate(progs):
        if first.setdefault(p.key, i) != i:
            continue  # a duplicate: same verdict as its first occurrence
        t0 = time.perf_counter()
        r = _lower_program(p)
        spent[i] = time.perf_counter() - t0
        if isinstance(r, Verdict):
            r.seconds = spent[i]
            verdicts[i] = r
        else:
            lowered[i] = r
    cpu: dict[str, Any] = {}
    if "cpu" in stages and lowered:
        t0 = time.perf_counter()
        todo = []
        for plat in sorted({x.prog.platform for x in lowered.values()}):
            group = [x for x in lowered.values() if x.prog.platform == plat]
            lib, errors = _build(group, plat)
            for x in group:
                if x.prog.key in errors:
                    cpu[x.prog.key] = Verdict("crash", "build", errors[x.prog.key])
                else:
                    assert lib is not None
                    todo.append((x, lib))
        cpu.update(_cpu_outputs(todo))
        for lib in {lib for _, lib in todo}:  # batch libraries are not reused: keep the
            shutil.rmtree(lib.parent, ignore_errors=True)  # cache small (the PCH stays)
        share = (time.perf_counter() - t0) / len(lowered)
        for i in lowered:
            spent[i] += share
    for i, x in lowered.items():
        t0 = time.perf_counter()
        c = cpu.get(x.prog.key)
        if isinstance(c, Verdict):
            v = c
        else:
            try:
                v = _run_checks(x, c, stages)
            except Exception as exc:  # noqa: BLE001 - a fuzzer bug: report, do not hide
                v = Verdict("crash", "fuzzer", _exc_text(exc))
        v.seconds = spent[i] + time.perf_counter() - t0
        verdicts[i] = v
    return [dataclasses.replace(verdicts[first[p.key]]) for p in progs]


# =============================================================================================
# Driving: chunks of programs (one Hypothesis run each), workers, shrinking, regression tests
# =============================================================================================

@dataclass(frozen=True)
class _Chunk:
    """``count`` consecutive programs of a run (one library build, one platform)."""

    seed: int
    index: int
    count: int
    max_ops: int = 15

    @property
    def platform(self) -> str:
        return PLATFORM_CYCLE[(self.seed + self.index) % len(PLATFORM_CYCLE)]

    def specs(self) -> list[_Spec]:
        first = self.index * CHUNK
        return [_Spec(self.seed, first + i, self.platform, self.max_ops)
                for i in range(self.count)]


@dataclass(frozen=True)
class _Spec:
    """Program ``number`` of run ``seed``: the second example of a Hypothesis run seeded with
    (seed, number) -- the first is always the simplest program, the second a random one."""

    seed: int
    number: int
    platform: str
    max_ops: int = 15

    @property
    def hseed(self) -> int:
        h = hashlib.sha256(f"pyasc-fuzz:{self.seed}:{self.number}".encode()).digest()
        return int.from_bytes(h[:4], "little")


def _hypothesis_settings(shrink: bool) -> Any:
    from hypothesis import HealthCheck, Phase, Verbosity, settings
    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    return settings(max_examples=2, database=None, deadline=None, phases=phases,
                    suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                    print_blob=False, verbosity=Verbosity.quiet, derandomize=False)


def generate_one(spec: _Spec) -> Program:
    """The program of ``spec`` (deterministic)."""
    from hypothesis import given
    from hypothesis import seed as hseed

    seen: list[Program] = []

    @_hypothesis_settings(shrink=False)
    @hseed(spec.hseed)
    @given(programs(spec.platform, spec.max_ops))
    def collect(p: Program) -> None:
        seen.append(p)

    collect()
    return seen[-1]


def generate(chunk: _Chunk) -> list[Program]:
    """The programs of one chunk (deterministic in the run's seed)."""
    return [generate_one(s) for s in chunk.specs()]


def _fuzz_chunk(chunk: _Chunk) -> tuple[_Chunk, list[tuple[str, Verdict]]]:
    progs = generate(chunk)
    verdicts = check_programs(progs)
    return chunk, [(p.to_json(), v) for p, v in zip(progs, verdicts, strict=True)]


def _stages_for(where: str) -> tuple[str, ...]:
    if "~" in where:
        return tuple(where.split("~"))
    if where in STAGES:
        return (where,)
    if where == "build":
        return ("cpu",)
    return ()


def shrink(spec: _Spec, signature: str, known: dict[str, Verdict], budget_s: float = 120.0
           ) -> tuple[Program, Verdict] | None:
    """Replay the Hypothesis run that generated ``spec``'s program with its known verdict, so
    Hypothesis sees the failure (``signature``) and shrinks it; new candidates are compiled
    and checked on the stages the failure concerns until ``budget_s`` runs out. Returns the
    minimal failing program and its verdict (None if the replay does not fail)."""
    from hypothesis import given
    from hypothesis import seed as hseed

    where = signature.split(":")[1]
    stages = _stages_for(where)
    cache = dict(known)
    best: list[tuple[Program, Verdict]] = []
    started: list[float] = []

    class _Found(Exception):
        pass

    @_hypothesis_settings(shrink=True)
    @hseed(spec.hseed)
    @given(programs(spec.platform, spec.max_ops))
    def body(p: Program) -> None:
        v = cache.get(p.key)
        if v is None:
            if not started or time.monotonic() - started[0] > budget_s:
                v = Verdict("ok")  # before the replayed failure, or out of time
            else:
                v = check_programs([p], stages)[0] if stages else _lower_only(p)
            cache[p.key] = v
        if v.failed and v.signature == signature:
            if not started:
                started.append(time.monotonic())
            best[:] = [(p, v)]
            raise _Found

    with contextlib.suppress(Exception):  # _Found, or e.g. Hypothesis reporting flakiness
        body()
    return best[0] if best else None


def _lower_only(p: Program) -> Verdict:
    r = _lower_program(p)
    return r if isinstance(r, Verdict) else Verdict("ok")


_TEST_TEMPLATE = '''"""Regression test written by ``pyasc fuzz`` ({origin}).

{summary}

Observed:
{observed}

Reference: ``pyasc_mlir.fuzz`` evaluates PROGRAM (the op list this source was rendered from)
in float64 with a per-element error bound; see that module's docstring for the tolerances.
"""

{source}

PROGRAM = {program!r}


def test_{name}():
    from pyasc_mlir.fuzz import assert_program_ok

    assert_program_ok({name}, PROGRAM)
'''


def write_regression_test(p: Program, v: Verdict, out_dir: Path, origin: str) -> Path:
    """Write ``out_dir/test_<name>.py``: the program source, its inputs (PROGRAM holds the
    input seed) and an assertion of every stage against the reference."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"test_{p.name}.py"
    src = p.source().rstrip() + "\n"
    summary = f"{v.status} at {v.where}: {p.platform}, double_buffer={p.double_buffer}, " \
              f"inputs " + ", ".join(f"{list(i.shape)} {i.dtype}" for i in p.inputs)
    observed = textwrap.indent(textwrap.fill(v.detail[:2000], 95, break_long_words=True,
                                             replace_whitespace=False), "    ")
    path.write_text(_TEST_TEMPLATE.format(origin=origin, summary=summary, observed=observed,
                                          source=src, program=p.to_json(), name=p.name))
    return path


def assert_program_ok(fn: Callable[..., Any], program: str | Program,
                      stages: Sequence[str] = STAGES) -> None:
    """Compile ``fn`` with ``pyasc_mlir.compile`` for ``program``'s inputs and platform, run
    every stage (interpreter stages and the CPU build) on its inputs and assert each output is
    within the reference's bound (and the stages agree).

    Raises:
        AssertionError: naming the stage, output, element, expected value, bound and got.
    """
    import pyasc_mlir as pa

    p = program if isinstance(program, Program) else Program.from_json(program)
    descs = [pa.TensorDesc(i.shape, i.dtype) for i in p.inputs]
    op = pa.compile(fn, descs, platform=p.platform, double_buffer=p.double_buffer, cache=False)
    cpu: Any = None
    if "cpu" in stages:
        def run_cpu() -> list[np.ndarray]:
            return op.run_cpu(*make_inputs(p))
        cpu = _isolated(run_cpu)
    x = _Lowered(p, op, "", "")
    v = _run_checks(x, cpu, stages)
    assert not v.failed, f"{v.status} at {v.where}: {v.detail}"


def _isolated(fn: Callable[[], Any]) -> Any:
    """``fn()`` in a forked child (its result, or an error text if it raised or died)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def work() -> None:
        try:
            send.send(fn())
        except Exception as exc:  # noqa: BLE001
            send.send(_exc_text(exc))
        send.close()

    proc = ctx.Process(target=work)
    with warnings_ignored():
        proc.start()
    send.close()
    try:
        res = recv.recv()
    except EOFError:
        res = None
    proc.join()
    if res is None:
        return (f"the CPU build crashed the process (exit code {proc.exitcode}: "
                f"{_signal_name(proc.exitcode or 0)}) -- memory corruption")
    return res


@dataclass
class FuzzReport:
    """Outcome of :func:`run_fuzz`."""

    programs: int = 0
    ok: int = 0
    rejected: int = 0
    mismatches: int = 0
    crashes: int = 0
    seconds: float = 0.0
    reject_reasons: Counter = field(default_factory=Counter)
    failures: list[tuple[Program, Verdict, Path | None]] = field(default_factory=list)
    max_ratio: float = 0.0
    max_ratio_program: str = ""
    unchecked_programs: int = 0
    by_platform: Counter = field(default_factory=Counter)

    @property
    def failed(self) -> bool:
        return self.mismatches + self.crashes > 0

    def summary(self) -> str:
        lines = [f"{self.programs} programs in {self.seconds:.1f} s "
                 f"({self.seconds / max(self.programs, 1):.2f} s/program): "
                 f"{self.ok} ok, {self.rejected} rejected, {self.mismatches} mismatches, "
                 f"{self.crashes} crashes",
                 "platforms: " + ", ".join(f"{k} {n}" for k, n in sorted(
                     self.by_platform.items())),
                 f"largest |got - reference| / bound over checked elements: "
                 f"{self.max_ratio:.3g} ({self.max_ratio_program or '-'}; threshold "
                 f"{K_REF:g}); programs with unchecked "
                 f"elements (infinite bound): {self.unchecked_programs}"]
        if self.reject_reasons:
            lines.append("rejected (documented compile limits):")
            for msg, n in self.reject_reasons.most_common():
                lines.append(f"  {n:5d} x {msg}")
        for p, v, path in self.failures:
            lines.append(f"FAIL {p.name}: {v.status} at {v.where}: {v.detail.splitlines()[0]}"
                         [:300])
            if path is not None:
                lines.append(f"     regression test: {path}")
        return "\n".join(lines)


_NUM = re.compile(r"\d+")


def _reason(msg: str) -> str:
    return _NUM.sub("N", msg.splitlines()[0])[:110]


def run_fuzz(programs: int = 200, seed: int = 0, workers: int = 1, out_dir: str | Path =
             DEFAULT_OUT, shrink_budget: float = 120.0, max_shrink: int = 3,
             max_ops: int = 15, log: Callable[[str], None] | None = print) -> FuzzReport:
    """Generate ``programs`` random operators (reproducible in ``seed``), check each at every
    stage, shrink up to ``max_shrink`` failures and write a regression test per failure.

    ``workers`` > 1 checks chunks in a process pool (fork); 1 runs in this process (what
    tests that monkeypatch the compiler need)."""
    say = log or (lambda s: None)
    t0 = time.perf_counter()
    chunks = [_Chunk(seed, i, min(CHUNK, programs - i * CHUNK), max_ops)
              for i in range(ceil_div(programs, CHUNK))]
    report = FuzzReport()
    results: dict[int, list[tuple[str, Verdict]]] = {}

    def take(chunk: _Chunk, res: list[tuple[str, Verdict]]) -> None:
        results[chunk.index] = res
        c = Counter(v.status for _, v in res)
        say(f"[chunk {len(results)}/{len(chunks)}] {chunk.platform}: {len(res)} programs, "
            + ", ".join(f"{n} {s}" for s, n in sorted(c.items()))
            + f" ({time.perf_counter() - t0:.0f} s)")
        for spec, (js, v) in zip(chunk.specs(), res, strict=True):
            if v.failed:
                say(f"  {v.status} at {v.where}: program #{spec.number} "
                    f"{Program.from_json(js).name}: {v.detail.splitlines()[0][:240]}")

    if workers <= 1:
        for ch in chunks:
            take(*_fuzz_chunk(ch))
    else:
        import concurrent.futures as cf
        import multiprocessing as mp

        with warnings_ignored(), cf.ProcessPoolExecutor(
                workers, mp_context=mp.get_context("fork")) as pool:
            for fut in cf.as_completed([pool.submit(_fuzz_chunk, ch) for ch in chunks]):
                take(*fut.result())
    failing: list[tuple[_Spec, Program, Verdict]] = []
    for ch in chunks:
        for spec, (js, v) in zip(ch.specs(), results[ch.index], strict=True):
            p = Program.from_json(js)
            report.programs += 1
            report.by_platform[p.platform] += 1
            if v.ratio > report.max_ratio:
                report.max_ratio = v.ratio
                report.max_ratio_program = f"program #{spec.number} {p.name}"
            report.unchecked_programs += v.unchecked > 0
            if v.status == "ok":
                report.ok += 1
            elif v.status == "rejected":
                report.rejected += 1
                report.reject_reasons[_reason(v.detail)] += 1
            else:
                report.mismatches += v.status == "mismatch"
                report.crashes += v.status == "crash"
                failing.append((spec, p, v))
    out = Path(out_dir)
    shrunk_sigs: set[str] = set()
    for spec, p, v in failing:
        best = (p, v)
        if len(shrunk_sigs) < max_shrink and v.signature not in shrunk_sigs:
            shrunk_sigs.add(v.signature)
            say(f"shrinking {p.name} ({v.signature}) ...")
            t1 = time.perf_counter()
            found = shrink(spec, v.signature, {p.key: v}, shrink_budget)
            if found is not None:
                best = found
                say(f"  -> {len(best[0].nodes)} ops (from {len(p.nodes)}) in "
                    f"{time.perf_counter() - t1:.0f} s")
        path = write_regression_test(best[0], best[1], out,
                                     f"seed {seed}, program #{spec.number}, {p.name}")
        report.failures.append((best[0], best[1], path))
    report.seconds = time.perf_counter() - t0
    say(report.summary())
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """``pyasc fuzz``: exit status 0 when no mismatch or crash, 1 otherwise."""
    ap = argparse.ArgumentParser(prog="pyasc fuzz", description=(
        "Differential fuzzer: random operators checked against a NumPy reference at every "
        "compiler stage and on the CPU build."))
    ap.add_argument("--programs", type=int, default=200, help="programs to generate (200)")
    ap.add_argument("--seed", type=int, default=0, help="seed; same seed, same programs (0)")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                    help="worker processes (default: min(2, CPUs))")
    ap.add_argument("--out", default=DEFAULT_OUT,
                    help=f"folder for regression tests of failures ({DEFAULT_OUT})")
    ap.add_argument("--max-ops", type=int, default=15, help="ops per program, at most (15)")
    ap.add_argument("--shrink-budget", type=float, default=120.0,
                    help="seconds of shrinking per failure (120)")
    ap.add_argument("--max-shrink", type=int, default=3,
                    help="distinct failures to shrink (3); the others are written unshrunk")
    ap.add_argument("--show", type=int, default=None, metavar="I",
                    help="print the source of program I of the run and exit")
    args = ap.parse_args(argv)
    if args.show is not None:
        plat = _Chunk(args.seed, args.show // CHUNK, 1).platform
        print(generate_one(_Spec(args.seed, args.show, plat, args.max_ops)).source())
        return 0
    print(f"pyasc fuzz: {args.programs} programs, seed {args.seed}, {args.workers} workers")
    report = run_fuzz(args.programs, args.seed, args.workers, args.out, args.shrink_budget,
                      args.max_shrink, args.max_ops)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
