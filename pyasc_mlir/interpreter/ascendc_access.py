"""Checked access to ``ascendc`` tensors (``LocalTensor`` views of UB, ``GlobalTensor`` bytes)
and the memory check's shadow of them (one "defined" bit per UB bit, in ``BlockState.shadow``;
the rule of ``docs/CPU_RUNTIME.md``, "Memory check")."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import Operation

from pyasc_mlir.interpreter.ascendc_state import (
    GlobalTensor,
    LocalTensor,
    api_fail,
    api_mem_fail,
)
from pyasc_mlir.interpreter.tile_memcheck import SHADOW_UINT
from pyasc_mlir.interpreter.tile_state import BlockState
from pyasc_mlir.platform import DATA_BLOCK_BYTES

__all__ = [
    "byte_rows",
    "define_lanes",
    "global_bytes",
    "lanes_defined",
    "local_bytes",
    "local_view",
    "require_defined",
    "scalar_value",
    "shadow_lanes",
]


def local_view(
    op: Operation, api: str, role: str, t: LocalTensor, count: int, ub: np.ndarray
) -> np.ndarray:
    """The first ``count`` elements of ``t`` as a numpy view of ``ub`` (checked)."""
    if t.offset % DATA_BLOCK_BYTES:
        raise api_mem_fail(op, api, f"{role} UB offset {t.offset} is not 32-byte aligned")
    if count < 0:
        raise api_fail(op, api, f"negative count {count}")
    if count > t.size:
        isz = t.dtype.itemsize
        raise api_mem_fail(
            op,
            api,
            f"{role} LocalTensor at UB offset {t.offset} holds "
            f"{t.size} elements ({t.size * isz} bytes); access of "
            f"{count} elements ({count * isz} bytes) exceeds it",
        )
    start = t.offset
    return ub[start : start + count * t.dtype.itemsize].view(t.dtype)


def local_bytes(
    op: Operation, api: str, role: str, t: LocalTensor, end: int, ub: np.ndarray
) -> np.ndarray:
    """Bytes ``[0, end)`` of ``t`` as a ``uint8`` view of ``ub`` (checked)."""
    if t.offset % DATA_BLOCK_BYTES:
        raise api_mem_fail(op, api, f"{role} UB offset {t.offset} is not 32-byte aligned")
    if end < 0:
        raise api_fail(op, api, f"negative byte count {end}")
    if end > t.nbytes:
        raise api_mem_fail(
            op,
            api,
            f"{role} LocalTensor at UB offset {t.offset} holds "
            f"{t.nbytes} bytes; access up to byte {end} exceeds it",
        )
    return ub[t.offset : t.offset + end]


def global_bytes(op: Operation, api: str, role: str, g: GlobalTensor, end: int) -> np.ndarray:
    """Bytes ``[0, end)`` of ``g`` as a ``uint8`` view of its GM array (checked)."""
    isz = g.array.dtype.itemsize
    if end > g.size * isz:
        raise api_mem_fail(
            op,
            api,
            f"{role} GlobalTensor holds {g.size * isz} bytes "
            f"({g.size} elements from element {g.offset} of "
            f"{g.array.size}); access up to byte {end} exceeds it",
        )
    start = g.offset * isz
    return g.array.view(np.uint8)[start : start + end]


def byte_rows(buf: np.ndarray, count: int, length: int, step: int) -> np.ndarray:
    """A ``[count, length]`` view of the byte array ``buf`` whose row ``k`` starts at byte
    ``k * step`` (the caller checked that it fits)."""
    if count == 1 or step == length:
        return buf[: count * length].reshape(count, length)
    return as_strided(buf, shape=(count, length), strides=(step, 1))


# --------------------------------------------------------------------------- memory check


def shadow_lanes(state: BlockState, t: LocalTensor, count: int) -> np.ndarray:
    """Shadow of the first ``count`` elements of ``t``: one unsigned integer per element, all
    ones where defined (call only when ``state.shadow`` is set)."""
    isz = t.dtype.itemsize
    assert state.shadow is not None
    return state.shadow[t.offset : t.offset + count * isz].view(SHADOW_UINT[isz])


def lanes_defined(state: BlockState, t: LocalTensor, count: int) -> np.ndarray:
    """Per element of the first ``count`` of ``t``: all its bytes are defined."""
    sh = shadow_lanes(state, t, count)
    return sh == np.iinfo(sh.dtype).max


def define_lanes(state: BlockState, t: LocalTensor, count: int, ok: Any = True) -> None:
    """Mark the first ``count`` elements of ``t`` defined where ``ok`` (all when ``True``)."""
    sh = shadow_lanes(state, t, count)
    full = np.iinfo(sh.dtype).max
    sh[...] = full if ok is True else np.where(ok, full, 0)


def require_defined(
    op: Operation,
    api: str,
    role: str,
    t: LocalTensor,
    begin: int,
    nbytes: int,
    state: BlockState,
    what: str = "",
) -> None:
    """Raise "read of uninitialised UB" unless bytes ``[begin, begin + nbytes)`` of ``t`` are
    all defined (the CPU runtime's ``mc::RequireDefined``)."""
    assert state.shadow is not None
    sh = state.shadow[t.offset + begin : t.offset + begin + nbytes]
    bad = sh != 0xFF
    if bad.any():
        b = begin + int(np.argmax(bad))
        raise api_mem_fail(
            op,
            api,
            f"read of uninitialised UB: {role}{what} byte {b} "
            f"(element {b // t.dtype.itemsize}, UB offset "
            f"{t.offset + b}) of the LocalTensor at UB offset "
            f"{t.offset} was never written in this block",
        )


def scalar_value(v: Any) -> float:
    """A float scalar operand (``FloatAttr``, Python or numpy number) as a Python float."""
    if isinstance(v, FloatAttr):
        return v.value.data
    return float(v)
