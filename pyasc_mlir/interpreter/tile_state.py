"""Per-block state of the tile-level interpreter: UB, tiling values, alloc counters, errors.

Shared by the tile-level implementations (``tile_*`` modules, combined in
:mod:`.tile_impls`) and by the ``ascendc`` interpreter, which runs on the same
:class:`BlockState`. See :mod:`.tile_impls` for the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    IntegerAttr,
    IntegerType,
    StringAttr,
)
from xdsl.interpreter import Interpreter, InterpreterFunctions
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from pyasc_mlir.checks import MemoryCheckError, memory_check_enabled
from pyasc_mlir.dialects.asc import LOC_ATTR
from pyasc_mlir.dialects.attrs import PLATFORM_ATTR, TILING_ATTR
from pyasc_mlir.platform import DEFAULT_PLATFORM, LANE_ALIGN, get_platform
from pyasc_mlir.types import BF16

__all__ = [
    "PLATFORM_ATTR",
    "POISON_BYTE",
    "REDUCE_LAST_STRIDE",
    "TILING_ATTR",
    "UB_BYTES_DEFAULT",
    "BlockState",
    "TileFunctionsBase",
    "TileInterpretationError",
    "TileMemoryError",
    "as_int",
    "block_state",
    "fresh_buffer",
    "kernel_ub_bytes",
    "np_dtype",
    "set_block",
    "tile_fail",
    "tile_mem_fail",
    "tiling_values",
]

UB_BYTES_DEFAULT = get_platform(DEFAULT_PLATFORM).ub_bytes
"""UB size per block when nobody says otherwise: the default platform's (192 KiB on 910B)."""
POISON_BYTE = 0xFF
"""Fill byte of fresh memory: reads back as NaN in f16 and f32, -1 in integers."""
REDUCE_LAST_STRIDE = LANE_ALIGN
"""``asc.vreduce`` axis ``last`` writes its per-row results this many elements apart (one
16-element row slot)."""

_KEY = "asc.block"


class TileInterpretationError(InterpretationError):
    """A tile-level op did something the hardware would not allow (out of bounds, bad count)."""


class TileMemoryError(TileInterpretationError, MemoryCheckError):
    """A memory access violation of a tile-level op: out of bounds, or (memory check) a read of
    uninitialised UB. ``op`` and ``loc`` name the op and its ``asc.loc``."""


def tile_fail(op: Operation, message: str) -> TileInterpretationError:
    """The error for ``op``: ``"<asc.loc>: <op name>: <message>"`` (no location if none)."""
    loc = op.attributes.get(LOC_ATTR)
    where = f"{loc.data}: " if isinstance(loc, StringAttr) else ""
    return TileInterpretationError(f"{where}{op.name}: {message}")


def tile_mem_fail(op: Operation, message: str) -> TileMemoryError:
    """Like :func:`tile_fail`, as a :class:`TileMemoryError` located at ``op``."""
    loc = op.attributes.get(LOC_ATTR)
    where = f"{loc.data}: " if isinstance(loc, StringAttr) else ""
    err = TileMemoryError(f"{where}{op.name}: {message}")
    err.located(message, op.name, loc.data if isinstance(loc, StringAttr) else None)
    return err


def as_int(v: Any) -> int:
    """An index value as a Python int (xDSL passes ``IntegerAttr``; ints are accepted too)."""
    return v if type(v) is int else v.value.data


def np_dtype(t: Attribute) -> np.dtype:
    """The numpy dtype buffers of element type ``t`` use (masks ``i1``: packed ``uint8``).

    Raises:
        InterpretationError: an element type the tile interpreter does not model.
    """
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
    if isinstance(t, BFloat16Type):
        return BF16
    if isinstance(t, Float32Type):
        return np.dtype(np.float32)
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return np.dtype(np.uint8)
        if width in (8, 16, 32, 64):
            return np.dtype(f"int{width}")
    raise InterpretationError(f"asc tile interpreter: unsupported element type {t}")


def tiling_values(func_op: Operation) -> dict[str, int]:
    """The tiling struct of a kernel: its ``asc.tiling`` attribute (a dictionary of field name
    -> ``IntegerAttr``) as ``{field: int}``; empty when the kernel has none."""
    attr = func_op.attributes.get(TILING_ATTR)
    if attr is None:
        return {}
    if not isinstance(attr, DictionaryAttr):
        raise InterpretationError(f"{TILING_ATTR} must be a dictionary attribute, got {attr}")
    values: dict[str, int] = {}
    for name, v in attr.data.items():
        if not isinstance(v, IntegerAttr):
            raise InterpretationError(f"{TILING_ATTR}: field {name!r} must be an integer, got {v}")
        values[name] = v.value.data
    return values


