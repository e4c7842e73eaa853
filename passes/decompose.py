"""``asc-decompose``: expand composite tensor ops into asc primitives.

* A composite unary op (``sigmoid``, ``tanh``, ``erf``, ...): the ``decompose`` function of its
  record in the op table (``pyasc_mlir.dialects.opset``), which documents each formula.
* ``mean = sum * (1/n)``; ``var = sum((x - mean)^2) * 1/(n - correction)`` — two passes over the
  data, never ``E[x^2] - E[x]^2`` (that goes negative and makes ``rsqrt`` NaN).
* ``reduce(keepdim=false)`` = ``reduce(keepdim=true)`` + ``asc.reshape`` dropping the axes.
* ``broadcast`` of a mask = ``broadcast`` of ``select(mask, 1.0, 0.0)``, then ``!= 0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, IntegerType, ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from pyasc_mlir.dialects import asc, opset
from pyasc_mlir.passes.common import OpInserter


class _Builder(OpInserter):
    """The :class:`pyasc_mlir.dialects.opset.Builder` the op table's decompositions use."""

    def compare(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(asc.CompareOp(predicate, a, b))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(asc.SelectOp(cond, a, b))


class ExpandUnary(RewritePattern):
    """A composite unary op becomes its op-table record's decomposition."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.UnaryOp, rewriter: PatternRewriter) -> None:
        record = opset.UNARY.get(op.kind.data)
        if record is None or record.decompose is None:
            return
        result = record.decompose(_Builder(op, rewriter), op.input)
        rewriter.replace(op, [], [result])


def _reduced_count(op: asc.ReduceOp) -> int:
    t = op.input.type
    assert isinstance(t, TensorType)
    return math.prod(t.get_shape()[a] for a in op.axis_list)


class ExpandReduce(RewritePattern):
    """mean/var to sum-based primitives; keepdim=false to keepdim=true + reshape."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.ReduceOp, rewriter: PatternRewriter) -> None:
        b = OpInserter(op, rewriter)
        kind, axes = op.kind.data, op.axis_list
        if kind in ("mean", "var"):
            n = _reduced_count(op)
            x = op.input
            mean = b.binary_const("mul", b.add(asc.ReduceOp("sum", x, axes, True)), 1.0 / n)
            if kind == "mean":
                kept = mean
            else:
                assert op.correction is not None
                denom = n - op.correction.data
                d = b.binary("sub", x, b.add(asc.BroadcastOp(mean, x.type.get_shape())))
                sq = b.add(asc.ReduceOp("sum", b.binary("mul", d, d), axes, True))
                kept = b.binary_const("mul", sq, 1.0 / denom if denom > 0 else math.nan)
        elif not op.keeps_dims:
            kept = b.add(asc.ReduceOp(kind, op.input, axes, True))
        else:
            return
        result = kept
        if not op.keeps_dims:
            out_t = op.result.type
            assert isinstance(out_t, TensorType)
            result = b.add(asc.ReshapeOp(kept, out_t.get_shape()))
        rewriter.replace(op, [], [result])


class ExpandMaskBroadcast(RewritePattern):
    """A broadcast of a mask (i1) becomes ``select(mask, 1, 0)`` (f32), the broadcast of that,
    and ``!= 0``: masks are bit-packed in UB, so kernels broadcast float values, never bits."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.BroadcastOp, rewriter: PatternRewriter) -> None:
        t = op.input.type
        assert isinstance(t, TensorType)
        if not (isinstance(t.element_type, IntegerType) and t.element_type.width.data == 1):
            return
        b = OpInserter(op, rewriter)
        f32 = TensorType(Float32Type(), t.get_shape())
        ones = b.add(asc.ConstantOp(1.0, f32))
        flt = b.add(asc.SelectOp(op.input, ones, b.add(asc.ConstantOp(0.0, f32))))
        out_t = op.result.type
        assert isinstance(out_t, TensorType)
        wide = b.add(asc.BroadcastOp(flt, out_t.get_shape()))
        rewriter.replace(op, [], [b.add(asc.CompareOp("ne", wide, b.const(0.0, wide)))])


@dataclass(frozen=True)
class AscDecomposePass(ModulePass):
    """Expand composite asc ops (the op table's composite unary kinds, mean, var,
    keepdim=false reductions)."""

    name = "asc-decompose"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([ExpandUnary(), ExpandReduce(), ExpandMaskBroadcast()]),
            apply_recursively=True,
        ).rewrite_module(op)
