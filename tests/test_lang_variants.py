"""``@lang.cube_kernel``, ``@lang.fused_kernel`` (the ``fused_mlp`` acceptance example),
``precision="mixed"``, ``dynamic_shape=True`` with ``lang.Tensor``, the one-kernel SwishGLU
over a 2D-wide input, and lang kernels with the ``pa`` tools (profiler, memory and numeric
checks, ``pa.compile``/``load_op``, ``pa.custom_op``, autotuning). Values vs NumPy on tails."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from helpers import assert_close, line_of, seed_of
from lang_kernels import fused_mlp, fused_mlp32, lowered, run_stage, swishglu16, swishglu32

import pyasc_mlir as pa
import pyasc_mlir.language as lang

# ruff: noqa: F821  (the dim names are bare on purpose)

HERE = __file__


def _rand(shape, dtype, *key, scale=1.0):
    rng = np.random.default_rng(seed_of(*key, shape, dtype))
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _gelu(v):
    erf = np.vectorize(math.erf)
    return 0.5 * v * (1.0 + erf(v / math.sqrt(2.0)))


# ------------------------------------------------------------------- fused / cube kernels


@pytest.mark.parametrize("m", [1, 7, 33, 513])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_fused_mlp_fuses_gelu_into_the_first_matmul(m, dtype):
    kern = fused_mlp if dtype == "float16" else fused_mlp32
    x = _rand((m, 64), dtype, "x")
    w1 = _rand((64, 48), dtype, "w1", scale=0.125)
    w2 = _rand((48, 33), dtype, "w2", scale=0.125)
    out = kern(x, w1, w2)
    ref = _gelu(x.astype(np.float64) @ w1).astype(dtype).astype(np.float64) @ w2
    assert_close(out, ref, dtype, reduction=True)
    fusion = kern.compile(x, w1, w2).info["fusion"]
    assert [k["unit"] for k in fusion] == ["cube", "cube"]  # no vector kernel for gelu
    gelu_line = line_of(kern.fn, "h[i, j] = gelu_erf(acc)")  # the epilogue's line
    assert "matmul" in fusion[0]["ops"] and gelu_line in fusion[0]["lines"]
    assert gelu_line not in fusion[1]["lines"]


@lang.fused_kernel
def matmul_then_row_sum(a: lang.float32[M, K], b: lang.float32[K, N]) -> lang.float32[M]:
    c = lang.empty((M, N), lang.float32)
    for i in range(M):
        for j in range(N):
            acc = 0.0
            for k in range(K):
                acc += a[i, k] * b[k, j]
            c[i, j] = acc
    s = lang.zeros(M, lang.float32)
    for i in range(M):
        for j in range(N):
            s[i] += lang.exp(c[i, j])  # WARN
    return s


def test_fused_kernel_warns_where_work_did_not_fuse():
    a, b = _rand((7, 32), "float32", "a", scale=0.25), _rand((32, 33), "float32", "b", scale=0.25)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = matmul_then_row_sum(a, b)
    assert_close(out, np.exp(a.astype(np.float64) @ b).sum(1), "float32", reduction=True)
    fusion = matmul_then_row_sum.compile(a, b).info["fusion"]
    units = [k["unit"] for k in fusion]
    assert units[0] == "cube" and "exp" in fusion[0]["ops"]  # exp: the matmul's epilogue
    assert "vector" in units[1:] and any("sum" in k["ops"] for k in fusion[1:])
    fw = [w for w in got if issubclass(w.category, lang.FusionWarning)]
    assert len(fw) == units.count("vector")  # one per kernel that did not fuse
    assert all(w.lineno == line_of(matmul_then_row_sum.fn, "# WARN") for w in fw)
    assert "did not fuse into a matmul's epilogue" in str(fw[0].message)


@lang.cube_kernel
def cube_mm(a: lang.float16[M, K], b: lang.float16[K, N]) -> lang.float16[M, N]:
    c = lang.empty((M, N), lang.float16)
    for i in range(M):
        for j in range(N):
            acc = 0.0
            for k in range(K):
                acc += a[i, k] * b[k, j]
            c[i, j] = acc
    return c


@lang.cube_kernel  # ERR
def not_cube(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        y[i] = x[i] * 2.0
    return y


def registered(f):
    """A user's own decorator (above @lang.cube_kernel)."""
    return f


