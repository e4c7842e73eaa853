"""Interpreter implementations of the ``ascendc`` dialect (numpy, whole tensor per op).

Each op follows the Ascend C API call it prints, with the semantics of ``docs/CPU_RUNTIME.md``
(the clean-room CPU runtime ``kernel_operator.h`` implements the same table; results agree bit
for bit except: ``Exp``/``Ln`` (numpy's float32 functions vs the C library's, within 1 ulp),
NaN operands of ``Max``/``Min``/``Relu``/``ReduceMax``/``ReduceMin`` (numpy propagates NaN) and
never-written UB (poisoned here; zeroed there except in its memory-check build)).

Model:

* Per block (core) the tile interpreter's :class:`~.tile_impls.BlockState` is reused: block
  index and count, tiling values and the UB (``uint8``, poisoned with ``0xFF`` at every block
  start, so never-written f16/f32 memory reads as NaN). On top of it each block has a
  :class:`Pipe`: a ``TPipe``-like sequential allocator. ``InitBuffer`` hands out UB from offset 0
  upward, each buffer rounded up to 32 bytes, bounded by the usable UB (UB minus the 256-byte
  system area minus the 8 KiB default reserve: 188160 bytes for 192 KiB). The pipe is stored in
  ``BlockState.allocs`` under :data:`PIPE_KEY`; ``BlockState.reset`` (run by ``asc.launch`` and
  ``tile_impls.set_block`` at every block start) clears that dict, so the allocator and all
  queues start afresh with each block. (Calling a kernel twice without a block start in
  between keeps allocating after the first call's buffers, like one TPipe.)
* ``LocalTensor<T>`` values are :class:`LocalTensor` (UB byte offset, numpy dtype, element
  count). Masks (``!ascendc.local_tensor<i8>``, printed ``uint8_t``) are ``uint8`` bytes whose
  bit ``i % 8`` (LSB first) of byte ``i // 8`` is element ``i``. Every vector op and copy checks
  that the UB address of each LocalTensor operand is 32-byte aligned and that the access stays
  inside the tensor (tensors are created inside UB, so it also stays inside UB).
* ``GlobalTensor<T>`` values are :class:`GlobalTensor` (flat numpy array, element offset); the
  arrays are the kernel's GM ``memref`` arguments that ``asc.launch`` passes (``i1`` tensors are
  packed ``uint8`` bits, as in the tile interpreter). Accesses beyond the array raise.
* Queues are :class:`Queue`: ``AllocTensor`` goes round-robin over the ``num`` buffers (the next
  one must have been freed), ``EnQue``/``DeQue`` are a FIFO, ``FreeTensor`` releases.
* Index values are xDSL ``IntegerAttr`` (plain ints are accepted); ``GetValue`` returns a
  ``FloatAttr`` of the tensor's element type, as ``arith`` ops expect.

Arithmetic: f32 lanes compute in float32; f16 lanes compute in float32 and round once to f16
(``Rsqrt`` is ``1/sqrt`` in float64, rounded to float32, then to ``T``). ``ReduceSum`` sums in
the documented order of the CPU runtime: 256-byte repeats (zero-padded), a pairwise binary tree
inside each repeat, then the repeat results left to right, every addition rounded to ``T``.
Violations raise :class:`AscendcInterpretationError` with the API name, the op's ``asc.loc``
and the numbers; memory access violations (out of bounds, misaligned UB operands, reads of
uninitialised UB) raise its subclass :class:`AscendcMemoryError`, also a
``pyasc_mlir.checks.MemoryCheckError``.

Memory check (``pyasc_mlir.checks``): ``BlockState.shadow`` (one "defined" bit per UB bit,
cleared at every block start) follows the rule of ``docs/CPU_RUNTIME.md`` ("Memory check"), as
the CPU runtime's ``-DPYASC_MEMCHECK=1`` build: copies into UB and ``Duplicate`` define, vector
ops and ``Cast``/``Compare``/``Select`` propagate lane by lane, UB->UB ``DataCopy`` copies the
shadow; ``DataCopy``/``DataCopyPad`` UB->GM, ``ReduceSum/Max/Min`` (over ``count``) and
``GetValue`` raise "read of uninitialised UB" on undefined data.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerType,
    StringAttr,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.builtin import scalar_attr
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from pyasc_mlir import cube_tiling as ct
from pyasc_mlir.checks import MemoryCheckError
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects.asc import LOC_ATTR
from pyasc_mlir.dialects.attrs import kernel_platform
from pyasc_mlir.interpreter.tile_impls import _UINT, BlockState, block_state, convert
from pyasc_mlir.platform import (
    DATA_BLOCK_BYTES,
    UB_DEFAULT_RESERVED_BYTES,
    UB_SYSTEM_RESERVED_BYTES,
    VECTOR_REPEAT_BYTES,
    Platform,
    get_platform,
)

__all__ = ["AscendcFunctions", "AscendcInterpretationError", "GlobalTensor", "LocalTensor",
           "MatmulObject", "PIPE_KEY", "Pipe", "Queue", "TBuf", "pipe_of", "reduce_sum",
           "ub_usable"]

PIPE_KEY = "ascendc.pipe"
"""Key of the block's :class:`Pipe` in ``BlockState.allocs`` (cleared at every block start)."""

_BLOCK = DATA_BLOCK_BYTES


class AscendcInterpretationError(InterpretationError):
    """An ``ascendc`` op did something the Ascend C API forbids (out of bounds, misaligned UB
    operand, UB overflow, queue misuse, bad count)."""


class AscendcMemoryError(AscendcInterpretationError, MemoryCheckError):
    """A memory access violation of an ``ascendc`` op (out of bounds, misaligned UB operand,
    read of uninitialised UB). ``op`` is the Ascend C call, ``loc`` the op's ``asc.loc``."""


def _fail(op: Operation, api: str, message: str) -> AscendcInterpretationError:
    loc = op.attributes.get(LOC_ATTR)
    where = f"{loc.data}: " if isinstance(loc, StringAttr) else ""
    return AscendcInterpretationError(f"{where}{op.name} ({api}): {message}")


def _mem_fail(op: Operation, api: str, message: str) -> AscendcMemoryError:
    loc = op.attributes.get(LOC_ATTR)
    where = f"{loc.data}: " if isinstance(loc, StringAttr) else ""
    err = AscendcMemoryError(f"{where}{op.name} ({api}): {message}")
    err.located(message, api, loc.data if isinstance(loc, StringAttr) else None)
    return err


