"""``@lang.vectorize`` (a scalar function as an elementwise kernel, NumPy broadcasting) and
the debugger mode (``PYASC_DEBUG``, ``python -m pyasc_mlir.debugger``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from helpers import assert_close, seed_of
from lang_kernels import lowered, run_stage

import pyasc_mlir as pa
import pyasc_mlir.language as lang
from pyasc_mlir.language.debug import DebugMismatchWarning


@lang.vectorize
def saxpy(a, x, y):
    return a * x + y


def _softplus_shift(x, b):
    return lang.log(1.0 + lang.exp(x)) + b


softplus_shift = lang.vectorize(_softplus_shift)


def _rand(shape, dtype, *key):
    return np.random.default_rng(seed_of(*key, shape, dtype)).standard_normal(shape).astype(dtype)


BROADCASTS = [((4097,), (4097,)), ((33, 7), (7,)), ((513, 1), (1, 33)), ((1,), (7, 33))]


@pytest.mark.parametrize(("sx", "sy"), BROADCASTS, ids=str)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_vectorize_broadcasts_like_numpy_vectorize(sx, sy, dtype):
    x, y = _rand(sx, dtype, "x"), _rand(sy, dtype, "y")
    stages, info = lowered(saxpy, 2.5, x, y)
    assert info["kernels"] == 1 and info["kernel_type"] == "AIV_ONLY"
    (out,) = run_stage(stages, "tile", saxpy, 2.5, x, y)
    ref = np.vectorize(lambda a, b: 2.5 * float(a) + float(b))(x, y)
    assert out.shape == ref.shape == np.broadcast_shapes(sx, sy)
    assert_close(out, ref, dtype)
    stages, _ = lowered(softplus_shift, x, y)
    (out,) = run_stage(stages, "tile", softplus_shift, x, y)
    assert_close(out, np.log1p(np.exp(x.astype(np.float64))) + y, dtype)


def test_vectorize_on_the_cpu_build_and_mixed_dtypes():
    x, y = _rand((33, 513), "float16", "x"), _rand((513,), "float32", "y")
    out = saxpy(-1.5, x, y)
    assert out.dtype == np.float32  # mixed dtypes: float32
    assert_close(out, -1.5 * x.astype(np.float64) + y, "float32")


def test_vectorize_errors_are_located():
    with pytest.raises(pa.PyAscCompileError) as info:
        saxpy(1.0, 2.0, 3.0)
    assert "needs an array argument" in str(info.value)
    with pytest.raises(pa.PyAscCompileError) as info:
        saxpy(1.0, np.zeros(3, np.float32), np.zeros(4, np.float32))
    assert "do not broadcast" in str(info.value) and "hint:" in str(info.value)


@lang.kernel
def overflowing(a: lang.float16[N]) -> lang.float16[N]:  # noqa: F821
    c = lang.empty_like(a)
    for i in range(N):  # noqa: F821
        c[i] = a[i] * 1000.0 / 1000.0  # f32 inside the kernel; fp16 in NumPy
    return c


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
def test_debug_mode_runs_python_and_compare_warns(monkeypatch):
    a = np.full(5, 100.0, np.float16)
    monkeypatch.setenv("PYASC_DEBUG", "1")
    out = overflowing(a)
    assert np.isinf(out).all()  # NumPy's fp16 arithmetic: 100 * 1000 overflows
    assert overflowing.compilations == 0  # nothing was compiled
    monkeypatch.setenv("PYASC_DEBUG", "compare")
    with pytest.warns(DebugMismatchWarning, match="differs from the compiled kernel"):
        overflowing(a)
    monkeypatch.delenv("PYASC_DEBUG")
    np.testing.assert_array_equal(overflowing(a), a)  # compiled: computed in f32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        monkeypatch.setenv("PYASC_DEBUG", "compare")
        x = np.arange(6, dtype=np.float32)
        np.testing.assert_array_equal(saxpy(2.0, x, x), 3 * x)


def test_python_m_debugger_runs_print_inside_a_kernel(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """
            from __future__ import annotations
            import sys
            import numpy as np
            import pyasc_mlir.language as lang

            @lang.kernel
            def double(a: lang.float32[N]) -> lang.float32[N]:
                c = lang.empty_like(a)
                for i in range(N):
                    c[i] = a[i] * 2.0
                    print("element", i, float(c[i]))
                return c

            print("result", double(np.arange(3, dtype=np.float32)).tolist(), sys.argv[1])
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pyasc_mlir.debugger", str(script), "extra"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "element 0 0.0",
        "element 1 2.0",
        "element 2 4.0",
        "result [0.0, 2.0, 4.0] extra",
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "pyasc_mlir.debugger", str(tmp_path / "missing.py")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "no script" in proc.stderr and "Traceback" not in proc.stderr


