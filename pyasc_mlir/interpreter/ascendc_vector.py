"""``ascendc`` vector calls on ``LocalTensor`` operands: the elementwise calls (binary, unary,
scalar), ``Duplicate``, ``GetValue``, ``Cast``, ``Compare``, ``Select`` and ``ReduceSum``/
``ReduceMax``/``ReduceMin`` (semantics in :mod:`.ascendc_math`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import FloatAttr
from xdsl.interpreter import Interpreter, PythonValues, impl
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.interpreter.ascendc_access import (
    define_lanes,
    lanes_defined,
    local_bytes,
    local_view,
    require_defined,
    scalar_value,
)
from pyasc_mlir.interpreter.ascendc_math import (
    BINARY,
    COMPARE,
    REDUCE_EXTREME,
    ROUND_MODES,
    SCALAR,
    UNARY,
    cast_values,
    compute_lanes,
    reduce_sum,
)
from pyasc_mlir.interpreter.ascendc_state import (
    F16,
    AscendcFunctionsBase,
    api_fail,
    api_mem_fail,
)
from pyasc_mlir.interpreter.tile_state import as_int, block_state
from pyasc_mlir.platform import VECTOR_REPEAT_BYTES
from pyasc_mlir.types import BF16, astype

__all__ = ["AscendcVectorFunctions"]


def _elementwise_operands(
    interpreter: Interpreter, op: Operation, api: str, n: int, dst: Any, **srcs: Any
) -> list[np.ndarray]:
    """Checked views of the first ``n`` lanes of ``dst`` and of each source (keyword: its role
    in the messages), in that order, for an elementwise call ``api``; under memory check,
    ``dst``'s first ``n`` lanes become defined exactly where every source's are."""
    state = block_state(interpreter)
    views = [local_view(op, api, "dst", dst, n, state.ub)]
    views += [local_view(op, api, role, src, n, state.ub) for role, src in srcs.items()]
    if state.shadow is not None:
        ok = np.logical_and.reduce([lanes_defined(state, src, n) for src in srcs.values()])
        define_lanes(state, dst, n, ok)
    return views


class AscendcVectorFunctions(AscendcFunctionsBase):
    """The vector calls, ``GetValue``, ``Cast``, ``Compare``, ``Select`` and reductions."""

    @impl(ac.VecBinaryOp)
    def run_vec_binary(
        self, interpreter: Interpreter, op: ac.VecBinaryOp, args: PythonValues
    ) -> PythonValues:
        """``Add|Sub|Mul|Div|Max|Min(dst, a, b, count)``."""
        dst, lhs, rhs, n = args
        api = op.api.data
        d, a, b = _elementwise_operands(interpreter, op, api, as_int(n), dst, src0=lhs, src1=rhs)
        with np.errstate(all="ignore"):
            if d.dtype in (F16, BF16):
                d[...] = astype(BINARY[api](compute_lanes(a), compute_lanes(b)), d.dtype)
            else:
                BINARY[api](a, b, out=d)
        return ()

    @impl(ac.VecUnaryOp)
    def run_vec_unary(
        self, interpreter: Interpreter, op: ac.VecUnaryOp, args: PythonValues
    ) -> PythonValues:
        """``Exp|Ln|Abs|Sqrt|Rsqrt|Reciprocal|Relu(dst, src, count)``."""
        dst, src, n = args
        api = op.api.data
        d, s = _elementwise_operands(interpreter, op, api, as_int(n), dst, src=src)
        with np.errstate(all="ignore"):
            d[...] = astype(UNARY[api](compute_lanes(s)), d.dtype)
        return ()

    @impl(ac.VecScalarOp)
    def run_vec_scalar(
        self, interpreter: Interpreter, op: ac.VecScalarOp, args: PythonValues
    ) -> PythonValues:
        """``Adds|Muls|Maxs|Mins(dst, src, (T)scalar, count)``."""
        dst, src, n = args
        api = op.api.data
        d, s = _elementwise_operands(interpreter, op, api, as_int(n), dst, src=src)
        with np.errstate(all="ignore"):
            scalar = d.dtype.type(op.scalar.value.data)
            if d.dtype in (F16, BF16):
                d[...] = astype(SCALAR[api](compute_lanes(s), np.float32(scalar)), d.dtype)
            else:
                SCALAR[api](s, scalar, out=d)
        return ()

    @impl(ac.DuplicateOp)
    def run_duplicate(
        self, interpreter: Interpreter, op: ac.DuplicateOp, args: PythonValues
    ) -> PythonValues:
        """``Duplicate(dst, (T)scalar, count)``."""
        dst, scalar, n = args
        n = as_int(n)
        state = block_state(interpreter)
        d = local_view(op, "Duplicate", "dst", dst, n, state.ub)
        if state.shadow is not None:
            define_lanes(state, dst, n)
        with np.errstate(all="ignore"):
            d[...] = d.dtype.type(scalar_value(scalar))
        return ()

    @impl(ac.CreateVecIndexOp)
    def run_create_vec_index(
        self, interpreter: Interpreter, op: ac.CreateVecIndexOp, args: PythonValues
    ) -> PythonValues:
        """``CreateVecIndex(dst, (T)first, count)``: ``dst[i] = first + i``."""
        dst, first, n = args
        n = as_int(n)
        state = block_state(interpreter)
        d = local_view(op, "CreateVecIndex", "dst", dst, n, state.ub)
        if state.shadow is not None:
            define_lanes(state, dst, n)
        d[...] = (scalar_value(first) + np.arange(n, dtype=np.float64)).astype(d.dtype)
        return ()

    @impl(ac.GetValueOp)
    def run_get_value(
        self, interpreter: Interpreter, op: ac.GetValueOp, args: PythonValues
    ) -> PythonValues:
        """``t.GetValue(i)``: a ``FloatAttr`` of the tensor's element type."""
        t, i = args
        i = as_int(i)
        if not 0 <= i < t.size:
            raise api_mem_fail(
                op,
                "LocalTensor::GetValue",
                f"index {i} out of range for tensor at UB offset {t.offset} with {t.size} elements",
            )
        state = block_state(interpreter)
        ub = state.ub
        isz = t.dtype.itemsize
        start = t.offset + i * isz
        if state.shadow is not None and not (state.shadow[start : start + isz] == 0xFF).all():
            raise api_mem_fail(
                op,
                "LocalTensor::GetValue",
                f"read of uninitialised UB: "
                f"element {i} (UB offset {start}) of "
                f"the tensor at UB offset {t.offset} "
                "was never written in this block",
            )
        value = ub[start : start + isz].view(t.dtype)[0]
        return (FloatAttr(float(value), op.result.type),)

    @impl(ac.CastOp)
    def run_cast(self, interpreter: Interpreter, op: ac.CastOp, args: PythonValues) -> PythonValues:
        """``Cast(dst, src, RoundMode::MODE, count)`` (NONE/RINT: ties to even, FLOOR, CEIL,
        ROUND: ties away from zero, TRUNC, ODD)."""
        dst, src, n = args
        d, s = _elementwise_operands(interpreter, op, "Cast", as_int(n), dst, src=src)
        try:
            d[...] = cast_values(s, d.dtype, ROUND_MODES[op.round.data])
        except InterpretationError as exc:
            raise api_fail(op, "Cast", str(exc)) from None
        return ()

    @impl(ac.CompareOp)
    def run_compare(
        self, interpreter: Interpreter, op: ac.CompareOp, args: PythonValues
    ) -> PythonValues:
        """``Compare(mask, a, b, CMPMODE::MODE, count)``: bit ``i`` of the mask (LSB first in
        byte ``i/8``) = ``a[i] MODE b[i]``; ``count*sizeof(T)`` must be a multiple of 256
        bytes; writes ``count/8`` mask bytes."""
        mask, lhs, rhs, n = args
        n = as_int(n)
        ub = block_state(interpreter).ub
        if n < 0:
            raise api_fail(op, "Compare", f"negative count {n}")
        isz = lhs.dtype.itemsize
        if n * isz % VECTOR_REPEAT_BYTES:
            raise api_fail(
                op,
                "Compare",
                f"count {n} * {isz} bytes = {n * isz} is not a "
                f"multiple of {VECTOR_REPEAT_BYTES} bytes",
            )
        a = local_view(op, "Compare", "src0", lhs, n, ub)
        b = local_view(op, "Compare", "src1", rhs, n, ub)
        m = local_bytes(op, "Compare", "dstMask", mask, n // 8, ub)
        state = block_state(interpreter)
        if state.shadow is not None:  # mask bit i is defined iff a[i] and b[i] are
            state.shadow[mask.offset : mask.offset + n // 8] = np.packbits(
                lanes_defined(state, lhs, n) & lanes_defined(state, rhs, n), bitorder="little"
            )
        m[...] = np.packbits(COMPARE[op.mode.data](a, b), bitorder="little")
        return ()

    @impl(ac.SelectOp)
    def run_select(
        self, interpreter: Interpreter, op: ac.SelectOp, args: PythonValues
    ) -> PythonValues:
        """``Select(dst, mask, a, b, VSEL_TENSOR_TENSOR_MODE, count)``: ``dst[i] = bit i ?
        a[i] : b[i]``."""
        dst, mask, lhs, rhs, n = args
        n = as_int(n)
        ub = block_state(interpreter).ub
        d = local_view(op, "Select", "dst", dst, n, ub)
        a = local_view(op, "Select", "src0", lhs, n, ub)
        b = local_view(op, "Select", "src1", rhs, n, ub)
        m = local_bytes(op, "Select", "mask", mask, (n + 7) // 8, ub)
        bits = np.unpackbits(m, count=n, bitorder="little").view(np.bool_)
        state = block_state(interpreter)
        if state.shadow is not None:  # defined iff the mask bit and the selected lane are
            m_ok = np.unpackbits(
                state.shadow[mask.offset : mask.offset + (n + 7) // 8], count=n, bitorder="little"
            ).view(np.bool_)
            chosen = np.where(bits, lanes_defined(state, lhs, n), lanes_defined(state, rhs, n))
            define_lanes(state, dst, n, m_ok & chosen)
        d[...] = np.where(bits, a, b)
        return ()

    @impl(ac.ReduceOp)
    def run_reduce(
        self, interpreter: Interpreter, op: ac.ReduceOp, args: PythonValues
    ) -> PythonValues:
        """``ReduceSum|ReduceMax|ReduceMin(dst, src, work, count)``: result in ``dst[0]``
        (sum order: :func:`reduce_sum`); ``work`` is checked (aligned) but not written."""
        dst, src, work, n = args
        n = as_int(n)
        api = op.api.data
        if n <= 0:
            raise api_fail(op, api, f"count must be positive, got {n}")
        ub = block_state(interpreter).ub
        d = local_view(op, api, "dst", dst, 1, ub)
        s = local_view(op, api, "src", src, n, ub)
        local_view(op, api, "work", work, 0, ub)
        state = block_state(interpreter)
        if state.shadow is not None:  # a reduction reads its whole count: it must be defined
            require_defined(op, api, "src", src, 0, n * src.dtype.itemsize, state)
            define_lanes(state, dst, 1)
        if api == "ReduceSum":
            d[0] = reduce_sum(s)
        else:
            d[0] = REDUCE_EXTREME[api](s)
        return ()
