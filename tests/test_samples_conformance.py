"""The four real-sample families whose kernels live with the conformance suites, run
unmodified through ``pyasc cpu-run`` as a user runs a hand-written kernel (issue 9's 14
families: the other nine are tests/test_samples.py).

The kernels: unaligned WholeReduceSum with DataCopyPad (tests/conformance/
sample_whole_reduce.cpp), ReduceSum/Max/Min with calIndex (sample_reduce.cpp), Compare/Select
(sample_compare_select.cpp) and DataCopyPad + Adds (copy_samples.cpp); their tiling structs are
passed as raw ``.bin`` files, as host code would write them. The suites next to them check every
form bit for bit against the documented semantics; here the check is numpy's result (exact
where the operation is, a sum tolerance where numpy's order differs).
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from cpu_run_helpers import CpuRun

CONF = Path(__file__).resolve().parent / "conformance"
RNG = np.random.default_rng(1414)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return CpuRun(tmp_path_factory.mktemp("cache"), tmp_path_factory.mktemp("work"))


def tiling(run: CpuRun, name: str, data: bytes) -> str:
    path = run.work / f"{name}.bin"
    run.work.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(path)


def ok(res):
    assert res.code == 0, res.stderr
    return res


@pytest.mark.parametrize("dtype,rows,cols", [(np.float16, 7, 33), (np.float32, 4, 50)])
def test_whole_reduce_sum_with_datacopypad(run, dtype, rows, cols):
    x = RNG.uniform(-2, 2, rows * cols).astype(dtype)
    p = run.save(x=x)
    t = tiling(run, "wr", struct.pack("<4i", 0 if dtype == np.float16 else 1, rows, cols, 0))
    res = ok(
        run(
            CONF / "sample_whole_reduce.cpp",
            *("--entry", "whole_reduce_sum_custom", "--block-dim", "1", "--memory-check"),
            *(p["x"], f"y:{np.dtype(dtype).name}[{rows}]", "null", t),
        )
    )
    want = x.astype(np.float64).reshape(rows, cols).sum(axis=1)
    tol = 2e-2 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(res.output("y").astype(np.float64), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype,count", [(np.float16, 513), (np.float32, 4097)])
def test_reduce_sum_max_min_with_index(run, dtype, count):
    x = RNG.uniform(-3, 3, 8192).astype(dtype)
    p = run.save(x=x)
    n_out = 8 * 16 // np.dtype(dtype).itemsize
    t = tiling(run, "rd", struct.pack("<4i", 0 if dtype == np.float16 else 1, count, 0, 0))
    res = ok(
        run(
            CONF / "sample_reduce.cpp",
            *("--entry", "reduce_custom", "--block-dim", "1", "--memory-check"),
            *(p["x"], f"o:{np.dtype(dtype).name}[{n_out}]", "null", t),
        )
    )
    o = res.output("o")
    e = 32 // np.dtype(dtype).itemsize  # one DataBlock per result slot
    tol = 2e-2 if dtype == np.float16 else 1e-4
    want_sum = x[:count].astype(np.float64).sum()
    np.testing.assert_allclose(float(o[0]), want_sum, rtol=tol, atol=tol * np.abs(x).sum() / 100)
    idx_type = np.uint16 if dtype == np.float16 else np.uint32
    for slot, fn, arg in ((1, np.max, np.argmax), (2, np.min, np.argmin)):
        assert o[slot * e] == fn(x[:count])
        assert o[slot * e + 1 : slot * e + 2].view(idx_type)[0] == arg(x[:count])


@pytest.mark.parametrize("variant", [0, 1])
def test_compare_select(run, variant):
    n, blocks, thr, fill = 4097, 3, 0.5, -3.0
    x, y = (RNG.uniform(-2, 2, n).astype(np.float32) for _ in range(2))
    x[:3] = [np.nan, -0.0, np.inf]
    p = run.save(x=x, y=y)
    t = tiling(run, "cs", struct.pack("<2I2f", n, variant, thr, fill))
    res = ok(
        run(
            CONF / "sample_compare_select.cpp",
            *("--entry", "sample_cmpsel_float", "--block-dim", str(blocks), "--memory-check"),
            *(p["x"], p["y"], f"z:float32[{n}]", "null", t),
        )
    )
    want = np.where(x < y, x, y) if variant == 0 else np.where(x >= np.float32(thr), x, fill)
    np.testing.assert_array_equal(
        res.output("z").view(np.uint32), want.astype(np.float32).view(np.uint32)
    )


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_datacopypad_adds(run, dtype):
    rows, cols, tile_rows = 33, 513, 4
    x = RNG.uniform(-4, 4, rows * cols).astype(dtype)
    p = run.save(x=x)
    t = tiling(
        run,
        "pa",
        struct.pack("<3Iif", rows, cols, tile_rows, 0 if dtype == np.float16 else 1, 1.25),
    )
    res = ok(
        run(
            CONF / "copy_samples.cpp",
            *("--entry", "pad_adds_kernel", "--block-dim", "3", "--memory-check"),
            *(p["x"], f"y:{np.dtype(dtype).name}[{rows * cols}]", "null", t),
        )
    )
    np.testing.assert_array_equal(
        res.output("y"), (x.astype(np.float32) + np.float32(1.25)).astype(dtype)
    )
