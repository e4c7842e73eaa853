"""What the ``asc`` op modules share: the allowed values of the ops' string properties (kind
tables derived from the op table ``pyasc_mlir.dialects.opset``), the ``#asc.scope`` attribute
and the buffer types it makes, the ``transpose_a``/``transpose_b`` base of the matrix products,
and the verifier helpers that raise the dialect's ``VerifyException`` messages.

``pyasc_mlir.dialects.asc`` re-exports the public names; import them from there.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    BFloat16Type,
    BoolAttr,
    Float16Type,
    Float32Type,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    prop_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects import opset

VECTOR_UNARY_KINDS = tuple(k for k, r in opset.UNARY.items() if not r.composite)
"""Unary kinds the vector unit has an instruction (or an Ascend C API call) for."""
COMPOSITE_UNARY_KINDS = tuple(k for k, r in opset.UNARY.items() if r.composite)
"""Unary kinds that ``asc-decompose`` expands (tensor level only)."""
UNARY_KINDS = (*VECTOR_UNARY_KINDS, *COMPOSITE_UNARY_KINDS)
"""Unary kinds (the op table's unary records)."""
BINARY_KINDS = tuple(opset.BINARY)
"""Elementwise binary kinds of ``asc.binary`` and ``asc.vbinary``."""
COMPARE_PREDICATES = tuple(opset.COMPARE)
"""Predicates of ``asc.compare`` and ``asc.vcompare``."""
REDUCE_KINDS = tuple(opset.REDUCE)
"""Reduction kinds; ``mean`` and ``var`` are composites that ``asc-decompose`` expands."""
VECTOR_REDUCE_KINDS = tuple(k for k, r in opset.REDUCE.items() if not r.composite)
"""Reduction kinds of ``asc.vreduce``."""
SCALAR_KINDS = tuple(opset.SCALAR)
"""Vector-scalar kinds of ``asc.vscalar``."""
ROUND_MODES = ("none", "rint", "floor", "ceil", "round", "trunc", "odd")
"""Round modes of ``asc.vcast``."""
SCOPES = ("gm", "ub", "l1", "l0a", "l0b", "l0c")
"""Memory scopes of ``#asc.scope``."""
ALLOC_ROLES = ("in", "out", "tmp", "const")
"""``in``/``out``: copy-in/copy-out queue buffers; ``tmp``: compute scratch; ``const``: loaded
once per kernel."""
LOC_ATTR = "asc.loc"
"""Name of the attribute that carries an op's source location (``"file:line:col"``)."""
TORCH_PICK_ATTR = "asc.torch_pick"
"""Attribute of an ``asc.reduce`` ``max``/``min`` written with PyTorch's ``(values, indices)``
spelling (``x.max(dim=d).values``, ``torch.min(x, dim=d)``): its value is the spelling. PyTorch
sends that reduction's gradient to the one returned index; ``asc-autodiff`` refuses to
differentiate it (no argmax here) rather than use ``amax``'s even split among ties."""


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
            raise VerifyException(
                f"#asc.scope: unknown scope {self.scope.data!r}; expected "
                f"one of {', '.join(SCOPES)}"
            )


def scope_of(t: Attribute) -> str | None:
    """The scope name of a memref type, or ``None`` when it has no ``#asc.scope``."""
    if isinstance(t, MemRefType) and isinstance(t.memory_space, ScopeAttr):
        return t.memory_space.scope.data
    return None


def buffer_type(elements: int, dtype: Attribute, scope: str) -> MemRefType:
    """A flat buffer type ``memref<elements x dtype, #asc.scope<scope>>``."""
    return MemRefType(dtype, [elements], memory_space=ScopeAttr(scope))


def element_bits(t: Attribute) -> int:
    """Width in bits of a scalar type (f16 and bf16 16, f32 32, i1 1, i8 8 ...)."""
    if isinstance(t, Float16Type | BFloat16Type):
        return 16
    if isinstance(t, Float32Type):
        return 32
    if isinstance(t, IntegerType):
        return t.width.data
    raise ValueError(f"unsupported element type {t}")


# --------------------------------------------------------------------------- verifiers


class TransposeFlags(IRDLOperation):
    """The ``transpose_a``/``transpose_b`` flags of a matrix product (``asc.matmul``,
    ``asc.mmad``)."""

    irdl_options = (ParsePropInAttrDict(),)
    transpose_a = prop_def(BoolAttr)
    transpose_b = prop_def(BoolAttr)

    @property
    def trans_a(self) -> bool:
        """Whether operand A is stored transposed."""
        return bool(self.transpose_a.value.data)

    @property
    def trans_b(self) -> bool:
        """Whether operand B is stored transposed."""
        return bool(self.transpose_b.value.data)


def check_kind(op: IRDLOperation, value: str, allowed: Sequence[str], what: str) -> None:
    """Raise ``VerifyException`` (``"<op>: unknown <what> '<value>'; expected one of ..."``)
    unless ``value`` is in ``allowed``."""
    if value not in allowed:
        raise VerifyException(
            f"{op.name}: unknown {what} {value!r}; expected one of {', '.join(allowed)}"
        )


def float_tensor(op: IRDLOperation, t: Attribute, what: str) -> TensorType:
    """``t`` as a ``TensorType`` of f16, bf16 or f32; raises ``VerifyException`` naming ``op``
    and ``what`` (``"operand"``, ``"lhs"``, ...) otherwise."""
    if not isinstance(t, TensorType) or not isinstance(
        t.element_type, Float16Type | BFloat16Type | Float32Type
    ):
        raise VerifyException(f"{op.name}: {what} must be a tensor of f16, bf16 or f32, got {t}")
    return t


def ub_buffer(op: IRDLOperation, value: SSAValue, what: str) -> MemRefType:
    """The type of ``value`` if it is a flat UB buffer ``memref<N x T, #asc.scope<ub>>``;
    raises ``VerifyException`` naming ``op`` and ``what`` otherwise."""
    t = value.type
    if scope_of(t) != "ub" or not isinstance(t, MemRefType) or len(t.get_shape()) != 1:
        raise VerifyException(
            f"{op.name}: {what} must be a flat UB buffer memref<N x T, #asc.scope<ub>>, got {t}"
        )
    return t


def gm_buffer(op: IRDLOperation, value: SSAValue, what: str) -> MemRefType:
    """The type of ``value`` if it is a GM buffer (``#asc.scope<gm>``, any rank); raises
    ``VerifyException`` naming ``op`` and ``what`` otherwise."""
    t = value.type
    if scope_of(t) != "gm" or not isinstance(t, MemRefType):
        raise VerifyException(f"{op.name}: {what} must be a GM buffer, got {t}")
    return t
