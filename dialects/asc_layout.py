"""Tensor-level data-movement ``asc`` ops: ``asc.transpose``, ``asc.concat`` and ``asc.slice``.
They are never fused into a vector kernel; ``asc-lower-layout`` lowers them to GM <-> UB block
copies.

``pyasc_mlir.dialects.asc`` re-exports the public names; import them from there.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    TensorType,
    i64,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


def _check_perm(op: IRDLOperation, perm: Sequence[int], rank: int) -> None:
    if sorted(perm) != list(range(rank)):
        raise VerifyException(f"{op.name}: perm {list(perm)} is not a permutation of 0..{rank - 1}")


def _same_element_type(op: IRDLOperation, a: TensorType, r: TensorType) -> None:
    if a.element_type != r.element_type:
        raise VerifyException(
            f"{op.name}: dtype must not change ({a.element_type} -> {r.element_type})"
        )


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
        super().__init__(
            operands=[value],
            result_types=[TensorType(t.element_type, shape)],
            properties={"perm": DenseArrayBase.from_list(i64, list(perm))},
        )

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
            raise VerifyException(
                f"{self.name}: result shape must be {expect} for perm "
                f"{list(perm)}, got {list(r.get_shape())}"
            )


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
        if len(s) != len(first) or any(
            x != y for i, (x, y) in enumerate(zip(s, first, strict=True)) if i != axis
        ):
            return None
    return (*first[:axis], sum(s[axis] for s in shapes), *first[axis + 1 :])


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
        types: list[TensorType] = []
        for v in values:
            assert isinstance(v.type, TensorType)
            types.append(v.type)
        assert types
        shape = concat_shape([t.get_shape() for t in types], axis)
        assert shape is not None, "check shapes with concat_shape first"
        super().__init__(
            operands=[list(values)],
            result_types=[TensorType(types[0].element_type, shape)],
            properties={"axis": IntegerAttr(axis, i64)},
        )

    @property
    def dim(self) -> int:
        return int(self.axis.value.data)

    def verify_(self) -> None:
        types = [v.type for v in self.inputs]
        r = self.result.type
        assert isinstance(r, TensorType)
        if not types:
            raise VerifyException(f"{self.name}: needs at least one input")
        shapes: list[list[int]] = []
        for t in types:
            assert isinstance(t, TensorType)
            _same_element_type(self, t, r)
            shapes.append(list(t.get_shape()))
        shape = concat_shape(shapes, self.dim)
        if shape is None:
            raise VerifyException(
                f"{self.name}: shapes {shapes} do not concatenate along axis {self.dim}"
            )
        if tuple(r.get_shape()) != shape:
            raise VerifyException(
                f"{self.name}: result shape must be {list(shape)}, got {list(r.get_shape())}"
            )


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
        super().__init__(
            operands=[value],
            result_types=[TensorType(t.element_type, sizes)],
            properties={
                "offsets": DenseArrayBase.from_list(i64, list(offsets)),
                "sizes": DenseArrayBase.from_list(i64, list(sizes)),
            },
        )

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
            raise VerifyException(
                f"{self.name}: offsets and sizes need {len(shape)} entries (one per dim)"
            )
        if any(o < 0 or s < 0 or o + s > d for o, s, d in zip(offs, sizes, shape, strict=True)):
            raise VerifyException(
                f"{self.name}: box offsets {list(offs)} sizes {list(sizes)} "
                f"is not inside shape {shape}"
            )
        if list(r.get_shape()) != list(sizes):
            raise VerifyException(f"{self.name}: result shape must be {list(sizes)}")
