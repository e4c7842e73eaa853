"""``ascendc`` data movement: ``DataCopy`` (GM->UB, UB->GM, UB->UB; whole 32-byte blocks) and
``DataCopyPad`` (blocks of any byte length, 32-byte aligned in UB)."""

from __future__ import annotations

from xdsl.interpreter import Interpreter, PythonValues, impl

from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.interpreter.ascendc_access import (
    byte_rows,
    global_bytes,
    local_bytes,
    require_defined,
)
from pyasc_mlir.interpreter.ascendc_state import (
    AscendcFunctionsBase,
    LocalTensor,
    api_fail,
    check_from_gm,
    round32,
)
from pyasc_mlir.interpreter.tile_state import BlockState, as_int, block_state
from pyasc_mlir.platform import DATA_BLOCK_BYTES

__all__ = ["AscendcCopyFunctions"]


def _pad_memcheck(
    op: ac.DataCopyPadOp,
    api: str,
    state: BlockState,
    t: LocalTensor,
    inbound: bool,
    n: int,
    length: int,
    ub_step: int,
    ub_end: int,
) -> None:
    """Memory check of ``DataCopyPad``: GM->UB defines the ``n`` UB blocks of ``length``
    bytes (the padding, isPad false, keeps its old contents and shadow); UB->GM requires them
    defined."""
    assert state.shadow is not None
    sh_rows = byte_rows(state.shadow[t.offset : t.offset + ub_end], n, length, ub_step)
    if inbound:
        sh_rows[...] = 0xFF
        return
    for k in range(n):
        if not (sh_rows[k] == 0xFF).all():
            require_defined(op, api, "src", t, k * ub_step, length, state, f" block {k} of {n},")


class AscendcCopyFunctions(AscendcFunctionsBase):
    """``DataCopy`` and ``DataCopyPad``."""

    @impl(ac.DataCopyOp)
    def run_data_copy(
        self, interpreter: Interpreter, op: ac.DataCopyOp, args: PythonValues
    ) -> PythonValues:
        """``DataCopy(dst, src, count)``: ``count*sizeof(T)`` bytes rounded DOWN to a
        multiple of 32."""
        dst, src, count = args
        count = as_int(count)
        dst_ub, src_ub = isinstance(dst, LocalTensor), isinstance(src, LocalTensor)
        api = (
            "DataCopy(UB->UB)"
            if dst_ub and src_ub
            else "DataCopy(GM->UB)"
            if dst_ub
            else "DataCopy(UB->GM)"
        )
        if count < 0:
            raise api_fail(op, api, f"negative count {count}")
        if not dst_ub and not src_ub:
            raise api_fail(op, api, "GM->GM copies are not supported")
        if dst_ub and not src_ub:
            check_from_gm(op, api, block_state(interpreter), dst)
        isz = self.copy_dtype(op, api).itemsize
        nbytes = count * isz // DATA_BLOCK_BYTES * DATA_BLOCK_BYTES
        ub = block_state(interpreter).ub
        d = (
            local_bytes(op, api, "dst", dst, nbytes, ub)
            if dst_ub
            else global_bytes(op, api, "dst", dst, nbytes)
        )
        s = (
            local_bytes(op, api, "src", src, nbytes, ub)
            if src_ub
            else global_bytes(op, api, "src", src, nbytes)
        )
        state = block_state(interpreter)
        if state.shadow is not None and nbytes:
            sh = state.shadow
            if not src_ub:
                sh[dst.offset : dst.offset + nbytes] = 0xFF
            elif not dst_ub:
                require_defined(op, api, "src", src, 0, nbytes, state)
            else:
                sh[dst.offset : dst.offset + nbytes] = sh[src.offset : src.offset + nbytes].copy()
        if nbytes:
            d[...] = s
        return ()

    @impl(ac.DataCopyPadOp)
    def run_data_copy_pad(
        self, interpreter: Interpreter, op: ac.DataCopyPadOp, args: PythonValues
    ) -> PythonValues:
        """``DataCopyPad``: ``block_count`` blocks of ``block_len`` bytes. GM->UB: GM gap
        ``src_stride`` bytes; each block lands 32-byte aligned in UB, padded up to 32 bytes
        (padding keeps the old UB bytes), UB gap ``dst_stride`` 32-byte blocks. UB->GM: UB
        blocks start 32-byte aligned with gap ``src_stride`` 32-byte blocks; exactly
        ``block_len`` bytes are written per block, GM gap ``dst_stride`` bytes."""
        dst, src, n, length, src_stride, dst_stride = args
        n, length = as_int(n), as_int(length)
        src_stride, dst_stride = as_int(src_stride), as_int(dst_stride)
        inbound = isinstance(dst, LocalTensor)
        api = "DataCopyPad(GM->UB)" if inbound else "DataCopyPad(UB->GM)"
        if inbound:
            check_from_gm(op, api, block_state(interpreter), dst)
        isz = self.copy_dtype(op, api).itemsize
        if min(n, length, src_stride, dst_stride) < 0:
            raise api_fail(
                op,
                api,
                f"negative parameter: blockCount {n}, blockLen {length}, "
                f"srcStride {src_stride}, dstStride {dst_stride}",
            )
        if length % isz:
            raise api_fail(op, api, f"blockLen {length} bytes is not a multiple of {isz}")
        ub = block_state(interpreter).ub
        padded = round32(length)
        if inbound:
            gm_step, ub_step = length + src_stride, padded + dst_stride * DATA_BLOCK_BYTES
            ub_end = (n - 1) * ub_step + padded if n else 0
            ub_bytes = local_bytes(op, api, "dst", dst, ub_end, ub)
        else:
            gm_step, ub_step = length + dst_stride, padded + src_stride * DATA_BLOCK_BYTES
            ub_end = (n - 1) * ub_step + length if n and length else 0
            ub_bytes = local_bytes(op, api, "src", src, ub_end, ub)
        gm_end = (n - 1) * gm_step + length if n and length else 0
        gm_bytes = global_bytes(
            op, api, "src" if inbound else "dst", src if inbound else dst, gm_end
        )
        if not n or not length:
            return ()
        state = block_state(interpreter)
        if state.shadow is not None:
            _pad_memcheck(
                op, api, state, dst if inbound else src, inbound, n, length, ub_step, ub_end
            )
        ub_rows = byte_rows(ub_bytes, n, length, ub_step)
        gm_rows = byte_rows(gm_bytes, n, length, gm_step)
        if inbound:
            ub_rows[...] = gm_rows
        else:
            gm_rows[...] = ub_rows
        return ()
