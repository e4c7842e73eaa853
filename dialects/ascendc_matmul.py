"""The ``ascendc`` ops of the high-level Matmul API (the Cube unit): ``TCubeTiling``,
the Matmul object, ``REGIST_MATMUL_OBJ``, ``SetTensorA/B``, ``SetTail``, ``Iterate``,
``GetTensorC`` and ``End``; and what a kernel using it declares first: its kernel type
(``KERNEL_TASK_TYPE_DEFAULT``) and the system workspace (``SetSysWorkspace``).

``pyasc_mlir.dialects.ascendc`` re-exports the public names; import them from there.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    BFloat16Type,
    BoolAttr,
    Float16Type,
    Float32Type,
    IndexType,
    StringAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects.ascendc_types import (
    CubeTilingType,
    GlobalTensorType,
    LocalTensorType,
    MatmulObjType,
    elem,
)

KERNEL_TYPES = ("AIV_ONLY", "AIC_ONLY", "MIX_AIC_1_1", "MIX_AIC_1_2")
"""Kernel types an ``ascendc.kernel_type`` may declare (``KERNEL_TYPE_<name>``; Ascend C API
reference, "设置Kernel类型")."""


@irdl_op_definition
class KernelTypeOp(IRDLOperation):
    """``KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_<kind>);``: the cores the kernel runs on. A
    kernel with a Matmul object declares ``MIX_AIC_1_1`` (one vector block per Cube block, so
    ``GetBlockIdx() < blockDim`` on both sides); first op of the kernel body."""

    name = "ascendc.kernel_type"
    kind = prop_def(StringAttr)
    assembly_format = "$kind attr-dict"

    def __init__(self, kind: str):
        super().__init__(properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        if self.kind.data not in KERNEL_TYPES:
            raise VerifyException(f"{self.name}: kind must be one of {KERNEL_TYPES}")


@irdl_op_definition
class SetSysWorkspaceOp(IRDLOperation):
    """``SetSysWorkspace(workspace);``: the kernel's ``workspace`` argument (the host allocates
    ``platform.LIB_API_WORKSPACE_BYTES`` for it) becomes the system workspace the Matmul API
    needs; must precede ``REGIST_MATMUL_OBJ``."""

    name = "ascendc.set_sys_workspace"
    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


@irdl_op_definition
class CubeTilingOp(IRDLOperation):
    """``TCubeTiling NAME{}; NAME.F = tiling.PREFIX_F; ...`` for every field F of
    ``pyasc_mlir.cube_tiling.TCUBE_FIELDS`` (the values travel in the kernel's tiling struct,
    filled by the host)."""

    name = "ascendc.cube_tiling"
    prefix = prop_def(StringAttr)
    result = result_def(CubeTilingType)
    assembly_format = "$prefix attr-dict"

    def __init__(self, prefix: str):
        super().__init__(properties={"prefix": StringAttr(prefix)}, result_types=[CubeTilingType()])


@irdl_op_definition
class MatmulObjectOp(IRDLOperation):
    """Declares a Matmul object (see ``MatmulObjType``); ``transpose_a``/``transpose_b`` are
    the ``isTrans`` template arguments of A's and B's ``MatmulType``."""

    name = "ascendc.matmul_object"
    irdl_options = (ParsePropInAttrDict(),)
    transpose_a = prop_def(BoolAttr)
    transpose_b = prop_def(BoolAttr)
    result = result_def(MatmulObjType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, dtype: Attribute, transpose_a: bool, transpose_b: bool):
        super().__init__(
            properties={
                "transpose_a": BoolAttr.from_bool(transpose_a),
                "transpose_b": BoolAttr.from_bool(transpose_b),
            },
            result_types=[MatmulObjType(dtype)],
        )

    def verify_(self) -> None:
        if not isinstance(self.result.type.element_type, Float16Type | BFloat16Type | Float32Type):
            raise VerifyException(f"{self.name}: A/B element type must be f16, bf16 or f32")


@irdl_op_definition
class RegistMatmulOp(IRDLOperation):
    """``REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm0, &tiling0, mm1, &tiling1, ...)``:
    operands alternate Matmul object, TCubeTiling; at most 4 objects; must come before the
    first ``InitBuffer`` (split-core mode)."""

    name = "ascendc.regist_matmul"
    pairs = var_operand_def()
    assembly_format = "$pairs attr-dict `:` type($pairs)"

    def __init__(self, pairs: Sequence[SSAValue]):
        super().__init__(operands=[list(pairs)])

    def verify_(self) -> None:
        types = [v.type for v in self.pairs]
        if not types or len(types) % 2 or len(types) > 8:
            raise VerifyException(f"{self.name}: expected 1 to 4 (Matmul, TCubeTiling) pairs")
        for i, t in enumerate(types):
            want = MatmulObjType if i % 2 == 0 else CubeTilingType
            if not isinstance(t, want):
                raise VerifyException(f"{self.name}: operand {i} must be a {want.name}")


class _MatmulSetTensorBase(IRDLOperation):
    """``mm.SetTensorA/B(gm, isTranspose)``: the operand's top-left element in GM."""

    irdl_options = (ParsePropInAttrDict(),)
    mm = operand_def(MatmulObjType)
    transpose = prop_def(BoolAttr)
    tensor = operand_def(GlobalTensorType)
    assembly_format = "$mm `,` $tensor attr-dict `:` type($mm) `,` type($tensor)"

    def __init__(self, mm: SSAValue, tensor: SSAValue, transpose: bool):
        super().__init__(
            operands=[mm, tensor], properties={"transpose": BoolAttr.from_bool(transpose)}
        )

    def verify_(self) -> None:
        mm_type = self.mm.type
        assert isinstance(mm_type, MatmulObjType)  # the operand's constraint, verified first
        if elem(self.tensor.type) != mm_type.element_type:
            raise VerifyException(f"{self.name}: tensor and Matmul element types differ")


