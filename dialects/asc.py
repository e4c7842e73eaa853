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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    BoolAttr,
    DenseArrayBase,
    FlatSymbolRefAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_attr_definition,
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
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects import opset
from pyasc_mlir.platform import DATA_BLOCK_BYTES

VECTOR_UNARY_KINDS = tuple(k for k, r in opset.UNARY.items() if not r.composite)
"""Unary kinds the vector unit has an instruction (or an Ascend C API call) for."""
COMPOSITE_UNARY_KINDS = tuple(k for k, r in opset.UNARY.items() if r.composite)
"""Unary kinds that ``asc-decompose`` expands (tensor level only)."""
UNARY_KINDS = (*VECTOR_UNARY_KINDS, *COMPOSITE_UNARY_KINDS)
"""Unary kinds (the op table's unary records)."""
BINARY_KINDS = tuple(opset.BINARY)
COMPARE_PREDICATES = tuple(opset.COMPARE)
REDUCE_KINDS = tuple(opset.REDUCE)
"""Reduction kinds; ``mean`` and ``var`` are composites that ``asc-decompose`` expands."""
VECTOR_REDUCE_KINDS = tuple(k for k, r in opset.REDUCE.items() if not r.composite)
"""Reduction kinds of ``asc.vreduce``."""
SCALAR_KINDS = tuple(opset.SCALAR)
ROUND_MODES = ("none", "rint", "floor", "ceil", "round", "trunc", "odd")
SCOPES = ("gm", "ub", "l1", "l0a", "l0b", "l0c")
ALLOC_ROLES = ("in", "out", "tmp", "const")
"""``in``/``out``: copy-in/copy-out queue buffers; ``tmp``: compute scratch; ``const``: loaded
once per kernel."""
LOC_ATTR = "asc.loc"


def _check_kind(op: IRDLOperation, value: str, allowed: Sequence[str], what: str) -> None:
    if value not in allowed:
        raise VerifyException(f"{op.name}: unknown {what} {value!r}; expected one of "
                              f"{', '.join(allowed)}")


def _float_tensor(op: IRDLOperation, t: Attribute, what: str) -> TensorType:
    if not isinstance(t, TensorType) or not isinstance(t.element_type,
                                                       Float16Type | Float32Type):
        raise VerifyException(f"{op.name}: {what} must be a tensor of f16 or f32, got {t}")
    return t


# --------------------------------------------------------------------------- attributes


@irdl_attr_definition
class ScopeAttr(ParametrizedAttribute):
    """Memory scope of a buffer: ``#asc.scope<gm|ub|l1|l0a|l0b|l0c>``."""

    name = "asc.scope"
    scope: StringAttr

    def __init__(self, scope: str | StringAttr):
        super().__init__(StringAttr(scope) if isinstance(scope, str) else scope)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[StringAttr]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_identifier()),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.scope.data}>")

    def verify(self) -> None:
        if self.scope.data not in SCOPES:
            raise VerifyException(f"#asc.scope: unknown scope {self.scope.data!r}; expected "
                                  f"one of {', '.join(SCOPES)}")


def scope_of(t: Attribute) -> str | None:
    """The scope name of a memref type, or ``None`` when it has no ``#asc.scope``."""
    if isinstance(t, MemRefType) and isinstance(t.memory_space, ScopeAttr):
        return t.memory_space.scope.data
    return None


def buffer_type(elements: int, dtype: Attribute, scope: str) -> MemRefType:
    """A flat buffer type ``memref<elements x dtype, #asc.scope<scope>>``."""
    return MemRefType(dtype, [elements], memory_space=ScopeAttr(scope))


