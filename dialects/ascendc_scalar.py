"""Scalar-unit ops of the ``ascendc`` dialect: what the scalar-loop fallback kernels
(``asc-lower-loops``) run, one element at a time.

- ``ascendc.scalar_get %t[%i]`` reads element ``i`` of a ``LocalTensor`` (UB) or
  ``GlobalTensor`` (GM) with ``GetValue`` and widens it to ``f32``;
  ``ascendc.scalar_set %v, %t[%i]`` rounds the ``f32`` value to the tensor's dtype (nearest
  even) and writes it with ``SetValue``. Both run on the scalar pipe (S): a UB tensor written
  by ``DataCopy`` needs ``MTE2_S`` before, one copied out needs ``S_MTE3`` after.
- ``ascendc.scalar_const``, ``ascendc.scalar_unary``, ``ascendc.scalar_binary`` (the op
  table's kinds) and ``ascendc.scalar_round`` (``lang.cast``: round to a dtype, widen back)
  compute on ``f32`` values. Semantics: the float64 function of the op table's tensor-level
  reference (``dialects/opset.py``; ``max``/``min`` IEEE 754-2019, NaN wins) applied to the
  widened operands and rounded once to ``f32``; for add, sub, mul, div, sqrt, neg, abs, relu,
  reciprocal, max and min that is the exact f32 operation. The emitter prints them as C++
  ``float``/``double`` expressions (``pyasc_mlir/emit_scalar.py``), the interpreter runs them
  with NumPy (``pyasc_mlir/interpreter/ascendc_scalar.py``): the two agree bit for bit.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    Float32Type,
    FloatAttr,
    IndexType,
    StringAttr,
    TypeAttribute,
    f32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects.asc_attrs import BINARY_KINDS, UNARY_KINDS
from pyasc_mlir.dialects.ascendc_types import Tensor

__all__ = [
    "SCALAR_OPS",
    "ScalarBinaryOp",
    "ScalarConstOp",
    "ScalarGetOp",
    "ScalarRoundOp",
    "ScalarSetOp",
    "ScalarUnaryOp",
]


@irdl_op_definition
class ScalarGetOp(IRDLOperation):
    """``(float)t.GetValue(i)``: one element of a UB or GM tensor, widened to f32."""

    name = "ascendc.scalar_get"
    tensor = operand_def(Tensor)
    index = operand_def(IndexType)
    result = result_def(Float32Type)
    assembly_format = "$tensor `[` $index `]` attr-dict `:` type($tensor)"

    def __init__(self, tensor: SSAValue, index: SSAValue):
        super().__init__(operands=[tensor, index], result_types=[f32])


@irdl_op_definition
class ScalarSetOp(IRDLOperation):
    """``t.SetValue(i, (T)v)``: the f32 value rounded to the tensor's dtype, written."""

    name = "ascendc.scalar_set"
    value = operand_def(Float32Type)
    tensor = operand_def(Tensor)
    index = operand_def(IndexType)
    assembly_format = "$value `,` $tensor `[` $index `]` attr-dict `:` type($tensor)"

    def __init__(self, value: SSAValue, tensor: SSAValue, index: SSAValue):
        super().__init__(operands=[value, tensor, index])


@irdl_op_definition
class ScalarConstOp(IRDLOperation):
    """A ``float`` constant (the value rounded to f32)."""

    name = "ascendc.scalar_const"
    value = prop_def(FloatAttr)
    result = result_def(Float32Type)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict"

    def __init__(self, value: float):
        super().__init__(properties={"value": FloatAttr(float(value), 64)}, result_types=[f32])


@irdl_op_definition
class ScalarUnaryOp(IRDLOperation):
    """A unary op of the op table on one f32 value (float64 reference, rounded once)."""

    name = "ascendc.scalar_unary"
    kind = prop_def(StringAttr)
    input = operand_def(Float32Type)
    result = result_def(Float32Type)
    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict"

    def __init__(self, kind: str, value: SSAValue):
        super().__init__(
            operands=[value], properties={"kind": StringAttr(kind)}, result_types=[f32]
        )

    def verify_(self) -> None:
        if self.kind.data not in UNARY_KINDS:
            raise VerifyException(f"{self.name}: unknown kind {self.kind.data!r}")


@irdl_op_definition
class ScalarBinaryOp(IRDLOperation):
    """``add sub mul div max min`` on two f32 values."""

    name = "ascendc.scalar_binary"
    kind = prop_def(StringAttr)
    lhs = operand_def(Float32Type)
    rhs = operand_def(Float32Type)
    result = result_def(Float32Type)
    traits = traits_def(Pure())
    assembly_format = "$kind $lhs `,` $rhs attr-dict"

    def __init__(self, kind: str, lhs: SSAValue, rhs: SSAValue):
        super().__init__(
            operands=[lhs, rhs], properties={"kind": StringAttr(kind)}, result_types=[f32]
        )

    def verify_(self) -> None:
        if self.kind.data not in BINARY_KINDS:
            raise VerifyException(f"{self.name}: unknown kind {self.kind.data!r}")


@irdl_op_definition
class ScalarRoundOp(IRDLOperation):
    """``(float)(T)x``: round an f32 value to ``dtype`` (nearest even), widen back."""

    name = "ascendc.scalar_round"
    dtype = prop_def(TypeAttribute)
    input = operand_def(Float32Type)
    result = result_def(Float32Type)
    traits = traits_def(Pure())
    assembly_format = "$input `to` $dtype attr-dict"

    def __init__(self, value: SSAValue, dtype: Attribute):
        assert isinstance(dtype, TypeAttribute)
        super().__init__(operands=[value], properties={"dtype": dtype}, result_types=[f32])


SCALAR_OPS = (
    ScalarGetOp,
    ScalarSetOp,
    ScalarConstOp,
    ScalarUnaryOp,
    ScalarBinaryOp,
    ScalarRoundOp,
)
"""The ops of this module, for the ``ascendc`` dialect's op list."""
