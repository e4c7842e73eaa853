"""Static range checks of the constant offsets, counts and strides of tile-level ``asc`` ops
and ``ascendc`` ops, for their verifiers.

Only operands defined by an ``arith.constant`` of an integer type are checked (a value computed
at run time is checked by the interpreters and the CPU runtime instead). The rules are those of
the tile interpreter (``pyasc_mlir.interpreter.tile_access``): a count is in ``[0, size]`` of
every buffer it covers; a block copy of ``count`` blocks of ``length`` elements from ``start``
with block stride ``stride`` ends at ``start + (count - 1) * stride + length`` <= size; offsets
and strides are never negative. UB addresses of a copy must be DataBlock aligned
(``DATA_BLOCK_BYTES`` = 32 bytes, ``pyasc_mlir.platform``; Ascend C ``DataCopy``/
``DataCopyPad`` take the UB side in whole 32-byte blocks). GM workspace views and the hard
``SyncAll()`` are checked against the enclosing kernel's ``asc.workspace_bytes``
(:func:`check_workspace_region`, :func:`check_sync_all_workspace`).
"""

from __future__ import annotations

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, MemRefType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects.asc_attrs import element_bits
from pyasc_mlir.dialects.attrs import (
    KERNEL_ATTR,
    TILING_ATTR,
    WORKSPACE_BYTES_ATTR,
    enclosing_func,
    kernel_workspace_bytes,
)
from pyasc_mlir.platform import DATA_BLOCK_BYTES, ceil_div


