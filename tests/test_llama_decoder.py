"""The LLaMA decoder layer example (``examples/llama_decoder.py``) at a small size: hidden 256,
4 query heads x 64 sharing 2 KV heads, FFN 512, 33 tokens (a tail of every 16-row block), on
the CPU build in float16 and float32, against a float64 NumPy reference of the same math.

Tolerances (rtol = atol, ``examples.llama_decoder.TOL``): float32 1e-4 (measured 2.5e-6: every
kernel computes in float32); float16 2e-2 (measured 2.3e-3: the values crossing a kernel
boundary are rounded to float16, about ten roundings of 4.9e-4 relative each carried through
K-long matmuls). The kernel counts are asserted so that a fusion regression shows; the
``asc-fuse`` fixes the layer needed are checked on their minimal operators.
"""

from __future__ import annotations

import numpy as np
import pytest

import pyasc_mlir as pa
from examples import llama_decoder as ld

KERNELS = {"rotate_half": 11, "folded": 7}
"""Kernels per layer at the small size, both dtypes. rotate_half: RMSNorm, Q, K+V, two RoPE
kernels each for Q and K (the halves' arithmetic, the concat), attention, o_proj + residual +
RMSNorm (hidden 256: whole rows fit a Cube block), gate/up, down + residual. folded: RoPE in
the Q and K projections' epilogues (K, K_rot and V one Cube kernel)."""


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("variant", list(ld.VARIANTS))
def test_layer_matches_float64(variant: str, dtype: str) -> None:
    r = ld.run(variant, dtype, ld.SMALL)
    assert r.out.shape == (1, 33, 256) and r.out.dtype == np.dtype(dtype)
    assert r.ok, f"max |err| {r.max_err:.3e}, excess {r.excess:.3e} > tol {ld.TOL[dtype]}"
    assert len(r.kernels) == KERNELS[variant], ld.report(r)
    assert sum(k.kernel_type == "attention" for k in r.kernels) == 1
    assert r.gm_bytes > r.ideal_bytes  # the intermediates between kernels


def test_rotated_weights_are_rotate_half() -> None:
    """``x W_rot^T == rotate_half(x W^T)`` per head (the folded variant's host preparation)."""
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((2 * 8, 5)), rng.standard_normal((3, 5))
    y = (x @ w.T).reshape(3, 2, 8)
    rot = np.concatenate([-y[..., 4:], y[..., :4]], axis=-1).reshape(3, 16)
    np.testing.assert_allclose(x @ ld.rotate_rows(w, 2).T, rot, rtol=1e-12, atol=1e-12)


def _full_and_slice(q):
    return q * 2, q[..., :32] + 1


def test_results_of_unrelated_row_lengths_are_separate_kernels() -> None:
    """``q * 2`` (rows of 64) and ``q[..., :32] + 1`` (rows of 32) share no iteration space:
    ``asc-fuse`` made them one kernel ('an output of the operator does not span all of its
    leading dimensions'); now two."""
    q = np.random.default_rng(1).standard_normal((33, 64)).astype(np.float32)
    op = pa.compile(_full_and_slice, [pa.TensorDesc(q.shape, "float32")])
    a, b = op(q)
    assert op.info["kernels"] == 2
    np.testing.assert_array_equal(a, q * 2)
    np.testing.assert_array_equal(b, q[:, :32] + 1)


def _split_before_concat(h, wk, wv):
    k = (h @ wk.T).view(1, 33, 2, 64)
    v = (h @ wv.T).view(1, 33, 2, 64).transpose(1, 2)  # head split, written before the concat
    k = pa.cat([-k[..., 32:], k[..., :32]], dim=-1).transpose(1, 2)
    return pa.scaled_dot_product_attention(k, k, v, is_causal=True)


def test_head_split_view_before_a_concat_is_read_in_place() -> None:
    """A concat (a data-movement kernel) ended the run of ops holding ``v``'s head split, so
    the split became a result view of the projection ('cannot write [1, 33, 128] as
    [1, 33, 2, 64] in place'); the view now moves to the attention that reads it."""
    rng = np.random.default_rng(2)
    h = rng.standard_normal((1, 33, 256)).astype(np.float32)
    wk, wv = (rng.standard_normal((128, 256)).astype(np.float32) / 16 for _ in range(2))
    descs = [pa.TensorDesc(a.shape, "float32") for a in (h, wk, wv)]
    op = pa.compile(_split_before_concat, descs)
    got = op(h, wk, wv)
    k = (h.astype(np.float64) @ wk.T).reshape(1, 33, 2, 64)
    k = np.concatenate([-k[..., 32:], k[..., :32]], axis=-1).transpose(0, 2, 1, 3)
    v = (h.astype(np.float64) @ wv.T).reshape(1, 33, 2, 64).transpose(0, 2, 1, 3)
    s = k @ k.transpose(0, 1, 3, 2) / 8.0
    s = np.where(np.triu(np.ones((33, 33), bool), 1), -np.inf, s)
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(got, (e / e.sum(-1, keepdims=True)) @ v, rtol=1e-4, atol=1e-4)