# --------------------------------------------------------------------------- tensor level


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tensor filled with one number: ``%c = asc.constant 1.0 : tensor<4xf32>``."""

    name = "asc.constant"
    value = prop_def(FloatAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `->` type($result)"

    def __init__(self, value: float, result_type: TensorType):
        super().__init__(properties={"value": FloatAttr(float(value), 64)},
                         result_types=[result_type])

    def verify_(self) -> None:
        _float_tensor(self, self.result.type, "result")


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
        super().__init__(operands=[value], properties={"kind": StringAttr(kind)},
                         result_types=[value.type])

    def verify_(self) -> None:
        _check_kind(self, self.kind.data, UNARY_KINDS, "unary kind")
        _float_tensor(self, self.input.type, "operand")
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
        super().__init__(operands=[lhs, rhs], properties={"kind": StringAttr(kind)},
                         result_types=[lhs.type])

    def verify_(self) -> None:
        _check_kind(self, self.kind.data, BINARY_KINDS, "binary kind")
        _float_tensor(self, self.lhs.type, "lhs")
        if self.lhs.type != self.rhs.type or self.result.type != self.lhs.type:
            raise VerifyException(f"{self.name}: operands and result must have one type, got "
                                  f"{self.lhs.type} and {self.rhs.type}")


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
        super().__init__(operands=[lhs, rhs], properties={"predicate": StringAttr(predicate)},
                         result_types=[TensorType(IntegerType(1), t.get_shape())])

    def verify_(self) -> None:
        _check_kind(self, self.predicate.data, COMPARE_PREDICATES, "predicate")
        t = _float_tensor(self, self.lhs.type, "lhs")
        if self.rhs.type != t:
            raise VerifyException(f"{self.name}: operands must have one type")
        r = self.result.type
        if not (isinstance(r, TensorType) and r.element_type == IntegerType(1)
                and r.get_shape() == t.get_shape()):
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
    assembly_format = ("$cond `,` $true_value `,` $false_value attr-dict `:` type($cond) `,` "
                       "type($true_value)")

    def __init__(self, cond: SSAValue, a: SSAValue, b: SSAValue):
        super().__init__(operands=[cond, a, b], result_types=[a.type])

    def verify_(self) -> None:
        t = _float_tensor(self, self.true_value.type, "true value")
        c = self.cond.type
        if self.false_value.type != t or self.result.type != t:
            raise VerifyException(f"{self.name}: values and result must have one type")
        if not (isinstance(c, TensorType) and c.element_type == IntegerType(1)
                and c.get_shape() == t.get_shape()):
            raise VerifyException(f"{self.name}: condition must be an i1 tensor of shape "
                                  f"{list(t.get_shape())}")


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
        a = _float_tensor(self, self.input.type, "operand")
        r = _float_tensor(self, self.result.type, "result")
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
            raise VerifyException(f"{self.name}: cannot broadcast {list(a.get_shape())} to "
                                  f"{list(r.get_shape())}")


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

    def __init__(self, kind: str, value: SSAValue, axes: Sequence[int], keepdim: bool,
                 correction: int = 0):
        t = value.type
        assert isinstance(t, TensorType)
        shape = list(t.get_shape())
        out = [1 if i in axes else d for i, d in enumerate(shape)] if keepdim else [
            d for i, d in enumerate(shape) if i not in axes]
        props: dict[str, Attribute] = {
            "kind": StringAttr(kind), "axes": DenseArrayBase.from_list(i64, sorted(axes)),
            "keepdim": BoolAttr.from_bool(keepdim)}
        if kind == "var":
            props["correction"] = IntAttr(correction)
        super().__init__(operands=[value], properties=props,
                         result_types=[TensorType(t.element_type, out)])

    @property
    def axis_list(self) -> tuple[int, ...]:
        return tuple(int(a) for a in self.axes.get_values())

    @property
    def keeps_dims(self) -> bool:
        return bool(self.keepdim.value.data)

    def verify_(self) -> None:
        _check_kind(self, self.kind.data, REDUCE_KINDS, "reduce kind")
        t = _float_tensor(self, self.input.type, "operand")
        axes = self.axis_list
        rank = t.get_num_dims()
        if not axes or list(axes) != sorted(set(axes)) or axes[0] < 0 or axes[-1] >= rank:
            raise VerifyException(f"{self.name}: axes {list(axes)} must be sorted, unique and "
                                  f"in [0, {rank})")
        shape = list(t.get_shape())
        out = [1 if i in axes else d for i, d in enumerate(shape)] if self.keeps_dims else [
            d for i, d in enumerate(shape) if i not in axes]
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


class _Transposes(IRDLOperation):
    """The ``transpose_a``/``transpose_b`` flags of a matrix product (``asc.matmul``,
    ``asc.mmad``)."""

    irdl_options = (ParsePropInAttrDict(),)
    transpose_a = prop_def(BoolAttr)
    transpose_b = prop_def(BoolAttr)

    @property
    def trans_a(self) -> bool:
        return bool(self.transpose_a.value.data)

    @property
    def trans_b(self) -> bool:
        return bool(self.transpose_b.value.data)


def matmul_shape(a: Sequence[int], b: Sequence[int], transpose_a: bool,
                 transpose_b: bool) -> tuple[int, ...] | None:
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
class MatmulOp(_Transposes):
    """Matrix product on the Cube unit: ``a @ b`` with optional transposes of the last two
    dims and NumPy-broadcast batch dims (see ``matmul_shape``). Operands f16 or f32 (same
    dtype); products are accumulated in f32 and the result is always f32 (L0C's dtype); a
    cast gives f16 output."""

    name = "asc.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = ("$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` "
                       "type($result)")

    def __init__(self, lhs: SSAValue, rhs: SSAValue, transpose_a: bool = False,
                 transpose_b: bool = False):
        a, b = lhs.type, rhs.type
        assert isinstance(a, TensorType) and isinstance(b, TensorType)
        shape = matmul_shape(a.get_shape(), b.get_shape(), transpose_a, transpose_b)
        assert shape is not None, "check shapes with matmul_shape first"
        super().__init__(operands=[lhs, rhs], result_types=[TensorType(Float32Type(), shape)],
                         properties={"transpose_a": BoolAttr.from_bool(transpose_a),
                                     "transpose_b": BoolAttr.from_bool(transpose_b)})

    def verify_(self) -> None:
        a = _float_tensor(self, self.lhs.type, "lhs")
        b = _float_tensor(self, self.rhs.type, "rhs")
        if a.element_type != b.element_type:
            raise VerifyException(f"{self.name}: operands must share one dtype")
        shape = matmul_shape(a.get_shape(), b.get_shape(), self.trans_a, self.trans_b)
        if shape is None:
            raise VerifyException(f"{self.name}: shapes {list(a.get_shape())} and "
                                  f"{list(b.get_shape())} do not multiply")
        expect = TensorType(Float32Type(), shape)
        if self.result.type != expect:
            raise VerifyException(f"{self.name}: result type must be {expect}")


def _check_perm(op: IRDLOperation, perm: Sequence[int], rank: int) -> None:
    if sorted(perm) != list(range(rank)):
        raise VerifyException(f"{op.name}: perm {list(perm)} is not a permutation of "
                              f"0..{rank - 1}")


def _same_element_type(op: IRDLOperation, a: TensorType, r: TensorType) -> None:
    if a.element_type != r.element_type:
        raise VerifyException(f"{op.name}: dtype must not change ({a.element_type} -> "
                              f"{r.element_type})")


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """Permute the dims: ``result.shape[i] = input.shape[perm[i]]`` and
    ``result[j_0, ..., j_{n-1}] = input[i]`` with ``i[perm[k]] = j_k`` (NumPy
    ``np.transpose(x, perm)``). Same dtype (f16, f32 or i1). A data-movement op: it is never
    fused into a vector kernel (``asc-lower-layout`` lowers it)."""

    name = "asc.transpose"
    irdl_options = (ParsePropInAttrDict(),)
    perm = prop_def(DenseArrayBase)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, perm: Sequence[int]):
        t = value.type
        assert isinstance(t, TensorType)
        shape = [t.get_shape()[p] for p in perm]
        super().__init__(operands=[value], result_types=[TensorType(t.element_type, shape)],
                         properties={"perm": DenseArrayBase.from_list(i64, list(perm))})

    @property
    def permutation(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.perm.get_values())

    def verify_(self) -> None:
        a, r = self.input.type, self.result.type
        assert isinstance(a, TensorType) and isinstance(r, TensorType)
        _same_element_type(self, a, r)
        perm = self.permutation
        _check_perm(self, perm, a.get_num_dims())
        expect = [a.get_shape()[p] for p in perm]
        if list(r.get_shape()) != expect:
            raise VerifyException(f"{self.name}: result shape must be {expect} for perm "
                                  f"{list(perm)}, got {list(r.get_shape())}")


def concat_shape(shapes: Sequence[Sequence[int]], axis: int) -> tuple[int, ...] | None:
    """Shape of ``asc.concat`` of ``shapes`` along ``axis`` (non-negative), or ``None`` when
    there are no inputs, ranks differ, ``axis`` is out of range or a dim other than ``axis``
    differs."""
    if not shapes:
        return None
    first = tuple(shapes[0])
    if not 0 <= axis < len(first):
        return None
    for s in shapes[1:]:
        if len(s) != len(first) or any(x != y for i, (x, y) in enumerate(zip(s, first,
                                                                              strict=True))
                                       if i != axis):
            return None
    return (*first[:axis], sum(s[axis] for s in shapes), *first[axis + 1:])


@irdl_op_definition
class ConcatOp(IRDLOperation):
    """Join ``inputs`` (one or more, same rank and dtype, equal dims except ``axis``) along
    ``axis`` (``np.concatenate``). A data-movement op, lowered by ``asc-lower-layout``."""

    name = "asc.concat"
    irdl_options = (ParsePropInAttrDict(),)
    axis = prop_def(IntegerAttr)
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$inputs attr-dict `:` type($inputs) `->` type($result)"

    def __init__(self, values: Sequence[SSAValue], axis: int):
        types = [v.type for v in values]
        assert types and all(isinstance(t, TensorType) for t in types)
        shape = concat_shape([t.get_shape() for t in types], axis)  # type: ignore[union-attr]
        assert shape is not None, "check shapes with concat_shape first"
        super().__init__(operands=[list(values)],
                         result_types=[TensorType(types[0].element_type, shape)],  # type: ignore
                         properties={"axis": IntegerAttr(axis, i64)})

    @property
    def dim(self) -> int:
        return int(self.axis.value.data)

    def verify_(self) -> None:
        types = [v.type for v in self.inputs]
        r = self.result.type
        assert isinstance(r, TensorType)
        if not types:
            raise VerifyException(f"{self.name}: needs at least one input")
        for t in types:
            assert isinstance(t, TensorType)
            _same_element_type(self, t, r)
        shapes = [list(t.get_shape()) for t in types]  # type: ignore[union-attr]
        shape = concat_shape(shapes, self.dim)
        if shape is None:
            raise VerifyException(f"{self.name}: shapes {shapes} do not concatenate along "
                                  f"axis {self.dim}")
        if tuple(r.get_shape()) != shape:
            raise VerifyException(f"{self.name}: result shape must be {list(shape)}, got "
                                  f"{list(r.get_shape())}")


@irdl_op_definition
class SliceOp(IRDLOperation):
    """A static box of the input, stride 1: ``result[j] = input[offsets + j]`` for
    ``0 <= j < sizes`` (per dim; ``x[o0:o0+s0, o1:o1+s1, ...]``). Requires
    ``0 <= offsets`` and ``offsets + sizes <= input.shape``. A data-movement op, lowered by
    ``asc-lower-layout``."""

    name = "asc.slice"
    irdl_options = (ParsePropInAttrDict(),)
    offsets = prop_def(DenseArrayBase)
    sizes = prop_def(DenseArrayBase)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, offsets: Sequence[int], sizes: Sequence[int]):
        t = value.type
        assert isinstance(t, TensorType)
        super().__init__(operands=[value], result_types=[TensorType(t.element_type, sizes)],
                         properties={"offsets": DenseArrayBase.from_list(i64, list(offsets)),
                                     "sizes": DenseArrayBase.from_list(i64, list(sizes))})

    @property
    def starts(self) -> tuple[int, ...]:
        return tuple(int(o) for o in self.offsets.get_values())

    @property
    def extents(self) -> tuple[int, ...]:
        return tuple(int(s) for s in self.sizes.get_values())

    def verify_(self) -> None:
        a, r = self.input.type, self.result.type
        assert isinstance(a, TensorType) and isinstance(r, TensorType)
        _same_element_type(self, a, r)
        shape, offs, sizes = list(a.get_shape()), self.starts, self.extents
        if len(offs) != len(shape) or len(sizes) != len(shape):
            raise VerifyException(f"{self.name}: offsets and sizes need {len(shape)} entries "
                                  "(one per dim)")
        if any(o < 0 or s < 0 or o + s > d for o, s, d in zip(offs, sizes, shape, strict=True)):
            raise VerifyException(f"{self.name}: box offsets {list(offs)} sizes {list(sizes)} "
                                  f"is not inside shape {shape}")
        if list(r.get_shape()) != list(sizes):
            raise VerifyException(f"{self.name}: result shape must be {list(sizes)}")


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
    assembly_format = ("`(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) "
                       "$body")

    def verify_(self) -> None:
        block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            raise VerifyException(f"{self.name}: block arguments must match the inputs")
        term = block.last_op
        if not isinstance(term, YieldOp) or [v.type for v in term.values] != [
                r.type for r in self.outputs]:
            raise VerifyException(f"{self.name}: asc.yield must give the results' types")


# --------------------------------------------------------------------------- tile level


def _ub_buffer(op: IRDLOperation, value: SSAValue, what: str) -> MemRefType:
    t = value.type
    if scope_of(t) != "ub" or not isinstance(t, MemRefType) or len(t.get_shape()) != 1:
        raise VerifyException(f"{op.name}: {what} must be a flat UB buffer "
                              f"memref<N x T, #asc.scope<ub>>, got {t}")
    return t


def _gm_buffer(op: IRDLOperation, value: SSAValue, what: str) -> MemRefType:
    t = value.type
    if scope_of(t) != "gm" or not isinstance(t, MemRefType):
        raise VerifyException(f"{op.name}: {what} must be a GM buffer, got {t}")
    return t


@irdl_op_definition
class BlockIdxOp(IRDLOperation):
    """This core's index in ``[0, blockDim)`` (``GetBlockIdx()``)."""

    name = "asc.block_idx"
    result = result_def(IndexType)
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[IndexType()])


