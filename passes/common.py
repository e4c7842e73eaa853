"""Helpers shared by the ``asc`` passes: source locations and tensor-op builders."""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import SourceLoc


def loc_of(op: Operation) -> SourceLoc | None:
    """The user source location an op was built from (``asc.loc`` attribute), if any."""
    attr = op.attributes.get(asc.LOC_ATTR)
    return SourceLoc.parse(attr.data) if isinstance(attr, StringAttr) else None


class OpInserter:
    """Inserts new ops before ``anchor`` and copies its ``asc.loc`` onto each of them."""

    def __init__(self, anchor: Operation, rewriter: PatternRewriter | None = None):
        self.anchor = anchor
        self.rewriter = rewriter
        self.loc = anchor.attributes.get(asc.LOC_ATTR)

    def add(self, op: Operation) -> SSAValue:
        if self.loc is not None:
            op.attributes[asc.LOC_ATTR] = self.loc
        if self.rewriter is not None:
            self.rewriter.insert(op, InsertPoint.before(self.anchor))
        else:
            Rewriter.insert_op(op, InsertPoint.before(self.anchor))
        return op.results[0]

    def const(self, value: float, like: SSAValue) -> SSAValue:
        t = like.type
        assert isinstance(t, TensorType)
        return self.add(asc.ConstantOp(value, t))

    def unary(self, kind: str, x: SSAValue) -> SSAValue:
        return self.add(asc.UnaryOp(kind, x))

    def binary(self, kind: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.add(asc.BinaryOp(kind, a, b))

    def binary_const(self, kind: str, a: SSAValue, value: float) -> SSAValue:
        return self.binary(kind, a, self.const(value, a))
