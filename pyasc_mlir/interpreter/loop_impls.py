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

A distributed loop (``workers = W``) runs the workers' shares one after another; its reduction
variables (rank-0 arrays written in the body, defined outside it) restart from their entry
value for every worker, and each worker's final values are recorded as its partials, which
``asc_loop.allreduce`` combines (``dialects/asc_loop.py``, "Parallel nests").
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
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import InterpretationError

from pyasc_mlir.dialects import asc_loop
from pyasc_mlir.dialects.scalar_f32 import kahan_step
from pyasc_mlir.interpreter.tensor_impls import BINARY, UNARY
from pyasc_mlir.types import astype, np_dtype_of

__all__ = ["AscLoopFunctions", "reduction_variables"]

_PARTIALS = "asc_loop.partials"
"""Interpreter data: ``id(rank-0 array) -> [partial of worker 0, 1, ...]``."""


def _index(values: Sequence[Any]) -> tuple[int, ...]:
    """Index operands (``IntegerAttr`` values, as xDSL's ``arith`` impls produce) as ints."""
    return tuple(int(v.value.data) if isinstance(v, IntegerAttr) else int(v) for v in values)


def reduction_variables(loop: asc_loop.ForOp) -> list[SSAValue]:
    """The rank-0 arrays written in ``loop``'s body that are defined outside it, in order."""
    found: list[SSAValue] = []
    for o in loop.body.walk():
        if isinstance(o, asc_loop.StoreOp) and not o.indices and o.array not in found:
            owner = o.array.owner
            inside = isinstance(owner, Operation) and loop.is_ancestor(owner)
            if not inside and not (not isinstance(owner, Operation) and _arg_inside(loop, o.array)):
                found.append(o.array)
    return found


def _arg_inside(loop: asc_loop.ForOp, v: SSAValue) -> bool:
    block = getattr(v, "block", None)
    parent = block.parent_op() if block is not None else None
    return parent is not None and (parent is loop or loop.is_ancestor(parent))


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
        if op.num_workers:
            self._run_distributed(interpreter, op, ub)
            return ()
        for i in range(lb, ub, step):  # an index attribute, as xDSL's arith impls take
            interpreter.run_ssacfg_region(op.body, (IntegerAttr(i, IndexType()),), "asc_loop.for")
        return ()

    def _run_distributed(self, interpreter: Interpreter, op: asc_loop.ForOp, n: int) -> None:
        """The shares of ``op`` worker by worker; records the reduction variables' partials."""
        arrays = interpreter.get_values(tuple(reduction_variables(op)))
        entry = [np.array(a, copy=True) for a in arrays]
        partials: list[list[np.float32]] = [[] for _ in arrays]
        for b in range(op.num_workers):
            for a, e in zip(arrays, entry, strict=True):
                a[...] = e
            start, end = asc_loop.share(n, op.num_workers, b)
            for i in range(start, end):
                interpreter.run_ssacfg_region(
                    op.body, (IntegerAttr(i, IndexType()),), "asc_loop.for"
                )
            for got, a in zip(partials, arrays, strict=True):
                got.append(np.float32(a[()]))
        store = interpreter.get_data(AscLoopFunctions, _PARTIALS, dict)
        for a, got in zip(arrays, partials, strict=True):
            store[id(a)] = got

    @impl(asc_loop.AllreduceOp)
    def run_allreduce(
        self, interpreter: Interpreter, op: asc_loop.AllreduceOp, args: PythonValues
    ) -> PythonValues:
        """The ordered combine of the recorded partials (``dialects/asc_loop.py``)."""
        init, acc, *comp = args
        store = interpreter.get_data(AscLoopFunctions, _PARTIALS, dict)
        parts = store.get(id(acc))
        if parts is None:
            raise InterpretationError(
                f"{op.name}: its operand was not reduced by a distributed loop before it"
            )
        total, tcomp = np.float32(init), np.float32(0.0)
        if op.kind.data == "sum":
            for p, c in zip(parts, store[id(comp[0])], strict=True):
                total, tcomp = kahan_step(total, tcomp, p)
                total, tcomp = kahan_step(total, tcomp, np.float32(UNARY["neg"](c)))
            return (total,)
        with np.errstate(all="ignore"):
            for p in parts:
                total = np.float32(BINARY[op.kind.data](total, p))
        return (total,)

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

    @impl(asc_loop.KahanOp)
    def run_kahan(
        self, interpreter: Interpreter, op: asc_loop.KahanOp, args: PythonValues
    ) -> PythonValues:
        return kahan_step(*(np.float32(a) for a in args))

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
