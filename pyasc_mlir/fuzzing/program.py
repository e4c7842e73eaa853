"""The fuzzer's program model: a random operator as inputs, an op list and returned values.

A :class:`Program` is plain data (JSON round-trip, a content hash as its name); its Python
source is rendered by :mod:`pyasc_mlir.fuzzing.source`. :func:`node_meta` gives the shape,
dtype and value interval of every value -- the generator uses the intervals to keep every
function in its domain (a positive operand for ``log``, a divisor away from zero, no fp32
overflow). The unary functions' intervals come from the op table
(:data:`pyasc_mlir.dialects.opset.UNARY`, each record's ``fuzz`` model).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyasc_mlir.dialects import opset
from pyasc_mlir.platform import DEFAULT_PLATFORM

MAX_ELEMS = 20000
"""Soft cap on the elements of the largest tensor of a program."""
BIG = 1e30
"""Largest magnitude an intermediate may reach (fp32 overflows at 3.4e38)."""

MODELS: dict[str, opset.FuzzModel] = {
    r.fuzz.name: r.fuzz for r in opset.UNARY.values() if r.fuzz is not None
}
"""The op table's unary functions, by the fuzzer's name (``recip`` = ``reciprocal``)."""
METHOD_FNS = {
    r.fuzz.name for r in opset.UNARY.values() if r.fuzz is not None and r.fuzz.name in r.methods
}
"""Functions also spelled as a tensor method (``x.exp()``)."""
GUARDED = tuple(name for name, m in MODELS.items() if m.positive)
"""Functions defined for positive inputs only: their operand is guarded (``abs(x) + c``, ...)."""


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
        """The parameter ``key`` (``default`` if the node has none)."""
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
        """The program as canonical JSON (sorted keys; tuples as lists)."""

        def enc(o: Any) -> Any:
            if dataclasses.is_dataclass(o):
                return {f.name: enc(getattr(o, f.name)) for f in dataclasses.fields(o)}
            if isinstance(o, tuple | list):
                return [enc(x) for x in o]
            return o

        return json.dumps(enc(self), sort_keys=True)

    @staticmethod
    def from_json(text: str | dict) -> Program:
        """The program of :meth:`to_json`'s text (or of its parsed dict)."""
        d = json.loads(text) if isinstance(text, str) else text

        def tup(x: Any) -> Any:
            return tuple(tup(y) for y in x) if isinstance(x, list) else x

        ins = tuple(
            Input(tuple(i["shape"]), i["dtype"], i["lo"], i["hi"], i["dist"]) for i in d["inputs"]
        )
        nodes = tuple(Node(n["kind"], tup(n["args"]), tup(n["params"])) for n in d["nodes"])
        return Program(
            ins, nodes, tuple(d["outputs"]), d["platform"], d["double_buffer"], d["data_seed"]
        )

    @property
    def key(self) -> str:
        """12 hex digits of the SHA-256 of :meth:`to_json`."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:12]

    @property
    def name(self) -> str:
        """The operator's function name, ``fz_<key>``."""
        return f"fz_{self.key}"

    def metas(self) -> list[Meta]:
        """Shape / dtype / value interval of every value (raises ``ValueError`` if invalid)."""
        ms = [Meta(i.shape, i.dtype, min(i.lo, i.hi), max(i.lo, i.hi)) for i in self.inputs]
        for n in self.nodes:
            ms.append(node_meta(n, ms))
        return ms

    def source(self) -> str:
        """The program's Python source (:func:`pyasc_mlir.fuzzing.source.render`)."""
        from pyasc_mlir.fuzzing.source import render  # source.py imports this module

        return render(self)


@dataclass(frozen=True)
class Meta:
    """What the generator knows of a value: shape, dtype (``float16``, ``float32``, ``bool``,
    or ``const`` for a Python number) and an interval holding its values."""

    shape: tuple[int, ...]
    dtype: str  # float16 | float32 | bool
    lo: float = 0.0
    hi: float = 0.0

    @property
    def mag(self) -> float:
        """The largest magnitude in the interval."""
        return max(abs(self.lo), abs(self.hi))


def bshape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The NumPy broadcast of ``shapes`` (``ValueError`` if they do not broadcast)."""
    return tuple(int(d) for d in np.broadcast_shapes(*shapes))


def _promote(dts: Sequence[str]) -> str:
    dts = [d for d in dts if d != "bool"]
    return "float16" if dts and all(d == "float16" for d in dts) else "float32"


def axes_of(axis: Any, rank: int) -> list[int]:
    """The sorted non-negative axes a reduction's ``axis`` (None, an int or a tuple) names."""
    if axis is None:
        return list(range(rank))
    if isinstance(axis, int):
        return [axis % rank]
    return sorted(a % rank for a in axis)


