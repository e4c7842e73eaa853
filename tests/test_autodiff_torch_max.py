"""Gradients of max/min reductions vs PyTorch, with and without ties.

``x.max(dim=d).values`` / ``x.min(dim=d).values`` (PyTorch's ``(values, indices)`` spelling):
PyTorch sends the gradient to the one index it returns; pyasc has no argmax, so
differentiating it is a located ``PyAscCompileError`` (hint: ``x.amax(d)``), whether or not the
data has ties (a compile-time refusal, never a silently different gradient); its forward and
a use only through a comparison (no gradient flows through it) still work.
``x.amax``/``x.amin``/``pa.max``/positional ``x.max(d)`` keep ``torch.amax``'s rule (the
gradient shared evenly among ties): checked against torch's float64 autograd of
``torch.amax``/``torch.amin``, ``atol = 1e-6`` (the shares are 1/k, exact up to float32); the
``x.max(d)``/``pa.max`` spellings (the same reduction) are ``slow`` (~10 s of compiling each).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import pyasc_mlir as pa
from pyasc_mlir.errors import PyAscCompileError

TIES = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, -1.0, 5.0, 4.0], [-2.0, -2.0, -2.0, 7.0]])
NO_TIES = torch.tensor([[1.0, 3.0, 2.5, 0.0], [2.0, -1.0, 5.0, 4.0], [-2.0, -3.0, -1.0, 7.0]])


def max_values(x):
    return x.max(dim=-1).values * 2.0


def min_values(x):
    return x.min(dim=1, keepdim=True).values + x


def _line_of(fn, text: str) -> int:
    src, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(src) if text in line)


@pytest.mark.parametrize("data", [TIES, NO_TIES], ids=["ties", "no_ties"])
@pytest.mark.parametrize(("fn", "kind"), [(max_values, "max"), (min_values, "min")])
def test_torch_values_spelling_gradient_is_a_located_error(data, fn, kind: str) -> None:
    x = data.clone().requires_grad_()
    with pytest.raises(PyAscCompileError) as info:
        pa.jit(fn, grad_mode=True)(x)
    err = info.value
    assert err.loc is not None and err.loc.file == __file__
    assert err.loc.line == _line_of(fn, f"x.{kind}(dim=")
    assert f"x.{kind}(dim=).values" in err.message and "argmax" in err.message
    assert err.hint is not None and f"x.a{kind}(dim)" in err.hint
    with pytest.raises(PyAscCompileError, match="no argmax"):
        pa.vjp(fn)(data.numpy(), np.ones(tuple(fn(data).shape), np.float32))


def test_max_values_through_a_comparison_only_is_differentiable() -> None:
    def keep_max(x):
        return pa.where(x == x.max(dim=-1, keepdim=True).values, x * 3.0, x)

    x = TIES.clone().requires_grad_()
    y = pa.jit(keep_max, grad_mode=True)(x)
    y.sum().backward()
    r = TIES.double().requires_grad_()
    m = r == r.max(dim=-1, keepdim=True).values
    want = torch.where(m, r * 3.0, r)
    want.sum().backward()
    torch.testing.assert_close(y.detach(), want.detach().float(), rtol=0, atol=0)
    assert x.grad is not None and r.grad is not None
    torch.testing.assert_close(x.grad, r.grad.float(), rtol=0, atol=1e-6)


def amax_method(x):
    return x.amax(-1)


def max_positional(x):
    return x.max(-1)


def pa_max(x):
    return pa.max(x, -1)


def amin_dim(x):
    return x.amin(dim=-1)


AMAX_SPELLINGS = {
    "x.amax(-1)": (amax_method, lambda t: torch.amax(t, -1)),
    "x.max(-1)": (max_positional, lambda t: torch.amax(t, -1)),
    "pa.max(x, -1)": (pa_max, lambda t: torch.amax(t, -1)),
    "x.amin(dim=-1)": (amin_dim, lambda t: torch.amin(t, -1)),
}


@pytest.mark.parametrize(
    "name",
    [
        "x.amax(-1)",
        "x.amin(dim=-1)",
        pytest.param("x.max(-1)", marks=pytest.mark.slow),
        pytest.param("pa.max(x, -1)", marks=pytest.mark.slow),
    ],
)
def test_amax_spellings_share_ties_evenly_like_torch_amax(name: str) -> None:
    """Rows 0 and 2 of TIES have a tied max (row 2 also a tied min), row 1 has none."""
    fn, ref = AMAX_SPELLINGS[name]
    data = TIES
    x = data.clone().requires_grad_()
    dy = torch.tensor([1.0, -2.0, 0.5])
    pa.jit(fn, grad_mode=True)(x).backward(dy)
    r = data.double().requires_grad_()
    ref(r).backward(dy.double())
    assert x.grad is not None and r.grad is not None
    torch.testing.assert_close(x.grad, r.grad.float(), rtol=0, atol=1e-6)
