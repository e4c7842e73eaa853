"""Regression tests for the known failure kinds of vector kernels, each checked for the right
values on the CPU build (``op(...)``): 32-byte misaligned rows, work split unevenly over cores,
fp16 overflow in softmax, catastrophic cancellation in LayerNorm variance, reductions over
widths that are not powers of two, and broadcasting (with a clear error where it is invalid).

(The 2^31 + 64 element tiling case is the lit test
``lit_tests/passes/asc-tile/int64-offsets.mlir``.)
"""

from __future__ import annotations

import linecache

import helpers
import numpy as np
import pytest
from helpers import softmax_ref

import pyasc_mlir as pa

F16, F32 = np.float16, np.float32
RNG = np.random.default_rng(2024)


def f64(a):
    return np.asarray(a, np.float64)


# -------------------------------------------------------------------------------- softmax

softmax = pa.jit(helpers.softmax)


def test_softmax_row_of_513_halves():
    """513 fp16 values = 1026 bytes per row: not a multiple of the 32-byte DataBlock."""
    x = RNG.uniform(-3, 3, (6, 513)).astype(F16)
    op = softmax.compile(x)
    y = op(x)
    assert y.dtype == F16 and y.shape == (6, 513)
    np.testing.assert_allclose(f64(y), softmax_ref(f64(x)), rtol=2e-3, atol=1e-5)
    np.testing.assert_allclose(f64(y).sum(-1), 1.0, atol=2e-3)
    # the padding of the last 32-byte block must not leak into the row: a huge value right
    # after each row in memory would win the max if the kernel read past the row
    big = np.full((6, 514), 60000, F16)
    big[:, :513] = x
    np.testing.assert_array_equal(op(big[:, :513]), y)


def test_softmax_fp16_inputs_reaching_15():
    """exp(15) = 3.3e6 overflows fp16 (max 65504) unless the row max is subtracted first."""
    x = RNG.uniform(-15, 15, (6, 513)).astype(F16)
    x[:, 7] = 15.0
    x[0, :] = 15.0  # a row of equal maxima: 1/513 each
    y = softmax(x)
    assert np.isfinite(f64(y)).all()
    np.testing.assert_allclose(f64(y), softmax_ref(f64(x)), rtol=2e-3, atol=1e-6)
    np.testing.assert_allclose(f64(y[0]), 1 / 513, rtol=1e-3)


# --------------------------------------------------------------------- split across cores


def add(x, y):
    return x + y


@pytest.mark.parametrize("dtype", [F16, F32])
def test_elementwise_add_of_13243_elements_split_across_cores(dtype):
    n = 13243  # prime: no core gets an even share, the last tile is short
    x = RNG.uniform(-100, 100, n).astype(dtype)
    y = RNG.uniform(-100, 100, n).astype(dtype)
    op = pa.compile(add, [pa.TensorDesc((n,), dtype)] * 2)
    assert op.info["block_dim"] > 1
    np.testing.assert_array_equal(op(x, y), x + y)  # fp16: f32 add rounded once, as NumPy


# ---------------------------------------------------------------------------- LayerNorm


@pa.jit
def layernorm_stats(x, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    d = x - mu
    var = (d * d).mean(-1, keepdim=True)
    return d * pa.rsqrt(var + eps), var


def test_layernorm_variance_of_offset_rows_stays_nonnegative():
    """Rows 1000 + 1e-3 * randn(4096) in fp32: E[x^2] - E[x]^2 cancels catastrophically
    (1e6 - 1e6 with fp32 ulp 0.06) and can go negative; E[(x - mean)^2] stays ~1e-6."""
    x = (1000 + 1e-3 * RNG.standard_normal((8, 4096))).astype(F32)
    y, var = layernorm_stats(x)
    x64 = f64(x)
    mu = x64.mean(-1, keepdims=True)
    var64 = ((x64 - mu) ** 2).mean(-1, keepdims=True)
    assert var.shape == (8, 1) and np.isfinite(var).all() and (var >= 0).all()
    np.testing.assert_allclose(f64(var), var64, rtol=2e-2)
    assert np.isfinite(y).all()
    np.testing.assert_allclose(f64(y), (x64 - mu) / np.sqrt(var64 + 1e-5), atol=2e-2)


# ------------------------------------------------------------------ reduction widths


def reductions(x):
    return x.sum(-1), x.max(-1), x.min(-1), x.mean(-1)


@pytest.mark.parametrize("width", [3, 100, 1000, 1023])
def test_reductions_over_non_power_of_two_widths(width):
    x = RNG.uniform(-2, 2, (5, width)).astype(F16)
    s, mx, mn, mean = pa.compile(reductions, [pa.TensorDesc.of(x)])(x)
    x64 = f64(x)
    np.testing.assert_array_equal(mx, x.max(-1))
    np.testing.assert_array_equal(mn, x.min(-1))
    # f32 accumulation, one fp16 rounding of the result
    np.testing.assert_allclose(f64(s), x64.sum(-1), rtol=1e-3, atol=2e-3)
    np.testing.assert_allclose(f64(mean), x64.mean(-1), rtol=1e-3, atol=1e-4)
    # zero padding of the last block must not change max/min of all-negative rows
    neg = -np.abs(x) - F16(1)
    _, mx, _, _ = pa.compile(reductions, [pa.TensorDesc.of(x)])(neg)
    np.testing.assert_array_equal(mx, neg.max(-1))


# ---------------------------------------------------------------------------- broadcasting


def broadcast_scale(a, b, s):
    return (a + b) * s + 0.5


def test_broadcast_4x1x7_plus_1x5x1_and_scalars():
    a = RNG.standard_normal((4, 1, 7)).astype(F32)
    b = RNG.standard_normal((1, 5, 1)).astype(F32)
    s = np.array(3.0, F32)  # a 0-d tensor, and Python scalars
    y = pa.compile(broadcast_scale, [pa.TensorDesc.of(v) for v in (a, b, s)])(a, b, s)
    assert y.shape == (4, 5, 7)
    np.testing.assert_allclose(y, (a + b) * s + F32(0.5), rtol=1e-6)


@pa.jit
def bad_broadcast(x, y):
    return x + y  # the error line


def test_broadcast_3x4_plus_5_is_a_clear_error():
    with pytest.raises(pa.PyAscCompileError) as info:
        bad_broadcast(np.ones((3, 4), F16), np.ones(5, F16))
    err = info.value
    line = next(
        n
        for n, t in enumerate(open(__file__).read().splitlines(), 1)
        if t.endswith("# the error line")
    )
    assert err.loc.file == __file__ and err.loc.line == line
    text = str(err)
    assert text.startswith(f"{__file__}:{line}:12: error: cannot broadcast shapes [3, 4] and [5]")
    assert f"    {linecache.getline(__file__, line).rstrip()}" in text
    assert "hint:" in text


def wave(x):
    return pa.sin(x) * 0.5 + pa.cos(x * 2.0)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_sin_cos_every_stage_and_cpu(dtype):
    x = np.random.default_rng(3).uniform(-6, 6, (7, 513)).astype(dtype)
    op = pa.compile(wave, [pa.TensorDesc(x.shape, dtype)])
    xd = x.astype(np.float64)
    ref = (np.sin(xd) * 0.5 + np.cos(xd * 2)).astype(dtype).astype(np.float64)
    tol = 1e-3 if dtype == "float16" else 1e-5
    for got in (op(x), *(op.run_stage(s, x)[0] for s in ("tensor", "tile", "ascendc"))):
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol, atol=tol)
