"""``asc-tile``: lower each ``asc.fusion`` to a tiled tile-level kernel plus an ``asc.launch``.

Kernel shape (see ``docs/DESIGN.md``): the coalesced iteration space (``iteration_space``) is
split into *outer* axes, which are tiled, and at most two *inner* axes ``[M, L]`` held whole in
the Unified Buffer (UB). Reductions must be over inner axes: the innermost reduced axis... the
outermost reduced axis starts the inner part. Without reductions the trailing axis may be split
into chunks ("chunk mode": one work unit = one chunk of one row).

Work units (outer rows, or row chunks) are divided over ``blockDim`` cores: core ``b`` handles
``units_per_core + (b < units_rem)`` consecutive units, ``tile_units`` at a time. The tile size
is the largest that fits the platform's usable UB with copy-in/copy-out buffers counted
``buffers`` times (double buffering).

Every UB tile is stored as ``[rows, M, Ls]``: ``Ls`` = trailing extent rounded up to 16
elements, so each row starts on a 32-byte DataBlock for fp16 and fp32 alike; a value broadcast
along ``L`` keeps one element per row in a 16-element slot. Buffers hold a multiple of 128
elements and vector ops run on multiples of 128 elements (256 bytes for fp16, the 256-byte
alignment ``Compare`` needs for fp32 at 64).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.buffer_alloc import live_ranges, pack
from pyasc_mlir.passes.common import install_kernel, kernel_name, loc_of
from pyasc_mlir.passes.dynamic_shapes import (
    SPEC_ATTR,
    DynamicShapes,
    analyze_dynamic,
    require_static,
    spec,
)
from pyasc_mlir.passes.iteration_space import IterationSpace, analyze, shape_of
from pyasc_mlir.platform import get_platform

LANE_ALIGN = 16
"""Elements per row slot alignment: 16 elements = 32 B (fp16), 64 B (fp32)."""
COUNT_ALIGN = 128
"""Vector op counts and buffer sizes are multiples of this many elements."""
MAX_BLOCK_COUNT = 4095
"""Largest ``blockCount`` of one ``DataCopyPad`` (Ascend C API reference)."""
CHUNK_MIN_L = 2048
"""Without reductions, rows at least this long are split into chunks."""
MAX_DYNAMIC_CHUNK = 16384
"""Largest chunk (elements) of a kernel whose trailing extent is dynamic; the host chooses the
chunk length per call, up to this and the UB capacity."""


def round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


@dataclass(frozen=True)
class Layout:
    """Which of the tile dims ``[rows, M, L]`` a UB value spans."""

    rows: bool
    m: bool
    l: bool  # noqa: E741


@dataclass
class Plan:
    """Static decisions for one kernel."""

    space: IterationSpace
    outer: range
    m_axis: int | None
    l_axis: int
    chunked: bool
    tile: int = 1
    hoist: bool = True
    """Compute loop-invariant values once per kernel (costs UB for their persistent buffers)."""
    """Rows per tile (rows mode) or elements per chunk (chunk mode)."""
    dyn: DynamicShapes | None = None
    """Dynamic extents (``passes/dynamic_shapes.py``); ``None``: every shape is static."""

    @property
    def L(self) -> int:  # noqa: N802
        return self.space.extents[self.l_axis]

    @property
    def M(self) -> int:  # noqa: N802
        return 1 if self.m_axis is None else self.space.extents[self.m_axis]

    @property
    def rows(self) -> int:
        return math.prod(self.space.extents[a] for a in self.outer)

    @property
    def rows_dynamic(self) -> bool:
        """The number of outer rows is only known at call time."""
        return self.dyn is not None and self.dyn.any_dynamic(self.outer)

    @property
    def l_dynamic(self) -> bool:
        """The trailing extent is only known at call time (chunk mode, elementwise)."""
        return self.dyn is not None and self.dyn.axis_dynamic(self.l_axis)

    def chunking(self, ix: _Ix) -> tuple[SSAValue | int, SSAValue | int, SSAValue | int]:
        """``(chunks per row, elements per chunk, L)`` of chunk mode: constants, or tiling
        fields (``chunks``, ``chunk_len``, the L extent) when L is dynamic."""
        if not self.l_dynamic:
            return self.chunks, self.tile, self.L
        return (ix.add(asc.TilingFieldOp("chunks")), ix.add(asc.TilingFieldOp("chunk_len")),
                self.extent(ix, [self.l_axis]))  # type: ignore[return-value]

    def extent(self, ix: _Ix, axes: Any) -> SSAValue | int:
        """Product of the extents of ``axes``: a constant, or a tiling field when one of them
        is dynamic."""
        axes = list(axes)
        if self.dyn is None or not self.dyn.any_dynamic(axes):
            return math.prod(self.space.extents[a] for a in axes)
        return ix.add(asc.TilingFieldOp(self.dyn.product_field(axes)))  # type: ignore

    @property
    def l_slot(self) -> int:
        """Elements per UB row slot of a value spanning L."""
        return round_up(self.tile if self.chunked else self.L, LANE_ALIGN)

    @property
    def chunks(self) -> int:
        return -(-self.L // self.tile) if self.chunked else 1

    @property
    def units(self) -> int:
        return self.rows * self.chunks

    def layout(self, v: SSAValue) -> Layout:
        h = self.space.has[v]
        return Layout(bool(h.intersection(self.outer)), self.m_axis in h, self.l_axis in h)

    def tile_rows(self, lay: Layout) -> int:
        return self.tile if (lay.rows and not self.chunked) else 1

    def elems(self, lay: Layout, rows: int | None = None) -> int:
        r = self.tile_rows(lay) if rows is None else rows
        return round_up(r * (self.M if lay.m else 1) * (self.l_slot if lay.l else LANE_ALIGN),
                        COUNT_ALIGN)


class _Ix:
    """Appends index arithmetic (``arith``) and asc ops to a block."""

    def __init__(self, block: Block, loc: Attribute | None):
        self.block = block
        self.loc = loc
        self.consts: dict[int, SSAValue] = {}

    def add(self, op: Operation) -> SSAValue | None:
        if self.loc is not None:
            op.attributes[asc.LOC_ATTR] = self.loc
        self.block.add_op(op)
        return op.results[0] if op.results else None

    def c(self, value: int) -> SSAValue:
        if value not in self.consts:
            self.consts[value] = self.add(arith.ConstantOp(IntegerAttr(value, IndexType())))
        return self.consts[value]

    def _v(self, x: SSAValue | int) -> SSAValue:
        return self.c(x) if isinstance(x, int) else x

    def bin(self, cls: type[Operation], a: SSAValue | int, b: SSAValue | int) -> SSAValue:
        if isinstance(a, int) and isinstance(b, int):
            folded = {arith.AddiOp: a + b, arith.MuliOp: a * b, arith.SubiOp: a - b,
                      arith.DivSIOp: a // max(b, 1), arith.RemSIOp: a % max(b, 1)}[cls]
            return self.c(folded)
        if cls is arith.MuliOp and (a == 1 or b == 1):
            return self._v(b if a == 1 else a)
        if cls in (arith.AddiOp, arith.SubiOp) and b == 0:
            return self._v(a)
        if cls is arith.MuliOp and (a == 0 or b == 0):
            return self.c(0)
        return self.add(cls(self._v(a), self._v(b)))  # type: ignore[call-arg]

    def addi(self, a: SSAValue | int, b: SSAValue | int) -> SSAValue:
        return self.bin(arith.AddiOp, a, b)

    def muli(self, a: SSAValue | int, b: SSAValue | int) -> SSAValue:
        return self.bin(arith.MuliOp, a, b)

    def subi(self, a: SSAValue | int, b: SSAValue | int) -> SSAValue:
        return self.bin(arith.SubiOp, a, b)

    def divi(self, a: SSAValue | int, b: SSAValue | int) -> SSAValue:
        return self.bin(arith.DivSIOp, a, b)

    def remi(self, a: SSAValue | int, b: SSAValue | int) -> SSAValue:
        return self.bin(arith.RemSIOp, a, b)

    def mini(self, a: SSAValue | int, b: SSAValue | int) -> SSAValue:
        lt = self.add(arith.CmpiOp(self._v(a), self._v(b), "slt"))
        return self.add(arith.SelectOp(lt, self._v(a), self._v(b)))

    def count(self, rows: SSAValue | int, per_row: int) -> SSAValue:
        """``round_up(rows * per_row, COUNT_ALIGN)`` elements."""
        total = self.muli(rows, per_row)
        return self.muli(self.divi(self.addi(total, COUNT_ALIGN - 1), COUNT_ALIGN), COUNT_ALIGN)


def core_range(ix: _Ix) -> tuple[SSAValue, SSAValue, SSAValue]:
    """``(start, end, step)`` of this core's work units: core ``b`` takes
    ``units_per_core + (b < units_rem)`` consecutive units from ``b * units_per_core +
    min(b, units_rem)``, ``tile_units`` at a time (all tiling fields)."""
    bid = ix.add(asc.BlockIdxOp())
    per = ix.add(asc.TilingFieldOp("units_per_core"))
    rem = ix.add(asc.TilingFieldOp("units_rem"))
    step = ix.add(asc.TilingFieldOp("tile_units"))
    start = ix.addi(ix.muli(bid, per), ix.mini(bid, rem))
    lt = ix.add(arith.CmpiOp(bid, rem, "slt"))
    extra = ix.add(arith.SelectOp(lt, ix.c(1), ix.c(0)))
    end = ix.addi(start, ix.addi(per, extra))
    return start, end, step  # type: ignore[return-value]


@dataclass
class _Buf:
    ref: SSAValue
    layout: Layout
    alloc: asc.AllocOp | None


@dataclass
class _Tile:
    """Per-tile state while lowering the fusion body."""

    ix: _Ix
    n: SSAValue | int
    """Rows in this tile (rows mode) or 1."""
    first: SSAValue
    """First outer row of the tile."""
    c0: SSAValue | int = 0
    clen: SSAValue | int = 0
    bufs: dict[SSAValue, _Buf] = field(default_factory=dict)
    counts: dict[Layout, SSAValue] = field(default_factory=dict)


class _KernelBuilder:
    """Builds the tile-level kernel ``func.func`` of one fusion for a given ``Plan``."""

    def __init__(self, fusion: asc.FusionOp, plan: Plan, name: str):
        self.fusion = fusion
        self.plan = plan
        self.name = name
        self.allocs: list[tuple[asc.AllocOp, Layout]] = []
        self.last_use: dict[SSAValue, int] = {}
        self.position = 0
        self.pre: _Tile | None = None
        self.hoisted: dict[SSAValue, _Buf] = {}
        self.invariant: set[SSAValue] = set()
        self.role = "tmp"
        self.block = fusion.body.block
        self.loc = fusion.attributes.get(asc.LOC_ATTR)

    # -- helpers -------------------------------------------------------------------------
    def _alloc(self, t: _Tile, role: str, lay: Layout, dtype: Attribute) -> _Buf:
        elems = self.plan.elems(lay)
        if asc.element_bits(dtype) == 1:
            elems = round_up(elems, 256)  # masks: whole 32-byte blocks of bits
        op = asc.AllocOp("const" if role == "tmp" and self.role == "const" else role, elems,
                         dtype)
        t.ix.add(op)
        self.allocs.append((op, lay))
        return _Buf(op.result, lay, op)

    def _count(self, t: _Tile, lay: Layout) -> SSAValue:
        if lay not in t.counts:
            rows = t.n if (lay.rows and not self.plan.chunked) else 1
            per_row = (self.plan.M if lay.m else 1) * (self.plan.l_slot if lay.l else LANE_ALIGN)
            if self.plan.l_dynamic and lay.l and not lay.m and isinstance(t.clen, SSAValue):
                t.counts[lay] = t.ix.count(t.clen, 1)  # this chunk's length, not the buffer's
            else:
                t.counts[lay] = t.ix.count(rows, per_row)
        return t.counts[lay]

    def _sizes(self, t: _Tile, lay: Layout) -> list[SSAValue]:
        rows = t.n if (lay.rows and not self.plan.chunked) else 1
        return [t.ix._v(rows), t.ix.c(self.plan.M if lay.m else 1),
                t.ix.c(self.plan.l_slot if lay.l else LANE_ALIGN)]

    def _gm_row_offset(self, ix: _Ix, v: SSAValue, g: SSAValue) -> SSAValue | int:
        """GM element offset of outer row ``g`` in value ``v``'s own layout."""
        plan = self.plan
        sp, outer = plan.space, plan.outer
        has_outer = sp.has[v].intersection(outer)
        if not has_outer:
            return 0

        def stride(a: int) -> SSAValue | int:  # row-major GM stride of axis a in v
            return plan.extent(ix, [b for b in sp.has[v] if b > a])

        if has_outer == set(outer):
            return ix.muli(g, stride(outer[-1]))
        off: SSAValue | int = 0
        for a in reversed(outer):
            if a in has_outer:
                inner = plan.extent(ix, [b for b in outer if b > a])
                coord = ix.remi(ix.divi(g, inner), plan.extent(ix, [a]))
                off = ix.addi(off, ix.muli(coord, stride(a)))
        return off

    def _copy(self, ix: _Ix, cls: type[asc.CopyInOp | asc.CopyOutOp], gm: SSAValue,
              ub: SSAValue, args: list[SSAValue | int]) -> None:
        vals = [ix._v(a) for a in args]
        src, dst = (gm, ub) if cls is asc.CopyInOp else (ub, gm)
        ix.add(cls(src, dst, vals))

    def _chunk_block(self, ix: _Ix, lay: Layout, row_off: SSAValue | int,
                     t: _Tile) -> tuple[SSAValue | int, SSAValue | int, SSAValue | int]:
        """GM offset, block length and GM gap of one chunk (``M`` blocks of ``clen``)."""
        if not lay.l:
            return row_off, 1, 0
        gap = (ix.subi(self.plan.extent(ix, [self.plan.l_axis]), t.clen)
               if lay.m and self.plan.M > 1 else 0)
        return ix.addi(row_off, t.c0), t.clen, gap

    # -- inputs and outputs --------------------------------------------------------------
    def _is_const_input(self, v: SSAValue) -> bool:
        lay = self.plan.layout(v)
        return not lay.rows and not (self.plan.chunked and lay.l)

    def _load(self, t: _Tile, arg: SSAValue, gm: SSAValue, role: str) -> _Buf:
        plan, ix = self.plan, t.ix
        lay = plan.layout(arg)
        t_ = arg.type
        assert isinstance(t_, TensorType)
        buf = self._alloc(t, role, lay, t_.element_type)
        mv = plan.M if lay.m else 1
        slot = plan.l_slot if lay.l else LANE_ALIGN
        if plan.chunked:
            row_off = self._gm_row_offset(ix, arg, t.first)
            off, length, gap = self._chunk_block(ix, lay, row_off, t)
            self._copy(ix, asc.CopyInOp, gm, buf.ref, [off, 0, mv, length, gap, slot])
            return buf
        lv = plan.L if lay.l else 1
        outer_has = plan.space.has[arg].intersection(plan.outer)
        if not outer_has or outer_has == set(plan.outer):
            n = t.n if lay.rows else 1
            off = self._gm_row_offset(ix, arg, t.first)
            self._copy(ix, asc.CopyInOp, gm, buf.ref, [off, 0, ix.muli(n, mv), lv, 0, slot])
            return buf
        # Partially broadcast over the outer axes: gather row by row.
        body = Block(arg_types=[IndexType()])
        inner = _Ix(body, self.loc)
        g = inner.addi(t.first, body.args[0])
        off = self._gm_row_offset(inner, arg, g)
        ub_off = inner.muli(body.args[0], mv * slot)
        self._copy(inner, asc.CopyInOp, gm, buf.ref, [off, ub_off, mv, lv, 0, slot])
        inner.add(scf.YieldOp())
        ix.add(scf.ForOp(ix.c(0), ix._v(t.n), ix.c(1), [], body))
        return buf

    def _store(self, t: _Tile, v: SSAValue, gm: SSAValue, used: set[SSAValue]) -> None:
        plan, ix = self.plan, t.ix
        lay = plan.layout(v)
        if plan.space.has[v].intersection(plan.outer) != set(plan.outer):
            raise PyAscCompileError(
                "an output of the operator does not span all of its leading dimensions "
                f"(shape {list(shape_of(v))})", loc_of(self.fusion),
                "return values computed from the full-size inputs")
        buf = self._out_buffer(t, v, lay, used)
        mv = plan.M if lay.m else 1
        slot = plan.l_slot if lay.l else LANE_ALIGN
        row_off = self._gm_row_offset(ix, v, t.first)
        if plan.chunked:
            off, length, gap = self._chunk_block(ix, lay, row_off, t)
            self._copy(ix, asc.CopyOutOp, gm, buf.ref, [off, 0, mv, length, gap, slot])
        else:
            self._copy(ix, asc.CopyOutOp, gm, buf.ref,
                       [row_off, 0, ix.muli(t.n, mv), plan.L if lay.l else 1, 0, slot])

    def _out_buffer(self, t: _Tile, v: SSAValue, lay: Layout, used: set[SSAValue]) -> _Buf:
        """The copy-out buffer of result ``v``: its own scratch buffer turned into a copy-out
        queue buffer, or (an input, or a buffer already copied out) a copy of it."""
        buf = t.bufs[v]
        if buf.alloc is not None and buf.alloc.role.data == "tmp" and buf.ref not in used:
            buf.alloc.role = StringAttr("out")
        else:
            t_ = v.type
            assert isinstance(t_, TensorType)
            out = self._alloc(t, "out", lay, t_.element_type)
            t.ix.add(asc.VCopyOp(out.ref, buf.ref, self._count(t, lay)))
            buf = out
        used.add(buf.ref)
        return buf

    # -- compute ---------------------------------------------------------------------------
    def _buf(self, t: _Tile, v: SSAValue) -> _Buf:
        if v not in t.bufs:
            owner = v.owner
            assert isinstance(owner, asc.ConstantOp), f"no buffer for {v}"
            lay = self.plan.layout(v)
            buf = self._alloc(t, "tmp", lay, owner.result.type.element_type)  # type: ignore
            t.ix.add(asc.VDupOp(buf.ref, owner.value.value.data, self._count(t, lay)))
            t.bufs[v] = buf
        return t.bufs[v]

    def _result(self, t: _Tile, v: SSAValue) -> _Buf:
        t_ = v.type
        assert isinstance(t_, TensorType)
        buf = self._reusable(t, v) or self._alloc(t, "tmp", self.plan.layout(v),
                                                   t_.element_type)
        t.bufs[v] = buf
        return buf

    def _reusable(self, t: _Tile, v: SSAValue) -> _Buf | None:
        """An operand's scratch buffer that dies at this op and has ``v``'s layout and dtype:
        elementwise vector ops may write in place, which keeps the UB peak (and so the tile
        size) from growing with the number of ops."""
        op = v.owner
        if not isinstance(op, asc.BinaryOp | asc.UnaryOp | asc.SelectOp):
            return None
        lay = self.plan.layout(v)
        for x in op.operands:
            b = t.bufs.get(x)
            if (b is None or b.alloc is None or b.alloc.role.data != "tmp" or b.layout != lay
                    or b.alloc.result.type != self._alloc_type(lay, v)):
                continue
            owners = [y for y, bb in t.bufs.items() if bb.ref is b.ref]
            if all(self.last_use.get(y, -1) <= self.position for y in owners):
                return b
        return None

    def _alloc_type(self, lay: Layout, v: SSAValue) -> Attribute:
        t_ = v.type
        assert isinstance(t_, TensorType)
        return asc.buffer_type(self.plan.elems(lay), t_.element_type, "ub")

    def _binary(self, t: _Tile, op: asc.BinaryOp) -> None:
        kind = op.kind.data
        a, b = op.lhs, op.rhs
        const = {"add": "adds", "mul": "muls", "max": "maxs", "min": "mins", "sub": "adds"}
        for x, y, ok in ((a, b, kind in const), (b, a, kind in ("add", "mul", "max", "min"))):
            if ok and isinstance(y.owner, asc.ConstantOp) and y not in t.bufs:
                value = y.owner.value.value.data
                src = self._buf(t, x)
                dst = self._result(t, op.result)
                scalar = -value if kind == "sub" else value
                t.ix.add(asc.VScalarOp(const[kind], dst.ref, src.ref, scalar,
                                       self._count(t, dst.layout)))
                return
        la, lb = self._buf(t, a), self._buf(t, b)
        dst = self._result(t, op.result)
        t.ix.add(asc.VBinaryOp(kind, dst.ref, la.ref, lb.ref, self._count(t, dst.layout)))

    def _unary(self, t: _Tile, op: asc.UnaryOp) -> None:
        src = self._buf(t, op.input)
        dst = self._result(t, op.result)
        n = self._count(t, dst.layout)
        if op.kind.data == "neg":
            t.ix.add(asc.VScalarOp("muls", dst.ref, src.ref, -1.0, n))
        else:
            t.ix.add(asc.VUnaryOp(op.kind.data, dst.ref, src.ref, n))

    def _alias_or_expand(self, t: _Tile, op: asc.BroadcastOp | asc.ReshapeOp) -> None:
        src = self._buf(t, op.input)
        lay = self.plan.layout(op.result)
        if lay == src.layout:
            t.bufs[op.result] = src
            return
        s = src.layout
        if (self.pre is not None and self.plan.hoist and not self.plan.chunked and lay.rows
                and not s.rows
                and src.alloc is not None and src.alloc.role.data == "const"):
            # Loop-invariant: expand a once-loaded input (e.g. LayerNorm's weight) to a whole
            # tile once per kernel instead of once per tile.
            if op.result not in self.hoisted:
                pre = self.pre
                buf = self._alloc(pre, "const", lay, src.alloc.result.type.element_type)
                sizes = [pre.ix.c(self.plan.tile), pre.ix.c(self.plan.M if lay.m else 1),
                         pre.ix.c(self.plan.l_slot if lay.l else LANE_ALIGN)]
                pre.ix.add(asc.VBroadcastOp(buf.ref, src.ref, sizes, (s.rows, s.m, s.l)))
                self.hoisted[op.result] = buf
            t.bufs[op.result] = self.hoisted[op.result]
            return
        dst = self._result(t, op.result)
        t.ix.add(asc.VBroadcastOp(dst.ref, src.ref, self._sizes(t, lay), (s.rows, s.m, s.l)))

    def _reduce(self, t: _Tile, op: asc.ReduceOp) -> None:
        plan, ix = self.plan, t.ix
        axes = plan.space.reduced[op]
        src = self._buf(t, op.input)
        if not axes:
            t.bufs[op.result] = src
            return
        res_lay = plan.layout(op.result)
        t_ = op.input.type
        assert isinstance(t_, TensorType)
        dtype = t_.element_type
        kind = op.kind.data
        cur = src
        if plan.l_axis in axes:
            lay = Layout(cur.layout.rows, cur.layout.m, False)
            dst = self._alloc(t, "tmp", lay, dtype) if lay != res_lay else self._result(
                t, op.result)
            work = self._alloc(t, "tmp", Layout(False, False, True), dtype)
            rows, m, _ = self._sizes(t, cur.layout)
            ix.add(asc.VReduceOp(kind, "last", dst.ref, cur.ref, work.ref,
                                 [rows, m, ix.c(plan.L), ix.c(plan.l_slot)]))
            cur = dst
        if plan.m_axis is not None and plan.m_axis in axes:
            dst = self._result(t, op.result)
            rows, m, ls = self._sizes(t, cur.layout)
            ix.add(asc.VReduceOp(kind, "mid", dst.ref, cur.ref, cur.ref,
                                 [rows, m, ls, ls]))
            cur = dst
        t.bufs[op.result] = cur

    HOISTABLE = (asc.BinaryOp, asc.UnaryOp, asc.CastOp, asc.CompareOp, asc.SelectOp,
                 asc.ReshapeOp, asc.BroadcastOp)

    def _hoistable(self, op: Operation) -> bool:
        """Loop-invariant: computed only from once-loaded inputs and constants, and spanning
        no tiled dimension, so its value is the same for every tile."""
        if (self.pre is None or not self.plan.hoist or self.plan.chunked
                or not isinstance(op, self.HOISTABLE)):
            return False
        if self.plan.layout(op.results[0]).rows:
            return False
        return all(x in self.invariant or isinstance(x.owner, asc.ConstantOp)
                   for x in op.operands)

    def _op(self, t: _Tile, op: Operation) -> None:
        """Lower one tensor op; the tile ops it becomes carry its source location."""
        loc = op.attributes.get(asc.LOC_ATTR, self.loc)
        saved = (t.ix.loc, self.pre.ix.loc if self.pre is not None else None)
        t.ix.loc = loc
        if self.pre is not None:
            self.pre.ix.loc = loc
        try:
            self._op_at(t, op)
        finally:
            t.ix.loc = saved[0]
            if self.pre is not None:
                self.pre.ix.loc = saved[1]

    def _op_at(self, t: _Tile, op: Operation) -> None:
        if isinstance(op, asc.ConstantOp):
            return  # materialised on first use (or folded into a scalar op)
        if self._hoistable(op):
            assert self.pre is not None
            self.role = "const"
            self._lower(self.pre, op)
            self.role = "tmp"
            for r in op.results:
                t.bufs[r] = self.pre.bufs[r]
                self.invariant.add(r)
            return
        self._lower(t, op)

    def _lower(self, t: _Tile, op: Operation) -> None:
        ix = t.ix
        if isinstance(op, asc.BinaryOp):
            self._binary(t, op)
        elif isinstance(op, asc.UnaryOp):
            self._unary(t, op)
        elif isinstance(op, asc.BroadcastOp | asc.ReshapeOp):
            self._alias_or_expand(t, op)
        elif isinstance(op, asc.ReduceOp):
            self._reduce(t, op)
        elif isinstance(op, asc.CastOp):
            src = self._buf(t, op.input)
            dst = self._result(t, op.result)
            rt = op.result.type
            assert isinstance(rt, TensorType)
            mode = "none" if asc.element_bits(rt.element_type) == 32 else "rint"
            ix.add(asc.VCastOp(dst.ref, src.ref, self._count(t, dst.layout), mode))
        elif isinstance(op, asc.CompareOp):
            a, b = self._buf(t, op.lhs), self._buf(t, op.rhs)
            dst = self._result(t, op.result)
            ix.add(asc.VCompareOp(op.predicate.data, dst.ref, a.ref, b.ref,
                                  self._count(t, dst.layout)))
        elif isinstance(op, asc.SelectOp):
            c = self._buf(t, op.cond)
            a, b = self._buf(t, op.true_value), self._buf(t, op.false_value)
            dst = self._result(t, op.result)
            ix.add(asc.VSelectOp(dst.ref, c.ref, a.ref, b.ref, self._count(t, dst.layout)))
        else:
            raise PyAscCompileError(f"{op.name} cannot be lowered to a vector kernel",
                                    loc_of(op), "this op is not supported in this release")

    # -- kernel ----------------------------------------------------------------------------
    def _gm_elems(self, i: int, v: SSAValue) -> int:
        """Elements of kernel argument ``i`` (value ``v``); ``DYNAMIC_INDEX`` (``?``) when a
        dynamic extent sizes it: the host passes the size in tiling field ``gm<i>_elems``."""
        dyn = self.plan.dyn
        if dyn is not None and dyn.any_dynamic(self.plan.space.has[v]):
            dyn.product_field(self.plan.space.has[v], f"gm{i}_elems")
            return DYNAMIC_INDEX
        return math.prod(shape_of(v)) or 1

    def build(self) -> func.FuncOp:
        plan = self.plan
        args = list(self.block.args)
        term = self.block.last_op
        assert isinstance(term, asc.YieldOp)
        outs = list(term.values)
        gm_types = [asc.buffer_type(self._gm_elems(i, v), v.type.element_type,  # type: ignore
                                    "gm") for i, v in enumerate([*args, *outs])]
        entry = Block(arg_types=gm_types)
        gm_of = dict(zip(args, entry.args[:len(args)], strict=True))
        ix = _Ix(entry, self.loc)
        start, end, step = core_range(ix)
        const_bufs: dict[SSAValue, _Buf] = {}
        pre = _Tile(ix, 1, ix.c(0))
        self.pre = pre
        for a in args:
            if self._is_const_input(a):
                const_bufs[a] = self._load(pre, a, gm_of[a], "const")
        body = Block(arg_types=[IndexType()])
        bx = _Ix(body, self.loc)
        u = body.args[0]
        if plan.chunked:
            chunks, chunk_len, length = plan.chunking(bx)
            row = bx.divi(u, chunks)
            c0 = bx.muli(bx.remi(u, chunks), chunk_len)
            t = _Tile(bx, 1, row, c0, bx.mini(chunk_len, bx.subi(length, c0)))
        else:
            t = _Tile(bx, bx.mini(step, bx.subi(end, u)), u)
        t.bufs.update(const_bufs)
        pre.bufs.update(const_bufs)
        self.invariant.update(const_bufs)
        for a in args:
            if a not in const_bufs:
                t.bufs[a] = self._load(t, a, gm_of[a], "in")
        return self._finish(t, outs, entry, len(args), (start, end, step), body)

    def _finish(self, t: _Tile, outs: list[SSAValue], entry: Block, nargs: int,
                bounds: tuple[SSAValue, SSAValue, SSAValue], body: Block) -> func.FuncOp:
        """Lower the fusion body into tile ``t``, copy the results out, close the loop over
        work units ``bounds`` and wrap ``entry`` into the kernel ``func.func``."""
        body_ops = [op for op in self.block.ops if not isinstance(op, asc.YieldOp)]
        self.last_use = {}
        for i, op in enumerate(body_ops):
            for x in op.operands:
                self.last_use[x] = i
        for x in outs:
            self.last_use[x] = len(body_ops)  # results stay live until copy-out
        for i, op in enumerate(body_ops):
            self.position = i
            self._op(t, op)
        used: set[SSAValue] = set()
        for v, gm in zip(outs, entry.args[nargs:], strict=True):
            self._store(t, v, gm, used)
        t.ix.add(scf.YieldOp())
        ix = _Ix(entry, self.loc)
        ix.add(scf.ForOp(*bounds, [], body))
        ix.add(func.ReturnOp())
        gm_types = [a.type for a in entry.args]
        kernel = func.FuncOp(self.name, (gm_types, []), Region(entry))
        kernel.attributes["asc.kernel"] = UnitAttr()
        if self.loc is not None:
            kernel.attributes[asc.LOC_ATTR] = self.loc
        return kernel


