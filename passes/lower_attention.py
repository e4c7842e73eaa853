"""``asc-lower-attention``: lower each ``asc.fusion`` holding an ``asc.flash_attention`` to ONE
MIX (Cube + vector) kernel: FlashAttention's online softmax over blocks of keys, the score
matrix never in GM.

Work split: the output ``[*batch, Sq, Dv]`` is cut into query blocks of ``bq`` rows (one work
unit = one query block of one batch entry; units divided over the cube cores as
``asc-lower-cube`` divides output blocks). Per unit, in UB (f32): the running max ``m`` and sum
``l`` (one 16-element slot per row) and the accumulator ``O [bq, Dv]``; then for each key block
``j`` of ``bk`` keys (``kl`` = keys in the block, the last one a tail)::

    S   = Q_blk K_j^T                         asc.mmad: Cube, Q and K read from GM, S -> UB
    S   = S * scale (+ mask_j)                vector; mask_j copied in (cast to f32 in UB)
    m'  = max(m, rowmax S[:, :kl])            vector ReduceMax per row
    a   = exp(m - m');  P = exp(S - m')       vector
    l   = l * a + rowsum P[:, :kl];  O = O * a
    P  -> GM workspace (operand dtype)        one [bq, bk] block per core, copy-out
    O  += P V_j                               asc.mmad: Cube, P and V read from GM
    m   = m'

and finally ``O / l`` (causal attention: the key loop stops at the query block's first row
and one masked diagonal block follows, the units dealt to the cores by cost to balance them,
``pyasc_mlir.passes.attention_causal``); the fusion's
epilogue (a cast to f16, a residual, ...) runs on that tile and the result goes out through
the head-merge views (``asc-lower-cube``'s store). ``m`` starts
at ``-FLT_MAX``, not ``-inf``: ``m - m'`` is then never ``-inf - -inf``; a row whose scores are
all ``-inf`` keeps ``l = 0`` and gives ``0 / 0 = NaN``, as ``asc.flash_attention`` defines.

The P workspace (``cores x bq x bk`` elements of the operands' dtype) is an extra result of the
kernel's ``asc.launch`` (a GM tensor the host allocates, read by nothing else): the Cube unit
takes its A operand from GM, and that is how P reaches it from the vector unit (the AIV and AIC
cores of a 910B share no local memory). GM traffic per unit: ``Q_blk`` once, every K and V
block once (a grouped-query K/V head is addressed, not copied, for each of its query heads),
P out and back per key block, ``O`` once: no ``Sq x Skv`` buffer.

Block sizes: the first ``(bq, bk)`` of :data:`BLOCKS` (capped at ``Sq`` and ``Skv`` rounded up
to 16) whose buffers fit the platform's usable UB, counted as ``asc-buffer-alloc`` lays them
out (see :func:`choose`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import (
    Float32Type,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.ascendc_patterns import MANY_ROWS
from pyasc_mlir.passes.attention_causal import dealt_unit, diagonal_mask, key_ranges
from pyasc_mlir.passes.attention_groups import fold_group_rows
from pyasc_mlir.passes.buffer_alloc import live_ranges, pack
from pyasc_mlir.passes.common import install_kernel, kernel_name, loc_of
from pyasc_mlir.passes.cube_plan import CubePlan, tiling_values
from pyasc_mlir.passes.ir_builder import Index, IRBuilder
from pyasc_mlir.passes.iteration_space import element_type_of, shape_of
from pyasc_mlir.passes.kernel_builder import Layout, TileBuffer, TileState
from pyasc_mlir.passes.lower_cube import CubeKernelBuilder
from pyasc_mlir.passes.views import operand_view
from pyasc_mlir.passes.work_split import core_range
from pyasc_mlir.platform import (
    COUNT_ALIGN,
    CUBE_FRACTAL,
    DEFAULT_PLATFORM,
    LANE_ALIGN,
    UB_ALIGN_BYTES,
    Platform,
    ceil_div,
    get_platform,
    round_up,
)

BLOCKS = ((128, 128), (64, 128), (64, 64), (32, 128), (32, 64), (16, 64), (16, 32), (16, 16))
"""``(bq, bk)`` candidates, best first: the largest query block first (K and V are streamed
once per query block), then the longest key block (fewer Matmul calls)."""

NEG_MAX = -3.4028234663852886e38
"""``-FLT_MAX``, the running max's start value (IEEE 754 binary32's most negative finite)."""

STAT_SLOT = LANE_ALIGN
"""Elements per row of a per-row statistic (``m``, ``l``): one 16-element slot, where
``asc.vreduce "last"`` puts each row's result."""


