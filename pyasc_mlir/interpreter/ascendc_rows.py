"""``ascendc`` many-row level-0 calls: ``WholeReduceSum`` / ``WholeReduceMax``
(``ORDER_ONLY_VALUE``) and ``Brcb``, as the CPU runtime computes them (``pyasc_cpu/reduce.h``,
``pyasc_cpu/brcb.h``; semantics in :mod:`pyasc_mlir.dialects.ascendc_rows`): the lanes of each
repeat gathered by the DataBlock strides, the sum a pairwise tree over all ``256 / sizeof(T)``
lanes (masked-off lanes ``+0``, every addition rounded to ``T``, a finite fp16 sum that
overflows saturated to +-65504), the max the fold of the elementwise ``Max`` (NaN if any lane
is NaN, ``+0`` over ``-0``); ``Brcb`` copies each of 8 elements per repeat into a DataBlock."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, PythonValues, impl

from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects.ascendc_rows import MAX_REPEAT
from pyasc_mlir.dialects.opset_special import reduce_max
from pyasc_mlir.interpreter.ascendc_access import lanes_defined, local_view, shadow_lanes
from pyasc_mlir.interpreter.ascendc_state import F16, AscendcFunctionsBase, api_fail
from pyasc_mlir.interpreter.tile_state import as_int, block_state
from pyasc_mlir.platform import DATA_BLOCK_BYTES, VECTOR_REPEAT_BYTES

__all__ = ["AscendcRowFunctions", "whole_sum"]

HALF_MAX = 65504.0
"""Largest finite fp16 (the documented WholeReduceSum saturation value)."""


def whole_sum(v: np.ndarray) -> np.ndarray:
    """Per row of ``v`` (``[repeats, lanes]``, masked-off lanes already ``+0``) the pairwise
    tree sum in ``v.dtype`` (fp16: saturated, as WholeReduceSum documents)."""
    with np.errstate(all="ignore"):
        while v.shape[1] > 1:
            a, b = v[:, 0::2], v[:, 1::2]
            s = a + b
            if v.dtype == F16:
                over = np.isinf(s) & np.isfinite(a) & np.isfinite(b)
                s = np.where(over, np.copysign(np.float16(HALF_MAX), s), s)
            v = s
    return v[:, 0]


class AscendcRowFunctions(AscendcFunctionsBase):
    """``WholeReduceSum`` / ``WholeReduceMax`` and ``Brcb``."""

    @impl(ac.BrcbOp)
    def run_brcb(self, interpreter: Interpreter, op: ac.BrcbOp, args: PythonValues) -> PythonValues:
        """DataBlock ``r*dstRepStride + j*dstBlkStride`` of ``dst`` = ``src[8r + j]``."""
        dst, src, repeat = args
        repeat = as_int(repeat)
        if not 0 <= repeat <= MAX_REPEAT:
            raise api_fail(op, "Brcb", f"repeatTime {repeat} is outside [0, {MAX_REPEAT}]")
        if repeat == 0:
            return ()
        bs, rs = op.strides
        per_block = DATA_BLOCK_BYTES // src.dtype.itemsize
        state = block_state(interpreter)
        s = local_view(op, "Brcb", "src0", src, repeat * 8, state.ub)
        blocks = (np.arange(repeat)[:, None] * rs + np.arange(8)[None, :] * bs).ravel()
        at = (blocks[:, None] * per_block + np.arange(per_block)[None, :]).ravel()
        d = local_view(op, "Brcb", "dst", dst, int(at.max()) + 1, state.ub)
        vals = np.repeat(s.copy(), per_block)  # reads all of src0 before writing
        ok = lanes_defined(state, src, repeat * 8) if state.shadow is not None else None
        d[at] = vals
        if ok is not None:
            sh = shadow_lanes(state, dst, int(at.max()) + 1)
            sh[at] = np.where(np.repeat(ok, per_block), np.iinfo(sh.dtype).max, 0)
        return ()

    @impl(ac.WholeReduceOp)
    def run_whole_reduce(
        self, interpreter: Interpreter, op: ac.WholeReduceOp, args: PythonValues
    ) -> PythonValues:
        """``dst[r * dstRepStride] = reduce(active lanes of repeat r)`` (module doc)."""
        dst, src, mask, repeat = args
        mask, repeat = as_int(mask), as_int(repeat)
        api = op.api.data
        dt = src.dtype
        lanes = VECTOR_REPEAT_BYTES // dt.itemsize
        per_block = DATA_BLOCK_BYTES // dt.itemsize
        if not 1 <= mask <= lanes:
            raise api_fail(op, api, f"mask {mask} is outside [1, {lanes}]")
        if not 0 <= repeat <= MAX_REPEAT:
            raise api_fail(op, api, f"repeatTime {repeat} is outside [0, {MAX_REPEAT}]")
        if repeat == 0:
            return ()
        d_rep, s_blk, s_rep = op.strides
        k = np.arange(mask)
        at = (
            np.arange(repeat)[:, None] * (s_rep * per_block)
            + (k // per_block * s_blk * per_block + k % per_block)[None, :]
        )
        state = block_state(interpreter)
        s = local_view(op, api, "src", src, int(at.max()) + 1, state.ub)
        out = (repeat - 1) * d_rep + 1
        d = local_view(op, api, "dst", dst, out, state.ub)
        x = s[at]
        if api == "WholeReduceSum":
            v = np.zeros((repeat, lanes), dt)
            v[:, :mask] = x
            res = whole_sum(v)
        else:
            res = reduce_max(x, axis=1)
        ok = None
        if state.shadow is not None:  # a result is defined iff every lane it reads is
            ok = lanes_defined(state, src, int(at.max()) + 1)[at].all(axis=1)
        d[np.arange(repeat) * d_rep] = res  # every repeat reads before any writes
        if ok is not None:
            sh = shadow_lanes(state, dst, out)
            sh[np.arange(repeat) * d_rep] = np.where(ok, np.iinfo(sh.dtype).max, 0)
        return ()
