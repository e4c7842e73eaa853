"""Fused norms with several outputs over long rows (issue 14, section 3): row passes.

add + RMSNorm returning ``h = x + r`` and ``rms_norm(h) * w``, and residual + LayerNorm
returning ``h`` and ``layer_norm(h) * w + b``, at widths 1..65536: ONE kernel, the CPU build and
the tile/ascendc interpreters bit for bit equal, within tolerance of a float64 NumPy reference
(on the inputs in their storage dtype). From 16384 on,
a whole row does not fit the Unified Buffer and ``asc-tile`` walks each row in chunks
(``passes/tile_row_passes.py``).

The interpreters are compared with the CPU build within ``MAX_ULP`` epsilons (same NaNs and
zero signs), not bit for bit: for float32 results their sums differ in the last bits already
for whole rows without row passes (LayerNorm at width 7: 2 ulps, more near 0; softmax at width
4096: 4 ulps), a discrepancy outside this feature. The norm is computed from ``h`` before its
rounding to the storage dtype (the program computes in float32 and rounds each result once).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from helpers import assert_close, seed_of

import pyasc_mlir as pa
from pyasc_mlir.platform import get_platform

F16, F32, BF16 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16)
WIDTHS = [1, 7, 33, 513, 4097, 16384, 65536]
LONG = 16384
"""From this width a whole row no longer fits UB: row passes."""
RMS_EPS, LN_EPS = 1e-6, 1e-5
STAGES = ("tile", "ascendc")
MAX_ULP = 4
"""Interpreters vs the CPU build: machine epsilons of the result dtype (module docstring)."""


def add_rms(x, r, w):
    h = x + r
    return h, h * pa.rsqrt(pa.mean(h * h, axis=-1, keepdim=True) + RMS_EPS) * w


def add_ln(x, r, w, b):
    h = x + r
    mu = pa.mean(h, -1, keepdim=True)
    d = h - mu
    v = pa.mean(d * d, -1, keepdim=True)
    return h, d * pa.rsqrt(v + LN_EPS) * w + b


def max_softmax(x):
    m = pa.max(x, -1, keepdim=True)
    e = pa.exp(x - m)
    return m, e / pa.sum(e, -1, keepdim=True)


def ref_add_rms(x, r, w):
    h = x.astype(np.float64) + r.astype(np.float64)
    return h, h / np.sqrt(np.mean(h * h, -1, keepdims=True) + RMS_EPS) * w.astype(np.float64)


def ref_add_ln(x, r, w, b):
    h = x.astype(np.float64) + r.astype(np.float64)
    d = h - h.mean(-1, keepdims=True)
    y = d / np.sqrt((d * d).mean(-1, keepdims=True) + LN_EPS)
    return h, y * w.astype(np.float64) + b.astype(np.float64)


def ref_max_softmax(x):
    x = x.astype(np.float64)
    m = x.max(-1, keepdims=True)
    e = np.exp(x - m)
    return m, e / e.sum(-1, keepdims=True)


OPS = {"add_rms": (add_rms, ref_add_rms, 3), "add_ln": (add_ln, ref_add_ln, 4)}
_CACHE: dict[tuple[Any, ...], pa.CompiledOp] = {}


def rows_for(width: int) -> int:
    return 3 if width < LONG else 2


def compiled(name: str, width: int, dtype: np.dtype) -> pa.CompiledOp:
    key = (name, width, dtype.name)
    if key not in _CACHE:
        fn, _, nargs = OPS[name]
        rows = rows_for(width)
        descs = [pa.TensorDesc((rows, width), dtype)] * 2
        descs += [pa.TensorDesc((width,), dtype)] * (nargs - 2)
        _CACHE[key] = pa.compile(fn, descs)
    return _CACHE[key]


def inputs(name: str, width: int, dtype: np.dtype) -> list[np.ndarray]:
    rng = np.random.default_rng(seed_of(name, width, dtype.name))
    rows = rows_for(width)
    x = rng.standard_normal((rows, width)) + 0.5  # a mean away from 0 (LayerNorm's two passes)
    r = rng.standard_normal((rows, width))
    w = rng.standard_normal(width) * 0.1 + 1.0
    b = rng.standard_normal(width) * 0.1
    arrs = [x, r, w, b][: OPS[name][2]]
    return [np.asarray(a, dtype=np.float32).astype(dtype) for a in arrs]


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.uint16 if a.dtype.itemsize == 2 else np.uint32)


def run_everywhere(op: pa.CompiledOp, *arrays: np.ndarray) -> list[np.ndarray]:
    """The CPU build's results, after checking that the tile and ascendc interpreters give
    the same NaNs and zero signs and values within ``MAX_ULP`` machine epsilons of it
    (relative, and absolute near 0; module docstring: why not bit for bit)."""
    cpu = [np.asarray(o) for o in op(*arrays)]
    for stage in STAGES:
        got = op.run_stage(stage, *arrays)
        assert len(got) == len(cpu)
        for g, c in zip(got, cpu, strict=True):
            assert g.dtype == c.dtype and g.shape == c.shape
            g64, c64 = g.astype(np.float64), c.astype(np.float64)
            np.testing.assert_array_equal(np.isnan(g64), np.isnan(c64), err_msg=stage)
            zero = (g64 == 0) & (c64 == 0)
            np.testing.assert_array_equal(np.signbit(g64[zero]), np.signbit(c64[zero]))
            tol = MAX_ULP * float(ml_dtypes.finfo(g.dtype).eps)
            ok = ~np.isnan(c64)
            np.testing.assert_allclose(g64[ok], c64[ok], rtol=tol, atol=tol, err_msg=stage)
    return cpu


def check_plan(op: pa.CompiledOp, width: int) -> None:
    """One kernel within UB; from ``LONG`` on, rows walked in chunks (one row per unit)."""
    info = op.info
    assert info["kernels"] == 1
    assert info["ub_bytes"] <= get_platform(info["platform"]).ub_usable_bytes
    tiling = info["tiling"]
    if width >= LONG:
        assert tiling["units"] == tiling["rows"] == rows_for(width)
        assert 0 < tiling["chunk_len"] < width
        assert tiling["chunk_len"] % 128 == 0
    modeled = info["modeled_us"]
    assert modeled["platform"] == info["platform"]
    assert modeled["total"] > 0
    assert modeled["total"] == pytest.approx(sum(modeled["kernels"].values()), abs=1e-3)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", [F16, F32], ids=["f16", "f32"])
@pytest.mark.parametrize("width", WIDTHS)
def test_fused_norm_two_outputs(name: str, dtype: np.dtype, width: int) -> None:
    op = compiled(name, width, dtype)
    check_plan(op, width)
    args = inputs(name, width, dtype)
    h, y = run_everywhere(op, *args)
    h_ref, y_ref = OPS[name][1](*args)
    assert_close(h, h_ref, dtype)
    assert_close(y, y_ref, dtype, reduction=True)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("width", [33, LONG, 65536])
def test_fused_norm_two_outputs_bf16(name: str, width: int) -> None:
    op = compiled(name, width, BF16)
    check_plan(op, width)
    args = inputs(name, width, BF16)
    h, y = run_everywhere(op, *args)
    h_ref, y_ref = OPS[name][1](*args)
    assert_close(h, h_ref, BF16)
    assert_close(y, y_ref, BF16, reduction=True)


@pytest.mark.parametrize("dtype", [F16, F32], ids=["f16", "f32"])
def test_special_values_in_long_rows(dtype: np.dtype) -> None:
    """A NaN poisons its row's norm; an inf gives NaN at its place and signed zeros elsewhere
    (``h / inf``); a row of ``-0`` gives ``h = -0`` and ``y = -0 * w``; other rows unharmed."""
    width = LONG
    op = compiled("add_rms", width, dtype)
    x, r, w = inputs("add_rms", width, dtype)
    x[0, 5000] = np.nan
    x[1, :] = -0.0
    r[1, :] = -0.0
    h, y = run_everywhere(op, x, r, w)
    _, y_ref = ref_add_rms(x, r, w)
    assert np.isnan(y[0]).all() and np.isnan(h[0, 5000])
    assert (bits(h[1]) == bits(np.full(width, -0.0, dtype))).all()
    np.testing.assert_array_equal(np.signbit(y[1]), np.signbit(y_ref[1]))
    assert (y[1] == 0).all()
    x, r, w = inputs("add_rms", width, dtype)
    x[1, 7] = np.inf
    h, y = run_everywhere(op, x, r, w)
    _, y_ref = ref_add_rms(x, r, w)
    assert np.isnan(y[1, 7]) and np.isinf(h[1, 7])
    assert (y[1, np.arange(width) != 7] == 0).all()
    np.testing.assert_array_equal(np.signbit(y[1]), np.signbit(y_ref[1]))
    assert_close(y[0], y_ref[0], dtype, reduction=True)


@pytest.mark.parametrize("width", [LONG, 65536])
def test_row_max_and_softmax_long_rows(width: int) -> None:
    """A max reduction (NaN-guarded, from ``-inf``) chunked too, and a per-row result (the
    row max, stored once per row): three passes (max, sum of exp, normalise)."""
    dtype = F32
    op = pa.compile(max_softmax, [pa.TensorDesc((2, width), dtype)])
    check_plan(op, width)
    rng = np.random.default_rng(seed_of("softmax", width))
    x = (rng.standard_normal((2, width)) * 3).astype(dtype)
    x[1, width - 3] = 40.0  # the max in the last chunk
    m, s = run_everywhere(op, x)
    m_ref, s_ref = ref_max_softmax(x)
    np.testing.assert_array_equal(m, m_ref.astype(dtype))
    assert_close(s, s_ref, dtype, reduction=True)
    x[0, 9] = np.nan
    m, s = run_everywhere(op, x)
    assert np.isnan(m[0, 0]) and np.isnan(s[0]).all()
    assert m[1, 0] == np.float32(40.0)


def test_modeled_time_grows_with_the_row() -> None:
    """The cost model walks the chunk loops: 4x the row, more modeled time (and the two
    passes over the inputs cost more than one read: more than the 16384-wide time)."""
    short = compiled("add_rms", LONG, F16).info["modeled_us"]["total"]
    long = compiled("add_rms", 65536, F16).info["modeled_us"]["total"]
    assert long > 2 * short


def test_whole_rows_when_they_fit() -> None:
    """Rows that fit UB whole keep the single-pass kernel (no chunking)."""
    tiling = compiled("add_rms", 4097, F32).info["tiling"]
    assert tiling["chunk_len"] == tiling["l"] == 4097
