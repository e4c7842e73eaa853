"""``asc-tile``: lower each ``asc.fusion`` to a tiled tile-level kernel plus an ``asc.launch``.

Kernel shape (see ``docs/DESIGN.md``): the coalesced iteration space (``iteration_space``) is
split into *outer* axes, which are tiled, and at most two *inner* axes ``[M, L]`` held whole in
the Unified Buffer (UB). Reductions must be over inner axes: the outermost reduced axis starts
the inner part. Without reductions the trailing axis may be split into chunks ("chunk mode": one
work unit = one chunk of one row). A row reduced over the trailing axis that does not fit UB
whole is walked in chunks several times ("row passes", one work unit = one row:
``passes/tile_row_passes.py``).

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

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import install_kernel, kernel_name, loc_of
from pyasc_mlir.passes.ir_builder import Index, IRBuilder
from pyasc_mlir.passes.iteration_space import analyze, element_type_of, shape_of, sliced_only
from pyasc_mlir.passes.kernel_builder import KernelBuilder, Layout, TileBuffer, TileState
from pyasc_mlir.passes.nan_guard import guard_needed
from pyasc_mlir.passes.tile_hints import vector_tile
from pyasc_mlir.passes.tile_plan import (
    MAX_DYNAMIC_CHUNK,
    Plan,
    column_chunkable,
    dynamic_tiling_fields,
    plan_dynamic,
    plan_kernel,
    tiling_values,
)
from pyasc_mlir.passes.ub_budget import UbBudget
from pyasc_mlir.passes.work_split import core_range
from pyasc_mlir.platform import (
    COUNT_ALIGN,
    DEFAULT_PLATFORM,
    LANE_ALIGN,
    MAX_BLOCK_COUNT,
    ceil_div,
    get_platform,
    round_up,
)


class VectorKernelBuilder(KernelBuilder):
    """Builds the ``asc-tile`` kernel of one fusion for a :class:`Plan`: rows of ``[rows, M,
    Ls]`` tiles (or chunks of one row) copied in and out of GM in the fusion's own layouts."""

    plan: Plan

    def count(self, t: TileState, lay: Layout) -> SSAValue:
        if lay not in t.counts:
            rows = t.n if (lay.rows and not self.plan.chunked) else 1
            per_row = (self.plan.M if lay.m else 1) * (self.plan.l_slot if lay.l else LANE_ALIGN)
            if self.plan.l_dynamic and lay.l and not lay.m and isinstance(t.clen, SSAValue):
                t.counts[lay] = t.ix.count(t.clen, 1)  # this chunk's length, not the buffer's
            else:
                t.counts[lay] = t.ix.count(rows, per_row)
        return t.counts[lay]

    def sizes(self, t: TileState, lay: Layout) -> list[SSAValue]:
        rows = t.n if (lay.rows and not self.plan.chunked) else 1
        return [
            t.ix.value(rows),
            t.ix.c(self.plan.M if lay.m else 1),
            t.ix.c(self.plan.l_slot if lay.l else LANE_ALIGN),
        ]

    def is_const_input(self, v: SSAValue) -> bool:
        lay = self.plan.layout(v)
        return not lay.rows and not (self.plan.chunked and lay.l)

    def _gm_row_offset(
        self, ix: IRBuilder, v: SSAValue, g: Index, load: bool = False
    ) -> SSAValue | int:
        """GM element offset of outer row ``g`` in value ``v``'s own layout (``load``: a slice
        read in place is addressed in its input's buffer, from its base offset)."""
        plan = self.plan
        sp, outer = plan.space, plan.outer
        view = sp.views.get(v) if load else None
        has_outer = sp.has[v].intersection(outer)
        if not has_outer:
            return view.base if view is not None else 0

        def stride(a: int) -> SSAValue | int:  # GM stride of axis a in v (or its view)
            if view is not None:
                return view.strides[a]
            return plan.extent(ix, [b for b in sp.has[v] if b > a])

        if has_outer == set(outer) and view is None:
            return ix.muli(g, stride(outer[-1]))
        off: SSAValue | int = view.base if view is not None else 0
        for a in reversed(outer):
            if a in has_outer:
                inner = plan.extent(ix, [b for b in outer if b > a])
                coord = ix.remi(ix.divi(g, inner), plan.extent(ix, [a]))
                off = ix.addi(off, ix.muli(coord, stride(a)))
        return off

    def _m_gap(self, ix: IRBuilder, v: SSAValue, lay: Layout, blen: Index) -> Index:
        """GM gap after each of the ``M`` blocks (``blen`` elements) of input ``v``: 0 in its
        own layout; a view's ``M`` stride minus ``blen``."""
        view = self.plan.space.views.get(v)
        if view is None or not lay.m:
            return 0
        assert self.plan.m_axis is not None
        return ix.subi(view.strides[self.plan.m_axis], blen)

    def _view_block_stride(self, v: SSAValue, lay: Layout) -> int | None:
        """GM distance between consecutive blocks (rows x ``M``) of view ``v`` when uniform
        (one ``copy_in`` of every row), else ``None`` (copied row by row)."""
        plan, view = self.plan, self.plan.space.views[v]
        outer = sorted(plan.space.has[v].intersection(plan.outer))
        if not lay.rows:
            return view.strides[plan.m_axis] if lay.m and plan.m_axis is not None else 1
        if len(outer) != len(plan.outer):
            return None
        for a, b in zip(outer, outer[1:], strict=False):
            if view.strides[a] != view.strides[b] * plan.space.extents[b]:
                return None
        row = view.strides[outer[-1]]
        if not lay.m:
            return row
        assert plan.m_axis is not None
        m = view.strides[plan.m_axis]
        return m if row == m * plan.M else None

    def _chunk_block(
        self, ix: IRBuilder, lay: Layout, row_off: SSAValue | int, t: TileState
    ) -> tuple[SSAValue | int, SSAValue | int, SSAValue | int]:
        """GM offset, block length and GM gap of one chunk (``M`` blocks of ``clen``)."""
        if not lay.l:
            return row_off, 1, 0
        gap = (
            ix.subi(self.plan.extent(ix, [self.plan.l_axis]), t.clen)
            if lay.m and self.plan.M > 1
            else 0
        )
        return ix.addi(row_off, t.c0), t.clen, gap

    def _view_chunk_block(
        self, ix: IRBuilder, v: SSAValue, lay: Layout, row_off: SSAValue | int, t: TileState
    ) -> tuple[SSAValue | int, SSAValue | int, SSAValue | int]:
        """:meth:`_chunk_block` of a view: the ``M`` blocks are its ``M`` stride apart."""
        if not lay.l:
            return row_off, 1, self._m_gap(ix, v, lay, 1)
        return ix.addi(row_off, t.c0), t.clen, self._m_gap(ix, v, lay, t.clen)

    # -- inputs and outputs --------------------------------------------------------------
    def load(self, t: TileState, arg: SSAValue, gm: SSAValue, role: str) -> TileBuffer:
        plan, ix = self.plan, t.ix
        lay = plan.layout(arg)
        t_ = arg.type
        assert isinstance(t_, TensorType)
        buf = self.alloc(t, role, lay, t_.element_type)
        mv = plan.M if lay.m else 1
        slot = plan.l_slot if lay.l else LANE_ALIGN
        view = arg in plan.space.views
        if plan.chunked:
            row_off = self._gm_row_offset(ix, arg, t.first, load=True)
            if view:
                off, length, gap = self._view_chunk_block(ix, arg, lay, row_off, t)
            else:
                off, length, gap = self._chunk_block(ix, lay, row_off, t)
            self.copy(ix, asc.CopyInOp, gm, buf.ref, [off, 0, mv, length, gap, slot])
            return buf
        lv = plan.L if lay.l else 1
        outer_has = plan.space.has[arg].intersection(plan.outer)
        block_stride = self._view_block_stride(arg, lay) if view else None
        if block_stride is not None:  # a slice read in place: evenly strided blocks
            n = t.n if lay.rows else 1
            off = self._gm_row_offset(ix, arg, t.first, load=True)
            cin = [off, 0, ix.muli(n, mv), lv, max(0, block_stride - lv), slot]
            self.copy(ix, asc.CopyInOp, gm, buf.ref, cin)
            return buf
        if not view and (not outer_has or outer_has == set(plan.outer)):
            n = t.n if lay.rows else 1
            off = self._gm_row_offset(ix, arg, t.first)
            self.copy(ix, asc.CopyInOp, gm, buf.ref, [off, 0, ix.muli(n, mv), lv, 0, slot])
            return buf
        # Partially broadcast over the outer axes: gather row by row.
        body = Block(arg_types=[IndexType()])
        inner = IRBuilder(body, self.loc)
        g = inner.addi(t.first, body.args[0])
        off = self._gm_row_offset(inner, arg, g, load=True)
        ub_off = inner.muli(body.args[0], mv * slot)
        gap = self._m_gap(inner, arg, lay, lv)
        self.copy(inner, asc.CopyInOp, gm, buf.ref, [off, ub_off, mv, lv, gap, slot])
        inner.add(scf.YieldOp())
        ix.add(scf.ForOp(ix.c(0), ix.value(t.n), ix.c(1), [], body))
        return buf

    def store(self, t: TileState, v: SSAValue, gm: SSAValue, used: set[SSAValue]) -> None:
        plan, ix = self.plan, t.ix
        lay = plan.layout(v)
        if plan.space.has[v].intersection(plan.outer) != set(plan.outer):
            raise PyAscCompileError(
                "an output of the operator does not span all of its leading dimensions "
                f"(shape {list(shape_of(v))})",
                loc_of(self.fusion),
                "return values computed from the full-size inputs",
            )
        buf = self.out_buffer(t, v, lay, used)
        mv = plan.M if lay.m else 1
        slot = plan.l_slot if lay.l else LANE_ALIGN
        row_off = self._gm_row_offset(ix, v, t.first)
        if plan.chunked:
            off, length, gap = self._chunk_block(ix, lay, row_off, t)
            self.copy(ix, asc.CopyOutOp, gm, buf.ref, [off, 0, mv, length, gap, slot])
        else:
            self.copy(
                ix,
                asc.CopyOutOp,
                gm,
                buf.ref,
                [row_off, 0, ix.muli(t.n, mv), plan.L if lay.l else 1, 0, slot],
            )

    def lower_op(self, t: TileState, op: Operation) -> None:
        if isinstance(op, asc.SliceOp):
            return  # read in place by ``load`` (a GM view)
        super().lower_op(t, op)

    def reduce(self, t: TileState, op: asc.ReduceOp) -> None:
        plan, ix = self.plan, t.ix
        axes = plan.space.reduced[op]
        src = self.operand(t, op.input)
        if not axes:
            t.bufs[op.result] = src
            return
        res_lay = plan.layout(op.result)
        t_ = op.input.type
        assert isinstance(t_, TensorType)
        dtype = t_.element_type
        cur = src
        if plan.l_axis in axes:
            lay = Layout(cur.layout.rows, cur.layout.m, False)
            dst = self.alloc(t, "tmp", lay, dtype) if lay != res_lay else self.result(t, op.result)
            work = self.alloc(t, "tmp", Layout(False, False, True), dtype)
            rows, m, _ = self.sizes(t, cur.layout)
            sizes = [rows, m, ix.c(plan.L), ix.c(plan.l_slot)]
            self._vreduce(t, op, "last", dst, cur, work.ref, sizes)
            cur = dst
        if plan.m_axis is not None and plan.m_axis in axes:
            dst = self.result(t, op.result)
            rows, m, ls = self.sizes(t, cur.layout)
            self._vreduce(t, op, "mid", dst, cur, cur.ref, [rows, m, ls, ls])
            cur = dst
        t.bufs[op.result] = cur

    def _vreduce(
        self,
        t: TileState,
        op: asc.ReduceOp,
        axis: str,
        dst: TileBuffer,
        src: TileBuffer,
        work: SSAValue,
        sizes: list[SSAValue],
    ) -> None:
        """One ``asc.vreduce`` stage of ``op``; max/min NaN-guarded (``passes/nan_guard.py``)
        unless the guard is provably not needed (``nan_guard.guard_needed``)."""
        kind = op.kind.data
        guarded = kind in ("max", "min") and self.guards is not None and self.guards.applies(op)
        if guarded and guard_needed(op):
            assert self.guards is not None
            self.guards.reduce(t, kind, axis, dst, src, work, sizes)
        else:
            t.ix.add(asc.VReduceOp(kind, axis, dst.ref, src.ref, work, sizes))

    # -- kernel ----------------------------------------------------------------------------
    def _gm_elems(self, i: int, v: SSAValue) -> int:
        """Elements of kernel argument ``i`` (value ``v``); ``DYNAMIC_INDEX`` (``?``) when a
        dynamic extent sizes it: the host passes the size in tiling field ``gm<i>_elems``."""
        dyn = self.plan.dyn
        if dyn is not None and v in self.plan.space.has and dyn.any_dynamic(self.plan.space.has[v]):
            dyn.product_field(self.plan.space.has[v], f"gm{i}_elems")
            return DYNAMIC_INDEX
        return math.prod(shape_of(v)) or 1

    def build(self) -> func.FuncOp:
        """The kernel: core range, once-loaded inputs, then the loop over this core's tiles."""
        plan = self.plan
        args, outs = self.kernel_io()
        gm_types = [
            asc.buffer_type(
                self._gm_elems(i, v),
                element_type_of(v),
                "gm",
            )
            for i, v in enumerate([*args, *outs])
        ]
        entry = Block(arg_types=gm_types)
        gm_of = dict(zip(args, entry.args[: len(args)], strict=True))
        ix = IRBuilder(entry, self.loc)
        start, end, step = core_range(ix)
        const_bufs: dict[SSAValue, TileBuffer] = {}
        pre = TileState(ix, 1, ix.c(0))
        self.pre = pre
        hidden = sliced_only(self.fusion)
        views = plan.space.views
        gm_of.update({s: gm_of[view.source] for s, view in views.items()})
        loaded = [a for a in args if a not in hidden] + list(views)
        for a in loaded:
            if self.is_const_input(a):
                const_bufs[a] = self.load(pre, a, gm_of[a], "const")
        body = Block(arg_types=[IndexType()])
        bx = IRBuilder(body, self.loc)
        u = body.args[0]
        if plan.chunked:
            chunks, chunk_len, length = plan.chunking(bx)
            row = bx.divi(u, chunks)
            c0 = bx.muli(bx.remi(u, chunks), chunk_len)
            t = TileState(bx, 1, row, c0, bx.mini(chunk_len, bx.subi(length, c0)))
        else:
            t = TileState(bx, bx.mini(step, bx.subi(end, u)), u)
        t.bufs.update(const_bufs)
        pre.bufs.update(const_bufs)
        self.invariant.update(const_bufs)
        for a in loaded:
            if a not in const_bufs:
                t.bufs[a] = self.load(t, a, gm_of[a], "in")
        return self.finish(t, outs, entry, len(args), (start, end, step), body)


