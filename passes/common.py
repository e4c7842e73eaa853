"""Helpers shared by the ``asc`` passes: source locations, the tensor-op inserter, kernel
installation."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from pyasc_mlir.dialects import asc, attrs
from pyasc_mlir.errors import SourceLoc
from pyasc_mlir.passes.ir_builder import IRBuilder


def loc_of(op: Operation) -> SourceLoc | None:
    """The user source location an op was built from (``asc.loc`` attribute), if any."""
    attr = op.attributes.get(asc.LOC_ATTR)
    return SourceLoc.parse(attr.data) if isinstance(attr, StringAttr) else None


class OpInserter(IRBuilder):
    """Inserts new tensor-level ops before ``anchor`` (through ``rewriter`` if given) and
    copies its ``asc.loc`` onto each of them."""

    def __init__(self, anchor: Operation, rewriter: PatternRewriter | None = None):
        block = anchor.parent_block()
        assert block is not None
        super().__init__(
            block, anchor.attributes.get(asc.LOC_ATTR), anchor=anchor, rewriter=rewriter
        )

    def add(self, op: Operation) -> SSAValue:
        """Insert ``op`` (which has a result) before the anchor; its first result."""
        result = super().add(op)
        assert result is not None
        return result

    def const(self, value: float, like: SSAValue) -> SSAValue:
        """A tensor constant of ``like``'s type filled with ``value``."""
        t = like.type
        assert isinstance(t, TensorType)
        return self.add(asc.ConstantOp(value, t))

    def unary(self, kind: str, x: SSAValue) -> SSAValue:
        """``asc.unary`` of ``kind``."""
        return self.add(asc.UnaryOp(kind, x))

    def binary(self, kind: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """``asc.binary`` of ``kind``."""
        return self.add(asc.BinaryOp(kind, a, b))

    def binary_const(self, kind: str, a: SSAValue, value: float) -> SSAValue:
        """``asc.binary`` of ``kind`` with a constant right operand."""
        return self.binary(kind, a, self.const(value, a))


def kernel_name(module: ModuleOp, fusion: asc.FusionOp) -> str:
    """A fresh kernel symbol for ``fusion``: ``<function>_kernel``, then ``_1``, ``_2`` ..."""
    parent = fusion.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    base = parent.sym_name.data if parent is not None else "kernel"
    taken = {o.sym_name.data for o in module.body.block.ops if isinstance(o, func.FuncOp)}
    name, suffix = f"{base}_kernel", 1
    while name in taken:
        name, suffix = f"{base}_kernel_{suffix}", suffix + 1
    return name


def install_kernel(
    module: ModuleOp,
    fusion: asc.FusionOp,
    kernel: func.FuncOp,
    tiling: dict[str, int],
    platform: str,
    max_buffers: int | None = None,
    extra_results: list[TensorType] | None = None,
) -> None:
    """Add the lowered ``kernel`` (its ``asc.tiling`` struct, platform and, when double
    buffering was dropped, ``asc.max_buffers``) to ``module`` and replace ``fusion`` by an
    ``asc.launch`` of it on ``tiling["block_dim"]`` cores. ``extra_results``: GM scratch
    tensors the kernel takes after the fusion's outputs (fresh launch results nothing reads,
    e.g. the fused attention's P workspace)."""
    attrs.set_kernel_tiling(kernel, tiling)
    attrs.set_kernel_platform(kernel, platform)
    if max_buffers is not None:
        attrs.set_kernel_max_buffers(kernel, max_buffers)
    module.body.block.add_op(kernel)
    launch = asc.LaunchOp(
        kernel.sym_name.data,
        tiling["block_dim"],
        list(fusion.inputs),
        [*(r.type for r in fusion.outputs), *(extra_results or [])],
    )
    if asc.LOC_ATTR in fusion.attributes:
        launch.attributes[asc.LOC_ATTR] = fusion.attributes[asc.LOC_ATTR]
    assert fusion.parent is not None
    fusion.parent.insert_op_before(launch, fusion)
    for old, new in zip(fusion.outputs, launch.outputs[: len(fusion.outputs)], strict=True):
        old.replace_all_uses_with(new)
    fusion.detach()
    fusion.erase()
