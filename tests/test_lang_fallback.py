"""The kernel language's scalar-loop fallback (issue 11): loop nests that ``asc-raise-loops``
cannot raise (index arithmetic, strides, loop-carried dependences, triangular loops,
partial writes) compile to single-core scalar-loop kernels (``asc-lower-loops``), run
correctly on the CPU build and in the interpreter (bit for bit the same), and warn with a
located ``PyAscPerformanceWarning`` that says why. Raised and fallback nests mix in one
kernel."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest
from helpers import assert_close, line_of

import pyasc_mlir as pa
import pyasc_mlir.language as lang
from pyasc_mlir.passes.lower_loops import AscLowerLoopsPass
from pyasc_mlir.pipeline import make_context

# ruff: noqa: F821  (the dim name N is bare on purpose)

HERE = __file__
SIZES = (1, 7, 33, 513)
T = lang.float32  # the kernels' dtype (rebound per test: _typed)
DTYPES = (np.float16, np.float32)


def k_reverse(x: T[N]) -> T[N]:
    y = lang.empty_like(x)
    for i in range(N):  # ERR
        y[i] = x[N - 1 - i] * 2.0
    return y


def k_strided(x: T[N]) -> T[N]:
    y = lang.zeros(N, T)
    for i in lang.range(0, (N + 1) // 2):  # ERR
        y[i] = x[2 * i] + 1.0
    return y


def k_prefix(x: T[N]) -> T[N]:
    y = lang.empty_like(x)
    y[0] = x[0]
    for i in lang.range(1, N):  # ERR
        y[i] = y[i - 1] + x[i]
    return y


def k_carried(x: T[N]) -> T[N]:
    """A scalar set before the loop, reassigned in it: the nest also yields the scalar, ahead
    of the returned array (the CPU build once returned the scalar's buffer)."""
    y = lang.empty_like(x)
    v = 3.0
    for i in range(N):  # ERR
        v = x[i] * 2.0
        y[i] = v
    return y


def k_triangular(x: T[N]) -> T[N]:
    y = lang.empty_like(x)
    for i in range(N):  # ERR
        s = 0.0
        for j in range(i + 1):
            s += x[j]
        y[i] = s
    return y


def k_partial(x: T[N]) -> T[N]:
    y = lang.full(N, -1.0, T)
    for i in lang.range(0, N, 3):  # ERR
        y[i] = lang.exp(x[i])
    return y


def k_mixed(x: T[N]) -> T[N]:
    t = lang.empty_like(x)
    for i in range(N):  # raised: a map
        t[i] = x[i] * x[i]
    c = lang.empty_like(x)
    c[0] = t[0]
    for i in lang.range(1, N):  # ERR
        c[i] = lang.maximum(c[i - 1], t[i])
    y = lang.empty_like(x)
    for i in range(N):  # raised: a map over the fallback's result
        y[i] = c[i] + t[i]
    return y


def k_window(x: T[N]) -> T[N]:
    y = lang.zeros(N, T)
    for i in range(N - 2):  # ERR
        s = 0.0
        for j in range(3):
            s += x[i + j]
        y[i] = s
    return y


def _window_ref(x: np.ndarray) -> np.ndarray:
    f = x.astype(np.float32)
    y = np.zeros(x.size, np.float32)
    if x.size > 2:
        y[: x.size - 2] = (f[:-2] + f[1:-1]) + f[2:]
    return y.astype(x.dtype)


def _cummax(v: np.ndarray) -> np.ndarray:
    return np.maximum.accumulate(v)


def _prefix_ref(x: np.ndarray) -> np.ndarray:
    """The loop's own order: f32 sums, each rounded to the array's dtype."""
    y = np.empty_like(x)
    acc = np.float32(x[0])
    y[0] = x[0]
    for i in range(1, x.size):
        acc = np.float32(np.float32(y[i - 1]) + np.float32(x[i]))
        y[i] = acc
    return y


def _triangular_ref(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = np.add.accumulate(x[: i + 1].astype(np.float32), dtype=np.float32)[-1]
    return out


def _partial_ref(x: np.ndarray) -> np.ndarray:
    y = np.full_like(x, -1.0)
    y[::3] = np.exp(x[::3].astype(np.float64)).astype(np.float32)
    return y


def _strided_ref(x: np.ndarray) -> np.ndarray:
    y = np.zeros_like(x)
    h = (x.size + 1) // 2
    y[:h] = (x[::2].astype(np.float32) + np.float32(1.0))[:h]
    return y


def _mixed_ref(x: np.ndarray) -> np.ndarray:
    t = (x.astype(np.float32) * x.astype(np.float32)).astype(x.dtype)
    c = _cummax(t)
    return (c.astype(np.float32) + t.astype(np.float32)).astype(x.dtype)


CASES = {
    k_reverse: (
        lambda x: (x[::-1].astype(np.float32) * 2).astype(x.dtype),
        "an index is a constant or an expression",
    ),
    k_strided: (_strided_ref, "an index is a constant or an expression"),
    k_prefix: (_prefix_ref, "a dependence between iterations"),
    k_triangular: (_triangular_ref, "a triangular loop"),
    k_carried: (
        lambda x: (x.astype(np.float32) * 2).astype(x.dtype),
        "a store inside a loop its index does not name",
    ),
    k_partial: (_partial_ref, "strided loops are not raised"),
    k_mixed: (_mixed_ref, "a dependence between iterations"),
    k_window: (_window_ref, "an index is a constant or an expression"),
}


def _typed(fn, dtype):
    """``fn`` with its dtype ``T`` bound to ``dtype`` (same code, same source lines)."""
    t = lang.float16 if dtype == np.float16 else lang.float32
    return types.FunctionType(fn.__code__, {**fn.__globals__, "T": t}, fn.__name__)


_KERNELS: dict = {}


def _kernel(fn, dtype, backend):
    key = (fn, dtype, backend)
    if key not in _KERNELS:
        _KERNELS[key] = lang.kernel(_typed(fn, dtype), backend=backend)
    return _KERNELS[key]


def _input(n: int, dtype) -> np.ndarray:
    rng = np.random.default_rng(n)
    return rng.uniform(-2.0, 2.0, n).astype(dtype)


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Same values bit for bit (NaNs compared as NaNs)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    nan = np.isnan(a)
    if not np.array_equal(nan, np.isnan(b)):
        return False
    u = np.uint16 if a.dtype == np.float16 else np.uint32
    return np.array_equal(a.view(u)[~nan], b.view(u)[~nan])


def _run(fn, dtype, n, backend):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pa.PyAscPerformanceWarning)
        return _kernel(fn, dtype, backend)(_input(n, dtype))


def _params():
    for fn in CASES:
        for dtype in DTYPES:
            for n in SIZES:
                marks = [] if n == 33 else [pytest.mark.slow]  # a g++ build each
                yield pytest.param(
                    fn, dtype, n, id=f"{fn.__name__}-{dtype.__name__}-{n}", marks=marks
                )


@pytest.mark.parametrize(("fn", "dtype", "n"), list(_params()))
def test_fallback_matches_numpy_and_the_interpreter(fn, dtype, n):
    ref = CASES[fn][0](_input(n, dtype))
    cpu = _run(fn, dtype, n, "cpu")
    interp = _run(fn, dtype, n, "interp")
    assert _bits_equal(cpu, interp), (cpu, interp)
    tol = 1e-3 if dtype == np.float16 else 1e-5
    assert_close(cpu, ref, dtype, rtol=tol, atol=tol)


@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_the_warning_is_located_and_says_why(fn, tmp_path, monkeypatch):
    monkeypatch.setenv("PYASC_CACHE_DIR", str(tmp_path))  # lowered afresh: the warning shows
    pa.clear_memory_cache()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lang.kernel(_typed(fn, np.float32), backend="interp").compile(_input(7, np.float32))
    perf = [w for w in caught if issubclass(w.category, pa.PyAscPerformanceWarning)]
    line = line_of(fn, "# ERR")
    texts = [str(w.message) for w in perf]
    hit = [t for t in texts if t.startswith(f"{HERE}:{line}:")]
    assert hit, texts
    text = hit[0]
    assert "runs as scalar loops on one core" in text
    assert CASES[fn][1] in text
    assert "hint: to get a fast vector kernel" in text
    assert any(w.filename == HERE and w.lineno == line for w in perf)


def test_mixed_kernel_raises_what_it_can():
    op = _kernel(k_mixed, np.float32, "cpu").compile(_input(33, np.float32))
    names = op.info["kernel_names"]
    assert len(names) >= 2 and any("_loops_" in k for k in names), names
    assert sum("_loops_" in k for k in names) == 1, names  # c[0] = t[0] and the scan: one


def k_special(x: T[N], y: T[N]) -> T[N]:
    out = lang.empty_like(x)
    for i in range(N):
        v = lang.maximum(x[N - 1 - i], y[i]) + lang.minimum(x[i], y[i])
        out[i] = lang.exp(v) / (1.0 + lang.sqrt(lang.abs(v))) + lang.tanh(v) * lang.erf(v)
    return out


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_special_values_agree_bit_for_bit(dtype):
    specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -3.5, 88.0, 11.5, 65504.0]
    x = np.array(specials * 3 + [0.5], dtype)
    y = np.array(list(reversed(specials)) * 3 + [-0.5], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pa.PyAscPerformanceWarning)
        cpu = _kernel(k_special, dtype, "cpu")(x, y)
        interp = _kernel(k_special, dtype, "interp")(x, y)
    assert _bits_equal(cpu, interp), (cpu, interp)
    assert np.isnan(cpu).any() and np.isinf(cpu).any()


