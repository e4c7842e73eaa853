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
    IndexType,
    f32,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    result_def,
)

from pyasc_mlir.dialects.ascendc_types import Tensor
from pyasc_mlir.dialects.scalar_f32 import BinaryBase, ConstBase, KahanBase, RoundBase, UnaryBase

__all__ = [
    "SCALAR_OPS",
    "ScalarBinaryOp",
    "ScalarConstOp",
    "ScalarGetOp",
    "ScalarKahanOp",
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
class ScalarConstOp(ConstBase):
    """A ``float`` constant (the value rounded to f32)."""

    name = "ascendc.scalar_const"


@irdl_op_definition
class ScalarUnaryOp(UnaryBase):
    """A unary op of the op table on one f32 value (float64 reference, rounded once)."""

    name = "ascendc.scalar_unary"


@irdl_op_definition
class ScalarBinaryOp(BinaryBase):
    """``add sub mul div max min`` on two f32 values."""

    name = "ascendc.scalar_binary"


@irdl_op_definition
class ScalarRoundOp(RoundBase):
    """``(float)(T)x``: round an f32 value to ``dtype`` (nearest even), widen back."""

    name = "ascendc.scalar_round"


@irdl_op_definition
class ScalarKahanOp(KahanBase):
    """One compensated add (``scalar_f32.kahan_step``), printed as ``pyasc_s_kahan``."""

    name = "ascendc.scalar_kahan"


SCALAR_OPS = (
    ScalarGetOp,
    ScalarSetOp,
    ScalarConstOp,
    ScalarUnaryOp,
    ScalarBinaryOp,
    ScalarRoundOp,
    ScalarKahanOp,
)
"""The ops of this module, for the ``ascendc`` dialect's op list."""
