"""Explicit tiles and slices in the kernel language (README "Kernel language", "Explicit
tiles"): blocked loops with ``lang.local_buffer``/``load_2d``/``store_2d`` run on the CPU build
with the person's block sizes (the vector tile, the Cube's baseM/baseN/baseK), tails
included, against NumPy; the capacity proof's error; double buffering off; slices."""

from __future__ import annotations

import lang_kernels as K
import numpy as np
import pytest
from helpers import assert_close, seed_of

import pyasc_mlir.language as lang
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.language import N


def _rand(shape, dtype, *key):
    rng = np.random.default_rng(seed_of(*key, shape, dtype))
    return (rng.standard_normal(shape) * 2.0).astype(dtype)


def _f64(x):
    return np.asarray(x).astype(np.float64)


@pytest.mark.parametrize(("n", "block"), [(1000, 256), (7, 128), (4097, 512)])
def test_blocked_add_uses_the_block(n, block):
    a, b = _rand((n,), np.float16, "ba", 0), _rand((n,), np.float16, "ba", 1)
    op = K.blocked_add.compile(a, b, block)
    assert op.info["tiling"]["chunk_len"] == min(block, n)  # the person's block: the UB tile
    assert_close(op(a, b), _f64(a) + b, "float16")


def test_blocked_scale_rows_fp32():
    x = _rand((33, 512), np.float32, "bs")  # 33 rows in blocks of 4: a tail block of 1 row
    op = K.blocked_scale.compile(x, 0.5, 4)
    assert op.info["tiling"]["chunk_len"] == 4 * 512
    assert_close(op(x), 0.5 * _f64(x) + 1.0, "float32")


def test_blocked_row_sum_tiles_the_rows():
    x = _rand((100, 513), np.float32, "rs")  # 100 rows in blocks of 8: a tail of 4
    op = K.blocked_row_sum.compile(x, 8)
    assert op.info["tiling"]["tile_units"] == 8
    assert_close(op(x), _f64(x).sum(1), "float32")


def test_double_buffer_off():
    a, b = _rand((1000,), np.float16, "db", 0), _rand((1000,), np.float16, "db", 1)
    single, double = K.blocked_add_single.compile(a, b, 256), K.blocked_add.compile(a, b, 256)
    assert single.info["tiling"]["chunk_len"] == 256
    assert single.info["ub_bytes"] < double.info["ub_bytes"]  # one copy of each queue
    assert_close(single(a, b), _f64(a) + b, "float16")


@pytest.mark.parametrize(
    ("mkn", "blocks"), [((33, 65, 513), (32, 64, 32)), ((128, 64, 256), (64, 128, 32))]
)
def test_blocked_matmul_uses_the_blocks(mkn, blocks):
    m, k, n = mkn
    a, b = _rand((m, k), np.float16, "bm", 0), _rand((k, n), np.float16, "bm", 1)
    op = K.blocked_matmul.compile(a, b, *blocks)
    t = op.info["tiling"]
    assert (t["mm0_baseM"], t["mm0_baseN"], t["mm0_baseK"]) == blocks
    assert (t["tile_m"], t["tile_n"]) == blocks[:2]
    assert_close(op(a, b), _f64(a) @ _f64(b), "float16")


def test_ub_overflow_names_the_buffers():
    a = np.zeros((1 << 16,), np.float32)
    with pytest.raises(PyAscCompileError) as e:
        K.ub_overflow(a, 32768)
    msg = str(e.value)
    assert "xa [32768] float32 = 262144 B" in msg and "xc [32768] float32" in msg
    assert "total 524288 > capacity" in msg and "double-buffered" in msg
    assert "lang_kernels.py" in msg and "xa = lang.local_buffer" in msg  # at the buffer
    assert "smaller block" in msg


@pytest.mark.parametrize(
    ("width", "hint"),
    [
        (
            40000,
            "no smaller block fits: with 1 element along the blocked axes the buffers "
            "still need 640000 bytes (x2: double-buffered), so the dims that are not blocked must "
            "shrink: t [16, 40000]: axis 1 (40000 elements); u [16, 40000]: axis 1 (40000 "
            "elements); block them too",
        ),
        (
            16000,
            "even a block of 1 along the blocked axes needs 256000 bytes double-buffered: "
            "use @lang.kernel(double_buffer=False), or shrink the dims that are not blocked "
            "(t [16, 16000]: axis 1 (16000 elements)",
        ),
        (4000, "use a smaller block (e.g. half of it), or @lang.kernel(double_buffer=False)"),
    ],
)
def test_ub_overflow_hint_says_which_dim_must_shrink(width, hint):
    """When one row of the buffers alone exceeds UB (blocks of rows, rows too wide), a
    smaller block cannot help: the hint names the axis that is not blocked."""
    with pytest.raises(PyAscCompileError) as e:
        K.blocked_scale(np.zeros((64, width), np.float32), 0.5, 16)
    assert e.value.hint is not None and hint in e.value.hint, e.value.hint
    assert ("half of it" in e.value.hint) == (width == 4000)


