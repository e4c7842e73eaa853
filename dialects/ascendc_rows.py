"""``ascendc`` ops that work on many rows in one call (level-0 forms: a mask, a repeat count
and strides in 32-byte DataBlocks): ``WholeReduceSum`` / ``WholeReduceMax`` (one result per
repeat) and ``Brcb`` (one DataBlock per element).

Semantics (public Ascend C API reference, Atlas A2, the WholeReduceSum and WholeReduceMax
pages; the CPU runtime's ``pyasc_cpu/reduce.h`` and docs/CPU_RUNTIME.md "Reductions"): with
``E = 32 / sizeof(T)`` elements per DataBlock, lane ``k < mask`` of repeat ``r < repeat`` reads
``src[r*srcRepStride*E + (k/E)*srcBlkStride*E + k%E]``; ``WholeReduceSum`` writes the pairwise
tree sum of the active lanes (masked-off lanes are ``+0``, every addition rounded to ``T``, a
finite fp16 sum that overflows saturates to +-65504) to ``dst[r*dstRepStride]``;
``WholeReduceMax`` (``ReduceOrder::ORDER_ONLY_VALUE``) writes the fold of the elementwise
``Max`` of the active lanes there. The mask is the contiguous form (the first ``mask`` lanes,
``1 <= mask <= 256 / sizeof(T)``); ``repeat <= 255``; strides at most 255.

``Brcb(dst, src0, repeat, BrcbRepeatParams(dstBlkStride, dstRepStride))`` (the Brcb page of the
same reference; ``pyasc_cpu/brcb.h``): repeat ``r`` fills DataBlock ``r*dstRepStride +
j*dstBlkStride`` of ``dst`` (all ``E`` elements) with ``src0[8r + j]``, ``j < 8``.

``pyasc_mlir.dialects.ascendc`` re-exports the public names; import them from there.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import Float16Type, Float32Type, IndexType, IntegerAttr, StringAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects.asc_attrs import element_bits
from pyasc_mlir.dialects.ascendc_types import LocalTensorType, elem
from pyasc_mlir.dialects.bounds import check_not_negative
from pyasc_mlir.platform import (
    MAX_BLOCK_STRIDE,
    MAX_REPEAT_STRIDE,
    MAX_REPEAT_TIMES,
    VECTOR_REPEAT_BYTES,
)

__all__ = ["MAX_REPEAT", "WHOLE_REDUCE", "BrcbOp", "WholeReduceOp"]

WHOLE_REDUCE = {"sum": "WholeReduceSum", "max": "WholeReduceMax"}
"""Reduction kind -> the per-repeat reduction call."""
MAX_REPEAT = MAX_REPEAT_TIMES
"""Largest ``repeatTime`` of a level-0 call (uint8_t)."""
MAX_STRIDE = MAX_REPEAT_STRIDE
"""Largest ``dstRepStride``/``srcBlkStride``/``srcRepStride`` this op emits (documented uint8_t
and uint16_t ranges; 255 fits both)."""


@irdl_op_definition
class WholeReduceOp(IRDLOperation):
    """``WholeReduceSum(dst, src, mask, repeat, dstRepStride, srcBlkStride, srcRepStride)`` or
    ``WholeReduceMax(..., ReduceOrder::ORDER_ONLY_VALUE)`` (module doc): ``mask`` and
    ``repeat`` are index values, the strides ``dst_rep``/``src_blk``/``src_rep`` properties."""

    T: ClassVar = VarConstraint("T", base(LocalTensorType))
    name = "ascendc.whole_reduce"
    irdl_options = (ParsePropInAttrDict(),)
    api = prop_def(StringAttr)
    dst_rep = prop_def(IntegerAttr)
    src_blk = prop_def(IntegerAttr)
    src_rep = prop_def(IntegerAttr)
    dst = operand_def(T)
    src = operand_def(T)
    mask = operand_def(IndexType)
    repeat = operand_def(IndexType)
    assembly_format = "$api $dst `,` $src `,` $mask `,` $repeat attr-dict `:` type($dst)"

    def __init__(
        self,
        api: str,
        dst: SSAValue,
        src: SSAValue,
        mask: SSAValue,
        repeat: SSAValue,
        strides: tuple[int, int, int],
    ):
        super().__init__(
            operands=[dst, src, mask, repeat],
            properties={
                "api": StringAttr(api),
                **{
                    k: IntegerAttr(v, i64)
                    for k, v in zip(("dst_rep", "src_blk", "src_rep"), strides, strict=True)
                },
            },
        )

    @property
    def strides(self) -> tuple[int, int, int]:
        """``(dstRepStride, srcBlkStride, srcRepStride)``."""
        return self.dst_rep.value.data, self.src_blk.value.data, self.src_rep.value.data

    def verify_(self) -> None:
        if self.api.data not in WHOLE_REDUCE.values():
            raise VerifyException(f"{self.name}: unknown API {self.api.data}")
        labels = ("dstRepStride", "srcBlkStride", "srcRepStride")
        _check_level0(self, self.dst, dict(zip(labels, self.strides, strict=True)), MAX_STRIDE)
        known = check_not_negative(self, mask=self.mask, repeat=self.repeat)
        lanes = VECTOR_REPEAT_BYTES // (element_bits(elem(self.dst.type)) // 8)
        mask, repeat = known.get("mask"), known.get("repeat")
        if mask is not None and not 1 <= mask <= lanes:
            raise VerifyException(f"{self.name}: mask {mask} is outside [1, {lanes}]")
        _check_repeat(self, repeat)


@irdl_op_definition
class BrcbOp(IRDLOperation):
    """``Brcb(dst, src0, repeat, BrcbRepeatParams(dst_blk, dst_rep))`` (module doc)."""

    T: ClassVar = VarConstraint("T", base(LocalTensorType))
    name = "ascendc.brcb"
    irdl_options = (ParsePropInAttrDict(),)
    dst_blk = prop_def(IntegerAttr)
    dst_rep = prop_def(IntegerAttr)
    dst = operand_def(T)
    src = operand_def(T)
    repeat = operand_def(IndexType)
    assembly_format = "$dst `,` $src `,` $repeat attr-dict `:` type($dst)"

    def __init__(self, dst: SSAValue, src: SSAValue, repeat: SSAValue, strides: tuple[int, int]):
        super().__init__(
            operands=[dst, src, repeat],
            properties={
                "dst_blk": IntegerAttr(strides[0], i64),
                "dst_rep": IntegerAttr(strides[1], i64),
            },
        )

    @property
    def strides(self) -> tuple[int, int]:
        """``(dstBlkStride, dstRepStride)``."""
        return self.dst_blk.value.data, self.dst_rep.value.data

    def verify_(self) -> None:
        labels = ("dstBlkStride", "dstRepStride")  # uint16 fields of BrcbRepeatParams
        _check_level0(
            self, self.dst, dict(zip(labels, self.strides, strict=True)), MAX_BLOCK_STRIDE
        )
        _check_repeat(self, check_not_negative(self, repeat=self.repeat).get("repeat"))


def _check_level0(op: IRDLOperation, dst: SSAValue, strides: dict[str, int], limit: int) -> None:
    """A half or float operand and every stride in ``[0, limit]``."""
    if not isinstance(elem(dst.type), Float16Type | Float32Type):
        raise VerifyException(f"{op.name}: operands must be half or float tensors")
    for label, s in strides.items():
        if not 0 <= s <= limit:
            raise VerifyException(f"{op.name}: {label} {s} is outside [0, {limit}]")


def _check_repeat(op: IRDLOperation, repeat: int | None) -> None:
    if repeat is not None and repeat > MAX_REPEAT:
        raise VerifyException(f"{op.name}: repeat {repeat} exceeds {MAX_REPEAT}")
