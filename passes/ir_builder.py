"""The IR builder the lowering passes share: appends ops to a block, index arithmetic included.

Every op added is stamped with the builder's source location (the ``asc.loc`` attribute), so
the ops a lowering creates point at the user's line. Index operands may be Python ``int``\\ s;
they become ``arith.constant : index`` ops. With ``fold=True`` (the tile-level lowerings)
constants are created once per builder and arithmetic on constants, ``x * 1``, ``x * 0`` and
``x + 0`` fold away; with ``fold=False`` (``convert-asc-to-ascendc``) every operation is
materialised as written.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter

from pyasc_mlir.dialects import asc
from pyasc_mlir.platform import COUNT_ALIGN

Index = SSAValue | int
"""An index operand: an SSA value of type ``index`` or a Python int (a constant)."""

_FOLD: dict[type[Operation], Callable[[int, int], int]] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.MuliOp: lambda a, b: a * b,
    arith.SubiOp: lambda a, b: a - b,
    arith.DivSIOp: lambda a, b: a // max(b, 1),
    arith.RemSIOp: lambda a, b: a % max(b, 1),
}


class IRBuilder:
    """Appends ops to the end of ``block``, each carrying source location ``loc``; or, with an
    ``anchor`` op (:meth:`before`), inserts them before it (through ``rewriter`` if given)."""

    def __init__(
        self,
        block: Block,
        loc: Attribute | None,
        *,
        fold: bool = True,
        anchor: Operation | None = None,
        rewriter: PatternRewriter | None = None,
    ):
        self.block = block
        self.loc = loc
        self.fold = fold
        self.anchor = anchor
        self.rewriter = rewriter
        self.consts: dict[int, SSAValue] = {}

    @classmethod
    def before(cls, op: Operation, rewriter: PatternRewriter, *, fold: bool = True) -> IRBuilder:
        """A builder inserting before ``op`` (with ``op``'s location) through ``rewriter``."""
        block = op.parent_block()
        assert block is not None
        return cls(block, op.attributes.get(asc.LOC_ATTR), fold=fold, anchor=op, rewriter=rewriter)

    def add(self, op: Operation) -> SSAValue | None:
        """Add ``op`` (stamped with the location); its first result, if any."""
        if self.loc is not None:
            op.attributes[asc.LOC_ATTR] = self.loc
        if self.anchor is None:
            self.block.add_op(op)
        elif self.rewriter is not None:
            self.rewriter.insert(op, InsertPoint.before(self.anchor))
        else:
            Rewriter.insert_op(op, InsertPoint.before(self.anchor))
        return op.results[0] if op.results else None

    def at(self, loc: Attribute | None) -> IRBuilder:
        """A builder adding to the same place with location ``loc`` (this one if ``loc`` is
        ``None`` or the same; a new one starts without reusable constants)."""
        if loc is None or loc == self.loc:
            return self
        return type(self)(
            self.block, loc, fold=self.fold, anchor=self.anchor, rewriter=self.rewriter
        )

    def c(self, value: int) -> SSAValue:
        """An ``index`` constant (created once per builder when folding)."""
        if not self.fold:
            return self.add(arith.ConstantOp(IntegerAttr(value, IndexType())))  # type: ignore
        if value not in self.consts:
            self.consts[value] = self.add(  # type: ignore[assignment]
                arith.ConstantOp(IntegerAttr(value, IndexType()))
            )
        return self.consts[value]

    def value(self, x: Index) -> SSAValue:
        """``x`` as an SSA value (ints become constants)."""
        return self.c(x) if isinstance(x, int) else x

    def bin(self, cls: type[Operation], a: Index, b: Index) -> SSAValue:
        """``cls(a, b)`` for an ``arith`` integer op (folded when both are ints, see above)."""
        if self.fold:
            if isinstance(a, int) and isinstance(b, int):
                return self.c(_FOLD[cls](a, b))
            if cls is arith.MuliOp and (a == 1 or b == 1):
                return self.value(b if a == 1 else a)
            if cls in (arith.AddiOp, arith.SubiOp) and b == 0:
                return self.value(a)
            if cls is arith.MuliOp and (a == 0 or b == 0):
                return self.c(0)
        return self.add(cls(self.value(a), self.value(b)))  # type: ignore[call-arg,return-value]

    def addi(self, a: Index, b: Index) -> SSAValue:
        """``a + b``."""
        return self.bin(arith.AddiOp, a, b)

    def muli(self, a: Index, b: Index) -> SSAValue:
        """``a * b``."""
        return self.bin(arith.MuliOp, a, b)

    def subi(self, a: Index, b: Index) -> SSAValue:
        """``a - b``."""
        return self.bin(arith.SubiOp, a, b)

    def divi(self, a: Index, b: Index) -> SSAValue:
        """``a // b`` (signed)."""
        return self.bin(arith.DivSIOp, a, b)

    def remi(self, a: Index, b: Index) -> SSAValue:
        """``a % b`` (signed)."""
        return self.bin(arith.RemSIOp, a, b)

    def mini(self, a: Index, b: Index) -> SSAValue:
        """``min(a, b)`` (``cmpi slt`` + ``select``)."""
        lt = self.add(arith.CmpiOp(self.value(a), self.value(b), "slt"))
        return self.add(arith.SelectOp(lt, self.value(a), self.value(b)))  # type: ignore

    def maxi(self, a: Index, b: Index) -> SSAValue:
        """``max(a, b)`` (``cmpi slt`` + ``select``)."""
        lt = self.add(arith.CmpiOp(self.value(a), self.value(b), "slt"))
        return self.add(arith.SelectOp(lt, self.value(b), self.value(a)))  # type: ignore

    def count(self, rows: Index, per_row: int) -> SSAValue:
        """``round_up(rows * per_row, COUNT_ALIGN)`` elements (a vector op's count)."""
        total = self.muli(rows, per_row)
        align = COUNT_ALIGN
        return self.muli(self.divi(self.addi(total, align - 1), align), align)

    def loop(
        self, upper: SSAValue, body_fn: Callable[[IRBuilder, SSAValue], None], lower: int = 0
    ) -> None:
        """``scf.for %i = lower to upper step 1``; ``body_fn(builder, %i)`` fills the body
        (the ``scf.yield`` is added after it)."""
        body = Block(arg_types=[IndexType()])
        inner = type(self)(body, self.loc, fold=self.fold)
        body_fn(inner, body.args[0])
        inner.add(scf.YieldOp())
        self.add(scf.ForOp(self.c(lower), upper, self.c(1), [], body))
