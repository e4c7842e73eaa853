"""The scalar data cache of the CPU runtime (``pyasc_cpu/dcache.h``) and
``DataCacheCleanAndInvalid``.

Documented (Ascend C API reference, "DataCacheCleanAndInvalid"): ``GlobalTensor::GetValue`` /
``SetValue`` go through each core's data cache; DMA does not. Memory-check builds report a read
of another core's unwritten ``SetValue`` data, a stale cached read, a DMA read of unwritten
scalar data and two cores' writes into one 64-byte line; the reserved forms are refused in
every build. Blocks run one at a time and switch only at ``SyncAll`` (``pyasc_run_grid``), so
the orders below are deterministic. The emitted ``@lang.parallel`` kernels write their scalar
data out and pass the memory-check build.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from cpu_run_helpers import shared_pch_cache
from lang_kernels import parallel_sum

from pyasc_mlir import checks
from pyasc_mlir.platform import get_platform
from pyasc_mlir.runtime.cpu import CpuKernel, KernelError, build_library

PLATFORM = get_platform("910B1")

KERNEL_CPP = r"""
#include "kernel_operator.h"
using namespace AscendC;
constexpr CacheLine kOne = CacheLine::SINGLE_CACHE_LINE;
constexpr DcciDst kOut = DcciDst::CACHELINE_OUT;

// case 0: block b SetValue 10 + b into int32 16 * b of y (its own 64-byte line), writes the line
//   out (a[0] = 1) or not, SyncAll, then o[16 * b + c] = y[16 * c] for every block c.
// case 1: every block writes int32 b of y (one line shared by all blocks).
// case 2: block 0 SetValue y[0], then DataCopy y -> UB -> o (written out first when a[0] = 1).
// case 3: block 0 reads y[0], SyncAll (block 1 copies x over y by DMA meanwhile), reads y[0]
//   again (invalidating the line first when a[0] = 1) into o[0].
// case 4: DcciDst::CACHELINE_UB (reserved); case 5: the LocalTensor form (reserved);
// case 6: ENTIRE_DATA_CACHE after case 0's write instead of the single line.
extern "C" __global__ __aicore__ void dcache(GM_ADDR x, GM_ADDR y, GM_ADDR o, GM_ADDR workspace,
                                             GM_ADDR tiling) {
  const int32_t* t = reinterpret_cast<const int32_t*>(tiling);
  const int32_t op = t[0], fix = t[1];
  const int64_t b = GetBlockIdx(), n = GetBlockNum();
  GlobalTensor<int32_t> gx, gy, go;
  gx.SetGlobalBuffer((__gm__ int32_t*)x, 16 * n);
  gy.SetGlobalBuffer((__gm__ int32_t*)y, 16 * n);
  go.SetGlobalBuffer((__gm__ int32_t*)o, 16 * n);
  TPipe pipe;
  TBuf<TPosition::VECIN> buf;
  pipe.InitBuffer(buf, 64);
  LocalTensor<int32_t> u = buf.Get<int32_t>();
  if (op == 0 || op == 6) {
    gy.SetValue(16 * b, 10 + (int32_t)b);
    if (fix && op == 0) DataCacheCleanAndInvalid<int32_t, kOne, kOut>(gy[16 * b]);
    if (op == 6) DataCacheCleanAndInvalid<int32_t, CacheLine::ENTIRE_DATA_CACHE, kOut>(gy);
    SyncAll();
    for (int64_t c = 0; c < n; ++c) go.SetValue(16 * b + c, gy.GetValue(16 * c));
  } else if (op == 1) {
    gy.SetValue(b, (int32_t)b);
  } else if (op == 2) {
    gy.SetValue(0, 42);
    if (fix) DataCacheCleanAndInvalid<int32_t, kOne>(gy);
    DataCopy(u, gy, 16);
    PipeBarrier<PIPE_ALL>();
    DataCopy(go, u, 16);
  } else if (op == 3) {
    if (b == 0) {
      const int32_t before = gy.GetValue(0);
      SyncAll();
      if (fix) DataCacheCleanAndInvalid<int32_t, kOne, kOut>(gy);
      go.SetValue(0, gy.GetValue(0) - before);
    } else {
      DataCopy(u, gx, 16);
      PipeBarrier<PIPE_ALL>();
      DataCopy(gy, u, 16);
      SyncAll();
    }
  } else if (op == 4) {
    DataCacheCleanAndInvalid<int32_t, kOne, DcciDst::CACHELINE_UB>(gy);
  } else if (op == 5) {
    DataCacheCleanAndInvalid<int32_t, kOne, kOut>(u);
  }
}
"""

ENTRY_CPP = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void dcache(GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR);
PYASC_CPU_ENTRY(dcache)
"""


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    cache = shared_pch_cache(tmp_path_factory.mktemp("pyasc_cache"))
    sources = {"kernel.cpp": KERNEL_CPP, "cpu_entry.cpp": ENTRY_CPP}
    return {
        "memcheck": CpuKernel(build_library(sources, PLATFORM, cache_dir=cache, memcheck=True)),
        "plain": CpuKernel(build_library(sources, PLATFORM, cache_dir=cache)),
    }


def run(kernel, op, fix, blocks=2):
    x = np.arange(16 * blocks, dtype=np.int32) + 100
    y = np.zeros(16 * blocks, np.int32)
    o = np.full(16 * blocks, -1, np.int32)
    kernel.run(blocks, [x, y, o], struct.pack("<2i", op, fix), workspace_bytes=64)
    return o


def test_written_out_scalar_data_is_seen_by_every_core(libs):
    for op in (0, 6):
        for build in ("memcheck", "plain"):
            o = run(libs[build], op, fix=1, blocks=3).reshape(-1, 16)
            np.testing.assert_array_equal(o[:3, :3], [[10, 11, 12]] * 3)


def test_reading_another_cores_unwritten_set_value_is_reported(libs):
    with pytest.raises(KernelError, match="block 1 reads GM cache line .* that block 0 wrote"):
        run(libs["memcheck"], 0, fix=0)
    run(libs["plain"], 0, fix=0)  # the model is a memory-check feature


def test_two_cores_writing_one_line_is_reported(libs):
    with pytest.raises(KernelError, match="write-backs of one 64-byte line"):
        run(libs["memcheck"], 1, fix=0)


def test_dma_does_not_see_the_data_cache(libs):
    with pytest.raises(KernelError, match="DMA reads GM, not the data cache"):
        run(libs["memcheck"], 2, fix=0)
    o = run(libs["memcheck"], 2, fix=1)
    assert o[0] == 42


def test_a_stale_cached_line_is_reported(libs):
    with pytest.raises(KernelError, match="may be stale"):
        run(libs["memcheck"], 3, fix=0)
    o = run(libs["memcheck"], 3, fix=1)
    assert o[0] == 100  # x[0] copied over y[0] = 0 by block 1


@pytest.mark.parametrize("op,what", [(4, "CACHELINE_UB is a reserved"), (5, "reserved form")])
def test_reserved_forms_are_refused(libs, op, what):
    for build in ("memcheck", "plain"):
        with pytest.raises(KernelError, match=what):
            run(libs[build], op, fix=0)


def test_the_parallel_kernel_writes_its_scalar_data_out():
    x = np.random.default_rng(3).standard_normal(300).astype(np.float32)
    want = parallel_sum(x)
    text = (parallel_sum.compile(x).directory / "kernel.cpp").read_text()
    assert "CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT" in text
    with checks.enable_memory_check(True):
        np.testing.assert_array_equal(parallel_sum(x), want)
