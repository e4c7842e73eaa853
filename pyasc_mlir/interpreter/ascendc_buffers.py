"""``ascendc`` setup, buffers and queues: ``SetGlobalBuffer``, ``TPipe::InitBuffer`` (queues and
``TBuf``), ``TBuf::Get``, ``AllocTensor``/``EnQue``/``DeQue``/``FreeTensor``, tensor
subviews, and the scalar calls (``GetBlockIdx``, tiling fields, ``SetFlag``/``WaitFlag``)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IndexType
from xdsl.interpreter import Interpreter, PythonValues, impl
from xdsl.interpreters.builtin import scalar_attr

from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.interpreter.ascendc_state import (
    ALLOCATED,
    FREE,
    QUEUED,
    AscendcFunctionsBase,
    GlobalTensor,
    LocalTensor,
    Queue,
    TBuf,
    api_fail,
    api_mem_fail,
    elem_dtype,
    pipe_of,
    round32,
)
from pyasc_mlir.interpreter.tile_state import as_int, block_state

__all__ = ["AscendcBufferFunctions"]


class AscendcBufferFunctions(AscendcFunctionsBase):
    """GM and UB tensors, queues and the scalar calls."""

    @impl(ac.GlobalBufferOp)
    def run_global_buffer(
        self, interpreter: Interpreter, op: ac.GlobalBufferOp, args: PythonValues
    ) -> PythonValues:
        """``SetGlobalBuffer``: the GM memref argument (a flat numpy array) as a
        GlobalTensor."""
        (arr,) = args
        if not isinstance(arr, np.ndarray):
            raise api_fail(
                op,
                "GlobalTensor::SetGlobalBuffer",
                f"expected a numpy array for the GM argument, got {type(arr).__name__}",
            )
        want = elem_dtype(op.result.type)
        if arr.dtype != want:
            raise api_fail(
                op,
                "GlobalTensor::SetGlobalBuffer",
                f"GM array has dtype {arr.dtype}; the tensor expects {want}",
            )
        if not arr.flags.c_contiguous:
            raise api_fail(
                op,
                "GlobalTensor::SetGlobalBuffer",
                "the GM array must be C-contiguous (writes must reach the caller)",
            )
        return (GlobalTensor(arr.reshape(-1), 0),)

    @impl(ac.InitQueueOp)
    def run_init_queue(
        self, interpreter: Interpreter, op: ac.InitQueueOp, args: PythonValues
    ) -> PythonValues:
        """``pipe.InitBuffer(que, num, len)``: ``num`` buffers of ``len`` bytes (rounded up
        to 32) from the next free UB byte."""
        num, length = op.num.value.data, op.length.value.data
        if num <= 0 or length < 0:
            raise api_fail(
                op, "TPipe::InitBuffer", f"invalid queue buffer count {num} or length {length}"
            )
        length = round32(length)
        pipe = pipe_of(block_state(interpreter))
        base = pipe.take(op, num * length)
        pipe.record(base, num * length, op.position.data)
        return (Queue(op.position.data, base, length, num, [FREE] * num),)

    @impl(ac.InitTBufOp)
    def run_init_tbuf(
        self, interpreter: Interpreter, op: ac.InitTBufOp, args: PythonValues
    ) -> PythonValues:
        """``pipe.InitBuffer(tbuf, len)``: ``len`` bytes (rounded up to 32)."""
        length = op.length.value.data
        if length < 0:
            raise api_fail(op, "TPipe::InitBuffer", f"invalid buffer length {length}")
        length = round32(length)
        pipe = pipe_of(block_state(interpreter))
        base = pipe.take(op, length)
        pipe.record(base, length, op.position_name)
        return (TBuf(base, length, op.position_name),)

    @impl(ac.TBufGetOp)
    def run_tbuf_get(
        self, interpreter: Interpreter, op: ac.TBufGetOp, args: PythonValues
    ) -> PythonValues:
        """``b.Get<T>()[offset]``."""
        (buf,) = args
        dtype = self.result_dtype(op, op.result.type)
        size = buf.length // dtype.itemsize
        off = op.offset.value.data
        if not 0 <= off <= size:
            raise api_mem_fail(
                op,
                "TBuf::Get",
                f"offset {off} out of range for a "
                f"{buf.length}-byte buffer of {size} {dtype} "
                "elements",
            )
        return (LocalTensor(buf.base + off * dtype.itemsize, dtype, size - off),)

    # ------------------------------------------------------------------ queues

    @impl(ac.AllocTensorOp)
    def run_alloc_tensor(
        self, interpreter: Interpreter, op: ac.AllocTensorOp, args: PythonValues
    ) -> PythonValues:
        """``q.AllocTensor<T>()``: the next buffer round-robin; it must be free."""
        (q,) = args
        k = q.next
        if q.slots[k] != FREE:
            state = "still enqueued" if q.slots[k] == QUEUED else "still allocated"
            raise api_fail(
                op,
                "TQue::AllocTensor",
                f"buffer {k} of {q.num} (UB offset "
                f"{q.base + k * q.length}) was not freed yet "
                f"({state})",
            )
        q.slots[k] = ALLOCATED
        q.next = (k + 1) % q.num
        dtype = self.result_dtype(op, op.result.type)
        return (LocalTensor(q.base + k * q.length, dtype, q.length // dtype.itemsize),)

    @impl(ac.EnQueOp)
    def run_enque(
        self, interpreter: Interpreter, op: ac.EnQueOp, args: PythonValues
    ) -> PythonValues:
        """``q.EnQue(t)``: an allocated tensor of this queue joins the FIFO."""
        q, t = args
        k = q.slot_of(op, "TQue::EnQue", t.offset)
        if q.slots[k] != ALLOCATED:
            raise api_fail(
                op,
                "TQue::EnQue",
                f"buffer {k} (UB offset {t.offset}) is not an allocated tensor of this queue",
            )
        q.slots[k] = QUEUED
        q.fifo.append((t.offset, t.nbytes))
        return ()

    @impl(ac.DeQueOp)
    def run_deque(
        self, interpreter: Interpreter, op: ac.DeQueOp, args: PythonValues
    ) -> PythonValues:
        """``q.DeQue<T>()``: the oldest enqueued tensor."""
        (q,) = args
        if not q.fifo:
            raise api_fail(op, "TQue::DeQue", "queue is empty")
        off, nbytes = q.fifo.popleft()
        q.slots[(off - q.base) // q.length] = ALLOCATED
        dtype = self.result_dtype(op, op.result.type)
        return (LocalTensor(off, dtype, nbytes // dtype.itemsize),)

    @impl(ac.FreeTensorOp)
    def run_free_tensor(
        self, interpreter: Interpreter, op: ac.FreeTensorOp, args: PythonValues
    ) -> PythonValues:
        """``q.FreeTensor(t)``: the buffer may be allocated again."""
        q, t = args
        k = q.slot_of(op, "TQue::FreeTensor", t.offset)
        if q.slots[k] == FREE:
            raise api_fail(
                op, "TQue::FreeTensor", f"buffer {k} (UB offset {t.offset}) is already free"
            )
        if q.slots[k] == QUEUED:
            raise api_fail(
                op,
                "TQue::FreeTensor",
                f"buffer {k} (UB offset {t.offset}) is still enqueued (DeQue it first)",
            )
        q.slots[k] = FREE
        return ()

    @impl(ac.SubviewOp)
    def run_subview(
        self, interpreter: Interpreter, op: ac.SubviewOp, args: PythonValues
    ) -> PythonValues:
        """``t[offset]``: ``offset`` elements later (``offset == size`` gives an empty view)."""
        t, off = args
        off = as_int(off)
        if isinstance(t, LocalTensor):
            if not 0 <= off <= t.size:
                raise api_mem_fail(
                    op,
                    "LocalTensor::operator[]",
                    f"offset {off} out of range for tensor at UB offset {t.offset} "
                    f"with {t.size} elements",
                )
            return (LocalTensor(t.offset + off * t.dtype.itemsize, t.dtype, t.size - off),)
        if not 0 <= off <= t.size:
            raise api_mem_fail(
                op,
                "GlobalTensor::operator[]",
                f"offset {off} out of range for {t.size} elements (GM array of "
                f"{t.array.size}, view at {t.offset})",
            )
        return (GlobalTensor(t.array, t.offset + off),)

    @impl(ac.WorkspaceOp)
    def run_workspace(
        self, interpreter: Interpreter, op: ac.WorkspaceOp, args: PythonValues
    ) -> PythonValues:
        """``SetGlobalBuffer(workspace + base + offset, count)``: ``count`` elements of the
        launch's GM workspace (shared by its blocks, ``tile_grid``) from byte ``offset`` of the
        kernel's own part."""
        state = block_state(interpreter)
        ws = state.workspace
        dt = self.result_dtype(op, op.result.type)
        start = state.workspace_base + op.byte_offset
        end = start + op.elements * dt.itemsize
        have = 0 if ws is None else ws.size
        if ws is None or end > have:
            raise api_mem_fail(
                op,
                "GlobalTensor::SetGlobalBuffer",
                f"workspace bytes [{start}, {end}) outside the launch's {have}-byte GM "
                "workspace (the kernel's asc.workspace_bytes must cover every region; a "
                "kernel run by hand gets one with block_state(interpreter).workspace)",
            )
        return (GlobalTensor(ws[start:end].view(dt), 0),)

    @impl(ac.DataCacheCleanOp)
    def run_dcache_clean(
        self, interpreter: Interpreter, op: ac.DataCacheCleanOp, args: PythonValues
    ) -> PythonValues:
        """``DataCacheCleanAndInvalid``: the interpreter has no data cache (GM is coherent)."""
        return ()

    @impl(ac.SyncAllOp)
    def run_sync_all(
        self, interpreter: Interpreter, op: ac.SyncAllOp, args: PythonValues
    ) -> PythonValues:
        """``SyncAll()``: wait until every block of the launch arrived (``tile_grid.Grid``);
        a launch of one block passes. The hard form needs a GM workspace."""
        state = block_state(interpreter)
        if state.num <= 1:
            return ()
        if state.grid is None:
            raise api_fail(
                op,
                "SyncAll",
                f"block {state.idx} of {state.num} runs alone: blocks run one after another "
                "cannot wait for each other; launch the kernel with asc.launch (or "
                "pyasc_mlir.interpreter.tile_grid.run_blocks), which runs them as threads",
            )
        if state.workspace is None or state.workspace.size == 0:
            raise api_fail(
                op, "SyncAll", "the hard SyncAll() needs a GM workspace; the launch passes none"
            )
        state.grid.sync(op, state.idx)
        return ()

    # ------------------------------------------------------------------ scalars

    @impl(ac.GetBlockIdxOp)
    def run_get_block_idx(
        self, interpreter: Interpreter, op: ac.GetBlockIdxOp, args: PythonValues
    ) -> PythonValues:
        """``GetBlockIdx()``."""
        return (scalar_attr(block_state(interpreter).idx, IndexType(), interpreter.index_bitwidth),)

    @impl(ac.TilingFieldOp)
    def run_tiling_field(
        self, interpreter: Interpreter, op: ac.TilingFieldOp, args: PythonValues
    ) -> PythonValues:
        """``tiling.FIELD`` from the block's tiling values (the kernel's ``asc.tiling``)."""
        tiling = block_state(interpreter).tiling
        name = op.field.data
        if name not in tiling:
            raise api_fail(
                op, "tiling", f"no tiling field {name!r}; the kernel has {sorted(tiling) or 'none'}"
            )
        return (scalar_attr(tiling[name], IndexType(), interpreter.index_bitwidth),)

    @impl(ac.SyncOp)
    def run_sync(self, interpreter: Interpreter, op: ac.SyncOp, args: PythonValues) -> PythonValues:
        """``SetFlag``/``WaitFlag``: a no-op (execution is sequential)."""
        return ()
