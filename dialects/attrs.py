"""The discardable ``asc.*`` attributes passes put on ops, declared once, with typed accessors.

A *kernel* is a ``func.func`` marked :data:`KERNEL_ATTR`; ``asc-tile``, ``asc-lower-cube`` and
``asc-lower-layout`` create kernels and give them their tiling struct (:data:`TILING_ATTR`),
platform (:data:`PLATFORM_ATTR`) and, when double buffering had to be dropped, a buffer-count
limit (:data:`MAX_BUFFERS_ATTR`); ``asc-buffer-alloc`` records the UB layout it chose
(:data:`UB_BYTES_ATTR`, :data:`CALC_BASE_ATTR`, :data:`CALC_BYTES_ATTR`). The driver asks for
dynamic dims with :data:`DYNAMIC_REQUEST_ATTR` and ``asc-tile`` answers with the host's
tiling recipe, :data:`DYNAMIC_SPEC_ATTR` (both JSON strings, see ``passes/dynamic_shapes.py``).
A kernel whose blocks share a GM workspace (``ascendc.workspace``, ``ascendc.sync_all``) gives its
size in :data:`WORKSPACE_BYTES_ATTR`.
The source-location attribute is ``asc.LOC_ATTR`` (``dialects/asc.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, UnitAttr, i64
from xdsl.ir import Operation

KERNEL_ATTR = "asc.kernel"
"""Unit attribute marking a ``func.func`` as a device kernel (arguments are GM buffers)."""
TILING_ATTR = "asc.tiling"
"""A kernel's tiling struct: dictionary of field name -> ``i64`` integer."""
PLATFORM_ATTR = "asc.platform"
"""The platform table name (``pyasc_mlir.platform``) a kernel was tiled for."""
MAX_BUFFERS_ATTR = "asc.max_buffers"
"""Copies of each copy-in/copy-out buffer a kernel's tiles were sized for, when fewer than
asked (``asc-double-buffer`` rotates at most this many)."""
UB_BYTES_ATTR = "asc.ub_bytes"
"""UB bytes a kernel uses in total (set by ``asc-buffer-alloc``)."""
CALC_BASE_ATTR = "asc.calc_base"
"""UB byte offset of a kernel's compute arena (``TBuf<VECCALC>``; set by ``asc-buffer-alloc``)."""
CALC_BYTES_ATTR = "asc.calc_bytes"
"""Bytes of a kernel's compute arena (set by ``asc-buffer-alloc``)."""
WORKSPACE_BYTES_ATTR = "asc.workspace_bytes"
"""Bytes of a kernel's own GM workspace (``i64``): the region its ``ascendc.workspace`` ops view,
shared by every block of a launch. The host passes it zero-filled in the kernel's ``workspace``
argument, after the Matmul API's system workspace when the kernel also has one
(``pyasc_mlir.cube_tiling.launch_info`` / ``user_workspace_base``). ``ascendc.sync_all`` (the
hard ``SyncAll()``) needs it nonzero."""
DYNAMIC_REQUEST_ATTR = "asc.dynamic"
"""On the top-level ``func.func``: the dynamic dims the driver asks for (JSON string)."""
DYNAMIC_SPEC_ATTR = "asc.dynamic_tiling"
"""On a kernel with dynamic extents: the host's tiling recipe (JSON string)."""


def is_kernel(op: Operation) -> bool:
    """``op`` is a kernel: a ``func.func`` marked :data:`KERNEL_ATTR`."""
    return isinstance(op, func.FuncOp) and KERNEL_ATTR in op.attributes


def mark_kernel(kernel: func.FuncOp) -> None:
    """Mark ``kernel`` as a device kernel (:data:`KERNEL_ATTR`)."""
    kernel.attributes[KERNEL_ATTR] = UnitAttr()


def enclosing_func(op: Operation) -> func.FuncOp | None:
    """The ``func.func`` that ``op`` sits in, at any depth (``None`` when there is none)."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def module_kernels(module: ModuleOp) -> list[func.FuncOp]:
    """The kernels at the top level of ``module``, in order."""
    return [op for op in module.body.block.ops if is_kernel(op)]


def kernel_tiling(op: Operation) -> dict[str, int]:
    """``op``'s tiling struct (:data:`TILING_ATTR`) as ``{field: value}``; empty when it has
    none. Entries that are not integers are skipped (the interpreters report them)."""
    attr = op.attributes.get(TILING_ATTR)
    if not isinstance(attr, DictionaryAttr):
        return {}
    return {k: v.value.data for k, v in attr.data.items() if isinstance(v, IntegerAttr)}


def set_kernel_tiling(op: Operation, fields: Mapping[str, int]) -> None:
    """Set ``op``'s tiling struct to ``fields`` (``i64`` values, in the given order)."""
    op.attributes[TILING_ATTR] = DictionaryAttr({k: IntegerAttr(v, i64) for k, v in fields.items()})


def add_tiling_fields(op: Operation, fields: Mapping[str, int]) -> None:
    """Add (or overwrite) ``fields`` (``i64``) in ``op``'s tiling struct, keeping the others
    as they are."""
    attr = op.attributes.get(TILING_ATTR)
    merged = dict(attr.data) if isinstance(attr, DictionaryAttr) else {}
    merged.update({k: IntegerAttr(v, i64) for k, v in fields.items()})
    op.attributes[TILING_ATTR] = DictionaryAttr(merged)


def kernel_platform(op: Operation) -> str | None:
    """The platform name ``op`` was tiled for (:data:`PLATFORM_ATTR`), if any."""
    attr = op.attributes.get(PLATFORM_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


def set_kernel_platform(op: Operation, name: str) -> None:
    """Record the platform name ``op`` was tiled for."""
    op.attributes[PLATFORM_ATTR] = StringAttr(name)


def kernel_max_buffers(op: Operation) -> int | None:
    """The buffer-count limit of ``op`` (:data:`MAX_BUFFERS_ATTR`), if any."""
    attr = op.attributes.get(MAX_BUFFERS_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def set_kernel_max_buffers(op: Operation, buffers: int) -> None:
    """Limit ``op``'s copy-in/copy-out buffers to ``buffers`` copies."""
    op.attributes[MAX_BUFFERS_ATTR] = IntegerAttr(buffers, i64)


def set_ub_layout(op: Operation, calc_base: int, calc_bytes: int, ub_bytes: int) -> None:
    """Record the UB layout ``asc-buffer-alloc`` chose for kernel ``op`` (bytes)."""
    op.attributes[CALC_BASE_ATTR] = IntegerAttr(calc_base, i64)
    op.attributes[CALC_BYTES_ATTR] = IntegerAttr(calc_bytes, i64)
    op.attributes[UB_BYTES_ATTR] = IntegerAttr(ub_bytes, i64)


def kernel_ub_bytes_used(op: Operation) -> int | None:
    """UB bytes kernel ``op`` uses (:data:`UB_BYTES_ATTR`), once ``asc-buffer-alloc`` ran."""
    attr = op.attributes.get(UB_BYTES_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def kernel_workspace_bytes(op: Operation) -> int | None:
    """Bytes of kernel ``op``'s own GM workspace (:data:`WORKSPACE_BYTES_ATTR`), ``None`` when
    it has no such attribute."""
    attr = op.attributes.get(WORKSPACE_BYTES_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def set_kernel_workspace_bytes(op: Operation, nbytes: int) -> None:
    """Record that kernel ``op`` needs ``nbytes`` bytes of its own GM workspace."""
    op.attributes[WORKSPACE_BYTES_ATTR] = IntegerAttr(nbytes, i64)
