"""NaN guards: tile-level code whose NaN and signed-zero results do not depend on the hardware.

The Ascend C documentation gives ``Max``, ``Min``, ``Maxs``, ``Mins``, ``Relu``,
``ReduceMax`` and ``ReduceMin`` as formulas and says nothing about NaN or ``+-0``
(docs/CPU_RUNTIME.md, "Special values"). The project's semantics (NaN propagates, IEEE
754-2019 ``maximum``/``minimum`` on ``+-0`` ties, ``relu(-0) = -0``) must hold on any NPU, so
the kernel builder (``passes/kernel_builder.py``, ``passes/tile.py``) emits these sequences
around those instructions. They rely only on ``Compare`` following IEEE (every comparison with
a NaN false except ``NE``, ``-0 == +0``), on ``Select`` moving bits, on IEEE addition,
subtraction and ``Muls(x, -1)`` (exact negation), on ``Duplicate`` and on ``ReduceSum`` adding
its elements (in any order), and on the guarded instruction being right whenever no operand
is NaN and the operands are not a ``+-0`` tie (any value otherwise). docs/CPU_RUNTIME.md
("NaN guards") has the proofs; ``tests/test_nan_guards.py`` checks them against a model of
hardware that gets every such case wrong (``-DPYASC_HW_NAN_MODEL_DROP=1``).

Because the guards are built while the kernel is lowered, the UB budget (``ub_budget``) and
the cost model see their buffers (one tile-sized scratch value, an i1 mask, a zero constant)
and their vector ops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import AnyFloat, IntegerType, MemRefType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.passes.kernel_builder import Layout, TileBuffer, TileState

if TYPE_CHECKING:
    from pyasc_mlir.passes.kernel_builder import KernelBuilder

MASK = IntegerType(1)


class NanGuards:
    """Emits the guarded forms into tiles of kernel builder ``kb``; constant buffers
    (``+0``, ``-0``) are made once per tile and layout."""

    def __init__(self, kb: KernelBuilder):
        self.kb = kb
        self.consts: dict[tuple[int, Layout, Attribute, float, str], TileBuffer] = {}

    # -- helpers ---------------------------------------------------------------------------
    def const(self, t: TileState, lay: Layout, dtype: Attribute, value: float) -> TileBuffer:
        """A buffer of ``t`` holding ``value`` (``+0.0`` or ``-0.0``) in every element."""
        sign = "-" if str(value).startswith("-") else "+"
        key = (id(t), lay, dtype, abs(value), sign)
        if key not in self.consts:
            buf = self.kb.alloc(t, "tmp", lay, dtype)
            t.ix.add(asc.VDupOp(buf.ref, value, self.kb.count(t, lay)))
            self.consts[key] = buf
        return self.consts[key]

    def applies(self, op: Operation) -> bool:
        """``op``'s result is floating point (only those have NaN and signed zeros)."""
        return applies(op.results[0].type)

    def mask(self, t: TileState, lay: Layout) -> SSAValue:
        return self.kb.alloc(t, "tmp", lay, MASK).ref

    def scratch(self, t: TileState, lay: Layout, dtype: Attribute) -> SSAValue:
        return self.kb.alloc(t, "tmp", lay, dtype).ref

    def _nan_from(
        self, t: TileState, dst: SSAValue, m: SSAValue, x: SSAValue, r: SSAValue, n: SSAValue
    ) -> None:
        """``dst = isnan(x) ? x : r`` (``Compare(x, x, NE)`` is true exactly for NaN)."""
        t.ix.add(asc.VCompareOp("ne", m, x, x, n))
        t.ix.add(asc.VSelectOp(dst, m, x, r, n))

    # -- elementwise -------------------------------------------------------------------------
    def binary(
        self, t: TileState, kind: str, dst: TileBuffer, a: TileBuffer, b: TileBuffer
    ) -> None:
        """``dst = maximum(a, b)`` / ``minimum(a, b)`` (``kind`` ``max``/``min``).

        ``r = Max(a, b)`` is right except on NaN and ``+-0`` ties. Ties: where ``a == b`` and
        ``a == 0`` both are zeros and the result is ``a + b`` for max (``-0`` only if both are
        ``-0``: the AND of the sign bits) and ``-((-a) - b)`` for min (``-0`` if either is:
        the OR); elsewhere ``r``. Then ``isnan(a) ? a : r`` and ``isnan(b) ? b : r``."""
        lay, dtype = dst.layout, _elem(a.ref)
        n = self.kb.count(t, lay)
        ix = t.ix
        r = dst.ref if dst.ref not in (a.ref, b.ref) else self.scratch(t, lay, dtype)
        ix.add(asc.VBinaryOp(kind, r, a.ref, b.ref, n))
        m, s = self.mask(t, lay), self.scratch(t, lay, dtype)
        if kind == "max":
            ix.add(asc.VBinaryOp("add", s, a.ref, b.ref, n))
        else:
            ix.add(asc.VScalarOp("muls", s, a.ref, -1.0, n))
            ix.add(asc.VBinaryOp("sub", s, s, b.ref, n))
            ix.add(asc.VScalarOp("muls", s, s, -1.0, n))
        ix.add(asc.VCompareOp("eq", m, a.ref, b.ref, n))
        ix.add(asc.VSelectOp(s, m, s, r, n))
        ix.add(asc.VCompareOp("eq", m, a.ref, self.const(t, lay, dtype, 0.0).ref, n))
        ix.add(asc.VSelectOp(r, m, s, r, n))
        self._nan_from(t, r, m, a.ref, r, n)
        self._nan_from(t, dst.ref, m, b.ref, r, n)

    def scalar(self, t: TileState, kind: str, dst: TileBuffer, src: TileBuffer, c: float) -> None:
        """``dst = maximum(src, c)`` / ``minimum(src, c)`` for a number ``c`` that is neither
        NaN nor zero (no tie is possible): ``Maxs``/``Mins``, then ``isnan(src) ? src : r``.
        (A NaN or zero ``c`` goes through :meth:`binary` with a constant buffer.)"""
        lay, dtype = dst.layout, _elem(src.ref)
        n = self.kb.count(t, lay)
        r = dst.ref if dst.ref != src.ref else self.scratch(t, lay, dtype)
        t.ix.add(asc.VScalarOp(kind + "s", r, src.ref, c, n))
        self._nan_from(t, dst.ref, self.mask(t, lay), src.ref, r, n)

    def relu(self, t: TileState, dst: TileBuffer, src: TileBuffer) -> None:
        """``dst = x < 0 ? +0 : x`` with ``Compare``/``Select`` instead of ``Relu``: NaN and
        ``-0`` compare false, so they pass unchanged."""
        lay, dtype = dst.layout, _elem(src.ref)
        n = self.kb.count(t, lay)
        zero = self.const(t, lay, dtype, 0.0).ref
        m = self.mask(t, lay)
        t.ix.add(asc.VCompareOp("lt", m, src.ref, zero, n))
        t.ix.add(asc.VSelectOp(dst.ref, m, zero, src.ref, n))

    # -- reductions ------------------------------------------------------------------------
    def reduce(
        self,
        t: TileState,
        kind: str,
        axis: str,
        res: TileBuffer,
        src: TileBuffer,
        work: SSAValue,
        sizes: list[SSAValue],
    ) -> None:
        """``res = max/min`` of ``src`` along ``axis`` (``last``/``mid``, ``sizes`` as
        ``asc.vreduce``), with a NaN term.

        ``r`` = the hardware reduction; ``w = isnan(x) ? x : +0``; ``s = ReduceSum(w)`` is
        NaN if the row holds a NaN, else ``+0`` (a sum of ``+0`` -- and of whatever zero an
        instruction pads a partial repeat with -- is ``+0``, in any order); result
        ``r - s``: NaN, or exactly ``r`` (``r - (+0) = r`` for every ``r``, ``-0`` included).
        NOT guarded: the sign of a zero result (a ``+-0`` tie inside the row) -- that needs a
        zero-sign test (``1/x``) per element; docs/CPU_RUNTIME.md "NaN guards"."""
        ix, dtype = t.ix, _elem(src.ref)
        xl, rl = src.layout, res.layout
        nx, nr = self.kb.count(t, xl), self.kb.count(t, rl)
        ix.add(asc.VReduceOp(kind, axis, res.ref, src.ref, work, sizes))
        w = self.scratch(t, xl, dtype)
        self._nan_from(t, w, self.mask(t, xl), src.ref, self.const(t, xl, dtype, 0.0).ref, nx)
        s = self.scratch(t, rl, dtype)
        ix.add(asc.VReduceOp("sum", axis, s, w, work if axis == "last" else w, sizes))
        ix.add(asc.VBinaryOp("sub", res.ref, res.ref, s, nr))


