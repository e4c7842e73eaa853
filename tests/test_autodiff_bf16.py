"""bfloat16 backward kernels (``grad_mode`` and ``pa.vjp``): bf16 in and out, float32 inside
(the cotangent and the bf16 primal values are widened once), one rounding on return.

Reference: torch's float64 autograd on the same (bf16-valued) inputs and cotangent. Tolerance:
``1.6e-2 * max(1, max|grad|)`` absolute (a bf16 rounding is at most 2**-8 = 3.9e-3 relative;
the rest covers the float32 arithmetic of the kernels), and every element must be within one
bf16 rounding plus ``1e-4 * max(1, max|grad|)`` of the reference (one rounding, not a bf16
computation; measured: max error 2.1e-3..2.6e-3 of the scale). layer_norm is ``slow`` (~12 s
of compiling uncached); gelu (~13 s uncached) is the fast regression test of the crash.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
import torch
from test_autodiff_structural import gelu_erf, layer_norm

import pyasc_mlir as pa

SHAPE = (7, 33)


def _check_bf16_grad(got: torch.Tensor, ref: torch.Tensor) -> None:
    assert got.dtype == torch.bfloat16 and got.shape == ref.shape
    g, r = got.double(), ref.double()
    scale = max(1.0, r.abs().max().item())
    err = (g - r).abs()
    assert err.max().item() <= 1.6e-2 * scale, err.max().item()
    one_rounding = err <= 2.0**-8 * r.abs() + 1e-4 * scale
    assert bool(one_rounding.all()), (err - 2.0**-8 * r.abs()).max().item()


def _t_layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


CASES: dict[str, tuple[Any, Any, list[tuple[int, ...]]]] = {
    "gelu": (gelu_erf, torch.nn.functional.gelu, [SHAPE]),
    "layer_norm": (layer_norm, _t_layer_norm, [SHAPE, SHAPE[-1:], SHAPE[-1:]]),
}


@pytest.mark.parametrize("name", ["gelu", pytest.param("layer_norm", marks=pytest.mark.slow)])
def test_grad_mode_bf16_matches_torch_float64(name: str) -> None:
    fn, ref, shapes = CASES[name]
    gen = torch.Generator().manual_seed(12)
    xs = [torch.randn(s, generator=gen).bfloat16().requires_grad_() for s in shapes]
    y = pa.jit(fn, grad_mode=True)(*xs)
    assert y.dtype == torch.bfloat16 and y.grad_fn is not None
    dy = torch.randn(SHAPE, generator=gen).bfloat16()
    y.backward(dy)
    ref64 = [x.detach().double().requires_grad_() for x in xs]
    ref(*ref64).backward(dy.double())
    for x, r in zip(xs, ref64, strict=True):
        assert x.grad is not None and r.grad is not None
        _check_bf16_grad(x.grad, r.grad)


def test_vjp_bf16_arrays_match_torch_float64() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal(SHAPE).astype(ml_dtypes.bfloat16)
    dy = rng.standard_normal(SHAPE).astype(ml_dtypes.bfloat16)
    (dx,) = pa.vjp(gelu_erf)(x, dy)
    assert np.asarray(dx).dtype == ml_dtypes.bfloat16
    x64 = torch.tensor(x.astype(np.float64), requires_grad=True)
    torch.nn.functional.gelu(x64).backward(torch.tensor(dy.astype(np.float64)))
    got = torch.tensor(np.asarray(dx).astype(np.float32)).bfloat16()
    assert x64.grad is not None
    _check_bf16_grad(got, x64.grad)