def attention_of(fusion: asc.FusionOp) -> asc.FlashAttentionOp | None:
    """The fusion's ``asc.flash_attention``, if any."""
    for op in fusion.body.block.ops:
        if isinstance(op, asc.FlashAttentionOp):
            return op
    return None


def mask_source(fa: asc.FlashAttentionOp) -> tuple[SSAValue, Operation | None] | None:
    """``(GM value of the mask, the cast the kernel applies in UB)``; ``None`` without mask."""
    if fa.mask is None:
        return None
    cast = fa.mask.owner
    if isinstance(cast, asc.CastOp) and isinstance(cast.input, SSAValue):
        return cast.input, cast
    return fa.mask, None


@dataclass
class _Bufs:
    """The UB buffers of one query block (refs of ``asc.alloc`` results)."""

    s: SSAValue
    bc: SSAValue
    """Scratch ``[bq, max(bk, Dv)]``: row broadcasts, the mask in f32 and the ``P V``
    block take turns in it."""
    o: SSAValue
    m: SSAValue
    l: SSAValue  # noqa: E741
    mb: SSAValue
    mn: SSAValue
    alpha: SSAValue
    work: SSAValue
    p: SSAValue
    mask: SSAValue | None
    """Where the mask block is copied in (``p`` or ``bc`` when its dtype allows)."""
    mask32: SSAValue | None
    """Where it is cast to f32 (``bc`` for a mask per row; ``None``: no cast)."""