def _plan(fusion: asc.FusionOp, space: IterationSpace, cores: int) -> Plan:
    n = space.rank
    red = frozenset().union(*space.reduced.values()) if space.reduced else frozenset()
    p = min(red) if red else n - 1
    if n - p > 2:
        op = next(o for o, r in space.reduced.items() if r and min(r) == p)
        raise PyAscCompileError(
            "this reduction leaves more than one non-reduced dimension inside the reduced "
            "part of the tensor; a single kernel cannot tile it", loc_of(op),
            "reduce over trailing dimensions (e.g. axis=-1), or over one axis followed only "
            "by the last one")
    plan = Plan(space, range(p), p if n - p == 2 else None, n - 1, False)
    block = fusion.body.block
    term = block.last_op
    assert isinstance(term, asc.YieldOp)
    outs_span_l = all(plan.l_axis in space.has[v] for v in term.values)
    if plan.l_axis not in red and outs_span_l and (plan.rows < cores or plan.L >= CHUNK_MIN_L):
        plan.chunked = True
    return plan


def _alloc_bytes(op: asc.AllocOp, lay: Layout, plan: Plan, tile: int) -> int:
    saved, plan.tile = plan.tile, tile
    t = op.result.type
    bits = asc.element_bits(t.element_type)  # type: ignore[attr-defined]
    elems = plan.elems(lay)
    plan.tile = saved
    if bits == 1:
        elems = round_up(elems, 256)
    return round_up(elems * bits // 8, 32)


@dataclass
class _Budget:
    """UB bytes of a probe kernel as a function of the tile size, with the same layout rules
    as ``asc-buffer-alloc`` (queues x buffers, once-loaded buffers, shared scratch arena)."""

    allocs: list[tuple[asc.AllocOp, Layout]]
    plan: Plan
    buffers: int

    def __post_init__(self) -> None:
        self.tmps = [a for a, _ in self.allocs if a.role.data == "tmp"]
        self.ranges = live_ranges(self.tmps)

    def total(self, tile: int) -> int:
        fixed = 0
        sizes: dict[asc.AllocOp, int] = {}
        for op, lay in self.allocs:
            n = _alloc_bytes(op, lay, self.plan, tile)
            if op.role.data in ("in", "out"):
                fixed += n * self.buffers
            elif op.role.data == "const":
                fixed += n
            else:
                sizes[op] = n
        return fixed + pack(sizes, self.ranges)[1]

    def describe(self, tile: int) -> str:
        parts = []
        for op, lay in self.allocs:
            k = self.buffers if op.role.data in ("in", "out") else 1
            parts.append(f"{op.role.data} {k}x{_alloc_bytes(op, lay, self.plan, tile)} B")
        return ", ".join(parts) + "; tmp buffers whose lifetimes do not overlap share space"


def choose_tile(fusion: asc.FusionOp, plan: Plan, name: str, usable: int, buffers: int,
                cores: int) -> int:
    """Largest tile (rows, or chunk elements) whose buffers fit ``usable`` bytes of UB.

    Raises:
        PyAscCompileError: even the smallest tile does not fit; names buffers and sizes.
    """
    step = COUNT_ALIGN if plan.chunked else 1
    plan.tile = step
    probe = _KernelBuilder(fusion, plan, name)
    probe.build()
    budget = _Budget(probe.allocs, plan, buffers)

    def fits(x: int) -> bool:
        return budget.total(x) <= usable

    if not fits(step):
        raise PyAscCompileError(
            f"the fused kernel needs {budget.total(step)} bytes of UB for "
            f"the smallest tile, but only {usable} bytes are usable on this platform "
            f"(buffers: {budget.describe(step)})", loc_of(fusion),
            "reduce over fewer elements per row or split the operator" if buffers == 1 else
            "reduce over fewer elements per row, split the operator, or disable double "
            "buffering")
    rows = 1 << 40 if plan.rows_dynamic else plan.rows  # dynamic: bounded by UB and blockCount
    if plan.chunked and plan.l_dynamic:  # the host picks the chunk length up to this size
        hi = round_up(MAX_DYNAMIC_CHUNK, COUNT_ALIGN)
    elif plan.chunked:
        per_row = -(-cores // rows)
        hi = min(round_up(plan.L, COUNT_ALIGN), round_up(-(-plan.L // per_row), COUNT_ALIGN))
    else:
        hi = max(1, min(-(-rows // min(cores, rows)), MAX_BLOCK_COUNT // plan.M))
    best = step
    a, b = 1, hi // step
    while a <= b:
        mid = (a + b) // 2
        if fits(mid * step):
            best, a = mid * step, mid + 1
        else:
            b = mid - 1
    return best


def tiling_values(plan: Plan, cores: int) -> dict[str, int]:
    """The tiling struct of a kernel (all int64): work split and tile sizes."""
    units = plan.units
    block_dim = max(1, min(cores, units))
    return {"units": units, "block_dim": block_dim, "units_per_core": units // block_dim,
            "units_rem": units % block_dim, "tile_units": 1 if plan.chunked else plan.tile,
            "rows": plan.rows, "m": plan.M, "l": plan.L,
            "chunk_len": plan.tile if plan.chunked else plan.L}


def _plan_dynamic(fusion: asc.FusionOp, plan: Plan) -> None:
    """Attach the dynamic-extent map the driver asked for (``passes/dynamic_shapes.py``):
    the inner axes must be static; with a dynamic row count, chunk mode is chosen by the row
    length alone."""
    plan.dyn = analyze_dynamic(fusion, plan.space)
    if plan.dyn is None:
        return
    reduced = frozenset().union(*plan.space.reduced.values())
    term = fusion.body.block.last_op
    assert isinstance(term, asc.YieldOp)
    inner: dict[int, str] = {}
    if plan.l_axis in reduced:
        inner[plan.l_axis] = "it is reduced, and reduced rows are held whole in the Unified Buffer"
    elif not all(plan.l_axis in plan.space.has[v] for v in term.values):
        inner[plan.l_axis] = ("it is the trailing dimension and a result does not span it, so "
                              "its rows are held whole in the Unified Buffer")
    if plan.m_axis is not None:
        inner[plan.m_axis] = ("it lies inside the reduced part of the tensor, which is held "
                              "whole in the Unified Buffer")
    require_static(fusion, plan.dyn, inner)
    if plan.l_dynamic:
        plan.chunked = True  # elementwise over a dynamic row length: chunks sized at call time
    elif plan.chunked and plan.rows_dynamic and plan.L < CHUNK_MIN_L:
        plan.chunked = False


def _dynamic_fields(plan: Plan, fusion: asc.FusionOp, kernel: func.FuncOp,
                    cores: int) -> dict[str, int]:
    """The extra tiling fields of a kernel with dynamic extents (at their compiled values) and
    its ``asc.dynamic_tiling`` recipe for the host."""
    assert plan.dyn is not None
    kernel.attributes[SPEC_ATTR] = StringAttr(json.dumps(spec(
        plan.dyn, fusion, cores=cores, chunked=plan.chunked, tile=plan.tile,
        chunks=plan.chunks, m_axis=plan.m_axis, l_axis=plan.l_axis, outer=plan.outer),
        sort_keys=True))
    values = {k: math.prod(plan.space.extents[a] for a in axes)
              for k, axes in plan.dyn.fields.items()}
    if plan.l_dynamic:
        values["chunks"] = plan.chunks
    return values


@dataclass(frozen=True)
class AscTilePass(ModulePass):
    """Lower every ``asc.fusion`` to a tiled kernel (``func.func`` with ``asc.kernel``) and an
    ``asc.launch`` of it. Options: ``platform`` (table name), ``buffers`` (copies of each
    copy-in/copy-out buffer assumed when sizing tiles; 2 = double buffering), ``tile`` (rows
    per tile, or elements per chunk in chunk mode; 0 = the largest that fits UB) and
    ``block_dim`` (cores to split the work over, 1..the platform's vector cores, capped at the
    number of work units; 0 = all). The mode (rows or chunks) is the one the automatic choice
    takes for these ``block_dim`` and ``buffers``; a pinned ``tile`` is then checked against
    UB with ``buffers`` copies (no silent fallback to single buffering).

    Raises:
        PyAscCompileError: a pinned ``tile`` or ``block_dim`` is out of range or does not fit
            UB (located at the operator; the message gives the valid range)."""

    name = "asc-tile"
    platform: str = "910B2"
    buffers: int = 2
    tile: int = 0
    block_dim: int = 0

    def _cores(self, fusion: asc.FusionOp, cores: int) -> int:
        """Cores the work is split over: the pinned ``block_dim`` (validated) or all."""
        if not 0 <= self.block_dim <= cores:
            raise PyAscCompileError(
                f"block_dim={self.block_dim} is out of range: platform {self.platform} has "
                f"{cores} vector cores", loc_of(fusion),
                f"pin a block_dim from 1 to {cores}, or 0 for all cores")
        return self.block_dim or cores

    def _pin_tile(self, fusion: asc.FusionOp, plan: Plan, name: str, usable: int,
                  auto_buffers: int) -> None:
        """Replace the automatic ``plan.tile`` (the largest that fits) by the pinned one."""
        auto = plan.tile
        step = COUNT_ALIGN if plan.chunked else 1
        if plan.chunked:
            what, hi = f"elements per chunk of its {plan.L}-element rows", round_up(
                plan.L, COUNT_ALIGN)
        else:
            what, hi = "rows per tile", max(1, min(plan.rows, MAX_BLOCK_COUNT // plan.M))
        if self.tile % step or not step <= self.tile <= hi:
            raise PyAscCompileError(
                f"tile={self.tile} is out of range: this kernel's tile counts {what}, "
                + (f"a multiple of {step} " if step > 1 else "") + f"from {step} to {hi}",
                loc_of(fusion),
                f"pin a tile in that range, or tile=0 for the automatic choice ({auto})")
        need = 0
        for hoist in (True, False):
            plan.hoist = hoist
            plan.tile = step
            probe = _KernelBuilder(fusion, plan, name)
            probe.build()
            need = _Budget(probe.allocs, plan, self.buffers).total(self.tile)
            if need <= usable:
                plan.tile = self.tile
                return
        hint = (f"the largest tile that fits is {auto}; pin that or less, or tile=0"
                if auto_buffers == self.buffers else
                f"no tile fits with {self.buffers} buffers; pin buffers=1 (no double buffering)")
        raise PyAscCompileError(
            f"tile={self.tile} ({what}) needs {need} bytes of UB with {self.buffers} "
            f"buffer(s), but only {usable} bytes are usable on {self.platform}",
            loc_of(fusion), hint)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plat = get_platform(self.platform)
        for fusion in [o for o in op.walk() if isinstance(o, asc.FusionOp)]:
            name = kernel_name(op, fusion)
            space = analyze(fusion)
            cores = self._cores(fusion, plat.vector_cores)
            plan = _plan(fusion, space, cores)
            _plan_dynamic(fusion, plan)
            buffers = self.buffers
            # Preference order when UB is tight: drop hoisting of loop invariants first, then
            # double buffering; report the last failure if nothing fits.
            attempts = [(True, buffers), (False, buffers)] + (
                [(False, 1)] if buffers > 1 else [])
            for i, (hoist, nbuf) in enumerate(attempts):
                plan.hoist, buffers = hoist, nbuf
                try:
                    plan.tile = choose_tile(fusion, plan, name, plat.ub_usable_bytes, buffers,
                                            cores)
                    break
                except PyAscCompileError:
                    if i == len(attempts) - 1:
                        raise
            if plan.chunked and plan.tile >= plan.L and not plan.l_dynamic:
                plan.chunked = False  # one chunk per row: plain rows are simpler and tighter
                plan.tile = choose_tile(fusion, plan, name, plat.ub_usable_bytes, buffers,
                                        cores)
            if self.tile:
                self._pin_tile(fusion, plan, name, plat.ub_usable_bytes, buffers)
                buffers = self.buffers
            kernel = _KernelBuilder(fusion, plan, name).build()
            values = tiling_values(plan, cores)
            if plan.dyn is not None:
                values.update(_dynamic_fields(plan, fusion, kernel, cores))
            install_kernel(op, fusion, kernel, values, plat.name,
                           buffers if buffers < self.buffers else None)
