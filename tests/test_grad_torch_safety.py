"""Torch autograd safety of ``grad_mode`` operators (``pyasc_mlir.grad_torch``): the inputs
and saved results are kept with ``ctx.save_for_backward``, so torch's version-counter check
catches an in-place change after the call (instead of silently wrong gradients) and a second
backward without ``retain_graph=True`` is refused like torch's own operators.

Tolerances (fp32): gradients of ``x * x * 3`` against the exact ``6 x`` ``rtol = 1e-6``,
``atol = 1e-6``.
"""

from __future__ import annotations

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
