"""``asc-decompose``: expand composite tensor ops into asc primitives.

* ``sigmoid(x) = 1 / (1 + exp(-x))``; ``tanh(x) = 2 * sigmoid(2x) - 1``.
* ``erf(x)``: Abramowitz & Stegun, Handbook of Mathematical Functions, formula 7.1.26
  (|error| <= 1.5e-7): ``t = 1/(1 + p|x|)``,
  ``erf(|x|) = 1 - (a1 t + a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5) exp(-x^2)``, odd in x.
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

from pyasc_mlir.dialects import asc
from pyasc_mlir.passes.common import OpInserter

ERF_P = 0.3275911
ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _sigmoid(b: OpInserter, x: SSAValue) -> SSAValue:
    e = b.unary("exp", b.unary("neg", x))
    return b.unary("reciprocal", b.binary_const("add", e, 1.0))


def _tanh(b: OpInserter, x: SSAValue) -> SSAValue:
    s = _sigmoid(b, b.binary_const("mul", x, 2.0))
    return b.binary_const("sub", b.binary_const("mul", s, 2.0), 1.0)


def _erf(b: OpInserter, x: SSAValue) -> SSAValue:
    ax = b.unary("abs", x)
    t = b.unary("reciprocal", b.binary_const("add", b.binary_const("mul", ax, ERF_P), 1.0))
    poly = b.const(ERF_A[4], x)
    for coeff in reversed(ERF_A[:4]):
        poly = b.binary_const("add", b.binary("mul", poly, t), coeff)
    poly = b.binary("mul", poly, t)
    g = b.unary("exp", b.unary("neg", b.binary("mul", x, x)))
    y = b.binary("sub", b.const(1.0, x), b.binary("mul", poly, g))
    neg = b.add(asc.CompareOp("lt", x, b.const(0.0, x)))
    return b.add(asc.SelectOp(neg, b.unary("neg", y), y))


COMPOSITES = {"sigmoid": _sigmoid, "tanh": _tanh, "erf": _erf}


class ExpandUnary(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.UnaryOp, rewriter: PatternRewriter) -> None:
        expand = COMPOSITES.get(op.kind.data)
        if expand is None:
            return
        result = expand(OpInserter(op, rewriter), op.input)
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
    """Expand composite asc ops (sigmoid, tanh, erf, mean, var, keepdim=false reductions)."""

    name = "asc-decompose"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([ExpandUnary(), ExpandReduce(),
                                                          ExpandMaskBroadcast()]),
                             apply_recursively=True).rewrite_module(op)