def _elem(v: SSAValue) -> Attribute:
    t = v.type
    assert isinstance(t, MemRefType), f"not a buffer: {v}"
    return t.element_type


def applies(op_result_type: Attribute) -> bool:
    """Only floating-point values have NaN and signed zeros."""
    return isinstance(op_result_type, TensorType) and isinstance(
        op_result_type.element_type, AnyFloat
    )


def _through_views(v: SSAValue) -> list[tuple[Operation, SSAValue]]:
    """The uses of ``v``, looking through broadcasts and reshapes: ``(user, operand)``."""
    out: list[tuple[Operation, SSAValue]] = []
    for use in v.uses:
        user = use.operation
        if isinstance(user, asc.BroadcastOp | asc.ReshapeOp):
            out += _through_views(user.result)
        else:
            out.append((user, v))
    return out


def _from_views(v: SSAValue) -> SSAValue:
    """``v`` with broadcasts and reshapes stripped."""
    while isinstance(v.owner, asc.BroadcastOp | asc.ReshapeOp):
        v = v.owner.input
    return v


def _axes(op: asc.ReduceOp) -> tuple[int, ...]:
    return tuple(op.axes.get_values())


def _normalised(e: SSAValue, red: asc.ReduceOp) -> bool:
    """Every use of ``e`` is a ``sum`` over ``red``'s axes whose every use is ``e / sum``,
    or such a division: a NaN anywhere in a row of ``e`` reaches every result of the row."""
    divs: list[asc.BinaryOp] = []
    sums = 0
    for user, _ in _through_views(e):
        if isinstance(user, asc.ReduceOp) and user.kind.data == "sum":
            if _axes(user) != _axes(red) or user.input is not e:
                return False
            sums += 1
            for u2, _ in _through_views(user.result):
                if not (isinstance(u2, asc.BinaryOp) and u2.kind.data == "div"):
                    return False
                if _from_views(u2.lhs) is not e:
                    return False
        elif isinstance(user, asc.BinaryOp) and user.kind.data == "div":
            divs.append(user)
        else:
            return False
    return sums > 0 and all(
        _from_views(d.lhs) is e
        and isinstance(s := _from_views(d.rhs).owner, asc.ReduceOp)
        and s.kind.data == "sum"
        and s.input is e
        for d in divs
    )


def guard_needed(red: asc.ReduceOp) -> bool:
    """False when the max/min ``red`` only feeds the softmax shape ``e = exp(x - r)``,
    ``e / sum(e)`` (``sum`` over the same axes): there, the guard cannot change a result.
    Proof: a row with a NaN has ``x_i - r = NaN`` at that element whatever ``r`` is, so
    ``sum(e)`` and every ``e_j / sum(e)`` of the row are NaN, as with the defined ``r = NaN``;
    a row without NaN has the right ``r`` up to the sign of a zero, and ``x_i - (+0)`` and
    ``x_i - (-0)`` differ only in the sign of a zero result, which ``exp`` maps to 1 either
    way. (``tests/test_nan_guards.py`` checks softmax under the NaN-dropping model.)"""
    x = red.input
    for user, operand in _through_views(red.result):
        if not (isinstance(user, asc.BinaryOp) and user.kind.data == "sub"):
            return True
        if user.rhs is not operand or _from_views(user.lhs) is not x:
            return True
        for u2, _ in _through_views(user.result):
            if not (isinstance(u2, asc.UnaryOp) and u2.kind.data == "exp"):
                return True
            if not _normalised(u2.result, red):
                return True
    return False
