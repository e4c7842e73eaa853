"""Interpreter implementations of the loop-level ``asc_loop`` ops (the kernel language's IR
before ``asc-raise-loops``): the reference semantics that the raised IR is validated against.

Local arrays are mutable NumPy arrays of their dtype; kernel arguments are the NumPy arrays of
the tensor level; indices are ``IntegerAttr`` index values (as xDSL's ``arith`` impls
take); scalars are ``np.float32``. ``asc_loop.load``
widens to float32, ``asc_loop.store`` rounds to the array's dtype (nearest even), scalar
``unary``/``binary`` use the op table's semantics (``tensor_impls.UNARY``/``BINARY``, the
same functions as ``asc.unary``/``asc.binary``) on one element. A ``fill``-less alloc starts
as NaN, so a read of an element never written shows up. This runs element by element (about
10 us per op): use it on small shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)

from pyasc_mlir.dialects import asc_loop
from pyasc_mlir.interpreter.tensor_impls import BINARY, UNARY
from pyasc_mlir.types import astype, np_dtype_of

__all__ = ["AscLoopFunctions"]


def _index(values: Sequence[Any]) -> tuple[int, ...]:
    """Index operands (``IntegerAttr`` values, as xDSL's ``arith`` impls produce) as ints."""
    return tuple(int(v.value.data) if isinstance(v, IntegerAttr) else int(v) for v in values)


@register_impls
class AscLoopFunctions(InterpreterFunctions):
    """NumPy implementations of ``asc_loop.alloc for yield load store const unary binary
    round to_tensor``."""

    @impl(asc_loop.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: asc_loop.AllocOp, args: PythonValues
    ) -> PythonValues:
        t = op.result.type
        assert isinstance(t, MemRefType)
        fill = op.fill_value
        value = np.nan if fill is None else fill
        return (
            astype(np.full(tuple(t.get_shape()), value, np.float64), np_dtype_of(t.element_type)),
        )

    @impl(asc_loop.ForOp)
    def run_for(
        self, interpreter: Interpreter, op: asc_loop.ForOp, args: PythonValues
    ) -> PythonValues:
        lb, ub, step = op.bounds
        if args:  # a bound operand (a triangular loop)
            ub = min(ub, _index(args)[0])
        for i in range(lb, ub, step):  # an index attribute, as xDSL's arith impls take
            interpreter.run_ssacfg_region(op.body, (IntegerAttr(i, IndexType()),), "asc_loop.for")
        return ()

    @impl_terminator(asc_loop.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: asc_loop.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(()), ()

    @impl(asc_loop.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: asc_loop.LoadOp, args: PythonValues
    ) -> PythonValues:
        arr, *idx = args
        return (np.float32(np.asarray(arr)[_index(idx)]),)

    @impl(asc_loop.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: asc_loop.StoreOp, args: PythonValues
    ) -> PythonValues:
        value, arr, *idx = args
        with np.errstate(over="ignore"):
            arr[_index(idx)] = astype(np.asarray(value, np.float32), arr.dtype)
        return ()

    @impl(asc_loop.ConstOp)
    def run_const(
        self, interpreter: Interpreter, op: asc_loop.ConstOp, args: PythonValues
    ) -> PythonValues:
        with np.errstate(over="ignore"):
            return (np.float32(op.value.value.data),)

    @impl(asc_loop.UnaryOp)
    def run_unary(
        self, interpreter: Interpreter, op: asc_loop.UnaryOp, args: PythonValues
    ) -> PythonValues:
        with np.errstate(all="ignore"):
            return (np.float32(UNARY[op.kind.data](np.asarray(args[0], np.float32))),)

    @impl(asc_loop.BinaryOp)
    def run_binary(
        self, interpreter: Interpreter, op: asc_loop.BinaryOp, args: PythonValues
    ) -> PythonValues:
        a, b = (np.asarray(x, np.float32) for x in args)
        with np.errstate(all="ignore"):
            return (np.float32(BINARY[op.kind.data](a, b)),)

    @impl(asc_loop.RoundOp)
    def run_round(
        self, interpreter: Interpreter, op: asc_loop.RoundOp, args: PythonValues
    ) -> PythonValues:
        dt = np_dtype_of(op.dtype)
        with np.errstate(over="ignore"):
            return (np.float32(astype(np.asarray(args[0], np.float32), dt)),)

    @impl(asc_loop.ToTensorOp)
    def run_to_tensor(
        self, interpreter: Interpreter, op: asc_loop.ToTensorOp, args: PythonValues
    ) -> PythonValues:
        return (np.array(args[0], copy=True),)
