"""``@lang.parallel``: distributed loops and allreduce through the pipeline.

A parallel kernel's body is one SPMD nest (``passes/parallel_nest.py``) lowered to ONE vector
kernel on ``blockDim = num_workers`` cores (``passes/lower_parallel.py``): shares of the
distributed loops from ``GetBlockIdx()``, partials through a GM workspace and ``SyncAll()``.
Checked here against float64 NumPy / ``math.fsum`` on tail sizes, the IR interpreter
(``backend="interp"``: the shares worker by worker) against the CPU build bit for bit, the
acceptance example ``parallel_sum`` (blockDim 4, exact to rounding), general bodies (two
arrays, math functions, nested loops, results written per share and after an allreduce), and
located errors for what the parallel form refuses.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from helpers import line_of
from lang_kernels import parallel_sum

import pyasc_mlir as pa
import pyasc_mlir.language as lang
from pyasc_mlir.dialects.asc_loop import SHARE_ALIGN, share
from pyasc_mlir.errors import PyAscCompileError, PyAscPerformanceWarning
from pyasc_mlir.language import D, N

# every kernel here warns that its shares run as scalar loops (one test checks the warning)
pytestmark = pytest.mark.filterwarnings("ignore::pyasc_mlir.errors.PyAscPerformanceWarning")

SIZES = [1, 3, 7, 33, 513, 4097]


def ulp32(v: float) -> float:
    return float(np.spacing(np.float32(abs(v))))


def interp(k):
    """The same kernel on the IR interpreter."""
    return lang.parallel(k.fn, num_workers=k.num_workers, backend="interp")


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
    info = parallel_sum.compile(x).info
    assert info["kernels"] == 1 and info["block_dim"] == 4 and info["workspace_bytes"] > 0
    np.testing.assert_array_equal(parallel_sum(x), got)  # reproducible, bit for bit


def test_interpreter_and_cpu_build_agree_bit_for_bit():
    ref = interp(parallel_sum)
    for n in (5, 513, 4097):
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        np.testing.assert_array_equal(ref(x), parallel_sum(x))
    special = np.array([1.0, -0.0, -3.5e-45, 2.0] * 20, np.float32)  # -0, a subnormal
    np.testing.assert_array_equal(ref(special), parallel_sum(special))
    special[3] = np.nan
    assert np.isnan(parallel_sum(special)[0]) and np.isnan(ref(special)[0])


def test_infinite_sums_stay_infinite():
    """The compensated add drops its compensation once the sum is not finite (inf - inf
    would otherwise make every later step NaN); the CPU build and the interpreter agree."""
    ref = interp(parallel_sum)
    cases = [
        ([1.0, np.inf, 2.0] * 20, np.inf),
        ([1.0, -np.inf, 2.0] * 20, -np.inf),
        ([3e38] * 100, np.inf),  # overflow of finite terms
        ([-3e38] * 100, -np.inf),
    ]
    for values, want in cases:
        x = np.array(values, np.float32)
        assert parallel_sum(x)[0] == want
        assert ref(x)[0] == want
    both = np.array([1.0, np.inf, 2.0, -np.inf] * 20, np.float32)
    assert np.isnan(parallel_sum(both)[0]) and np.isnan(ref(both)[0])


def test_the_emitted_kernel_synchronises_through_the_workspace():
    x = np.ones(100, np.float32)
    src = (parallel_sum.compile(x).info["library"]).rsplit("/", 1)[0] + "/kernel.cpp"
    text = open(src).read()
    assert "SyncAll" in text and "GetBlockIdx()" in text and "workspace" in text


def test_shares_are_contiguous_aligned_and_cover():
    for n in (1, 7, 8, 33, 4097):
        for cores in (1, 4, 40):
            bounds = [share(n, cores, b) for b in range(cores)]
            assert bounds[0][0] == 0 and bounds[-1][1] == n
            for (s0, e0), (s1, _e1) in zip(bounds, bounds[1:], strict=False):
                assert e0 == s1 and (s0 % SHARE_ALIGN == 0 or s0 == n) and s0 <= e0
    assert share(100, 4, 0) == (0, 32) and share(100, 4, 3) == (96, 100)


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
    assert absmax16.compile(x).info["block_dim"] == 3
    v = x.astype(np.float64)
    exact = math.fsum(v * v - 1.0)
    assert abs(float(sum_sq16(x)[0]) - exact) <= 4 * ulp32(exact) + 1e-6 * n
    assert sum_sq16.compile(x).info["block_dim"] == 2


@lang.parallel(num_workers=4)
def dot(x: lang.float32[N], y: lang.float32[N]) -> lang.float32[1]:
    s = 0.0
    for i in lang.distributed_range(N):
        s += x[i] * y[i]
    return lang.allreduce(s)


@lang.parallel(num_workers=3)
def normalise(x: lang.float32[N]) -> lang.float32[N]:
    """softmax over a vector: a max, a sum of exponentials, then each core its share."""
    m = -math.inf
    for i in lang.distributed_range(N):
        m = lang.maximum(m, x[i])
    mx = lang.allreduce(m, op="max")
    s = 0.0
    for i in lang.distributed_range(N):
        s += lang.exp(x[i] - mx)
    total = lang.allreduce(s)
    out = lang.empty_like(x)
    for i in lang.distributed_range(N):
        out[i] = lang.exp(x[i] - mx) / total
    return out


@lang.parallel(num_workers=4)
def row_sums(x: lang.float32[N, D]) -> lang.float32[N]:
    """Rows distributed over the cores; an inner loop per row."""
    out = lang.empty((N,), lang.float32)
    for i in lang.distributed_range(N):
        acc = 0.0
        for j in range(D):
            acc += x[i, j]
        out[i] = acc
    return out


@lang.parallel(num_workers=5)
def stats(x: lang.float32[N]) -> lang.float32[3]:
    """Three reductions in one loop; the results written by core 0 after the allreduces."""
    s, lo, hi = 0.0, math.inf, -math.inf
    for i in lang.distributed_range(N):
        s -= x[i]
        lo = lang.minimum(lo, x[i])
        hi = max(hi, x[i])
    out = lang.zeros((3,), lang.float32)
    out[0] = lang.allreduce(s)
    out[1] = lang.allreduce(lo, op="min")
    out[2] = lang.allreduce(hi, op="max")
    return out


@pytest.mark.parametrize("n", [1, 7, 33, 513])
def test_general_parallel_bodies(n):
    r = np.random.default_rng(n)
    x, y = r.standard_normal(n).astype(np.float32), r.standard_normal(n).astype(np.float32)
    exact = math.fsum(np.float64(x) * np.float64(y))
    assert abs(float(dot(x, y)[0]) - exact) <= 4 * ulp32(exact) + 1e-6
    e = np.exp(np.float64(x) - np.float64(x).max())
    np.testing.assert_allclose(normalise(x), e / e.sum(), rtol=2e-6, atol=1e-7)
    m = r.standard_normal((n, 9)).astype(np.float32)
    np.testing.assert_allclose(row_sums(m), np.float64(m).sum(axis=1), rtol=1e-5, atol=1e-5)
    got = stats(x)
    np.testing.assert_allclose(got[0], -np.float64(x).sum(), rtol=1e-6, atol=1e-6)
    assert got[1] == x.min() and got[2] == x.max()
    for k, args in ((dot, (x, y)), (normalise, (x,)), (row_sums, (m,)), (stats, (x,))):
        np.testing.assert_array_equal(interp(k)(*args), k(*args))
        info = k.compile(*args).info
        assert info["kernels"] == 1 and info["block_dim"] == k.num_workers


@lang.parallel(num_workers=4)
def reverse_twice(x: lang.float16[N]) -> lang.float16[N]:
    """A local array written per share, read at other cores' indices in the next loop."""
    y = lang.zeros((N,), lang.float32)
    z = lang.empty_like(x)
    for i in lang.distributed_range(N):
        y[i] = x[i] * 2.0
    for i in lang.distributed_range(N):
        z[i] = y[N - 1 - i]
    return z