@irdl_op_definition
class MatmulSetTensorAOp(_MatmulSetTensorBase):
    """``mm.SetTensorA(gm, isTransposeA)``: A's top-left element in GM."""

    name = "ascendc.matmul_set_tensor_a"


@irdl_op_definition
class MatmulSetTensorBOp(_MatmulSetTensorBase):
    """``mm.SetTensorB(gm, isTransposeB)``: B's top-left element in GM."""

    name = "ascendc.matmul_set_tensor_b"


@irdl_op_definition
class MatmulSetTailOp(IRDLOperation):
    """``mm.SetTail(m, n, k)``: this computation's singleCoreM/N/K (elements)."""

    name = "ascendc.matmul_set_tail"
    mm = operand_def(MatmulObjType)
    m = operand_def(IndexType)
    n = operand_def(IndexType)
    k = operand_def(IndexType)
    assembly_format = "$mm `,` $m `,` $n `,` $k attr-dict `:` type($mm)"

    def __init__(self, mm: SSAValue, m: SSAValue, n: SSAValue, k: SSAValue):
        super().__init__(operands=[mm, m, n, k])


@irdl_op_definition
class MatmulIterateOp(IRDLOperation):
    """``mm.Iterate();``: computes the next ``[baseM, baseN]`` block of C (f32 accumulation
    over K)."""

    name = "ascendc.matmul_iterate"
    mm = operand_def(MatmulObjType)
    assembly_format = "$mm attr-dict `:` type($mm)"

    def __init__(self, mm: SSAValue):
        super().__init__(operands=[mm])


@irdl_op_definition
class MatmulGetTensorCOp(IRDLOperation):
    """``mm.GetTensorC(ub, 0, true)`` (``enSequentialWrite``): the block ``Iterate``
    computed, ND at ``ub[0]`` with row stride ``baseN``; columns past the block's width are 0.
    ``ub`` must lie in a ``TPosition::VECIN`` buffer (C's position)."""

    name = "ascendc.matmul_get_tensor_c"
    mm = operand_def(MatmulObjType)
    tensor = operand_def(LocalTensorType)
    assembly_format = "$mm `,` $tensor attr-dict `:` type($mm) `,` type($tensor)"

    def __init__(self, mm: SSAValue, tensor: SSAValue):
        super().__init__(operands=[mm, tensor])

    def verify_(self) -> None:
        if not isinstance(elem(self.tensor.type), Float32Type):
            raise VerifyException(f"{self.name}: C is an f32 LocalTensor")


@irdl_op_definition
class MatmulEndOp(IRDLOperation):
    """``mm.End();``: the object's last call in this core."""

    name = "ascendc.matmul_end"
    mm = operand_def(MatmulObjType)
    assembly_format = "$mm attr-dict `:` type($mm)"

    def __init__(self, mm: SSAValue):
        super().__init__(operands=[mm])
