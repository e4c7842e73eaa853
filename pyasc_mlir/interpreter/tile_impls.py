"""Interpreter implementations of the ``asc`` tile-level ops (numpy, whole buffers per op).

Model:

* GM buffers are flat 1-D numpy arrays (the kernel's ``memref`` arguments).
* Every block (core) has a :class:`BlockState`: block index and count, the tiling values, a UB
  of ``ub_bytes`` bytes (a ``uint8`` array, filled with ``0xFF`` at the start of each block so
  unwritten f16/f32 memory reads as NaN) and, per ``asc.alloc`` op, how often it ran.
* ``asc.alloc`` with an ``offset`` returns a numpy *view* into the UB at
  ``offset + (k % buffers) * nbytes`` (``k``: how often this alloc ran in this block), which
  models double-buffer rotation and makes buffers that wrongly share UB visible. Without an
  ``offset`` it returns a fresh array filled with the same ``0xFF`` pattern.
* Masks (``i1`` buffers, in UB and in GM) are ``uint8`` arrays of ``ceil(n / 8)`` bytes: bit
  ``i`` of the mask is bit ``i % 8`` (LSB first) of byte ``i // 8`` -- the same packing the UB
  bytes hold. ``uint8`` is used for nothing else (``i8`` is ``int8``), so an op recognises a
  mask operand by its dtype; counts, offsets and strides on masks are in bits. ``asc.launch``
  packs ``i1`` tensor inputs and unpacks ``i1`` results to ``bool`` arrays.
* Index values come from (and go back to) xDSL's stock ``arith``/``scf`` implementations as
  ``IntegerAttr``; plain Python ints are accepted too.

Every op works on whole buffers with one or a few numpy calls; violations (out-of-bounds copies,
counts larger than a buffer, a view past the end of UB) raise :class:`TileInterpretationError`
naming the op, its ``asc.loc`` and the numbers involved (memory access violations as its
subclass :class:`TileMemoryError`, also a ``pyasc_mlir.checks.MemoryCheckError``).

Memory check (``pyasc_mlir.checks``; read at every block start): ``BlockState.shadow`` holds one
"defined" bit per UB bit (fresh allocs get their own shadow), cleared at the block start. Writes
define, elementwise ops propagate lane by lane, and ``asc.copy_out``, ``asc.vreduce "last"``
(over ``len``) and scalar broadcasts (``asc.vbroadcast`` without ``src_l``) raise
:class:`TileMemoryError` ("read of uninitialised UB") on undefined data: the rule of
``docs/CPU_RUNTIME.md`` ("Memory check"), the same as the CPU build and the ascendc level.

The implementations live in one module per concern, combined here into
:class:`AscTileFunctions`: :mod:`.tile_state` (block state, errors, dtypes, tiling),
:mod:`.tile_access` (masks, checked views), :mod:`.tile_memcheck` (shadow), :mod:`.tile_cast`
(``Cast`` semantics), :mod:`.tile_launch` (``asc.launch``, block index/count, tiling fields),
:mod:`.tile_memory` (``asc.alloc``, copies), :mod:`.tile_vector` (elementwise ops),
:mod:`.tile_reduce` (``asc.vreduce``, ``asc.vbroadcast``) and :mod:`.tile_cube`
(``asc.mmad``).
"""

from __future__ import annotations

from xdsl.interpreter import register_impls

from pyasc_mlir.interpreter.tile_cast import convert
from pyasc_mlir.interpreter.tile_cube import TileCubeFunctions
from pyasc_mlir.interpreter.tile_launch import TileLaunchFunctions
from pyasc_mlir.interpreter.tile_memcheck import shadow_of
from pyasc_mlir.interpreter.tile_memory import TileMemoryFunctions
from pyasc_mlir.interpreter.tile_reduce import TileReduceFunctions
from pyasc_mlir.interpreter.tile_state import (
    PLATFORM_ATTR,
    POISON_BYTE,
    REDUCE_LAST_STRIDE,
    TILING_ATTR,
    UB_BYTES_DEFAULT,
    BlockState,
    TileInterpretationError,
    TileMemoryError,
    block_state,
    kernel_ub_bytes,
    np_dtype,
    set_block,
    tiling_values,
)
from pyasc_mlir.interpreter.tile_vector import TileVectorFunctions

__all__ = [
    "PLATFORM_ATTR",
    "POISON_BYTE",
    "REDUCE_LAST_STRIDE",
    "TILING_ATTR",
    "UB_BYTES_DEFAULT",
    "AscTileFunctions",
    "BlockState",
    "TileInterpretationError",
    "TileMemoryError",
    "block_state",
    "convert",
    "kernel_ub_bytes",
    "np_dtype",
    "set_block",
    "shadow_of",
    "tiling_values",
]


@register_impls
class AscTileFunctions(
    TileLaunchFunctions,
    TileMemoryFunctions,
    TileVectorFunctions,
    TileReduceFunctions,
    TileCubeFunctions,
):
    """Numpy implementations of the ``asc`` tile-level ops (see the module docstring).

    Args:
        ub_bytes: UB size of every block that ``asc.launch`` starts; ``None``: the UB of the
            kernel's ``asc.platform`` (see :func:`kernel_ub_bytes`).
    """
