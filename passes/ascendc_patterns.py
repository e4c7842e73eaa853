"""``convert-asc-to-ascendc``, part 2: one rewrite pattern per tile-level compute op.

Part 1 (``convert_to_ascendc``) rebuilds each kernel with its buffers, queues, copies, loops
and matmuls in ``ascendc`` form and copies every other op with its operands remapped to the
new ``LocalTensor`` values. These patterns then replace the copied ``asc`` compute ops in
place, each by the Ascend C call(s) it stands for, so the op order is the kernel's:

* ``asc.block_idx`` -> ``GetBlockIdx()``, ``asc.tiling_field`` -> ``tiling.FIELD``;
* ``asc.vbinary``/``vunary``/``vscalar``/``vcast``/``vcompare``/``vselect``/``vcopy`` -> the
  one vector call of the same kind (``Add``, ``Exp``, ``Adds``, ``Cast``, ``Compare``,
  ``Select``, ``DataCopy``); ``asc.vdup`` -> a scalar constant and ``Duplicate``;
* ``asc.vreduce`` over the last axis -> one ``ReduceSum/Max/Min`` per row (results
  ``LANE_ALIGN`` elements apart), or, marked :data:`MANY_ROWS`, ``WholeReduceSum/Max`` calls
  over all rows at once; over the middle axis -> a loop of UB->UB ``DataCopy`` and
  ``Add/Max/Min``; ``asc.vbroadcast`` -> ``WholeReduceMax`` + ``Brcb`` (per-row scalars, with
  a ``work`` buffer), a loop of ``DataCopy`` rows, or of ``GetValue`` +
  ``Duplicate`` (after a V->S sync) when the source has no ``L`` extent.
"""

from __future__ import annotations

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, FloatAttr, IntegerAttr
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from pyasc_mlir.dialects import asc
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects.asc_attrs import element_bits
from pyasc_mlir.passes.ir_builder import Index, IRBuilder
from pyasc_mlir.platform import (
    DATA_BLOCK_BYTES,
    LANE_ALIGN,
    MAX_BLOCK_STRIDE,
    VECTOR_REPEAT_BYTES,
)


def const_value(v: SSAValue) -> int | None:
    """The value of an ``index`` constant, else ``None``."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


class AscendcBuilder(IRBuilder):
    """The IR builder of the conversion: nothing folded, plus ``LocalTensor`` subviews."""

    def view(self, t: SSAValue, offset: Index) -> SSAValue:
        """``t[offset]`` (``t`` itself at offset 0)."""
        if isinstance(offset, int):
            if offset == 0:
                return t
            offset = self.c(offset)
        elif const_value(offset) == 0:
            return t
        return self.add_value(ac.SubviewOp(t, offset))


def _at(op: Operation, rewriter: PatternRewriter) -> AscendcBuilder:
    return AscendcBuilder.before(op, rewriter, fold=False)


def _replace(op: Operation, rewriter: PatternRewriter, new: Operation) -> None:
    """Replace ``op`` by ``new`` (which takes over ``op``'s location and uses; its results stay
    unnamed, as every value the conversion creates)."""
    _at(op, rewriter).add(new)
    rewriter.replace(op, [], new.results)
    for r in new.results:
        r.name_hint = None


class BlockIdxPattern(RewritePattern):
    """``asc.block_idx`` -> ``GetBlockIdx()``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.BlockIdxOp, rewriter: PatternRewriter) -> None:
        _replace(op, rewriter, ac.GetBlockIdxOp())


class TilingFieldPattern(RewritePattern):
    """``asc.tiling_field`` -> ``tiling.FIELD``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.TilingFieldOp, rewriter: PatternRewriter) -> None:
        _replace(op, rewriter, ac.TilingFieldOp(op.field.data))


class VBinaryPattern(RewritePattern):
    """``asc.vbinary`` -> ``Add``/``Sub``/``Mul``/... on LocalTensors."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.VBinaryOp, rewriter: PatternRewriter) -> None:
        _replace(
            op,
            rewriter,
            ac.VecBinaryOp(ac.VEC_BINARY[op.kind.data], op.dst, op.lhs, op.rhs, op.count),
        )


class VUnaryPattern(RewritePattern):
    """``asc.vunary`` -> ``Exp``/``Abs``/... on LocalTensors."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.VUnaryOp, rewriter: PatternRewriter) -> None:
        _replace(op, rewriter, ac.VecUnaryOp(ac.VEC_UNARY[op.kind.data], op.dst, op.src, op.count))


class VScalarPattern(RewritePattern):
    """``asc.vscalar`` -> ``Adds``/``Muls``/``Maxs``/``Mins``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.VScalarOp, rewriter: PatternRewriter) -> None:
        _replace(
            op,
            rewriter,
            ac.VecScalarOp(
                ac.VEC_SCALAR[op.kind.data], op.dst, op.src, op.scalar.value.data, op.count
            ),
        )


