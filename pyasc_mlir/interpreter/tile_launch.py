"""Tile-level blocks: ``asc.launch`` (host side), block index/count and tiling fields.

A launch runs its blocks with :func:`~pyasc_mlir.interpreter.tile_grid.run_blocks`: one after
another on this interpreter, or, when the kernel synchronises its cores (``ascendc.sync_all``),
as threads around a cross-core barrier, sharing the GM buffers and the launch's zero-filled GM
workspace (see :mod:`.tile_grid`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, IntAttr, TensorType
from xdsl.interpreter import Interpreter, PythonValues, impl
from xdsl.interpreters.builtin import scalar_attr

from pyasc_mlir.dialects.asc import BlockIdxOp, BlockNumOp, LaunchOp, TilingFieldOp
from pyasc_mlir.interpreter.tile_access import is_i1, mask_bits
from pyasc_mlir.interpreter.tile_grid import run_blocks
from pyasc_mlir.interpreter.tile_state import (
    TILING_ATTR,
    TileFunctionsBase,
    block_state,
    kernel_ub_bytes,
    np_dtype,
    tile_fail,
    tiling_values,
)

__all__ = ["TileLaunchFunctions"]


def _launch_inputs(op: LaunchOp, args: PythonValues) -> list[np.ndarray]:
    """The launch's tensor inputs as flat GM copies (``i1`` packed to bits), checked against
    the operand types."""
    inputs: list[np.ndarray] = []
    for i, (value, operand) in enumerate(zip(args, op.inputs, strict=True)):
        t = operand.type
        assert isinstance(t, TensorType)
        a = np.asarray(value)
        want = np.dtype(np.bool_) if is_i1(t) else np_dtype(t.element_type)
        if a.dtype != want or a.size != t.element_count():
            raise tile_fail(op, f"input {i} is {a.dtype}{list(a.shape)}; the launch expects {t}")
        flat_in = a.reshape(-1)
        inputs.append(
            np.packbits(flat_in, bitorder="little") if is_i1(t) else np.array(flat_in, copy=True)
        )
    return inputs


def _launch_outputs(op: LaunchOp) -> list[np.ndarray]:
    """Zero-initialised flat GM buffers for the launch's results (``i1``: packed bytes)."""
    outputs: list[np.ndarray] = []
    for r in op.outputs:
        t = r.type
        assert isinstance(t, TensorType)
        n = t.element_count()
        outputs.append(np.zeros((n + 7) // 8 if is_i1(t) else n, np_dtype(t.element_type)))
    return outputs


def _launch_results(op: LaunchOp, outputs: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """The GM output buffers reshaped to the result types (``i1``: unpacked to ``bool``)."""
    results = []
    for r, out in zip(op.outputs, outputs, strict=True):
        t = r.type
        assert isinstance(t, TensorType)
        if is_i1(t):
            out = mask_bits(out)[: t.element_count()]
        results.append(out.reshape(t.get_shape()))
    return tuple(results)


class TileLaunchFunctions(TileFunctionsBase):
    """``asc.launch``, ``asc.block_idx``, ``asc.block_num``, ``asc.tiling_field``."""

    @impl(BlockIdxOp)
    def run_block_idx(
        self, interpreter: Interpreter, op: BlockIdxOp, args: PythonValues
    ) -> PythonValues:
        """``GetBlockIdx()``."""
        return (scalar_attr(block_state(interpreter).idx, IndexType(), interpreter.index_bitwidth),)

    @impl(BlockNumOp)
    def run_block_num(
        self, interpreter: Interpreter, op: BlockNumOp, args: PythonValues
    ) -> PythonValues:
        """``GetBlockNum()``."""
        return (scalar_attr(block_state(interpreter).num, IndexType(), interpreter.index_bitwidth),)

    @impl(TilingFieldOp)
    def run_tiling_field(
        self, interpreter: Interpreter, op: TilingFieldOp, args: PythonValues
    ) -> PythonValues:
        """A field of the block's tiling struct."""
        tiling = block_state(interpreter).tiling
        name = op.field.data
        if name not in tiling:
            raise tile_fail(
                op,
                f"no tiling field {name!r}; the kernel's {TILING_ATTR} has "
                f"{sorted(tiling) or 'none'}",
            )
        return (scalar_attr(tiling[name], IndexType(), interpreter.index_bitwidth),)

    @impl(LaunchOp)
    def run_launch(
        self, interpreter: Interpreter, op: LaunchOp, args: PythonValues
    ) -> PythonValues:
        """Run the kernel on ``block_dim`` blocks, each with a fresh UB; returns the outputs
        (zero-initialised GM tensors of the result types)."""
        callee = interpreter.get_op_for_symbol(op.callee)
        assert isinstance(callee, func.FuncOp), callee
        name = op.callee.root_reference.data
        tiling = tiling_values(callee)
        inputs = _launch_inputs(op, args)
        outputs = _launch_outputs(op)
        flat = [*inputs, *outputs]
        entry = callee.regions[0].blocks.first if callee.regions else None
        n_args = len(flat) if entry is None else len(entry.args)
        if n_args != len(flat):
            raise tile_fail(
                op,
                f"kernel @{name} takes {n_args} arguments; the launch passes "
                f"{len(inputs)} inputs and {len(outputs)} outputs",
            )
        bd = op.block_dim
        num = bd.data if isinstance(bd, IntAttr) else bd.value.data
        ub_bytes = self.ub_bytes if self.ub_bytes is not None else kernel_ub_bytes(callee)
        run_blocks(interpreter, callee, flat, num, tiling, ub_bytes)
        return _launch_results(op, outputs)
