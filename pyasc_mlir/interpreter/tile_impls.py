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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.dialects.builtin import (
    DictionaryAttr,
    Float16Type,
    Float32Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
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

from pyasc_mlir.checks import MemoryCheckError, memory_check_enabled
from pyasc_mlir.dialects.asc import (
    LOC_ATTR,
    AllocOp,
    BlockIdxOp,
    BlockNumOp,
    CopyInOp,
    CopyOutOp,
    LaunchOp,
    MmadOp,
    TilingFieldOp,
    VBinaryOp,
    VBroadcastOp,
    VCastOp,
    VCompareOp,
    VCopyOp,
    VDupOp,
    VReduceOp,
    VScalarOp,
    VSelectOp,
    VUnaryOp,
)
from pyasc_mlir.dialects.attrs import PLATFORM_ATTR, TILING_ATTR
from pyasc_mlir.platform import get_platform

UB_BYTES_DEFAULT = 196608
"""UB size per block when nobody says otherwise (192 KiB, the 910B value)."""
POISON_BYTE = 0xFF
"""Fill byte of fresh memory: reads back as NaN in f16 and f32, -1 in integers."""
REDUCE_LAST_STRIDE = 16
"""``asc.vreduce`` axis ``last`` writes its per-row results this many elements apart."""

_KEY = "asc.block"


class TileInterpretationError(InterpretationError):
    """A tile-level op did something the hardware would not allow (out of bounds, bad count)."""


class TileMemoryError(TileInterpretationError, MemoryCheckError):
    """A memory access violation of a tile-level op: out of bounds, or (memory check) a read of
    uninitialised UB. ``op`` and ``loc`` name the op and its ``asc.loc``."""


def _fail(op: Operation, message: str) -> TileInterpretationError:
    loc = op.attributes.get(LOC_ATTR)
    where = f"{loc.data}: " if isinstance(loc, StringAttr) else ""
    return TileInterpretationError(f"{where}{op.name}: {message}")


def _mem_fail(op: Operation, message: str) -> TileMemoryError:
    loc = op.attributes.get(LOC_ATTR)
    where = f"{loc.data}: " if isinstance(loc, StringAttr) else ""
    err = TileMemoryError(f"{where}{op.name}: {message}")
    err.located(message, op.name, loc.data if isinstance(loc, StringAttr) else None)
    return err


def _i(v: Any) -> int:
    """An index value as a Python int (xDSL passes ``IntegerAttr``; ints are accepted too)."""
    return v if type(v) is int else v.value.data


def np_dtype(t: Attribute) -> np.dtype:
    """The numpy dtype buffers of element type ``t`` use (masks ``i1``: packed ``uint8``)."""
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
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
            raise InterpretationError(f"{TILING_ATTR}: field {name!r} must be an integer, "
                                      f"got {v}")
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
            buffers, times_run]``.
        shadow: memory check only (else ``None``): one byte per UB byte holding its "defined"
            bits (0xFF: written since the block started).
        fresh: memory check only: ``(address, array, shadow)`` of fresh (offset-less) allocs.
    """

    idx: int = 0
    num: int = 1
    tiling: dict[str, int] = field(default_factory=dict)
    ub: np.ndarray = field(
        default_factory=lambda: np.full(UB_BYTES_DEFAULT, POISON_BYTE, np.uint8))
    allocs: dict[Operation, list[Any]] = field(default_factory=dict)
    shadow: np.ndarray | None = None
    fresh: list[tuple[int, np.ndarray, np.ndarray]] = field(default_factory=list)

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


def block_state(interpreter: Interpreter) -> BlockState:
    """The current block's state on ``interpreter`` (block 0 of 1 with an empty tiling until
    :func:`set_block` or ``asc.launch`` says otherwise)."""
    return interpreter.get_data(AscTileFunctions, _KEY, BlockState)


def set_block(interpreter: Interpreter, idx: int, num: int,
              tiling: dict[str, int] | None = None,
              ub_bytes: int = UB_BYTES_DEFAULT) -> BlockState:
    """Make ``interpreter`` run as block ``idx`` of ``num`` with a fresh UB of ``ub_bytes``;
    use before ``interpreter.call_op(kernel, gm_buffers)`` to run one block by hand."""
    state = block_state(interpreter)
    state.reset(idx, num, tiling or {}, ub_bytes)
    return state


def _fresh(dtype: np.dtype, elements: int) -> np.ndarray:
    return np.full(elements * dtype.itemsize, POISON_BYTE, np.uint8).view(dtype)


# --------------------------------------------------------------------------- memory check
# A shadow is viewed with one unsigned integer per element of its buffer (uint16 for f16,
# uint32 for f32, uint8 for i8 and for packed masks): an element is defined iff its shadow is
# all ones; a mask bit iff its shadow bit is set.

_UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
         8: np.dtype(np.uint64)}


def _address(buf: np.ndarray) -> int:
    return buf.__array_interface__["data"][0]


def shadow_of(state: BlockState, buf: np.ndarray) -> np.ndarray | None:
    """The shadow of ``buf`` (a contiguous view of UB or of a fresh alloc), one unsigned
    integer per element; ``None`` when memory check is off or ``buf`` is GM."""
    if state.shadow is None:
        return None
    addr, ub = _address(buf), state.ub
    start = addr - _address(ub)
    if 0 <= start < ub.size:
        return state.shadow[start:start + buf.nbytes].view(_UINT[buf.dtype.itemsize])
    for base, arr, sh in state.fresh:
        if base <= addr < base + arr.nbytes:
            return sh[addr - base:addr - base + buf.nbytes].view(_UINT[buf.dtype.itemsize])
    return None


def _full(sh: np.ndarray) -> Any:
    return np.iinfo(sh.dtype).max


def _defined(sh: np.ndarray) -> np.ndarray:
    """Per element: all bits defined."""
    return sh == _full(sh)


def _define(sh: np.ndarray, ok: Any = True) -> None:
    """Set the shadow of every element of ``sh``: defined where ``ok``."""
    sh[...] = np.where(ok, _full(sh), 0) if ok is not True else _full(sh)


def _elems_defined(state: BlockState, buf: np.ndarray, n: int) -> np.ndarray | bool:
    """Definedness of the first ``n`` elements (mask bits for masks) of ``buf``; ``True`` when
    it has no shadow (GM, or memory check off)."""
    sh = shadow_of(state, buf)
    if sh is None:
        return True
    if _is_mask(buf):
        return _bits(sh)[:n]
    return _defined(sh[:n])


def _set_defined(state: BlockState, buf: np.ndarray, n: int, ok: Any) -> None:
    """Set the definedness of the first ``n`` elements (mask bits) of ``buf`` to ``ok``."""
    sh = shadow_of(state, buf)
    if sh is None:
        return
    if _is_mask(buf):
        bits = _bits(sh)
        bits[:n] = ok
        _store_bits(sh, bits)
    else:
        _define(sh[:n], ok)


def _propagate(state: BlockState, dst: np.ndarray, n: int, *srcs: np.ndarray) -> None:
    """Elementwise rule: ``dst`` element i (i < n) is defined iff element i of every source
    is."""
    if state.shadow is None:
        return
    ok: Any = True
    for src in srcs:
        ok = ok & _elems_defined(state, src, n)
    _set_defined(state, dst, n, ok)


def _uninit(op: Operation, what: str, element: int) -> TileMemoryError:
    return _mem_fail(op, f"read of uninitialised UB: {what} (buffer element {element}) was "
                         "never written in this block")


def _check_count(op: Operation, n: int, **buffers: np.ndarray) -> None:
    if n < 0:
        raise _fail(op, f"negative count {n}")
    for name, buf in buffers.items():
        if n > buf.size:
            raise _mem_fail(op, f"count {n} exceeds {name} buffer of {buf.size} elements")


def _check_mask(op: Operation, n: int, mask: np.ndarray) -> None:
    if n < 0:
        raise _fail(op, f"negative count {n}")
    if n > mask.size * 8:
        raise _mem_fail(op, f"count {n} exceeds mask buffer of {mask.size * 8} bits")


def _is_i1(t: TensorType) -> bool:
    return t.element_type == IntegerType(1)


def _bits(mask: np.ndarray) -> np.ndarray:
    """All bits of a packed mask as a fresh ``bool`` array (bit i = element i)."""
    return np.unpackbits(mask, bitorder="little").view(np.bool_)


def _store_bits(mask: np.ndarray, bits: np.ndarray) -> None:
    """Write a full-length ``bool`` array back into the packed mask ``mask``."""
    mask[:] = np.packbits(bits, bitorder="little")


def _is_mask(buf: np.ndarray) -> bool:
    """Masks are the only ``uint8`` buffers (``i8`` maps to ``int8``)."""
    return buf.dtype == np.uint8


def _blocks(op: Operation, side: str, buf: np.ndarray, start: int, count: int, length: int,
            stride: int) -> np.ndarray:
    """A ``[count, length]`` view of ``buf`` whose row ``i`` starts at ``start + i*stride``."""
    end = start + (count - 1) * stride + length
    if start < 0 or stride < 0 or end > buf.size:
        raise _mem_fail(op, f"{side} access out of bounds: {count} blocks x {length} elements from "
                        f"offset {start}, block stride {stride} (last element {end - 1}) in a "
                        f"buffer of {buf.size} elements")
    if count == 1 or stride == length:
        return buf[start:start + count * length].reshape(count, length)
    step = buf.strides[0]
    return as_strided(buf[start:], shape=(count, length), strides=(stride * step, step))


def _matrix(op: Operation, name: str, buf: np.ndarray, offset: int, shape: tuple[int, int],
            ld: int) -> np.ndarray:
    """A ``shape`` row-major view of GM ``buf`` from element ``offset`` with row stride ``ld``
    (checked: ``ld`` covers a row, the last element is inside ``buf``)."""
    rows, cols = shape
    if rows == 0 or cols == 0:
        return np.zeros(shape, buf.dtype)
    if ld < cols:
        raise _fail(op, f"leading dimension of {name} ({ld}) is smaller than its row length "
                        f"({cols})")
    last = offset + (rows - 1) * ld + cols - 1
    if last >= buf.size:
        raise _mem_fail(op, f"{name}: a [{rows}, {cols}] matrix at element {offset} with row "
                            f"stride {ld} ends at element {last}, past the GM buffer of "
                            f"{buf.size} elements")
    isz = buf.itemsize
    return as_strided(buf[offset:], shape=shape, strides=(ld * isz, isz))


def _reduce(kind: str, x: np.ndarray, axis: int, dtype: np.dtype) -> np.ndarray:
    if kind == "sum":
        return np.sum(x, axis=axis, dtype=np.float64).astype(dtype)
    if x.shape[axis] == 0:
        fill = -np.inf if kind == "max" else np.inf
        shape = x.shape[:axis] + x.shape[axis + 1:]
        return np.full(shape, fill, dtype)
    return (np.max if kind == "max" else np.min)(x, axis=axis)


# --------------------------------------------------------------------------- elementwise


def _rsqrt(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    np.sqrt(x, out=out)
    return np.reciprocal(out, out=out)


def _relu(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    return np.maximum(x, x.dtype.type(0), out=out)


_UNARY: dict[str, Callable[[np.ndarray, np.ndarray], Any]] = {
    "neg": lambda x, out: np.negative(x, out=out),
    "exp": lambda x, out: np.exp(x, out=out),
    "log": lambda x, out: np.log(x, out=out),
    "sqrt": lambda x, out: np.sqrt(x, out=out),
    "rsqrt": _rsqrt,
    "abs": lambda x, out: np.abs(x, out=out),
    "relu": _relu,
    "reciprocal": lambda x, out: np.reciprocal(x, out=out),
    "sin": lambda x, out: np.sin(x, out=out),
    "cos": lambda x, out: np.cos(x, out=out),
}
_BINARY: dict[str, np.ufunc] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "max": np.maximum, "min": np.minimum,
}
_SCALAR: dict[str, np.ufunc] = {
    "adds": np.add, "muls": np.multiply, "maxs": np.maximum, "mins": np.minimum,
}
_COMPARE: dict[str, np.ufunc] = {
    "lt": np.less, "gt": np.greater, "eq": np.equal, "le": np.less_equal,
    "ge": np.greater_equal, "ne": np.not_equal,
}


# --------------------------------------------------------------------------- casts


def _round_integral(x: np.ndarray, mode: str) -> np.ndarray:
    """Round float values to integral values (same dtype) with an Ascend round mode."""
    if mode in ("none", "rint"):
        return np.rint(x)
    if mode == "floor":
        return np.floor(x)
    if mode == "ceil":
        return np.ceil(x)
    if mode == "trunc":
        return np.trunc(x)
    if mode == "round":  # half away from zero
        t = np.trunc(x)
        frac = np.abs(x - t)
        return np.where(frac >= 0.5, t + np.sign(x), t)
    raise InterpretationError(f"round mode {mode!r} does not apply to a cast to an integer "
                              "or an integral float")


def _round_float(x: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    """Convert ``x`` to the float ``dtype`` rounding with ``mode`` (``none``/``rint``: to
    nearest even; ``floor``; ``ceil``; ``trunc``; ``round``: to nearest, ties away from zero;
    ``odd``: to odd)."""
    y = x.astype(dtype)  # correctly rounded, ties to even
    if mode in ("none", "rint") or x.dtype.itemsize <= dtype.itemsize and x.dtype.kind == "f":
        return y
    x64 = x.astype(np.float64)
    y64 = y.astype(np.float64)
    if mode == "floor":
        fix = y64 > x64
        toward = -np.inf
    elif mode == "ceil":
        fix = y64 < x64
        toward = np.inf
    elif mode in ("trunc", "odd"):
        fix = np.abs(y64) > np.abs(x64)
        toward = 0.0
    elif mode == "round":
        # differs from ties-to-even only at an exact tie rounded toward zero
        away = np.nextafter(y, np.copysign(np.inf, y64).astype(dtype))
        tie = (np.abs(y64) < np.abs(x64)) & (
            np.abs(away.astype(np.float64) - x64) == np.abs(x64 - y64))
        return np.where(tie, away, y)
    else:
        raise InterpretationError(f"unknown round mode {mode!r}")
    if fix.any():
        y = np.where(fix, np.nextafter(y, dtype.type(toward)), y)
    if mode == "odd":
        inexact = y.astype(np.float64) != x64
        inexact &= np.isfinite(x64)
        bits = y.view(f"uint{dtype.itemsize * 8}")
        y = np.where(inexact, (bits | 1).view(dtype), y)
    return y


def convert(src: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    """``Cast`` of ``src`` to ``dtype`` with an Ascend round mode (see ``asc.vcast``): to a
    float type, the nearest value in the direction the mode says (``odd``: round to odd);
    float to the same float type or to an integer type: round to an integral value (integers
    saturate, NaN -> 0)."""
    with np.errstate(all="ignore"):
        return _convert(src, dtype, mode)


def _convert(src: np.ndarray, dtype: np.dtype, mode: str) -> np.ndarray:
    if dtype.kind == "f":
        if src.dtype == dtype:
            return src.copy() if mode == "none" else _round_integral(src, mode)
        return _round_float(src, dtype, mode)
    if src.dtype.kind == "f":
        info = np.iinfo(dtype)
        r = _round_integral(src.astype(np.float64), mode)
        r = np.nan_to_num(r, nan=0.0, posinf=info.max, neginf=info.min)
        return np.clip(r, info.min, info.max).astype(dtype)
    return src.astype(dtype)


# --------------------------------------------------------------------------- implementations


@register_impls
class AscTileFunctions(InterpreterFunctions):
    """Numpy implementations of the ``asc`` tile-level ops (see the module docstring).

    Args:
        ub_bytes: UB size of every block that ``asc.launch`` starts; ``None``: the UB of the
            kernel's ``asc.platform`` (see :func:`kernel_ub_bytes`).
    """

    def __init__(self, ub_bytes: int | None = None):
        self.ub_bytes = ub_bytes

    # ------------------------------------------------------------------ scalars

    @impl(BlockIdxOp)
    def run_block_idx(self, interpreter: Interpreter, op: BlockIdxOp,
                      args: PythonValues) -> PythonValues:
        """``GetBlockIdx()``."""
        return (scalar_attr(block_state(interpreter).idx, IndexType(),
                            interpreter.index_bitwidth),)

    @impl(BlockNumOp)
    def run_block_num(self, interpreter: Interpreter, op: BlockNumOp,
                      args: PythonValues) -> PythonValues:
        """``GetBlockNum()``."""
        return (scalar_attr(block_state(interpreter).num, IndexType(),
                            interpreter.index_bitwidth),)

    @impl(TilingFieldOp)
    def run_tiling_field(self, interpreter: Interpreter, op: TilingFieldOp,
                         args: PythonValues) -> PythonValues:
        """A field of the block's tiling struct."""
        tiling = block_state(interpreter).tiling
        name = op.field.data
        if name not in tiling:
            raise _fail(op, f"no tiling field {name!r}; the kernel's {TILING_ATTR} has "
                            f"{sorted(tiling) or 'none'}")
        return (scalar_attr(tiling[name], IndexType(), interpreter.index_bitwidth),)

    # ------------------------------------------------------------------ memory

    @impl(AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: AllocOp,
                  args: PythonValues) -> PythonValues:
        """A fresh poisoned buffer, or with ``offset`` a view into UB that rotates over
        ``buffers`` copies each time the op runs."""
        state = block_state(interpreter)
        entry = state.allocs.get(op)
        if entry is None:
            t = op.result.type
            assert isinstance(t, MemRefType)
            dtype = np_dtype(t.element_type)
            nbytes = op.nbytes
            elements = nbytes // dtype.itemsize
            offset = None if op.offset is None else op.offset.value.data
            entry = [dtype, elements, nbytes, offset, op.buffers.value.data, 0]
            state.allocs[op] = entry
        dtype, elements, nbytes, offset, buffers, k = entry
        entry[5] = k + 1
        if offset is None:
            arr = _fresh(dtype, elements)
            if state.shadow is not None:
                state.fresh.append((_address(arr), arr, np.zeros(arr.nbytes, np.uint8)))
            return (arr,)
        start = offset + (k % buffers) * nbytes
        ub = state.ub
        if start < 0 or start + nbytes > ub.size:
            raise _mem_fail(op, f"buffer {k % buffers} of {buffers} ({nbytes} bytes at UB offset "
                            f"{start}) ends at byte {start + nbytes}, past the end of UB "
                            f"({ub.size} bytes)")
        return (ub[start:start + nbytes].view(dtype),)

    @impl(CopyInOp)
    def run_copy_in(self, interpreter: Interpreter, op: CopyInOp,
                    args: PythonValues) -> PythonValues:
        """GM -> UB: ``count`` blocks of ``length`` elements (see ``_CopyBase``)."""
        gm, ub, gm_off, ub_off, count, length, gap, stride = args
        count, length = _i(count), _i(length)
        if count <= 0 or length <= 0:
            return ()
        sh = shadow_of(block_state(interpreter), ub)
        if _is_mask(ub):
            gm_bits, ub_bits = _bits(gm), _bits(ub)
            src = _blocks(op, "GM", gm_bits, _i(gm_off), count, length, length + _i(gap))
            _blocks(op, "UB", ub_bits, _i(ub_off), count, length, _i(stride))[...] = src
            _store_bits(ub, ub_bits)
            if sh is not None:
                sh_bits = _bits(sh)
                _blocks(op, "UB", sh_bits, _i(ub_off), count, length, _i(stride))[...] = True
                _store_bits(sh, sh_bits)
            return ()
        src = _blocks(op, "GM", gm, _i(gm_off), count, length, length + _i(gap))
        dst = _blocks(op, "UB", ub, _i(ub_off), count, length, _i(stride))
        dst[...] = src
        if sh is not None:
            _blocks(op, "UB", sh, _i(ub_off), count, length, _i(stride))[...] = _full(sh)
        return ()

    @impl(CopyOutOp)
    def run_copy_out(self, interpreter: Interpreter, op: CopyOutOp,
                     args: PythonValues) -> PythonValues:
        """UB -> GM: exactly ``length`` elements per block (see ``_CopyBase``)."""
        ub, gm, gm_off, ub_off, count, length, gap, stride = args
        count, length = _i(count), _i(length)
        if count <= 0 or length <= 0:
            return ()
        sh = shadow_of(block_state(interpreter), ub)
        if sh is not None:
            ok = _blocks(op, "UB", _bits(sh) if _is_mask(ub) else _defined(sh), _i(ub_off), count,
                         length, _i(stride))
            if not ok.all():
                k, j = (int(v) for v in np.argwhere(~ok)[0])
                raise _uninit(op, f"block {k} of {count}, element {j} of {length}",
                              _i(ub_off) + k * _i(stride) + j)
        if _is_mask(ub):
            gm_bits, ub_bits = _bits(gm), _bits(ub)
            src = _blocks(op, "UB", ub_bits, _i(ub_off), count, length, _i(stride))
            _blocks(op, "GM", gm_bits, _i(gm_off), count, length, length + _i(gap))[...] = src
            _store_bits(gm, gm_bits)
            return ()
        src = _blocks(op, "UB", ub, _i(ub_off), count, length, _i(stride))
        dst = _blocks(op, "GM", gm, _i(gm_off), count, length, length + _i(gap))
        dst[...] = src
        return ()

    # ------------------------------------------------------------------ vector ops

    @impl(VUnaryOp)
    def run_vunary(self, interpreter: Interpreter, op: VUnaryOp,
                   args: PythonValues) -> PythonValues:
        """``dst[:n] = kind(src[:n])``."""
        dst, src, n = args
        n = _i(n)
        _check_count(op, n, dst=dst, src=src)
        _propagate(block_state(interpreter), dst, n, src)
        with np.errstate(all="ignore"):
            _UNARY[op.kind.data](src[:n], dst[:n])
        return ()

    @impl(VBinaryOp)
    def run_vbinary(self, interpreter: Interpreter, op: VBinaryOp,
                    args: PythonValues) -> PythonValues:
        """``dst[:n] = lhs[:n] kind rhs[:n]``."""
        dst, lhs, rhs, n = args
        n = _i(n)
        _check_count(op, n, dst=dst, lhs=lhs, rhs=rhs)
        _propagate(block_state(interpreter), dst, n, lhs, rhs)
        with np.errstate(all="ignore"):
            _BINARY[op.kind.data](lhs[:n], rhs[:n], out=dst[:n])
        return ()

    @impl(VScalarOp)
    def run_vscalar(self, interpreter: Interpreter, op: VScalarOp,
                    args: PythonValues) -> PythonValues:
        """``dst[:n] = src[:n] (+ * max min) scalar`` with the scalar in the buffer dtype."""
        dst, src, n = args
        n = _i(n)
        _check_count(op, n, dst=dst, src=src)
        _propagate(block_state(interpreter), dst, n, src)
        with np.errstate(all="ignore"):
            scalar = src.dtype.type(op.scalar.value.data)
            _SCALAR[op.kind.data](src[:n], scalar, out=dst[:n])
        return ()

    @impl(VDupOp)
    def run_vdup(self, interpreter: Interpreter, op: VDupOp,
                 args: PythonValues) -> PythonValues:
        """``dst[:n] = value``."""
        dst, n = args
        n = _i(n)
        if _is_mask(dst):
            _check_mask(op, n, dst)
            bits = _bits(dst)
            bits[:n] = op.value.value.data != 0
            _store_bits(dst, bits)
            _set_defined(block_state(interpreter), dst, n, True)
            return ()
        _check_count(op, n, dst=dst)
        _set_defined(block_state(interpreter), dst, n, True)
        with np.errstate(all="ignore"):
            dst[:n] = op.value.value.data
        return ()

    @impl(VCopyOp)
    def run_vcopy(self, interpreter: Interpreter, op: VCopyOp,
                  args: PythonValues) -> PythonValues:
        """``dst[:n] = src[:n]`` (UB -> UB)."""
        dst, src, n = args
        n = _i(n)
        if _is_mask(dst):
            _check_mask(op, n, dst)
            _check_mask(op, n, src)
            _propagate(block_state(interpreter), dst, n, src)
            bits = _bits(dst)
            bits[:n] = _bits(src)[:n]
            _store_bits(dst, bits)
            return ()
        _check_count(op, n, dst=dst, src=src)
        _propagate(block_state(interpreter), dst, n, src)
        dst[:n] = src[:n]
        return ()

    @impl(VCastOp)
    def run_vcast(self, interpreter: Interpreter, op: VCastOp,
                  args: PythonValues) -> PythonValues:
        """``dst[:n] = convert(src[:n])`` with the op's round mode."""
        dst, src, n = args
        n = _i(n)
        if _is_mask(src) or _is_mask(dst):
            _check_mask(op, n, src) if _is_mask(src) else _check_count(op, n, src=src)
            _check_mask(op, n, dst) if _is_mask(dst) else _check_count(op, n, dst=dst)
            _propagate(block_state(interpreter), dst, n, src)
            values = _bits(src)[:n] if _is_mask(src) else src[:n]
            if _is_mask(dst):
                bits = _bits(dst)
                bits[:n] = values != 0
                _store_bits(dst, bits)
            else:
                dst[:n] = values  # a mask becomes 1.0 / 0.0
            return ()
        _check_count(op, n, dst=dst, src=src)
        _propagate(block_state(interpreter), dst, n, src)
        try:
            dst[:n] = convert(src[:n], dst.dtype, op.round.data)
        except InterpretationError as exc:
            raise _fail(op, str(exc)) from None
        return ()

    @impl(VCompareOp)
    def run_vcompare(self, interpreter: Interpreter, op: VCompareOp,
                     args: PythonValues) -> PythonValues:
        """Mask bits ``[0, n)`` = ``lhs[:n] predicate rhs[:n]``; later bits are kept."""
        mask, lhs, rhs, n = args
        n = _i(n)
        _check_count(op, n, lhs=lhs, rhs=rhs)
        _check_mask(op, n, mask)
        _propagate(block_state(interpreter), mask, n, lhs, rhs)
        packed = np.packbits(_COMPARE[op.predicate.data](lhs[:n], rhs[:n]), bitorder="little")
        full, rest = divmod(n, 8)
        mask[:full] = packed[:full]
        if rest:
            keep = np.uint8((0xFF << rest) & 0xFF)
            mask[full] = (mask[full] & keep) | packed[full]
        return ()

    @impl(VSelectOp)
    def run_vselect(self, interpreter: Interpreter, op: VSelectOp,
                    args: PythonValues) -> PythonValues:
        """``dst[:n] = where(mask bits, lhs[:n], rhs[:n])``."""
        dst, mask, lhs, rhs, n = args
        n = _i(n)
        _check_count(op, n, dst=dst, lhs=lhs, rhs=rhs)
        _check_mask(op, n, mask)
        bits = np.unpackbits(mask[:(n + 7) // 8], count=n, bitorder="little").view(np.bool_)
        state = block_state(interpreter)
        if state.shadow is not None:  # defined iff the mask bit and the selected lane are
            chosen = np.where(bits, _elems_defined(state, lhs, n), _elems_defined(state, rhs, n))
            _set_defined(state, dst, n, _elems_defined(state, mask, n) & chosen)
        dst[:n] = np.where(bits, lhs[:n], rhs[:n])
        return ()

    @impl(VReduceOp)
    def run_vreduce(self, interpreter: Interpreter, op: VReduceOp,
                    args: PythonValues) -> PythonValues:
        """Row reductions of a ``[rows, m, ls]`` tile (``last``: over the first ``length``
        lanes, results 16 elements apart; ``mid``: over ``m``, ``ls`` lanes per row). Sums
        accumulate in float64; ``work`` is not touched."""
        dst, src, _work, rows, m, length, ls = args
        rows, m, length, ls = _i(rows), _i(m), _i(length), _i(ls)
        kind = op.kind.data
        if min(rows, m, length, ls) < 0 or length > ls:
            raise _fail(op, f"bad sizes rows {rows} m {m} len {length} ls {ls} "
                            "(need non-negative, len <= ls)")
        total = rows * m * ls
        if total > src.size:
            raise _mem_fail(op, f"source tile {rows} x {m} x {ls} = {total} elements exceeds "
                                f"its buffer of {src.size}")
        if total == 0 and (op.axis.data == "mid" or rows * m == 0):
            return ()
        state = block_state(interpreter)
        s_sh, d_sh = shadow_of(state, src), shadow_of(state, dst)
        with np.errstate(all="ignore"):
            if op.axis.data == "last":
                q = rows * m
                need = (q - 1) * REDUCE_LAST_STRIDE + 1
                if need > dst.size:
                    raise _mem_fail(op, f"{q} results 16 elements apart need {need} elements; "
                                    f"destination has {dst.size}")
                if s_sh is not None:  # a reduction reads its valid range: it must be defined
                    ok = _defined(s_sh[:total]).reshape(q, ls)[:, :length]
                    if not ok.all():
                        r, j = (int(v) for v in np.argwhere(~ok)[0])
                        raise _uninit(op, f"row {r} of {q}, element {j} of the {length} "
                                          "reduced", r * ls + j)
                if d_sh is not None:
                    _define(d_sh[:need:REDUCE_LAST_STRIDE])
                tile = src[:total].reshape(q, ls)[:, :length]
                dst[:need:REDUCE_LAST_STRIDE] = _reduce(kind, tile, 1, dst.dtype)
            else:
                if rows * ls > dst.size:
                    raise _mem_fail(op, f"{rows} x {ls} results exceed the destination of "
                                    f"{dst.size} elements")
                if state.shadow is not None:  # elementwise over m (Add/Max/Min of rows)
                    ok = _elems_defined(state, src, total)
                    if ok is not True:
                        ok = ok.reshape(rows, m, ls).all(axis=1).reshape(-1)
                    _set_defined(state, dst, rows * ls, ok)
                tile = src[:total].reshape(rows, m, ls)
                dst[:rows * ls] = _reduce(kind, tile, 1, dst.dtype).reshape(-1)
        return ()

    @impl(VBroadcastOp)
    def run_vbroadcast(self, interpreter: Interpreter, op: VBroadcastOp,
                       args: PythonValues) -> PythonValues:
        """Expand ``src`` (size-1 dims where ``src_rows``/``src_m``/``src_l`` are false; a
        missing trailing dim is 16 elements with the value at index 0) to ``[rows, m, ls]``."""
        dst, src, rows, m, ls = args
        rows, m, ls = _i(rows), _i(m), _i(ls)
        state = block_state(interpreter)
        if state.shadow is not None:
            self._broadcast_defined(op, state, dst, src, rows, m, ls)
        if _is_mask(dst):
            bits = _bits(dst)
            self._broadcast(op, bits, _bits(src), rows, m, ls)
            _store_bits(dst, bits)
            return ()
        self._broadcast(op, dst, src, rows, m, ls)
        return ()

    @staticmethod
    def _broadcast_defined(op: VBroadcastOp, state: BlockState, dst: np.ndarray,
                           src: np.ndarray, rows: int, m: int, ls: int) -> None:
        """Memory check of a broadcast: with ``src_l`` rows are copied (definedness too);
        without, the value at index 0 of each 16-slot is read as a scalar (``GetValue``) and
        must be defined."""
        has_r, has_m, has_l = op.src_has
        shape = (rows if has_r else 1, m if has_m else 1, ls if has_l else REDUCE_LAST_STRIDE)
        n_src, total = shape[0] * shape[1] * shape[2], rows * m * ls
        size = lambda b: b.size * 8 if _is_mask(b) else b.size  # noqa: E731
        if total == 0 or total > size(dst) or n_src > size(src):
            return  # nothing to do, or _broadcast reports the bad size
        s_ok = _elems_defined(state, src, n_src)
        if s_ok is True:
            _set_defined(state, dst, total, True)
            return
        s_ok = s_ok.reshape(shape)
        if has_l:
            d_ok = np.empty((rows, m, ls), np.bool_)
            d_ok[...] = s_ok
            _set_defined(state, dst, total, d_ok.reshape(-1))
            return
        first = s_ok[:, :, 0].reshape(-1)
        if not first.all():
            i = int(np.argmin(first))
            raise _uninit(op, f"scalar {i} of the broadcast source (index 0 of its 16-slot)",
                          i * REDUCE_LAST_STRIDE)
        _set_defined(state, dst, total, True)

    @staticmethod
    def _broadcast(op: VBroadcastOp, dst: np.ndarray, src: np.ndarray, rows: int, m: int,
                   ls: int) -> None:
        has_r, has_m, has_l = op.src_has
        total = rows * m * ls
        if total > dst.size:
            raise _mem_fail(op, f"destination tile {rows} x {m} x {ls} = {total} elements "
                                f"exceeds its buffer of {dst.size}")
        shape = (rows if has_r else 1, m if has_m else 1, ls if has_l else REDUCE_LAST_STRIDE)
        n_src = shape[0] * shape[1] * shape[2]
        if n_src > src.size:
            raise _mem_fail(op, f"source tile {shape[0]} x {shape[1]} x {shape[2]} = {n_src} "
                            f"elements exceeds its buffer of {src.size}")
        if total == 0:
            return
        s = src[:n_src].reshape(shape)
        if not has_l:
            s = s[:, :, :1]
        dst[:total].reshape(rows, m, ls)[...] = s
        return

    # ------------------------------------------------------------------ host side

    @impl(MmadOp)
    def run_mmad(self, interpreter: Interpreter, op: MmadOp,
                 args: PythonValues) -> PythonValues:
        """One Cube output block into UB (see ``asc.MmadOp``): ``dst[i*ls + j]`` for
        ``i < m``, ``j < ls`` gets ``sum_p A(i, p) * B(p, j)`` (``j < n``) or 0 (``n <= j``).
        ``m, n, k >= 1``. Operands are converted to f32 (exact for f16) and multiplied with
        ``np.matmul`` in float32 (f32 accumulation; the summation order is unspecified, as on
        the Cube unit).
        Memory check: defines ``dst[0, m*ls)``; GM reads need no definedness."""
        dst, a, b, a_off, b_off, m, n, k, lda, ldb, ls = args
        a_off, b_off, m, n, k = _i(a_off), _i(b_off), _i(m), _i(n), _i(k)
        lda, ldb, ls = _i(lda), _i(ldb), _i(ls)
        if min(m, n, k) < 1 or min(lda, ldb, ls, a_off, b_off) < 0:
            raise _fail(op, f"sizes must be >= 1 (Matmul SetTail) and strides and offsets >= 0 "
                            f"(m={m} n={n} k={k} lda={lda} ldb={ldb} ls={ls} a_offset={a_off} "
                            f"b_offset={b_off})")
        if n > ls:
            raise _fail(op, f"n = {n} exceeds the row length ls = {ls}")
        if m * ls > dst.size:
            raise _mem_fail(op, f"block of {m} x {ls} elements exceeds the destination buffer "
                                f"of {dst.size} elements")
        lhs = _matrix(op, "a", a, a_off, (k, m) if op.trans_a else (m, k), lda)
        rhs = _matrix(op, "b", b, b_off, (n, k) if op.trans_b else (k, n), ldb)
        lhs = lhs.T if op.trans_a else lhs
        rhs = rhs.T if op.trans_b else rhs
        block = np.zeros((m, ls), np.float32)
        block[:, :n] = np.matmul(lhs.astype(np.float32), rhs.astype(np.float32))
        dst[:m * ls] = block.reshape(-1)
        _set_defined(block_state(interpreter), dst, m * ls, True)
        return ()

    @impl(LaunchOp)
    def run_launch(self, interpreter: Interpreter, op: LaunchOp,
                   args: PythonValues) -> PythonValues:
        """Run the kernel on ``block_dim`` blocks, each with a fresh UB; returns the outputs
        (zero-initialised GM tensors of the result types)."""
        callee = interpreter.get_op_for_symbol(op.callee)
        name = op.callee.root_reference.data
        tiling = tiling_values(callee)
        inputs: list[np.ndarray] = []
        for i, (value, operand) in enumerate(zip(args, op.inputs, strict=True)):
            t = operand.type
            assert isinstance(t, TensorType)
            a = np.asarray(value)
            want = np.dtype(np.bool_) if _is_i1(t) else np_dtype(t.element_type)
            if a.dtype != want or a.size != t.element_count():
                raise _fail(op, f"input {i} is {a.dtype}{list(a.shape)}; the launch expects "
                                f"{t}")
            flat_in = a.reshape(-1)
            inputs.append(np.packbits(flat_in, bitorder="little") if _is_i1(t)
                          else np.array(flat_in, copy=True))
        outputs: list[np.ndarray] = []
        for r in op.outputs:
            t = r.type
            assert isinstance(t, TensorType)
            n = t.element_count()
            outputs.append(np.zeros((n + 7) // 8 if _is_i1(t) else n, np_dtype(t.element_type)))
        flat = [*inputs, *outputs]
        entry = callee.regions[0].blocks.first if callee.regions else None
        n_args = len(flat) if entry is None else len(entry.args)
        if n_args != len(flat):
            raise _fail(op, f"kernel @{name} takes {n_args} arguments; the launch passes "
                            f"{len(inputs)} inputs and {len(outputs)} outputs")
        bd = op.block_dim
        num = bd.data if isinstance(bd, IntAttr) else bd.value.data
        ub_bytes = self.ub_bytes if self.ub_bytes is not None else kernel_ub_bytes(callee)
        state = block_state(interpreter)
        for idx in range(num):
            state.reset(idx, num, tiling, ub_bytes)
            interpreter.call_op(name, tuple(flat))
        results = []
        for r, out in zip(op.outputs, outputs, strict=True):
            t = r.type
            assert isinstance(t, TensorType)
            if _is_i1(t):
                out = _bits(out)[:t.element_count()]
            results.append(out.reshape(t.get_shape()))
        return tuple(results)