def _i(v: Any) -> int:
    """An index value as a Python int (xDSL passes ``IntegerAttr``; ints are accepted too)."""
    return v if type(v) is int else v.value.data


def _round32(n: int) -> int:
    return (n + _BLOCK - 1) // _BLOCK * _BLOCK


_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_U8 = np.dtype(np.uint8)


def local_dtype(t: Attribute) -> np.dtype:
    """numpy dtype of the elements of a ``LocalTensor``/``GlobalTensor`` of element type ``t``
    (``i8`` is ``uint8_t`` as the emitter prints it; ``i1`` GM data is packed ``uint8``)."""
    if isinstance(t, Float16Type):
        return _F16
    if isinstance(t, Float32Type):
        return _F32
    if isinstance(t, IntegerType):
        width = t.width.data
        if width in (1, 8):
            return _U8
        if width in (16, 32, 64):
            return np.dtype(f"int{width}")
    raise InterpretationError(f"ascendc interpreter: unsupported element type {t}")


def _elem_dtype(tensor_type: Attribute) -> np.dtype:
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
        return self.size * self.dtype.itemsize


@dataclass(frozen=True, slots=True)
class GlobalTensor:
    """``GlobalTensor<T>``: the flat GM array ``array`` seen from element ``offset`` on."""

    array: np.ndarray
    offset: int

    @property
    def size(self) -> int:
        return self.array.size - self.offset


@dataclass(eq=False)
class MatmulObject:
    """A high-level ``Matmul`` object (A/B in GM, ND, ``dtype``; C f32 to UB).

    ``tiling``: its TCubeTiling fields once registered; ``a``/``b``: the GM tensors and
    transposes SetTensorA/B gave; ``tail``: (m, n, k) of this computation; ``next_block``:
    the next ``[baseM, baseN]`` block Iterate computes; ``block``: the block Iterate computed
    and GetTensorC has not taken yet, ``(row0, col0, values)``; ``ended`` after ``End``."""

    dtype: np.dtype
    trans_a: bool
    trans_b: bool
    tiling: dict[str, int] | None = None
    a: tuple[GlobalTensor, bool] | None = None
    b: tuple[GlobalTensor, bool] | None = None
    tail: tuple[int, int, int] | None = None
    next_block: int = 0
    block: tuple[int, int, np.ndarray] | None = None
    ended: bool = False


_FREE, _ALLOCATED, _QUEUED = 0, 1, 2


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
        end = self.base + self.length * self.num
        if self.length == 0 or not self.base <= offset < end:
            raise _fail(op, api, f"tensor at UB offset {offset} does not belong to this queue "
                                 f"(buffers at [{self.base}, {end}))")
        return (offset - self.base) // self.length


@dataclass(eq=False)
class TBuf:
    """``TBuf<VECCALC>``: ``length`` bytes from UB byte ``base``."""

    base: int
    length: int


@dataclass(eq=False)
class Pipe:
    """``TPipe`` of one block: the next free UB byte and the bound ``usable``."""

    usable: int
    cursor: int = 0

    def take(self, op: Operation, nbytes: int) -> int:
        need = self.cursor + nbytes
        if need > self.usable:
            raise _fail(op, "TPipe::InitBuffer", f"UB overflow: need {need} bytes, usable "
                                                 f"{self.usable} ({self.cursor} already "
                                                 f"taken, {nbytes} requested)")
        off = self.cursor
        self.cursor = need
        return off


def ub_usable(ub_bytes: int) -> int:
    """UB a kernel may allocate: UB minus the 256-byte system area minus the 8 KiB reserve."""
    return ub_bytes - UB_SYSTEM_RESERVED_BYTES - UB_DEFAULT_RESERVED_BYTES


def pipe_of(state: BlockState) -> Pipe:
    """The block's ``TPipe`` (created on first use after every ``BlockState.reset``)."""
    pipe = state.allocs.get(PIPE_KEY)  # type: ignore[call-overload]
    if pipe is None:
        pipe = Pipe(ub_usable(state.ub.size))
        state.allocs[PIPE_KEY] = pipe  # type: ignore[index]
    return pipe


# --------------------------------------------------------------------------- Matmul


