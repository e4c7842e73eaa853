"""The iteration space of an ``asc.fusion``: which axes each value spans.

Every dimension (of extent > 1) of every tensor in a fused group is unified with the dimensions
it is computed from (elementwise operands, the source of a broadcast, the input of a reduction),
giving a set of iteration axes. The axes are ordered consistently with every value's row-major
layout, and adjacent axes that every value either spans both of or neither of (and every
reduction treats alike) are coalesced. A fused kernel then tiles the outer axes and keeps the
inner ones (at most two: ``M`` and the trailing ``L``) in the Unified Buffer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of

ELEMENTWISE = (asc.UnaryOp, asc.BinaryOp, asc.CompareOp, asc.SelectOp, asc.CastOp)


def shape_of(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


@dataclass
class IterationSpace:
    """Coalesced iteration axes of a fusion.

    Attributes:
        extents: elements per axis, outermost first (at least one axis).
        has: for every tensor value, the axes it spans (the others it is broadcast over).
        reduced: for every ``asc.reduce``, the axes it reduces.
    """

    extents: list[int]
    has: dict[SSAValue, frozenset[int]] = field(default_factory=dict)
    reduced: dict[Operation, frozenset[int]] = field(default_factory=dict)

    @property
    def rank(self) -> int:
        return len(self.extents)

    def gm_strides(self, v: SSAValue) -> dict[int, int]:
        """Row-major element stride of each axis ``v`` spans, in ``v``'s own GM layout."""
        strides: dict[int, int] = {}
        step = 1
        for a in sorted(self.has[v], reverse=True):
            strides[a] = step
            step *= self.extents[a]
        return strides

    def numel(self, v: SSAValue, axes: range | None = None) -> int:
        """Elements of ``v`` along ``axes`` (default: all)."""
        sel = self.has[v] if axes is None else self.has[v].intersection(axes)
        return math.prod(self.extents[a] for a in sel)


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[tuple[SSAValue, int], tuple[SSAValue, int]] = {}

    def add(self, x: tuple[SSAValue, int]) -> None:
        self.parent.setdefault(x, x)

    def find(self, x: tuple[SSAValue, int]) -> tuple[SSAValue, int]:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: tuple[SSAValue, int], b: tuple[SSAValue, int]) -> None:
        self.parent[self.find(a)] = self.find(b)


def _error(op: Operation, message: str, hint: str) -> PyAscCompileError:
    return PyAscCompileError(message, loc_of(op), hint)


def _link(uf: _UnionFind, op: Operation) -> None:
    """Unify the dimensions of ``op``'s operands with those of its result."""
    res = op.results[0]
    rshape = shape_of(res)
    if isinstance(op, ELEMENTWISE):
        for v in op.operands:
            for d, e in enumerate(shape_of(v)):
                if e > 1:
                    uf.union((v, d), (res, d))
    elif isinstance(op, asc.BroadcastOp):
        ishape = shape_of(op.input)
        shift = len(rshape) - len(ishape)
        for d, e in enumerate(ishape):
            if e > 1:
                uf.union((op.input, d), (res, d + shift))
    elif isinstance(op, asc.ReduceOp):
        ishape = shape_of(op.input)
        kept = [d for d in range(len(ishape)) if d not in op.axis_list]
        for j, d in enumerate(kept):
            if ishape[d] > 1:
                uf.union((op.input, d), (res, d if op.keeps_dims else j))
    elif isinstance(op, asc.ReshapeOp):
        src = [(d, e) for d, e in enumerate(shape_of(op.input)) if e > 1]
        dst = [(d, e) for d, e in enumerate(rshape) if e > 1]
        if [e for _, e in src] != [e for _, e in dst]:
            raise _error(
                op,
                f"reshape {list(shape_of(op.input))} -> {list(rshape)} cannot be "
                "fused into a kernel",
                "only reshapes that add or drop size-1 dimensions are supported inside an operator",
            )
        for (ds, _), (dd, _) in zip(src, dst, strict=True):
            uf.union((op.input, ds), (res, dd))


