"""Interpreter implementation of ``asc_loop.nest`` (the scalar-loop fallback at the tensor
level): the region's ``asc_loop`` ops run element by element on mutable NumPy copies of the
operands (:mod:`.loop_impls`), and the yielded arrays are the results. Element by element
(about 10 us per op): the reference semantics, for small shapes."""

from __future__ import annotations

import numpy as np
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

__all__ = ["AscNestFunctions"]


@register_impls
class AscNestFunctions(InterpreterFunctions):
    """NumPy implementations of ``asc_loop.nest`` and ``asc_loop.nest_yield``."""

    @impl(asc_loop.NestOp)
    def run_nest(
        self, interpreter: Interpreter, op: asc_loop.NestOp, args: PythonValues
    ) -> PythonValues:
        arrays = tuple(np.array(a, copy=True) for a in args)  # operands stay unchanged
        out = interpreter.run_ssacfg_region(op.body, arrays, "asc_loop.nest")
        return tuple(np.array(a, copy=True) for a in out)

    @impl_terminator(asc_loop.NestYieldOp)
    def run_nest_yield(
        self, interpreter: Interpreter, op: asc_loop.NestYieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()
