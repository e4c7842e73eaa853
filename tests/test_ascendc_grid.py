"""Multi-core ``ascendc`` kernels: the GM workspace (``ascendc.workspace``), the cross-core
barrier (``ascendc.sync_all``) and ``scf.if``, on the interpreter (``asc.launch`` runs the
blocks of a kernel with a ``SyncAll()`` as threads) and on the CPU build of the emitted C++.

The kernel of most tests (:func:`partials_module`), on blockDim 4: block ``b`` writes
``(b + 1) * 1.5`` into the 8 f32 of workspace slot ``b`` (elements ``8b .. 8b+7``),
``SyncAll()``, then every block adds the four slots in order and block 0 (an ``scf.if`` on
``GetBlockIdx() == 0``) writes the sum, exactly 15.0, to its output.
"""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest
from helpers import dialect_context, parse
from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith, func, scf
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import (
    Builtin,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
    f32,
)
from xdsl.dialects.func import Func
from xdsl.dialects.memref import MemRef
from xdsl.dialects.scf import Scf
from xdsl.ir import Block, SSAValue
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.cost_model import estimate_kernel, walk_kernel
from pyasc_mlir.cost_walker import SYNC_ALL_CYCLES
from pyasc_mlir.cube_tiling import launch_info
from pyasc_mlir.dialects import asc
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects.asc import Asc
from pyasc_mlir.dialects.ascendc import Ascendc
from pyasc_mlir.dialects.attrs import (
    WORKSPACE_BYTES_ATTR,
    mark_kernel,
    set_kernel_tiling,
    set_kernel_workspace_bytes,
)
from pyasc_mlir.emit_host import emit_cpu_entry
from pyasc_mlir.emitter import emit_kernel_source
from pyasc_mlir.interpreter import tile_grid
from pyasc_mlir.interpreter.ascendc_impls import AscendcInterpretationError, AscendcMemoryError
from pyasc_mlir.interpreter.core import make_interpreter
from pyasc_mlir.interpreter.tile_impls import set_block
from pyasc_mlir.platform import LIB_API_WORKSPACE_BYTES, get_platform
from pyasc_mlir.runtime.cpu import CpuKernel, build_library

PLATFORM = get_platform("910B2")
BLOCKS = 4
SLOT = 8  # f32 elements per workspace slot: one 32-byte DataBlock
OUT = 8
CTX = dialect_context(Builtin, Func, Arith, Scf, MemRef, Asc, Ascendc)


class _Kernel:
    """Builds the body of an ascendc kernel ``@k(%out: memref<8xf32>)``."""

    def __init__(self, workspace_bytes: int | None):
        self.func = func.FuncOp("k", ((MemRefType(f32, [OUT]),), ()))
        mark_kernel(self.func)
        set_kernel_tiling(self.func, {"block_dim": BLOCKS})
        if workspace_bytes is not None:
            set_kernel_workspace_bytes(self.func, workspace_bytes)
        self.b = Builder(InsertPoint.at_end(self.func.body.block))

    def index(self, v: int) -> SSAValue:
        return self.b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result

    def nested(self, block: Block) -> Builder:
        return Builder(InsertPoint.at_end(block))


