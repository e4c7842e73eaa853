"""Conformance of the CPU runtime's cross-core SyncAll with the documented semantics.

``tests/conformance/sync_all.cpp`` (written from the SyncAll page of the Ascend C API reference)
has block ``b`` write its values to GM, synchronise, then read block ``(b + 1) % n``'s: correct
only when every block's write happens before any block's read, which the launch scheduler of
``pyasc_cpu/grid.h`` gives (blocks switch at the barrier). The same kernel without the barrier,
or run block after block, reads values not written yet: the tests show both. Barriers that can
never complete, mismatched counts, dirty or short workspaces are errors, never hangs.
Semantics and sources: docs/CPU_RUNTIME.md, "Cross-core synchronisation".
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from cpu_run_helpers import shared_pch_cache

from pyasc_mlir.platform import get_platform
from pyasc_mlir.runtime.cpu import CpuKernel, KernelError, build_library

PLATFORM = get_platform("910B2")
HERE = Path(__file__).resolve().parent / "conformance"
ENTRY_CPP = """#include "kernel_operator.h"
extern "C" void rotate_kernel(GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR);
PYASC_CPU_ENTRY_NAMED(rotate_kernel)
PYASC_CPU_LAST_ERROR()
"""
VALS = 8  # floats per block (one DataBlock)


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    cache = shared_pch_cache(tmp_path_factory.mktemp("pyasc_cache"))
    sources = {"sync_all.cpp": (HERE / "sync_all.cpp").read_text(), "zz_entry.cpp": ENTRY_CPP}
    return {
        mc: build_library(sources, PLATFORM, cache_dir=cache, memcheck=mc) for mc in (False, True)
    }


def run(libs, blocks, mode, used=0, rounds=1, memcheck=False, grid=True, ws=None, workspace=64):
    """Run rotate_kernel on ``blocks`` blocks; returns (x, y, ws) after the launch."""
    k = CpuKernel(libs[memcheck], entry="pyasc_run_block_rotate_kernel")
    if not grid:
        k._run_grid = None  # the old model: block after block through pyasc_run_block
    n = blocks * (2 if mode == 6 else 1)
    x = np.zeros(n * VALS, np.float32)
    y = np.zeros(n * VALS, np.float32)
    ws = np.zeros(n * VALS, np.int32) if ws is None else ws
    k.run(blocks, [x, y, ws], struct.pack("<3q", mode, used, rounds), workspace)
    return x, y, ws


def written(n):
    """What block b writes: (b + 1) * 10 + k, k < 8."""
    return np.array([(b + 1) * 10 + k for b in range(n) for k in range(VALS)], np.float32)


def rotated(n, by):
    return np.roll(written(n).reshape(n, VALS), -by, axis=0).ravel()


@pytest.mark.parametrize("memcheck", [False, True])
@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("blocks", [1, 2, 7, 40])
def test_syncall_orders_writes_before_reads(libs, blocks, mode, memcheck):
    _, y, ws = run(libs, blocks, mode, memcheck=memcheck)
    np.testing.assert_array_equal(y, rotated(blocks, 1))
    if mode == 0:  # each block's flag holds the barriers it passed
        np.testing.assert_array_equal(ws[::VALS], np.ones(blocks, np.int32))


def test_without_the_barrier_the_result_is_wrong(libs):
    """The test can fail: without SyncAll (or block after block) block b reads block b + 1's
    values before they are written (zeros); only the barrier makes the result right."""
    _, y, _ = run(libs, 4, mode=2)
    assert not np.array_equal(y, rotated(4, 1))
    np.testing.assert_array_equal(y[: 3 * VALS], 0.0)  # blocks 0..2 read unwritten GM
    with pytest.raises(KernelError, match=r"block 0 runs alone \(pyasc_run_block\)"):
        run(libs, 4, mode=0, grid=False)
    _, y, _ = run(libs, 1, mode=0, grid=False)  # a barrier of one block needs no scheduler
    np.testing.assert_array_equal(y, rotated(1, 1))


@pytest.mark.parametrize("rounds", [2, 3])
def test_repeated_barriers(libs, rounds):
    x, y, ws = run(libs, 5, mode=0, rounds=rounds, memcheck=True)
    np.testing.assert_array_equal(y if rounds % 2 else x, rotated(5, rounds))
    np.testing.assert_array_equal(ws[::VALS], np.full(5, 2 * rounds, np.int32))


def test_used_cores_subset_and_mix(libs):
    # usedCores = n: as all; MIX 1:2: the hard sync spans the 2 * blockDim vector blocks
    _, y, _ = run(libs, 3, mode=0, used=3)
    np.testing.assert_array_equal(y, rotated(3, 1))
    _, y, _ = run(libs, 3, mode=6, memcheck=True)
    np.testing.assert_array_equal(y, rotated(6, 1))
    with pytest.raises(KernelError, match=r"block 2 is not one of the 2 blocks"):
        run(libs, 3, mode=0, used=2)
    with pytest.raises(KernelError, match=r"usedCores 5 exceeds the 3 vector blocks"):
        run(libs, 3, mode=0, used=5)


def test_barriers_that_never_complete_are_errors(libs):
    never = r"never complete.*4 blocks.*3 arrived \(blocks 0, 1, 2\).*blocks 3 returned"
    with pytest.raises(KernelError, match=never) as e:
        run(libs, 4, mode=3)
    assert e.value.block_idx == 0
    never = r"never complete.*1 arrived \(blocks 0\); blocks 1, 2 returned"
    with pytest.raises(KernelError, match=never):
        run(libs, 3, mode=4)
    mismatch = r"block 1 arrives at a barrier of 3 blocks.*blocks 0 wait at one of 2"
    with pytest.raises(KernelError, match=mismatch):
        run(libs, 3, mode=5)


def test_workspace_rules(libs):
    dirty = np.zeros(4 * VALS, np.int32)
    dirty[2 * VALS] = 7
    with pytest.raises(KernelError, match=r"block 2's flag in gmWorkspace.*holds 7, expected 0"):
        run(libs, 4, mode=0, ws=dirty)
    with pytest.raises(KernelError, match=r"hard sync in a launch without a GM workspace"):
        run(libs, 4, mode=1, workspace=0)
    with pytest.raises(KernelError, match=r"40 vector blocks on 40 vector cores|vector cores"):
        run(libs, PLATFORM.vector_cores + 1, mode=1)


@pytest.mark.slow  # a -g build of its own (about 30 s)
def test_cpu_run_runs_a_syncall_kernel_as_one_launch(tmp_path):
    """`pyasc cpu-run` on the hand-written kernel file: the blocks wait for each other."""
    from cpu_run_helpers import CpuRun

    (tmp_path / "cache").mkdir()
    (tmp_path / "work").mkdir()
    run = CpuRun(tmp_path / "cache", tmp_path / "work")
    res = run(
        HERE / "sync_all.cpp",
        "--entry",
        "rotate_kernel",
        "--block-dim",
        "4",
        "x:float32[32]",
        "y:float32[32]",
        "w:int32[32]",
        "ws:64",
        "i64:0,0,1",
    )
    assert res.code == 0, res.stderr
    np.testing.assert_array_equal(res.output("y"), rotated(4, 1))
    res = run(
        HERE / "sync_all.cpp",
        "--entry",
        "rotate_kernel",
        "--block-dim",
        "4",
        "x:float32[32]",
        "y:float32[32]",
        "w:int32[32]",
        "ws:64",
        "i64:3,0,1",
    )
    assert res.code == 1 and "barrier can never complete" in res.stderr, res.stderr