def test_slices_vs_numpy():
    x = _rand((7, 33), np.float32, "sl")
    ref = 2.0 * _f64(x) + _f64(x) * _f64(x)
    assert_close(K.slices(x), ref, "float32")
    v = _rand((513,), np.float32, "sr")
    assert_close(K.slice_reads(v), _f64(v)[0:2] + _f64(v)[511:513], "float32")


def test_a_block_that_is_not_a_tile_is_located():
    a = np.zeros((1000,), np.float16)
    with pytest.raises(PyAscCompileError) as e:
        K.blocked_add(a, a, 100)
    assert "multiple of 128 elements" in str(e.value)
    assert "lang_kernels.py" in str(e.value)


def k_once_per_block(a: lang.float32[N]) -> lang.float32[N]:
    c = lang.global_buffer((N,), lang.float32)
    xa = lang.local_buffer((128,), lang.float32)
    xc = lang.local_buffer((128,), lang.float32)
    for i in lang.range(0, N, 128):
        lang.load_2d(a[i : i + 128], xa)
        for j in range(128):
            xc[j] = xa[j]
        xc[0] = 1.0  # ERR
        lang.store_2d(xc, c[i : i + 128])
    return c


def k_wrong_extent(a: lang.float32[N]) -> lang.float32[N]:
    c = lang.global_buffer((N,), lang.float32)
    xa = lang.local_buffer((128,), lang.float32)
    for i in lang.range(0, N, 128):
        lang.load_2d(a[i : i + 64], xa)  # ERR
        lang.store_2d(xa, c[i : i + 128])
    return c


def k_inner_range(a: lang.float32[N]) -> lang.float32[N]:
    c = lang.global_buffer((N,), lang.float32)
    xa = lang.local_buffer((128,), lang.float32)
    xc = lang.local_buffer((128,), lang.float32)
    for i in lang.range(0, N, 128):
        lang.load_2d(a[i : i + 128], xa)
        for j in range(64):  # ERR
            xc[j] = xa[j]
        lang.store_2d(xc, c[i : i + 128])
    return c


def k_runtime_slice(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        y[i : i + 1] = x[i : i + 1]  # ERR
    return y


ERRORS = {
    k_once_per_block: ("this write runs once per block of the blocked loop 'i'", "move it"),
    k_wrong_extent: ("axis 0 of the slice has 64 elements, buffer 'xa' has 128", "extent"),
    k_inner_range: ("must run over range(128), not range(0, 64)", "for j in range(128)"),
    k_runtime_slice: ("slice bounds must be compile-time ints", "x[0:2]"),
}


@pytest.mark.parametrize("fn", list(ERRORS), ids=lambda f: f.__name__)
def test_tile_misuse_is_located(fn):
    msg, hint = ERRORS[fn]
    x = np.zeros((300,), np.float32)
    with pytest.raises(PyAscCompileError) as e:
        lang.kernel(fn)(x)
    assert msg in e.value.message and hint in e.value.hint
    lines = open(__file__).read().splitlines()
    assert e.value.loc is not None and "# ERR" in lines[e.value.loc.line - 1], str(e.value)


def test_debugger_runs_the_blocked_kernel(monkeypatch):
    monkeypatch.setenv("PYASC_DEBUG", "1")
    a, b = _rand((1000,), np.float16, "dbg", 0), _rand((1000,), np.float16, "dbg", 1)
    assert_close(K.blocked_add_single(a, b, 256), _f64(a) + b, "float16")


def test_debugger_blocked_matmul_tails(monkeypatch):
    monkeypatch.setenv("PYASC_DEBUG", "1")
    a, b = _rand((17, 20), np.float16, "dm", 0), _rand((20, 33), np.float16, "dm", 1)
    got = _f64(K.blocked_matmul(a, b, 16, 16, 16))  # NumPy multiplies fp16 scalars in fp16
    np.testing.assert_allclose(got, _f64(a) @ _f64(b), rtol=2e-2, atol=2e-2)  # tail K: zeros