def partials_kernel(
    workspace_bytes: int | None = BLOCKS * SLOT * 4,
    sync: bool = True,
    bad_block: int | None = None,
    skip_sync_block: int | None = None,
    slow_block: int | None = None,
) -> func.FuncOp:
    """The kernel of the module docstring. ``bad_block``: that block alone reads its slot view
    past the end of the workspace region (before the barrier); ``skip_sync_block``: that block
    does not call ``SyncAll()``; ``slow_block``: that block runs its loop 20000 times before
    the barrier; ``sync=False``: no barrier at all."""
    k = _Kernel(workspace_bytes)
    b = k.b
    (out,) = k.func.body.block.args
    c0, c1, c8, c16, c24, c32 = (k.index(v) for v in (0, 1, 8, 16, 24, 32))
    half = b.insert(arith.ConstantOp(FloatAttr(1.5, f32))).result
    ws = b.insert(ac.WorkspaceOp(0, BLOCKS * SLOT, f32)).result
    go = b.insert(ac.GlobalBufferOp(out)).result
    buf = b.insert(ac.InitTBufOp(256, "VECIN")).result
    part = b.insert(ac.TBufGetOp(buf, 0, f32)).result  # 8 floats
    slots = b.insert(ac.TBufGetOp(buf, SLOT, f32)).result  # 32 floats
    total = b.insert(ac.TBufGetOp(buf, SLOT + BLOCKS * SLOT, f32)).result  # 8 floats
    idx = b.insert(ac.GetBlockIdxOp()).result
    b.insert(ac.DuplicateOp(part, half, c8))
    trips = idx
    if slow_block is not None:
        is_slow = b.insert(arith.CmpiOp(idx, k.index(slow_block), "eq")).result
        trips = b.insert(arith.SelectOp(is_slow, k.index(20000), idx)).result
    loop = b.insert(scf.ForOp(c0, trips, c1, [], Block(arg_types=[IndexType()])))
    inner = k.nested(loop.body.block)
    inner.insert(ac.VecScalarOp("Adds", part, part, 1.5, c8))
    inner.insert(scf.YieldOp())
    b.insert(ac.SyncOp("V_MTE3"))
    off = b.insert(arith.MuliOp(idx, c8)).result
    if bad_block is not None:  # block bad_block views its slot 40 elements later
        is_bad = b.insert(arith.CmpiOp(idx, k.index(bad_block), "eq")).result
        extra = b.insert(arith.SelectOp(is_bad, k.index(40), c0)).result
        off = b.insert(arith.AddiOp(off, extra)).result
    slot = b.insert(ac.SubviewOp(ws, off)).result
    b.insert(ac.DataCopyOp(slot, part, c8))
    if skip_sync_block is not None:
        calls = b.insert(arith.CmpiOp(idx, k.index(skip_sync_block), "ne")).result
        guard = b.insert(scf.IfOp(calls, [], [Block()]))
        then = k.nested(guard.true_region.block)
        then.insert(ac.SyncAllOp())
        then.insert(scf.YieldOp())
    elif sync:
        b.insert(ac.SyncAllOp())
    b.insert(ac.DataCopyOp(slots, ws, c32))
    b.insert(ac.SyncOp("MTE2_V"))
    s0, s1, s2, s3 = (b.insert(ac.SubviewOp(slots, c)).result for c in (c0, c8, c16, c24))
    b.insert(ac.VecBinaryOp("Add", total, s0, s1, c8))
    b.insert(ac.VecBinaryOp("Add", total, total, s2, c8))
    b.insert(ac.VecBinaryOp("Add", total, total, s3, c8))
    first = b.insert(arith.CmpiOp(idx, c0, "eq")).result
    write = b.insert(scf.IfOp(first, [], [Block()]))
    then = k.nested(write.true_region.block)
    then.insert(ac.SyncOp("V_MTE3"))
    then.insert(ac.DataCopyOp(go, total, c8))
    then.insert(scf.YieldOp())
    b.insert(func.ReturnOp())
    return k.func


def with_launch(kernel: func.FuncOp) -> ModuleOp:
    """A module with ``kernel`` and ``@main() -> tensor<8xf32>`` launching it on 4 blocks."""
    out_t = TensorType(f32, [OUT])
    main = func.FuncOp("main", ((), (out_t,)))
    b = Builder(InsertPoint.at_end(main.body.block))
    launch = b.insert(asc.LaunchOp("k", BLOCKS, [], [out_t]))
    b.insert(func.ReturnOp(launch.outputs[0]))
    module = ModuleOp([main, kernel])
    module.verify()
    return module


def interpret(module: ModuleOp) -> np.ndarray:
    (out,) = make_interpreter(module).call_op("main", ())
    return np.asarray(out)