def _align_unrelated(uf: _UnionFind, roots: list[SSAValue]) -> None:
    """Give values that no op relates (inputs and results of independent computations in one
    fusion, e.g. ``return x * 2, y * 3`` or a returned input) one common frame: NumPy-aligned
    (trailing) dims of equal extent become the same iteration axis. Values already sharing an
    axis are left as the ops related them."""

    def classes(v: SSAValue) -> set[tuple[SSAValue, int]]:
        return {uf.find((v, d)) for d, e in enumerate(shape_of(v)) if e > 1}

    seen: list[SSAValue] = []
    for v in roots:
        for w in seen:
            if classes(v) & classes(w):
                continue
            sv, sw = shape_of(v), shape_of(w)
            for k in range(1, min(len(sv), len(sw)) + 1):
                if sv[-k] == sw[-k] > 1:
                    uf.union((v, len(sv) - k), (w, len(sw) - k))
        seen.append(v)


def _order_classes(
    values: list[SSAValue], uf: _UnionFind, fusion: asc.FusionOp
) -> list[tuple[SSAValue, int]]:
    """Topologically order the axis classes so that every value's dims appear in order."""
    succ: dict[tuple[SSAValue, int], set[tuple[SSAValue, int]]] = {}
    indeg: dict[tuple[SSAValue, int], int] = {}
    first_seen: list[tuple[SSAValue, int]] = []
    for v in values:
        classes = [uf.find((v, d)) for d, e in enumerate(shape_of(v)) if e > 1]
        for c in classes:
            if c not in indeg:
                indeg[c] = 0
                succ[c] = set()
                first_seen.append(c)
        for a, b in zip(classes, classes[1:], strict=False):
            if b not in succ[a]:
                succ[a].add(b)
                indeg[b] += 1
    order: list[tuple[SSAValue, int]] = []
    ready = [c for c in first_seen if indeg[c] == 0]
    while ready:
        c = ready.pop(0)
        order.append(c)
        for s in sorted(succ[c], key=first_seen.index):
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    if len(order) != len(first_seen):
        raise _error(
            fusion,
            "the operator's tensors use their dimensions in different orders",
            "a fused kernel needs one dimension order; transposes are not supported "
            "in this release",
        )
    return order


def analyze(fusion: asc.FusionOp) -> IterationSpace:
    """Compute the coalesced iteration space of ``fusion``.

    Raises:
        PyAscCompileError: a reshape or dimension order the kernel layout cannot express.
    """
    block = fusion.body.block
    values: list[SSAValue] = list(block.args)
    ops = [op for op in block.ops if not isinstance(op, asc.YieldOp)]
    for op in ops:
        values.extend(op.results)
    uf = _UnionFind()
    for v in values:
        for d, e in enumerate(shape_of(v)):
            if e > 1:
                uf.add((v, d))
    for op in ops:
        _link(uf, op)
    term = block.last_op
    _align_unrelated(uf, [*block.args, *(term.operands if isinstance(term, asc.YieldOp) else ())])
    order = _order_classes(values, uf, fusion)
    index = {c: i for i, c in enumerate(order)}
    extent = [shape_of(c[0])[c[1]] for c in order]
    raw_has = {
        v: frozenset(index[uf.find((v, d))] for d, e in enumerate(shape_of(v)) if e > 1)
        for v in values
    }
    raw_red = {
        op: frozenset(
            index[uf.find((op.input, d))] for d in op.axis_list if shape_of(op.input)[d] > 1
        )
        for op in ops
        if isinstance(op, asc.ReduceOp)
    }
    if not order:
        return IterationSpace(
            [1], {v: frozenset({0}) for v in values}, {op: frozenset() for op in raw_red}
        )
    groups: list[list[int]] = [[0]]
    for i in range(1, len(order)):
        same = all((i in h) == (i - 1 in h) for h in raw_has.values()) and all(
            (i in r) == (i - 1 in r) for r in raw_red.values()
        )
        if same:
            groups[-1].append(i)
        else:
            groups.append([i])
    of_group = {i: g for g, members in enumerate(groups) for i in members}
    return IterationSpace(
        [math.prod(extent[i] for i in members) for members in groups],
        {v: frozenset(of_group[i] for i in h) for v, h in raw_has.items()},
        {op: frozenset(of_group[i] for i in r) for op, r in raw_red.items()},
    )