class AttentionKernelBuilder(CubeKernelBuilder):
    """The one-kernel flash attention of a fusion (see the module docstring); the epilogue
    and the store are ``asc-lower-cube``'s."""

    def __init__(self, fusion: asc.FusionOp, plan: CubePlan, name: str, block_kv: int):
        super().__init__(fusion, plan, name)
        fa = attention_of(fusion)
        assert fa is not None
        self.fa = fa
        self.bk = block_kv
        self.mask = mask_source(fa)
        self.ws: SSAValue | None = None
        self.bid: SSAValue | None = None
        self.o_alloc: asc.AllocOp | None = None
        self.diag: SSAValue | None = None
        self.bufs: _Bufs | None = None
        """The per-unit buffers when allocated once per kernel (causal), else ``None``."""
        """The causal diagonal block's additive mask (``attention_causal``), built per core."""
        self.work: SSAValue | None = None
        self.many = min(plan.tile, plan.rows) >= 8
        """Row max/sum and broadcasts over all rows at once (``WholeReduce*``, ``Brcb``; with
        fewer than 8 rows a unit's per-row calls issue fewer cycles)."""

    @property
    def dtype(self) -> Attribute:
        return element_type_of(self.fa.q)

    def ws_elems(self, cores: int) -> int:
        """Elements of the P workspace for ``cores`` cores."""
        return cores * self.plan.tile * self.bk

    # -- buffers ---------------------------------------------------------------------------
    def _buf(self, ix: IRBuilder, elems: int, dtype: Attribute) -> SSAValue:
        op = asc.AllocOp("tmp", round_up(elems, COUNT_ALIGN), dtype)
        ix.add(op)
        self.allocs.append((op, Layout(True, False, True)))
        return op.result

    def _bufs(self, ix: IRBuilder, o_ix: IRBuilder | None = None) -> _Bufs:
        """The buffers, all live across the key loop (allocated before it, so
        ``asc-buffer-alloc`` never overlaps them). ``bc`` and ``p`` are reused: UB bounds
        the query block, and a taller one streams K and V fewer times. ``o_ix`` (default
        ``ix``) allocates the accumulator, the result tile: it becomes a queue buffer of the
        copy-out, allocated and enqueued once per work unit."""
        bq, lk, ldv = self.plan.tile, self.bk, self.plan.l_slot
        f32 = Float32Type()
        b = [self._buf(ix, n, f32) for n in (bq * lk, bq * max(lk, ldv))]
        b.append(self._buf(o_ix or ix, bq * ldv, f32))
        o_alloc = b[2].owner
        assert isinstance(o_alloc, asc.AllocOp)
        self.o_alloc = o_alloc
        st = [self._buf(ix, bq * STAT_SLOT, f32) for _ in range(5)]
        work = self.work = self._buf(ix, max(lk, bq), f32)  # row broadcasts' packed stats
        p = b[0] if isinstance(self.dtype, Float32Type) else self._buf(ix, bq * lk, self.dtype)
        mask, mask32 = self._mask_bufs(ix, b[1], p)
        return _Bufs(b[0], b[1], b[2], st[0], st[1], st[2], st[3], st[4], work, p, mask, mask32)

    def _mask_bufs(
        self, ix: IRBuilder, bc: SSAValue, p: SSAValue
    ) -> tuple[SSAValue | None, SSAValue | None]:
        """(copy-in buffer, f32 buffer or ``None``) of the mask block. A mask varying along
        both rows and keys lands in ``bc`` (f32) or ``p`` (the operands' dtype; cast into
        ``bc``); a mask broadcast along either gets buffers of its own (one row, and/or one
        16-element slot per row), expanded into ``bc``."""
        if self.mask is None:
            return None, None
        mask_t = element_type_of(self.mask[0])
        f32 = isinstance(mask_t, Float32Type)
        rows, cols = self._mask_spans()
        if rows and cols:
            if f32:
                return bc, None
            if mask_t == self.dtype and p is not bc:
                return p, bc
            return self._buf(ix, self.plan.tile * self.bk, mask_t), bc
        n = (self.plan.tile if rows else 1) * (self.bk if cols else STAT_SLOT)
        raw = self._buf(ix, n, mask_t)
        return raw, None if f32 else self._buf(ix, n, Float32Type())

    def _mask_spans(self) -> tuple[bool, bool]:
        """Whether the mask varies along the query rows and along the keys (else it is
        broadcast along that axis)."""
        assert self.mask is not None
        ms = shape_of(self.mask[0])
        rows = len(ms) >= 2 and ms[-2] != 1
        return rows, bool(ms) and ms[-1] != 1

    # -- the kernel ------------------------------------------------------------------------
    def lower(self, t: TileState, op: Operation) -> None:
        if isinstance(op, asc.FlashAttentionOp):
            self._attention(t, op)
        else:
            super().lower(t, op)

    def lower_op(self, t: TileState, op: Operation) -> None:
        if self.mask is not None and op is self.mask[1]:
            return  # the mask's cast runs on each mask block (_mask)
        super().lower_op(t, op)

    def _attention(self, t: TileState, fa: asc.FlashAttentionOp) -> None:
        ix, plan = t.ix, self.plan
        bufs = self.bufs or self._bufs(ix)
        rows = t.n
        c16 = ix.count(rows, STAT_SLOT)
        co = ix.count(rows, plan.l_slot)
        ix.add(asc.VDupOp(bufs.m, NEG_MAX, c16))
        ix.add(asc.VDupOp(bufs.l, 0.0, c16))
        ix.add(asc.VDupOp(bufs.o, 0.0, co))
        skv = shape_of(fa.k)[-2]
        if fa.is_causal:
            extent, trips, diag_trips, diag_len = key_ranges(ix, t.first, rows, skv, self.bk)
            self._key_loop(t, ix, bufs, trips, lambda bx, j: self._blocked(bx, j, extent))
            self._key_loop(t, ix, bufs, diag_trips, lambda bx, j: (t.first, diag_len), True)
        else:
            self._key_loop(
                t, ix, bufs, ix.c(ceil_div(skv, self.bk)), lambda bx, j: self._blocked(bx, j, skv)
            )
        self._bcast(ix, bufs.bc, bufs.l, rows, plan.l_slot)
        ix.add(asc.VBinaryOp("div", bufs.o, bufs.o, bufs.bc, co))
        assert self.o_alloc is not None
        t.bufs[fa.result] = TileBuffer(bufs.o, plan.layout(fa.result), self.o_alloc)

    def _blocked(self, bx: IRBuilder, j: SSAValue, extent: Index) -> tuple[Index, Index]:
        """``(kv0, kl)`` of key block ``j`` of the keys ``[0, extent)``."""
        kv0 = bx.muli(j, self.bk)
        return kv0, bx.mini(self.bk, bx.subi(extent, kv0))

    def _key_loop(
        self,
        t: TileState,
        ix: IRBuilder,
        b: _Bufs,
        trips: SSAValue,
        keys: Callable[[IRBuilder, SSAValue], tuple[Index, Index]],
        diagonal: bool = False,
    ) -> None:
        """``scf.for`` over ``trips`` key blocks, ``keys(builder, j) = (kv0, kl)``."""
        body = Block(arg_types=[IndexType()])
        bx = IRBuilder(body, ix.loc)
        kv0, kl = keys(bx, body.args[0])
        self._key_block(t, bx, b, bx.value(kv0), bx.value(kl), diagonal)
        bx.add(scf.YieldOp())
        ix.add(scf.ForOp(ix.c(0), trips, ix.c(1), [], body))

    def _bcast(self, ix: IRBuilder, dst: SSAValue, stat: SSAValue, rows: Index, ls: int) -> None:
        """``dst[r, :ls] = stat[r * 16]`` (``many``: ``Brcb`` over all rows, packed in ``work``)."""
        sizes = [ix.value(rows), ix.c(1), ix.c(ls)]
        work = self.work if self.many else None
        ix.add(asc.VBroadcastOp(dst, stat, sizes, (True, False, False), work))

    def _key_block(
        self,
        t: TileState,
        bx: IRBuilder,
        b: _Bufs,
        kv0: SSAValue,
        kl: SSAValue,
        diagonal: bool,
    ) -> None:
        """One step of the online softmax over the keys ``[kv0, kv0 + kl)`` (``kl <= bk``);
        ``diagonal``: add the causal diagonal mask to the scores."""
        fa, plan, bk = self.fa, self.plan, self.bk
        rows, lk, ldv = t.n, self.bk, plan.l_slot
        cs = bx.count(rows, lk)
        c16 = bx.count(rows, STAT_SLOT)
        co = bx.count(rows, ldv)
        d = shape_of(fa.q)[-1]
        q_off, ldq, ta = self._matmul_operand(bx, fa.q, False, t.first, fa)
        k_off, ldk, kflip = self._matmul_operand(bx, fa.k, False, kv0, fa)
        self._cube(
            bx,
            b.s,
            fa.q,
            fa.k,
            [q_off, k_off, rows, kl, d, ldq, ldk, lk],
            ta,
            not kflip,
            (plan.tile, bk, d),
        )
        if fa.scale_value != 1.0:
            bx.add(asc.VScalarOp("muls", b.s, b.s, fa.scale_value, cs))
        if self.mask is not None:
            self._mask(t, bx, b, kv0, kl, cs)
        if diagonal:
            assert self.diag is not None
            bx.add(asc.VCastOp(b.bc, self.diag, cs, "none"))
            bx.add(asc.VBinaryOp("add", b.s, b.s, b.bc, cs))
        red = [bx.value(rows), bx.c(1), kl, bx.c(lk)]
        # MANY_ROWS partial results: in alpha (computed next) and m (l, alpha computed)
        bx.add(self._rows(asc.VReduceOp("max", "last", b.mb, b.s, b.alpha, red)))
        bx.add(asc.VBinaryOp("max", b.mn, b.m, b.mb, c16))
        bx.add(asc.VBinaryOp("sub", b.alpha, b.m, b.mn, c16))
        bx.add(asc.VUnaryOp("exp", b.alpha, b.alpha, c16))
        self._bcast(bx, b.bc, b.mn, rows, lk)
        bx.add(asc.VBinaryOp("sub", b.s, b.s, b.bc, cs))
        bx.add(asc.VUnaryOp("exp", b.s, b.s, cs))
        bx.add(self._rows(asc.VReduceOp("sum", "last", b.mb, b.s, b.m, red)))
        bx.add(asc.VBinaryOp("mul", b.l, b.l, b.alpha, c16))
        bx.add(asc.VBinaryOp("add", b.l, b.l, b.mb, c16))
        self._bcast(bx, b.bc, b.alpha, rows, ldv)
        bx.add(asc.VBinaryOp("mul", b.o, b.o, b.bc, co))
        if b.p is not b.s:
            bx.add(asc.VCastOp(b.p, b.s, cs, "rint"))
        assert self.ws is not None and self.bid is not None
        ws_off = bx.muli(self.bid, plan.tile * bk)
        self.copy(bx, asc.CopyOutOp, self.ws, b.p, [ws_off, 0, rows, kl, bx.subi(bk, kl), lk])
        v_off, ldvv, vflip = self._matmul_operand(bx, fa.v, False, kv0, fa)
        dv = shape_of(fa.v)[-1]
        self._cube(
            bx,
            b.bc,
            None,
            fa.v,
            [ws_off, v_off, rows, dv, kl, bk, ldvv, ldv],
            False,
            vflip,
            (plan.tile, dv, bk),
        )
        bx.add(asc.VBinaryOp("add", b.o, b.o, b.bc, co))
        bx.add(asc.VCopyOp(b.m, b.mn, c16))

    def _rows(self, op: asc.VReduceOp) -> asc.VReduceOp:
        """``op``, as ``WholeReduceSum/Max`` over all rows if ``many`` (``bq <= 128``)."""
        if self.many:
            op.attributes[MANY_ROWS] = UnitAttr()
        return op

    def _cube(
        self,
        ix: IRBuilder,
        dst: SSAValue,
        a: SSAValue | None,
        b: SSAValue,
        sizes: list[Index],
        ta: bool,
        tb: bool,
        maxima: tuple[int, int, int],
    ) -> None:
        a_gm = self.ws if a is None else self.gm_of[operand_view(a).root]
        assert a_gm is not None
        mm = asc.MmadOp(
            dst, a_gm, self.gm_of[operand_view(b).root], [ix.value(x) for x in sizes], ta, tb
        )
        for key, value in zip(("max_m", "max_n", "max_k"), maxima, strict=True):
            mm.attributes[key] = IntegerAttr(value, i64)
        ix.add(mm)

    def _mask(
        self, t: TileState, bx: IRBuilder, b: _Bufs, kv0: SSAValue, kl: SSAValue, cs: SSAValue
    ) -> None:
        """``S += mask[rows, kv0 : kv0 + kl]``: copied in, cast to f32, expanded over the
        rows and/or keys it is broadcast along."""
        assert self.mask is not None and b.mask is not None
        src = self.mask[0]
        plan, lk = self.plan, self.bk
        scores = (*plan.batch_shape, plan.rows, shape_of(self.fa.k)[-2])
        ms = shape_of(src)
        full = (1,) * (len(scores) - len(ms)) + ms
        rows, cols = self._mask_spans()
        off: Index = self._batch_offset(bx, full)
        if rows:
            off = bx.addi(off, bx.muli(t.first, full[-1]))
        if cols:
            off = bx.addi(off, kv0)
        n = t.n if rows else 1
        length: Index = kl if cols else 1
        slot = lk if cols else STAT_SLOT
        gap = bx.subi(full[-1], length)
        self.copy(bx, asc.CopyInOp, self.gm_of[src], b.mask, [off, 0, n, length, gap, slot])
        m32 = b.mask
        if b.mask32 is not None:
            bx.add(asc.VCastOp(b.mask32, b.mask, bx.count(n, slot), "none"))
            m32 = b.mask32
        if not (rows and cols):
            sizes = [bx.value(t.n), bx.c(1), bx.c(lk)]
            bx.add(asc.VBroadcastOp(b.bc, m32, sizes, (rows, False, cols)))
            m32 = b.bc
        bx.add(asc.VBinaryOp("add", b.s, b.s, m32, cs))

    def build(self) -> func.FuncOp:
        """The kernel: core range, then the loop over this core's query blocks."""
        plan = self.plan
        args, outs = self.kernel_io()
        gm_types = [
            asc.buffer_type(math.prod(shape_of(v)) or 1, element_type_of(v), "gm")
            for v in [*args, *outs]
        ]
        gm_types.append(asc.buffer_type(self.ws_elems(self.cores), self.dtype, "gm"))
        entry = Block(arg_types=gm_types)
        self.gm_of = dict(zip(args, entry.args[: len(args)], strict=True))
        self.ws = entry.args[-1]
        ix = IRBuilder(entry, self.loc)
        bounds = core_range(ix)
        self.bid = ix.add_value(asc.BlockIdxOp())
        read_by_kernel = {operand_view(x).root for x in (self.fa.q, self.fa.k, self.fa.v)}
        if self.mask is not None:
            read_by_kernel.add(self.mask[0])
        tile_args = [a for a in args if a not in read_by_kernel]
        self.pre = TileState(ix, 1, ix.c(0))
        body = Block(arg_types=[IndexType()])
        bx = IRBuilder(body, self.loc)
        if self.fa.is_causal:
            self.diag = diagonal_mask(ix, self._buf, plan.tile, self.bk)
            self.bufs = self._bufs(ix, bx)
        u = body.args[0]
        flat_b: Index = bx.divi(u, plan.m_tiles) if plan.batch > 1 else 0
        rest: Index = bx.remi(u, plan.m_tiles) if plan.batch > 1 else u
        if self.fa.is_causal and plan.m_tiles > 1:  # balance the cores' causal work
            flat_b, rest = dealt_unit(bx, bx.subi(u, bounds[0]), self.bid, plan.batch, plan.m_tiles)
        m0 = bx.muli(rest, plan.tile)
        self.coords = []
        inner = 1
        for dim in reversed(plan.batch_shape):
            self.coords.insert(0, bx.remi(bx.divi(flat_b, inner), dim))
            inner *= dim
        t = TileState(bx, bx.mini(plan.tile, bx.subi(plan.rows, m0)), m0, 0, plan.cols)
        for a in tile_args:
            t.bufs[a] = self.load(t, a, self.gm_of[a], "in")
        return self.finish(t, outs, entry, len(args), bounds, body)

    cores = 1
    """Cube cores the kernel is launched on (set before :meth:`build`)."""