@lang.parallel(num_workers=3)
def shared_total(x: lang.float32[N, D]) -> lang.float32[2]:
    """Rows written per share into a local array; every core then reads all of it."""
    y = lang.empty((N, D), lang.float32)
    for i in lang.distributed_range(N):
        for j in range(D):
            y[i, j] = x[i, j] + 1.0
    out = lang.zeros((2,), lang.float32)
    t = 0.0
    for i in range(N):
        for j in range(D):
            t += y[i, j]
    out[0] = t
    out[1] = y[N - 1, D - 1]
    return out


@pytest.mark.parametrize("n", [1, 7, 33, 513])
def test_local_arrays_written_per_share_are_shared(n):
    r = np.random.default_rng(40 + n)
    x = r.standard_normal(n).astype(np.float16)
    want = (x.astype(np.float32) * 2).astype(np.float16)[::-1]
    np.testing.assert_array_equal(reverse_twice(x), want)
    m = r.standard_normal((n, 5)).astype(np.float32)
    y = m + np.float32(1)
    got = shared_total(m)
    np.testing.assert_allclose(got[0], np.float64(y).sum(), rtol=1e-5, atol=1e-5)
    assert got[1] == y[-1, -1]
    for k, args in ((reverse_twice, (x,)), (shared_total, (m,))):
        np.testing.assert_array_equal(interp(k)(*args), k(*args))
        with lang.enable_memory_check():
            np.testing.assert_array_equal(k(*args), k(*args))
    assert "ascendc.workspace" in str(reverse_twice.compile(x).stages()["ascendc"])


