"""Interpreter implementations of the scalar-unit ``ascendc`` ops
(``dialects/ascendc_scalar.py``, the scalar-loop fallback kernels of ``asc-lower-loops``).

Values are ``np.float32`` scalars. ``scalar_get``/``scalar_set`` read and write one element
of a UB ``LocalTensor`` (bounds checked; in memory-check mode a read of never-written UB
raises and a write defines the element) or of a GM ``GlobalTensor``. The math is the float64
function of the op table's reference on the widened operands, rounded once to float32
(:data:`UNARY64`, :data:`BINARY64`), exactly what the emitted C++ computes
(``pyasc_mlir/emit_scalar.py``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)

from pyasc_mlir.dialects import ascendc_scalar as sc
from pyasc_mlir.dialects import opset_numerics as num
from pyasc_mlir.dialects import opset_special as special
from pyasc_mlir.dialects.scalar_f32 import kahan_step
from pyasc_mlir.interpreter.ascendc_state import GlobalTensor, LocalTensor, api_mem_fail
from pyasc_mlir.interpreter.tile_state import as_int, block_state
from pyasc_mlir.types import astype, np_dtype_of

__all__ = ["BINARY64", "UNARY64", "AscendcScalarFunctions"]

F64 = Callable[[np.ndarray], Any]

UNARY64: dict[str, F64] = {
    "neg": np.negative,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "abs": np.abs,
    "relu": special.relu,
    "reciprocal": lambda x: 1.0 / x,
    "sin": np.sin,
    "cos": np.cos,
    "sigmoid": num.sigmoid64,
    "tanh": num.tanh64,
    "erf": num.erf,
    "gelu": num.gelu64,
    "softplus": num.softplus64,
}
"""Unary kind -> its float64 function (the op table's tensor-level reference)."""

BINARY64: dict[str, Callable[[np.ndarray, np.ndarray], Any]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": special.maximum,
    "min": special.minimum,
}
"""Binary kind -> its function (float64 for the arithmetic, f32 for max/min: exact)."""


def _f32(x: Any) -> np.float32:
    with np.errstate(all="ignore"):
        return np.float32(np.asarray(x, np.float64).astype(np.float32))


_F32_MAX = float(np.finfo(np.float32).max)
_PY_BINARY: dict[str, Callable[[float, float], float]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
}
"""The float64 arithmetic of :data:`BINARY64` on Python floats (IEEE doubles: the same
results, without NumPy's per-call cost; a division by zero goes the NumPy way)."""


@register_impls
class AscendcScalarFunctions(InterpreterFunctions):
    """NumPy implementations of ``ascendc.scalar_get set const unary binary round``."""

    @impl(sc.ScalarGetOp)
    def run_get(
        self, interpreter: Interpreter, op: sc.ScalarGetOp, args: PythonValues
    ) -> PythonValues:
        t, i = args[0], as_int(args[1])
        if isinstance(t, GlobalTensor):
            if not 0 <= i < t.size:
                raise api_mem_fail(
                    op, "GlobalTensor::GetValue", f"index {i} out of range for {t.size} elements"
                )
            return (np.float32(t.array[t.offset + i]),)
        assert isinstance(t, LocalTensor)
        state = block_state(interpreter)
        start = self._local(op, "LocalTensor::GetValue", t, i)
        isz = t.dtype.itemsize
        if state.shadow is not None and not (state.shadow[start : start + isz] == 0xFF).all():
            raise api_mem_fail(
                op,
                "LocalTensor::GetValue",
                f"read of uninitialised UB: element {i} (UB offset {start}) of the tensor at "
                f"UB offset {t.offset} was never written in this block",
            )
        return (np.float32(state.ub[start : start + isz].view(t.dtype)[0]),)

    @impl(sc.ScalarSetOp)
    def run_set(
        self, interpreter: Interpreter, op: sc.ScalarSetOp, args: PythonValues
    ) -> PythonValues:
        v, t, i = args[0], args[1], as_int(args[2])
        if isinstance(t, GlobalTensor):
            if not 0 <= i < t.size:
                raise api_mem_fail(
                    op, "GlobalTensor::SetValue", f"index {i} out of range for {t.size} elements"
                )
            with np.errstate(over="ignore"):
                t.array[t.offset + i] = astype(np.asarray(v, np.float32), t.array.dtype)
            return ()
        assert isinstance(t, LocalTensor)
        state = block_state(interpreter)
        start = self._local(op, "LocalTensor::SetValue", t, i)
        isz = t.dtype.itemsize
        with np.errstate(over="ignore"):
            value = astype(np.asarray([v], np.float32), t.dtype)
        state.ub[start : start + isz] = value.view(np.uint8)
        if state.shadow is not None:
            state.shadow[start : start + isz] = 0xFF
        return ()

    @staticmethod
    def _local(op: Any, api: str, t: LocalTensor, i: int) -> int:
        if not 0 <= i < t.size:
            raise api_mem_fail(
                op,
                api,
                f"index {i} out of range for tensor at UB offset {t.offset} with {t.size} elements",
            )
        return t.offset + i * t.dtype.itemsize

    @impl(sc.ScalarConstOp)
    def run_const(
        self, interpreter: Interpreter, op: sc.ScalarConstOp, args: PythonValues
    ) -> PythonValues:
        return (_f32(op.value.value.data),)

    @impl(sc.ScalarUnaryOp)
    def run_unary(
        self, interpreter: Interpreter, op: sc.ScalarUnaryOp, args: PythonValues
    ) -> PythonValues:
        with np.errstate(all="ignore"):
            return (_f32(UNARY64[op.kind.data](np.asarray(args[0], np.float64))),)

    @impl(sc.ScalarBinaryOp)
    def run_binary(
        self, interpreter: Interpreter, op: sc.ScalarBinaryOp, args: PythonValues
    ) -> PythonValues:
        kind = op.kind.data
        py = _PY_BINARY.get(kind)
        if py is not None:
            try:
                r = py(float(args[0]), float(args[1]))
            except ZeroDivisionError:
                pass
            else:  # finite and in range: rounds to float32 without overflow
                return (np.float32(r) if -_F32_MAX <= r <= _F32_MAX else _f32(r),)
        dt = np.float32 if kind in ("max", "min") else np.float64
        a, b = (np.asarray(x, dt) for x in args)
        with np.errstate(all="ignore"):
            return (_f32(BINARY64[kind](a, b)),)

    @impl(sc.ScalarKahanOp)
    def run_kahan(
        self, interpreter: Interpreter, op: sc.ScalarKahanOp, args: PythonValues
    ) -> PythonValues:
        return kahan_step(*(np.float32(a) for a in args))

    @impl(sc.ScalarRoundOp)
    def run_round(
        self, interpreter: Interpreter, op: sc.ScalarRoundOp, args: PythonValues
    ) -> PythonValues:
        with np.errstate(over="ignore"):
            return (np.float32(astype(np.asarray(args[0], np.float32), np_dtype_of(op.dtype))),)
