"""Torch autograd through ``grad_mode`` operators (``pyasc_mlir.grad_torch``): the compiled
backward kernels against ``torch.autograd`` for LayerNorm, RMSNorm, softmax and GELU (both
forms), the seed's pattern (a pyasc operator between two ``nn.Linear`` layers), and the errors.

Tolerances (fp32): gradients ``rtol = 1e-4``, ``atol = 1e-5`` against torch's float64
autograd (weight/bias gradients sum 7..33 rows in float32); the seed pattern's parameter
gradients against torch's own float32 autograd ``rtol = atol = 1e-5``.
"""

from __future__ import annotations

import pytest
import torch
from test_autodiff_structural import gelu_erf, gelu_tanh, layer_norm, rms_norm, softmax

import pyasc_mlir as pa


def _t_rms(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w


CASES = {
    "layer_norm": (
        layer_norm,
        lambda x, w, b: torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
        [(7, 33), (33,), (33,)],
    ),
    "rms_norm": (rms_norm, _t_rms, [(33, 40), (40,)]),
    "softmax": (softmax, lambda x: torch.softmax(x, -1), [(7, 33)]),
    "gelu_erf": (gelu_erf, torch.nn.functional.gelu, [(7, 33)]),
    "gelu_tanh": (
        gelu_tanh,
        lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
        [(7, 33)],
    ),
}


FAST = ("layer_norm",)


@pytest.mark.parametrize(
    "name", [n if n in FAST else pytest.param(n, marks=pytest.mark.slow) for n in sorted(CASES)]
)
def test_grad_mode_matches_torch_autograd(name: str):
    fn, ref, shapes = CASES[name]
    op = pa.jit(fn, grad_mode=True)
    gen = torch.Generator().manual_seed(len(name))
    xs = [torch.randn(s, generator=gen, requires_grad=True) for s in shapes]
    y = op(*xs)
    assert y.grad_fn is not None and y.dtype == torch.float32
    dy = torch.randn(y.shape, generator=gen)
    y.backward(dy)
    ref64 = [x.detach().double().requires_grad_() for x in xs]
    ref(*ref64).backward(dy.double())
    for x, r in zip(xs, ref64, strict=True):
        torch.testing.assert_close(x.grad, r.grad.float(), rtol=1e-4, atol=1e-5)


def test_seed_pattern_gradients_equal_torchs_for_every_parameter():
    """``nn.Linear -> pyasc LayerNorm -> nn.Linear``, ``loss.backward()``: every parameter's
    gradient equals the one with torch's own LayerNorm."""
    torch.manual_seed(0)
    lin1, lin2 = torch.nn.Linear(16, 33), torch.nn.Linear(33, 4)
    w, b = torch.nn.Parameter(torch.randn(33)), torch.nn.Parameter(torch.randn(33))
    params = [*lin1.parameters(), *lin2.parameters(), w, b]
    x = torch.randn(7, 16)
    norm = pa.operator(grad_mode=True)(layer_norm)

    def grads(f):
        for p in params:
            p.grad = None
        loss = (lin2(f(lin1(x), w, b)) ** 2).mean()
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in params]

    loss, mine = grads(norm)
    want_loss, want = grads(lambda h, w, b: torch.nn.functional.layer_norm(h, (33,), w, b, 1e-5))
    torch.testing.assert_close(loss, want_loss, rtol=1e-5, atol=1e-5)
    for i, (g, r) in enumerate(zip(mine, want, strict=True)):
        assert g is not None, i
        torch.testing.assert_close(g, r, rtol=1e-5, atol=1e-5, msg=f"parameter {i}")


def test_double_backward_is_a_located_error():
    op = pa.jit(softmax, grad_mode=True)
    x = torch.randn(4, 8, requires_grad=True)
    y = op(x)
    with pytest.raises(pa.PyAscUsageError) as e:
        torch.autograd.grad((y * y).sum(), x, create_graph=True)  # the line of the error
    text = str(e.value)
    assert "double backward through softmax(): its compiled backward is not differentiable" in text
    assert "test_autodiff_torch.py:" in text and "create_graph=True" in text


def test_no_graph_without_requires_grad_or_grad_mode():
    x = torch.randn(4, 8)
    assert pa.jit(softmax, grad_mode=True)(x).grad_fn is None  # nothing requires grad
    with torch.no_grad():
        assert pa.jit(softmax, grad_mode=True)(x.requires_grad_()).grad_fn is None


def test_unused_result_and_constant_argument():
    """A result that receives no gradient counts as zeros; a compile-time constant gets no
    gradient slot; an argument that does not require grad gets none."""

    def two(x, y, k):
        return x * y * k, x + y

    op = pa.jit(two, grad_mode=True)
    x = torch.randn(3, 5, requires_grad=True)
    y = torch.randn(3, 5)
    a, _ = op(x, y, 2.0)
    a.sum().backward()
    torch.testing.assert_close(x.grad, 2.0 * y)
    assert y.grad is None