def _kernel_platform(op: Operation) -> Platform:
    """The platform of the kernel ``op`` is in (its ``asc.platform``; default otherwise)."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return get_platform(kernel_platform(parent) if parent is not None else None)


def _live_matmul(op: Operation, api: str, mm: MatmulObject) -> dict[str, int]:
    if mm.tiling is None:
        raise _fail(op, api, "the Matmul object was not registered (REGIST_MATMUL_OBJ)")
    if mm.ended:
        raise _fail(op, api, "the Matmul object was already ended (End)")
    return mm.tiling


def _gm_matrix(op: Operation, api: str, g: GlobalTensor, rows: int, cols: int,
               ld: int) -> np.ndarray:
    """A ``[rows, cols]`` view of ``g`` with row stride ``ld`` (checked against the GM)."""
    last = (rows - 1) * ld + cols
    if g.offset + last > g.array.size:
        raise _mem_fail(op, api, f"a [{rows}, {cols}] matrix with row stride {ld} from GM "
                                 f"element {g.offset} ends at element {g.offset + last}, past "
                                 f"the GlobalTensor of {g.array.size} elements")
    isz = g.array.itemsize
    return as_strided(g.array[g.offset:], shape=(rows, cols), strides=(ld * isz, isz))


# --------------------------------------------------------------------------- access helpers


def _local(op: Operation, api: str, role: str, t: LocalTensor, count: int,
           ub: np.ndarray) -> np.ndarray:
    """The first ``count`` elements of ``t`` as a numpy view of ``ub`` (checked)."""
    if t.offset % _BLOCK:
        raise _mem_fail(op, api, f"{role} UB offset {t.offset} is not 32-byte aligned")
    if count < 0:
        raise _fail(op, api, f"negative count {count}")
    if count > t.size:
        isz = t.dtype.itemsize
        raise _mem_fail(op, api, f"{role} LocalTensor at UB offset {t.offset} holds {t.size} "
                             f"elements ({t.size * isz} bytes); access of {count} elements "
                             f"({count * isz} bytes) exceeds it")
    start = t.offset
    return ub[start:start + count * t.dtype.itemsize].view(t.dtype)


def _local_bytes(op: Operation, api: str, role: str, t: LocalTensor, end: int,
                 ub: np.ndarray) -> np.ndarray:
    """Bytes ``[0, end)`` of ``t`` as a ``uint8`` view of ``ub`` (checked)."""
    if t.offset % _BLOCK:
        raise _mem_fail(op, api, f"{role} UB offset {t.offset} is not 32-byte aligned")
    if end < 0:
        raise _fail(op, api, f"negative byte count {end}")
    if end > t.nbytes:
        raise _mem_fail(op, api, f"{role} LocalTensor at UB offset {t.offset} holds {t.nbytes} "
                             f"bytes; access up to byte {end} exceeds it")
    return ub[t.offset:t.offset + end]


def _global_bytes(op: Operation, api: str, role: str, g: GlobalTensor, end: int) -> np.ndarray:
    """Bytes ``[0, end)`` of ``g`` as a ``uint8`` view of its GM array (checked)."""
    isz = g.array.dtype.itemsize
    if end > g.size * isz:
        raise _mem_fail(op, api, f"{role} GlobalTensor holds {g.size * isz} bytes ({g.size} "
                             f"elements from element {g.offset} of {g.array.size}); access up "
                             f"to byte {end} exceeds it")
    start = g.offset * isz
    return g.array.view(np.uint8)[start:start + end]


def _rows(buf: np.ndarray, count: int, length: int, step: int) -> np.ndarray:
    """A ``[count, length]`` view of the byte array ``buf`` whose row ``k`` starts at byte
    ``k * step`` (the caller checked that it fits)."""
    if count == 1 or step == length:
        return buf[:count * length].reshape(count, length)
    return as_strided(buf, shape=(count, length), strides=(step, 1))


# --------------------------------------------------------------------------- memory check


def _sh(state: BlockState, t: LocalTensor, count: int) -> np.ndarray:
    """Shadow of the first ``count`` elements of ``t``: one unsigned integer per element, all
    ones where defined (call only when ``state.shadow`` is set)."""
    isz = t.dtype.itemsize
    assert state.shadow is not None
    return state.shadow[t.offset:t.offset + count * isz].view(_UINT[isz])


def _ok(state: BlockState, t: LocalTensor, count: int) -> np.ndarray:
    sh = _sh(state, t, count)
    return sh == np.iinfo(sh.dtype).max


def _set(state: BlockState, t: LocalTensor, count: int, ok: Any = True) -> None:
    sh = _sh(state, t, count)
    full = np.iinfo(sh.dtype).max
    sh[...] = full if ok is True else np.where(ok, full, 0)


def _require(op: Operation, api: str, role: str, t: LocalTensor, begin: int, nbytes: int,
             state: BlockState, what: str = "") -> None:
    """Raise "read of uninitialised UB" unless bytes ``[begin, begin + nbytes)`` of ``t`` are
    all defined (the CPU runtime's ``mc::RequireDefined``)."""
    assert state.shadow is not None
    sh = state.shadow[t.offset + begin:t.offset + begin + nbytes]
    bad = sh != 0xFF
    if bad.any():
        b = begin + int(np.argmax(bad))
        raise _mem_fail(op, api, f"read of uninitialised UB: {role}{what} byte {b} (element "
                                 f"{b // t.dtype.itemsize}, UB offset {t.offset + b}) of the "
                                 f"LocalTensor at UB offset {t.offset} was never written in "
                                 "this block")


def _scalar_value(v: Any) -> float:
    """A float scalar operand (``FloatAttr``, Python or numpy number) as a Python float."""
    if isinstance(v, FloatAttr):
        return v.value.data
    return float(v)


def reduce_sum(x: np.ndarray) -> Any:
    """``ReduceSum`` of the 1-D f16/f32 array ``x`` in the CPU runtime's order: 256-byte
    repeats (the last one zero-padded), a pairwise tree within each repeat
    (``v[i] = v[2i] + v[2i+1]``), then the repeat results added left to right; every addition
    is rounded to ``x.dtype`` (f16 additions are exact in f32 and rounded once, as numpy's
    float16 add does). Returns a numpy scalar of ``x.dtype``."""
    dt = x.dtype
    lanes = VECTOR_REPEAT_BYTES // dt.itemsize
    n = x.size
    reps = -(-n // lanes)
    v = np.zeros(reps * lanes, dt)
    v[:n] = x
    v = v.reshape(reps, lanes)
    with np.errstate(all="ignore"):
        while v.shape[1] > 1:
            v = v[:, 0::2] + v[:, 1::2]
        col = v[:, 0]
        return np.add.accumulate(col)[-1] if reps > 1 else col[0]


# --------------------------------------------------------------------------- math tables


def _rsqrt(x: np.ndarray) -> np.ndarray:
    """``1/sqrt`` in float64, rounded to the lane type (then to ``T``), as the CPU runtime."""
    return (1.0 / np.sqrt(x.astype(np.float64))).astype(x.dtype)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, np.float32(0))


_UNARY = {
    "Exp": np.exp, "Ln": np.log, "Abs": np.abs, "Sqrt": np.sqrt, "Rsqrt": _rsqrt,
    "Reciprocal": lambda x: np.float32(1) / x, "Relu": _relu, "Sin": np.sin, "Cos": np.cos,
}
_BINARY: dict[str, np.ufunc] = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
    "Max": np.maximum, "Min": np.minimum,
}
_SCALAR: dict[str, np.ufunc] = {
    "Adds": np.add, "Muls": np.multiply, "Maxs": np.maximum, "Mins": np.minimum,
}
_COMPARE: dict[str, np.ufunc] = {
    "LT": np.less, "GT": np.greater, "EQ": np.equal, "LE": np.less_equal,
    "GE": np.greater_equal, "NE": np.not_equal,
}
_REDUCE_EXTREME = {"ReduceMax": np.max, "ReduceMin": np.min}
_ROUND = {v: k for k, v in ac.ROUND.items()}  # "CAST_RINT" -> "rint"


def _lanes(x: np.ndarray) -> np.ndarray:
    """Compute lanes: f16 is widened to f32; everything else computes in its own type."""
    return x.astype(np.float32) if x.dtype == _F16 else x