def _reduced_shape(shape: tuple[int, ...], axes: list[int], keep: bool) -> tuple[int, ...]:
    if keep:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


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
        return lo**3, hi**3
    if fn in MODELS:
        return MODELS[fn].interval(lo, hi)
    raise ValueError(fn)


def _binary_interval(
    fn: str, a: tuple[float, float], b: tuple[float, float]
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
    c = float(np.float32(const_value(arg, ms)))
    return Meta((), "const", c, c)


def const_value(arg: tuple[str, Any], ms: Sequence[Meta]) -> float:
    """A Python-number operand: a literal (``"c"``) or an input's extent (``"s"``:
    ``x.shape[d]`` / ``len(x)`` in the source)."""
    if arg[0] == "s":
        i, d = arg[1]
        return float(ms[i].shape[d])
    return float(arg[1])


def _unary_meta(n: Node, a: Meta) -> Meta:
    fn, guard, c = n.p("fn"), n.p("guard", "none"), n.p("c", 0.0)
    lo, hi = _guard_interval(a, guard, c) if fn in GUARDED else (a.lo, a.hi)
    if fn in GUARDED and lo <= 0:
        raise ValueError(f"{fn} of a non-positive interval")
    lo, hi = _unary_interval(fn, lo, hi)
    return Meta(a.shape, a.dtype, lo, hi)


def _binary_meta(n: Node, a: Meta, b: Meta, tensors: Sequence[Meta]) -> Meta:
    fn = n.p("fn")
    bi = (b.lo, b.hi)
    if fn == "div":
        guard, c = n.p("guard", "none"), n.p("c", 0.0)
        bi = _guard_interval(b, guard, c)
        if bi[0] <= 0 < bi[1] or bi[0] < 0 <= bi[1] or bi[0] == bi[1] == 0:
            raise ValueError("divisor interval contains zero")
    lo, hi = _binary_interval(fn, (a.lo, a.hi), bi)
    shape = bshape(*(m.shape for m in tensors))
    return Meta(shape, _promote([m.dtype for m in tensors]), lo, hi)


def _reduce_meta(n: Node, a: Meta) -> Meta:
    axes = axes_of(n.p("axis"), len(a.shape))
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


def _pattern_meta(k: str, a: Meta) -> Meta:
    """softmax, layernorm or logsumexp over the last axis of ``a``."""
    if k == "softmax":
        return Meta(a.shape, a.dtype, 0.0, 1.0)
    if k == "layernorm":
        if (a.hi - a.lo) ** 2 * a.shape[-1] > BIG:
            raise ValueError("the variance's sum of squares would overflow fp32")
        r = math.sqrt(max(a.shape[-1], 1))
        return Meta(a.shape, a.dtype, -r, r)
    return Meta(a.shape[:-1] + (1,), a.dtype, a.lo, a.hi + math.log(a.shape[-1]))


def node_meta(n: Node, ms: Sequence[Meta]) -> Meta:
    """Shape, dtype and value interval of a node's result (``ValueError`` if ill-formed)."""
    ops = [_operand_meta(a, ms) for a in n.args]
    tensors = [m for m in ops if m.dtype != "const"]
    k = n.kind
    if k == "unary":
        (a,) = ops
        return _unary_meta(n, a)
    if k == "binary":
        a, b = ops
        return _binary_meta(n, a, b, tensors)
    if k in ("compare", "logic"):
        return Meta(bshape(*(m.shape for m in tensors)), "bool")
    if k == "where":
        c, a, b = ops
        shape = bshape(*(m.shape for m in tensors))
        return Meta(
            shape,
            _promote([m.dtype for m in (a, b) if m.dtype != "const"]),
            min(a.lo, b.lo),
            max(a.hi, b.hi),
        )
    if k == "cast":
        (a,) = ops
        if a.dtype == "bool":
            return Meta(a.shape, n.p("to"), 0.0, 1.0)
        return Meta(a.shape, n.p("to"), a.lo, a.hi)
    if k == "reduce":
        (a,) = ops
        return _reduce_meta(n, a)
    if k == "reshape":
        (a,) = ops
        return Meta(tuple(n.p("shape")), a.dtype, a.lo, a.hi)
    if k in ("softmax", "layernorm", "logsumexp"):
        (a,) = ops
        return _pattern_meta(k, a)
    raise ValueError(f"unknown node kind {k}")