def kernel_ub_bytes(func_op: Operation) -> int:
    """UB bytes per block for a kernel: its ``asc.platform``'s UB, else
    :data:`UB_BYTES_DEFAULT`."""
    plat = func_op.attributes.get(PLATFORM_ATTR)
    if isinstance(plat, StringAttr):
        try:
            return get_platform(plat.data).ub_bytes
        except ValueError as exc:
            raise InterpretationError(str(exc)) from None
    return UB_BYTES_DEFAULT


@dataclass
class BlockState:
    """What one block (core) sees while its kernel instance runs.

    Attributes:
        idx: ``GetBlockIdx()``.
        num: ``GetBlockNum()``.
        tiling: tiling struct values, field -> int.
        ub: the block's Unified Buffer as ``uint8``.
        allocs: per ``asc.alloc`` op run in this block: ``[dtype, elements, nbytes, offset,
            buffers, times_run]``; under string keys, per-block objects of the ``ascendc``
            level (its ``TPipe`` at ``ascendc_state.PIPE_KEY``), cleared with them.
        shadow: memory check only (else ``None``): one byte per UB byte holding its "defined"
            bits (0xFF: written since the block started).
        fresh: memory check only: ``(address, array, shadow)`` of fresh (offset-less) allocs.
        workspace: the launch's GM workspace (``uint8``, shared by its blocks; the whole
            ``workspace`` argument, ``cube_tiling.launch_info``), or ``None``.
        workspace_base: byte offset of the kernel's own part of ``workspace`` (after the
            Matmul system workspace, ``cube_tiling.user_workspace_base``).
        grid: the launch's cross-core barrier (:class:`.tile_grid.Grid`) when its blocks run
            concurrently, else ``None``. The three are set per launch (``tile_grid``), not by
            :meth:`reset`.
    """

    idx: int = 0
    num: int = 1
    tiling: dict[str, int] = field(default_factory=dict)
    ub: np.ndarray = field(default_factory=lambda: np.full(UB_BYTES_DEFAULT, POISON_BYTE, np.uint8))
    allocs: dict[Operation | str, Any] = field(default_factory=dict)
    shadow: np.ndarray | None = None
    fresh: list[tuple[int, np.ndarray, np.ndarray]] = field(default_factory=list)
    workspace: np.ndarray | None = None
    workspace_base: int = 0
    grid: Any = None

    def reset(self, idx: int, num: int, tiling: dict[str, int], ub_bytes: int) -> None:
        """Start a new block: poison the UB (resized if needed), forget alloc counters and, in
        memory-check mode, clear the shadow map."""
        self.idx, self.num, self.tiling = idx, num, dict(tiling)
        if self.ub.size != ub_bytes:
            self.ub = np.empty(ub_bytes, np.uint8)
        self.ub.fill(POISON_BYTE)
        self.allocs.clear()
        self.fresh.clear()
        if memory_check_enabled():
            if self.shadow is None or self.shadow.size != ub_bytes:
                self.shadow = np.zeros(ub_bytes, np.uint8)
            else:
                self.shadow.fill(0)
        else:
            self.shadow = None


class TileFunctionsBase(InterpreterFunctions):
    """Base of the tile-level implementation mixins (combined in ``tile_impls``); the
    interpreter keeps the :class:`BlockState` under this class.

    Args:
        ub_bytes: UB size of every block that ``asc.launch`` starts; ``None``: the UB of the
            kernel's ``asc.platform`` (see :func:`kernel_ub_bytes`).
    """

    def __init__(self, ub_bytes: int | None = None):
        self.ub_bytes = ub_bytes


def block_state(interpreter: Interpreter) -> BlockState:
    """The current block's state on ``interpreter`` (block 0 of 1 with an empty tiling until
    :func:`set_block` or ``asc.launch`` says otherwise)."""
    return interpreter.get_data(TileFunctionsBase, _KEY, BlockState)


def set_block(
    interpreter: Interpreter,
    idx: int,
    num: int,
    tiling: dict[str, int] | None = None,
    ub_bytes: int = UB_BYTES_DEFAULT,
) -> BlockState:
    """Make ``interpreter`` run as block ``idx`` of ``num`` with a fresh UB of ``ub_bytes``;
    use before ``interpreter.call_op(kernel, gm_buffers)`` to run one block by hand."""
    state = block_state(interpreter)
    state.reset(idx, num, tiling or {}, ub_bytes)
    return state


def fresh_buffer(dtype: np.dtype, elements: int) -> np.ndarray:
    """A new array of ``elements`` values of ``dtype`` filled with :data:`POISON_BYTE`."""
    return np.full(elements * dtype.itemsize, POISON_BYTE, np.uint8).view(dtype)
