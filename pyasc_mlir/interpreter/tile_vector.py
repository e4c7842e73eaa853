"""Tile-level elementwise ops on UB buffers: ``asc.vunary vbinary vscalar vdup vcopy vcast
vcompare vselect`` (``dst[:n] = f(src[:n], ...)``; masks are packed bits, see
:mod:`.tile_access`). The per-kind semantics come from the op table
(``pyasc_mlir.dialects.opset``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, PythonValues, impl
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from pyasc_mlir.dialects import opset
from pyasc_mlir.dialects.asc import (
    VBinaryOp,
    VCastOp,
    VCompareOp,
    VCopyOp,
    VDupOp,
    VIndexOp,
    VScalarOp,
    VSelectOp,
    VUnaryOp,
)
from pyasc_mlir.interpreter.tile_access import (
    check_count,
    check_mask,
    is_mask,
    mask_bits,
    store_bits,
)
from pyasc_mlir.interpreter.tile_cast import convert
from pyasc_mlir.interpreter.tile_memcheck import elems_defined, propagate, set_defined
from pyasc_mlir.interpreter.tile_state import TileFunctionsBase, as_int, block_state, tile_fail

__all__ = ["BINARY", "COMPARE", "SCALAR", "UNARY", "TileVectorFunctions"]


def _semantics(records: dict[str, opset.OpRecord]) -> dict[str, Callable[..., Any]]:
    """Kind -> ``record.tile_impl()`` for records that all have one (binary, scalar and
    compare records always have ``numpy``); ``TypeError`` (at import) names one without."""
    table: dict[str, Callable[..., Any]] = {}
    for kind, record in records.items():
        f = record.tile_impl()
        if f is None:
            raise TypeError(f"op table: {record.category} {kind!r} has no tile-level semantics")
        table[kind] = f
    return table


UNARY: dict[str, Callable[..., Any]] = {
    k: f for k, r in opset.UNARY.items() if (f := r.tile_impl()) is not None
}
"""Kind -> ``f(src, out=dst)`` in the buffer dtype (the op table's tile-level semantics)."""
BINARY = _semantics(opset.BINARY)
"""Kind -> ``f(lhs, rhs, out=dst)`` in the buffer dtype."""
SCALAR = _semantics(opset.SCALAR)
"""Kind -> ``f(src, scalar, out=dst)`` in the buffer dtype."""
COMPARE = _semantics(opset.COMPARE)
"""Predicate -> ``f(lhs, rhs)`` giving ``bool`` lanes."""


def _elementwise(
    interpreter: Interpreter, op: Operation, n: int, dst: np.ndarray, **srcs: np.ndarray
) -> None:
    """Raise unless ``0 <= n <=`` the size of ``dst`` and of every source (keyword: its name in
    the message); under memory check, ``dst[:n]`` becomes defined where every source is."""
    check_count(op, n, dst=dst, **srcs)
    propagate(block_state(interpreter), dst, n, *srcs.values())


class TileVectorFunctions(TileFunctionsBase):
    """The elementwise UB -> UB ops of the tile level."""

    @impl(VUnaryOp)
    def run_vunary(
        self, interpreter: Interpreter, op: VUnaryOp, args: PythonValues
    ) -> PythonValues:
        """``dst[:n] = kind(src[:n])``."""
        dst, src, n = args
        n = as_int(n)
        _elementwise(interpreter, op, n, dst, src=src)
        with np.errstate(all="ignore"):
            UNARY[op.kind.data](src[:n], out=dst[:n])
        return ()

    @impl(VBinaryOp)
    def run_vbinary(
        self, interpreter: Interpreter, op: VBinaryOp, args: PythonValues
    ) -> PythonValues:
        """``dst[:n] = lhs[:n] kind rhs[:n]``."""
        dst, lhs, rhs, n = args
        n = as_int(n)
        _elementwise(interpreter, op, n, dst, lhs=lhs, rhs=rhs)
        with np.errstate(all="ignore"):
            BINARY[op.kind.data](lhs[:n], rhs[:n], out=dst[:n])
        return ()

    @impl(VScalarOp)
    def run_vscalar(
        self, interpreter: Interpreter, op: VScalarOp, args: PythonValues
    ) -> PythonValues:
        """``dst[:n] = src[:n] (+ * max min) scalar`` with the scalar in the buffer dtype."""
        dst, src, n = args
        n = as_int(n)
        _elementwise(interpreter, op, n, dst, src=src)
        with np.errstate(all="ignore"):
            scalar = src.dtype.type(op.scalar.value.data)
            SCALAR[op.kind.data](src[:n], scalar, out=dst[:n])
        return ()

    @impl(VDupOp)
    def run_vdup(self, interpreter: Interpreter, op: VDupOp, args: PythonValues) -> PythonValues:
        """``dst[:n] = value``."""
        dst, n = args
        n = as_int(n)
        if is_mask(dst):
            check_mask(op, n, dst)
            bits = mask_bits(dst)
            bits[:n] = op.value.value.data != 0
            store_bits(dst, bits)
            set_defined(block_state(interpreter), dst, n, True)
            return ()
        check_count(op, n, dst=dst)
        set_defined(block_state(interpreter), dst, n, True)
        with np.errstate(all="ignore"):
            dst[:n] = op.value.value.data
        return ()

    @impl(VIndexOp)
    def run_vindex(
        self, interpreter: Interpreter, op: VIndexOp, args: PythonValues
    ) -> PythonValues:
        """``dst[:n] = first + arange(n)`` (in the buffer's dtype)."""
        dst, n = args
        n = as_int(n)
        check_count(op, n, dst=dst)
        set_defined(block_state(interpreter), dst, n, True)
        dst[:n] = op.first.value.data + np.arange(n, dtype=np.float64)
        return ()

    @impl(VCopyOp)
    def run_vcopy(self, interpreter: Interpreter, op: VCopyOp, args: PythonValues) -> PythonValues:
        """``dst[:n] = src[:n]`` (UB -> UB)."""
        dst, src, n = args
        n = as_int(n)
        if is_mask(dst):
            check_mask(op, n, dst)
            check_mask(op, n, src)
            propagate(block_state(interpreter), dst, n, src)
            bits = mask_bits(dst)
            bits[:n] = mask_bits(src)[:n]
            store_bits(dst, bits)
            return ()
        _elementwise(interpreter, op, n, dst, src=src)
        dst[:n] = src[:n]
        return ()

    @impl(VCastOp)
    def run_vcast(self, interpreter: Interpreter, op: VCastOp, args: PythonValues) -> PythonValues:
        """``dst[:n] = convert(src[:n])`` with the op's round mode."""
        dst, src, n = args
        n = as_int(n)
        if is_mask(src) or is_mask(dst):
            check_mask(op, n, src) if is_mask(src) else check_count(op, n, src=src)
            check_mask(op, n, dst) if is_mask(dst) else check_count(op, n, dst=dst)
            propagate(block_state(interpreter), dst, n, src)
            values = mask_bits(src)[:n] if is_mask(src) else src[:n]
            if is_mask(dst):
                bits = mask_bits(dst)
                bits[:n] = values != 0
                store_bits(dst, bits)
            else:
                dst[:n] = values  # a mask becomes 1.0 / 0.0
            return ()
        _elementwise(interpreter, op, n, dst, src=src)
        try:
            dst[:n] = convert(src[:n], dst.dtype, op.round.data)
        except InterpretationError as exc:
            raise tile_fail(op, str(exc)) from None
        return ()

    @impl(VCompareOp)
    def run_vcompare(
        self, interpreter: Interpreter, op: VCompareOp, args: PythonValues
    ) -> PythonValues:
        """Mask bits ``[0, n)`` = ``lhs[:n] predicate rhs[:n]``; later bits are kept."""
        mask, lhs, rhs, n = args
        n = as_int(n)
        check_count(op, n, lhs=lhs, rhs=rhs)
        check_mask(op, n, mask)
        propagate(block_state(interpreter), mask, n, lhs, rhs)
        packed = np.packbits(COMPARE[op.predicate.data](lhs[:n], rhs[:n]), bitorder="little")
        full, rest = divmod(n, 8)
        mask[:full] = packed[:full]
        if rest:
            keep = np.uint8((0xFF << rest) & 0xFF)
            mask[full] = (mask[full] & keep) | packed[full]
        return ()

    @impl(VSelectOp)
    def run_vselect(
        self, interpreter: Interpreter, op: VSelectOp, args: PythonValues
    ) -> PythonValues:
        """``dst[:n] = where(mask bits, lhs[:n], rhs[:n])``."""
        dst, mask, lhs, rhs, n = args
        n = as_int(n)
        check_count(op, n, dst=dst, lhs=lhs, rhs=rhs)
        check_mask(op, n, mask)
        bits = np.unpackbits(mask[: (n + 7) // 8], count=n, bitorder="little").view(np.bool_)
        state = block_state(interpreter)
        if state.shadow is not None:  # defined iff the mask bit and the selected lane are
            chosen = np.where(bits, elems_defined(state, lhs, n), elems_defined(state, rhs, n))
            set_defined(state, dst, n, elems_defined(state, mask, n) & chosen)
        dst[:n] = np.where(bits, lhs[:n], rhs[:n])
        return ()