class VDupPattern(RewritePattern):
    """``asc.vdup`` -> a scalar constant and ``Duplicate``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.VDupOp, rewriter: PatternRewriter) -> None:
        dtype = ac.elem(op.dst.type)
        assert isinstance(dtype, Float16Type | BFloat16Type | Float32Type)
        out = _at(op, rewriter)
        v = out.add_value(arith.ConstantOp(FloatAttr(op.value.value.data, dtype)))
        out.add(ac.DuplicateOp(op.dst, v, op.count))
        rewriter.erase(op)


class VIndexPattern(RewritePattern):
    """``asc.vindex`` -> a scalar constant and ``CreateVecIndex``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.VIndexOp, rewriter: PatternRewriter) -> None:
        dtype = ac.elem(op.dst.type)
        assert isinstance(dtype, Float16Type | Float32Type)
        out = _at(op, rewriter)
        v = out.add_value(arith.ConstantOp(FloatAttr(op.first.value.data, dtype)))
        out.add(ac.CreateVecIndexOp(op.dst, v, op.count))
        rewriter.erase(op)


class VCopyPattern(RewritePattern):
    """``asc.vcopy`` -> UB->UB ``DataCopy``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.VCopyOp, rewriter: PatternRewriter) -> None:
        _replace(op, rewriter, ac.DataCopyOp(op.dst, op.src, op.count))


class VCastPattern(RewritePattern):
    """``asc.vcast`` -> ``Cast`` with its rounding mode."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.VCastOp, rewriter: PatternRewriter) -> None:
        _replace(op, rewriter, ac.CastOp(ac.ROUND[op.round.data], op.dst, op.src, op.count))


class VComparePattern(RewritePattern):
    """``asc.vcompare`` -> ``Compare`` into a bit mask."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.VCompareOp, rewriter: PatternRewriter) -> None:
        _replace(
            op, rewriter, ac.CompareOp(ac.CMP[op.predicate.data], op.mask, op.lhs, op.rhs, op.count)
        )


class VSelectPattern(RewritePattern):
    """``asc.vselect`` -> ``Select`` by a bit mask."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.VSelectOp, rewriter: PatternRewriter) -> None:
        _replace(op, rewriter, ac.SelectOp(op.dst, op.mask, op.lhs, op.rhs, op.count))


