"""The blocks of one launch: the GM workspace they share (``ascendc.workspace``), the cross-core
barrier (``ascendc.sync_all``) and :func:`run_blocks`, which ``asc.launch`` (and the dynamic-
shape path of ``CompiledOp``) runs a kernel with.

Model:

* A kernel with neither op runs as always: block after block on the launching interpreter.
* The workspace: one zero-filled ``uint8`` buffer per launch of
  ``cube_tiling.launch_info(kernel)["workspace_bytes"]`` bytes (the Matmul system workspace
  first when the kernel sets one, then the kernel's own ``asc.workspace_bytes``), the same
  buffer for every block of the launch (``BlockState.workspace``); an ``ascendc.workspace``
  op views ``count`` elements at byte ``user_workspace_base + offset`` of it.
* A kernel with an ``ascendc.sync_all`` launched on more than one block runs every block in a
  Python thread of its own, on an interpreter of its own (``core.make_interpreter`` of the same
  module, ``set_block`` with the launch's tiling and UB size; the index bitwidth is copied),
  sharing the GM arrays and the workspace. ``SyncAll()`` waits at the launch's :class:`Grid`:
  barrier ``k`` (a block's k-th ``SyncAll()``) completes when every block arrived at it. The
  interpreters share nothing else: the memory-check switch is process-wide and every block's
  UB, shadow map and ``TPipe`` live in its own ``BlockState``; listeners and implementations
  registered by hand on the launching interpreter are not copied.
* Errors (threads): the first error is the lowest-numbered block's own error (re-raised as it
  was, located as the op raised it, with a note naming the block); blocks woken from a barrier
  because another block failed do not count. A block that returns while others wait at a
  barrier it never reached makes the barrier impossible: the launch raises
  ``"block 2 returned without reaching SyncAll number 1 that blocks 0, 1, 3 wait at"``
  (on the NPU: a hang). When a block has waited :data:`BARRIER_TIMEOUT_S` seconds for blocks
  that neither arrive nor return (an endless loop), the launch fails naming them; blocks still
  running that long after the launch failed or timed out are left behind (daemon threads) and
  named in a note.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation

from pyasc_mlir.cube_tiling import launch_info, user_workspace_base
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.interpreter.ascendc_state import AscendcInterpretationError, api_fail
from pyasc_mlir.interpreter.tile_state import TileFunctionsBase, block_state, set_block

__all__ = [
    "BARRIER_TIMEOUT_S",
    "Grid",
    "GridCut",
    "GridReleased",
    "GridTimeout",
    "LaunchNeeds",
    "launch_needs",
    "run_blocks",
]

BARRIER_TIMEOUT_S = 600.0
"""Seconds a block waits at ``SyncAll()`` for blocks that neither arrive nor return before it
fails (read when a launch starts)."""
_NEEDS_KEY = "asc.launch_needs"
_API = "SyncAll"


class GridReleased(Exception):
    """A block woken from a barrier because another block of the launch failed (not an error
    of its own; :func:`run_blocks` reports the failing block's)."""


class GridTimeout(Exception):
    """A block leaves barrier ``number`` because a block waited at it too long (:func:`run_blocks`
    reports :meth:`Grid.timeout_error`)."""

    def __init__(self, number: int):
        super().__init__(f"SyncAll number {number} timed out")
        self.number = number


class GridCut(Exception):
    """A block waits at barrier ``number``, which can never complete: a block returned before
    reaching it (:func:`run_blocks` reports :meth:`Grid.cut_error`)."""

    def __init__(self, number: int):
        super().__init__(f"SyncAll number {number} can never complete")
        self.number = number


def _blocks(ids: Sequence[int]) -> str:
    """``"block 2"`` or ``"blocks 0, 1, 3"``."""
    return ("block " if len(ids) == 1 else "blocks ") + ", ".join(map(str, ids))


class Grid:
    """The cross-core barrier of the ``num`` concurrently running blocks of one launch.

    Barrier ``k`` is each block's k-th ``SyncAll()``; it completes when all ``num`` blocks
    arrived (a condition that stays true, so a block that returns right after passing it
    cannot break it for the blocks still waking up)."""

    def __init__(self, num: int, timeout: float):
        self.num = num
        self.timeout = timeout
        self._cv = threading.Condition()
        self.passed = [0] * num
        self.arrived: dict[int, list[int]] = {}
        self.ops: dict[int, Operation] = {}
        self.returned: dict[int, int] = {}
        self.failed = False
        self.timed_out: int | None = None

    def _cut(self, number: int) -> bool:
        return any(p < number for p in self.returned.values())

    @property
    def stopped(self) -> bool:
        """A block failed or a barrier timed out: no barrier completes any more."""
        return self.failed or self.timed_out is not None

    def sync(self, op: Operation, idx: int) -> None:
        """Block ``idx`` arrives at its next barrier (``op``); returns when all did.

        Raises:
            GridReleased: another block failed.
            GridCut: a block returned without reaching this barrier.
            GridTimeout: this block (or another) waited :attr:`timeout` seconds.
        """
        with self._cv:
            number = self.passed[idx] + 1
            got = self.arrived.setdefault(number, [])
            got.append(idx)
            self.ops.setdefault(number, op)
            if len(got) == self.num:
                self._cv.notify_all()
            else:
                self._cv.wait_for(
                    lambda: len(got) == self.num or self.stopped or self._cut(number),
                    self.timeout,
                )
                if len(got) < self.num:
                    self._not_passed(op, idx, number, got)
            self.passed[idx] = number

    def _not_passed(self, op: Operation, idx: int, number: int, got: list[int]) -> None:
        """Why block ``idx`` leaves barrier ``number`` unpassed (always raises)."""
        if self.failed:
            raise GridReleased(f"block {idx}: another block failed")
        if self._cut(number):
            raise GridCut(number)
        if self.timed_out is None:
            self.timed_out = number
            self._cv.notify_all()
        raise GridTimeout(self.timed_out)

    def finish(self, idx: int, failed: bool) -> None:
        """Block ``idx`` ended (``failed``: with an error of its own)."""
        with self._cv:
            if failed:
                self.failed = True
            else:
                self.returned[idx] = self.passed[idx]
            self._cv.notify_all()

    def timeout_error(self) -> AscendcInterpretationError:
        """The error of the barrier that timed out (:attr:`timed_out`)."""
        number = self.timed_out
        assert number is not None
        waiting = sorted(self.arrived.get(number, []))
        missing = [b for b in range(self.num) if b not in waiting]
        return api_fail(
            self.ops[number],
            _API,
            f"{_blocks(waiting)} waited {self.timeout:g} s at SyncAll number {number} for "
            f"{_blocks(missing)}, which neither arrived nor returned",
        )

    def cut_error(self, number: int) -> AscendcInterpretationError:
        """The error of barrier ``number``, which blocks that returned never reached."""
        waiting = sorted(self.arrived.get(number, []))
        gone = sorted(b for b, p in self.returned.items() if p < number)
        verb = "waits" if len(waiting) == 1 else "wait"
        return api_fail(
            self.ops[number],
            _API,
            f"{_blocks(gone)} returned without reaching SyncAll number {number} that "
            f"{_blocks(waiting)} {verb} at: the hard SyncAll() waits for all {self.num} blocks "
            "of the launch (on the NPU the launch hangs)",
        )


@dataclass(frozen=True)
class LaunchNeeds:
    """What a kernel's launch must provide: a barrier (``sync``: it has an
    ``ascendc.sync_all``), and a zero-filled GM workspace of ``workspace_bytes`` (0: none)
    whose own part starts at byte ``base``."""

    sync: bool
    workspace_bytes: int
    base: int


def launch_needs(interpreter: Interpreter, kernel: Operation) -> LaunchNeeds:
    """:class:`LaunchNeeds` of ``kernel``, computed once per interpreter."""
    cache = interpreter.get_data(TileFunctionsBase, _NEEDS_KEY, dict)
    needs = cache.get(kernel)
    if needs is None:
        ops = [o for o in kernel.walk() if isinstance(o, ac.SyncAllOp | ac.WorkspaceOp)]
        sync = any(isinstance(o, ac.SyncAllOp) for o in ops)
        nbytes = int(launch_info(kernel)["workspace_bytes"]) if ops else 0
        needs = cache[kernel] = LaunchNeeds(sync, nbytes, user_workspace_base(kernel))
    return needs


def run_blocks(
    interpreter: Interpreter,
    kernel: func.FuncOp,
    args: Sequence[np.ndarray],
    num: int,
    tiling: dict[str, int],
    ub_bytes: int,
) -> None:
    """Run ``kernel`` on blocks ``0 .. num - 1`` over the GM arrays ``args`` (modified in
    place), each block with a fresh UB of ``ub_bytes`` and the ``tiling`` values: in order on
    ``interpreter``, or as threads when the kernel has an ``ascendc.sync_all`` and ``num > 1``
    (module docstring).

    Raises:
        AscendcInterpretationError (and the other interpreter errors): the lowest failing
            block's error; a barrier that blocks returned without reaching.
    """
    needs = launch_needs(interpreter, kernel)
    workspace = np.zeros(needs.workspace_bytes, np.uint8) if needs.workspace_bytes else None
    if needs.sync and num > 1:
        _run_threads(interpreter, kernel, tuple(args), num, (tiling, ub_bytes), workspace)
        return
    name = kernel.sym_name.data
    state = block_state(interpreter)
    try:
        for idx in range(num):
            state.reset(idx, num, tiling, ub_bytes)
            state.workspace, state.workspace_base, state.grid = workspace, needs.base, None
            interpreter.call_op(name, tuple(args))
    finally:
        state.workspace, state.workspace_base = None, 0


def _run_threads(
    interpreter: Interpreter,
    kernel: func.FuncOp,
    args: tuple[np.ndarray, ...],
    num: int,
    block: tuple[dict[str, int], int],
    workspace: np.ndarray | None,
) -> None:
    """Run the ``num`` blocks of ``kernel`` as threads around one :class:`Grid`."""
    from pyasc_mlir.interpreter.core import make_interpreter  # core imports the impls

    module = kernel.get_toplevel_object()
    assert isinstance(module, ModuleOp)
    name = kernel.sym_name.data
    base = launch_needs(interpreter, kernel).base
    grid = Grid(num, BARRIER_TIMEOUT_S)
    errors: dict[int, BaseException] = {}
    cuts: list[int] = []

    def run(idx: int) -> None:
        interp = make_interpreter(module)
        interp.index_bitwidth = interpreter.index_bitwidth
        state = set_block(interp, idx, num, block[0], block[1])
        state.workspace, state.workspace_base, state.grid = workspace, base, grid
        try:
            interp.call_op(name, args)
        except GridReleased:
            return
        except GridCut as cut:
            cuts.append(cut.number)
            return
        except GridTimeout:
            return
        except BaseException as exc:  # noqa: BLE001 - re-raised by the launching thread
            errors[idx] = exc
            grid.finish(idx, True)
        else:
            grid.finish(idx, False)

    threads = [
        threading.Thread(target=run, args=(i,), name=f"pyasc-block-{i}", daemon=True)
        for i in range(num)
    ]
    for t in threads:
        t.start()
    stragglers = _join(threads, grid)
    if errors:
        first = min(errors)
        exc = errors[first]
        exc.add_note(
            f"in block {first} of {num} of the launch of @{name} (its blocks ran as threads: "
            "the kernel calls SyncAll())"
        )
        if stragglers:
            exc.add_note(f"{_blocks(stragglers)} still ran {grid.timeout:g} s after it; left")
        raise exc
    if grid.timed_out is not None:
        exc = grid.timeout_error()
        if stragglers:
            exc.add_note(f"{_blocks(stragglers)} still ran {grid.timeout:g} s later; left")
        raise exc
    if cuts:
        raise grid.cut_error(min(cuts))


def _join(threads: list[threading.Thread], grid: Grid) -> list[int]:
    """Wait for every block's thread; once a block failed or a barrier timed out, give the
    others at most ``grid.timeout`` seconds more. The indices of those still running then."""
    give_up: float | None = None
    pending = list(enumerate(threads))
    while pending:
        pending[0][1].join(0.5 if give_up is None else max(0.0, give_up - time.monotonic()))
        pending = [(i, t) for i, t in pending if t.is_alive()]
        if grid.stopped and give_up is None:
            give_up = time.monotonic() + grid.timeout
        if give_up is not None and time.monotonic() >= give_up:
            break
    return [i for i, _ in pending]
