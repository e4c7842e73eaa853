"""``@lang.parallel``: distributed_range shares, allreduce through a GM workspace and SyncAll.

The acceptance example ``parallel_sum`` (tests/lang_kernels.py) runs on blockDim 4 and is the
float32 rounding of the exact sum (math.fsum) on tail sizes, also below the worker count; the
reference executor (``backend="interp"``) gives the same bits; run block after block (the old
CPU model) the kernel is refused, as its combine needs every core's partial.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from helpers import tagged_line
from lang_kernels import parallel_sum

import pyasc_mlir.language as lang
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.language import N
from pyasc_mlir.language.parallel import share
from pyasc_mlir.runtime.cpu import KernelError

SIZES = [1, 3, 7, 33, 513, 4097]


def ulp32(v: float) -> float:
    return float(np.spacing(np.float32(abs(v))))


@pytest.mark.parametrize("n", SIZES)
def test_parallel_sum_is_exact_to_rounding(n):
    x = np.random.default_rng(n).uniform(-1.0, 2.0, n).astype(np.float32)
    got = parallel_sum(x)
    assert got.dtype == np.float32 and got.shape == (1,)
    exact = math.fsum(x.astype(np.float64))
    # compensated float32 sums: within one rounding of the result plus 2u * sum|x| (the
    # Kahan bound, u = 2^-24), independent of n (a plain float32 loop: n * u * sum|x|)
    bound = ulp32(exact) + 2.0**-23 * math.fsum(np.abs(x.astype(np.float64)))
    assert abs(float(got[0]) - exact) <= bound, (got, exact)
    xp = np.abs(x)  # one sign: no cancellation, the float32 rounding of the exact sum
    exact_p = math.fsum(xp.astype(np.float64))
    assert abs(float(parallel_sum(xp)[0]) - exact_p) <= ulp32(exact_p)
    assert parallel_sum.launch_info["block_dim"] == 4
    assert "SyncAll(" in parallel_sum.launch_info["source"]
    np.testing.assert_array_equal(parallel_sum(x), got)  # reproducible, bit for bit


def test_reference_executor_gives_the_same_bits():
    ref = lang.parallel(parallel_sum.fn, num_workers=4, backend="interp")
    for n in (5, 513, 4097):
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        np.testing.assert_array_equal(ref(x), parallel_sum(x))


def test_shares_are_contiguous_aligned_and_cover():
    for n in (1, 7, 8, 33, 4097):
        for cores in (1, 4, 40):
            bounds = [share(n, cores, b, 8) for b in range(cores)]
            assert bounds[0][0] == 0 and bounds[-1][1] == n
            for (s0, e0), (s1, _e1) in zip(bounds, bounds[1:], strict=False):
                assert e0 == s1 and (s0 % 8 == 0 or s0 == n) and s0 <= e0
    assert share(33, 4, 0, 8) == (0, 16) and share(33, 4, 3, 8) == (32, 33)


def test_block_after_block_cannot_run_it():
    """The test can fail: the combine reads every core's partial, so the cores must really
    wait for each other; the old model (one block after another) is refused, not wrong."""
    x = np.arange(64, dtype=np.float32)
    parallel_sum(x)
    k = parallel_sum._libs[("float32", "float32")]
    saved, k._run_grid = k._run_grid, None
    try:
        with pytest.raises(KernelError, match="runs alone"):
            k.run(4, [x, np.zeros(1, np.float32)], struct.pack("<q", 64), 256)
    finally:
        k._run_grid = saved


@lang.parallel(num_workers=3)
@lang.kernel
def absmax16(x: lang.float16[N]) -> lang.float32[1]:
    m = -math.inf
    for i in lang.distributed_range(N):
        m = lang.maximum(m, abs(x[i]) * 2.0)
    return lang.allreduce(m, op="max")


@lang.kernel
@lang.parallel(num_workers=2)
def sum_sq16(x: lang.float16[N]) -> lang.float32[1]:
    s = 0.0
    for i in lang.distributed_range(N):
        s += x[i] * x[i] - 1.0
    return lang.allreduce(s)


@pytest.mark.parametrize("n", [1, 33, 4097])
def test_fp16_max_and_sum(n):
    x = np.random.default_rng(7 + n).standard_normal(n).astype(np.float16)
    assert absmax16(x)[0] == np.float32(2.0) * np.max(np.abs(x)).astype(np.float32)
    assert absmax16.launch_info["block_dim"] == 3
    v = x.astype(np.float64)
    exact = math.fsum(v * v - 1.0)
    assert abs(float(sum_sq16(x)[0]) - exact) <= 4 * ulp32(exact) + 1e-6 * n
    assert sum_sq16.launch_info["block_dim"] == 2


def test_debug_mode_runs_it_as_python(monkeypatch):
    monkeypatch.setenv("PYASC_DEBUG", "1")
    x = np.arange(10, dtype=np.float32)
    np.testing.assert_allclose(parallel_sum(x), [45.0])


def test_errors_are_located():
    with pytest.raises(ValueError, match="num_workers must be an int in 1..48"):
        lang.parallel(num_workers=0)

    @lang.parallel(num_workers=2)
    def two_loops(x: lang.float32[N]) -> lang.float32[1]:
        s = 0.0
        for i in range(N):
            s += x[i]
        return lang.allreduce(s)

    with pytest.raises(PyAscCompileError, match="distributed_range") as e:
        two_loops(np.ones(4, np.float32))
    assert e.value.loc is not None and "test_lang_parallel.py" in e.value.loc.file

    @lang.parallel(num_workers=2)
    def wrong_op(x: lang.float32[N]) -> lang.float32[1]:
        s = 0.0
        for i in lang.distributed_range(N):
            s += lang.exp(x[i])
        return lang.allreduce(s)

    with pytest.raises(PyAscCompileError, match=r"lang.exp\(x\[i\]\)' is not supported"):
        wrong_op(np.ones(4, np.float32))

    @lang.parallel(num_workers=2)
    def wide(x: lang.float32[N]) -> lang.float32[N]:
        s = 0.0
        for i in lang.distributed_range(N):
            s += x[i]
        return lang.allreduce(s)

    with pytest.raises(PyAscCompileError, match="one-element array"):
        wide(np.ones(4, np.float32))


@pytest.mark.slow  # a memory-check build of its own
def test_memory_check_and_race_detector_accept_the_kernel():
    from pyasc_mlir.platform import get_platform
    from pyasc_mlir.runtime.cpu import CpuKernel, build_library

    x = np.random.default_rng(3).random(513, dtype=np.float32)
    want = parallel_sum(x)
    src = parallel_sum.launch_info["source"]
    k = CpuKernel(build_library({"kernel.cpp": src}, get_platform(), memcheck=True))
    out = np.zeros(1, np.float32)
    k.run(4, [x, out], struct.pack("<q", 513), parallel_sum.launch_info["workspace_bytes"])
    np.testing.assert_array_equal(out, want)


def test_pa_compile_refuses_a_parallel_kernel_with_what_to_do():
    import pyasc_mlir as pa

    with pytest.raises(pa.PyAscUsageError) as info:
        pa.compile(parallel_sum, [pa.TensorDesc((1000,), "float32")])  # ERR compile-parallel
    err = info.value
    assert err.loc is not None and err.loc.line == tagged_line(__file__, "compile-parallel")
    assert "@lang.parallel" in str(err) and "parallel_sum(x)" in str(err)
