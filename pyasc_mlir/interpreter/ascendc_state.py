"""State and values of the ``ascendc`` interpreter: errors, dtypes, ``LocalTensor``,
``GlobalTensor``, ``TQue``, ``TBuf``, ``TPipe`` and the shared base of the implementation
mixins (combined in :mod:`.ascendc_impls`, see there for the model)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType, StringAttr
from xdsl.interpreter import InterpreterFunctions
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from pyasc_mlir.checks import MemoryCheckError
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects.asc import LOC_ATTR
from pyasc_mlir.interpreter.tile_state import BlockState
from pyasc_mlir.platform import DATA_BLOCK_BYTES, round_up, ub_usable
from pyasc_mlir.types import BF16

__all__ = [
    "ALLOCATED",
    "F16",
    "F32",
    "FREE",
    "PIPE_KEY",
    "QUEUED",
    "U8",
    "AscendcFunctionsBase",
    "AscendcInterpretationError",
    "AscendcMemoryError",
    "GlobalTensor",
    "LocalTensor",
    "Pipe",
    "Queue",
    "TBuf",
    "api_fail",
    "api_mem_fail",
    "elem_dtype",
    "local_dtype",
    "pipe_of",
    "round32",
    "check_from_gm",
]

PIPE_KEY = "ascendc.pipe"
"""Key of the block's :class:`Pipe` in ``BlockState.allocs`` (cleared at every block start)."""


class AscendcInterpretationError(InterpretationError):
    """An ``ascendc`` op did something the Ascend C API forbids (out of bounds, misaligned UB
    operand, UB overflow, queue misuse, bad count)."""


class AscendcMemoryError(AscendcInterpretationError, MemoryCheckError):
    """A memory access violation of an ``ascendc`` op (out of bounds, misaligned UB operand,
    read of uninitialised UB). ``op`` is the Ascend C call, ``loc`` the op's ``asc.loc``."""


def api_fail(op: Operation, api: str, message: str) -> AscendcInterpretationError:
    """The error for ``op``: ``"<asc.loc>: <op name> (<api>): <message>"``."""
    loc = op.attributes.get(LOC_ATTR)
    where = f"{loc.data}: " if isinstance(loc, StringAttr) else ""
    return AscendcInterpretationError(f"{where}{op.name} ({api}): {message}")


def api_mem_fail(op: Operation, api: str, message: str) -> AscendcMemoryError:
    """Like :func:`api_fail`, as an :class:`AscendcMemoryError` located at ``op``."""
    loc = op.attributes.get(LOC_ATTR)
    where = f"{loc.data}: " if isinstance(loc, StringAttr) else ""
    err = AscendcMemoryError(f"{where}{op.name} ({api}): {message}")
    err.located(message, api, loc.data if isinstance(loc, StringAttr) else None)
    return err


def round32(n: int) -> int:
    """``n`` bytes rounded up to a whole 32-byte data block."""
    return round_up(n, DATA_BLOCK_BYTES)


F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
U8 = np.dtype(np.uint8)
"""The numpy dtypes of ``half``, ``float`` and ``uint8_t`` elements (``bfloat16_t``:
:data:`pyasc_mlir.types.BF16`)."""


def local_dtype(t: Attribute) -> np.dtype:
    """numpy dtype of the elements of a ``LocalTensor``/``GlobalTensor`` of element type ``t``
    (``i8`` is ``uint8_t`` as the emitter prints it; ``i1`` GM data is packed ``uint8``)."""
    if isinstance(t, Float16Type):
        return F16
    if isinstance(t, BFloat16Type):
        return BF16
    if isinstance(t, Float32Type):
        return F32
    if isinstance(t, IntegerType):
        width = t.width.data
        if width in (1, 8):
            return U8
        if width in (16, 32, 64):
            return np.dtype(f"int{width}")
    raise InterpretationError(f"ascendc interpreter: unsupported element type {t}")


def elem_dtype(tensor_type: Attribute) -> np.dtype:
    """numpy dtype of the elements of the ``LocalTensor``/``GlobalTensor`` type."""
    return local_dtype(ac.elem(tensor_type))


# --------------------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class LocalTensor:
    """``LocalTensor<T>``: ``size`` elements of ``dtype`` at UB byte ``offset``."""

    offset: int
    dtype: np.dtype
    size: int

    @property
    def nbytes(self) -> int:
        """Bytes of the tensor (``size * itemsize``)."""
        return self.size * self.dtype.itemsize


