"""Training a transformer block with pyasc forward and backward kernels
(``examples/train_block.py``) against the same block trained by torch autograd.

Both models start from the same float32 parameters and see the same MiniLM token embeddings;
the loss of every step (before its SGD update) must agree to relative ``1e-4`` (measured:
<= 4.4e-7 over 50 steps) and the loss must fall. Plus the compiler fixes the block needed,
each against torch float64 autograd: the backward of a LayerNorm of a 3-D input (the weight and
bias gradients sum over two leading dims) and of multi-head attention whose heads are views of
``[B, S, H]`` projections (the input's reshape feeds three weight-gradient matmuls; the
recomputed softmax row sum leaves the Cube kernel). Tolerance there: ``rtol = atol = 1e-5 *
max(1, max|grad|)`` (fp32, sums over 128 rows).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pyasc_mlir as pa
from examples import train_block as tb
from examples.minilm_data import ModelDataMissing


def _check_grads(fn, ref, args: list[np.ndarray]) -> pa.CompiledOp:
    rng = np.random.default_rng(len(args))
    fwd = pa.compile(fn, [pa.TensorDesc(a.shape, a.dtype) for a in args])
    dys = [rng.standard_normal(o.shape).astype(np.float32) for o in fwd.outputs]
    op = pa.vjp(fn).compile(*args, *dys)
    got = op(*args, *dys)
    ts = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in args]
    ref(*ts).backward(torch.tensor(dys[0].astype(np.float64)))
    for i, (g, t) in enumerate(zip(got, ts, strict=True)):
        want = t.grad.numpy()
        tol = 1e-5 * max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(g, want, rtol=tol, atol=tol, err_msg=f"gradient {i}")
    return op


# The block's own shapes: the training test then reuses these kernels from the compile cache.
B, S, H = tb.BATCH, tb.SEQ, tb.HIDDEN


def test_layer_norm_of_3d_input_backward():
    """The ones column of the weight/bias sums is ``[B, S, 1]``, made by the vector kernel."""
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((B, S, H)).astype(np.float32) for _ in range(2)]
    args += [rng.standard_normal(H).astype(np.float32) for _ in range(2)]
    op = _check_grads(tb.add_layer_norm, tb.TORCH_FUNCTIONS["add_layer_norm"], args)
    assert op.info["kernels"] == 2  # vector: dx, dr, dy * xhat, ones; Cube: dw, db


def test_multi_head_attention_backward():
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((B, S, H)).astype(np.float32)]
    args += [(rng.standard_normal((H, H)) / 8).astype(np.float32) for _ in range(4)]
    mask = np.zeros((B, 1, 1, S), np.float32)
    mask[1, ..., 5:] = -10000.0  # the second sequence has 5 tokens
    _check_grads(tb.self_attention, tb.TORCH_FUNCTIONS["self_attention"], [*args, mask])


def _train(steps: int) -> tb.TrainResult:
    try:
        return tb.train(steps)
    except ModelDataMissing as exc:  # the MiniLM package is a test dependency
        pytest.fail(str(exc))


def _check_curves(res: tb.TrainResult, steps: int) -> None:
    assert len(res.pyasc_losses) == len(res.torch_losses) == steps
    for i, (a, b) in enumerate(zip(res.pyasc_losses, res.torch_losses, strict=True)):
        assert np.isfinite(a) and abs(a - b) <= 1e-4 * abs(b), (i, a, b)
    assert res.pyasc_losses[-1] < 0.8 * res.pyasc_losses[0]
    assert all(b < a for a, b in zip(res.pyasc_losses, res.pyasc_losses[1:], strict=False))


def test_five_steps_equal_torch_and_loss_falls():
    res = _train(5)
    _check_curves(res, 5)
    names = {name for name, *_ in tb.kernel_counts(res.ops)}
    assert names == set(tb.PYASC_FUNCTIONS)  # every operator of the block ran in pyasc
    line = tb.summary(res)  # the pyasc demo's line
    first, last = res.pyasc_losses[0], res.pyasc_losses[-1]
    assert line.startswith(f"train block: 5 SGD steps, loss {first:.4f} -> {last:.4f}, "), line
    assert f"worst rel diff vs torch {res.worst_rel_diff:.1e}" in line


@pytest.mark.slow
def test_fifty_steps_equal_torch_and_loss_falls():
    res = _train(50)
    _check_curves(res, 50)
    assert res.pyasc_losses[-1] < 0.2 * res.pyasc_losses[0]


def test_linear_gelu_of_3d_input_backward():
    """The ``[B, S, 1]`` ones column, read by the Cube through a reshape, stays out of the
    forward matmul's Cube epilogue (it was put there: 'an output of the matmul kernel has shape
    [8, 16, 1]'); its weight gradient is one matmul over all rows."""
    rng = np.random.default_rng(2)
    args = [rng.standard_normal((B, S, H)).astype(np.float32)]
    args += [(rng.standard_normal(s) / 8).astype(np.float32) for s in [(H, tb.FFN), (tb.FFN,)]]
    op = _check_grads(tb.linear_gelu, tb.TORCH_FUNCTIONS["linear_gelu"], args)
    # as for a 2-D x: fwd matmul + GELU', the ones column, db, dx and ONE dw matmul over all
    # B*S rows (was 7: [B, 64, 128] products, then their sum over B)
    assert op.info["kernels"] == 5


def test_demo_prints_the_training_line_with_only_when_steps_are_given(capsys):
    """``pyasc demo --only ROW --train-steps N`` runs the training line too (``--only`` alone
    leaves it out, as it leaves out the MiniLM encoder)."""
    from pyasc_mlir.tools.demo import run_demo

    argv = ["--only", "masked_sum", "--dtypes", "float32", "--repeats", "1", "--no-interp"]
    assert run_demo([*argv, "--train-steps", "2"]) == 0
    assert "train block: 2 SGD steps, loss " in capsys.readouterr().out
    assert run_demo(argv) == 0
    assert "train block:" not in capsys.readouterr().out