@registered
@lang.cube_kernel(backend="interp")  # ERR
def not_cube_registered(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        y[i] = x[i] * 2.0
    return y


def test_not_cube_is_located_at_the_cube_kernel_decorator():
    """At ``@lang.cube_kernel`` itself, not at the first decorator of the stack (a user's
    own above it), also in a nested definition (indented source)."""
    with pytest.raises(pa.PyAscCompileError) as info:
        not_cube_registered(np.ones(7, np.float32))
    exc = info.value
    line = line_of(not_cube_registered.fn, "# ERR")
    assert (exc.loc.file, exc.loc.line, exc.loc.col) == (HERE, line, 1), str(exc)
    assert "@lang.cube_kernel(backend=" in str(exc).splitlines()[1]

    @registered
    @registered
    @lang.cube_kernel  # HERE
    def nested(x: lang.float32[N]) -> lang.float32[N]:
        y = lang.empty_like(x)
        for i in range(N):
            y[i] = x[i] * 2.0
        return y

    with pytest.raises(pa.PyAscCompileError) as info:
        nested(np.ones(3, np.float32))
    exc = info.value
    line = line_of(test_not_cube_is_located_at_the_cube_kernel_decorator, "# HERE")
    assert (exc.loc.file, exc.loc.line, exc.loc.col) == (HERE, line, 5), str(exc)


def test_cube_kernel_runs_on_the_cube_or_is_a_located_error():
    a, b = _rand((33, 16), "float16", "a"), _rand((16, 7), "float16", "b")
    assert_close(cube_mm(a, b), a.astype(np.float64) @ b, "float16", reduction=True)
    assert "AIC" in cube_mm.compile(a, b).info["kernel_type"]
    with pytest.raises(pa.PyAscCompileError) as info:
        not_cube(np.ones(7, np.float32))
    exc = info.value
    assert exc.loc.file == HERE and exc.loc.line == line_of(not_cube.fn, "# ERR")
    assert "compiled to no Cube matmul (its kernels: AIV_ONLY)" in exc.message


# ------------------------------------------------------------------------ mixed precision

MIXED_TOL = {"rtol": 2e-3, "atol": 2e-3}
"""precision="mixed" vs a float64 reference: the inputs and every stored value are rounded
to float16 (relative error 2^-11 each), arithmetic in f32: a few fp16 ulps."""


def _mixed_body(x, b, y, n, d):
    for i in range(n):
        for j in range(d):
            y[i, j] = lang.tanh(x[i, j]) * 2.0 + b[j]
    return y


@lang.kernel(precision="mixed")
def mixed(x: lang.float32[N, D], b: lang.float32[D]) -> lang.float32[N, D]:
    return _mixed_body(x, b, lang.empty_like(x), N, D)


@lang.kernel
def plain16(x: lang.float16[N, D], b: lang.float16[D]) -> lang.float16[N, D]:
    return _mixed_body(x, b, lang.empty_like(x), N, D)


@pytest.mark.parametrize("shape", [(1, 1), (7, 33), (33, 513), (513, 7)], ids=str)
def test_mixed_precision_is_the_fp16_kernel_with_fp32_in_and_out(shape):
    x, b = _rand(shape, "float32", "x"), _rand(shape[1:], "float32", "b")
    stages, info = lowered(mixed, x, b)
    assert info["kernels"] == 1
    assert info["gm_bytes"] == 4 * (2 * x.size + b.size)  # fp32 at the interface
    assert [o["dtype"] for o in info["outputs"]] == ["float32"]
    (out,) = run_stage(stages, "tile", mixed, x, b)
    assert out.dtype == np.float32
    ref16 = plain16(x.astype(np.float16), b.astype(np.float16)).astype(np.float32)
    np.testing.assert_allclose(out, ref16, rtol=1e-3, atol=1e-3)  # <= 1 fp16 ulp
    ref = np.tanh(x.astype(np.float64)) * 2.0 + b
    np.testing.assert_allclose(out, ref, **MIXED_TOL)


def test_mixed_precision_on_the_cpu_build_and_unknown_precision():
    x, b = _rand((33, 513), "float32", "x"), _rand((513,), "float32", "b")
    out = mixed(x, b)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.tanh(x.astype(np.float64)) * 2.0 + b, **MIXED_TOL)
    with pytest.raises(pa.PyAscCompileError) as info:
        lang.kernel(precision="half")  # ERR
    assert info.value.loc.line == line_of(
        test_mixed_precision_on_the_cpu_build_and_unknown_precision, "# ERR"
    )
    assert "unknown precision 'half'" in info.value.message


# ------------------------------------------------------------------------- dynamic shapes


@lang.kernel(dynamic_shape=True)
def dyn_rows(x: lang.Tensor[lang.float32, 2], b: lang.Tensor[lang.float32]) -> lang.Tensor:
    y = lang.empty_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            y[i, j] = lang.exp(x[i, j]) + b[j]
    return y


@lang.kernel(dynamic_shape=True)
def dyn_centered(x: lang.Tensor[lang.float16]) -> lang.Tensor:
    """x.shape[0] used as a number (the mean): compiled per shape, never the wrong size."""
    y = lang.empty_like(x)
    n = x.shape[0]
    t = 0.0
    for i in range(n):
        t += x[i]
    for i in range(n):
        y[i] = x[i] - t / n
    return y


