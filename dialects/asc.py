"""The ``asc`` dialect: Ascend operators at tensor level and at tile level.

Tensor level (value semantics on builtin ``tensor<...>``, dtypes f16/f32, masks i1):
elementwise ``asc.unary``/``asc.binary``/``asc.compare``/``asc.select``/``asc.cast``,
``asc.constant`` (a splat), ``asc.broadcast`` (NumPy rules, explicit), ``asc.reduce``,
``asc.reshape``, ``asc.matmul`` (Cube unit, f32 accumulation), the data-movement ops
``asc.transpose``/``asc.concat``/``asc.slice`` and ``asc.fusion`` (one region = one kernel).

Tile level (destination-passing style on flat ``memref<N x T, #asc.scope<...>>`` buffers):
``asc.alloc``, ``asc.copy_in``/``asc.copy_out`` (GM <-> UB strided block copies, element units),
vector ops ``asc.v*`` in count form, ``asc.mmad`` (a Cube output block into UB),
``asc.block_idx``/``asc.block_num``, ``asc.tiling_field`` and
``asc.launch`` (host side: run a kernel over ``blockDim`` cores).

UB buffers hold tiles laid out as ``[rows, M, Ls]``: ``Ls`` is the trailing extent rounded up
to 16 elements so every row starts on a 32-byte DataBlock for both fp16 and fp32 (see
``docs/DESIGN.md``). Every op may carry a source location in the ``asc.loc`` attribute
(``"file:line:col"``).

This module is the import point: the definitions live in ``asc_attrs`` (kind tables,
``#asc.scope``, verifier helpers), ``asc_tensor`` (tensor-level ops), ``asc_layout`` (tensor-level
data movement) and ``asc_tile`` (tile-level ops).
"""

from __future__ import annotations

from xdsl.ir import Dialect

from pyasc_mlir.dialects.asc_attention import FlashAttentionOp
from pyasc_mlir.dialects.asc_attrs import (
    ALLOC_ROLES,
    BINARY_KINDS,
    COMPARE_PREDICATES,
    COMPOSITE_UNARY_KINDS,
    LOC_ATTR,
    REDUCE_KINDS,
    ROUND_MODES,
    SCALAR_KINDS,
    SCOPES,
    TORCH_PICK_ATTR,
    UNARY_KINDS,
    VECTOR_REDUCE_KINDS,
    VECTOR_UNARY_KINDS,
    ScopeAttr,
    buffer_type,
    element_bits,
    scope_of,
)
from pyasc_mlir.dialects.asc_layout import (
    ConcatOp,
    SliceOp,
    TransposeOp,
    concat_shape,
)
from pyasc_mlir.dialects.asc_tensor import (
    BinaryOp,
    BroadcastOp,
    CastOp,
    CompareOp,
    ConstantOp,
    FusionOp,
    MatmulOp,
    ReduceOp,
    ReshapeOp,
    SelectOp,
    UnaryOp,
    YieldOp,
    broadcast_shapes,
    matmul_shape,
)
from pyasc_mlir.dialects.asc_tile import (
    AllocOp,
    BlockIdxOp,
    BlockNumOp,
    CopyInOp,
    CopyOutOp,
    LaunchOp,
    MmadOp,
    TilingFieldOp,
    VBinaryOp,
    VCastOp,
    VCompareOp,
    VCopyOp,
    VDupOp,
    VIndexOp,
    VScalarOp,
    VSelectOp,
    VUnaryOp,
)
from pyasc_mlir.dialects.asc_tile_rows import VBroadcastOp, VReduceOp

__all__ = [
    "ALLOC_ROLES",
    "AllocOp",
    "Asc",
    "BINARY_KINDS",
    "BinaryOp",
    "BlockIdxOp",
    "BlockNumOp",
    "BroadcastOp",
    "COMPARE_PREDICATES",
    "COMPOSITE_UNARY_KINDS",
    "CastOp",
    "CompareOp",
    "ConcatOp",
    "ConstantOp",
    "CopyInOp",
    "CopyOutOp",
    "FlashAttentionOp",
    "FusionOp",
    "LOC_ATTR",
    "LaunchOp",
    "MatmulOp",
    "MmadOp",
    "REDUCE_KINDS",
    "ROUND_MODES",
    "ReduceOp",
    "ReshapeOp",
    "SCALAR_KINDS",
    "SCOPES",
    "ScopeAttr",
    "SelectOp",
    "SliceOp",
    "TilingFieldOp",
    "TransposeOp",
    "TORCH_PICK_ATTR",
    "UNARY_KINDS",
    "UnaryOp",
    "VBinaryOp",
    "VBroadcastOp",
    "VCastOp",
    "VCompareOp",
    "VCopyOp",
    "VDupOp",
    "VIndexOp",
    "VECTOR_REDUCE_KINDS",
    "VECTOR_UNARY_KINDS",
    "VReduceOp",
    "VScalarOp",
    "VSelectOp",
    "VUnaryOp",
    "YieldOp",
    "broadcast_shapes",
    "buffer_type",
    "concat_shape",
    "element_bits",
    "matmul_shape",
    "scope_of",
]

Asc = Dialect(
    "asc",
    [
        ConstantOp,
        UnaryOp,
        BinaryOp,
        CompareOp,
        SelectOp,
        CastOp,
        BroadcastOp,
        ReduceOp,
        ReshapeOp,
        FlashAttentionOp,
        MatmulOp,
        TransposeOp,
        ConcatOp,
        SliceOp,
        FusionOp,
        YieldOp,
        BlockIdxOp,
        BlockNumOp,
        TilingFieldOp,
        AllocOp,
        CopyInOp,
        CopyOutOp,
        VUnaryOp,
        VBinaryOp,
        VScalarOp,
        VDupOp,
        VIndexOp,
        VCopyOp,
        VCastOp,
        VCompareOp,
        VSelectOp,
        VReduceOp,
        VBroadcastOp,
        MmadOp,
        LaunchOp,
    ],
    [ScopeAttr],
)
