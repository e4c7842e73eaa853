"""Matmul end to end from Python: frontend -> asc-lower-cube -> Ascend C -> CPU build, and every
IR stage in the interpreter, against numpy with f32 accumulation (issue acceptance: M, N, K =
513, 17, 100)."""

from __future__ import annotations

import numpy as np
import pytest

import pyasc_mlir as pa

RNG = np.random.default_rng(11)


def linear(x, w):
    return x @ w


def linear_t(x, w, b):
    return pa.matmul(x, w, transpose_b=True) + b


def _ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) @ b.astype(np.float64)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_513_17_100_on_every_stage_and_the_cpu_build(dtype: str) -> None:
    x = RNG.uniform(-1, 1, (513, 100)).astype(dtype)
    w = RNG.uniform(-1, 1, (100, 17)).astype(dtype)
    op = pa.compile(linear, [pa.TensorDesc(x.shape, dtype), pa.TensorDesc(w.shape, dtype)])
    assert op.info["kernels"] == 1
    ref = _ref(x, w)
    # f32 accumulation: the only rounding beyond f32 sums is the f16 output itself
    tol = 2e-2 if dtype == "float16" else 1e-4
    np.testing.assert_allclose(op(x, w), ref, rtol=tol, atol=tol)
    for stage in ("tensor", "tile", "ascendc"):
        (got,) = op.run_stage(stage, x, w)
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol, err_msg=stage)


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (15, 513, 17), (100, 15, 513), (7, 33, 4097)])
def test_transposed_weight_with_bias_cpu_build(m: int, n: int, k: int) -> None:
    x = RNG.uniform(-1, 1, (m, k)).astype(np.float16)
    w = RNG.uniform(-1, 1, (n, k)).astype(np.float16)
    b = RNG.uniform(-1, 1, (n,)).astype(np.float16)
    got = pa.jit(linear_t)(x, w, b)
    ref = _ref(x, w.T) + b.astype(np.float64)
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.sqrt(k))