def const_index(value: SSAValue) -> int | None:
    """The value of ``value`` when an ``arith.constant`` of an integer or index type defines
    it, else ``None``."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def static_elements(value: SSAValue) -> int | None:
    """Elements of a 1-D (or any static) ``memref`` operand; ``None`` when a dim is dynamic
    or the operand is no memref."""
    t = value.type
    if not isinstance(t, MemRefType):
        return None
    n = 1
    for d in t.get_shape():
        if d < 0:
            return None
        n *= d
    return n


def check_not_negative(op: Operation, **values: SSAValue) -> dict[str, int]:
    """The constant ones of ``values`` (name -> value); raise if one is negative."""
    known: dict[str, int] = {}
    for name, v in values.items():
        c = const_index(v)
        if c is None:
            continue
        if c < 0:
            raise VerifyException(f"{op.name}: {name} {c} is negative")
        known[name] = c
    return known


def check_count(op: Operation, count: SSAValue, **buffers: SSAValue) -> None:
    """A constant ``count`` must be in ``[0, elements]`` of every named buffer (i1 masks
    count bits, one per element of their ``memref``)."""
    n = check_not_negative(op, count=count).get("count")
    if n is None:
        return
    for name, buf in buffers.items():
        size = static_elements(buf)
        if size is not None and n > size:
            raise VerifyException(
                f"{op.name}: count {n} exceeds the {size} elements of the {name} buffer"
            )


def check_blocks(
    op: Operation,
    side: str,
    buf: SSAValue,
    start: SSAValue,
    count: int | None,
    length: int | None,
    stride: int | None,
) -> None:
    """``count`` blocks of ``length`` elements from constant ``start``, block ``stride``
    apart, must lie inside ``buf`` (when all of them are known)."""
    s = const_index(start)
    size = static_elements(buf)
    if None in (s, count, length, stride, size) or count == 0 or length == 0:
        return
    assert s is not None and count is not None and length is not None and stride is not None
    end = s + (count - 1) * stride + length
    if size is not None and end > size:
        raise VerifyException(
            f"{op.name}: the {side} blocks end at element {end} (offset {s} + ({count} - 1) x "
            f"stride {stride} + length {length}), past the {size} elements of the {side} "
            "buffer"
        )


def check_ub_alignment(
    op: Operation,
    offset: SSAValue,
    stride: int | None,
    length: int | None,
    count: int | None,
    elem_bytes: int,
) -> None:
    """The UB side of a block copy: a constant offset must start a DataBlock; when more than
    one block may be copied, a constant stride must be whole DataBlocks and hold a block of
    ``length`` elements padded to the DataBlock."""
    o = const_index(offset)
    if o is not None and (o * elem_bytes) % DATA_BLOCK_BYTES:
        raise VerifyException(
            f"{op.name}: UB offset {o} ({o * elem_bytes} bytes) is not a "
            f"multiple of the {DATA_BLOCK_BYTES}-byte DataBlock"
        )
    if stride is None or count in (0, 1):
        return
    if (stride * elem_bytes) % DATA_BLOCK_BYTES:
        raise VerifyException(
            f"{op.name}: UB block stride {stride} ({stride * elem_bytes} "
            f"bytes) is not a multiple of the {DATA_BLOCK_BYTES}-byte "
            "DataBlock"
        )
    if length is not None:
        per_block = DATA_BLOCK_BYTES // elem_bytes
        padded = ceil_div(length, per_block) * per_block
        if stride < padded:
            raise VerifyException(
                f"{op.name}: UB block stride {stride} is shorter than a block "
                f"of {length} elements padded to the DataBlock ({padded})"
            )


def check_tiling_field(op: Operation, field: str) -> None:
    """Inside a kernel (a ``func.func`` marked ``asc.kernel``), ``field`` must be a field of
    the kernel's tiling struct (its ``asc.tiling`` dictionary); outside kernels nothing is
    checked (host code, unit tests)."""
    kernel = op.parent_op()
    while kernel is not None and not isinstance(kernel, func.FuncOp):
        kernel = kernel.parent_op()
    if kernel is None or KERNEL_ATTR not in kernel.attributes:
        return
    tiling = kernel.attributes.get(TILING_ATTR)
    name = kernel.sym_name.data
    if not isinstance(tiling, DictionaryAttr):
        raise VerifyException(
            f"{op.name}: kernel @{name} has no asc.tiling attribute, so it "
            f"has no tiling field {field!r}"
        )
    if field not in tiling.data:
        raise VerifyException(
            f"{op.name}: kernel @{name} has no tiling field {field!r} (its "
            f"asc.tiling has: {', '.join(tiling.data) or 'no fields'})"
        )


WORKSPACE_ELEMENT_TYPES = ("f16", "bf16", "f32", "i8", "i32", "i64")
"""Element types an ``ascendc.workspace`` view may have (those the emitter prints)."""


def _workspace_kernel(op: Operation) -> tuple[str, int | None]:
    """The name of the ``func.func`` around ``op`` (``"?"`` outside one) and its
    ``asc.workspace_bytes`` (``None`` when it has none)."""
    kernel = enclosing_func(op)
    if kernel is None:
        return "?", None
    return kernel.sym_name.data, kernel_workspace_bytes(kernel)


def check_workspace_region(op: Operation, offset: int, count: int, element_type: Attribute) -> None:
    """An ``ascendc.workspace`` view: ``offset`` a non-negative multiple of 32 bytes, ``count``
    positive, an element type of :data:`WORKSPACE_ELEMENT_TYPES`, and the bytes
    ``[offset, offset + count * sizeof(T))`` inside the enclosing kernel's
    ``asc.workspace_bytes`` when it has that attribute."""
    if offset < 0 or offset % DATA_BLOCK_BYTES:
        raise VerifyException(
            f"{op.name}: offset {offset} must be a non-negative multiple of "
            f"{DATA_BLOCK_BYTES} bytes (GM workspace regions start on a DataBlock)"
        )
    if count <= 0:
        raise VerifyException(f"{op.name}: count {count} must be positive")
    spelled = str(element_type)
    if spelled not in WORKSPACE_ELEMENT_TYPES:
        raise VerifyException(
            f"{op.name}: element type {spelled} is not one of {', '.join(WORKSPACE_ELEMENT_TYPES)}"
        )
    name, limit = _workspace_kernel(op)
    end = offset + count * element_bits(element_type) // 8
    if limit is not None and end > limit:
        raise VerifyException(
            f"{op.name}: bytes [{offset}, {end}) of the workspace exceed kernel @{name}'s "
            f"{WORKSPACE_BYTES_ATTR} = {limit}"
        )


def check_sync_all_workspace(op: Operation) -> None:
    """The hard ``SyncAll()`` needs a GM workspace (documented: the tiling's workspace size must
    not be 0): the enclosing kernel's ``asc.workspace_bytes`` must be positive."""
    name, limit = _workspace_kernel(op)
    if not limit or limit <= 0:
        have = "has none" if limit is None else f"is {limit}"
        raise VerifyException(
            f"{op.name}: the hard SyncAll() needs a nonzero GM workspace, but kernel @{name}'s "
            f"{WORKSPACE_BYTES_ATTR} {have} (documented: the workspace size must not be 0)"
        )
