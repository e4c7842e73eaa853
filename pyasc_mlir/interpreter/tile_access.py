"""Checked access to tile-level buffers: packed masks, counts, strided block and matrix views.

Masks (``i1`` buffers) are ``uint8`` arrays of ``ceil(n / 8)`` bytes, bit ``i`` = bit
``i % 8`` (LSB first) of byte ``i // 8``; ``uint8`` is used for nothing else, so a buffer is
recognised as a mask by its dtype.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Operation

from pyasc_mlir.interpreter.tile_state import tile_fail, tile_mem_fail

__all__ = [
    "block_view",
    "check_count",
    "check_mask",
    "gm_matrix",
    "is_i1",
    "is_mask",
    "mask_bits",
    "store_bits",
]


def is_i1(t: TensorType) -> bool:
    """Whether the tensor type ``t`` holds ``i1`` (mask) elements."""
    return t.element_type == IntegerType(1)


def mask_bits(mask: np.ndarray) -> np.ndarray:
    """All bits of a packed mask as a fresh ``bool`` array (bit i = element i)."""
    return np.unpackbits(mask, bitorder="little").view(np.bool_)


def store_bits(mask: np.ndarray, values: np.ndarray) -> None:
    """Write a full-length ``bool`` array back into the packed mask ``mask``."""
    mask[:] = np.packbits(values, bitorder="little")


def is_mask(buf: np.ndarray) -> bool:
    """Masks are the only ``uint8`` buffers (``i8`` maps to ``int8``)."""
    return buf.dtype == np.uint8


def check_count(op: Operation, n: int, **buffers: np.ndarray) -> None:
    """Raise unless ``0 <= n <= size`` of every named buffer (the name appears in the
    message)."""
    if n < 0:
        raise tile_fail(op, f"negative count {n}")
    for name, buf in buffers.items():
        if n > buf.size:
            raise tile_mem_fail(op, f"count {n} exceeds {name} buffer of {buf.size} elements")


def check_mask(op: Operation, n: int, mask: np.ndarray) -> None:
    """Raise unless ``0 <= n <=`` the bits of the packed ``mask``."""
    if n < 0:
        raise tile_fail(op, f"negative count {n}")
    if n > mask.size * 8:
        raise tile_mem_fail(op, f"count {n} exceeds mask buffer of {mask.size * 8} bits")


def block_view(
    op: Operation, side: str, buf: np.ndarray, start: int, count: int, length: int, stride: int
) -> np.ndarray:
    """A ``[count, length]`` view of ``buf`` whose row ``i`` starts at ``start + i*stride``.

    Raises:
        TileMemoryError: the blocks leave ``buf`` (``side`` names GM or UB in the message).
    """
    end = start + (count - 1) * stride + length
    if start < 0 or stride < 0 or end > buf.size:
        raise tile_mem_fail(
            op,
            f"{side} access out of bounds: {count} blocks x {length} "
            f"elements from offset {start}, block stride {stride} (last element "
            f"{end - 1}) in a buffer of {buf.size} elements",
        )
    if count == 1 or stride == length:
        return buf[start : start + count * length].reshape(count, length)
    step = buf.strides[0]
    return as_strided(buf[start:], shape=(count, length), strides=(stride * step, step))


def gm_matrix(
    op: Operation, name: str, buf: np.ndarray, offset: int, shape: tuple[int, int], ld: int
) -> np.ndarray:
    """A ``shape`` row-major view of GM ``buf`` from element ``offset`` with row stride ``ld``
    (checked: ``ld`` covers a row, the last element is inside ``buf``)."""
    rows, cols = shape
    if rows == 0 or cols == 0:
        return np.zeros(shape, buf.dtype)
    if ld < cols:
        raise tile_fail(
            op, f"leading dimension of {name} ({ld}) is smaller than its row length ({cols})"
        )
    last = offset + (rows - 1) * ld + cols - 1
    if last >= buf.size:
        raise tile_mem_fail(
            op,
            f"{name}: a [{rows}, {cols}] matrix at element {offset} with row "
            f"stride {ld} ends at element {last}, past the GM buffer of "
            f"{buf.size} elements",
        )
    isz = buf.itemsize
    return as_strided(buf[offset:], shape=shape, strides=(ld * isz, isz))