def _cast(src: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    """``Cast`` values: the tile interpreter's :func:`convert`, plus round-to-odd to integers
    and saturating integer -> integer conversions (as the CPU runtime)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if src.dtype.kind in "iu":
            return np.clip(src.astype(np.int64), info.min, info.max).astype(dtype)
        if mode == "odd":
            with np.errstate(all="ignore"):
                x = src.astype(np.float64)
                r = np.trunc(x)
                bump = (r != x) & (np.fmod(r, 2.0) == 0.0) & np.isfinite(x)
                r = np.where(bump, r + np.sign(x), r)
                r = np.nan_to_num(r, nan=0.0, posinf=info.max, neginf=info.min)
                return np.clip(r, info.min, info.max).astype(dtype)
    if mode == "odd" and dtype == src.dtype:  # integral value, rounded to odd
        with np.errstate(all="ignore"):
            x = src.astype(np.float64)
            r = np.trunc(x)
            bump = (r != x) & (np.fmod(r, 2.0) == 0.0) & np.isfinite(x)
            return np.where(bump, r + np.sign(x), r).astype(dtype)
    return convert(src, dtype, mode)


# --------------------------------------------------------------------------- implementations


def _elementwise_operands(interpreter: Interpreter, op: Operation, api: str, dst: Any, src: Any,
                          n: int) -> tuple[np.ndarray, np.ndarray]:
    """Checked views of ``dst``/``src`` for a one-source elementwise call; under memory check,
    ``dst``'s first ``n`` lanes become defined exactly where ``src``'s are."""
    state = block_state(interpreter)
    d = _local(op, api, "dst", dst, n, state.ub)
    s = _local(op, api, "src", src, n, state.ub)
    if state.shadow is not None:
        _set(state, dst, n, _ok(state, src, n))
    return d, s


@register_impls
class AscendcFunctions(InterpreterFunctions):
    """Numpy implementations of every ``ascendc`` op (see the module docstring)."""

    def __init__(self) -> None:
        self._dtypes: dict[Operation, np.dtype] = {}

    def _copy_dtype(self, op: ac.DataCopyOp | ac.DataCopyPadOp, api: str) -> np.dtype:
        """Element dtype of a copy (cached per op); ``dst`` and ``src`` must agree."""
        dt = self._dtypes.get(op)
        if dt is None:
            dt, src_dt = _elem_dtype(op.dst.type), _elem_dtype(op.src.type)
            if dt != src_dt:
                raise _fail(op, api, f"dst elements are {dt}, src elements {src_dt}")
            self._dtypes[op] = dt
        return dt

    def _dtype(self, op: Operation, tensor_type: Attribute) -> np.dtype:
        """Element dtype of ``tensor_type`` (the op's result or ``dst``), cached per op."""
        dt = self._dtypes.get(op)
        if dt is None:
            dt = self._dtypes[op] = _elem_dtype(tensor_type)
        return dt

    # ------------------------------------------------------------------ setup

    @impl(ac.GlobalBufferOp)
    def run_global_buffer(self, interpreter: Interpreter, op: ac.GlobalBufferOp,
                          args: PythonValues) -> PythonValues:
        """``SetGlobalBuffer``: the GM memref argument (a flat numpy array) as a
        GlobalTensor."""
        (arr,) = args
        if not isinstance(arr, np.ndarray):
            raise _fail(op, "GlobalTensor::SetGlobalBuffer",
                        f"expected a numpy array for the GM argument, got {type(arr).__name__}")
        want = _elem_dtype(op.result.type)
        if arr.dtype != want:
            raise _fail(op, "GlobalTensor::SetGlobalBuffer",
                        f"GM array has dtype {arr.dtype}; the tensor expects {want}")
        if not arr.flags.c_contiguous:
            raise _fail(op, "GlobalTensor::SetGlobalBuffer",
                        "the GM array must be C-contiguous (writes must reach the caller)")
        return (GlobalTensor(arr.reshape(-1), 0),)

    @impl(ac.InitQueueOp)
    def run_init_queue(self, interpreter: Interpreter, op: ac.InitQueueOp,
                       args: PythonValues) -> PythonValues:
        """``pipe.InitBuffer(que, num, len)``: ``num`` buffers of ``len`` bytes (rounded up
        to 32) from the next free UB byte."""
        num, length = op.num.value.data, op.length.value.data
        if num <= 0 or length < 0:
            raise _fail(op, "TPipe::InitBuffer", f"invalid queue buffer count {num} or "
                                                 f"length {length}")
        length = _round32(length)
        base = pipe_of(block_state(interpreter)).take(op, num * length)
        return (Queue(op.position.data, base, length, num, [_FREE] * num),)

    @impl(ac.InitTBufOp)
    def run_init_tbuf(self, interpreter: Interpreter, op: ac.InitTBufOp,
                      args: PythonValues) -> PythonValues:
        """``pipe.InitBuffer(tbuf, len)``: ``len`` bytes (rounded up to 32)."""
        length = op.length.value.data
        if length < 0:
            raise _fail(op, "TPipe::InitBuffer", f"invalid buffer length {length}")
        length = _round32(length)
        base = pipe_of(block_state(interpreter)).take(op, length)
        return (TBuf(base, length),)

    @impl(ac.TBufGetOp)
    def run_tbuf_get(self, interpreter: Interpreter, op: ac.TBufGetOp,
                     args: PythonValues) -> PythonValues:
        """``b.Get<T>()[offset]``."""
        (buf,) = args
        dtype = self._dtype(op, op.result.type)
        size = buf.length // dtype.itemsize
        off = op.offset.value.data
        if not 0 <= off <= size:
            raise _mem_fail(op, "TBuf::Get", f"offset {off} out of range for a {buf.length}-byte "
                                         f"buffer of {size} {dtype} elements")
        return (LocalTensor(buf.base + off * dtype.itemsize, dtype, size - off),)

    # ------------------------------------------------------------------ queues

    @impl(ac.AllocTensorOp)
    def run_alloc_tensor(self, interpreter: Interpreter, op: ac.AllocTensorOp,
                         args: PythonValues) -> PythonValues:
        """``q.AllocTensor<T>()``: the next buffer round-robin; it must be free."""
        (q,) = args
        k = q.next
        if q.slots[k] != _FREE:
            state = "still enqueued" if q.slots[k] == _QUEUED else "still allocated"
            raise _fail(op, "TQue::AllocTensor", f"buffer {k} of {q.num} (UB offset "
                                                 f"{q.base + k * q.length}) was not freed yet "
                                                 f"({state})")
        q.slots[k] = _ALLOCATED
        q.next = (k + 1) % q.num
        dtype = self._dtype(op, op.result.type)
        return (LocalTensor(q.base + k * q.length, dtype, q.length // dtype.itemsize),)

    @impl(ac.EnQueOp)
    def run_enque(self, interpreter: Interpreter, op: ac.EnQueOp,
                  args: PythonValues) -> PythonValues:
        """``q.EnQue(t)``: an allocated tensor of this queue joins the FIFO."""
        q, t = args
        k = q.slot_of(op, "TQue::EnQue", t.offset)
        if q.slots[k] != _ALLOCATED:
            raise _fail(op, "TQue::EnQue", f"buffer {k} (UB offset {t.offset}) is not an "
                                           "allocated tensor of this queue")
        q.slots[k] = _QUEUED
        q.fifo.append((t.offset, t.nbytes))
        return ()

    @impl(ac.DeQueOp)
    def run_deque(self, interpreter: Interpreter, op: ac.DeQueOp,
                  args: PythonValues) -> PythonValues:
        """``q.DeQue<T>()``: the oldest enqueued tensor."""
        (q,) = args
        if not q.fifo:
            raise _fail(op, "TQue::DeQue", "queue is empty")
        off, nbytes = q.fifo.popleft()
        q.slots[(off - q.base) // q.length] = _ALLOCATED
        dtype = self._dtype(op, op.result.type)
        return (LocalTensor(off, dtype, nbytes // dtype.itemsize),)

    @impl(ac.FreeTensorOp)
    def run_free_tensor(self, interpreter: Interpreter, op: ac.FreeTensorOp,
                        args: PythonValues) -> PythonValues:
        """``q.FreeTensor(t)``: the buffer may be allocated again."""
        q, t = args
        k = q.slot_of(op, "TQue::FreeTensor", t.offset)
        if q.slots[k] == _FREE:
            raise _fail(op, "TQue::FreeTensor", f"buffer {k} (UB offset {t.offset}) is "
                                                "already free")
        if q.slots[k] == _QUEUED:
            raise _fail(op, "TQue::FreeTensor", f"buffer {k} (UB offset {t.offset}) is still "
                                                "enqueued (DeQue it first)")
        q.slots[k] = _FREE
        return ()

    @impl(ac.SubviewOp)
    def run_subview(self, interpreter: Interpreter, op: ac.SubviewOp,
                    args: PythonValues) -> PythonValues:
        """``t[offset]``: ``offset`` elements later (``offset == size`` gives an empty view)."""
        t, off = args
        off = _i(off)
        if isinstance(t, LocalTensor):
            if not 0 <= off <= t.size:
                raise _mem_fail(op, "LocalTensor::operator[]",
                            f"offset {off} out of range for tensor at UB offset {t.offset} "
                            f"with {t.size} elements")
            return (LocalTensor(t.offset + off * t.dtype.itemsize, t.dtype, t.size - off),)
        if not 0 <= off <= t.size:
            raise _mem_fail(op, "GlobalTensor::operator[]",
                        f"offset {off} out of range for {t.size} elements (GM array of "
                        f"{t.array.size}, view at {t.offset})")
        return (GlobalTensor(t.array, t.offset + off),)

    # ------------------------------------------------------------------ data movement

    @impl(ac.DataCopyOp)
    def run_data_copy(self, interpreter: Interpreter, op: ac.DataCopyOp,
                      args: PythonValues) -> PythonValues:
        """``DataCopy(dst, src, count)``: ``count*sizeof(T)`` bytes rounded DOWN to a
        multiple of 32."""
        dst, src, count = args
        count = _i(count)
        dst_ub, src_ub = isinstance(dst, LocalTensor), isinstance(src, LocalTensor)
        api = ("DataCopy(UB->UB)" if dst_ub and src_ub else
               "DataCopy(GM->UB)" if dst_ub else "DataCopy(UB->GM)")
        if count < 0:
            raise _fail(op, api, f"negative count {count}")
        if not dst_ub and not src_ub:
            raise _fail(op, api, "GM->GM copies are not supported")
        isz = self._copy_dtype(op, api).itemsize
        nbytes = count * isz // _BLOCK * _BLOCK
        ub = block_state(interpreter).ub
        d = (_local_bytes(op, api, "dst", dst, nbytes, ub) if dst_ub
             else _global_bytes(op, api, "dst", dst, nbytes))
        s = (_local_bytes(op, api, "src", src, nbytes, ub) if src_ub
             else _global_bytes(op, api, "src", src, nbytes))
        state = block_state(interpreter)
        if state.shadow is not None and nbytes:
            sh = state.shadow
            if not src_ub:
                sh[dst.offset:dst.offset + nbytes] = 0xFF
            elif not dst_ub:
                _require(op, api, "src", src, 0, nbytes, state)
            else:
                sh[dst.offset:dst.offset + nbytes] = sh[src.offset:src.offset + nbytes].copy()
        if nbytes:
            d[...] = s
        return ()

    @impl(ac.DataCopyPadOp)
    def run_data_copy_pad(self, interpreter: Interpreter, op: ac.DataCopyPadOp,
                          args: PythonValues) -> PythonValues:
        """``DataCopyPad``: ``block_count`` blocks of ``block_len`` bytes. GM->UB: GM gap
        ``src_stride`` bytes; each block lands 32-byte aligned in UB, padded up to 32 bytes
        (padding keeps the old UB bytes), UB gap ``dst_stride`` 32-byte blocks. UB->GM: UB
        blocks start 32-byte aligned with gap ``src_stride`` 32-byte blocks; exactly
        ``block_len`` bytes are written per block, GM gap ``dst_stride`` bytes."""
        dst, src, n, length, src_stride, dst_stride = args
        n, length = _i(n), _i(length)
        src_stride, dst_stride = _i(src_stride), _i(dst_stride)
        inbound = isinstance(dst, LocalTensor)
        api = "DataCopyPad(GM->UB)" if inbound else "DataCopyPad(UB->GM)"
        isz = self._copy_dtype(op, api).itemsize
        if min(n, length, src_stride, dst_stride) < 0:
            raise _fail(op, api, f"negative parameter: blockCount {n}, blockLen {length}, "
                                 f"srcStride {src_stride}, dstStride {dst_stride}")
        if length % isz:
            raise _fail(op, api, f"blockLen {length} bytes is not a multiple of {isz}")
        ub = block_state(interpreter).ub
        padded = _round32(length)
        if inbound:
            gm_step, ub_step = length + src_stride, padded + dst_stride * _BLOCK
            ub_end = (n - 1) * ub_step + padded if n else 0
            ub_bytes = _local_bytes(op, api, "dst", dst, ub_end, ub)
        else:
            gm_step, ub_step = length + dst_stride, padded + src_stride * _BLOCK
            ub_end = (n - 1) * ub_step + length if n and length else 0
            ub_bytes = _local_bytes(op, api, "src", src, ub_end, ub)
        gm_end = (n - 1) * gm_step + length if n and length else 0
        gm_bytes = _global_bytes(op, api, "src" if inbound else "dst",
                                 src if inbound else dst, gm_end)
        if not n or not length:
            return ()
        state = block_state(interpreter)
        if state.shadow is not None:
            t = dst if inbound else src
            sh_rows = _rows(state.shadow[t.offset:t.offset + ub_end], n, length, ub_step)
            if inbound:  # the padding (isPad is false) keeps its old contents and shadow
                sh_rows[...] = 0xFF
            else:
                for k in range(n):
                    if not (sh_rows[k] == 0xFF).all():
                        _require(op, api, "src", src, k * ub_step, length, state,
                                 f" block {k} of {n},")
        ub_rows = _rows(ub_bytes, n, length, ub_step)
        gm_rows = _rows(gm_bytes, n, length, gm_step)
        if inbound:
            ub_rows[...] = gm_rows
        else:
            gm_rows[...] = ub_rows
        return ()

    # ------------------------------------------------------------------ vector ops

    @impl(ac.VecBinaryOp)
    def run_vec_binary(self, interpreter: Interpreter, op: ac.VecBinaryOp,
                       args: PythonValues) -> PythonValues:
        """``Add|Sub|Mul|Div|Max|Min(dst, a, b, count)``."""
        dst, lhs, rhs, n = args
        n = _i(n)
        api = op.api.data
        ub = block_state(interpreter).ub
        d = _local(op, api, "dst", dst, n, ub)
        a = _local(op, api, "src0", lhs, n, ub)
        b = _local(op, api, "src1", rhs, n, ub)
        state = block_state(interpreter)
        if state.shadow is not None:
            _set(state, dst, n, _ok(state, lhs, n) & _ok(state, rhs, n))
        with np.errstate(all="ignore"):
            if d.dtype == _F16:
                d[...] = _BINARY[api](a.astype(np.float32), b.astype(np.float32))
            else:
                _BINARY[api](a, b, out=d)
        return ()

    @impl(ac.VecUnaryOp)
    def run_vec_unary(self, interpreter: Interpreter, op: ac.VecUnaryOp,
                      args: PythonValues) -> PythonValues:
        """``Exp|Ln|Abs|Sqrt|Rsqrt|Reciprocal|Relu(dst, src, count)``."""
        dst, src, n = args
        n = _i(n)
        api = op.api.data
        d, s = _elementwise_operands(interpreter, op, api, dst, src, n)
        with np.errstate(all="ignore"):
            d[...] = _UNARY[api](_lanes(s))
        return ()

    @impl(ac.VecScalarOp)
    def run_vec_scalar(self, interpreter: Interpreter, op: ac.VecScalarOp,
                       args: PythonValues) -> PythonValues:
        """``Adds|Muls|Maxs|Mins(dst, src, (T)scalar, count)``."""
        dst, src, n = args
        n = _i(n)
        api = op.api.data
        d, s = _elementwise_operands(interpreter, op, api, dst, src, n)
        with np.errstate(all="ignore"):
            scalar = d.dtype.type(op.scalar.value.data)
            if d.dtype == _F16:
                d[...] = _SCALAR[api](s.astype(np.float32), np.float32(scalar))
            else:
                _SCALAR[api](s, scalar, out=d)
        return ()

    @impl(ac.DuplicateOp)
    def run_duplicate(self, interpreter: Interpreter, op: ac.DuplicateOp,
                      args: PythonValues) -> PythonValues:
        """``Duplicate(dst, (T)scalar, count)``."""
        dst, scalar, n = args
        n = _i(n)
        state = block_state(interpreter)
        d = _local(op, "Duplicate", "dst", dst, n, state.ub)
        if state.shadow is not None:
            _set(state, dst, n)
        with np.errstate(all="ignore"):
            d[...] = d.dtype.type(_scalar_value(scalar))
        return ()

    @impl(ac.GetValueOp)
    def run_get_value(self, interpreter: Interpreter, op: ac.GetValueOp,
                      args: PythonValues) -> PythonValues:
        """``t.GetValue(i)``: a ``FloatAttr`` of the tensor's element type."""
        t, i = args
        i = _i(i)
        if not 0 <= i < t.size:
            raise _mem_fail(op, "LocalTensor::GetValue", f"index {i} out of range for tensor at "
                                                     f"UB offset {t.offset} with {t.size} "
                                                     "elements")
        state = block_state(interpreter)
        ub = state.ub
        isz = t.dtype.itemsize
        start = t.offset + i * isz
        if state.shadow is not None and not (state.shadow[start:start + isz] == 0xFF).all():
            raise _mem_fail(op, "LocalTensor::GetValue", f"read of uninitialised UB: element {i} "
                                                         f"(UB offset {start}) of the tensor at "
                                                         f"UB offset {t.offset} was never "
                                                         "written in this block")
        value = ub[start:start + isz].view(t.dtype)[0]
        return (FloatAttr(float(value), op.result.type),)

    @impl(ac.CastOp)
    def run_cast(self, interpreter: Interpreter, op: ac.CastOp,
                 args: PythonValues) -> PythonValues:
        """``Cast(dst, src, RoundMode::MODE, count)`` (NONE/RINT: ties to even, FLOOR, CEIL,
        ROUND: ties away from zero, TRUNC, ODD)."""
        dst, src, n = args
        n = _i(n)
        ub = block_state(interpreter).ub
        d = _local(op, "Cast", "dst", dst, n, ub)
        s = _local(op, "Cast", "src", src, n, ub)
        state = block_state(interpreter)
        if state.shadow is not None:
            _set(state, dst, n, _ok(state, src, n))
        try:
            d[...] = _cast(s, d.dtype, _ROUND[op.round.data])
        except InterpretationError as exc:
            raise _fail(op, "Cast", str(exc)) from None
        return ()

    @impl(ac.CompareOp)
    def run_compare(self, interpreter: Interpreter, op: ac.CompareOp,
                    args: PythonValues) -> PythonValues:
        """``Compare(mask, a, b, CMPMODE::MODE, count)``: bit ``i`` of the mask (LSB first in
        byte ``i/8``) = ``a[i] MODE b[i]``; ``count*sizeof(T)`` must be a multiple of 256
        bytes; writes ``count/8`` mask bytes."""
        mask, lhs, rhs, n = args
        n = _i(n)
        ub = block_state(interpreter).ub
        if n < 0:
            raise _fail(op, "Compare", f"negative count {n}")
        isz = lhs.dtype.itemsize
        if n * isz % VECTOR_REPEAT_BYTES:
            raise _fail(op, "Compare", f"count {n} * {isz} bytes = {n * isz} is not a "
                                       f"multiple of {VECTOR_REPEAT_BYTES} bytes")
        a = _local(op, "Compare", "src0", lhs, n, ub)
        b = _local(op, "Compare", "src1", rhs, n, ub)
        m = _local_bytes(op, "Compare", "dstMask", mask, n // 8, ub)
        state = block_state(interpreter)
        if state.shadow is not None:  # mask bit i is defined iff a[i] and b[i] are
            state.shadow[mask.offset:mask.offset + n // 8] = np.packbits(
                _ok(state, lhs, n) & _ok(state, rhs, n), bitorder="little")
        m[...] = np.packbits(_COMPARE[op.mode.data](a, b), bitorder="little")
        return ()

    @impl(ac.SelectOp)
    def run_select(self, interpreter: Interpreter, op: ac.SelectOp,
                   args: PythonValues) -> PythonValues:
        """``Select(dst, mask, a, b, VSEL_TENSOR_TENSOR_MODE, count)``: ``dst[i] = bit i ?
        a[i] : b[i]``."""
        dst, mask, lhs, rhs, n = args
        n = _i(n)
        ub = block_state(interpreter).ub
        d = _local(op, "Select", "dst", dst, n, ub)
        a = _local(op, "Select", "src0", lhs, n, ub)
        b = _local(op, "Select", "src1", rhs, n, ub)
        m = _local_bytes(op, "Select", "mask", mask, (n + 7) // 8, ub)
        bits = np.unpackbits(m, count=n, bitorder="little").view(np.bool_)
        state = block_state(interpreter)
        if state.shadow is not None:  # defined iff the mask bit and the selected lane are
            m_ok = np.unpackbits(state.shadow[mask.offset:mask.offset + (n + 7) // 8], count=n,
                                 bitorder="little").view(np.bool_)
            _set(state, dst, n, m_ok & np.where(bits, _ok(state, lhs, n), _ok(state, rhs, n)))
        d[...] = np.where(bits, a, b)
        return ()

    @impl(ac.ReduceOp)
    def run_reduce(self, interpreter: Interpreter, op: ac.ReduceOp,
                   args: PythonValues) -> PythonValues:
        """``ReduceSum|ReduceMax|ReduceMin(dst, src, work, count)``: result in ``dst[0]``
        (sum order: :func:`reduce_sum`); ``work`` is checked (aligned) but not written."""
        dst, src, work, n = args
        n = _i(n)
        api = op.api.data
        if n <= 0:
            raise _fail(op, api, f"count must be positive, got {n}")
        ub = block_state(interpreter).ub
        d = _local(op, api, "dst", dst, 1, ub)
        s = _local(op, api, "src", src, n, ub)
        _local(op, api, "work", work, 0, ub)
        state = block_state(interpreter)
        if state.shadow is not None:  # a reduction reads its whole count: it must be defined
            _require(op, api, "src", src, 0, n * src.dtype.itemsize, state)
            _set(state, dst, 1)
        if api == "ReduceSum":
            d[0] = reduce_sum(s)
        else:
            d[0] = _REDUCE_EXTREME[api](s)
        return ()

    # ------------------------------------------------------------------ scalars

    @impl(ac.GetBlockIdxOp)
    def run_get_block_idx(self, interpreter: Interpreter, op: ac.GetBlockIdxOp,
                          args: PythonValues) -> PythonValues:
        """``GetBlockIdx()``."""
        return (scalar_attr(block_state(interpreter).idx, IndexType(),
                            interpreter.index_bitwidth),)

    @impl(ac.TilingFieldOp)
    def run_tiling_field(self, interpreter: Interpreter, op: ac.TilingFieldOp,
                         args: PythonValues) -> PythonValues:
        """``tiling.FIELD`` from the block's tiling values (the kernel's ``asc.tiling``)."""
        tiling = block_state(interpreter).tiling
        name = op.field.data
        if name not in tiling:
            raise _fail(op, "tiling", f"no tiling field {name!r}; the kernel has "
                                      f"{sorted(tiling) or 'none'}")
        return (scalar_attr(tiling[name], IndexType(), interpreter.index_bitwidth),)

    @impl(ac.SyncOp)
    def run_sync(self, interpreter: Interpreter, op: ac.SyncOp,
                 args: PythonValues) -> PythonValues:
        """``SetFlag``/``WaitFlag``: a no-op (execution is sequential)."""
        return ()

    # ------------------------------------------------------------------ Matmul (Cube)

    @impl(ac.CubeTilingOp)
    def run_cube_tiling(self, interpreter: Interpreter, op: ac.CubeTilingOp,
                        args: PythonValues) -> PythonValues:
        """``TCubeTiling t{}; t.F = tiling.PREFIX_F; ...``: a dict of the fields."""
        tiling = block_state(interpreter).tiling
        prefix = op.prefix.data
        missing = [f for f in ct.TCUBE_FIELDS if f"{prefix}_{f}" not in tiling]
        if missing:
            raise _fail(op, "TCubeTiling", f"the tiling struct lacks {prefix}_{missing[0]}")
        return ({f: tiling[f"{prefix}_{f}"] for f in ct.TCUBE_FIELDS},)

    @impl(ac.MatmulObjectOp)
    def run_matmul_object(self, interpreter: Interpreter, op: ac.MatmulObjectOp,
                          args: PythonValues) -> PythonValues:
        """Declares a Matmul object (unregistered)."""
        return (MatmulObject(local_dtype(op.result.type.element_type),
                             bool(op.transpose_a.value.data), bool(op.transpose_b.value.data)),)

    @impl(ac.RegistMatmulOp)
    def run_regist_matmul(self, interpreter: Interpreter, op: ac.RegistMatmulOp,
                          args: PythonValues) -> PythonValues:
        """``REGIST_MATMUL_OBJ``: before any ``InitBuffer``; checks each TCubeTiling against
        the documented constraints (``cube_tiling.tiling_violations``) and takes its
        ``transLength`` bytes of UB (coupled-core platforms)."""
        api = "REGIST_MATMUL_OBJ"
        pipe = pipe_of(block_state(interpreter))
        if pipe.cursor:
            raise _fail(op, api, f"must come before the first InitBuffer ({pipe.cursor} bytes "
                                 "of UB were already handed out)")
        plat = _kernel_platform(op)
        for mm, tiling in zip(args[::2], args[1::2], strict=True):
            if mm.tiling is not None:
                raise _fail(op, api, "the Matmul object is already registered")
            bad = ct.tiling_violations(tiling, mm.dtype.itemsize, mm.trans_a, mm.trans_b, plat)
            if bad:
                raise _fail(op, api, f"invalid TCubeTiling: {'; '.join(bad)}")
            mm.tiling = dict(tiling)
            if tiling["transLength"]:
                pipe.take(op, _round32(tiling["transLength"]))
        return ()

    def _set_tensor(self, op: ac.MatmulSetTensorAOp | ac.MatmulSetTensorBOp, args: PythonValues,
                    side: str) -> None:
        mm, g = args
        api = f"Matmul::SetTensor{side}"
        _live_matmul(op, api, mm)
        trans = bool(op.transpose.value.data)
        if trans and not (mm.trans_a if side == "A" else mm.trans_b):
            raise _fail(op, api, f"isTranspose{side} = true needs isTrans = true in "
                                 f"{side}'s MatmulType")
        if side == "A":
            mm.a = (g, trans)
        else:
            mm.b = (g, trans)
        mm.next_block, mm.block = 0, None

    @impl(ac.MatmulSetTensorAOp)
    def run_matmul_set_tensor_a(self, interpreter: Interpreter, op: ac.MatmulSetTensorAOp,
                                args: PythonValues) -> PythonValues:
        """``mm.SetTensorA(gm, isTransposeA)``."""
        self._set_tensor(op, args, "A")
        return ()

    @impl(ac.MatmulSetTensorBOp)
    def run_matmul_set_tensor_b(self, interpreter: Interpreter, op: ac.MatmulSetTensorBOp,
                                args: PythonValues) -> PythonValues:
        """``mm.SetTensorB(gm, isTransposeB)``."""
        self._set_tensor(op, args, "B")
        return ()

    @impl(ac.MatmulSetTailOp)
    def run_matmul_set_tail(self, interpreter: Interpreter, op: ac.MatmulSetTailOp,
                            args: PythonValues) -> PythonValues:
        """``mm.SetTail(m, n, k)``: each in ``[1, singleCoreM/N/K]``."""
        mm, m, n, k = args
        t = _live_matmul(op, "Matmul::SetTail", mm)
        tail = (_i(m), _i(n), _i(k))
        for name, v, top in zip("MNK", tail, (t["singleCoreM"], t["singleCoreN"],
                                              t["singleCoreK"]), strict=True):
            if not 1 <= v <= top:
                raise _fail(op, "Matmul::SetTail", f"tail{name} = {v} is outside [1, "
                                                   f"singleCore{name} = {top}]")
        mm.tail = tail
        mm.next_block, mm.block = 0, None
        return ()

    @impl(ac.MatmulIterateOp)
    def run_matmul_iterate(self, interpreter: Interpreter, op: ac.MatmulIterateOp,
                           args: PythonValues) -> PythonValues:
        """``mm.Iterate()``: the next ``[baseM, baseN]`` block of C (M first when
        ``iterateOrder`` is 0), f32 accumulation over the whole K; nothing when all blocks
        were computed."""
        (mm,) = args
        api = "Matmul::Iterate"
        t = _live_matmul(op, api, mm)
        if mm.a is None or mm.b is None:
            raise _fail(op, api, "SetTensorA and SetTensorB must come first")
        tm, tn, tk = mm.tail or (t["singleCoreM"], t["singleCoreN"], t["singleCoreK"])
        bm, bn = t["baseM"], t["baseN"]
        m_blocks, n_blocks = -(-tm // bm), -(-tn // bn)
        if mm.next_block >= m_blocks * n_blocks:
            mm.block = None
            return ()
        i = mm.next_block
        mi, ni = (i % m_blocks, i // m_blocks) if t["iterateOrder"] == 0 else (
            i // n_blocks, i % n_blocks)
        mm.next_block += 1
        r0, c0 = mi * bm, ni * bn
        rows, cols = min(bm, tm - r0), min(bn, tn - c0)
        (ga, ta), (gb, tb) = mm.a, mm.b
        lhs = (_gm_matrix(op, api, ga, tk, r0 + rows, t["M"])[:, r0:].T if ta else
               _gm_matrix(op, api, ga, r0 + rows, tk, t["Ka"])[r0:])
        rhs = (_gm_matrix(op, api, gb, c0 + cols, tk, t["Kb"])[c0:].T if tb else
               _gm_matrix(op, api, gb, tk, c0 + cols, t["N"])[:, c0:])
        mm.block = (r0, c0, np.matmul(lhs.astype(np.float32), rhs.astype(np.float32)))
        return ()

    @impl(ac.MatmulGetTensorCOp)
    def run_matmul_get_tensor_c(self, interpreter: Interpreter, op: ac.MatmulGetTensorCOp,
                                args: PythonValues) -> PythonValues:
        """``mm.GetTensorC(ub)``: the block Iterate computed, ND with row stride ``baseN``
        (its rows only; columns past its width are 0); ``ub`` must hold ``baseM * baseN``
        elements (documented). Memory check: defines ``rows * baseN`` elements."""
        mm, dst = args
        api = "Matmul::GetTensorC"
        t = _live_matmul(op, api, mm)
        if mm.block is None:
            raise _fail(op, api, "no block to get: Iterate computed none since the last "
                                 "GetTensorC / SetTensorA / SetTensorB / SetTail")
        bm, bn = t["baseM"], t["baseN"]
        state = block_state(interpreter)
        if dst.size < bm * bn:
            raise _mem_fail(op, api, f"C LocalTensor at UB offset {dst.offset} holds {dst.size} "
                                     f"elements; baseM * baseN = {bm * bn} are required")
        _, _, values = mm.block
        rows, cols = values.shape
        d = _local(op, api, "C", dst, rows * bn, state.ub).reshape(rows, bn)
        d[:, :cols] = values
        d[:, cols:] = 0
        if state.shadow is not None:
            _set(state, dst, rows * bn)
        mm.block = None
        return ()

    @impl(ac.MatmulEndOp)
    def run_matmul_end(self, interpreter: Interpreter, op: ac.MatmulEndOp,
                       args: PythonValues) -> PythonValues:
        """``mm.End()``: no Matmul call may follow."""
        (mm,) = args
        _live_matmul(op, "Matmul::End", mm)
        mm.ended = True
        return ()
