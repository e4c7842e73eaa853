"""Gradients of two training blocks against ``torch.autograd`` in float64: a multi-head
self-attention block as ONE ``grad_mode`` operator (head split/merge views, the softmax of
``q k^T / sqrt(d)`` plus an additive mask, the output projection, a residual) and masked mean
pooling. The backward operators run on the CPU build of the emitted Ascend C (what a
``grad_mode`` operator's ``backward()`` calls) and, in the slow cases, in the IR interpreter
too (``backend="interp"``).

Mask gradients are the true derivatives, checked against torch: the MHA block's additive
mask ``[B, 1, 1, S]`` gets the sum of the scores' gradient over the heads and the query rows;
the pooling's 0/1 mask ``[B, S]`` gets ``(x[b, s] - y[b]) . dy[b] / sum(mask[b])``. Passed as
a tensor that does not require grad (the usual case), the mask gets none (``mask.grad is
None``). A pooling row whose mask is all zeros divides 0 by 0 (NaN, as in torch): not tested.

Tolerances, scaled by ``s = max(1, max|grad|)`` of the float64 reference: fp32 ``rtol =
atol = 1e-4 s`` for MHA (measured <= 7e-7 s), ``1e-5 s`` for pooling (measured <= 1.2e-7 s);
fp16 ``2e-3 s`` (MHA measured <= 5.3e-4 s: q, k, v, the probabilities and the head outputs
are rounded to f16 once each, as in the forward; pooling <= 2.9e-4 s). The CPU build against
the interpreter: ``1e-5 s`` fp32 (measured <= 7.9e-7 s), ``1e-3 s`` fp16 (one f16 ulp;
measured <= 1e-4 s: an f16 intermediate between two kernels may round to the neighbouring
f16 when an ``expf`` or a sum order differs).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import seed_of

import pyasc_mlir as pa


def mha_block(x, wq, wk, wv, wo, heads):
    """Self-attention over ``x`` [B, S, H] (weights [H, H], ``heads`` divides H), plus x."""
    B, S, H = x.shape
    d = H // heads
    q = (x @ wq).reshape(B, S, heads, d).transpose(1, 2)
    k = (x @ wk).reshape(B, S, heads, d).transpose(1, 2)
    v = (x @ wv).reshape(B, S, heads, d).transpose(1, 2)
    p = pa.softmax(pa.matmul(q, k, transpose_b=True) * d**-0.5, dim=-1)
    return (p @ v).transpose(1, 2).reshape(B, S, H) @ wo + x


def mha_block_masked(x, wq, wk, wv, wo, bq, bk, bv, bo, mask, heads):
    """:func:`mha_block` with biases [H] and an additive key mask [B, 1, 1, S]."""
    B, S, H = x.shape
    d = H // heads
    q = (x @ wq + bq).reshape(B, S, heads, d).transpose(1, 2)
    k = (x @ wk + bk).reshape(B, S, heads, d).transpose(1, 2)
    v = (x @ wv + bv).reshape(B, S, heads, d).transpose(1, 2)
    p = pa.softmax(pa.matmul(q, k, transpose_b=True) * d**-0.5 + mask, dim=-1)
    return (p @ v).transpose(1, 2).reshape(B, S, H) @ wo + bo + x


def masked_mean(x, mask):
    """The mean of ``x`` [B, S, H] over the positions where ``mask`` [B, S] is 1: [B, H]."""
    return (x * mask.unsqueeze(-1)).sum(dim=1) / mask.sum(dim=1, keepdim=True)


def _t_mha(x, wq, wk, wv, wo, bq=0.0, bk=0.0, bv=0.0, bo=0.0, mask=0.0, heads=4):
    B, S, H = x.shape
    d = H // heads

    def split(t):
        return t.reshape(B, S, heads, d).transpose(1, 2)

    q, k, v = split(x @ wq + bq), split(x @ wk + bk), split(x @ wv + bv)
    p = torch.softmax(q @ k.transpose(-1, -2) * d**-0.5 + mask, -1)
    return (p @ v).transpose(1, 2).reshape(B, S, H) @ wo + bo + x


def _t_masked_mean(x, mask):
    return (x * mask[..., None]).sum(dim=1) / mask.sum(dim=1)[..., None]


def _key_mask(b: int, s: int) -> np.ndarray:
    """Additive [B, 1, 1, S]: batch 0 hides a middle key, batch 1 its last two."""
    m = np.zeros((b, 1, 1, s), np.float32)
    m[0, ..., s // 2] = -1e4
    m[1 % b, ..., s - 2 :] = -1e4
    return m


def _pool_mask(b: int, s: int) -> np.ndarray:
    """0/1 [B, S]: zeros in the middle (row 0), at the tail (row 1), every third (row 2)."""
    m = np.ones((b, s), np.float32)
    if s > 2:
        m[0, s // 2] = 0
        m[1, s - 2 :] = 0
        m[2, 1::3] = 0
    return m


def _mha_args(s: int, dtype: str, masked: bool) -> list[np.ndarray]:
    b, h = 2, 32
    rng = np.random.default_rng(seed_of("mha", s, dtype, masked))
    args = [rng.standard_normal((b, s, h))]
    args += [rng.standard_normal((h, h)) * h**-0.5 for _ in range(4)]
    if masked:
        args += [rng.standard_normal(h) * 0.5 for _ in range(4)] + [_key_mask(b, s)]
    return [a.astype(dtype) for a in args]


def _torch64(ref, args: list[np.ndarray], consts: dict, dy: np.ndarray) -> list[np.ndarray]:
    ts = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in args]
    ref(*ts, **consts).backward(torch.tensor(dy.astype(np.float64)))
    return [t.grad.numpy() for t in ts]


def _assert_grads(got, want, tol: float, what: str) -> None:
    assert len(got) == len(want), what
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.shape == w.shape, (what, i)
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(
            np.asarray(g, np.float64), w, rtol=tol * scale, atol=tol * scale, err_msg=f"{what} {i}"
        )


def _check_vjp(fn, ref, args, consts: dict, tol: float, same: float) -> pa.CompiledOp:
    """``pa.vjp(fn)`` on the CPU build and in the interpreter against torch float64."""
    out = ref(*[torch.tensor(a.astype(np.float64)) for a in args], **consts)
    rng = np.random.default_rng(seed_of(fn.__name__, args[0].shape))
    dy = rng.standard_normal(tuple(out.shape)).astype(args[0].dtype)
    op = pa.vjp(fn).compile(*args, *consts.values(), dy)
    cpu, interp = op(*args, dy), op(*args, dy, backend="interp")
    for g, a in zip(cpu, args, strict=True):
        assert g.dtype == a.dtype and g.shape == a.shape
    want = _torch64(ref, args, consts, dy)
    _assert_grads(cpu, want, tol, "CPU build vs torch")
    _assert_grads(cpu, [np.asarray(i, np.float64) for i in interp], same, "CPU vs interpreter")
    return op


def _kernel_counts(op: pa.CompiledOp) -> tuple[int, int]:
    """``(kernels, vector-only kernels)`` of a compiled operator (the rest are Cube kernels)."""
    kinds = [launch["kernel_type"] for launch in op.info["launches"]]
    assert len(kinds) == op.info["kernels"]
    return len(kinds), kinds.count("AIV_ONLY")


def test_mha_block_grad_mode_matches_torch_autograd():
    """``y.backward(dy)`` through the operator (its compiled backward on the CPU build):
    every input's gradient. The backward's kernels, as measured: 13 Cube kernels (the three
    recomputed projections in one; ``q k^T`` with the softmax as its epilogue; ``P V``;
    ``dy wo^T``; ``dP = dO V^T`` with the softmax's backward as its epilogue; ``dV``, ``dQ``,
    ``dK`` in one; the three ``dx`` terms; one ``x^T d(.)`` per weight, the batch folded into
    its rows) and 1 vector kernel (the softmax's count of row maxima, read again after the
    kernel that computes it)."""
    gen = torch.Generator().manual_seed(7)
    shapes = [(2, 7, 32)] + [(32, 32)] * 4
    xs = [
        (torch.randn(s, generator=gen) * (1.0 if i == 0 else 32**-0.5)).requires_grad_()
        for i, s in enumerate(shapes)
    ]
    op = pa.jit(mha_block, grad_mode=True)
    y = op(*xs, 4)
    assert y.grad_fn is not None and y.shape == (2, 7, 32)
    dy = torch.randn(y.shape, generator=gen)
    y.backward(dy)
    want = _torch64(_t_mha, [x.detach().numpy() for x in xs], {"heads": 4}, dy.numpy())
    _assert_grads([x.grad.numpy() for x in xs], want, 1e-4, "mha_block")
    assert _kernel_counts(pa.vjp(mha_block).compile(*xs, 4, dy)) == (14, 1)


@pytest.mark.slow
@pytest.mark.parametrize(("s", "dtype"), [(33, "float32"), (7, "float16")])
def test_mha_block_with_biases_and_mask(s: int, dtype: str):
    """Biases on every projection and an additive key mask: the gradients of all 10 tensor
    inputs (the mask's too) on the CPU build and in the interpreter."""
    args = _mha_args(s, dtype, masked=True)
    tol, same = (1e-4, 1e-5) if dtype == "float32" else (2e-3, 1e-3)
    op = _check_vjp(mha_block_masked, _t_mha, args, {"heads": 4}, tol, same)
    assert _kernel_counts(op) == (20, 3)


def test_masked_mean_grad_mode_matches_torch_autograd():
    """One vector kernel; the gradients of x and of the mask (requires grad here)."""
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(3, 7, 40, generator=gen, requires_grad=True)
    mask = torch.tensor(_pool_mask(3, 7), requires_grad=True)
    y = pa.jit(masked_mean, grad_mode=True)(x, mask)
    dy = torch.randn(y.shape, generator=gen)
    y.backward(dy)
    want = _torch64(_t_masked_mean, [x.detach().numpy(), mask.detach().numpy()], {}, dy.numpy())
    _assert_grads([x.grad.numpy(), mask.grad.numpy()], want, 1e-5, "masked_mean")
    assert pa.vjp(masked_mean).compile(x, mask, dy).info["kernels"] == 1


@pytest.mark.slow
@pytest.mark.parametrize(("s", "dtype"), [(1, "float32"), (33, "float16")])
def test_masked_mean_tails(s: int, dtype: str):
    rng = np.random.default_rng(seed_of("masked_mean", s, dtype))
    args = [rng.standard_normal((3, s, 40)).astype(dtype), _pool_mask(3, s).astype(dtype)]
    tol, same = (1e-5, 1e-5) if dtype == "float32" else (2e-3, 1e-3)
    _check_vjp(masked_mean, _t_masked_mean, args, {}, tol, same)


def test_mask_without_requires_grad_gets_no_gradient():
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(3, 7, 40, generator=gen, requires_grad=True)
    mask = torch.tensor(_pool_mask(3, 7))
    pa.jit(masked_mean, grad_mode=True)(x, mask).sum().backward()
    assert mask.grad is None
    want = np.broadcast_to(
        (_pool_mask(3, 7) / _pool_mask(3, 7).sum(1, keepdims=True))[..., None], x.shape
    )
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6, atol=1e-7)


