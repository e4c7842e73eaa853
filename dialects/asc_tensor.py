"""Tensor-level ``asc`` ops: value semantics on builtin ``tensor<...>`` (dtypes f16/f32, masks
i1). Elementwise ``asc.unary``/``asc.binary``/``asc.compare``/``asc.select``/``asc.cast``,
``asc.constant`` (a splat), ``asc.broadcast`` (NumPy rules, explicit), ``asc.reduce``,
``asc.reshape``, ``asc.matmul`` (Cube unit, f32 accumulation) and ``asc.fusion``/``asc.yield``
(one region = one kernel). The data-movement ops are in ``asc_layout``.

``pyasc_mlir.dialects.asc`` re-exports the public names; import them from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects.asc_attrs import (
    BINARY_KINDS,
    COMPARE_PREDICATES,
    REDUCE_KINDS,
    UNARY_KINDS,
    TransposeFlags,
    check_kind,
    float_tensor,
)


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tensor filled with one number: ``%c = asc.constant 1.0 : tensor<4xf32>``."""

    name = "asc.constant"
    value = prop_def(FloatAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `->` type($result)"

    def __init__(self, value: float, result_type: TensorType):
        super().__init__(
            properties={"value": FloatAttr(float(value), 64)}, result_types=[result_type]
        )

    def verify_(self) -> None:
        float_tensor(self, self.result.type, "result")


@irdl_op_definition
class UnaryOp(IRDLOperation):
    """Elementwise unary op of a kind in ``UNARY_KINDS`` (the op table's unary records; the
    ``COMPOSITE_UNARY_KINDS`` are expanded by ``asc-decompose``). Operand and result have the
    same type."""

    name = "asc.unary"
    T: ClassVar = VarConstraint("T", base(TensorType))
    kind = prop_def(StringAttr)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict `:` type($input)"

    def __init__(self, kind: str, value: SSAValue):
        super().__init__(
            operands=[value], properties={"kind": StringAttr(kind)}, result_types=[value.type]
        )

    def verify_(self) -> None:
        check_kind(self, self.kind.data, UNARY_KINDS, "unary kind")
        float_tensor(self, self.input.type, "operand")
        if self.result.type != self.input.type:
            raise VerifyException(f"{self.name}: result type must equal operand type")


@irdl_op_definition
class BinaryOp(IRDLOperation):
    """Elementwise binary op (``add sub mul div max min``) on operands of one type (broadcasts
    are explicit ``asc.broadcast`` ops)."""

    name = "asc.binary"
    T: ClassVar = VarConstraint("T", base(TensorType))
    kind = prop_def(StringAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$kind $lhs `,` $rhs attr-dict `:` type($lhs)"

    def __init__(self, kind: str, lhs: SSAValue, rhs: SSAValue):
        super().__init__(
            operands=[lhs, rhs], properties={"kind": StringAttr(kind)}, result_types=[lhs.type]
        )

    def verify_(self) -> None:
        check_kind(self, self.kind.data, BINARY_KINDS, "binary kind")
        float_tensor(self, self.lhs.type, "lhs")
        if self.lhs.type != self.rhs.type or self.result.type != self.lhs.type:
            raise VerifyException(
                f"{self.name}: operands and result must have one type, got "
                f"{self.lhs.type} and {self.rhs.type}"
            )


@irdl_op_definition
class CompareOp(IRDLOperation):
    """Elementwise comparison ``lt gt eq le ge ne``; the result is a ``tensor<...xi1>`` mask."""

    name = "asc.compare"
    T: ClassVar = VarConstraint("T", base(TensorType))
    predicate = prop_def(StringAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$predicate $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"

    def __init__(self, predicate: str, lhs: SSAValue, rhs: SSAValue):
        t = lhs.type
        assert isinstance(t, TensorType)
        super().__init__(
            operands=[lhs, rhs],
            properties={"predicate": StringAttr(predicate)},
            result_types=[TensorType(IntegerType(1), t.get_shape())],
        )

    def verify_(self) -> None:
        check_kind(self, self.predicate.data, COMPARE_PREDICATES, "predicate")
        t = float_tensor(self, self.lhs.type, "lhs")
        if self.rhs.type != t:
            raise VerifyException(f"{self.name}: operands must have one type")
        r = self.result.type
        if not (
            isinstance(r, TensorType)
            and r.element_type == IntegerType(1)
            and r.get_shape() == t.get_shape()
        ):
            raise VerifyException(f"{self.name}: result must be an i1 tensor of the operand shape")


@irdl_op_definition
class SelectOp(IRDLOperation):
    """``where(cond, a, b)``: elementwise pick; ``cond`` is an i1 tensor of the same shape."""

    name = "asc.select"
    T: ClassVar = VarConstraint("T", base(TensorType))
    cond = operand_def(TensorType)
    true_value = operand_def(T)
    false_value = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = (
        "$cond `,` $true_value `,` $false_value attr-dict `:` type($cond) `,` type($true_value)"
    )

    def __init__(self, cond: SSAValue, a: SSAValue, b: SSAValue):
        super().__init__(operands=[cond, a, b], result_types=[a.type])

    def verify_(self) -> None:
        t = float_tensor(self, self.true_value.type, "true value")
        c = self.cond.type
        if self.false_value.type != t or self.result.type != t:
            raise VerifyException(f"{self.name}: values and result must have one type")
        if not (
            isinstance(c, TensorType)
            and c.element_type == IntegerType(1)
            and c.get_shape() == t.get_shape()
        ):
            raise VerifyException(
                f"{self.name}: condition must be an i1 tensor of shape {list(t.get_shape())}"
            )


@irdl_op_definition
class CastOp(IRDLOperation):
    """Elementwise dtype conversion between f16 and f32 (round to nearest even)."""

    name = "asc.cast"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, dtype: Attribute):
        t = value.type
        assert isinstance(t, TensorType)
        super().__init__(operands=[value], result_types=[TensorType(dtype, t.get_shape())])

    def verify_(self) -> None:
        a = float_tensor(self, self.input.type, "operand")
        r = float_tensor(self, self.result.type, "result")
        if a.get_shape() != r.get_shape():
            raise VerifyException(f"{self.name}: shapes must match")


def broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """NumPy broadcast of two shapes, or ``None`` when they are incompatible."""
    out: list[int] = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(y if x == 1 else x)  # not max(): [0] + [1] broadcasts to [0]
    return tuple(reversed(out))


@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """Explicit NumPy broadcast of ``input`` to the result shape (same dtype)."""

    name = "asc.broadcast"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, shape: Sequence[int]):
        t = value.type
        assert isinstance(t, TensorType)
        super().__init__(operands=[value], result_types=[TensorType(t.element_type, shape)])

    def verify_(self) -> None:
        a, r = self.input.type, self.result.type
        assert isinstance(a, TensorType) and isinstance(r, TensorType)
        if a.element_type != r.element_type:
            raise VerifyException(f"{self.name}: dtype must not change")
        if broadcast_shapes(a.get_shape(), r.get_shape()) != tuple(r.get_shape()):
            raise VerifyException(
                f"{self.name}: cannot broadcast {list(a.get_shape())} to {list(r.get_shape())}"
            )


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Reduction ``sum max min mean var`` over ``axes`` (sorted, non-negative). ``keepdim``
    keeps reduced axes as size 1. ``correction`` is the variance's divisor offset
    (0: population variance, ``unbiased=False``; 1: sample variance)."""

    name = "asc.reduce"
    irdl_options = (ParsePropInAttrDict(),)
    kind = prop_def(StringAttr)
    axes = prop_def(DenseArrayBase)
    keepdim = prop_def(BoolAttr)
    correction = opt_prop_def(IntAttr)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self, kind: str, value: SSAValue, axes: Sequence[int], keepdim: bool, correction: int = 0
    ):
        t = value.type
        assert isinstance(t, TensorType)
        shape = list(t.get_shape())
        out = (
            [1 if i in axes else d for i, d in enumerate(shape)]
            if keepdim
            else [d for i, d in enumerate(shape) if i not in axes]
        )
        props: dict[str, Attribute] = {
            "kind": StringAttr(kind),
            "axes": DenseArrayBase.from_list(i64, sorted(axes)),
            "keepdim": BoolAttr.from_bool(keepdim),
        }
        if kind == "var":
            props["correction"] = IntAttr(correction)
        super().__init__(
            operands=[value], properties=props, result_types=[TensorType(t.element_type, out)]
        )

    @property
    def axis_list(self) -> tuple[int, ...]:
        return tuple(int(a) for a in self.axes.get_values())

    @property
    def keeps_dims(self) -> bool:
        return bool(self.keepdim.value.data)

    def verify_(self) -> None:
        check_kind(self, self.kind.data, REDUCE_KINDS, "reduce kind")
        t = float_tensor(self, self.input.type, "operand")
        axes = self.axis_list
        rank = t.get_num_dims()
        if not axes or list(axes) != sorted(set(axes)) or axes[0] < 0 or axes[-1] >= rank:
            raise VerifyException(
                f"{self.name}: axes {list(axes)} must be sorted, unique and in [0, {rank})"
            )
        shape = list(t.get_shape())
        out = (
            [1 if i in axes else d for i, d in enumerate(shape)]
            if self.keeps_dims
            else [d for i, d in enumerate(shape) if i not in axes]
        )
        expect = TensorType(t.element_type, out)
        if self.result.type != expect:
            raise VerifyException(f"{self.name}: result type must be {expect}")


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """Reshape to a shape with the same number of elements (row-major order)."""

    name = "asc.reshape"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, shape: Sequence[int]):
        t = value.type
        assert isinstance(t, TensorType)
        super().__init__(operands=[value], result_types=[TensorType(t.element_type, shape)])

    def verify_(self) -> None:
        a, r = self.input.type, self.result.type
        assert isinstance(a, TensorType) and isinstance(r, TensorType)
        if a.element_type != r.element_type or a.element_count() != r.element_count():
            raise VerifyException(f"{self.name}: {a} and {r} differ in dtype or element count")


def matmul_shape(
    a: Sequence[int], b: Sequence[int], transpose_a: bool, transpose_b: bool
) -> tuple[int, ...] | None:
    """Result shape of ``asc.matmul``: ``a`` is ``[*batch, M, K]`` (``[*batch, K, M]`` when
    ``transpose_a``), ``b`` is ``[*batch, K, N]`` (``[*batch, N, K]`` when ``transpose_b``);
    batch dims broadcast (NumPy rules). ``None`` when ranks are below 2, K differs or the
    batch dims do not broadcast."""
    if len(a) < 2 or len(b) < 2:
        return None
    m, ka = (a[-1], a[-2]) if transpose_a else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if transpose_b else (b[-2], b[-1])
    batch = broadcast_shapes(a[:-2], b[:-2])
    if ka != kb or batch is None:
        return None
    return (*batch, m, n)


@irdl_op_definition
class MatmulOp(TransposeFlags):
    """Matrix product on the Cube unit: ``a @ b`` with optional transposes of the last two
    dims and NumPy-broadcast batch dims (see ``matmul_shape``). Operands f16 or f32 (same
    dtype); products are accumulated in f32 and the result is always f32 (L0C's dtype); a
    cast gives f16 output."""

    name = "asc.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"
    )

    def __init__(
        self, lhs: SSAValue, rhs: SSAValue, transpose_a: bool = False, transpose_b: bool = False
    ):
        a, b = lhs.type, rhs.type
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        shape = matmul_shape(a.get_shape(), b.get_shape(), transpose_a, transpose_b)
        assert shape is not None, "check shapes with matmul_shape first"
        super().__init__(
            operands=[lhs, rhs],
            result_types=[TensorType(Float32Type(), shape)],
            properties={
                "transpose_a": BoolAttr.from_bool(transpose_a),
                "transpose_b": BoolAttr.from_bool(transpose_b),
            },
        )

    def verify_(self) -> None:
        a = float_tensor(self, self.lhs.type, "lhs")
        b = float_tensor(self, self.rhs.type, "rhs")
        if a.element_type != b.element_type:
            raise VerifyException(f"{self.name}: operands must share one dtype")
        shape = matmul_shape(a.get_shape(), b.get_shape(), self.trans_a, self.trans_b)
        if shape is None:
            raise VerifyException(
                f"{self.name}: shapes {list(a.get_shape())} and "
                f"{list(b.get_shape())} do not multiply"
            )
        expect = TensorType(Float32Type(), shape)
        if self.result.type != expect:
            raise VerifyException(f"{self.name}: result type must be {expect}")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of ``asc.fusion``: the fused group's results."""

    name = "asc.yield"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(FusionOp)))
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[list(values)])


@irdl_op_definition
class FusionOp(IRDLOperation):
    """A fused group of tensor ops that becomes ONE kernel. Block arguments stand for
    ``inputs`` (read from GM once); ``asc.yield`` gives the results (written to GM once)."""

    name = "asc.fusion"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    assembly_format = "`(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) $body"

    def verify_(self) -> None:
        block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            raise VerifyException(f"{self.name}: block arguments must match the inputs")
        term = block.last_op
        if not isinstance(term, YieldOp) or [v.type for v in term.values] != [
            r.type for r in self.outputs
        ]:
            raise VerifyException(f"{self.name}: asc.yield must give the results' types")
