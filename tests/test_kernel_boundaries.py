"""Where kernels split, end to end on the CPU build against numpy: reshapes that regroup dims
(a copy kernel), head merges feeding another projection (written merged, read contiguous), and
the same program giving the same kernels whatever the shape."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import softmax_ref

import pyasc_mlir as pa

RNG = np.random.default_rng(5)


def regroup(a):
    return a.reshape(16, 2)


def regroup_then_scale(a):
    return a.reshape(16, 2) * 2.0


def scale_then_regroup(a):
    return (a * 2.0).reshape(2, 16)


@pytest.mark.parametrize(
    ("fn", "ref"),
    [
        (regroup, lambda a: a.reshape(16, 2)),
        (regroup_then_scale, lambda a: a.reshape(16, 2) * 2),
        (scale_then_regroup, lambda a: (a * 2).reshape(2, 16)),
    ],
)
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_reshape_regrouping_dims_runs(fn, ref, dtype) -> None:
    a = RNG.standard_normal((4, 8)).astype(dtype)
    np.testing.assert_array_equal(pa.jit(fn)(a), ref(a))


def context_projection(p, v, wo, bo, res):
    B, H, S, _ = p.shape
    vh = v.reshape(B, S, 4, 16).permute(0, 2, 1, 3)
    o = (p @ vh).permute(0, 2, 1, 3).reshape(B, S, 64)
    return o @ wo + bo + res


@pytest.mark.parametrize(("B", "S"), [(1, 1), (2, 17), (3, 33)])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_head_merge_feeding_a_projection_is_two_cube_kernels(B, S, dtype) -> None:
    p = RNG.random((B, 4, S, S)).astype(dtype)
    v = RNG.standard_normal((B, S, 64)).astype(dtype)
    wo = (RNG.standard_normal((64, 64)) * 0.1).astype(dtype)
    bo = RNG.standard_normal(64).astype(dtype)
    res = RNG.standard_normal((B, S, 64)).astype(dtype)
    op = pa.jit(context_projection)
    got = op(p, v, wo, bo, res).astype(np.float64)
    assert op.compile(p, v, wo, bo, res).info["kernels"] == 2
    f = lambda t: t.astype(np.float64)  # noqa: E731
    o = (f(p) @ f(v).reshape(B, S, 4, 16).transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
    o = o.reshape(B, S, 64)
    if dtype == np.float16:  # the merged context is an f16 tensor between the kernels
        o = o.astype(np.float16).astype(np.float64)
    ref = o @ f(wo) + f(bo) + f(res)
    tol = 3e-3 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * np.abs(ref).max())


def attention_wide(q, k, v):
    S = q.shape[0]
    qh = q.reshape(S, 2, 32).transpose(0, 1)
    kh = k.reshape(S, 2, 32).transpose(0, 1)
    vh = v.reshape(S, 2, 32).transpose(0, 1)
    s = pa.matmul(qh, kh, transpose_b=True)
    e = pa.exp(s - s.max(-1, keepdim=True))
    return (e / e.sum(-1, keepdim=True)) @ vh


def test_attention_over_more_than_256_keys_runs_as_one_kernel() -> None:
    """Rows of 257 keys do not fit one Cube block, but attention is recognised and runs as the
    one fused kernel (``asc-lower-attention``: key blocks streamed, online softmax), reading
    q, k and v through the head-split views."""
    S = 257
    q, k, v = (RNG.random((S, 64)).astype(np.float32) for _ in range(3))
    op = pa.jit(attention_wide)
    got = op(q, k, v)
    assert op.compile(q, k, v).info["kernels"] == 1
    h = lambda t: t.astype(np.float64).reshape(S, 2, 32).transpose(1, 0, 2)  # noqa: E731
    s = h(q) @ h(k).transpose(0, 2, 1)
    np.testing.assert_allclose(got, softmax_ref(s) @ h(v), rtol=1e-5, atol=1e-6)