# Regressions of the compiler bugs the blocks above found (each failed before its fix).


def twice_read_view(q, k):
    """``qh`` (a head-split view) is read by two Cube kernels: ``qh kh^T`` and ``(.) qh``."""
    B, S, H = q.shape
    qh = q.reshape(B, S, 2, H // 2).transpose(1, 2)
    kh = k.reshape(B, S, 2, H // 2).transpose(1, 2)
    return pa.matmul(pa.matmul(qh, kh, transpose_b=True), qh)


def softmax_and_max(q, k):
    """The softmax of ``q k^T`` (the Cube kernel's epilogue) and its row maxima [B, S, 1]."""
    s = pa.matmul(q, k, transpose_b=True)
    m = pa.max(s, axis=-1, keepdim=True)
    e = pa.exp(s - m)
    return e / pa.sum(e, axis=-1, keepdim=True), m


def bias_and_mask(q, k, b, m):
    return pa.softmax(pa.matmul(q + b, k, transpose_b=True) + m, dim=-1)


def test_a_view_read_by_two_cube_kernels():
    """asc-fuse put the shared view in both kernels (a raw ``KeyError``): now each matmul
    reads through its own copy of the view."""
    rng = np.random.default_rng(11)
    q, k = (rng.standard_normal((2, 8, 8)).astype(np.float32) for _ in range(2))
    qh, kh = (t.reshape(2, 8, 2, 4).transpose(0, 2, 1, 3).astype(np.float64) for t in (q, k))
    want = (qh @ kh.transpose(0, 1, 3, 2)) @ qh
    got = pa.jit(twice_read_view)(q, k)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_cube_epilogue_row_statistic_returned():
    """A row statistic of a Cube epilogue read after the kernel (here: returned) was an
    output of the matmul kernel ('has shape [2, 7, 1]'): it now ends a vector kernel."""
    rng = np.random.default_rng(12)
    q, k = rng.standard_normal((2, 7, 8)), rng.standard_normal((2, 9, 8))
    p, m = pa.jit(softmax_and_max)(q.astype(np.float32), k.astype(np.float32))
    s = q @ k.transpose(0, 2, 1)
    e = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(m, s.max(-1, keepdims=True), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(p, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_backward_with_a_bias_and_a_mask_in_fp16():
    """The backward's schedule put the (widening casts and) broadcasts of ``b`` [8] and
    ``m`` [2, 1, 9] in one first kernel ('does not span all of its leading dimensions')."""
    rng = np.random.default_rng(13)
    shapes = [(2, 7, 8), (2, 9, 8), (8,), (2, 1, 9), (2, 7, 9)]
    *args, dy = (rng.standard_normal(s).astype(np.float16) for s in shapes)
    got = pa.vjp(bias_and_mask)(*args, dy)
    ts = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in args]
    q, k, b, m = ts
    torch.softmax((q + b) @ k.transpose(-1, -2) + m, -1).backward(
        torch.tensor(dy, dtype=torch.float64)
    )
    _assert_grads(got, [t.grad.numpy() for t in ts], 2e-3, "bias_and_mask fp16")


def projection(x, w):
    return x @ w


def test_weight_gradient_of_a_batched_projection_is_one_matmul():
    """``x [B, S, K] @ w [K, N]``: ``dw = x.reshape(B S, K)^T dy.reshape(B S, N)``, one Cube
    kernel (it was a per-batch product, a ``ones`` column and a sum over the batch: with dx,
    4 kernels)."""
    rng = np.random.default_rng(14)
    x, w, dy = (
        rng.standard_normal(s).astype(np.float32) for s in [(3, 5, 16), (16, 24), (3, 5, 24)]
    )
    op = pa.vjp(projection).compile(x, w, dy)
    assert _kernel_counts(op) == (2, 0)  # dx = dy w^T; dw
    dx, dw = op(x, w, dy)
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    np.testing.assert_allclose(dx, dy64 @ w.astype(np.float64).T, rtol=1e-5, atol=1e-5)
    want = np.einsum("bsk,bsn->kn", x64, dy64)
    np.testing.assert_allclose(dw, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