def test_arrays_too_big_for_ub_run_from_gm():
    """The UB budget 0 puts every array in GM (GlobalTensor GetValue/SetValue): the same
    results as through UB."""
    kern = _kernel(k_prefix, np.float32, "interp")
    x = _input(33, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pa.PyAscPerformanceWarning)
        op = kern.compile(x)
    module = op.stages()["tensor"].clone()
    from pyasc_mlir.interpreter.core import run_function

    AscLowerLoopsPass(ub_budget=0).apply(make_context(), module)
    text = str(module)
    assert "ascendc.init_tbuf" not in text and "ascendc.scalar_get" in text
    (got,) = run_function(module, "k_prefix", [x])
    assert _bits_equal(got, kern(x))
    np.testing.assert_array_equal(got, _prefix_ref(x))


@pytest.mark.slow
def test_large_prefix_sum_goes_through_gm_on_the_cpu_build():
    """100 000 f32 (400 KB, more than the UB): GM accesses, still exact."""
    x = _input(100_000, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pa.PyAscPerformanceWarning)
        got = _kernel(k_prefix, np.float32, "cpu")(x)
    np.testing.assert_array_equal(got, _prefix_ref(x))


@pytest.mark.parametrize("fn", [k_prefix, k_mixed, k_triangular], ids=lambda f: f.__name__)
def test_pipe_synchronisation_passes_the_race_checker(fn):
    """The memory-check build (UB bounds, uninitialised reads, the pipe race detector: a
    GetValue after DataCopyPad needs MTE2_S, a DataCopyPad after SetValue S_MTE3)."""
    x = _input(33, np.float16)
    with pa.enable_memory_check(), warnings.catch_warnings():
        warnings.simplefilter("ignore", pa.PyAscPerformanceWarning)
        got = lang.kernel(_typed(fn, np.float16))(x)
    assert _bits_equal(got, _run(fn, np.float16, 33, "interp"))


@pytest.mark.parametrize("fn", [k_prefix, k_mixed], ids=lambda f: f.__name__)
def test_asc_lower_loops_preserves_semantics(fn):
    """Translation validation: the tensor stage (``asc_loop.nest`` run as loop IR) and the
    ascendc stage (the lowered kernels) give the same bits (add, mul and max are exact f32
    operations in both)."""
    x = _input(33, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pa.PyAscPerformanceWarning)
        op = _kernel(fn, np.float32, "interp").compile(x)
    (before,) = op.run_stage("tensor", x)
    (after,) = op.run_stage("ascendc", x)
    assert "asc_loop.nest" in str(op.stages()["tensor"])
    assert _bits_equal(before, after)