class VReducePattern(RewritePattern):
    """``asc.vreduce`` -> per-row ``Reduce*`` calls or a loop of ``Add/Max/Min``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.VReduceOp, rewriter: PatternRewriter) -> None:
        out = _at(op, rewriter)
        dst, src, work = op.dst, op.src, op.work
        kind = op.kind.data
        if op.axis.data == "last" and MANY_ROWS in op.attributes and kind in ac.WHOLE_REDUCE:
            _whole_reduce(op, out)
            rewriter.erase(op)
            return
        if op.axis.data == "last":
            total = out.muli(op.rows, op.m)

            def row(o: AscendcBuilder, i: SSAValue) -> None:
                d = o.view(dst, o.muli(i, LANE_ALIGN))
                s = o.view(src, o.muli(i, op.ls))
                o.add(ac.ReduceOp(ac.REDUCE[kind], d, s, work, op.length))

            out.loop(total, row)
            rewriter.erase(op)
            return
        api = {"sum": "Add", "max": "Max", "min": "Min"}[kind]

        def outer(o: AscendcBuilder, r: SSAValue) -> None:
            d = o.view(dst, o.muli(r, op.ls))
            base = o.muli(r, op.m)
            o.add(ac.DataCopyOp(d, o.view(src, o.muli(base, op.ls)), op.ls))

            def inner(o2: AscendcBuilder, j: SSAValue) -> None:
                idx = o2.addi(base, j)
                s = o2.view(src, o2.muli(idx, op.ls))
                o2.add(ac.VecBinaryOp(api, d, d, s, op.ls))

            o.loop(op.m, inner, lower=1)

        out.loop(op.rows, outer)
        rewriter.erase(op)


MANY_ROWS = "many_rows"
"""Unit attribute of an ``asc.vreduce "last"`` (sum or max) whose row count ``rows * m`` is
at most 255, whose ``ls`` is a constant of at most 255 DataBlocks and whose ``work`` holds
``rows * m * LANE_ALIGN`` elements: it lowers to ``WholeReduceSum/Max`` calls over all rows at
once (:func:`_whole_reduce`)."""


def _whole_reduce(op: asc.VReduceOp, out: AscendcBuilder) -> None:
    """``dst[i * 16] = reduce(src[i*ls : i*ls + length])`` for every row ``i < rows * m``: one
    ``WholeReduceSum/Max`` per 256-byte chunk of the rows (all rows in one call, results 16
    apart), chunks after the first into ``work`` and combined into ``dst`` by ``Add``/``Max``.
    The same values, bit for bit, as one count-form ``ReduceSum/Max`` per row: that is a
    pairwise tree per 256-byte repeat (the last one zero-padded: a masked lane is ``+0``) and
    the repeats' results combined left to right."""
    dst, src, work = op.dst, op.src, op.work
    kind = op.kind.data
    size = element_bits(ac.elem(src.type)) // 8
    lanes = VECTOR_REPEAT_BYTES // size
    ls = const_value(op.ls)
    assert ls is not None and ls * size % DATA_BLOCK_BYTES == 0
    strides = (LANE_ALIGN, 1, ls * size // DATA_BLOCK_BYTES)
    api = ac.WHOLE_REDUCE[kind]
    rows = out.muli(op.rows, op.m)
    out.add(ac.WholeReduceOp(api, dst, src, out.mini(op.length, lanes), rows, strides))

    def chunk(o: AscendcBuilder, c: SSAValue) -> None:
        c0 = o.muli(c, lanes)
        mask = o.mini(lanes, o.subi(op.length, c0))
        o.add(ac.WholeReduceOp(api, work, o.view(src, c0), mask, rows, strides))
        combine = {"sum": "Add", "max": "Max"}[kind]
        o.add(ac.VecBinaryOp(combine, dst, dst, work, o.muli(rows, LANE_ALIGN)))

    out.loop(out.divi(out.addi(op.length, lanes - 1), lanes), chunk, lower=1)


def _brcb_rows(op: asc.VBroadcastOp, out: AscendcBuilder) -> bool:
    """Per-row scalars (``src[r * 16]``) over ``[rows, ls]`` with ``work`` (the op's doc):
    ``WholeReduceMax`` of one lane per row packs them into ``work[r]`` (the value itself,
    NaN and signed zeros kept), then one ``Brcb`` per DataBlock ``b`` of a row fills block
    ``b`` of 8 rows per repeat. ``False`` (nothing emitted) when the shape does not allow it."""
    assert op.work is not None
    size = element_bits(ac.elem(op.src.type)) // 8
    per_block = DATA_BLOCK_BYTES // size
    ls = const_value(op.ls)
    if const_value(op.m) != 1 or ls is None or ls % per_block:
        return False
    if ls // per_block * 8 > MAX_BLOCK_STRIDE:  # Brcb's dstRepStride (uint16)
        return False
    blocks = ls // per_block
    slot = (LANE_ALIGN * size // DATA_BLOCK_BYTES,)
    out.add(ac.WholeReduceOp("WholeReduceMax", op.work, op.src, out.c(1), op.rows, (1, 1, *slot)))
    reps = out.divi(out.addi(op.rows, 7), 8)
    for b in range(blocks):
        out.add(ac.BrcbOp(out.view(op.dst, b * per_block), op.work, reps, (blocks, 8 * blocks)))
    return True


class VBroadcastPattern(RewritePattern):
    """``asc.vbroadcast`` -> a loop of row copies or ``GetValue`` + ``Duplicate``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.VBroadcastOp, rewriter: PatternRewriter) -> None:
        out = _at(op, rewriter)
        dst, src = op.dst, op.src
        has_rows, has_m, has_l = op.src_has
        if op.work is not None and op.src_has == (True, False, False) and _brcb_rows(op, out):
            rewriter.erase(op)
            return
        total = out.muli(op.rows, op.m)
        if not has_l:
            out.add(ac.SyncOp("V_S"))

        def row(o: AscendcBuilder, i: SSAValue) -> None:
            r = o.divi(i, op.m)
            j = o.remi(i, op.m)
            si: SSAValue | int = 0
            if has_rows:
                si = o.muli(r, op.m) if has_m else r
            if has_m:
                si = o.addi(si, j)
            d = o.view(dst, o.muli(i, op.ls))
            if has_l:
                s = o.view(src, o.muli(si, op.ls))
                o.add(ac.DataCopyOp(d, s, op.ls))
            else:
                idx = o.muli(si, LANE_ALIGN) if not isinstance(si, int) else o.c(si * LANE_ALIGN)
                v = o.add_value(ac.GetValueOp(src, idx))
                o.add(ac.DuplicateOp(d, v, op.ls))

        out.loop(total, row)
        rewriter.erase(op)


PATTERNS: tuple[type[RewritePattern], ...] = (
    BlockIdxPattern,
    TilingFieldPattern,
    VBinaryPattern,
    VUnaryPattern,
    VScalarPattern,
    VDupPattern,
    VIndexPattern,
    VCopyPattern,
    VCastPattern,
    VComparePattern,
    VSelectPattern,
    VReducePattern,
    VBroadcastPattern,
)
"""Every compute-op pattern of the conversion."""


def rewrite_compute_ops(kernel: func.FuncOp) -> None:
    """Replace the ``asc`` compute ops inside ``kernel`` by their Ascend C calls (no dead-code
    elimination: every op the kernel builder made is kept)."""
    applier = GreedyRewritePatternApplier([p() for p in PATTERNS], dce_enabled=False)
    PatternRewriteWalker(applier).rewrite_region(kernel.body)