@lang.kernel(dynamic_shape=True)
def dyn_branch(x: lang.Tensor[lang.float32, 1]) -> lang.Tensor:
    """A compile-time branch on a size: compiled per shape."""
    y = lang.empty_like(x)
    for i in range(x.shape[0]):
        y[i] = x[i] * (2.0 if x.shape[0] > 16 else 3.0)
    return y


def test_dynamic_shape_compiles_once_for_many_sizes():
    b = _rand((65,), "float32", "b")
    for n in (7, 33, 513):
        x = _rand((n, 65), "float32", "x", n)
        assert_close(dyn_rows(x, b), np.exp(x.astype(np.float64)) + b, "float32")
    assert dyn_rows.compilations == 1  # 7, 33 and 513 rows: one kernel
    for n in (1, 7, 33):
        x = _rand((n,), "float16", "c", n)
        ref = x.astype(np.float64) - x.astype(np.float64).mean()
        assert_close(dyn_centered(x), ref, "float16", reduction=True)
    for n in (7, 33):
        x = _rand((n,), "float32", "br", n)
        assert_close(dyn_branch(x), x * (2.0 if n > 16 else 3.0), "float32")
    with pytest.raises(pa.PyAscCompileError, match="is float16, declared"):
        dyn_rows(np.ones((2, 2), np.float16), np.ones(2, np.float16))


# ---------------------------------------------------------------------------- SwishGLU


@pytest.mark.parametrize("n", [1, 7, 33, 513])
@pytest.mark.parametrize("d", [7, 33])  # d = 1 (x of width 2): 3 kernels, not folded
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_swishglu_over_a_2d_wide_input_is_one_vector_kernel(n, d, dtype):
    kern = swishglu16 if dtype == "float16" else swishglu32
    x = _rand((n, 2 * d), dtype, "x")
    stages, info = lowered(kern, x)
    assert info["kernels"] == 1 and info["kernel_type"] == "AIV_ONLY"
    assert info["gm_bytes"] == x.nbytes + x.nbytes // 2  # x read once, y written once
    (out,) = run_stage(stages, "tile", kern, x)
    g, u = x[:, :d].astype(np.float64), x[:, d:].astype(np.float64)
    assert_close(out, g / (1.0 + np.exp(-g)) * u, dtype)


def test_swishglu_on_the_cpu_build():
    x = _rand((33, 1026), "float16", "x")
    g, u = x[:, :513].astype(np.float64), x[:, 513:].astype(np.float64)
    assert_close(swishglu16(x), g / (1.0 + np.exp(-g)) * u, "float16")


# ----------------------------------------------------------------------------- pa tools


@lang.kernel
def log_rows(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        y[i] = lang.log(x[i])  # NAN
    return y


def test_profiler_and_checks_with_lang_kernels():
    x = np.abs(_rand((513,), "float32", "x")) + 0.5
    with lang.profiler() as prof:
        log_rows(x)
    assert [(r["name"], r["calls"]) for r in prof.report()] == [("log_rows", 1)]
    with lang.enable_memory_check():
        assert_close(log_rows(x), np.log(x.astype(np.float64)), "float32")
    bad = x.copy()
    bad[5] = -1.0
    with lang.enable_numeric_check(), pytest.raises(pa.NumericCheckError) as info:
        log_rows(bad)
    assert info.value.loc is not None and info.value.loc.line == line_of(log_rows.fn, "# NAN")


def test_compile_load_op_custom_op_and_autotune(tmp_path):
    x, b = _rand((7, 33), "float32", "x"), _rand((33,), "float32", "b")
    ref = np.tanh(x.astype(np.float64)) * 2.0 + b
    op = pa.compile(
        mixed,
        [pa.TensorDesc((7, 33), "float32"), pa.TensorDesc((33,), "float32")],
        output_dir=tmp_path / "mixed",
    )
    loaded = pa.load_op(tmp_path / "mixed")
    np.testing.assert_allclose(loaded(x, b), ref, **MIXED_TOL)
    np.testing.assert_array_equal(loaded(x, b), op(x, b))
    torch = pytest.importorskip("torch")
    from pyasc_mlir.torch import custom_op

    top = custom_op(plain16, name="lang_plain16")
    xt, bt = torch.from_numpy(x.astype(np.float16)), torch.from_numpy(b.astype(np.float16))
    got = top(xt, bt)
    assert isinstance(got, torch.Tensor)
    np.testing.assert_array_equal(got.numpy(), plain16(x.astype(np.float16), b.astype(np.float16)))
    tuned = lang.kernel(autotune=True)(_tuned_body)
    assert_close(tuned(x), np.exp(x.astype(np.float64)), "float32")


def _tuned_body(x: lang.float32[N, D]) -> lang.float32[N, D]:
    y = lang.empty_like(x)
    for i in range(N):
        for j in range(D):
            y[i, j] = lang.exp(x[i, j])
    return y
