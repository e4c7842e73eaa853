"""Tile-level ``asc`` ops: destination-passing style on flat ``memref<N x T, #asc.scope<...>>``
buffers. ``asc.alloc``, ``asc.copy_in``/``asc.copy_out`` (GM <-> UB strided block copies,
element units), vector ops ``asc.v*`` in count form, ``asc.mmad`` (a Cube output block into UB),
``asc.block_idx``/``asc.block_num``, ``asc.tiling_field`` and ``asc.launch`` (host side: run a
kernel over ``blockDim`` cores).

UB buffers hold tiles laid out as ``[rows, M, Ls]``; see ``pyasc_mlir.dialects.asc``.
``pyasc_mlir.dialects.asc`` re-exports the public names; import them from there.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    BFloat16Type,
    BoolAttr,
    FlatSymbolRefAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects.asc_attrs import (
    ALLOC_ROLES,
    BINARY_KINDS,
    COMPARE_PREDICATES,
    ROUND_MODES,
    SCALAR_KINDS,
    VECTOR_UNARY_KINDS,
    TransposeFlags,
    buffer_type,
    check_kind,
    element_bits,
    gm_buffer,
    ub_buffer,
)
from pyasc_mlir.dialects.bounds import (
    check_blocks,
    check_count,
    check_not_negative,
    check_tiling_field,
    check_ub_alignment,
)
from pyasc_mlir.platform import DATA_BLOCK_BYTES


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

    def verify_(self) -> None:
        check_tiling_field(self, self.field.data)


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
        super().__init__(
            properties={"role": StringAttr(role), "buffers": IntegerAttr(1, 64)},
            result_types=[buffer_type(elements, dtype, "ub")],
        )

    @property
    def nbytes(self) -> int:
        """Bytes of one copy of the buffer (masks: i1 are bits)."""
        t = self.result.type
        assert isinstance(t, MemRefType)
        n = t.get_shape()[0]
        width = element_bits(t.element_type)
        return (n * width + 7) // 8

    def verify_(self) -> None:
        check_kind(self, self.role.data, ALLOC_ROLES, "role")
        ub_buffer(self, self.result, "result")
        if self.nbytes % DATA_BLOCK_BYTES:
            raise VerifyException(
                f"{self.name}: UB buffer of {self.nbytes} bytes is not a "
                "multiple of the 32-byte DataBlock"
            )
        if self.buffers.value.data not in (1, 2, 3, 4):
            raise VerifyException(f"{self.name}: buffers must be 1..4")
        if self.offset is not None and self.offset.value.data % DATA_BLOCK_BYTES:
            raise VerifyException(
                f"{self.name}: UB offset {self.offset.value.data} is not 32-byte aligned"
            )


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
        g = gm_buffer(self, gm, "GM operand")
        u = ub_buffer(self, ub, "UB operand")
        if g.element_type != u.element_type:
            raise VerifyException(f"{self.name}: GM and UB dtypes differ")
        self._verify_ranges(gm, ub, element_bits(u.element_type))

    def _verify_ranges(self, gm: SSAValue, ub: SSAValue, bits: int) -> None:
        """Constant offsets, sizes and strides: not negative, inside both buffers, and the UB
        side DataBlock aligned (see ``pyasc_mlir.dialects.bounds``; i1 masks: bounds only)."""
        known = check_not_negative(
            self,
            gm_offset=self.gm_offset,
            ub_offset=self.ub_offset,
            count=self.count,
            length=self.length,
            gm_gap=self.gm_gap,
            ub_stride=self.ub_stride,
        )
        count, length = known.get("count"), known.get("length")
        gap, stride = known.get("gm_gap"), known.get("ub_stride")
        gm_stride = None if length is None or gap is None else length + gap
        check_blocks(self, "GM", gm, self.gm_offset, count, length, gm_stride)
        check_blocks(self, "UB", ub, self.ub_offset, count, length, stride)
        if bits >= 8:
            check_ub_alignment(self, self.ub_offset, stride, length, count, bits // 8)


@irdl_op_definition
class CopyInOp(_CopyBase):
    """GM -> UB block copy (MTE2). See ``_CopyBase`` for the addressing."""

    name = "asc.copy_in"
    source = operand_def(MemRefType)
    dest = operand_def(MemRefType)
    assembly_format = (
        "$source `[` $gm_offset `]` `->` $dest `[` $ub_offset `]` `blocks` "
        "$count `x` $length `gap` $gm_gap `stride` $ub_stride attr-dict `:` "
        "type($source) `,` type($dest)"
    )

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
    assembly_format = (
        "$source `[` $ub_offset `]` `->` $dest `[` $gm_offset `]` `blocks` "
        "$count `x` $length `gap` $gm_gap `stride` $ub_stride attr-dict `:` "
        "type($source) `,` type($dest)"
    )

    def __init__(self, src: SSAValue, dst: SSAValue, operands: Sequence[SSAValue]):
        super().__init__(operands=[src, dst, *operands])

    def verify_(self) -> None:
        self._verify_types(self.dest, self.source)


class _VectorBase(IRDLOperation):
    """A vector-unit op in count form on the first ``count`` elements of UB buffers."""

    count = operand_def(IndexType)

    def _same_dtype(self, *values: SSAValue) -> None:
        types = [ub_buffer(self, v, "operand") for v in values]
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
        check_kind(self, self.kind.data, VECTOR_UNARY_KINDS, "vector unary kind")
        self._same_dtype(self.dst, self.src)
        check_count(self, self.count, destination=self.dst, source=self.src)


@irdl_op_definition
class VBinaryOp(_VectorBase):
    """``dst[i] = lhs[i] kind rhs[i]`` for i < count."""

    name = "asc.vbinary"
    kind = prop_def(StringAttr)
    dst = operand_def(MemRefType)
    lhs = operand_def(MemRefType)
    rhs = operand_def(MemRefType)
    assembly_format = (
        "$kind $dst `,` $lhs `,` $rhs `,` $count attr-dict `:` type($dst) `,` "
        "type($lhs) `,` type($rhs)"
    )

    def __init__(self, kind: str, dst: SSAValue, lhs: SSAValue, rhs: SSAValue, count: SSAValue):
        super().__init__(operands=[dst, lhs, rhs, count], properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        check_kind(self, self.kind.data, BINARY_KINDS, "vector binary kind")
        self._same_dtype(self.dst, self.lhs, self.rhs)
        check_count(self, self.count, destination=self.dst, lhs=self.lhs, rhs=self.rhs)


@irdl_op_definition
class VScalarOp(_VectorBase):
    """``dst[i] = src[i] (+ | * | max | min) scalar`` (``Adds Muls Maxs Mins``)."""

    name = "asc.vscalar"
    kind = prop_def(StringAttr)
    scalar = prop_def(FloatAttr)
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    assembly_format = (
        "$kind $dst `,` $src `,` $scalar `,` $count attr-dict `:` type($dst) `,` type($src)"
    )

    def __init__(self, kind: str, dst: SSAValue, src: SSAValue, scalar: float, count: SSAValue):
        super().__init__(
            operands=[dst, src, count],
            properties={"kind": StringAttr(kind), "scalar": FloatAttr(float(scalar), 64)},
        )

    def verify_(self) -> None:
        check_kind(self, self.kind.data, SCALAR_KINDS, "scalar kind")
        self._same_dtype(self.dst, self.src)
        check_count(self, self.count, destination=self.dst, source=self.src)


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
        ub_buffer(self, self.dst, "destination")
        check_count(self, self.count, destination=self.dst)


@irdl_op_definition
class VIndexOp(_VectorBase):
    """``dst[i] = first + i`` for i < count (``CreateVecIndex``; f16 or f32 ``dst``)."""

    name = "asc.vindex"
    first = prop_def(FloatAttr)
    dst = operand_def(MemRefType)
    assembly_format = "$dst `,` $first `,` $count attr-dict `:` type($dst)"

    def __init__(self, dst: SSAValue, first: float, count: SSAValue):
        super().__init__(operands=[dst, count], properties={"first": FloatAttr(float(first), 64)})

    def verify_(self) -> None:
        t = ub_buffer(self, self.dst, "destination")
        if not isinstance(t.element_type, Float16Type | Float32Type):
            raise VerifyException(f"{self.name}: the destination must be f16 or f32")
        check_count(self, self.count, destination=self.dst)


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
        check_count(self, self.count, destination=self.dst, source=self.src)


@irdl_op_definition
class VCastOp(_VectorBase):
    """``dst[i] = convert(src[i])`` with round mode ``none rint floor ceil round trunc odd``."""

    name = "asc.vcast"
    round = prop_def(StringAttr)
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    assembly_format = "$round $dst `,` $src `,` $count attr-dict `:` type($dst) `,` type($src)"

    def __init__(self, dst: SSAValue, src: SSAValue, count: SSAValue, round_mode: str = "rint"):
        super().__init__(operands=[dst, src, count], properties={"round": StringAttr(round_mode)})

    def verify_(self) -> None:
        check_kind(self, self.round.data, ROUND_MODES, "round mode")
        ub_buffer(self, self.dst, "destination")
        ub_buffer(self, self.src, "source")
        check_count(self, self.count, destination=self.dst, source=self.src)


@irdl_op_definition
class VCompareOp(_VectorBase):
    """Bit ``i`` of ``mask`` = ``lhs[i] predicate rhs[i]`` (``Compare``); ``mask`` is i1."""

    name = "asc.vcompare"
    predicate = prop_def(StringAttr)
    mask = operand_def(MemRefType)
    lhs = operand_def(MemRefType)
    rhs = operand_def(MemRefType)
    assembly_format = (
        "$predicate $mask `,` $lhs `,` $rhs `,` $count attr-dict `:` "
        "type($mask) `,` type($lhs) `,` type($rhs)"
    )

    def __init__(
        self, predicate: str, mask: SSAValue, lhs: SSAValue, rhs: SSAValue, count: SSAValue
    ):
        super().__init__(
            operands=[mask, lhs, rhs, count], properties={"predicate": StringAttr(predicate)}
        )

    def verify_(self) -> None:
        check_kind(self, self.predicate.data, COMPARE_PREDICATES, "predicate")
        self._same_dtype(self.lhs, self.rhs)
        if ub_buffer(self, self.mask, "mask").element_type != IntegerType(1):
            raise VerifyException(f"{self.name}: mask must be an i1 buffer")
        check_count(self, self.count, mask=self.mask, lhs=self.lhs, rhs=self.rhs)


@irdl_op_definition
class VSelectOp(_VectorBase):
    """``dst[i] = mask bit i ? lhs[i] : rhs[i]`` (``Select``)."""

    name = "asc.vselect"
    dst = operand_def(MemRefType)
    mask = operand_def(MemRefType)
    lhs = operand_def(MemRefType)
    rhs = operand_def(MemRefType)
    assembly_format = (
        "$dst `,` $mask `,` $lhs `,` $rhs `,` $count attr-dict `:` type($dst) "
        "`,` type($mask) `,` type($lhs) `,` type($rhs)"
    )

    def __init__(
        self, dst: SSAValue, mask: SSAValue, lhs: SSAValue, rhs: SSAValue, count: SSAValue
    ):
        super().__init__(operands=[dst, mask, lhs, rhs, count])

    def verify_(self) -> None:
        self._same_dtype(self.dst, self.lhs, self.rhs)
        if ub_buffer(self, self.mask, "mask").element_type != IntegerType(1):
            raise VerifyException(f"{self.name}: mask must be an i1 buffer")
        check_count(
            self, self.count, destination=self.dst, mask=self.mask, lhs=self.lhs, rhs=self.rhs
        )


@irdl_op_definition
class MmadOp(TransposeFlags):
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
    assembly_format = (
        "$dst `,` $a `[` $a_offset `]` `,` $b `[` $b_offset `]` `m` $m `n` $n "
        "`k` $k `lda` $lda `ldb` $ldb `ls` $ls attr-dict `:` type($dst) `,` "
        "type($a) `,` type($b)"
    )

    def __init__(
        self,
        dst: SSAValue,
        a: SSAValue,
        b: SSAValue,
        sizes: Sequence[SSAValue],
        transpose_a: bool = False,
        transpose_b: bool = False,
    ):
        """``sizes``: ``a_offset, b_offset, m, n, k, lda, ldb, ls``."""
        super().__init__(
            operands=[dst, a, b, *sizes],
            properties={
                "transpose_a": BoolAttr.from_bool(transpose_a),
                "transpose_b": BoolAttr.from_bool(transpose_b),
            },
        )

    def verify_(self) -> None:
        d = ub_buffer(self, self.dst, "destination")
        if not isinstance(d.element_type, Float32Type):
            raise VerifyException(f"{self.name}: destination must be an f32 UB buffer")
        a = gm_buffer(self, self.a, "operand a")
        b = gm_buffer(self, self.b, "operand b")
        if a.element_type != b.element_type or not isinstance(
            a.element_type, Float16Type | BFloat16Type | Float32Type
        ):
            raise VerifyException(f"{self.name}: a and b must share one dtype, f16, bf16 or f32")
        check_not_negative(
            self,
            a_offset=self.a_offset,
            b_offset=self.b_offset,
            m=self.m,
            n=self.n,
            k=self.k,
            lda=self.lda,
            ldb=self.ldb,
            ls=self.ls,
        )


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Host side: runs kernel ``callee`` (a ``func.func`` with the ``asc.kernel`` attribute)
    on ``block_dim`` cores; inputs are read from GM, results are fresh GM tensors."""

    name = "asc.launch"
    callee = prop_def(FlatSymbolRefAttr)
    block_dim = prop_def(IntegerAttr)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    assembly_format = (
        "$callee `<` $block_dim `>` `(` $inputs `)` attr-dict `:` "
        "functional-type($inputs, $outputs)"
    )

    def __init__(
        self,
        callee: str,
        block_dim: int,
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
    ):
        super().__init__(
            operands=[list(inputs)],
            result_types=[list(result_types)],
            properties={
                "callee": FlatSymbolRefAttr(callee),
                "block_dim": IntegerAttr(block_dim, 64),
            },
        )