def make_builder(fusion: asc.FusionOp, plan: Plan, name: str) -> VectorKernelBuilder:
    """The kernel builder of ``plan``: row passes (``passes/tile_row_passes.py``) when
    ``plan.passes``, else :class:`VectorKernelBuilder`."""
    if plan.passes:
        from pyasc_mlir.passes.tile_row_passes import RowPassKernelBuilder  # imports this module

        return RowPassKernelBuilder(fusion, plan, name)
    return VectorKernelBuilder(fusion, plan, name)


def choose_tile(
    fusion: asc.FusionOp, plan: Plan, name: str, usable: int, buffers: int, cores: int
) -> int:
    """Largest tile (rows, or chunk elements) whose buffers fit ``usable`` bytes of UB.

    Raises:
        PyAscCompileError: even the smallest tile does not fit; names buffers and sizes.
    """
    step = plan.chunk_step if plan.chunked else 1
    plan.tile = step
    probe = make_builder(fusion, plan, name)
    probe.build()
    budget = UbBudget(probe.allocs, plan, buffers)

    def fits(x: int) -> bool:
        return budget.total(x) <= usable

    if not fits(step):
        raise PyAscCompileError(
            f"the fused kernel needs {budget.total(step)} bytes of UB for "
            f"the smallest tile, but only {usable} bytes are usable on this platform "
            f"(buffers: {budget.describe(step)})",
            loc_of(fusion),
            "reduce over fewer elements per row or split the operator"
            if buffers == 1
            else "reduce over fewer elements per row, split the operator, or disable double "
            "buffering",
        )
    rows = 1 << 40 if plan.rows_dynamic else plan.rows  # dynamic: bounded by UB and blockCount
    if plan.chunked and plan.l_dynamic:  # the host picks the chunk length up to this size
        hi = round_up(MAX_DYNAMIC_CHUNK, COUNT_ALIGN)
    elif plan.passes:  # one row per work unit, walked in chunks
        hi = round_up(plan.L, COUNT_ALIGN)
    elif plan.chunked:
        per_row = ceil_div(cores, rows)
        hi = min(round_up(plan.L, step), round_up(ceil_div(plan.L, per_row), step))
    else:
        hi = max(1, min(ceil_div(rows, min(cores, rows)), MAX_BLOCK_COUNT // plan.M))
    best = step
    a, b = 1, hi // step
    while a <= b:
        mid = (a + b) // 2
        if fits(mid * step):
            best, a = mid * step, mid + 1
        else:
            b = mid - 1
    return best


@dataclass(frozen=True)
class AscTilePass(ModulePass):
    """Lower every ``asc.fusion`` to a tiled kernel (``func.func`` with ``asc.kernel``) and an
    ``asc.launch`` of it. Options: ``platform`` (table name), ``buffers`` (copies of each
    copy-in/copy-out buffer assumed when sizing tiles; 2 = double buffering), ``tile`` (rows
    per tile, or elements per chunk in chunk mode; 0 = the largest that fits UB) and
    ``block_dim`` (cores to split the work over, 1..the platform's vector cores, capped at the
    number of work units; 0 = all) and ``nan_guards`` (emit the NaN/signed-zero guards of
    ``passes/nan_guard.py``, default true; false only to measure their cost). The mode
    (rows or chunks) is the one the automatic choice
    takes for these ``block_dim`` and ``buffers``; a pinned ``tile`` is then checked against
    UB with ``buffers`` copies (no silent fallback to single buffering).

    Raises:
        PyAscCompileError: a pinned ``tile`` or ``block_dim`` is out of range or does not fit
            UB (located at the operator; the message gives the valid range)."""

    name = "asc-tile"
    platform: str = DEFAULT_PLATFORM
    buffers: int = 2
    tile: int = 0
    block_dim: int = 0
    nan_guards: bool = True

    def _cores(self, fusion: asc.FusionOp, cores: int) -> int:
        """Cores the work is split over: the pinned ``block_dim`` (validated) or all."""
        if not 0 <= self.block_dim <= cores:
            raise PyAscCompileError(
                f"block_dim={self.block_dim} is out of range: platform {self.platform} has "
                f"{cores} vector cores",
                loc_of(fusion),
                f"pin a block_dim from 1 to {cores}, or 0 for all cores",
            )
        return self.block_dim or cores

    def _pin_tile(
        self,
        fusion: asc.FusionOp,
        plan: Plan,
        name: str,
        usable: int,
        auto_buffers: int,
        tile: int,
    ) -> None:
        """Replace the automatic ``plan.tile`` (the largest that fits) by the pinned
        ``tile``."""
        auto = plan.tile
        step = plan.chunk_step if plan.chunked else 1
        if plan.chunked:
            what, hi = (
                f"elements per chunk of its {plan.L}-element rows",
                round_up(plan.L, step),
            )
        else:
            what, hi = "rows per tile", max(1, min(plan.rows, MAX_BLOCK_COUNT // plan.M))
        if tile % step or not step <= tile <= hi:
            raise PyAscCompileError(
                f"tile={tile} is out of range: this kernel's tile counts {what}, "
                + (f"a multiple of {step} " if step > 1 else "")
                + f"from {step} to {hi}",
                loc_of(fusion),
                f"pin a tile in that range, or tile=0 for the automatic choice ({auto})",
            )
        need = 0
        for hoist in (True, False):
            plan.hoist = hoist
            plan.tile = step
            probe = make_builder(fusion, plan, name)
            probe.build()
            need = UbBudget(probe.allocs, plan, self.buffers).total(tile)
            if need <= usable:
                plan.tile = tile
                return
        hint = (
            f"the largest tile that fits is {auto}; pin that or less, or tile=0"
            if auto_buffers == self.buffers
            else f"no tile fits with {self.buffers} buffers; pin buffers=1 (no double buffering)"
        )
        raise PyAscCompileError(
            f"tile={tile} ({what}) needs {need} bytes of UB with {self.buffers} "
            f"buffer(s), but only {usable} bytes are usable on {self.platform}",
            loc_of(fusion),
            hint,
        )

    def _fit(self, fusion: asc.FusionOp, plan: Plan, name: str, usable: int, cores: int) -> int:
        """Size ``plan.tile``; the buffer count used. Preference order when UB is tight: drop
        hoisting of loop invariants first, then double buffering; then, for a row reduced
        over ``L``, row passes (``passes/tile_row_passes.py``); for a slab reduced over ``M``,
        column chunks (:func:`column_chunkable`); the last whole-row failure is reported if
        nothing fits."""
        from pyasc_mlir.passes.tile_row_passes import plan_row_passes  # imports this module

        buffers = self.buffers
        attempts = [(True, buffers), (False, buffers)] + ([(False, 1)] if buffers > 1 else [])
        last: PyAscCompileError | None = None
        for hoist, attempt_buffers in attempts:
            plan.hoist = hoist
            try:
                plan.tile = choose_tile(fusion, plan, name, usable, attempt_buffers, cores)
                return attempt_buffers
            except PyAscCompileError as e:
                last = e
        assert last is not None
        if column_chunkable(fusion, plan):
            return self._fit_columns(fusion, plan, name, usable, cores, last)
        if plan.chunked or not plan_row_passes(fusion, plan):
            raise last
        return _first_fit(
            fusion, plan, name, usable, cores, last, sorted({buffers, 1}, reverse=True)
        )

    def _fit_columns(
        self,
        fusion: asc.FusionOp,
        plan: Plan,
        name: str,
        usable: int,
        cores: int,
        last: PyAscCompileError,
    ) -> int:
        """Size ``plan`` as column chunks (``M`` blocks of a multiple of ``LANE_ALIGN``
        columns); the buffer count used. Raises ``last`` (the whole-row failure) if even one
        ``LANE_ALIGN``-wide column does not fit."""
        plan.chunked, plan.chunk_step = True, LANE_ALIGN
        for hoist, attempts in ((True, [self.buffers]), (False, [self.buffers, 1])):
            plan.hoist = hoist
            try:
                return _first_fit(fusion, plan, name, usable, cores, last, attempts)
            except PyAscCompileError:
                pass
        raise last

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plat = get_platform(self.platform)
        for fusion in [o for o in op.walk() if isinstance(o, asc.FusionOp)]:
            name = kernel_name(op, fusion)
            space = analyze(fusion)
            cores = self._cores(fusion, plat.vector_cores)
            plan = plan_kernel(fusion, space, cores)
            plan.nan_guards = self.nan_guards
            plan_dynamic(fusion, plan)
            buffers = self._fit(fusion, plan, name, plat.ub_usable_bytes, cores)
            if plan.chunked and plan.tile >= plan.L and not plan.l_dynamic and not plan.passes:
                plan.chunked = False  # one chunk per row: plain rows are simpler and tighter
                plan.tile = choose_tile(fusion, plan, name, plat.ub_usable_bytes, buffers, cores)
            pin = self.tile or vector_tile(fusion, plan)  # the person's block
            if pin:
                self._pin_tile(fusion, plan, name, plat.ub_usable_bytes, buffers, pin)
                buffers = self.buffers
            kernel = make_builder(fusion, plan, name).build()
            values = tiling_values(plan, cores)
            if plan.dyn is not None:
                values.update(dynamic_tiling_fields(plan, fusion, kernel, cores))
            install_kernel(
                op, fusion, kernel, values, plat.name, buffers if buffers < self.buffers else None
            )


def _first_fit(
    fusion: asc.FusionOp,
    plan: Plan,
    name: str,
    usable: int,
    cores: int,
    last: PyAscCompileError,
    attempts: list[int],
) -> int:
    """Set ``plan.tile`` for the first buffer count in ``attempts`` whose tile fits ``usable``
    bytes of UB and return that count; raises ``last`` if none fits."""
    for attempt_buffers in attempts:
        try:
            plan.tile = choose_tile(fusion, plan, name, usable, attempt_buffers, cores)
            return attempt_buffers
        except PyAscCompileError:
            pass
    raise last
