"""Torch autograd safety of ``grad_mode`` operators (``pyasc_mlir.grad_torch``): the inputs
and saved results are kept with ``ctx.save_for_backward``, so torch's version-counter check
catches an in-place change after the call (instead of silently wrong gradients) and a second
backward without ``retain_graph=True`` is refused like torch's own operators.

Tolerances (fp32): gradients of ``x * x * 3`` against the exact ``6 x`` ``rtol = 1e-6``,
``atol = 1e-6``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_autodiff_structural import softmax

import pyasc_mlir as pa


def _cube(x):
    return x * x * 3.0


def test_inplace_change_of_an_input_raises_torchs_version_error():
    op = pa.jit(_cube, grad_mode=True)
    a = torch.randn(7, 33, requires_grad=True)
    b = a * 1.0
    y = op(b)
    b.mul_(0.0)  # the backward needs b as it was
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_change_of_a_saved_result_raises_torchs_version_error():
    op = pa.jit(softmax, grad_mode=True, grad_strategy="save")
    a = torch.randn(7, 33, requires_grad=True)
    y = op(a)
    y.mul_(2.0)  # the save-strategy backward reads softmax's result
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_second_backward_needs_retain_graph():
    op = pa.jit(_cube, grad_mode=True)
    x = torch.randn(7, 33, requires_grad=True)
    loss = op(x).sum()
    loss.backward()
    torch.testing.assert_close(x.grad, 6.0 * x.detach(), rtol=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    x.grad = None
    loss = op(x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    torch.testing.assert_close(x.grad, 12.0 * x.detach(), rtol=1e-6, atol=1e-6)


def test_grad_strategy_without_the_backward_is_a_located_error():
    with pytest.raises(pa.PyAscUsageError) as e:
        pa.jit(_cube, grad_strategy="save")  # the line of the error
    text = str(e.value)
    assert "grad_strategy='save' given without grad_mode=True" in text
    assert "test_grad_torch_safety.py:" in text and "add grad_mode=True" in text
    with pytest.raises(pa.PyAscUsageError) as e:
        pa.operator(grad_strategy="recompute")(_cube)
    assert "grad_strategy='recompute' given without grad_mode=True" in str(e.value)
    with pytest.raises(pa.PyAscUsageError) as e:
        pa.compile(_cube, [pa.TensorDesc((7, 33), "float32")], grad_strategy="save")
    text = str(e.value)
    assert "grad_strategy='save' given without grad=True" in text
    assert "test_grad_torch_safety.py:" in text and "add grad=True" in text
    assert pa.jit(_cube, grad_strategy="auto").grad_strategy == "auto"  # the default: fine


def _varargs(*xs):
    return xs[0] + xs[1] * 2.0


def _tuple_arg(x, ws):
    return x * ws[0] + ws[1]


def test_varargs_and_tuple_arguments_are_located_errors_under_vjp_and_grad_mode():
    x = np.ones((7, 33), np.float32)
    with pytest.raises(pa.PyAscUsageError) as e:
        pa.vjp(_varargs)(x, x, x)  # the line of the error
    text = str(e.value)
    assert "the backward of _varargs() cannot be derived: it takes *xs" in text
    assert "test_grad_torch_safety.py:" in text and "def _varargs(x0, x1)" in text
    t = torch.ones(7, 33, requires_grad=True)
    with pytest.raises(pa.PyAscUsageError, match=r"it takes \*xs"):
        pa.jit(_varargs, grad_mode=True)(t, torch.ones(7, 33))
    with pytest.raises(pa.PyAscUsageError) as e:
        pa.vjp(_tuple_arg)(x, (x, x), x)
    text = str(e.value)
    assert "argument 1 of _tuple_arg() is a tuple/list of arrays" in text
    assert "test_grad_torch_safety.py:" in text and "def _tuple_arg(x, w0, w1)" in text
    with pytest.raises(pa.PyAscUsageError, match="argument 1 of _tuple_arg"):
        pa.jit(_tuple_arg, grad_mode=True)(t, (torch.ones(7, 33), torch.ones(7, 33)))
    assert pa.jit(_varargs)(x, x).shape == (7, 33)  # without a backward: still supported


def _scaled(x, y, s=0.5):
    return x * s + y


def _rln(x, w, b, eps=1e-5):
    return pa.layer_norm(x, x.shape[-1:], w, b, eps)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_defaulted_constant_argument(compiled: bool):
    """A compile-time constant left at its default (eagerly and called directly inside
    ``torch.compile``): the backward gets it too."""
    x = torch.randn(7, 33, requires_grad=True)
    y = torch.randn(7, 33, requires_grad=True)
    op = pa.jit(_scaled, grad_mode=True)
    run = torch.compile(lambda a, b: op(a, b), backend="aot_eager") if compiled else op
    out = run(x, y)
    torch.testing.assert_close(out, x.detach() * 0.5 + y.detach(), rtol=1e-6, atol=1e-6)
    out.sum().backward()
    torch.testing.assert_close(x.grad, torch.full((7, 33), 0.5), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(y.grad, torch.ones(7, 33), rtol=1e-6, atol=1e-6)


@pytest.mark.slow
def test_defaulted_eps_layer_norm_inside_torch_compile():
    """``grad_mode`` layer norm with ``eps`` at its default, called directly inside
    ``torch.compile``: gradients against torch's float64 autograd (``rtol = 1e-4``,
    ``atol = 1e-5``)."""
    gen = torch.Generator().manual_seed(3)
    ts = [torch.randn(s, generator=gen, requires_grad=True) for s in [(7, 33), (33,), (33,)]]
    dy = torch.randn(7, 33, generator=gen)
    op = pa.jit(_rln, grad_mode=True)
    torch.compile(lambda x, w, b: op(x, w, b), backend="aot_eager")(*ts).backward(dy)
    ref = [t.detach().double().requires_grad_() for t in ts]
    torch.nn.functional.layer_norm(ref[0], (33,), ref[1], ref[2], 1e-5).backward(dy.double())
    for t, r in zip(ts, ref, strict=True):
        torch.testing.assert_close(t.grad, r.grad.float(), rtol=1e-4, atol=1e-5)
