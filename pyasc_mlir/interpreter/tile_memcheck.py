"""Memory check of the tile level: the shadow ("defined" bits) of UB and fresh buffers.

``BlockState.shadow`` holds one "defined" bit per UB bit (fresh allocs get their own shadow),
cleared at the block start. A shadow is viewed with one unsigned integer per element of its
buffer (uint16 for f16, uint32 for f32, uint8 for i8 and for packed masks): an element is
defined iff its shadow is all ones; a mask bit iff its shadow bit is set. The rule is the one of
``docs/CPU_RUNTIME.md`` ("Memory check"), as in the CPU build and the ascendc level.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.ir import Operation

from pyasc_mlir.interpreter.tile_access import is_mask, mask_bits, store_bits
from pyasc_mlir.interpreter.tile_state import BlockState, TileMemoryError, tile_mem_fail

__all__ = [
    "SHADOW_UINT",
    "address",
    "define",
    "defined",
    "elems_defined",
    "full_value",
    "propagate",
    "set_defined",
    "shadow_of",
    "uninit_error",
]

SHADOW_UINT: dict[int, np.dtype] = {
    1: np.dtype(np.uint8),
    2: np.dtype(np.uint16),
    4: np.dtype(np.uint32),
    8: np.dtype(np.uint64),
}
"""Element size in bytes -> the unsigned dtype a shadow is viewed with (one per element)."""


def address(buf: np.ndarray) -> int:
    """The memory address of ``buf``'s first byte."""
    return buf.__array_interface__["data"][0]


def shadow_of(state: BlockState, buf: np.ndarray) -> np.ndarray | None:
    """The shadow of ``buf`` (a contiguous view of UB or of a fresh alloc), one unsigned
    integer per element; ``None`` when memory check is off or ``buf`` is GM."""
    if state.shadow is None:
        return None
    addr, ub = address(buf), state.ub
    start = addr - address(ub)
    if 0 <= start < ub.size:
        return state.shadow[start : start + buf.nbytes].view(SHADOW_UINT[buf.dtype.itemsize])
    for base, arr, sh in state.fresh:
        if base <= addr < base + arr.nbytes:
            return sh[addr - base : addr - base + buf.nbytes].view(SHADOW_UINT[buf.dtype.itemsize])
    return None


def full_value(sh: np.ndarray) -> Any:
    """The all-ones ("defined") value of the shadow's element type."""
    return np.iinfo(sh.dtype).max


def defined(sh: np.ndarray) -> np.ndarray:
    """Per element: all bits defined."""
    return sh == full_value(sh)


def define(sh: np.ndarray, ok: Any = True) -> None:
    """Set the shadow of every element of ``sh``: defined where ``ok``."""
    sh[...] = np.where(ok, full_value(sh), 0) if ok is not True else full_value(sh)


def elems_defined(state: BlockState, buf: np.ndarray, n: int) -> np.ndarray | bool:
    """Definedness of the first ``n`` elements (mask bits for masks) of ``buf``; ``True`` when
    it has no shadow (GM, or memory check off)."""
    sh = shadow_of(state, buf)
    if sh is None:
        return True
    if is_mask(buf):
        return mask_bits(sh)[:n]
    return defined(sh[:n])


def set_defined(state: BlockState, buf: np.ndarray, n: int, ok: Any) -> None:
    """Set the definedness of the first ``n`` elements (mask bits) of ``buf`` to ``ok``."""
    sh = shadow_of(state, buf)
    if sh is None:
        return
    if is_mask(buf):
        sh_bits = mask_bits(sh)
        sh_bits[:n] = ok
        store_bits(sh, sh_bits)
    else:
        define(sh[:n], ok)


def propagate(state: BlockState, dst: np.ndarray, n: int, *srcs: np.ndarray) -> None:
    """Elementwise rule: ``dst`` element i (i < n) is defined iff element i of every source
    is."""
    if state.shadow is None:
        return
    ok: Any = True
    for src in srcs:
        ok = ok & elems_defined(state, src, n)
    set_defined(state, dst, n, ok)


def uninit_error(op: Operation, what: str, element: int) -> TileMemoryError:
    """The "read of uninitialised UB" error of ``op`` for ``what`` at buffer ``element``."""
    return tile_mem_fail(
        op,
        f"read of uninitialised UB: {what} (buffer element {element}) "
        "was never written in this block",
    )