@irdl_op_definition
class BlockNumOp(IRDLOperation):
    """The number of cores the kernel runs on (``GetBlockNum()``)."""

    name = "asc.block_num"
    result = result_def(IndexType)
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[IndexType()])


@irdl_op_definition
class TilingFieldOp(IRDLOperation):
    """Reads a field of the kernel's tiling struct (an int64 the host fills)."""

    name = "asc.tiling_field"
    field = prop_def(StringAttr)
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$field attr-dict"

    def __init__(self, field: str):
        super().__init__(properties={"field": StringAttr(field)}, result_types=[IndexType()])


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A UB buffer of the result type. ``role``: in | out | tmp | const. ``buffers``: how many
    copies rotate (2 = double buffering, set by ``asc-double-buffer``). ``offset``: its byte
    offset in UB (set by ``asc-buffer-alloc``)."""

    name = "asc.alloc"
    irdl_options = (ParsePropInAttrDict(),)
    role = prop_def(StringAttr)
    buffers = prop_def(IntegerAttr)
    offset = opt_prop_def(IntegerAttr)
    result = result_def(MemRefType)
    assembly_format = "$role attr-dict `:` type($result)"

    def __init__(self, role: str, elements: int, dtype: Attribute):
        super().__init__(properties={"role": StringAttr(role), "buffers": IntegerAttr(1, 64)},
                         result_types=[buffer_type(elements, dtype, "ub")])

    @property
    def nbytes(self) -> int:
        """Bytes of one copy of the buffer (masks: i1 are bits)."""
        t = self.result.type
        assert isinstance(t, MemRefType)
        n = t.get_shape()[0]
        width = element_bits(t.element_type)
        return (n * width + 7) // 8

    def verify_(self) -> None:
        _check_kind(self, self.role.data, ALLOC_ROLES, "role")
        t = _ub_buffer(self, self.result, "result")
        if self.nbytes % DATA_BLOCK_BYTES:
            raise VerifyException(f"{self.name}: UB buffer of {self.nbytes} bytes is not a "
                                  "multiple of the 32-byte DataBlock")
        if self.buffers.value.data not in (1, 2, 3, 4):
            raise VerifyException(f"{self.name}: buffers must be 1..4")
        if self.offset is not None and self.offset.value.data % DATA_BLOCK_BYTES:
            raise VerifyException(f"{self.name}: UB offset {self.offset.value.data} is not 32-byte "
                                  "aligned")
        del t


def element_bits(t: Attribute) -> int:
    """Width in bits of a scalar type (f16 16, f32 32, i1 1, i8 8 ...)."""
    if isinstance(t, Float16Type):
        return 16
    if isinstance(t, Float32Type):
        return 32
    if isinstance(t, IntegerType):
        return t.width.data
    raise ValueError(f"unsupported element type {t}")


class _CopyBase(IRDLOperation):
    """Copies ``count`` blocks of ``length`` elements. GM block i starts at
    ``gm_offset + i * (length + gm_gap)``; UB block i at ``ub_offset + i * ub_stride``.
    All in elements. Lowers to ``DataCopy`` (aligned, contiguous) or ``DataCopyPad``."""

    gm_offset = operand_def(IndexType)
    ub_offset = operand_def(IndexType)
    count = operand_def(IndexType)
    length = operand_def(IndexType)
    gm_gap = operand_def(IndexType)
    ub_stride = operand_def(IndexType)

    def _verify_types(self, gm: SSAValue, ub: SSAValue) -> None:
        g = _gm_buffer(self, gm, "GM operand")
        u = _ub_buffer(self, ub, "UB operand")
        if g.element_type != u.element_type:
            raise VerifyException(f"{self.name}: GM and UB dtypes differ")


@irdl_op_definition
class CopyInOp(_CopyBase):
    """GM -> UB block copy (MTE2). See ``_CopyBase`` for the addressing."""

    name = "asc.copy_in"
    source = operand_def(MemRefType)
    dest = operand_def(MemRefType)
    assembly_format = ("$source `[` $gm_offset `]` `->` $dest `[` $ub_offset `]` `blocks` "
                       "$count `x` $length `gap` $gm_gap `stride` $ub_stride attr-dict `:` "
                       "type($source) `,` type($dest)")

    def __init__(self, src: SSAValue, dst: SSAValue, operands: Sequence[SSAValue]):
        super().__init__(operands=[src, dst, *operands])

    def verify_(self) -> None:
        self._verify_types(self.source, self.dest)


@irdl_op_definition
class CopyOutOp(_CopyBase):
    """UB -> GM block copy (MTE3): writes exactly ``length`` elements per block."""

    name = "asc.copy_out"
    source = operand_def(MemRefType)
    dest = operand_def(MemRefType)
    assembly_format = ("$source `[` $ub_offset `]` `->` $dest `[` $gm_offset `]` `blocks` "
                       "$count `x` $length `gap` $gm_gap `stride` $ub_stride attr-dict `:` "
                       "type($source) `,` type($dest)")

    def __init__(self, src: SSAValue, dst: SSAValue, operands: Sequence[SSAValue]):
        super().__init__(operands=[src, dst, *operands])

    def verify_(self) -> None:
        self._verify_types(self.dest, self.source)


class _VectorBase(IRDLOperation):
    """A vector-unit op in count form on the first ``count`` elements of UB buffers."""

    count = operand_def(IndexType)

    def _same_dtype(self, *values: SSAValue) -> None:
        types = [_ub_buffer(self, v, "operand") for v in values]
        if len({t.element_type for t in types}) != 1:
            raise VerifyException(f"{self.name}: operands must share one dtype")


@irdl_op_definition
class VUnaryOp(_VectorBase):
    """``dst[i] = kind(src[i])`` for i < count; kinds: ``VECTOR_UNARY_KINDS``."""

    name = "asc.vunary"
    kind = prop_def(StringAttr)
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    assembly_format = "$kind $dst `,` $src `,` $count attr-dict `:` type($dst) `,` type($src)"

    def __init__(self, kind: str, dst: SSAValue, src: SSAValue, count: SSAValue):
        super().__init__(operands=[dst, src, count], properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        _check_kind(self, self.kind.data, VECTOR_UNARY_KINDS, "vector unary kind")
        self._same_dtype(self.dst, self.src)


@irdl_op_definition
class VBinaryOp(_VectorBase):
    """``dst[i] = lhs[i] kind rhs[i]`` for i < count."""

    name = "asc.vbinary"
    kind = prop_def(StringAttr)
    dst = operand_def(MemRefType)
    lhs = operand_def(MemRefType)
    rhs = operand_def(MemRefType)
    assembly_format = ("$kind $dst `,` $lhs `,` $rhs `,` $count attr-dict `:` type($dst) `,` "
                       "type($lhs) `,` type($rhs)")

    def __init__(self, kind: str, dst: SSAValue, lhs: SSAValue, rhs: SSAValue,
                 count: SSAValue):
        super().__init__(operands=[dst, lhs, rhs, count], properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        _check_kind(self, self.kind.data, BINARY_KINDS, "vector binary kind")
        self._same_dtype(self.dst, self.lhs, self.rhs)


@irdl_op_definition
class VScalarOp(_VectorBase):
    """``dst[i] = src[i] (+ | * | max | min) scalar`` (``Adds Muls Maxs Mins``)."""

    name = "asc.vscalar"
    kind = prop_def(StringAttr)
    scalar = prop_def(FloatAttr)
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    assembly_format = ("$kind $dst `,` $src `,` $scalar `,` $count attr-dict `:` type($dst) `,` "
                       "type($src)")

    def __init__(self, kind: str, dst: SSAValue, src: SSAValue, scalar: float,
                 count: SSAValue):
        super().__init__(operands=[dst, src, count], properties={
            "kind": StringAttr(kind), "scalar": FloatAttr(float(scalar), 64)})

    def verify_(self) -> None:
        _check_kind(self, self.kind.data, SCALAR_KINDS, "scalar kind")
        self._same_dtype(self.dst, self.src)


@irdl_op_definition
class VDupOp(_VectorBase):
    """``dst[i] = value`` for i < count (``Duplicate``)."""

    name = "asc.vdup"
    value = prop_def(FloatAttr)
    dst = operand_def(MemRefType)
    assembly_format = "$dst `,` $value `,` $count attr-dict `:` type($dst)"

    def __init__(self, dst: SSAValue, value: float, count: SSAValue):
        super().__init__(operands=[dst, count], properties={"value": FloatAttr(float(value), 64)})

    def verify_(self) -> None:
        _ub_buffer(self, self.dst, "destination")


@irdl_op_definition
class VCopyOp(_VectorBase):
    """UB -> UB copy of ``count`` elements (``DataCopy`` between local tensors)."""

    name = "asc.vcopy"
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    assembly_format = "$dst `,` $src `,` $count attr-dict `:` type($dst) `,` type($src)"

    def __init__(self, dst: SSAValue, src: SSAValue, count: SSAValue):
        super().__init__(operands=[dst, src, count])

    def verify_(self) -> None:
        self._same_dtype(self.dst, self.src)


@irdl_op_definition
class VCastOp(_VectorBase):
    """``dst[i] = convert(src[i])`` with round mode ``none rint floor ceil round trunc odd``."""

    name = "asc.vcast"
    round = prop_def(StringAttr)
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    assembly_format = ("$round $dst `,` $src `,` $count attr-dict `:` type($dst) `,` "
                       "type($src)")

    def __init__(self, dst: SSAValue, src: SSAValue, count: SSAValue, round_mode: str = "rint"):
        super().__init__(operands=[dst, src, count], properties={"round": StringAttr(round_mode)})

    def verify_(self) -> None:
        _check_kind(self, self.round.data, ROUND_MODES, "round mode")
        _ub_buffer(self, self.dst, "destination")
        _ub_buffer(self, self.src, "source")


@irdl_op_definition
class VCompareOp(_VectorBase):
    """Bit ``i`` of ``mask`` = ``lhs[i] predicate rhs[i]`` (``Compare``); ``mask`` is i1."""

    name = "asc.vcompare"
    predicate = prop_def(StringAttr)
    mask = operand_def(MemRefType)
    lhs = operand_def(MemRefType)
    rhs = operand_def(MemRefType)
    assembly_format = ("$predicate $mask `,` $lhs `,` $rhs `,` $count attr-dict `:` "
                       "type($mask) `,` type($lhs) `,` type($rhs)")

    def __init__(self, predicate: str, mask: SSAValue, lhs: SSAValue, rhs: SSAValue,
                 count: SSAValue):
        super().__init__(operands=[mask, lhs, rhs, count],
                         properties={"predicate": StringAttr(predicate)})

    def verify_(self) -> None:
        _check_kind(self, self.predicate.data, COMPARE_PREDICATES, "predicate")
        self._same_dtype(self.lhs, self.rhs)
        if _ub_buffer(self, self.mask, "mask").element_type != IntegerType(1):
            raise VerifyException(f"{self.name}: mask must be an i1 buffer")


@irdl_op_definition
class VSelectOp(_VectorBase):
    """``dst[i] = mask bit i ? lhs[i] : rhs[i]`` (``Select``)."""

    name = "asc.vselect"
    dst = operand_def(MemRefType)
    mask = operand_def(MemRefType)
    lhs = operand_def(MemRefType)
    rhs = operand_def(MemRefType)
    assembly_format = ("$dst `,` $mask `,` $lhs `,` $rhs `,` $count attr-dict `:` type($dst) "
                       "`,` type($mask) `,` type($lhs) `,` type($rhs)")

    def __init__(self, dst: SSAValue, mask: SSAValue, lhs: SSAValue, rhs: SSAValue,
                 count: SSAValue):
        super().__init__(operands=[dst, mask, lhs, rhs, count])

    def verify_(self) -> None:
        self._same_dtype(self.dst, self.lhs, self.rhs)
        if _ub_buffer(self, self.mask, "mask").element_type != IntegerType(1):
            raise VerifyException(f"{self.name}: mask must be an i1 buffer")


@irdl_op_definition
class VReduceOp(IRDLOperation):
    """Reduce a ``[rows, m, ls]`` tile (``src``, valid length ``length`` <= ``ls`` per row)
    with ``kind`` (sum | max | min).

    ``axis = "last"``: ``dst[(r*m + j) * 16] = reduce(src[(r*m + j)*ls : ... + length])``
    (one ``ReduceSum/Max/Min`` per row; results 16 elements apart, one DataBlock for fp16,
    two for fp32). ``axis = "mid"``: ``dst[r*ls + k] = reduce_j src[(r*m + j)*ls + k]`` for
    k < ls (``Add``/``Max``/``Min`` of whole rows). ``work`` is scratch for ``ReduceSum``."""

    name = "asc.vreduce"
    kind = prop_def(StringAttr)
    axis = prop_def(StringAttr)
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    work = operand_def(MemRefType)
    rows = operand_def(IndexType)
    m = operand_def(IndexType)
    length = operand_def(IndexType)
    ls = operand_def(IndexType)
    assembly_format = ("$kind $axis $dst `,` $src `,` $work `rows` $rows `m` $m `len` $length "
                       "`ls` $ls attr-dict `:` type($dst) `,` type($src) `,` type($work)")

    def __init__(self, kind: str, axis: str, dst: SSAValue, src: SSAValue, work: SSAValue,
                 sizes: Sequence[SSAValue]):
        super().__init__(operands=[dst, src, work, *sizes],
                         properties={"kind": StringAttr(kind), "axis": StringAttr(axis)})

    def verify_(self) -> None:
        _check_kind(self, self.kind.data, VECTOR_REDUCE_KINDS, "reduce kind")
        _check_kind(self, self.axis.data, ("last", "mid"), "reduce axis")
        for v in (self.dst, self.src, self.work):
            if not isinstance(_ub_buffer(self, v, "operand").element_type, AnyFloat):
                raise VerifyException(f"{self.name}: operands must be float buffers")


@irdl_op_definition
class VBroadcastOp(IRDLOperation):
    """Expand a tile: ``dst`` is ``[rows, m, ls]``; ``src`` is the same with size-1 dims
    where ``src_rows``/``src_m``/``src_l`` are false (a missing trailing dim is stored as 16
    elements, value at index 0). Lowers to UB->UB ``DataCopy`` (rows, m) and ``Duplicate``
    (lanes)."""

    name = "asc.vbroadcast"
    irdl_options = (ParsePropInAttrDict(),)
    src_rows = prop_def(BoolAttr)
    src_m = prop_def(BoolAttr)
    src_l = prop_def(BoolAttr)
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    rows = operand_def(IndexType)
    m = operand_def(IndexType)
    ls = operand_def(IndexType)
    assembly_format = ("$dst `,` $src `rows` $rows `m` $m `ls` $ls attr-dict `:` type($dst) `,` "
                       "type($src)")

    def __init__(self, dst: SSAValue, src: SSAValue, sizes: Sequence[SSAValue],
                 has: Sequence[bool]):
        super().__init__(operands=[dst, src, *sizes], properties={
            "src_rows": BoolAttr.from_bool(has[0]), "src_m": BoolAttr.from_bool(has[1]),
            "src_l": BoolAttr.from_bool(has[2])})

    @property
    def src_has(self) -> tuple[bool, bool, bool]:
        return (bool(self.src_rows.value.data), bool(self.src_m.value.data),
                bool(self.src_l.value.data))

    def verify_(self) -> None:
        d = _ub_buffer(self, self.dst, "destination")
        s = _ub_buffer(self, self.src, "source")
        if d.element_type != s.element_type:
            raise VerifyException(f"{self.name}: dtypes differ")


@irdl_op_definition
class MmadOp(_Transposes):
    """One output block of a matrix product on the Cube unit, delivered to UB (lowers to the
    Ascend C ``Matmul`` API: ``SetTensorA/B``, ``SetTail``, ``Iterate``, ``GetTensorC``).

    ``dst`` (UB, f32) receives an ``[m, ls]`` block: for ``i < m`` and ``j < ls``,
    ``dst[i * ls + j] = sum_{p < k} A(i, p) * B(p, j)`` when ``j < n``, else 0, accumulated in
    f32 (f16 operands convert exactly). ``A(i, p) = a[a_offset + i * lda + p]``
    (``a[a_offset + p * lda + i]`` when ``transpose_a``); ``B(p, j) = b[b_offset + p * ldb + j]``
    (``b[b_offset + j * ldb + p]`` when ``transpose_b``). ``a`` and ``b`` are GM buffers of one
    dtype (f16 or f32). All offsets, sizes and strides are in elements.

    ``asc-lower-cube`` also sets the integer attributes ``max_m``, ``max_n`` and ``max_k``:
    static upper bounds of ``m``, ``n`` and ``k`` over the kernel (the Matmul object's tiling is
    sized for them), and ``ls`` is always ``round_up(max_n, 16)``."""

    name = "asc.mmad"
    dst = operand_def(MemRefType)
    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    a_offset = operand_def(IndexType)
    b_offset = operand_def(IndexType)
    m = operand_def(IndexType)
    n = operand_def(IndexType)
    k = operand_def(IndexType)
    lda = operand_def(IndexType)
    ldb = operand_def(IndexType)
    ls = operand_def(IndexType)
    assembly_format = ("$dst `,` $a `[` $a_offset `]` `,` $b `[` $b_offset `]` `m` $m `n` $n "
                       "`k` $k `lda` $lda `ldb` $ldb `ls` $ls attr-dict `:` type($dst) `,` "
                       "type($a) `,` type($b)")

    def __init__(self, dst: SSAValue, a: SSAValue, b: SSAValue, sizes: Sequence[SSAValue],
                 transpose_a: bool = False, transpose_b: bool = False):
        """``sizes``: ``a_offset, b_offset, m, n, k, lda, ldb, ls``."""
        super().__init__(operands=[dst, a, b, *sizes], properties={
            "transpose_a": BoolAttr.from_bool(transpose_a),
            "transpose_b": BoolAttr.from_bool(transpose_b)})

    def verify_(self) -> None:
        d = _ub_buffer(self, self.dst, "destination")
        if not isinstance(d.element_type, Float32Type):
            raise VerifyException(f"{self.name}: destination must be an f32 UB buffer")
        a = _gm_buffer(self, self.a, "operand a")
        b = _gm_buffer(self, self.b, "operand b")
        if a.element_type != b.element_type or not isinstance(a.element_type,
                                                               Float16Type | Float32Type):
            raise VerifyException(f"{self.name}: a and b must share one dtype, f16 or f32")


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Host side: runs kernel ``callee`` (a ``func.func`` with the ``asc.kernel`` attribute)
    on ``block_dim`` cores; inputs are read from GM, results are fresh GM tensors."""

    name = "asc.launch"
    callee = prop_def(FlatSymbolRefAttr)
    block_dim = prop_def(IntegerAttr)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    assembly_format = ("$callee `<` $block_dim `>` `(` $inputs `)` attr-dict `:` "
                       "functional-type($inputs, $outputs)")

    def __init__(self, callee: str, block_dim: int, inputs: Sequence[SSAValue],
                 result_types: Sequence[Attribute]):
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)],
                         properties={"callee": FlatSymbolRefAttr(callee),
                                     "block_dim": IntegerAttr(block_dim, 64)})


Asc = Dialect(
    "asc",
    [ConstantOp, UnaryOp, BinaryOp, CompareOp, SelectOp, CastOp, BroadcastOp, ReduceOp,
     ReshapeOp, MatmulOp, TransposeOp, ConcatOp, SliceOp, FusionOp, YieldOp, BlockIdxOp,
     BlockNumOp, TilingFieldOp, AllocOp,
     CopyInOp, CopyOutOp, VUnaryOp, VBinaryOp, VScalarOp, VDupOp, VCopyOp, VCastOp, VCompareOp,
     VSelectOp, VReduceOp, VBroadcastOp, MmadOp, LaunchOp],
    [ScopeAttr],
)
