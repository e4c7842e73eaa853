"""Tile-level row reductions and broadcasts: ``asc.vreduce`` and ``asc.vbroadcast`` on
``[rows, m, ls]`` UB tiles."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, PythonValues, impl

from pyasc_mlir.dialects import opset
from pyasc_mlir.dialects.asc import VBroadcastOp, VReduceOp
from pyasc_mlir.interpreter.tile_access import is_mask, mask_bits, store_bits
from pyasc_mlir.interpreter.tile_memcheck import (
    define,
    defined,
    elems_defined,
    set_defined,
    shadow_of,
    uninit_error,
)
from pyasc_mlir.interpreter.tile_state import (
    REDUCE_LAST_STRIDE,
    BlockState,
    TileFunctionsBase,
    as_int,
    block_state,
    tile_fail,
    tile_mem_fail,
)

__all__ = ["TileReduceFunctions"]


def _reduce(kind: str, x: np.ndarray, axis: int, dtype: np.dtype) -> np.ndarray:
    """``sum`` (in float64, rounded to ``dtype``), ``max`` or ``min`` of ``x`` over ``axis``
    (an empty axis gives -inf / +inf)."""
    if kind == "sum":
        return np.sum(x, axis=axis, dtype=np.float64).astype(dtype)
    if x.shape[axis] == 0:
        fill = -np.inf if kind == "max" else np.inf
        shape = x.shape[:axis] + x.shape[axis + 1 :]
        return np.full(shape, fill, dtype)
    f = opset.REDUCE[kind].numpy  # NaN and +-0: dialects/opset_special.py
    assert f is not None
    return np.asarray(f(x, axis=axis))


def _reduce_last(
    op: VReduceOp,
    state: BlockState,
    dst: np.ndarray,
    src: np.ndarray,
    rows: int,
    m: int,
    length: int,
    ls: int,
) -> None:
    """Axis ``last``: each of the ``rows * m`` rows over its first ``length`` lanes, results
    :data:`REDUCE_LAST_STRIDE` elements apart."""
    total = rows * m * ls
    q = rows * m
    need = (q - 1) * REDUCE_LAST_STRIDE + 1
    if need > dst.size:
        raise tile_mem_fail(
            op, f"{q} results 16 elements apart need {need} elements; destination has {dst.size}"
        )
    s_sh, d_sh = shadow_of(state, src), shadow_of(state, dst)
    if s_sh is not None:  # a reduction reads its valid range: it must be defined
        ok = defined(s_sh[:total]).reshape(q, ls)[:, :length]
        if not ok.all():
            r, j = (int(v) for v in np.argwhere(~ok)[0])
            raise uninit_error(
                op, f"row {r} of {q}, element {j} of the {length} reduced", r * ls + j
            )
    if d_sh is not None:
        define(d_sh[:need:REDUCE_LAST_STRIDE])
    tile = src[:total].reshape(q, ls)[:, :length]
    dst[:need:REDUCE_LAST_STRIDE] = _reduce(op.kind.data, tile, 1, dst.dtype)


def _reduce_mid(
    op: VReduceOp, state: BlockState, dst: np.ndarray, src: np.ndarray, rows: int, m: int, ls: int
) -> None:
    """Axis ``mid``: over ``m``, ``ls`` lanes per row, ``rows * ls`` results."""
    total = rows * m * ls
    if rows * ls > dst.size:
        raise tile_mem_fail(
            op, f"{rows} x {ls} results exceed the destination of {dst.size} elements"
        )
    if state.shadow is not None:  # elementwise over m (Add/Max/Min of rows)
        ok = elems_defined(state, src, total)
        if ok is not True:
            ok = ok.reshape(rows, m, ls).all(axis=1).reshape(-1)
        set_defined(state, dst, rows * ls, ok)
    tile = src[:total].reshape(rows, m, ls)
    res = _reduce(op.kind.data, tile, 1, dst.dtype)
    if op.kind.data == "sum":  # rows added one after another (Add): -0 only if every term is -0
        neg = np.all((tile == 0) & np.signbit(tile), axis=1)
        res = np.where((res == 0) & neg, res.dtype.type(-0.0), res)
    dst[: rows * ls] = res.reshape(-1)


def _source_shape(op: VBroadcastOp, rows: int, m: int, ls: int) -> tuple[int, int, int]:
    """The broadcast source's ``[rows, m, ls]`` shape (1 where ``src_has`` is false; 16 lanes
    for a missing trailing dim)."""
    has_r, has_m, has_l = op.src_has
    return (rows if has_r else 1, m if has_m else 1, ls if has_l else REDUCE_LAST_STRIDE)


def _broadcast_defined(
    op: VBroadcastOp,
    state: BlockState,
    dst: np.ndarray,
    src: np.ndarray,
    rows: int,
    m: int,
    ls: int,
) -> None:
    """Memory check of a broadcast: with ``src_l`` rows are copied (definedness too);
    without, the value at index 0 of each 16-slot is read as a scalar (``GetValue``) and
    must be defined."""
    has_l = op.src_has[2]
    shape = _source_shape(op, rows, m, ls)
    n_src, total = shape[0] * shape[1] * shape[2], rows * m * ls
    size = lambda b: b.size * 8 if is_mask(b) else b.size  # noqa: E731
    if total == 0 or total > size(dst) or n_src > size(src):
        return  # nothing to do, or _broadcast reports the bad size
    s_ok = elems_defined(state, src, n_src)
    if s_ok is True:
        set_defined(state, dst, total, True)
        return
    s_ok = s_ok.reshape(shape)
    if has_l:
        d_ok = np.empty((rows, m, ls), np.bool_)
        d_ok[...] = s_ok
        set_defined(state, dst, total, d_ok.reshape(-1))
        return
    first = s_ok[:, :, 0].reshape(-1)
    if not first.all():
        i = int(np.argmin(first))
        raise uninit_error(
            op,
            f"scalar {i} of the broadcast source (index 0 of its 16-slot)",
            i * REDUCE_LAST_STRIDE,
        )
    set_defined(state, dst, total, True)


def _tile_elements(
    op: VReduceOp | VBroadcastOp, role: str, shape: tuple[int, ...], buf: np.ndarray
) -> int:
    """The elements of a ``[rows, m, ls]`` tile of ``shape``.

    Raises:
        TileMemoryError: they exceed ``buf`` (``role``: ``source`` or ``destination``, named
            in the message)."""
    rows, m, ls = shape
    total = rows * m * ls
    if total > buf.size:
        raise tile_mem_fail(
            op,
            f"{role} tile {rows} x {m} x {ls} = {total} elements exceeds its buffer of {buf.size}",
        )
    return total


def _broadcast(
    op: VBroadcastOp, dst: np.ndarray, src: np.ndarray, rows: int, m: int, ls: int
) -> None:
    """``dst[:rows*m*ls]`` = ``src`` expanded to ``[rows, m, ls]`` (sizes checked)."""
    total = _tile_elements(op, "destination", (rows, m, ls), dst)
    shape = _source_shape(op, rows, m, ls)
    n_src = _tile_elements(op, "source", shape, src)
    if total == 0:
        return
    s = src[:n_src].reshape(shape)
    if not op.src_has[2]:
        s = s[:, :, :1]
    dst[:total].reshape(rows, m, ls)[...] = s


class TileReduceFunctions(TileFunctionsBase):
    """``asc.vreduce`` and ``asc.vbroadcast``."""

    @impl(VReduceOp)
    def run_vreduce(
        self, interpreter: Interpreter, op: VReduceOp, args: PythonValues
    ) -> PythonValues:
        """Row reductions of a ``[rows, m, ls]`` tile (``last``: over the first ``length``
        lanes, results 16 elements apart; ``mid``: over ``m``, ``ls`` lanes per row). Sums
        accumulate in float64; ``work`` is not touched."""
        dst, src, _work, rows, m, length, ls = args
        rows, m, length, ls = as_int(rows), as_int(m), as_int(length), as_int(ls)
        if min(rows, m, length, ls) < 0 or length > ls:
            raise tile_fail(
                op,
                f"bad sizes rows {rows} m {m} len {length} ls {ls} (need non-negative, len <= ls)",
            )
        total = _tile_elements(op, "source", (rows, m, ls), src)
        if total == 0 and (op.axis.data == "mid" or rows * m == 0):
            return ()
        state = block_state(interpreter)
        with np.errstate(all="ignore"):
            if op.axis.data == "last":
                _reduce_last(op, state, dst, src, rows, m, length, ls)
            else:
                _reduce_mid(op, state, dst, src, rows, m, ls)
        return ()

    @impl(VBroadcastOp)
    def run_vbroadcast(
        self, interpreter: Interpreter, op: VBroadcastOp, args: PythonValues
    ) -> PythonValues:
        """Expand ``src`` (size-1 dims where ``src_rows``/``src_m``/``src_l`` are false; a
        missing trailing dim is 16 elements with the value at index 0) to ``[rows, m, ls]``."""
        dst, src, rows, m, ls = args[:5]  # args[5]: the optional work buffer (scratch)
        rows, m, ls = as_int(rows), as_int(m), as_int(ls)
        state = block_state(interpreter)
        if state.shadow is not None:
            _broadcast_defined(op, state, dst, src, rows, m, ls)
        if is_mask(dst):
            bits = mask_bits(dst)
            _broadcast(op, bits, mask_bits(src), rows, m, ls)
            store_bits(dst, bits)
            return ()
        _broadcast(op, dst, src, rows, m, ls)
        return ()