def check_fusion(fusion: asc.FusionOp, fa: asc.FlashAttentionOp) -> None:
    """Raise a located ``PyAscCompileError`` for what the kernel cannot read in place."""
    args = set(fusion.body.block.args)
    for name, v in (("q", fa.q), ("k", fa.k), ("v", fa.v)):
        if operand_view(v).root not in args:
            raise PyAscCompileError(
                f"the {name} operand of the fused attention is computed in the same kernel; "
                "the Cube unit reads it from GM",
                loc_of(fa),
                "run asc-fuse first (it puts attention in a kernel of its own)",
            )
    src = mask_source(fa)
    if src is not None:
        ms = shape_of(src[0])
        skv = shape_of(fa.k)[-2]
        if src[0] not in args:
            raise PyAscCompileError(
                f"the attention mask of shape {list(ms)} is computed in the same kernel; the "
                f"kernel copies it in from GM ({skv} keys)",
                loc_of(fa),
                "run asc-fuse first (it puts attention in a kernel of its own)",
            )
    for op in fusion.body.block.ops:
        if isinstance(op, asc.MatmulOp | asc.ReduceOp):
            raise PyAscCompileError(
                f"{op.name} cannot share a kernel with fused attention",
                loc_of(op),
                "run asc-fuse first (it splits kernels there)",
            )


