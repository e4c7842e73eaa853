"""The ``ascendc`` dialect: one op per Ascend C API call the emitter prints.

Values are ``!ascendc.local_tensor<T>`` (``LocalTensor<T>``), ``!ascendc.global_tensor<T>``
(``GlobalTensor<T>``), ``!ascendc.queue`` (``TQue``) and ``!ascendc.tbuf`` (``TBuf``). Index
arithmetic stays in ``arith`` and loops in ``scf``; the kernel is a ``func.func`` with the
``asc.kernel`` attribute whose arguments are GM addresses (``GM_ADDR``). The printer in
``pyasc_mlir.emitter`` turns each op into the call named in its docstring. Semantics: Ascend C
API reference, summarised in ``shared/ASCEND_FACTS.md``.

This module is the import point: the definitions live in ``ascendc_types`` (types),
``ascendc_ops`` (buffers, copies, vector calls, sync) and ``ascendc_matmul`` (the Matmul API).
"""

from __future__ import annotations

from xdsl.ir import Dialect

from pyasc_mlir.dialects.ascendc_matmul import (
    KERNEL_TYPES,
    CubeTilingOp,
    KernelTypeOp,
    MatmulEndOp,
    MatmulGetTensorCOp,
    MatmulIterateOp,
    MatmulObjectOp,
    MatmulSetTailOp,
    MatmulSetTensorAOp,
    MatmulSetTensorBOp,
    RegistMatmulOp,
    SetSysWorkspaceOp,
)
from pyasc_mlir.dialects.ascendc_ops import (
    CMP,
    EVENTS,
    POSITIONS,
    REDUCE,
    ROUND,
    VEC_BINARY,
    VEC_SCALAR,
    VEC_UNARY,
    AllocTensorOp,
    CastOp,
    CompareOp,
    DataCopyOp,
    DataCopyPadOp,
    DeQueOp,
    DuplicateOp,
    EnQueOp,
    FreeTensorOp,
    GetBlockIdxOp,
    GetValueOp,
    GlobalBufferOp,
    InitQueueOp,
    InitTBufOp,
    ReduceOp,
    SelectOp,
    SubviewOp,
    SyncOp,
    TBufGetOp,
    TilingFieldOp,
    VecBinaryOp,
    VecScalarOp,
    VecUnaryOp,
)
from pyasc_mlir.dialects.ascendc_types import (
    CubeTilingType,
    GlobalTensorType,
    LocalTensorType,
    MatmulObjType,
    QueueType,
    TBufType,
    Tensor,
    elem,
)

__all__ = [
    "AllocTensorOp",
    "Ascendc",
    "CMP",
    "CastOp",
    "CompareOp",
    "CubeTilingOp",
    "CubeTilingType",
    "DataCopyOp",
    "DataCopyPadOp",
    "DeQueOp",
    "DuplicateOp",
    "EVENTS",
    "EnQueOp",
    "FreeTensorOp",
    "GetBlockIdxOp",
    "GetValueOp",
    "GlobalBufferOp",
    "GlobalTensorType",
    "InitQueueOp",
    "InitTBufOp",
    "LocalTensorType",
    "MatmulEndOp",
    "MatmulGetTensorCOp",
    "MatmulIterateOp",
    "MatmulObjType",
    "MatmulObjectOp",
    "KERNEL_TYPES",
    "KernelTypeOp",
    "MatmulSetTailOp",
    "MatmulSetTensorAOp",
    "MatmulSetTensorBOp",
    "POSITIONS",
    "QueueType",
    "REDUCE",
    "ROUND",
    "ReduceOp",
    "RegistMatmulOp",
    "SelectOp",
    "SetSysWorkspaceOp",
    "SubviewOp",
    "SyncOp",
    "TBufGetOp",
    "TBufType",
    "Tensor",
    "TilingFieldOp",
    "VEC_BINARY",
    "VEC_SCALAR",
    "VEC_UNARY",
    "VecBinaryOp",
    "VecScalarOp",
    "VecUnaryOp",
    "elem",
]

Ascendc = Dialect(
    "ascendc",
    [GlobalBufferOp, InitQueueOp, InitTBufOp, TBufGetOp, AllocTensorOp, EnQueOp, DeQueOp,
     FreeTensorOp, SubviewOp, DataCopyOp, DataCopyPadOp, VecBinaryOp, VecUnaryOp, VecScalarOp,
     DuplicateOp, GetValueOp, CastOp, CompareOp, SelectOp, ReduceOp, GetBlockIdxOp,
     TilingFieldOp, SyncOp, CubeTilingOp, MatmulObjectOp, RegistMatmulOp, MatmulSetTensorAOp,
     MatmulSetTensorBOp, MatmulSetTailOp, MatmulIterateOp, MatmulGetTensorCOp, MatmulEndOp,
     KernelTypeOp, SetSysWorkspaceOp],
    [LocalTensorType, GlobalTensorType, QueueType, TBufType, MatmulObjType, CubeTilingType],
)
