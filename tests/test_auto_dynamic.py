"""Automatic dynamic shapes (issue 13, item 6): a ``@pa.jit`` operator without ``dynamic=``
compiles a static kernel for its first shape, compiles ONCE more as ``dynamic=True`` on the
first shape change of a rank, and then never again for that rank (counted: lowering and g++).
An operator that cannot be dynamic (matmul) compiles statically per shape; ``dynamic=False``
and ``pa.compile`` keep exact static shapes. Results against NumPy on rows with tails, fp16
and fp32.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close, layernorm_ref

import pyasc_mlir as pa
from pyasc_mlir import pipeline
from pyasc_mlir.runtime import cpu

ROWS = (7, 1, 33, 513, 4097)


def residual_ln(x, r, w, b, eps=1e-5):
    h = x + r
    d = h - h.mean(-1, keepdim=True)
    return d * pa.rsqrt((d * d).mean(-1, keepdim=True) + eps) * w + b


def gelu_scale(x):
    return x * pa.sigmoid(x * 1.702) * 0.5


def matmul_bias(x, w, b):
    return x @ w + b


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Lowerings (frontend + passes) and g++ builds in this test."""
    n = {"lower": 0, "gxx": 0}
    lower, build = pipeline.lower, cpu.build_library

    def counting_lower(*a, **k):
        n["lower"] += 1
        return lower(*a, **k)

    def counting_build(*a, **k):
        n["gxx"] += 1
        return build(*a, **k)

    monkeypatch.setattr(pipeline, "lower", counting_lower)
    monkeypatch.setattr(cpu, "build_library", counting_build)
    return n


def ln_args(rows: int, dtype: str, hidden: int = 96) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(rows)
    x, r = (rng.standard_normal((rows, hidden)).astype(dtype) for _ in range(2))
    w, b = (rng.standard_normal(hidden).astype(dtype) for _ in range(2))
    return x, r, w, b


def ln_ref(x, r, w, b):
    h = x.astype(np.float32) + r.astype(np.float32)
    return layernorm_ref(h, w.astype(np.float32), b.astype(np.float32))


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_first_shape_change_compiles_once_then_never_again(dtype, counts):
    fn = pa.jit(residual_ln)
    first = ln_args(ROWS[0], dtype)
    assert_close(fn(*first), ln_ref(*first), dtype, reduction=True)
    static = fn.compile(*first)
    assert not static.dynamic  # the first shape: a static kernel
    assert counts["lower"] <= 1  # one lowering (none on a disk-cache hit)
    second = ln_args(ROWS[1], dtype)
    assert_close(fn(*second), ln_ref(*second), dtype, reduction=True)
    (ops,) = fn._dyn_ops.values()
    assert len(ops) == 1 and ops[0].dynamic  # the first change: one dynamic kernel
    before = dict(counts)
    dyn = ops[0]
    computed = dyn.tiling_computations
    for rows in ROWS[2:]:  # every later shape: host tiling only
        args = ln_args(rows, dtype)
        assert_close(fn(*args), ln_ref(*args), dtype, reduction=True)
    assert counts == before, "a third shape lowered or built again"
    assert dyn.tiling_computations == computed + len(ROWS) - 2
    assert_close(fn(*first), ln_ref(*first), dtype, reduction=True)
    assert counts == before and fn.compile(*first) is static  # the first shape keeps its kernel


def test_a_changed_reduced_dim_compiles_a_new_dynamic_kernel(counts):
    fn = pa.jit(residual_ln)
    for rows in (5, 6):
        args = ln_args(rows, "float32")
        assert_close(fn(*args), ln_ref(*args), "float32", reduction=True)
    wide = ln_args(9, "float32", hidden=128)  # the reduced dim is static in the kernel
    assert_close(fn(*wide), ln_ref(*wide), "float32", reduction=True)
    (ops,) = fn._dyn_ops.values()
    assert len(ops) == 2 and all(op.dynamic for op in ops)  # one more dynamic kernel
    compiled = fn.compilations  # (lowered, or a disk-cache hit of an earlier run)
    wide2 = ln_args(17, "float32", hidden=128)
    before = dict(counts)
    assert_close(fn(*wide2), ln_ref(*wide2), "float32", reduction=True)
    assert counts == before and fn.compilations == compiled  # rows change: tiling only
    assert len(ops) == 2


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_elementwise_all_tails(dtype, counts):
    fn = pa.jit(gelu_scale)
    seen = []
    for rows in ROWS:
        x = np.random.default_rng(rows).standard_normal((rows, 257)).astype(dtype)
        x.flat[:3] = [np.nan, -0.0, np.inf][: x.size]
        x64 = x.astype(np.float64)
        want = x64 / (1 + np.exp(-x64 * 1.702)) * 0.5
        assert_close(fn(x), want, dtype, equal_nan=True)
        seen.append(dict(counts))
    assert seen[-1] == seen[2]  # shapes 3.. cost nothing


def test_matmul_cannot_be_dynamic_and_compiles_per_shape(counts):
    fn = pa.jit(matmul_bias)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    lowered = []
    for m in (3, 5, 7, 9):
        x = rng.standard_normal((m, 16)).astype(np.float32)
        np.testing.assert_allclose(fn(x, w, b), x @ w + b, rtol=1e-4, atol=1e-4)
        lowered.append(counts["lower"])
    assert all(not op.dynamic for op in fn._compiled.values())
    assert fn._static_ranks and not fn._dyn_ops  # marked: no more dynamic attempts
    assert lowered[3] - lowered[2] <= 1  # a static compile per new shape, nothing more


def concat_matmul(xs, w):
    return pa.cat(xs, dim=-1) @ w


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_a_size_one_dim_that_must_match_another_is_not_widened(dtype):
    """A shape change to K = 1 (a size-1 dim of a tuple element that the matmul ties to w's
    rows) cannot take the earlier K: the kernel is compiled for the shapes as given (found by
    the clean-clone CI run: a matmul K mismatch error on valid arguments)."""
    fn = pa.jit(concat_matmul)
    rng = np.random.default_rng(1)
    for k in (7, 1, 33):
        xs = (rng.standard_normal((7, k)).astype(dtype), rng.standard_normal((7, 5)).astype(dtype))
        w = rng.standard_normal((k + 5, 16)).astype(dtype)
        ref = np.concatenate([x.astype(np.float64) for x in xs], -1) @ w.astype(np.float64)
        assert_close(fn(xs, w), ref, dtype, reduction=True)


def test_dynamic_false_and_compile_keep_exact_static_shapes(counts):
    fn = pa.jit(gelu_scale, dynamic=False)
    for rows in (3, 4, 5):
        x = np.full((rows, 40), 0.5, np.float32)
        assert fn(x).shape == (rows, 40)
    assert len(fn._compiled) == 3 and not fn._dyn_ops
    assert all(not op.dynamic for op in fn._compiled.values())
    op = pa.compile(gelu_scale, [pa.TensorDesc((3, 40), "float32")])
    assert not op.dynamic and op.inputs[0].shape == (3, 40)
    with pytest.raises(pa.PyAscUsageError, match="compiled for"):
        op(np.ones((4, 40), np.float32))