def ub_total(kernel: func.FuncOp, buffers: int) -> int:
    """UB bytes ``kernel`` needs as ``asc-buffer-alloc`` lays it out with ``buffers`` copies
    of each queue buffer (the Matmul result reserve counted)."""
    from pyasc_mlir.cube_tiling import dst_reserve_bytes

    allocs = [o for o in kernel.walk() if isinstance(o, asc.AllocOp)]
    fixed = 0
    sizes: dict[asc.AllocOp, int] = {}
    for a in allocs:
        n = round_up(dst_reserve_bytes(a), UB_ALIGN_BYTES)
        if a.role.data in ("in", "out"):
            fixed += n * buffers
        elif a.role.data == "const":
            fixed += n
        else:
            sizes[a] = n
    return fixed + pack(sizes, live_ranges(list(sizes)))[1]


def _builder(
    fusion: asc.FusionOp, fa: asc.FlashAttentionOp, name: str, bq: int, bk: int, cores: int
) -> AttentionKernelBuilder:
    plan = CubePlan(shape_of(fa.result), tile=bq, tile_n=shape_of(fa.result)[-1])
    b = AttentionKernelBuilder(fusion, plan, name, bk)
    b.cores = max(1, min(cores, plan.units))
    return b


def choose(
    fusion: asc.FusionOp, fa: asc.FlashAttentionOp, name: str, plat: Platform, buffers: int
) -> tuple[int, int, int]:
    """``(bq, bk, buffers)``: the first :data:`BLOCKS` candidate (capped at ``Sq``/``Skv``
    rounded up to 16, ``bk`` at most ``fa.block_kv`` rounded up to 16; causal: ``bq <= bk``,
    the diagonal block of ``bq`` keys is one key block) whose kernel fits the
    usable UB with ``buffers`` queue copies, else with 1.

    Raises:
        PyAscCompileError: no candidate fits (located at the attention op)."""
    sq, skv = shape_of(fa.q)[-2], shape_of(fa.k)[-2]
    q_cap, k_cap = round_up(sq, CUBE_FRACTAL), round_up(min(skv, fa.block_kv.data), LANE_ALIGN)
    seen: list[tuple[int, int]] = []
    for bq0, bk0 in BLOCKS:
        bk = min(bk0, k_cap)
        pair = (min(bq0, q_cap, bk) if fa.is_causal else min(bq0, q_cap), bk)
        if pair not in seen:
            seen.append(pair)
    for n_buf in dict.fromkeys((buffers, 1)):
        for bq, bk in seen:
            kernel = _builder(fusion, fa, name, bq, bk, plat.cube_cores).build()
            if ub_total(kernel, n_buf) <= plat.ub_usable_bytes:
                return bq, bk, n_buf
    raise PyAscCompileError(
        f"the fused attention (head dim {shape_of(fa.q)[-1]}, value dim "
        f"{shape_of(fa.v)[-1]}) does not fit UB even with 16 x 16 blocks",
        loc_of(fa),
        "use a smaller head dimension",
    )


