"""``asc-lower-cube``: lower each ``asc.fusion`` holding an ``asc.matmul`` to a Cube kernel.

Kernel shape (see ``docs/DESIGN.md``, "Cube kernels"): the fusion's output space is
``[*batch, M, N]``. It is cut into output blocks of ``tile_m x tile_n`` (``tile_n`` a multiple
of 16); one work unit is one block of one batch entry, and units are divided over ``blockDim``
cube cores exactly like ``asc-tile`` divides rows (``units_per_core``, ``units_rem``). For each
block every matmul of the fusion becomes an ``asc.mmad`` that delivers the block (f32) to UB,
and the elementwise epilogue (bias, activation, residual, scaling, masks, SwiGLU's gate) runs
on that UB tile with the vector ops of ``asc-tile``; only the epilogue's results are copied
out. Matmul operands are read by the Cube unit straight from GM.

UB tiles are ``[tile_m, Ls]`` with ``Ls = round_up(tile_n, 16)``; a value that does not vary
along ``M`` keeps one row, one that does not vary along ``N`` keeps a 16-element slot per row
(the ``asc-tile`` conventions). Tile sizes: of the candidates whose buffers fit the platform's
usable UB (the allocator's lifetime sharing counted, copy buffers x ``buffers``) and whose f32
block fits L0C, the one whose busiest Cube core streams the fewest A/B bytes
(``cube_plan.block_candidates``), then halved while that leaves cube cores idle. With
``buffers = 2`` the single-buffered best is taken instead when it streams fewer bytes even
counting the copy-out double buffering would hide (a long ``K``: e.g. 176 x 176 blocks for a
4096^3 fp16 GEMM instead of 144 x 160).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import install_kernel, kernel_name, loc_of
from pyasc_mlir.passes.cube_plan import (
    ACC_BYTES,
    TILE_M_MIN,
    TILE_N_MIN,
    CubePlan,
    block_align,
    block_candidates,
    block_units,
    stream_elems,
    tiling_values,
    whole_rows,
)
from pyasc_mlir.passes.ir_builder import IRBuilder
from pyasc_mlir.passes.iteration_space import element_type_of, shape_of
from pyasc_mlir.passes.kernel_builder import KernelBuilder, Layout, TileBuffer, TileState
from pyasc_mlir.passes.tile_hints import cube_blocks
from pyasc_mlir.passes.ub_budget import UbBudget
from pyasc_mlir.passes.views import VIEW_OPS, View, operand_view, result_view, row_major_strides
from pyasc_mlir.passes.work_split import core_range
from pyasc_mlir.platform import (
    CUBE_FRACTAL,
    DEFAULT_PLATFORM,
    LANE_ALIGN,
    Platform,
    ceil_div,
    get_platform,
    round_up,
)


class CubeKernelBuilder(KernelBuilder):
    """Builds the Cube kernel of one fusion; the epilogue reuses ``asc-tile``'s vector
    lowering on ``[rows, Ls]`` tiles."""

    plan: CubePlan

    def __init__(self, fusion: asc.FusionOp, plan: CubePlan, name: str):
        super().__init__(fusion, plan, name)
        self.gm_of: dict[SSAValue, SSAValue] = {}
        self.coords: list[SSAValue | int] = []

    # -- tile sizes of the vector helpers (no middle axis; rows = block rows) ---------------
    def count(self, t: TileState, lay: Layout) -> SSAValue:
        if lay not in t.counts:
            per_row = self.plan.l_slot if lay.l else LANE_ALIGN
            t.counts[lay] = t.ix.count(t.n if lay.rows else 1, per_row)
        return t.counts[lay]

    def sizes(self, t: TileState, lay: Layout) -> list[SSAValue]:
        return [
            t.ix.value(t.n if lay.rows else 1),
            t.ix.c(1),
            t.ix.c(self.plan.l_slot if lay.l else LANE_ALIGN),
        ]

    # -- GM addressing -----------------------------------------------------------------------
    def _batch_offset(self, ix: IRBuilder, shape: tuple[int, ...]) -> SSAValue | int:
        """Element offset of the current batch entry in a row-major tensor of ``shape``
        (``[*batch, rows, cols]``; its batch dims broadcast to the output's batch dims)."""
        out_batch = self.plan.batch_shape
        strides = row_major_strides(shape)
        off: SSAValue | int = 0
        lead = len(out_batch) - (len(shape) - 2)
        for i in range(len(shape) - 2):
            if shape[i] == out_batch[lead + i] != 1:
                off = ix.addi(off, ix.muli(self.coords[lead + i], strides[i]))
        return off

    def _value_offset(self, t: TileState, v: SSAValue) -> tuple[SSAValue | int, int]:
        """GM offset of ``v``'s part of the current block and its row stride (elements)."""
        ix, plan = t.ix, self.plan
        shape = shape_of(v)
        full = (1,) * (len(plan.out_shape) - len(shape)) + shape
        _, m, n = plan.spans(v)
        strides = row_major_strides(full)
        off = self._batch_offset(ix, full)
        if m:
            off = ix.addi(off, ix.muli(t.first, strides[-2]))
        if n:
            off = ix.addi(off, t.c0)
        return off, strides[-2]

    def load(self, t: TileState, arg: SSAValue, gm: SSAValue, role: str) -> TileBuffer:
        t_ = arg.type
        assert isinstance(t_, TensorType)
        lay = self.plan.layout(arg)
        buf = self.alloc(t, role, lay, t_.element_type)
        off, row_stride = self._value_offset(t, arg)
        blocks = t.n if lay.rows else 1
        length = t.clen if lay.l else 1
        gap = t.ix.subi(row_stride, length) if lay.rows else 0
        slot = self.plan.l_slot if lay.l else LANE_ALIGN
        self.copy(t.ix, asc.CopyInOp, gm, buf.ref, [off, 0, blocks, length, gap, slot])
        return buf

    def store(self, t: TileState, w: SSAValue, gm: SSAValue, used: set[SSAValue]) -> None:
        plan = self.plan
        v, strides = result_view(w)
        batch, m, n = plan.spans(v)
        full_batch = frozenset(i for i, d in enumerate(plan.batch_shape) if d != 1)
        if (
            shape_of(v) != plan.out_shape
            or batch != full_batch
            or m != (plan.rows != 1)
            or n != (plan.cols != 1)
        ):
            raise PyAscCompileError(
                f"an output of the matmul kernel has shape {list(shape_of(v))}, not the "
                f"matmul's output shape {list(plan.out_shape)}",
                loc_of(self.fusion),
                "return values of the matmul's output shape (compute smaller results in a "
                "separate operator)",
            )
        if plan.cols > 1 and strides[-1] != 1:
            raise PyAscCompileError(
                "a matmul kernel's result is returned transposed so that its rows are not "
                "contiguous in GM",
                loc_of(w.owner if isinstance(w.owner, Operation) else self.fusion),
                "keep the last axis last, or transpose in a separate operator",
            )
        lay = plan.layout(v)
        buf = self.out_buffer(t, v, lay, used)
        ix = t.ix
        off = self._view_batch_offset(ix, View(v, shape_of(v), strides))
        off = ix.addi(ix.addi(off, ix.muli(t.first, strides[-2])), t.c0)
        blocks = t.n if lay.rows else 1
        length = t.clen if lay.l else 1
        gap = ix.subi(strides[-2], length) if lay.rows else 0
        slot = plan.l_slot if lay.l else LANE_ALIGN
        self.copy(ix, asc.CopyOutOp, gm, buf.ref, [off, 0, blocks, length, gap, slot])

    # -- the matmul ------------------------------------------------------------------------
    def lower(self, t: TileState, op: Operation) -> None:
        if isinstance(op, asc.MatmulOp):
            self._mmad(t, op)
        else:
            super().lower(t, op)

    def reduce(self, t: TileState, op: asc.ReduceOp) -> None:
        """A reduction over ``N`` (e.g. a softmax over attention scores): the block holds
        whole rows (``tile_n >= N``, see ``whole_rows``), so it is a ``last`` vector reduce."""
        plan, ix = self.plan, t.ix
        if plan.n_tiles != 1:  # asc-fuse and whole_rows guarantee one column block
            raise PyAscCompileError(
                "a row reduction in a matmul epilogue needs whole rows in one block",
                loc_of(op),
                "reduce in a separate operator",
            )
        src = self.operand(t, op.input)
        dst = self.result(t, op.result)
        work = self.alloc(t, "tmp", Layout(False, False, True), element_type_of(op.input))
        rows, m, _ = self.sizes(t, src.layout)
        ix.add(
            asc.VReduceOp(
                op.kind.data,
                "last",
                dst.ref,
                src.ref,
                work.ref,
                [rows, m, ix.c(plan.cols), ix.c(plan.l_slot)],
            )
        )

    def _matmul_operand(
        self, ix: IRBuilder, v: SSAValue, trans: bool, row0: SSAValue | int, loc_op: Operation
    ) -> tuple[SSAValue | int, int, bool]:
        """GM offset (batch entry, first row ``row0`` of the un-transposed matrix), leading
        dimension and transpose flag to read matmul operand ``v`` in place."""
        view = operand_view(v)
        *_, s_row, s_col = view.strides
        *_, d_row, d_col = view.shape
        if d_col == 1 or s_col == 1:
            ld, flip = s_row if d_row > 1 else max(d_col, 1), False
        elif d_row == 1 or s_row == 1:
            ld, flip = s_col, True
        else:
            raise PyAscCompileError(
                f"a matmul operand of shape {list(view.shape)} has no contiguous dimension "
                f"(strides {list(view.strides)})",
                loc_of(loc_op),
                "make the operand contiguous in a separate operator",
            )
        off = self._view_batch_offset(ix, view)
        stride_of_row0 = s_col if trans else s_row
        return ix.addi(off, ix.muli(row0, stride_of_row0)), ld, trans != flip

    def _view_batch_offset(self, ix: IRBuilder, view: View) -> SSAValue | int:
        out_batch = self.plan.batch_shape
        lead = len(out_batch) - (len(view.shape) - 2)
        off: SSAValue | int = 0
        for i in range(len(view.shape) - 2):
            if view.shape[i] == out_batch[lead + i] != 1:
                off = ix.addi(off, ix.muli(self.coords[lead + i], view.strides[i]))
        return off

    def _mmad(self, t: TileState, op: asc.MatmulOp) -> None:
        ix, plan = t.ix, self.plan
        sa = shape_of(op.lhs)
        k = sa[-2] if op.trans_a else sa[-1]
        # A's rows are output rows (first = m0); B's columns are output columns (first = n0):
        # for B, "row0" is along its column dim, i.e. the second matrix dim when not transposed.
        a_off, lda, ta = self._matmul_operand(ix, op.lhs, op.trans_a, t.first, op)
        b_off, ldb, b_rows_out = self._matmul_operand(ix, op.rhs, not op.trans_b, t.c0, op)
        tb = not b_rows_out  # B(p, j) with j the output column
        lay = plan.layout(op.result)
        dst = self.alloc(t, "tmp", lay, op.result.type.element_type)
        t.bufs[op.result] = dst
        sizes = [
            ix.value(x)
            for x in (a_off, b_off, t.n, t.clen, k, lda, ldb, plan.l_slot if lay.l else LANE_ALIGN)
        ]
        a_root, b_root = operand_view(op.lhs).root, operand_view(op.rhs).root
        mm = asc.MmadOp(dst.ref, self.gm_of[a_root], self.gm_of[b_root], sizes, ta, tb)
        mm.attributes["max_m"] = IntegerAttr(plan.tile, i64)
        mm.attributes["max_n"] = IntegerAttr(plan.tile_n, i64)
        mm.attributes["max_k"] = IntegerAttr(k, i64)
        ix.add(mm)

    def lower_op(self, t: TileState, op: Operation) -> None:
        if not isinstance(op, VIEW_OPS):  # folded into GM addressing
            super().lower_op(t, op)

    # -- kernel ----------------------------------------------------------------------------
    def is_const_input(self, v: SSAValue) -> bool:
        batch, m, n = self.plan.spans(v)
        return not batch and not m and not n

    def build(self) -> func.FuncOp:
        """The kernel: core range, once-loaded epilogue inputs, then the loop over this core's
        output blocks (batch entry, block row, block column)."""
        plan = self.plan
        args, outs = self.kernel_io()
        gm_types = [
            asc.buffer_type(math.prod(shape_of(v)) or 1, element_type_of(v), "gm")
            for v in [*args, *outs]
        ]
        entry = Block(arg_types=gm_types)
        self.gm_of = dict(zip(args, entry.args[: len(args)], strict=True))
        ix = IRBuilder(entry, self.loc)
        bounds = core_range(ix)
        # Only epilogue operands are tiles in UB; matmul operands stay in GM.
        tile_args = [
            a
            for a in args
            if any(not isinstance(u.operation, (asc.MatmulOp, *VIEW_OPS)) for u in a.uses)
        ]
        pre = TileState(ix, 1, ix.c(0))
        self.pre = pre
        const_bufs: dict[SSAValue, TileBuffer] = {
            a: self.load(pre, a, self.gm_of[a], "const")
            for a in tile_args
            if self.is_const_input(a)
        }
        body = Block(arg_types=[IndexType()])
        bx = IRBuilder(body, self.loc)
        u = body.args[0]
        per_batch = plan.m_tiles * plan.n_tiles
        flat_b = bx.divi(u, per_batch) if plan.batch > 1 else 0
        rest = bx.remi(u, per_batch) if plan.batch > 1 else u
        nt = plan.n_tiles
        m0 = bx.muli(bx.divi(rest, nt) if nt > 1 else rest, plan.tile)
        n0 = bx.muli(bx.remi(rest, nt), plan.tile_n) if nt > 1 else 0
        self.coords = []
        inner = 1
        for d in reversed(plan.batch_shape):
            self.coords.insert(0, bx.remi(bx.divi(flat_b, inner), d))
            inner *= d
        t = TileState(
            bx,
            bx.mini(plan.tile, bx.subi(plan.rows, m0)),
            m0,
            n0,
            bx.mini(plan.tile_n, bx.subi(plan.cols, n0)),
        )
        t.bufs.update(const_bufs)
        for a in tile_args:
            if a not in const_bufs:
                t.bufs[a] = self.load(t, a, self.gm_of[a], "in")
        return self.finish(t, outs, entry, len(args), bounds, body)


def _check_operands(fusion: asc.FusionOp) -> None:
    args = set(fusion.body.block.args)
    for op in fusion.body.block.ops:
        if (
            isinstance(op, asc.MatmulOp)
            and not {operand_view(op.lhs).root, operand_view(op.rhs).root} <= args
        ):
            raise PyAscCompileError(
                "a matmul operand is computed inside the same kernel; the Cube unit reads its "
                "operands from GM",
                loc_of(op),
                "run asc-fuse first (it splits kernels there)",
            )


def _ub_need(
    fusion: asc.FusionOp, plan: CubePlan, name: str, buffers: int, m: int, n: int
) -> tuple[int, str]:
    """UB bytes (lifetimes shared as ``asc-buffer-alloc`` will) of ``m x n`` blocks, and the
    buffers' description."""
    plan.tile, plan.tile_n = m, n
    probe = CubeKernelBuilder(fusion, plan, name)
    probe.build()
    budget = UbBudget(probe.allocs, plan, buffers)
    return budget.total(m), budget.describe(m)


def _largest_fit(
    fusion: asc.FusionOp,
    plan: CubePlan,
    name: str,
    plat: Platform,
    buffers: int,
    m: int,
    n: int,
    axis: str,
) -> int:
    """The largest multiple of 16 (:func:`block_align`) below the pinned ``axis`` ("tile_m"
    or "tile_n") whose ``m x n`` block fits UB and L0C with the other size kept; 0 if none."""
    align = block_align(axis)
    vals = range((m if axis == "tile_m" else n) - align, align - 1, -align)
    for v in vals:
        mm, nn = (v, n) if axis == "tile_m" else (m, v)
        if (
            mm * nn * ACC_BYTES <= plat.l0c_bytes
            and _ub_need(fusion, plan, name, buffers, mm, nn)[0] <= plat.ub_usable_bytes
        ):
            return v
    return 0


def check_pins(
    fusion: asc.FusionOp,
    plan: CubePlan,
    name: str,
    plat: Platform,
    buffers: int,
    pin_m: int,
    pin_n: int,
) -> None:
    """Validate pinned ``tile_m``/``tile_n`` (0 = automatic): multiples of 16 (``tile_m``: the
    Matmul API's baseM; ``tile_n``: the UB row slot) whose f32 block fits L0C
    (``tile_m * tile_n * 4 <= l0c_bytes``) and whose UB buffers fit with ``buffers`` copies
    (no silent fallback to single buffering). The automatic size of an unpinned dimension is
    taken as 16 here (the smallest it can become).

    Raises:
        PyAscCompileError: located at the fusion; names the limit and the largest valid value.
    """
    for key, v in (("tile_m", pin_m), ("tile_n", pin_n)):
        a = block_align(key)
        if v and v % a:
            raise PyAscCompileError(
                f"{key}={v} is not a multiple of {a} ("
                + ("the Matmul API's baseM" if key == "tile_m" else "the UB row slot")
                + ")",
                loc_of(fusion),
                f"pin {key}={max(a, v // a * a)}, or 0 for the automatic choice",
            )
    if not pin_m and not pin_n:
        return
    m, n = pin_m or block_align("tile_m"), pin_n or block_align("tile_n")
    if m * n * ACC_BYTES > plat.l0c_bytes:
        key, other = ("tile_m", n) if pin_m else ("tile_n", m)
        a = block_align(key)
        best = plat.l0c_bytes // (other * ACC_BYTES) // a * a
        raise PyAscCompileError(
            f"tile_m={m} x tile_n={n} f32 block needs {m * n * ACC_BYTES} bytes of L0C, but "
            f"{plat.name} has {plat.l0c_bytes}",
            loc_of(fusion),
            f"the largest {key} that fits L0C with the other size is {best}",
        )
    need, desc = _ub_need(fusion, plan, name, buffers, m, n)
    if need <= plat.ub_usable_bytes:
        return
    key = "tile_m" if pin_m else "tile_n"
    best = _largest_fit(fusion, plan, name, plat, buffers, m, n, key)
    hint = (
        f"the largest {key} that fits with {'tile_n' if key == 'tile_m' else 'tile_m'}="
        f"{n if key == 'tile_m' else m} is {best}; pin that or less"
        if best
        else f"no {key} fits with {buffers} buffer(s)"
        + ("; pin buffers=1 (no double buffering)" if buffers > 1 else "")
        + ", or unpin it (0)"
    )
    raise PyAscCompileError(
        f"tile_m={m} x tile_n={n} blocks need {need} bytes of UB with {buffers} buffer(s) "
        f"(buffers: {desc}), but only {plat.ub_usable_bytes} bytes are usable on {plat.name}",
        loc_of(fusion),
        hint,
    )


def choose_blocks(
    fusion: asc.FusionOp,
    plan: CubePlan,
    name: str,
    plat: Platform,
    buffers: int,
    cores: int | None = None,
    pin_m: int = 0,
    pin_n: int = 0,
) -> None:
    """Set ``plan.tile``/``plan.tile_n``: the first block of
    :func:`~pyasc_mlir.passes.cube_plan.block_candidates` (least A/B stream per core, then the
    largest) whose UB buffers (lifetimes shared as ``asc-buffer-alloc`` will) fit the usable
    UB and whose f32 block fits L0C; then halve
    it while fewer units than ``cores`` (default: the cube cores) exist. A pinned size
    (``pin_m``/``pin_n``, non-zero) is kept; only the other one is chosen and halved.

    Raises:
        PyAscCompileError: not even a 16 x 16 block fits; names the buffers.
    """
    cores = plat.cube_cores if cores is None else cores
    budget_desc = ""
    for m, n in block_candidates(plan, plat.l0c_bytes, cores, pin_m, pin_n):
        if round_up(m, CUBE_FRACTAL) * round_up(n, LANE_ALIGN) * ACC_BYTES > plat.l0c_bytes:
            continue
        need, desc = _ub_need(fusion, plan, name, buffers, m, n)
        if need <= plat.ub_usable_bytes:
            break
        budget_desc = desc
    else:
        raise PyAscCompileError(
            f"the matmul kernel's epilogue does not fit the usable UB ({plat.ub_usable_bytes} "
            f"bytes) even with {CUBE_FRACTAL} x {LANE_ALIGN} blocks (buffers: {budget_desc})",
            loc_of(fusion),
            "split the epilogue into a separate operator",
        )
    while plan.units < cores:
        narrower = round_up(plan.tile_n // 2, LANE_ALIGN)
        if (
            not pin_n
            and TILE_N_MIN <= narrower < plan.tile_n
            and (plan.tile_n >= plan.tile or pin_m)
        ):
            plan.tile_n = narrower
        elif not pin_m and plan.tile > TILE_M_MIN:
            plan.tile = round_up(plan.tile // 2, TILE_M_MIN)  # stays a multiple of baseM
        else:
            break


def _stream_bytes(plan: CubePlan, cores: int, k: int, sz: int, exposed: bool) -> int:
    """Bytes the busiest Cube core streams (A and B over ``k``, ``sz`` bytes an element) with
    ``plan``'s blocks, plus, single buffered (``exposed``), each block's f32 result twice (the
    workspace read and the copy-out that double buffering would hide)."""
    m, n = min(plan.tile, plan.rows), min(plan.tile_n, plan.cols)
    per_core = ceil_div(block_units(plan, plan.tile, plan.tile_n), max(1, cores))
    extra = per_core * m * n * 2 * ACC_BYTES if exposed else 0
    return stream_elems(plan, plan.tile, plan.tile_n, cores) * k * sz + extra


def _buffers_for_stream(
    fusion: asc.FusionOp,
    plan: CubePlan,
    name: str,
    plat: Platform,
    cores: int,
    k: int,
    buffers: int,
) -> int:
    """``buffers`` (``plan`` kept), or 1 with the single-buffered blocks set on ``plan`` when
    those make the busiest core stream fewer bytes (:func:`_stream_bytes`): for a long ``K``
    larger blocks save more A/B traffic than double buffering the epilogue hides."""
    mm = next(o for o in fusion.body.block.ops if isinstance(o, asc.MatmulOp))
    sz = asc.element_bits(element_type_of(mm.lhs)) // 8
    kept = (plan.tile, plan.tile_n)
    best = _stream_bytes(plan, cores, k, sz, False)
    choose_blocks(fusion, plan, name, plat, 1, cores)
    if _stream_bytes(plan, cores, k, sz, True) < best:
        return 1
    plan.tile, plan.tile_n = kept
    return buffers


@dataclass(frozen=True)
class AscLowerCubePass(ModulePass):
    """Lower every ``asc.fusion`` that holds an ``asc.matmul`` to a Cube kernel (``func.func``
    with ``asc.kernel``) and an ``asc.launch`` of it; other fusions are left to ``asc-tile``.
    Options: ``platform`` (table name), ``buffers`` (copies of each copy-in/copy-out buffer
    assumed when sizing blocks; 2 = double buffering), ``tile_m``/``tile_n`` (output-block
    rows/columns, multiples of 16; 0 = automatic) and ``block_dim`` (cube cores, 1..the
    platform's cube cores, capped at the work units; 0 = automatic = min(cube cores, units)).
    A pinned block size is checked against L0C and UB with ``buffers`` copies (no silent
    fallback to single buffering).

    Raises:
        PyAscCompileError: a pinned option is out of range or does not fit (located at the
            operator; the message names the limit and the largest valid value)."""

    name = "asc-lower-cube"
    platform: str = DEFAULT_PLATFORM
    buffers: int = 2
    tile_m: int = 0
    tile_n: int = 0
    block_dim: int = 0

    def _cores(self, fusion: asc.FusionOp, plat: Platform) -> int:
        """Cube cores the work is split over: the pinned ``block_dim`` (validated) or all."""
        if not 0 <= self.block_dim <= plat.cube_cores:
            raise PyAscCompileError(
                f"block_dim={self.block_dim} is out of range: platform {plat.name} has "
                f"{plat.cube_cores} cube cores (this operator has a matmul kernel)",
                loc_of(fusion),
                f"pin a block_dim from 1 to {plat.cube_cores}, or 0 for the automatic choice",
            )
        return self.block_dim or plat.cube_cores

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plat = get_platform(self.platform)
        for fusion in [o for o in op.walk() if isinstance(o, asc.FusionOp)]:
            mms = [o for o in fusion.body.block.ops if isinstance(o, asc.MatmulOp)]
            if not mms:
                continue
            _check_operands(fusion)
            name = kernel_name(op, fusion)
            plan = CubePlan(shape_of(mms[0].result))
            cores = self._cores(fusion, plat)
            buffers = self.buffers
            rows_n = whole_rows(fusion, plan)
            if rows_n and self.tile_n and self.tile_n < rows_n:
                raise PyAscCompileError(
                    f"tile_n={self.tile_n} splits the rows of {plan.cols} columns that this "
                    "kernel's epilogue reduces over",
                    loc_of(fusion),
                    f"pin tile_n >= {rows_n} or leave it automatic",
                )
            um, un, uk = cube_blocks(fusion)  # the person's blocks (kernel language)
            pins = (self.tile_m or um, self.tile_n or max(un, rows_n))
            check_pins(fusion, plan, name, plat, buffers, *pins)
            sa = shape_of(mms[0].lhs)
            k = sa[-2] if mms[0].trans_a else sa[-1]
            try:
                choose_blocks(fusion, plan, name, plat, buffers, cores, *pins)
                if buffers > 1 and not any(pins):
                    buffers = _buffers_for_stream(fusion, plan, name, plat, cores, k, buffers)
            except PyAscCompileError:
                if buffers == 1 or any(pins):
                    raise
                buffers = 1
                choose_blocks(fusion, plan, name, plat, buffers, cores)
            kernel = CubeKernelBuilder(fusion, plan, name).build()
            for mm in kernel.walk() if uk else ():
                if isinstance(mm, asc.MmadOp):
                    mm.attributes["base_k"] = IntegerAttr(uk, i64)
            values = tiling_values(plan, cores, k)
            install_kernel(
                op, fusion, kernel, values, plat.name, buffers if buffers < self.buffers else None
            )
