"""Faster interpreter implementations of the index arithmetic scalar loops spend their time in.

xDSL's stock implementations (``xdsl.interpreters.arith``/``scf``) represent every integer
value as a freshly built and verified ``IntegerAttr``: an ``arith.constant`` inside a loop body
re-runs a generic ``isa`` check and builds a new attribute on every iteration (~150 us), and
``scf.for`` builds one per induction value. The scalar-loop fallback kernels
(``asc-lower-loops``) run such bodies once per element, so this dominated their interpretation.

The implementations here compute the same values (the same ``IntegerAttr``/``FloatAttr``
objects, equal to xDSL's): a constant is built once per op and interpretation, and integer
results are memoized by ``(value, type)`` (attributes are immutable, so sharing them is
safe). Registered over the stock ones by :func:`pyasc_mlir.interpreter.core.make_interpreter`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, IntegerType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.builtin import scalar_attr
from xdsl.ir import Attribute, Operation
from xdsl.utils.comparisons import to_signed, to_unsigned
from xdsl.utils.exceptions import InterpretationError

__all__ = ["IndexArithFunctions"]

_PREDICATES: dict[int, Callable[[int, int], bool]] = {
    0: operator.eq,
    1: operator.ne,
    2: operator.lt,
    3: operator.le,
    4: operator.gt,
    5: operator.ge,
    6: operator.lt,  # ult ule ugt uge: on the operands read as unsigned
    7: operator.le,
    8: operator.gt,
    9: operator.ge,
}
"""``arith.cmpi`` predicate -> comparison (xDSL's ``run_cmpi``)."""

_MEMO_LIMIT = 1 << 16
"""Memoized integer attributes per interpretation before the memo is cleared (bounds memory)."""


@register_impls
class IndexArithFunctions(InterpreterFunctions):
    """``arith.constant``, ``arith.addi subi muli divsi remsi floordivsi cmpi`` and
    ``scf.for`` with memoized attributes."""

    def __init__(self) -> None:
        self._constants: dict[Operation, tuple[Any, ...]] = {}
        self._ints: dict[tuple[int, Attribute, int], Any] = {}
        self._bools = (IntegerAttr.from_bool(False), IntegerAttr.from_bool(True))

    def _int(self, value: int, type_: Attribute, index_bitwidth: int) -> Any:
        """``scalar_attr(value, type_, index_bitwidth)``, memoized."""
        key = (value, type_, index_bitwidth)
        attr = self._ints.get(key)
        if attr is None:
            if len(self._ints) >= _MEMO_LIMIT:
                self._ints.clear()
            attr = scalar_attr(value, type_, index_bitwidth)  # type: ignore[arg-type]
            self._ints[key] = attr
        return attr

    @impl(arith.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues
    ) -> PythonValues:
        cached = self._constants.get(op)
        if cached is not None:
            return cached
        value = op.value
        interpreter.interpreter_assert(
            isinstance(value, IntegerAttr | FloatAttr),
            f"arith.constant not implemented for {type(value)}",
        )
        if isinstance(value, IntegerAttr) and isinstance(value.type, IndexType):
            result: tuple[Any, ...] = (
                scalar_attr(value.value.data, value.type, interpreter.index_bitwidth),
            )
        else:
            result = (value,)
        self._constants[op] = result
        return result

    def _binary(self, interpreter: Interpreter, op: Operation, value: int) -> PythonValues:
        type_ = op.results[0].type
        assert isinstance(type_, IndexType | IntegerType)
        return (self._int(value, type_, interpreter.index_bitwidth),)

    @impl(arith.AddiOp)
    def run_addi(self, interpreter: Interpreter, op: arith.AddiOp, args: PythonValues):
        return self._binary(interpreter, op, args[0].value.data + args[1].value.data)

    @impl(arith.SubiOp)
    def run_subi(self, interpreter: Interpreter, op: arith.SubiOp, args: PythonValues):
        return self._binary(interpreter, op, args[0].value.data - args[1].value.data)

    @impl(arith.MuliOp)
    def run_muli(self, interpreter: Interpreter, op: arith.MuliOp, args: PythonValues):
        return self._binary(interpreter, op, args[0].value.data * args[1].value.data)

    def _signed(
        self, interpreter: Interpreter, op: Operation, args: PythonValues
    ) -> tuple[int, int]:
        """The two operands as signed integers of the result's width (as xDSL reads them)."""
        type_ = op.results[0].type
        width = type_.width.data if isinstance(type_, IntegerType) else interpreter.index_bitwidth
        return to_signed(args[0].value.data, width), to_signed(args[1].value.data, width)

    @staticmethod
    def _div(lhs: int, rhs: int) -> int:
        """Division rounded toward zero (``arith.divsi``)."""
        assert rhs != 0
        div = abs(lhs) // abs(rhs)
        return -div if (lhs > 0) != (rhs > 0) else div

    @impl(arith.DivSIOp)
    def run_divsi(self, interpreter: Interpreter, op: arith.DivSIOp, args: PythonValues):
        lhs, rhs = self._signed(interpreter, op, args)
        return self._binary(interpreter, op, self._div(lhs, rhs))

    @impl(arith.RemSIOp)
    def run_remsi(self, interpreter: Interpreter, op: arith.RemSIOp, args: PythonValues):
        lhs, rhs = self._signed(interpreter, op, args)
        return self._binary(interpreter, op, lhs - self._div(lhs, rhs) * rhs)

    @impl(arith.FloorDivSIOp)
    def run_floordivsi(self, interpreter: Interpreter, op: arith.FloorDivSIOp, args: PythonValues):
        lhs, rhs = self._signed(interpreter, op, args)
        assert rhs != 0
        return self._binary(interpreter, op, lhs // rhs)

    @impl(arith.CmpiOp)
    def run_cmpi(self, interpreter: Interpreter, op: arith.CmpiOp, args: PythonValues):
        type_ = op.lhs.type
        assert isinstance(type_, IndexType | IntegerType)
        width = type_.width.data if isinstance(type_, IntegerType) else interpreter.index_bitwidth
        predicate = op.predicate.value.data
        interpret = to_unsigned if predicate >= 6 else to_signed
        a = interpret(args[0].value.data, width)
        b = interpret(args[1].value.data, width)
        compare = _PREDICATES.get(predicate)
        if compare is None:
            raise InterpretationError(f"arith.cmpi predicate {op.predicate} not implemented")
        return (self._bools[compare(a, b)],)

    @impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues) -> PythonValues:
        lb, ub, step, *packed_args = args
        loop_args = tuple(packed_args)
        type_ = op.lb.type
        width = interpreter.index_bitwidth
        for i in range(lb.value.data, ub.value.data, step.value.data):
            loop_args = interpreter.run_ssacfg_region(
                op.body, (self._int(i, type_, width), *loop_args), "for_loop"
            )
        return loop_args
