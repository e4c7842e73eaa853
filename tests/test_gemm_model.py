"""The Cube side of the cost model and the GEMM kernels (issue 14): unique vs re-read A/B bytes,
the per-core A/B rate the published GEMM implies, the modeled 4096^3 GEMM (lowered only, no
g++) and small tail shapes through the CPU build against numpy. Every time is MODELED."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pyasc_mlir as pa
from benchmarks import calibrate_cube
from pyasc_mlir import cost_model, pipeline
from pyasc_mlir.emitter import kernels, tiling_fields
from pyasc_mlir.platform import COST_910B2, get_platform

PLAT = get_platform("910B2")
CLOCK_HZ = PLAT.clock_mhz * 1e6
RNG = np.random.default_rng(1414)


def gemm(a, b):
    return a @ b


def _lowered(m: int, n: int, k: int, dtype: str, **knobs: int):
    descs = [pa.TensorDesc((m, k), dtype), pa.TensorDesc((k, n), dtype)]
    stages, _, _ = pipeline.lower(gemm, descs, "gemm", "910B2", True, **knobs)
    (kern,) = kernels(stages["ascendc"])
    return kern, cost_model.walk_kernel(kern, PLAT)


# ---------------------------------------------------------------- the A/B rate of a Cube core


def test_rereads_of_data_that_fits_l2_come_from_l2():
    c = COST_910B2
    total, unique, cores = 1e9, 1e8, 48
    chip_s = unique / (c.hbm_gbps * 1e9) + (total - unique) / (c.l2_read_gbps * 1e9)
    want = total / chip_s / cores / CLOCK_HZ
    assert want < c.cube_gm_bytes_per_cycle  # not capped: the chip share decides
    got = cost_model.cube_bytes_per_cycle(total, unique, cores, PLAT, c)
    assert got == pytest.approx(want, rel=1e-12)
    # read only once: every byte from HBM, a lower rate
    once = cost_model.cube_bytes_per_cycle(unique, unique, cores, PLAT, c)
    assert once == pytest.approx(c.hbm_gbps * 1e9 / cores / CLOCK_HZ, rel=1e-12)
    assert once < got


def test_unique_bytes_beyond_l2_are_all_read_from_hbm():
    c = COST_910B2
    unique = 2 * c.l2_absorb_bytes
    got = cost_model.cube_bytes_per_cycle(4 * unique, unique, 48, PLAT, c)
    assert got == pytest.approx(c.hbm_gbps * 1e9 / 48 / CLOCK_HZ, rel=1e-12)


def test_the_per_core_rate_caps_the_share():
    c = COST_910B2
    got = cost_model.cube_bytes_per_cycle(1e9, 1e7, 1, PLAT, c)
    assert got == c.cube_gm_bytes_per_cycle


def test_cube_rate_is_the_lower_bound_the_published_gemm_implies():
    b = calibrate_cube.bounds()
    assert b["published_us"] == 437.0
    # 128x256 blocks: 16 block columns x 4096 rows + 32 block rows x 4096 columns, K=4096, fp16
    assert b["least_traffic_bytes"] == (16 * 4096 + 32 * 4096) * 4096 * 2
    assert (b["block_m"], b["block_n"]) == (128, 256)
    rate = b["least_traffic_bytes"] / 24 / (437e-6 * CLOCK_HZ)
    assert b["cube_gm_bytes_per_cycle"] == pytest.approx(rate)
    # committed: the bound rounded down to 0.1 B/cycle (still a lower bound)
    assert COST_910B2.cube_gm_bytes_per_cycle == math.floor(rate * 10) / 10
    assert COST_910B2.l2_read_gbps >= b["l2_read_gbps"] > 4000


# ---------------------------------------------------------------- the 4096^3 GEMM, lowered only


def test_gemm_4096_fp16_blocks_traffic_and_modeled_time():
    kern, walk = _lowered(4096, 4096, 4096, "float16")
    t = tiling_fields(kern)
    # the planner's block: 176 x 176 (f32 block 121 KiB <= L0C), single-buffered epilogue
    assert (t["tile_m"], t["tile_n"], t["units"], walk.buffers) == (176, 176, 576, 1)
    assert t["mm0_depthA1"] == 2 * t["mm0_stepKa"]  # L1 double buffered
    assert walk.cube_unique_bytes == 2 * 4096 * 4096 * 2
    # core 0: units 0..23 = block row 0: 23 blocks of 176 columns and the 48-column tail
    per_core = sum(t.cube_bytes for t in [walk.pre, *walk.tiles])
    assert len(walk.tiles) == 24 and per_core == (24 * 176 + 4096) * 4096 * 2
    e = cost_model.time_walk(walk, PLAT)
    rate = COST_910B2.cube_gm_bytes_per_cycle
    assert e.pipe_us["MTE2C"] == pytest.approx(per_core / rate / PLAT.clock_mhz)
    fractals = 11 * (23 * 11 + 3) * 256  # ceil(m/16) * ceil(n/16) * ceil(k/16) per block
    issue = 24 * cost_model.CUBE_ISSUE_CYCLES
    assert e.pipe_us["M"] == pytest.approx((fractals + issue) / PLAT.clock_mhz)
    assert e.bound == "MTE2C"
    assert e.time_us >= max(e.pipe_us["M"], e.pipe_us["MTE2C"])
    # tile 0's Cube stage: the first L1 chunk, then the stream overlapped with the products
    fill = (176 + 176) * t["mm0_stepKa"] * t["mm0_baseK"] * 2
    stream = (176 + 176) * 4096 * 2
    cyc = fill / rate + max(11 * 11 * 256 + 64, (stream - fill) / rate)
    assert e.per_tile[0]["M"] == pytest.approx(cyc)
    # the modeled figure (MODELED; the published built-in: <= 437 us, host-timed)
    assert 440 < e.time_us < 520


def test_gemm_4096_old_block_is_modeled_slower():
    _, walk = _lowered(4096, 4096, 4096, "float16", tile_m=64, tile_n=256)
    _, new = _lowered(4096, 4096, 4096, "float16")
    old_e, new_e = cost_model.time_walk(walk, PLAT), cost_model.time_walk(new, PLAT)
    old_bytes = sum(t.cube_bytes for t in walk.tiles)
    assert old_bytes == 43 * (64 + 256) * 4096 * 2  # 1024 units: core 0 takes 43
    assert old_e.time_us > 1.4 * new_e.time_us


def test_gemm_4096_fp32_is_cube_bound_at_the_calibrated_rate():
    kern, walk = _lowered(4096, 4096, 4096, "float32")
    t = tiling_fields(kern)
    e = cost_model.time_walk(walk, PLAT)
    m, n = t["tile_m"], t["tile_n"]
    per_block = math.ceil(m / 16) * math.ceil(n / 16) * 256 / COST_910B2.cube_fp32_rate
    cycles = len(walk.tiles) * (per_block + cost_model.CUBE_ISSUE_CYCLES)
    assert 4096 % m == 0 and 4096 % n == 0  # no tail blocks: every block is whole
    assert e.pipe_us["M"] == pytest.approx(cycles / PLAT.clock_mhz)
    assert e.bound == "M"


# ---------------------------------------------------------------- tails through the CPU build


def _exact_inputs(m: int, n: int, k: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Multiples of 1/4 in [-1, 1]: every product and every f32 partial sum is exact, so the
    kernel's result is the exact product rounded once to ``dtype``."""
    a = (RNG.integers(-4, 5, (m, k)) / 4).astype(dtype)
    b = (RNG.integers(-4, 5, (k, n)) / 4).astype(dtype)
    return a, b


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("m,n,k", [(1, 513, 33), (7, 33, 513), (33, 1, 7), (513, 7, 1)])
def test_tail_shapes_cpu_build_match_numpy(m: int, n: int, k: int, dtype: str) -> None:
    a, b = _exact_inputs(m, n, k, dtype)
    op = pa.compile(gemm, [pa.TensorDesc(a.shape, dtype), pa.TensorDesc(b.shape, dtype)])
    ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(op(a, b), ref)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_the_4096_block_shape_on_tails_cpu_build(dtype: str) -> None:
    """The 176 x 176 single-buffered block the planner picks for 4096^3, on a shape with tail
    blocks in M, N and K (the strict CPU Matmul checks the TCubeTiling)."""
    m, n, k = 513, 200, 513
    a, b = _exact_inputs(m, n, k, dtype)
    knobs = {"tile_m": 176, "tile_n": 176, "buffers": 1}
    descs = [pa.TensorDesc(a.shape, dtype), pa.TensorDesc(b.shape, dtype)]
    op = pa.compile(gemm, descs, tiling=knobs)
    assert (op.info["tiling"]["tile_m"], op.info["tiling"]["tile_n"]) == (176, 176)
    ref = (a.astype(np.float64) @ b.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(op(a, b), ref)