def cpu_run(module: ModuleOp) -> np.ndarray:
    """The emitted kernel's CPU build on 4 blocks, with the workspace ``launch_info`` says."""
    sources = {"kernel.cpp": emit_kernel_source(module), "cpu_entry.cpp": emit_cpu_entry(module)}
    kernel = next(o for o in module.ops if isinstance(o, func.FuncOp) and o.sym_name.data == "k")
    out = np.zeros(OUT, np.float32)
    CpuKernel(build_library(sources, PLATFORM)).run(
        BLOCKS, [out], struct.pack("<q", BLOCKS), launch_info(kernel)["workspace_bytes"]
    )
    return out


# --------------------------------------------------------------------------- results


def test_partials_through_the_workspace_on_the_interpreter():
    out = interpret(with_launch(partials_kernel()))
    np.testing.assert_array_equal(out, np.full(OUT, 15.0, np.float32))


def test_partials_through_the_workspace_on_the_cpu_build():
    out = cpu_run(with_launch(partials_kernel()))
    np.testing.assert_array_equal(out, np.full(OUT, 15.0, np.float32))


def test_workspace_without_sync_all_runs_block_after_block():
    """No barrier: the blocks run in order on one interpreter and share the zeroed workspace,
    so block 0 (which runs first) sees only its own partial."""
    out = interpret(with_launch(partials_kernel(sync=False)))
    np.testing.assert_array_equal(out, np.full(OUT, 1.5, np.float32))


def test_launch_info_adds_the_kernel_workspace_after_the_matmul_one():
    kernel = partials_kernel()
    assert launch_info(kernel)["workspace_bytes"] == BLOCKS * SLOT * 4
    kernel.body.block.insert_op_before(ac.SetSysWorkspaceOp(), kernel.body.block.first_op)
    assert launch_info(kernel)["workspace_bytes"] == LIB_API_WORKSPACE_BYTES + BLOCKS * SLOT * 4
    src = emit_kernel_source(with_launch(kernel))
    assert f"(workspace + {LIB_API_WORKSPACE_BYTES})" in src  # the kernel's own part comes after


def test_emitted_source_has_the_workspace_barrier_and_if():
    src = emit_kernel_source(with_launch(partials_kernel()))
    assert re.search(
        r"GlobalTensor<float> (ws\d+);\n\s+\1\.SetGlobalBuffer\(\(__gm__ float\*\)"
        r"\(workspace \+ 0\), 32LL\);",
        src,
    ), src
    assert "SyncAll();" in src
    assert re.search(r"if \(v\d+\) \{", src)


# --------------------------------------------------------------------------- verifier


def test_sync_all_needs_a_kernel_workspace():
    with pytest.raises(VerifyException, match=r"ascendc\.sync_all: .*@k.*asc\.workspace_bytes"):
        with_launch(partials_kernel(workspace_bytes=None))
    zero = (
        "func.func @k() attributes {asc.kernel, asc.workspace_bytes = 0 : i64} {\n"
        "  ascendc.sync_all\n  func.return\n}"
    )
    with pytest.raises(VerifyException, match=r"@k's asc\.workspace_bytes is 0"):
        parse(zero, CTX)


def test_workspace_region_must_fit_the_kernel_attribute():
    with pytest.raises(VerifyException, match=r"ascendc\.workspace: .*128.*64"):
        with_launch(partials_kernel(workspace_bytes=64))


@pytest.mark.parametrize(
    "text,message",
    [
        ("ascendc.workspace [16, 8] : !ascendc.global_tensor<f32>", "multiple of 32"),
        ("ascendc.workspace [0, 0] : !ascendc.global_tensor<f32>", "count"),
        ("ascendc.workspace [0, 8] : !ascendc.global_tensor<i1>", "element type"),
    ],
)
def test_workspace_op_checks(text, message):
    src = (
        "func.func @k() attributes {asc.kernel, asc.workspace_bytes = 1024 : i64} {\n"
        f"  %w = {text}\n  func.return\n}}"
    )
    with pytest.raises(VerifyException, match=message):
        parse(src, CTX)


