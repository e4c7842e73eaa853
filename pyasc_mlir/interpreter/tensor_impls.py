"""Interpreter implementations of the tensor-level ``asc`` ops (the reference semantics).

Values are whole NumPy arrays of the op's element type (``float16``, ``float32``, ``bool``
for ``i1`` masks), one NumPy call per op. Elementwise arithmetic on f32 runs in float32 NumPy;
on f16 it runs in float32 and rounds once to float16; the per-kind semantics come from the op
table (``pyasc_mlir.dialects.opset``): the composites and ``rsqrt`` are evaluated in float64 and
rounded once (correctly rounded in practice).
Sums, means and variances accumulate in float64 and round once to the result dtype; ``max``
and ``min`` are exact. ``asc.matmul`` converts its operands to float32 (exact for f16) and
multiplies with NumPy's float32 ``matmul`` (f32 accumulation, batch dims broadcast).
``asc.transpose``/``asc.concat``/``asc.slice`` move data only. ``asc.fusion`` runs its
region with the operands as block arguments.
Floating-point exceptions (log of a negative, overflow) give NaN/Inf silently, as the hardware.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
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
from xdsl.ir import Attribute

from pyasc_mlir.dialects import asc, opset
from pyasc_mlir.dialects.opset_numerics import erf
from pyasc_mlir.types import astype, np_dtype_of

__all__ = ["BINARY", "COMPARE", "UNARY", "AscTensorFunctions", "erf"]


def _semantics(records: dict[str, opset.OpRecord]) -> dict[str, Callable[..., Any]]:
    """Kind -> ``record.tensor_impl()``. Every unary, binary and compare record has ``numpy``
    or ``reference`` semantics; ``TypeError`` (at import) names a record of the op table that
    has neither."""
    table: dict[str, Callable[..., Any]] = {}
    for kind, record in records.items():
        f = record.tensor_impl()
        if f is None:
            raise TypeError(f"op table: {record.category} {kind!r} has no numpy/reference")
        table[kind] = f
    return table


UNARY = _semantics(opset.UNARY)
"""Kind -> semantics on float32 values (float32 NumPy, or float64 for the records that say so)."""
BINARY = _semantics(opset.BINARY)
"""Kind -> semantics of ``asc.binary`` on float32 values."""
COMPARE = _semantics(opset.COMPARE)
"""Predicate -> ``asc.compare`` semantics (``bool`` result)."""


def _result(t: Attribute, value: Any) -> np.ndarray:
    """``value`` as a C-contiguous array of tensor type ``t`` (dtype and shape)."""
    assert isinstance(t, TensorType)
    out = astype(np.asarray(value), np_dtype_of(t.element_type))
    shape = tuple(t.get_shape())
    if out.shape != shape:
        out = out.reshape(shape)
    return out if out.flags.c_contiguous else out.copy(order="C")  # keeps 0-d arrays 0-d


@register_impls
class AscTensorFunctions(InterpreterFunctions):
    """NumPy implementations of ``asc.constant unary binary compare select cast broadcast
    reduce reshape matmul transpose concat slice fusion yield``."""

    @impl(asc.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: asc.ConstantOp, args: PythonValues
    ) -> PythonValues:
        t = op.result.type
        assert isinstance(t, TensorType)
        with np.errstate(over="ignore"):  # 1e40 in f32 is inf
            return (
                np.full(
                    tuple(t.get_shape()), op.value.value.data, dtype=np_dtype_of(t.element_type)
                ),
            )

    @impl(asc.UnaryOp)
    def run_unary(
        self, interpreter: Interpreter, op: asc.UnaryOp, args: PythonValues
    ) -> PythonValues:
        (x,) = args
        kind = op.kind.data
        x32 = np.asarray(x, dtype=np.float32)
        with np.errstate(all="ignore"):
            return (_result(op.result.type, UNARY[kind](x32)),)

    @impl(asc.BinaryOp)
    def run_binary(
        self, interpreter: Interpreter, op: asc.BinaryOp, args: PythonValues
    ) -> PythonValues:
        a, b = (np.asarray(v, dtype=np.float32) for v in args)
        with np.errstate(all="ignore"):
            return (_result(op.result.type, BINARY[op.kind.data](a, b)),)

    @impl(asc.CompareOp)
    def run_compare(
        self, interpreter: Interpreter, op: asc.CompareOp, args: PythonValues
    ) -> PythonValues:
        a, b = (np.asarray(v, dtype=np.float32) for v in args)
        return (_result(op.result.type, COMPARE[op.predicate.data](a, b)),)

    @impl(asc.SelectOp)
    def run_select(
        self, interpreter: Interpreter, op: asc.SelectOp, args: PythonValues
    ) -> PythonValues:
        cond, a, b = args
        return (_result(op.result.type, np.where(np.asarray(cond, dtype=bool), a, b)),)

    @impl(asc.CastOp)
    def run_cast(
        self, interpreter: Interpreter, op: asc.CastOp, args: PythonValues
    ) -> PythonValues:
        (x,) = args
        with np.errstate(all="ignore"):  # f32 -> f16 overflow gives inf (round to nearest)
            return (_result(op.result.type, np.asarray(x)),)

    @impl(asc.BroadcastOp)
    def run_broadcast(
        self, interpreter: Interpreter, op: asc.BroadcastOp, args: PythonValues
    ) -> PythonValues:
        (x,) = args
        t = op.result.type
        assert isinstance(t, TensorType)
        return (_result(t, np.broadcast_to(x, tuple(t.get_shape()))),)

    @impl(asc.ReduceOp)
    def run_reduce(
        self, interpreter: Interpreter, op: asc.ReduceOp, args: PythonValues
    ) -> PythonValues:
        (x,) = args
        axes = op.axis_list
        keep = op.keeps_dims
        kind = op.kind.data
        with np.errstate(all="ignore"):
            if kind in ("max", "min"):
                f = opset.REDUCE[kind].numpy  # NaN and +-0: dialects/opset_special.py
                assert f is not None
                r = f(x, axis=tuple(axes), keepdims=keep)
            else:
                x64 = np.asarray(x, dtype=np.float64)
                if kind == "sum":
                    r = np.sum(x64, axis=axes, keepdims=keep)
                elif kind == "mean":
                    r = np.mean(x64, axis=axes, keepdims=keep)
                else:
                    c = 0 if op.correction is None else op.correction.data
                    with warnings.catch_warnings():  # N <= correction: NaN, no warning
                        warnings.simplefilter("ignore", RuntimeWarning)
                        r = np.var(x64, axis=axes, keepdims=keep, ddof=c)
            return (_result(op.result.type, r),)

    @impl(asc.ReshapeOp)
    def run_reshape(
        self, interpreter: Interpreter, op: asc.ReshapeOp, args: PythonValues
    ) -> PythonValues:
        (x,) = args
        return (_result(op.result.type, np.asarray(x)),)

    @impl(asc.MatmulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: asc.MatmulOp, args: PythonValues
    ) -> PythonValues:
        a, b = (np.asarray(v, dtype=np.float32) for v in args)  # f16 -> f32 is exact
        if op.trans_a:
            a = np.swapaxes(a, -1, -2)
        if op.trans_b:
            b = np.swapaxes(b, -1, -2)
        with np.errstate(all="ignore"):
            return (_result(op.result.type, np.matmul(a, b)),)

    @impl(asc.TransposeOp)
    def run_transpose(
        self, interpreter: Interpreter, op: asc.TransposeOp, args: PythonValues
    ) -> PythonValues:
        (x,) = args
        return (_result(op.result.type, np.transpose(np.asarray(x), op.permutation)),)

    @impl(asc.ConcatOp)
    def run_concat(
        self, interpreter: Interpreter, op: asc.ConcatOp, args: PythonValues
    ) -> PythonValues:
        return (
            _result(op.result.type, np.concatenate([np.asarray(a) for a in args], axis=op.dim)),
        )

    @impl(asc.SliceOp)
    def run_slice(
        self, interpreter: Interpreter, op: asc.SliceOp, args: PythonValues
    ) -> PythonValues:
        (x,) = args
        box = tuple(slice(o, o + n) for o, n in zip(op.starts, op.extents, strict=True))
        return (_result(op.result.type, np.asarray(x)[box]),)

    @impl(asc.FusionOp)
    def run_fusion(
        self, interpreter: Interpreter, op: asc.FusionOp, args: PythonValues
    ) -> PythonValues:
        results = interpreter.run_ssacfg_region(op.body, tuple(args), "asc.fusion")
        return tuple(_result(r.type, v) for r, v in zip(op.outputs, results, strict=True))

    @impl_terminator(asc.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: asc.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()