@dataclass(frozen=True)
class AscLowerAttentionPass(ModulePass):
    """Lower every ``asc.fusion`` holding an ``asc.flash_attention`` to one MIX kernel and an
    ``asc.launch`` of it (its last result: the P workspace). Options: ``platform``,
    ``buffers`` (queue copies assumed when sizing blocks), ``block_dim`` (cube cores, 0 =
    all, capped at the work units).

    Raises:
        PyAscCompileError: the fusion holds what the kernel cannot compute (located)."""

    name = "asc-lower-attention"
    platform: str = DEFAULT_PLATFORM
    buffers: int = 2
    block_dim: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plat = get_platform(self.platform)
        for fusion in [o for o in op.walk() if isinstance(o, asc.FusionOp)]:
            fa = attention_of(fusion)
            if fa is None:
                continue
            if not 0 <= self.block_dim <= plat.cube_cores:  # only an attention kernel's pin
                raise PyAscCompileError(
                    f"block_dim={self.block_dim} is out of range: platform {plat.name} has "
                    f"{plat.cube_cores} cube cores (this operator has a fused attention kernel)",
                    loc_of(fa),
                    f"pin a block_dim from 1 to {plat.cube_cores}, or 0 for the automatic choice",
                )
            src = mask_source(fa)
            fa = fold_group_rows(fa, None if src is None else src[0]) or fa
            check_fusion(fusion, fa)
            name = kernel_name(op, fusion)
            bq, bk, buffers = choose(fusion, fa, name, plat, self.buffers)
            builder = _builder(fusion, fa, name, bq, bk, self.block_dim or plat.cube_cores)
            kernel = builder.build()
            values = tiling_values(builder.plan, builder.cores, shape_of(fa.q)[-1])
            values["block_kv"] = bk
            ws = TensorType(builder.dtype, (builder.ws_elems(builder.cores),))
            install_kernel(
                op,
                fusion,
                kernel,
                values,
                plat.name,
                buffers if buffers < self.buffers else None,
                extra_results=[ws],
            )