def test_workspace_and_sync_all_round_trip():
    src = (
        "func.func @k() attributes {asc.kernel, asc.workspace_bytes = 64 : i64} {\n"
        "  %w = ascendc.workspace [32, 8] : !ascendc.global_tensor<i32>\n"
        "  ascendc.sync_all\n  func.return\n}"
    )
    module = parse(src, CTX)
    text = str(module)
    assert re.search(r"ascendc\.workspace ?\[32, 8\] : !ascendc\.global_tensor<i32>", text)
    assert str(parse(text, CTX)) == text
    assert "ascendc.sync_all" in text
    assert WORKSPACE_BYTES_ATTR in text


# --------------------------------------------------------------------------- errors


def test_error_in_one_block_is_reported_without_hanging():
    """Block 2 alone reads past the workspace region before the barrier the others wait at:
    the launch ends with block 2's own (located, memory) error."""
    with pytest.raises(AscendcMemoryError, match=r"GlobalTensor::operator\[\]") as info:
        interpret(with_launch(partials_kernel(bad_block=2)))
    notes = " ".join(getattr(info.value, "__notes__", []))
    assert "block 2 of 4" in str(info.value) + notes


def test_the_lowest_failing_block_is_reported():
    module = with_launch(partials_kernel(bad_block=1))
    for _ in range(3):  # deterministic whatever the thread schedule
        with pytest.raises(AscendcMemoryError) as info:
            interpret(module)
        assert "block 1 of 4" in " ".join(getattr(info.value, "__notes__", []))


def test_block_returning_without_the_barrier_is_named():
    with pytest.raises(
        AscendcInterpretationError,
        match=r"block 2 returned without reaching SyncAll number 1 that blocks 0, 1, 3 wait at",
    ):
        interpret(with_launch(partials_kernel(skip_sync_block=2)))


def test_a_block_that_never_arrives_times_out(monkeypatch):
    """Block 2 is still busy when another block has waited BARRIER_TIMEOUT_S: the launch fails
    naming block 2, and does not wait for block 2 to finish."""
    monkeypatch.setattr(tile_grid, "BARRIER_TIMEOUT_S", 0.3)
    with pytest.raises(
        AscendcInterpretationError,
        match=r"blocks 0, 1, 3 waited 0\.3 s at SyncAll number 1 for block 2, which neither "
        r"arrived nor returned",
    ) as info:
        interpret(with_launch(partials_kernel(slow_block=2)))
    assert "block 2 still ran" in " ".join(info.value.__notes__)


def test_sync_all_run_by_hand_on_one_block_of_several_is_refused():
    module = with_launch(partials_kernel())
    it = make_interpreter(module)
    set_block(it, 0, BLOCKS, {"block_dim": BLOCKS}).workspace = np.zeros(128, np.uint8)
    with pytest.raises(AscendcInterpretationError, match=r"SyncAll.*block 0 of 4 runs alone"):
        it.call_op("k", (np.zeros(OUT, np.float32),))


# --------------------------------------------------------------------------- cost


def test_sync_all_costs_its_constant_on_the_scalar_pipe():
    with_sync = estimate_kernel(partials_kernel(), PLATFORM)
    without = estimate_kernel(partials_kernel(sync=False), PLATFORM)
    extra_us = with_sync.pipe_us["S"] - without.pipe_us["S"]
    assert extra_us == pytest.approx(SYNC_ALL_CYCLES / PLATFORM.clock_mhz)


def test_scf_if_costs_the_branch_each_core_takes():
    """Block 0 alone takes the branch with the copy out: its MTE3 bytes include the 8 floats
    of the output, the other blocks' do not."""
    walk = walk_kernel(partials_kernel(), PLATFORM)
    mte3 = {c: w.pre.mte3_bytes for w in walk.works for c in w.cores}
    assert mte3[0] == mte3[1] + OUT * 4
