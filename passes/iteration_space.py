"""The iteration space of an ``asc.fusion``: which axes each value spans.

Every dimension (of extent > 1) of every tensor in a fused group is unified with the dimensions
it is computed from (elementwise operands, the source of a broadcast, the input of a reduction),
giving a set of iteration axes. The axes are ordered consistently with every value's row-major
layout, and adjacent axes that every value either spans both of or neither of (and every
reduction treats alike) are coalesced. A fused kernel then tiles the outer axes and keeps the
inner ones (at most two: ``M`` and the trailing ``L``) in the Unified Buffer.

An ``asc.slice`` of a fusion input is a *GM view* (:class:`GmView`): the kernel reads the
slice's elements straight from the input's buffer (offset + strides), so an input used only
through slices takes no part in the iteration space, and two dims of a view coalesce only when
they are evenly strided in the input (``stride[outer] == stride[inner] * extent[inner]``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of

ELEMENTWISE = (asc.UnaryOp, asc.BinaryOp, asc.CompareOp, asc.SelectOp, asc.CastOp)


def shape_of(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def element_type_of(v: SSAValue) -> Attribute:
    """The element type of tensor value ``v`` (a fusion's values are tensors: the tensor-level
    ``asc`` ops' operand and result constraints)."""
    t = v.type
    assert isinstance(t, TensorType), t
    return t.element_type


@dataclass(frozen=True)
class GmView:
    """A slice read in place: element ``idx`` of the view (per iteration axis ``a`` it spans,
    coordinate ``idx[a]``) lives at ``base + sum(idx[a] * strides[a])`` of ``source``'s
    row-major GM buffer (element units)."""

    source: SSAValue
    base: int
    strides: dict[int, int]


@dataclass
class IterationSpace:
    """Coalesced iteration axes of a fusion.

    Attributes:
        extents: elements per axis, outermost first (at least one axis).
        has: for every tensor value, the axes it spans (the others it is broadcast over).
        reduced: for every ``asc.reduce``, the axes it reduces.
        views: every ``asc.slice`` result, read in place from its input's GM buffer.
    """

    extents: list[int]
    has: dict[SSAValue, frozenset[int]] = field(default_factory=dict)
    reduced: dict[Operation, frozenset[int]] = field(default_factory=dict)
    views: dict[SSAValue, GmView] = field(default_factory=dict)

    @property
    def rank(self) -> int:
        return len(self.extents)

    def gm_strides(self, v: SSAValue) -> dict[int, int]:
        """Element stride of each axis ``v`` spans in GM: ``v``'s own row-major layout, or for
        a view its input's buffer."""
        if v in self.views:
            return dict(self.views[v].strides)
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
    elif isinstance(op, asc.SliceOp):  # a dim kept whole of an input also read directly
        for d, (e, full) in enumerate(zip(rshape, shape_of(op.input), strict=True)):
            if e > 1 and e == full and (op.input, d) in uf.parent:
                uf.union((op.input, d), (res, d))


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


def sliced_only(fusion: asc.FusionOp) -> set[SSAValue]:
    """The fusion inputs read only through ``asc.slice`` (GM views): no tile of them exists."""
    return {
        a
        for a in fusion.body.block.args
        if a.uses and all(isinstance(u.operation, asc.SliceOp) for u in a.uses)
    }


def _view_strides(
    ops: list[Operation], uf: _UnionFind, index: dict[tuple[SSAValue, int], int]
) -> dict[SSAValue, tuple[int, dict[int, int]]]:
    """Per slice result: its base offset and the input-buffer stride of each (uncoalesced)
    axis class it spans."""
    out: dict[SSAValue, tuple[int, dict[int, int]]] = {}
    for op in ops:
        if isinstance(op, asc.SliceOp):
            st = _row_major(shape_of(op.input))
            base = sum(o * s for o, s in zip(op.starts, st, strict=True))
            per = {
                index[uf.find((op.result, d))]: st[d]
                for d, e in enumerate(shape_of(op.result))
                if e > 1
            }
            out[op.result] = (base, per)
    return out


def _row_major(shape: tuple[int, ...]) -> list[int]:
    out, step = [], 1
    for d in reversed(shape):
        out.append(step)
        step *= d
    return out[::-1]


def _evenly_strided(
    raw_views: dict[SSAValue, tuple[int, dict[int, int]]], extent: list[int], i: int
) -> bool:
    """Axis classes ``i - 1`` and ``i`` can merge for every view spanning both."""
    return all(
        per[i - 1] == per[i] * extent[i]
        for _, per in raw_views.values()
        if i in per and i - 1 in per
    )


def analyze(fusion: asc.FusionOp) -> IterationSpace:
    """Compute the coalesced iteration space of ``fusion``.

    Raises:
        PyAscCompileError: a reshape or dimension order the kernel layout cannot express.
    """
    block = fusion.body.block
    for op in block.ops:
        if isinstance(op, asc.SliceOp) and op.input not in block.args:
            raise _error(
                op,
                "a slice of a value computed inside the kernel cannot be read in place",
                "slice a kernel input (asc-fuse starts a new kernel at such a slice)",
            )
    hidden = sliced_only(fusion)
    values: list[SSAValue] = [a for a in block.args if a not in hidden]
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
    roots = [*values[: len(block.args) - len(hidden)]]
    roots += [r for op in ops if isinstance(op, asc.SliceOp) for r in op.results]
    _align_unrelated(uf, [*roots, *(term.operands if isinstance(term, asc.YieldOp) else ())])
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
    raw_views = _view_strides(ops, uf, index)
    if not order:
        return IterationSpace(
            [1],
            {v: frozenset({0}) for v in values},
            {op: frozenset() for op in raw_red},
            {v: GmView(_slice_input(v), b, {0: 1}) for v, (b, _) in raw_views.items()},
        )
    groups: list[list[int]] = [[0]]
    for i in range(1, len(order)):
        same = (
            all((i in h) == (i - 1 in h) for h in raw_has.values())
            and all((i in r) == (i - 1 in r) for r in raw_red.values())
            and _evenly_strided(raw_views, extent, i)
        )
        if same:
            groups[-1].append(i)
        else:
            groups.append([i])
    of_group = {i: g for g, members in enumerate(groups) for i in members}
    last = {members[-1] for members in groups}  # a group's stride: its innermost axis's
    views = {
        v: GmView(_slice_input(v), b, {of_group[i]: st for i, st in per.items() if i in last})
        for v, (b, per) in raw_views.items()
    }
    _check_views(views, len(groups) - 1)
    return IterationSpace(
        [math.prod(extent[i] for i in members) for members in groups],
        {v: frozenset(of_group[i] for i in h) for v, h in raw_has.items()},
        {op: frozenset(of_group[i] for i in r) for op, r in raw_red.items()},
        views,
    )


def _slice_input(v: SSAValue) -> SSAValue:
    owner = v.owner
    assert isinstance(owner, asc.SliceOp)
    return owner.input


def _check_views(views: dict[SSAValue, GmView], last: int) -> None:
    """Each view's elements along the innermost axis (``L``, contiguous in the Unified
    Buffer) are adjacent in GM: a block copy can read them (``asc-fuse`` keeps other slices
    out of vector kernels, so this is an internal invariant, checked rather than assumed).

    Raises:
        PyAscCompileError: a view whose ``L`` stride is not 1.
    """
    for v, view in views.items():
        if view.strides.get(last, 1) != 1:
            owner = v.owner
            assert isinstance(owner, Operation)
            raise _error(
                owner,
                f"this slice's innermost elements are {view.strides[last]} apart in its "
                "input, so a vector kernel cannot read it in place",
                "internal: asc-fuse should have made it a data-movement kernel; please report it",
            )
