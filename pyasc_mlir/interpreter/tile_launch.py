"""Tile-level blocks: ``asc.launch`` (host side), block index/count and tiling fields.

A launch runs its blocks one after another on one interpreter, except when the kernel
synchronises its cores (``ascendc.sync_all``): then every block runs in a thread of its own,
on an interpreter of its own (:func:`~pyasc_mlir.interpreter.core.make_interpreter`), sharing
the GM buffers and the launch's zero-filled GM workspace, and ``SyncAll()`` waits on a
:class:`Grid` barrier. A block that fails stops the others at their next barrier; the error
reported is the lowest failing block's. A block that returns while others will wait at a
barrier is an error naming it (on the hardware: a hang).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import IndexType, IntAttr, IntegerAttr, ModuleOp, TensorType
from xdsl.interpreter import Interpreter, PythonValues, impl
from xdsl.interpreters.builtin import scalar_attr
from xdsl.ir import Operation

from pyasc_mlir.dialects.asc import BlockIdxOp, BlockNumOp, LaunchOp, TilingFieldOp
from pyasc_mlir.dialects.attrs import WORKSPACE_BYTES_ATTR
from pyasc_mlir.interpreter.tile_access import is_i1, mask_bits
from pyasc_mlir.interpreter.tile_state import (
    TILING_ATTR,
    TileFunctionsBase,
    block_state,
    kernel_ub_bytes,
    np_dtype,
    set_block,
    tile_fail,
    tiling_values,
)

__all__ = ["Grid", "TileLaunchFunctions"]

BARRIER_TIMEOUT_S = 600.0
"""Seconds a block waits at ``SyncAll()`` before the launch is reported as hung."""


class GridError(Exception):
    """A barrier that cannot complete (another block failed or returned)."""


class Grid:
    """The cross-core barrier of one launch's ``num`` concurrently running blocks."""

    def __init__(self, num: int):
        self.num = num
        self.cv = threading.Condition()
        self.arrived = 0
        self.generation = 0
        self.returned: list[int] = []
        self.failed = False

    def sync(self, idx: int) -> None:
        """Block ``idx`` arrives at the next ``SyncAll()``; returns when all ``num`` did.

        Raises:
            GridError: a block failed or returned before arriving (this barrier cannot
                complete), or the wait timed out."""
        with self.cv:
            self._check(idx)
            gen = self.generation
            self.arrived += 1
            if self.arrived == self.num:
                self.arrived, self.generation = 0, gen + 1
                self.cv.notify_all()
                return
            self.cv.wait_for(
                lambda: self.generation != gen or self.failed or bool(self.returned),
                BARRIER_TIMEOUT_S,
            )
            if self.generation == gen:
                self._check(idx)
                raise GridError(f"block {idx} waited {BARRIER_TIMEOUT_S:.0f} s at SyncAll()")

    def _check(self, idx: int) -> None:
        if self.failed:
            raise GridError(f"block {idx}: another block failed before SyncAll()")
        if self.returned:
            raise GridError(
                f"block {self.returned[0]} returned without reaching the SyncAll() that block "
                f"{idx} waits at: on the NPU the launch hangs (every block must call SyncAll() "
                "the same number of times)"
            )

    def finish(self, idx: int, failed: bool) -> None:
        """Block ``idx`` ended (``failed``: with an error)."""
        with self.cv:
            if failed:
                self.failed = True
            else:
                self.returned.append(idx)
            self.cv.notify_all()


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
        ws_attr = callee.attributes.get(WORKSPACE_BYTES_ATTR)
        ws_bytes = ws_attr.value.data if isinstance(ws_attr, IntegerAttr) else 0
        workspace = np.zeros(ws_bytes, np.uint8)
        if any(o.name == "ascendc.sync_all" for o in callee.walk()) and num > 1:
            _run_concurrently(interpreter, callee, num, (tiling, ub_bytes), flat, workspace)
            return _launch_results(op, outputs)
        state = block_state(interpreter)
        for idx in range(num):
            state.reset(idx, num, tiling, ub_bytes)
            state.workspace, state.grid = workspace, None
            interpreter.call_op(name, tuple(flat))
        return _launch_results(op, outputs)


def _run_concurrently(
    interpreter: Interpreter,
    callee: Operation,
    num: int,
    block: tuple[dict[str, int], int],
    flat: Sequence[np.ndarray],
    workspace: np.ndarray,
) -> None:
    """Run the ``num`` blocks of ``callee`` in threads around one :class:`Grid`."""
    from pyasc_mlir.interpreter.core import make_interpreter

    module = callee.get_toplevel_object()
    assert isinstance(module, ModuleOp)
    name = callee.sym_name.data  # type: ignore[attr-defined]
    grid = Grid(num)
    errors: dict[int, BaseException] = {}

    def run(idx: int) -> None:
        interp = make_interpreter(module)
        interp.index_bitwidth = interpreter.index_bitwidth
        state = set_block(interp, idx, num, block[0], block[1])
        state.workspace, state.grid = workspace, grid
        try:
            interp.call_op(name, tuple(flat))
        except BaseException as exc:  # noqa: BLE001 - re-raised by the launching thread
            errors[idx] = exc
            grid.finish(idx, True)
        else:
            grid.finish(idx, False)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(num)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        real = {i: e for i, e in errors.items() if not isinstance(e, GridError)}
        first = min(real or errors)
        raise (real or errors)[first]