@dataclass(frozen=True, slots=True)
class GlobalTensor:
    """``GlobalTensor<T>``: the flat GM array ``array`` seen from element ``offset`` on."""

    array: np.ndarray
    offset: int

    @property
    def size(self) -> int:
        """Elements from ``offset`` to the end of the array."""
        return self.array.size - self.offset


FREE, ALLOCATED, QUEUED = 0, 1, 2
"""States of a :class:`Queue` buffer (``Queue.slots``)."""


@dataclass(eq=False)
class Queue:
    """``TQue``: ``num`` buffers of ``length`` bytes from UB byte ``base``."""

    position: str
    base: int
    length: int
    num: int
    slots: list[int] = field(default_factory=list)
    next: int = 0
    fifo: deque[tuple[int, int]] = field(default_factory=deque)

    def slot_of(self, op: Operation, api: str, offset: int) -> int:
        """The index of the buffer at UB byte ``offset`` (raises if not one of this queue)."""
        end = self.base + self.length * self.num
        if self.length == 0 or not self.base <= offset < end:
            raise api_fail(
                op,
                api,
                f"tensor at UB offset {offset} does not belong to this "
                f"queue (buffers at [{self.base}, {end}))",
            )
        return (offset - self.base) // self.length


@dataclass(eq=False)
class TBuf:
    """``TBuf<position>``: ``length`` bytes from UB byte ``base``."""

    base: int
    length: int
    position: str = "VECCALC"


@dataclass(eq=False)
class Pipe:
    """``TPipe`` of one block: the next free UB byte and the bound ``usable``."""

    usable: int
    cursor: int = 0
    regions: list[tuple[int, int, str]] = field(default_factory=list)

    def record(self, base: int, nbytes: int, position: str) -> None:
        """Remember that UB bytes ``[base, base + nbytes)`` are a buffer of ``position``."""
        self.regions.append((base, nbytes, position))

    def position_of(self, offset: int) -> str | None:
        """The ``TPosition`` of the TQue/TBuf holding UB byte ``offset`` (None: none)."""
        for base, nbytes, pos in self.regions:
            if base <= offset < base + nbytes:
                return pos
        return None

    def take(self, op: Operation, nbytes: int) -> int:
        """Hand out ``nbytes`` from the cursor; returns their UB offset (raises on overflow)."""
        need = self.cursor + nbytes
        if need > self.usable:
            raise api_fail(
                op,
                "TPipe::InitBuffer",
                f"UB overflow: need {need} bytes, usable "
                f"{self.usable} ({self.cursor} already "
                f"taken, {nbytes} requested)",
            )
        off = self.cursor
        self.cursor = need
        return off


def check_from_gm(op: Operation, api: str, state: BlockState, dst: LocalTensor) -> None:
    """A copy from GM lands in VECIN/VECOUT UB (documented paths): a VECCALC destination is
    refused, as in the CPU runtime (``cpu::detail::CheckGmPath``)."""
    if pipe_of(state).position_of(dst.offset) == "VECCALC":
        raise api_fail(
            op,
            api,
            f"dst at UB offset {dst.offset} is in a TPosition::VECCALC "
            "buffer; a copy from GM lands in TPosition::VECIN or VECOUT "
            "(use a TQue or TBuf of TPosition::VECIN)",
        )


def pipe_of(state: BlockState) -> Pipe:
    """The block's ``TPipe`` (created on first use after every ``BlockState.reset``)."""
    pipe = state.allocs.get(PIPE_KEY)
    if pipe is None:
        pipe = Pipe(ub_usable(state.ub.size))
        state.allocs[PIPE_KEY] = pipe
    return pipe


class AscendcFunctionsBase(InterpreterFunctions):
    """Base of the ``ascendc`` implementation mixins (combined in ``ascendc_impls``): a
    per-op cache of element dtypes."""

    def __init__(self) -> None:
        self._dtypes: dict[Operation, np.dtype] = {}

    def copy_dtype(self, op: ac.DataCopyOp | ac.DataCopyPadOp, api: str) -> np.dtype:
        """Element dtype of a copy (cached per op); ``dst`` and ``src`` must agree."""
        dt = self._dtypes.get(op)
        if dt is None:
            dt, src_dt = elem_dtype(op.dst.type), elem_dtype(op.src.type)
            if dt != src_dt:
                raise api_fail(op, api, f"dst elements are {dt}, src elements {src_dt}")
            self._dtypes[op] = dt
        return dt

    def result_dtype(self, op: Operation, tensor_type: Attribute) -> np.dtype:
        """Element dtype of ``tensor_type`` (the op's result or ``dst``), cached per op."""
        dt = self._dtypes.get(op)
        if dt is None:
            dt = self._dtypes[op] = elem_dtype(tensor_type)
        return dt
