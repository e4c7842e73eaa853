"""The f32 scalar arithmetic shared by two dialects: the kernel language's loop level
(``asc_loop.const/unary/binary/round``, ``dialects/asc_loop.py``) and the scalar unit of the
emission level (``ascendc.scalar_const/unary/binary/round``, ``dialects/ascendc_scalar.py``).

Each dialect defines its ops as subclasses that only give the op name (and docstring); the
operands, properties, assembly format and verification are these bases'. Semantics (both
dialects): the float64 function of the op table's kind (``dialects/opset.py``) on the f32
operands, rounded once to f32; ``round`` rounds an f32 value to ``dtype`` (nearest even) and
widens it back; ``kahan`` is one step of a compensated sum (:func:`kahan_step`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import Float32Type, FloatAttr, StringAttr, TypeAttribute, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects.asc_attrs import BINARY_KINDS, UNARY_KINDS


class ConstBase(IRDLOperation):
    """A ``float`` constant (the value rounded to f32)."""

    value = prop_def(FloatAttr)
    result = result_def(Float32Type)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict"

    def __init__(self, value: float):
        super().__init__(properties={"value": FloatAttr(float(value), 64)}, result_types=[f32])


class UnaryBase(IRDLOperation):
    """A unary op of the op table (``exp``, ``tanh``, ``erf``, ...) on one f32 value.

    Raises (``verify``): VerifyException for a kind the op table does not have."""

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


class BinaryBase(IRDLOperation):
    """``add sub mul div max min`` on two f32 values.

    Raises (``verify``): VerifyException for another kind."""

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


class RoundBase(IRDLOperation):
    """Round an f32 value to ``dtype`` (nearest even) and widen it back to f32."""

    dtype = prop_def(TypeAttribute)
    input = operand_def(Float32Type)
    result = result_def(Float32Type)
    traits = traits_def(Pure())
    assembly_format = "$input `to` $dtype attr-dict"

    def __init__(self, value: SSAValue, dtype: Attribute):
        assert isinstance(dtype, TypeAttribute)
        super().__init__(operands=[value], properties={"dtype": dtype}, result_types=[f32])


def kahan_step(acc: np.float32, comp: np.float32, e: np.float32) -> tuple[np.float32, np.float32]:
    """One compensated (Kahan) add of ``e`` to the running sum ``acc`` with compensation
    ``comp``, in f32: ``y = e - comp; t = acc + y; comp' = (t - acc) - y``, except that
    ``comp' = 0`` when ``t`` is not finite (an infinite sum stays infinite instead of turning
    NaN through ``inf - inf``). Returns ``(t, comp')``."""
    with np.errstate(all="ignore"):
        y = np.float32(np.float32(e) - np.float32(comp))
        t = np.float32(np.float32(acc) + y)
        c = np.float32(np.float32(t - np.float32(acc)) - y) if np.isfinite(t) else np.float32(0)
    return t, c


class KahanBase(IRDLOperation):
    """``(sum, comp) = kahan(acc, comp, e)``: :func:`kahan_step` on f32 values."""

    acc = operand_def(Float32Type)
    comp = operand_def(Float32Type)
    value = operand_def(Float32Type)
    new_acc = result_def(Float32Type)
    new_comp = result_def(Float32Type)
    traits = traits_def(Pure())
    assembly_format = "$acc `,` $comp `,` $value attr-dict"

    def __init__(self, acc: SSAValue, comp: SSAValue, value: SSAValue):
        super().__init__(operands=[acc, comp, value], result_types=[f32, f32])
