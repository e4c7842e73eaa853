"""The multi-core ``ascendc`` ops: ``GetBlockIdx()``, views of the kernel's own GM workspace
and the cross-core barrier ``SyncAll()``.

``pyasc_mlir.dialects.ascendc`` re-exports the public names; import them from there.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IndexType, IntegerAttr, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
)

from pyasc_mlir.dialects.ascendc_types import GlobalTensorType, elem
from pyasc_mlir.dialects.bounds import check_sync_all_workspace, check_workspace_region

__all__ = ["CACHE_LINES", "DataCacheCleanOp", "GetBlockIdxOp", "SyncAllOp", "WorkspaceOp"]

CACHE_LINES = ("SINGLE_CACHE_LINE", "ENTIRE_DATA_CACHE")
"""``CacheLine`` modes of ``DataCacheCleanAndInvalid``: with an index, without."""


@irdl_op_definition
class GetBlockIdxOp(IRDLOperation):
    """``GetBlockIdx()``"""

    name = "ascendc.get_block_idx"
    result = result_def(IndexType)
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[IndexType()])


@irdl_op_definition
class WorkspaceOp(IRDLOperation):
    """``GlobalTensor<T> w; w.SetGlobalBuffer((__gm__ T*)(workspace + offset), count);``: a
    view of ``count`` elements of ``T`` (f16, bf16, f32, i8, i32, i64) at byte ``offset`` (a
    multiple of 32) of the kernel's own GM workspace, which the kernel's
    ``asc.workspace_bytes`` must cover. The region is shared by every core of the launch and
    zero-filled by the host; when the kernel also has the Matmul API's system workspace the
    kernel's own part follows it (``pyasc_mlir.cube_tiling.user_workspace_base``: the emitted
    address is ``workspace + base + offset``). Costs nothing by itself."""

    name = "ascendc.workspace"
    offset = prop_def(IntegerAttr[I64])
    count = prop_def(IntegerAttr[I64])
    result = result_def(GlobalTensorType)
    # bracketed: ``$count : type`` would parse as a typed integer attribute
    assembly_format = "`[` $offset `,` $count `]` attr-dict `:` type($result)"

    def __init__(self, offset: int, count: int, element_type: Attribute):
        super().__init__(
            properties={"offset": IntegerAttr(offset, i64), "count": IntegerAttr(count, i64)},
            result_types=[GlobalTensorType(element_type)],
        )

    @property
    def byte_offset(self) -> int:
        """``offset``: bytes into the kernel's own GM workspace."""
        return self.offset.value.data

    @property
    def elements(self) -> int:
        """``count``: elements of the view."""
        return self.count.value.data

    def verify_(self) -> None:
        check_workspace_region(self, self.byte_offset, self.elements, elem(self.result.type))


@irdl_op_definition
class SyncAllOp(IRDLOperation):
    """``SyncAll();``: the hard cross-core barrier of the vector cores: every block of the
    launch arrives before any goes on (documented for Atlas A2/A3:
    ``template <bool isAIVOnly = true> void SyncAll()``; the tiling's workspace size must not be
    0, so the enclosing kernel must declare a nonzero ``asc.workspace_bytes``; blockDim must
    not exceed the cores). Interpreter: the launch's blocks run as threads
    (``pyasc_mlir.interpreter.tile_grid``); CPU build: ``pyasc_run_grid``."""

    name = "ascendc.sync_all"
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()

    def verify_(self) -> None:
        check_sync_all_workspace(self)


@irdl_op_definition
class DataCacheCleanOp(IRDLOperation):
    """``DataCacheCleanAndInvalid<T, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(
    tensor[index])`` (with ``index``: the one 64-byte line holding that element) or
    ``DataCacheCleanAndInvalid<T, CacheLine::ENTIRE_DATA_CACHE, DcciDst::CACHELINE_OUT>(tensor)``
    (without: the core's whole data cache): writes the core's scalar (``SetValue``) data of
    those lines out to GM and invalidates them, so other cores and DMA see it and later
    ``GetValue`` calls read GM (Ascend C API reference, "DataCacheCleanAndInvalid"). The
    interpreter has no data cache (a no-op); the CPU runtime's memory-check builds model one
    (``pyasc_cpu/dcache.h``)."""

    name = "ascendc.dcache_clean"
    tensor = operand_def(GlobalTensorType)
    index = opt_operand_def(IndexType)
    assembly_format = "$tensor (`[` $index^ `]`)? attr-dict `:` type($tensor)"

    def __init__(self, tensor: SSAValue, index: SSAValue | None = None) -> None:
        super().__init__(operands=[tensor, [index] if index is not None else []])