@lang.parallel(num_workers=2)
def reads_a_neighbour(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in lang.distributed_range(N):
        y[i] = x[i]
        y[i] = y[N - 1 - i] + 1.0  # ERR
    return y


def test_a_distributed_loop_reading_what_other_cores_write_is_refused():
    e = _refused(reads_a_neighbour, (np.ones(40, np.float32),), "reads an element of an array")
    assert e.loc.line == line_of(reads_a_neighbour, "# ERR")
    assert "SyncAll" in e.hint


def test_kernel_options_over_parallel_are_refused_not_dropped():
    @lang.kernel
    @lang.parallel(num_workers=2)
    def plain(x: lang.float32[N]) -> lang.float32[1]:
        s = 0.0
        for i in lang.distributed_range(N):
            s += x[i]
        return lang.allreduce(s)

    assert plain(np.arange(5, dtype=np.float32))[0] == 10.0
    with pytest.raises(pa.PyAscUsageError, match="its options would be ignored") as e:
        lang.kernel(backend="interp")(plain)  # ERR
    assert e.value.loc is not None and e.value.loc.line == line_of(
        test_kernel_options_over_parallel_are_refused_not_dropped
    )
    assert "under @lang.parallel" in e.value.hint


def test_pa_compile_and_load_op(tmp_path):
    x = np.random.default_rng(2).random(300).astype(np.float32)
    op = pa.compile(parallel_sum, [pa.TensorDesc.of(x)], output_dir=tmp_path / "psum")
    assert op.info["block_dim"] == 4
    again = pa.load_op(tmp_path / "psum")
    np.testing.assert_array_equal(np.asarray(again(x)).reshape(-1), parallel_sum(x))


def test_the_scalar_shares_are_a_located_performance_warning(tmp_path):
    x = np.ones(40, np.float32)
    with pytest.warns(PyAscPerformanceWarning) as rec:
        pa.compile(parallel_sum, [pa.TensorDesc.of(x)], output_dir=tmp_path / "warned")
    (w,) = [r for r in rec if "distributed loop" in str(r.message)]
    text, src = str(w.message), inspect.getsourcefile(parallel_sum.fn)
    line = next(i for i, t in enumerate(open(src), 1) if "lang.distributed_range(N)" in t)
    assert text.startswith(f"{src}:{line}:5: warning: ") and "on each of the 4 cores" in text
    assert "for i in lang.distributed_range(N):" in text and "\nhint: " in text


def test_debug_mode_runs_it_as_python(monkeypatch):
    monkeypatch.setenv("PYASC_DEBUG", "1")
    x = np.arange(10, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(parallel_sum(x)).reshape(-1), [45.0])


def test_memory_check_accepts_the_kernel():
    x = np.random.default_rng(3).random(513, dtype=np.float32)
    want = parallel_sum(x)
    with lang.enable_memory_check():
        np.testing.assert_array_equal(parallel_sum(x), want)


def _refused(fn, args, match):
    with pytest.raises(PyAscCompileError, match=match) as e:
        fn(*args)
    assert e.value.loc is not None and "test_lang_parallel.py" in e.value.loc.file
    return e.value


BAD_WORKERS = [
    (0, "num_workers = 0 is not a core count", "an int in 1..48"),
    (-1, "num_workers = -1 is not a core count", "an int in 1..48"),
    (64, "num_workers = 64 is more than the 48 AI Vector cores of the 910B2", "1..48"),
    (2.0, "num_workers must be an int, got 2.0 (float)", "an int in 1..48"),
    (True, "num_workers must be an int, got True (bool)", "an int in 1..48"),
    (None, "@lang.parallel needs num_workers=N", "an int in 1..48"),
]


@pytest.mark.parametrize(("workers", "message", "hint"), BAD_WORKERS, ids=repr)
def test_num_workers_is_checked_at_the_decorator(workers, message, hint):
    """A located usage error (a ValueError) at the decorator line, naming the allowed range:
    1 to the platform table's AI Vector cores (48 on the 910B2); a bool is no core count."""
    with pytest.raises(pa.PyAscUsageError) as info:

        @lang.parallel(num_workers=workers)  # ERR
        def k(x: lang.float32[N]) -> lang.float32[1]:
            return lang.allreduce(0.0)

    exc = info.value
    assert isinstance(exc, ValueError) and message in exc.message, str(exc)
    assert exc.hint is not None and hint in exc.hint, exc.hint
    line = line_of(test_num_workers_is_checked_at_the_decorator)
    assert exc.loc is not None and (exc.loc.file, exc.loc.line) == (__file__, line), str(exc)
    assert str(exc).startswith(f"{__file__}:{line}:") and "@lang.parallel(num_workers" in str(exc)


def test_num_workers_bound_is_the_target_platforms_vector_cores():
    """The bound comes from pyasc_mlir.platform: the wrapped @lang.kernel's platform (kept, as
    its other options), or platform=."""
    from pyasc_mlir.platform import get_platform

    assert get_platform("910B2").vector_cores == 48
    cores = get_platform("310P3").vector_cores
    with pytest.raises(pa.PyAscUsageError, match=f"more than the {cores} AI Vector cores"):

        @lang.parallel(num_workers=cores + 1)
        @lang.kernel(platform="310P3")
        def on_310p(x: lang.float32[N]) -> lang.float32[1]:
            return lang.allreduce(0.0)

    with pytest.raises(pa.PyAscUsageError, match=f"more than the {cores} AI Vector cores"):
        lang.parallel(num_workers=cores + 1, platform="310P3")

    @lang.parallel(num_workers=cores)
    @lang.kernel(platform="310P3", backend="interp", double_buffer=False)
    def fits(x: lang.float32[N]) -> lang.float32[1]:
        return lang.allreduce(0.0)

    assert (fits.platform, fits.backend, fits.double_buffer) == ("310P3", "interp", False)
    assert lang.parallel(num_workers=48)(fits.fn).platform == "910B2"
    with pytest.raises(pa.PyAscUsageError, match="unknown Ascend platform 'nope'"):
        lang.parallel(num_workers=2, platform="nope")


def test_errors_are_located():
    with pytest.raises(pa.PyAscUsageError, match="num_workers = 0 is not a core count"):
        lang.parallel(num_workers=0)
    ones = (np.ones(4, np.float32),)

    @lang.kernel
    def not_parallel(x: lang.float32[N]) -> lang.float32[N]:
        y = lang.empty_like(x)
        for i in lang.distributed_range(N):
            y[i] = x[i]
        return y

    _refused(not_parallel, ones, "needs a @lang.parallel")

    @lang.parallel(num_workers=2)
    def plain_loop(x: lang.float32[N]) -> lang.float32[1]:
        s = 0.0
        for i in range(N):
            s += x[i]
        return lang.allreduce(s)

    _refused(plain_loop, ones, "reduced in a distributed loop")

    @lang.parallel(num_workers=2)
    def wrong_op(x: lang.float32[N]) -> lang.float32[1]:
        s = 0.0
        for i in lang.distributed_range(N):
            s += x[i]
        return lang.allreduce(s, op="max")

    _refused(wrong_op, ones, "reduced by sum")

    @lang.parallel(num_workers=2)
    def partial_read(x: lang.float32[N]) -> lang.float32[1]:
        s = 0.0
        for i in lang.distributed_range(N):
            s += x[i]
        return s * 2.0

    _refused(partial_read, ones, r"per-core partials of 's'")

    @lang.parallel(num_workers=2)
    def outer_assigned(x: lang.float32[N]) -> lang.float32[1]:
        s = 0.0
        t = 1.0
        for i in lang.distributed_range(N):
            s += x[i]
            t = x[i]
        return lang.allreduce(s) + t

    _refused(outer_assigned, ones, "'t' of the enclosing scope")

    @lang.parallel(num_workers=2)
    def nested(x: lang.float32[N, D]) -> lang.float32[1]:
        s = 0.0
        for i in lang.distributed_range(N):
            for j in lang.distributed_range(D):
                s += x[i, j]
        return lang.allreduce(s)

    _refused(nested, (np.ones((2, 2), np.float32),), "inside another distributed loop")