@lang.parallel(num_workers=4)
def psum_debug(x: lang.float32[N]) -> lang.float32[1]:  # noqa: F821
    s = 0.0
    for i in lang.distributed_range(N):  # noqa: F821
        s += x[i]
    return lang.allreduce(s)


@lang.parallel(num_workers=2)
def pmax_debug16(x: lang.float16[N]):  # noqa: F821
    m = -60000.0
    for i in lang.distributed_range(N):  # noqa: F821
        m = lang.maximum(m, x[i])
    return lang.allreduce(m, op="max")


@lang.kernel
def two_debug16(x: lang.float16[N]):  # noqa: F821
    y = lang.empty_like(x)
    z = lang.empty((N,), lang.float32)  # noqa: F821
    for i in range(N):  # noqa: F821
        y[i] = x[i] + 1.0
        z[i] = x[i] * 2.0
    return y, z


@lang.kernel
def identity_debug(x: lang.float32[N]) -> lang.float32[N]:  # noqa: F821
    return x


def _kind(r):
    if isinstance(r, tuple):
        return tuple(_kind(t) for t in r)
    return type(r), tuple(r.shape), str(r.dtype)


@pytest.mark.filterwarnings("ignore::pyasc_mlir.PyAscPerformanceWarning")
@pytest.mark.parametrize("mode", ["1", "compare"])
def test_debug_mode_returns_what_the_compiled_kernel_returns(monkeypatch, mode):
    """Shapes, dtypes and kinds as the compiled kernel's: a ``lang.allreduce`` scalar is a
    one-element float32 array (fp16 and fp32 kernels), torch tensors in give torch tensors
    out, a returned argument is a copy; ``compare`` then finds no (shape) mismatch."""
    torch = pytest.importorskip("torch")
    n = 33
    x32 = np.linspace(-2.0, 3.0, n, dtype=np.float32)
    x16 = x32.astype(np.float16)
    cases = [
        (psum_debug, (x32,)),
        (pmax_debug16, (x16,)),
        (two_debug16, (x16,)),
        (identity_debug, (x32,)),
        (saxpy, (2.0, x16, x16)),
        (psum_debug, (torch.from_numpy(x32),)),
        (two_debug16, (torch.from_numpy(x16),)),
        (pmax_debug16, (torch.from_numpy(x16),)),
    ]
    want = [k(*a) for k, a in cases]  # the compiled kernels
    assert _kind(want[0]) == (np.ndarray, (1,), "float32")
    assert _kind(want[1]) == (np.ndarray, (1,), "float32")
    monkeypatch.setenv("PYASC_DEBUG", mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DebugMismatchWarning)
        got = [k(*a) for k, a in cases]
    for (k, _), g, w in zip(cases, got, want, strict=True):
        assert _kind(g) == _kind(w), (k.fn.__name__, _kind(g), _kind(w))
        gs, ws = (g, w) if isinstance(g, tuple) else ((g,), (w,))
        for gi, wi in zip(gs, ws, strict=True):
            gi, wi = np.asarray(gi, np.float64), np.asarray(wi, np.float64)
            assert_close(gi, wi, rtol=1e-2, atol=1e-2)
    assert got[0][0] == pytest.approx(float(x32.astype(np.float64).sum()), rel=1e-6)
    assert got[1][0] == x16.max()
    assert not np.shares_memory(got[3], x32)  # a copy, as the compiled kernel's result
