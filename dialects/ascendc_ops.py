"""The ``ascendc`` ops of the vector core's API: GM views, ``TQue``/``TBuf`` buffers,
``DataCopy``/``DataCopyPad``, the vector calls (``Add``, ``Exp``, ``Adds``, ``Duplicate``,
``Cast``, ``Compare``, ``Select``, ``ReduceSum`` ...), tiling-struct fields and the pipe
synchronisation, with the tables of the API names they accept (derived from the op
table ``pyasc_mlir.dialects.opset``).

``pyasc_mlir.dialects.ascendc`` re-exports the public names; import them from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects import opset
from pyasc_mlir.dialects.asc_attrs import element_bits
from pyasc_mlir.dialects.ascendc_types import (
    GlobalTensorType,
    LocalTensorType,
    QueueType,
    TBufType,
    Tensor,
    elem,
)
from pyasc_mlir.dialects.bounds import (
    check_not_negative,
    check_tiling_field,
)


def _calls(records: dict[str, opset.OpRecord]) -> dict[str, str]:
    """Kind -> Ascend C call name of the records that have a call."""
    return {k: r.call.name for k, r in records.items() if r.call is not None}


VEC_BINARY = _calls(opset.BINARY)
VEC_UNARY = _calls(opset.UNARY)
VEC_SCALAR = _calls(opset.SCALAR)
REDUCE = _calls(opset.REDUCE)
"""Kind -> Ascend C call of the vector binary, unary, scalar and reduce ops (the op table)."""
ROUND = {
    "none": "CAST_NONE",
    "rint": "CAST_RINT",
    "floor": "CAST_FLOOR",
    "ceil": "CAST_CEIL",
    "round": "CAST_ROUND",
    "trunc": "CAST_TRUNC",
    "odd": "CAST_ODD",
}
"""``asc.vcast`` round mode -> ``RoundMode`` enumerator of ``Cast``."""
CMP = _calls(opset.COMPARE)
"""Predicate -> ``CMPMODE`` enumerator."""
EVENTS = (
    "MTE2_V",
    "V_MTE3",
    "MTE3_V",
    "V_S",
    "S_V",
    "MTE2_S",
    "S_MTE3",
    "MTE3_MTE2",
    "V_MTE2",
)
"""``HardEvent`` enumerators of ``ascendc.sync`` (producer pipe ``_`` consumer pipe)."""
POSITIONS = ("VECIN", "VECOUT")
"""``TPosition`` enumerators of ``ascendc.init_queue``."""
TBUF_POSITIONS = ("VECCALC", "VECIN")
"""``TPosition`` enumerators of ``ascendc.init_tbuf``: VECIN when data comes into it from GM
(``DataCopy``/``DataCopyPad``; the documented paths are GM -> VECIN/VECOUT) or from
``GetTensorC`` (C to VECIN)."""


@irdl_op_definition
class GlobalBufferOp(IRDLOperation):
    """``GlobalTensor<T> g; g.SetGlobalBuffer((__gm__ T*)addr, size);``"""

    name = "ascendc.global_buffer"
    addr = operand_def(MemRefType)
    result = result_def(GlobalTensorType)
    assembly_format = "$addr attr-dict `:` type($addr) `->` type($result)"

    def __init__(self, addr: SSAValue):
        t = addr.type
        assert isinstance(t, MemRefType)
        super().__init__(operands=[addr], result_types=[GlobalTensorType(t.element_type)])


@irdl_op_definition
class InitQueueOp(IRDLOperation):
    """``TQue<TPosition::P, 1> q; pipe.InitBuffer(q, num, len);``"""

    name = "ascendc.init_queue"
    position = prop_def(StringAttr)
    num = prop_def(IntegerAttr)
    length = prop_def(IntegerAttr)
    result = result_def(QueueType)
    assembly_format = "$position $num $length attr-dict"

    def __init__(self, position: str, num: int, length: int):
        super().__init__(
            properties={
                "position": StringAttr(position),
                "num": IntegerAttr(num, 64),
                "length": IntegerAttr(length, 64),
            },
            result_types=[QueueType()],
        )

    def verify_(self) -> None:
        if self.position.data not in POSITIONS:
            raise VerifyException(f"{self.name}: position must be one of {POSITIONS}")


@irdl_op_definition
class InitTBufOp(IRDLOperation):
    """``TBuf<TPosition::P> b; pipe.InitBuffer(b, len);`` (``P`` = ``position``, VECCALC
    when absent; VECIN when data comes into it from GM or from ``GetTensorC``)."""

    name = "ascendc.init_tbuf"
    irdl_options = (ParsePropInAttrDict(),)
    length = prop_def(IntegerAttr)
    position = opt_prop_def(StringAttr)
    result = result_def(TBufType)
    assembly_format = "$length attr-dict"

    def __init__(self, length: int, position: str = "VECCALC"):
        props: dict[str, Attribute] = {"length": IntegerAttr(length, 64)}
        if position != "VECCALC":
            props["position"] = StringAttr(position)
        super().__init__(properties=props, result_types=[TBufType()])

    @property
    def position_name(self) -> str:
        """``VECCALC``, ``VECIN`` or ``VECOUT``."""
        return self.position.data if self.position is not None else "VECCALC"

    def verify_(self) -> None:
        if self.position_name not in TBUF_POSITIONS:
            raise VerifyException(f"{self.name}: position must be one of {TBUF_POSITIONS}")


@irdl_op_definition
class TBufGetOp(IRDLOperation):
    """``b.Get<T>()[offset]`` (offset in elements of T)."""

    name = "ascendc.tbuf_get"
    buf = operand_def(TBufType)
    offset = prop_def(IntegerAttr)
    result = result_def(LocalTensorType)
    assembly_format = "$buf `[` $offset `]` attr-dict `:` type($result)"

    def __init__(self, buf: SSAValue, offset: int, dtype: Attribute):
        super().__init__(
            operands=[buf],
            properties={"offset": IntegerAttr(offset, 64)},
            result_types=[LocalTensorType(dtype)],
        )

    def verify_(self) -> None:
        offset = self.offset.value.data
        if offset < 0:
            raise VerifyException(f"{self.name}: offset {offset} is negative")
        init = self.buf.owner
        if isinstance(init, InitTBufOp):
            nbytes = init.length.value.data
            at = offset * element_bits(elem(self.result.type)) // 8
            if at >= nbytes:
                raise VerifyException(
                    f"{self.name}: offset {offset} (byte {at}) is past the "
                    f"end of the {nbytes}-byte TBuf"
                )


@irdl_op_definition
class AllocTensorOp(IRDLOperation):
    """``q.AllocTensor<T>()``"""

    name = "ascendc.alloc_tensor"
    queue = operand_def(QueueType)
    result = result_def(LocalTensorType)
    assembly_format = "$queue attr-dict `:` type($result)"

    def __init__(self, queue: SSAValue, dtype: Attribute):
        super().__init__(operands=[queue], result_types=[LocalTensorType(dtype)])


@irdl_op_definition
class EnQueOp(IRDLOperation):
    """``q.EnQue(t)``"""

    name = "ascendc.enque"
    queue = operand_def(QueueType)
    tensor = operand_def(LocalTensorType)
    assembly_format = "$queue `,` $tensor attr-dict `:` type($tensor)"

    def __init__(self, queue: SSAValue, tensor: SSAValue):
        super().__init__(operands=[queue, tensor])


@irdl_op_definition
class DeQueOp(IRDLOperation):
    """``q.DeQue<T>()``"""

    name = "ascendc.deque"
    queue = operand_def(QueueType)
    result = result_def(LocalTensorType)
    assembly_format = "$queue attr-dict `:` type($result)"

    def __init__(self, queue: SSAValue, dtype: Attribute):
        super().__init__(operands=[queue], result_types=[LocalTensorType(dtype)])


@irdl_op_definition
class FreeTensorOp(IRDLOperation):
    """``q.FreeTensor(t)``"""

    name = "ascendc.free_tensor"
    queue = operand_def(QueueType)
    tensor = operand_def(LocalTensorType)
    assembly_format = "$queue `,` $tensor attr-dict `:` type($tensor)"

    def __init__(self, queue: SSAValue, tensor: SSAValue):
        super().__init__(operands=[queue, tensor])


@irdl_op_definition
class SubviewOp(IRDLOperation):
    """``t[offset]``: a view ``offset`` elements later (local or global tensor)."""

    name = "ascendc.subview"
    source = operand_def(Tensor)
    offset = operand_def(IndexType)
    result = result_def(Tensor)
    assembly_format = "$source `[` $offset `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, offset: SSAValue):
        super().__init__(operands=[source, offset], result_types=[source.type])

    def verify_(self) -> None:
        check_not_negative(self, offset=self.offset)


@irdl_op_definition
class DataCopyOp(IRDLOperation):
    """``DataCopy(dst, src, count)``: GM->UB, UB->GM or UB->UB; ``count*sizeof(T)`` must be a
    multiple of 32 bytes (the hardware rounds down otherwise)."""

    name = "ascendc.data_copy"
    dst = operand_def(Tensor)
    src = operand_def(Tensor)
    count = operand_def(IndexType)
    assembly_format = "$dst `,` $src `,` $count attr-dict `:` type($dst) `,` type($src)"

    def __init__(self, dst: SSAValue, src: SSAValue, count: SSAValue):
        super().__init__(operands=[dst, src, count])

    def verify_(self) -> None:
        # A count that is not whole DataBlocks is legal Ascend C (the hardware rounds it
        # down, which the interpreters model); only its sign is checked here.
        check_not_negative(self, count=self.count)


@irdl_op_definition
class DataCopyPadOp(IRDLOperation):
    """``DataCopyPad(dst, src, DataCopyExtParams{block_count, block_len, src_stride,
    dst_stride, 0}[, DataCopyPadExtParams<T>{false, 0, 0, 0}])``: block_len in bytes; the GM
    side's stride in bytes, the UB side's in 32-byte blocks."""

    name = "ascendc.data_copy_pad"
    dst = operand_def(Tensor)
    src = operand_def(Tensor)
    block_count = operand_def(IndexType)
    block_len = operand_def(IndexType)
    src_stride = operand_def(IndexType)
    dst_stride = operand_def(IndexType)
    assembly_format = (
        "$dst `,` $src `,` $block_count `,` $block_len `,` $src_stride `,` "
        "$dst_stride attr-dict `:` type($dst) `,` type($src)"
    )

    def __init__(self, dst: SSAValue, src: SSAValue, params: Sequence[SSAValue]):
        super().__init__(operands=[dst, src, *params])

    def verify_(self) -> None:
        kinds = {type(self.dst.type), type(self.src.type)}
        if kinds != {LocalTensorType, GlobalTensorType}:
            raise VerifyException(f"{self.name}: copies between GM and UB only")
        check_not_negative(
            self,
            block_count=self.block_count,
            block_len=self.block_len,
            src_stride=self.src_stride,
            dst_stride=self.dst_stride,
        )


@irdl_op_definition
class VecBinaryOp(IRDLOperation):
    """``Add|Sub|Mul|Div|Max|Min(dst, a, b, count)``."""

    T: ClassVar = VarConstraint("T", base(LocalTensorType))
    name = "ascendc.vec_binary"
    api = prop_def(StringAttr)
    dst = operand_def(T)
    lhs = operand_def(T)
    rhs = operand_def(T)
    count = operand_def(IndexType)
    assembly_format = "$api $dst `,` $lhs `,` $rhs `,` $count attr-dict `:` type($dst)"

    def __init__(self, api: str, dst: SSAValue, lhs: SSAValue, rhs: SSAValue, count: SSAValue):
        super().__init__(operands=[dst, lhs, rhs, count], properties={"api": StringAttr(api)})

    def verify_(self) -> None:
        if self.api.data not in VEC_BINARY.values():
            raise VerifyException(f"{self.name}: unknown API {self.api.data}")
        if not self.dst.type == self.lhs.type == self.rhs.type:
            raise VerifyException(f"{self.name}: operand types differ")
        check_not_negative(self, count=self.count)


@irdl_op_definition
class VecUnaryOp(IRDLOperation):
    """``Api(dst, src, count)`` for an ``Api`` in ``VEC_UNARY`` (``Exp``, ``Ln``, ...)."""

    T: ClassVar = VarConstraint("T", base(LocalTensorType))
    name = "ascendc.vec_unary"
    api = prop_def(StringAttr)
    dst = operand_def(T)
    src = operand_def(T)
    count = operand_def(IndexType)
    assembly_format = "$api $dst `,` $src `,` $count attr-dict `:` type($dst)"

    def __init__(self, api: str, dst: SSAValue, src: SSAValue, count: SSAValue):
        super().__init__(operands=[dst, src, count], properties={"api": StringAttr(api)})

    def verify_(self) -> None:
        if self.api.data not in VEC_UNARY.values():
            raise VerifyException(f"{self.name}: unknown API {self.api.data}")
        check_not_negative(self, count=self.count)


@irdl_op_definition
class VecScalarOp(IRDLOperation):
    """``Adds|Muls|Maxs|Mins(dst, src, (T)scalar, count)``."""

    T: ClassVar = VarConstraint("T", base(LocalTensorType))
    name = "ascendc.vec_scalar"
    api = prop_def(StringAttr)
    scalar = prop_def(FloatAttr)
    dst = operand_def(T)
    src = operand_def(T)
    count = operand_def(IndexType)
    assembly_format = "$api $dst `,` $src `,` $scalar `,` $count attr-dict `:` type($dst)"

    def __init__(self, api: str, dst: SSAValue, src: SSAValue, scalar: float, count: SSAValue):
        super().__init__(
            operands=[dst, src, count],
            properties={"api": StringAttr(api), "scalar": FloatAttr(scalar, 64)},
        )

    def verify_(self) -> None:
        if self.api.data not in VEC_SCALAR.values():
            raise VerifyException(f"{self.name}: unknown API {self.api.data}")
        check_not_negative(self, count=self.count)


@irdl_op_definition
class DuplicateOp(IRDLOperation):
    """``Duplicate(dst, (T)scalar, count)``; the scalar is an SSA float."""

    name = "ascendc.duplicate"
    dst = operand_def(LocalTensorType)
    scalar = operand_def(AnyFloat)
    count = operand_def(IndexType)
    assembly_format = "$dst `,` $scalar `,` $count attr-dict `:` type($dst) `,` type($scalar)"

    def __init__(self, dst: SSAValue, scalar: SSAValue, count: SSAValue):
        super().__init__(operands=[dst, scalar, count])

    def verify_(self) -> None:
        check_not_negative(self, count=self.count)


@irdl_op_definition
class CreateVecIndexOp(IRDLOperation):
    """``CreateVecIndex(dst, (T)first, count)``: ``dst[i] = first + i``; ``first`` an SSA
    float."""

    name = "ascendc.create_vec_index"
    dst = operand_def(LocalTensorType)
    first = operand_def(AnyFloat)
    count = operand_def(IndexType)
    assembly_format = "$dst `,` $first `,` $count attr-dict `:` type($dst) `,` type($first)"

    def __init__(self, dst: SSAValue, first: SSAValue, count: SSAValue):
        super().__init__(operands=[dst, first, count])

    def verify_(self) -> None:
        check_not_negative(self, count=self.count)


@irdl_op_definition
class GetValueOp(IRDLOperation):
    """``t.GetValue(index)``: a scalar read from UB (needs a V->S sync before it)."""

    name = "ascendc.get_value"
    tensor = operand_def(LocalTensorType)
    index = operand_def(IndexType)
    result = result_def(AnyFloat)
    assembly_format = "$tensor `[` $index `]` attr-dict `:` type($tensor) `->` type($result)"

    def __init__(self, tensor: SSAValue, index: SSAValue):
        super().__init__(operands=[tensor, index], result_types=[elem(tensor.type)])

    def verify_(self) -> None:
        check_not_negative(self, index=self.index)


@irdl_op_definition
class CastOp(IRDLOperation):
    """``Cast(dst, src, RoundMode::MODE, count)``."""

    name = "ascendc.cast"
    round = prop_def(StringAttr)
    dst = operand_def(LocalTensorType)
    src = operand_def(LocalTensorType)
    count = operand_def(IndexType)
    assembly_format = "$round $dst `,` $src `,` $count attr-dict `:` type($dst) `,` type($src)"

    def __init__(self, round_mode: str, dst: SSAValue, src: SSAValue, count: SSAValue):
        super().__init__(operands=[dst, src, count], properties={"round": StringAttr(round_mode)})

    def verify_(self) -> None:
        if self.round.data not in ROUND.values():
            raise VerifyException(f"{self.name}: unknown round mode {self.round.data}")
        check_not_negative(self, count=self.count)


@irdl_op_definition
class CompareOp(IRDLOperation):
    """``Compare(mask, a, b, CMPMODE::MODE, count)``: mask is a uint8 bit mask."""

    T: ClassVar = VarConstraint("T", base(LocalTensorType))
    name = "ascendc.compare"
    mode = prop_def(StringAttr)
    mask = operand_def(LocalTensorType)
    lhs = operand_def(T)
    rhs = operand_def(T)
    count = operand_def(IndexType)
    assembly_format = (
        "$mode $mask `,` $lhs `,` $rhs `,` $count attr-dict `:` type($mask) `,` type($lhs)"
    )

    def __init__(self, mode: str, mask: SSAValue, lhs: SSAValue, rhs: SSAValue, count: SSAValue):
        super().__init__(operands=[mask, lhs, rhs, count], properties={"mode": StringAttr(mode)})

    def verify_(self) -> None:
        check_not_negative(self, count=self.count)


@irdl_op_definition
class SelectOp(IRDLOperation):
    """``Select(dst, mask, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, count)``."""

    T: ClassVar = VarConstraint("T", base(LocalTensorType))
    name = "ascendc.select"
    dst = operand_def(T)
    mask = operand_def(LocalTensorType)
    lhs = operand_def(T)
    rhs = operand_def(T)
    count = operand_def(IndexType)
    assembly_format = (
        "$dst `,` $mask `,` $lhs `,` $rhs `,` $count attr-dict `:` type($dst) `,` type($mask)"
    )

    def __init__(
        self, dst: SSAValue, mask: SSAValue, lhs: SSAValue, rhs: SSAValue, count: SSAValue
    ):
        super().__init__(operands=[dst, mask, lhs, rhs, count])

    def verify_(self) -> None:
        check_not_negative(self, count=self.count)


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """``ReduceSum|ReduceMax|ReduceMin(dst, src, work, count)``: result in ``dst[0]``."""

    T: ClassVar = VarConstraint("T", base(LocalTensorType))
    name = "ascendc.reduce"
    api = prop_def(StringAttr)
    dst = operand_def(T)
    src = operand_def(T)
    work = operand_def(T)
    count = operand_def(IndexType)
    assembly_format = "$api $dst `,` $src `,` $work `,` $count attr-dict `:` type($dst)"

    def __init__(self, api: str, dst: SSAValue, src: SSAValue, work: SSAValue, count: SSAValue):
        super().__init__(operands=[dst, src, work, count], properties={"api": StringAttr(api)})

    def verify_(self) -> None:
        if self.api.data not in REDUCE.values():
            raise VerifyException(f"{self.name}: unknown API {self.api.data}")
        check_not_negative(self, count=self.count)


@irdl_op_definition
class TilingFieldOp(IRDLOperation):
    """``tiling.FIELD`` (an int64 of the kernel's tiling struct)."""

    name = "ascendc.tiling_field"
    field = prop_def(StringAttr)
    result = result_def(IndexType)
    assembly_format = "$field attr-dict"

    def __init__(self, field: str):
        super().__init__(properties={"field": StringAttr(field)}, result_types=[IndexType()])

    def verify_(self) -> None:
        check_tiling_field(self, self.field.data)


@irdl_op_definition
class SyncOp(IRDLOperation):
    """``event = GetTPipePtr()->FetchEventID(HardEvent::E); SetFlag<E>(event);
    WaitFlag<E>(event);`` — orders one pipe after another."""

    name = "ascendc.sync"
    event = prop_def(StringAttr)
    assembly_format = "$event attr-dict"

    def __init__(self, event: str):
        super().__init__(properties={"event": StringAttr(event)})

    def verify_(self) -> None:
        if self.event.data not in EVENTS:
            raise VerifyException(f"{self.name}: unknown event {self.event.data}")
