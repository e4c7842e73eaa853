"""The ``ascendc`` dialect's types: ``!ascendc.local_tensor<T>`` (``LocalTensor<T>``),
``!ascendc.global_tensor<T>`` (``GlobalTensor<T>``), ``!ascendc.queue`` (``TQue``),
``!ascendc.tbuf`` (``TBuf``), ``!ascendc.matmul<T>`` (a Matmul object) and
``!ascendc.cube_tiling`` (``TCubeTiling``).

``pyasc_mlir.dialects.ascendc`` re-exports the public names; import them from there.
"""

from __future__ import annotations

from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer


class _ElemType(ParametrizedAttribute, TypeAttribute):
    """A type with one element-type parameter, written ``!ascendc.NAME<T>``."""

    element_type: Attribute

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute]:
        with parser.in_angle_brackets():
            return (parser.parse_type(),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element_type)


@irdl_attr_definition
class LocalTensorType(_ElemType):
    """``LocalTensor<T>``: a view of on-chip (UB) memory."""

    name = "ascendc.local_tensor"


@irdl_attr_definition
class GlobalTensorType(_ElemType):
    """``GlobalTensor<T>``: a view of Global Memory (GM)."""

    name = "ascendc.global_tensor"


@irdl_attr_definition
class QueueType(ParametrizedAttribute, TypeAttribute):
    """``TQue<TPosition::VECIN|VECOUT, 1>``."""

    name = "ascendc.queue"


@irdl_attr_definition
class TBufType(ParametrizedAttribute, TypeAttribute):
    """``TBuf<TPosition::VECCALC>``."""

    name = "ascendc.tbuf"


@irdl_attr_definition
class MatmulObjType(_ElemType):
    """``Matmul<MatmulType<TPosition::GM, CubeFormat::ND, T, transA>, MatmulType<TPosition::GM,
    CubeFormat::ND, T, transB>, MatmulType<TPosition::VECIN, CubeFormat::ND, float>,
    MatmulType<TPosition::GM, CubeFormat::ND, float>>``: a high-level Matmul object whose A
    and B (GM, ND, element type ``T``) give an f32 C in UB."""

    name = "ascendc.matmul"


@irdl_attr_definition
class CubeTilingType(ParametrizedAttribute, TypeAttribute):
    """``TCubeTiling``: the tiling struct of one Matmul object."""

    name = "ascendc.cube_tiling"


Tensor = LocalTensorType | GlobalTensorType
"""A local or global tensor type (operand constraint of ops that take either)."""


def elem(t: Attribute) -> Attribute:
    """Element type of a local/global tensor type."""
    assert isinstance(t, LocalTensorType | GlobalTensorType), t
    return t.element_type
