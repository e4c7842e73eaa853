"""Tile-level buffers and copies: ``asc.alloc`` (UB views, double-buffer rotation) and the
GM <-> UB copies ``asc.copy_in`` / ``asc.copy_out``."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.interpreter import Interpreter, PythonValues, impl

from pyasc_mlir.dialects.asc import AllocOp, CopyInOp, CopyOutOp
from pyasc_mlir.interpreter.tile_access import block_view, is_mask, mask_bits, store_bits
from pyasc_mlir.interpreter.tile_memcheck import (
    address,
    defined,
    full_value,
    shadow_of,
    uninit_error,
)
from pyasc_mlir.interpreter.tile_state import (
    TileFunctionsBase,
    as_int,
    block_state,
    fresh_buffer,
    np_dtype,
    tile_mem_fail,
)

__all__ = ["TileMemoryFunctions"]


class TileMemoryFunctions(TileFunctionsBase):
    """``asc.alloc``, ``asc.copy_in``, ``asc.copy_out``."""

    @impl(AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: AllocOp, args: PythonValues) -> PythonValues:
        """A fresh poisoned buffer, or with ``offset`` a view into UB that rotates over
        ``buffers`` copies each time the op runs."""
        state = block_state(interpreter)
        entry = state.allocs.get(op)
        if entry is None:
            t = op.result.type
            assert isinstance(t, MemRefType)
            dtype = np_dtype(t.element_type)
            nbytes = op.nbytes
            elements = nbytes // dtype.itemsize
            offset = None if op.offset is None else op.offset.value.data
            entry = [dtype, elements, nbytes, offset, op.buffers.value.data, 0]
            state.allocs[op] = entry
        dtype, elements, nbytes, offset, buffers, k = entry
        entry[5] = k + 1
        if offset is None:
            arr = fresh_buffer(dtype, elements)
            if state.shadow is not None:
                state.fresh.append((address(arr), arr, np.zeros(arr.nbytes, np.uint8)))
            return (arr,)
        start = offset + (k % buffers) * nbytes
        ub = state.ub
        if start < 0 or start + nbytes > ub.size:
            raise tile_mem_fail(
                op,
                f"buffer {k % buffers} of {buffers} ({nbytes} bytes at UB "
                f"offset {start}) ends at byte {start + nbytes}, past the end "
                f"of UB ({ub.size} bytes)",
            )
        return (ub[start : start + nbytes].view(dtype),)

    @impl(CopyInOp)
    def run_copy_in(
        self, interpreter: Interpreter, op: CopyInOp, args: PythonValues
    ) -> PythonValues:
        """GM -> UB: ``count`` blocks of ``length`` elements (see ``_CopyBase``)."""
        gm, ub, gm_off, ub_off, count, length, gap, stride = args
        count, length = as_int(count), as_int(length)
        if count <= 0 or length <= 0:
            return ()
        gm_off, ub_off, gap, stride = as_int(gm_off), as_int(ub_off), as_int(gap), as_int(stride)
        sh = shadow_of(block_state(interpreter), ub)
        if is_mask(ub):
            gm_bits, ub_bits = mask_bits(gm), mask_bits(ub)
            src = block_view(op, "GM", gm_bits, gm_off, count, length, length + gap)
            block_view(op, "UB", ub_bits, ub_off, count, length, stride)[...] = src
            store_bits(ub, ub_bits)
            if sh is not None:
                sh_bits = mask_bits(sh)
                block_view(op, "UB", sh_bits, ub_off, count, length, stride)[...] = True
                store_bits(sh, sh_bits)
            return ()
        src = block_view(op, "GM", gm, gm_off, count, length, length + gap)
        dst = block_view(op, "UB", ub, ub_off, count, length, stride)
        dst[...] = src
        if sh is not None:
            block_view(op, "UB", sh, ub_off, count, length, stride)[...] = full_value(sh)
        return ()

    @impl(CopyOutOp)
    def run_copy_out(
        self, interpreter: Interpreter, op: CopyOutOp, args: PythonValues
    ) -> PythonValues:
        """UB -> GM: exactly ``length`` elements per block (see ``_CopyBase``)."""
        ub, gm, gm_off, ub_off, count, length, gap, stride = args
        count, length = as_int(count), as_int(length)
        if count <= 0 or length <= 0:
            return ()
        gm_off, ub_off, gap, stride = as_int(gm_off), as_int(ub_off), as_int(gap), as_int(stride)
        sh = shadow_of(block_state(interpreter), ub)
        if sh is not None:
            ok = block_view(
                op,
                "UB",
                mask_bits(sh) if is_mask(ub) else defined(sh),
                ub_off,
                count,
                length,
                stride,
            )
            if not ok.all():
                k, j = (int(v) for v in np.argwhere(~ok)[0])
                raise uninit_error(
                    op, f"block {k} of {count}, element {j} of {length}", ub_off + k * stride + j
                )
        if is_mask(ub):
            gm_bits, ub_bits = mask_bits(gm), mask_bits(ub)
            src = block_view(op, "UB", ub_bits, ub_off, count, length, stride)
            block_view(op, "GM", gm_bits, gm_off, count, length, length + gap)[...] = src
            store_bits(gm, gm_bits)
            return ()
        src = block_view(op, "UB", ub, ub_off, count, length, stride)
        dst = block_view(op, "GM", gm, gm_off, count, length, length + gap)
        dst[...] = src
        return ()
