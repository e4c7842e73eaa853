"""Backward of a matmul operator in fp16 (``gelu(x @ w + b)``), on the CPU build, against
torch float64 autograd on float64 copies of the (f16-exact) inputs.

The gradient matmuls run on the Cube with f16 operands and float32 accumulation, as the
forward does (the float32 cotangent is rounded to f16 once before each; ``b``'s gradient is
the float32 row sum of the cotangent). Tolerances, scaled by ``s = max(1, max|grad|)``:
fp16 ``rtol = atol = 2e-3 s`` (measured <= 5.1e-4 s: the result's f16 rounding, 2^-11, plus
the cotangent's), fp32 ``1e-5 s`` (measured <= 7.4e-7 s).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import seed_of

import pyasc_mlir as pa
from pyasc_mlir.grad import Backward


def linear_gelu(x, w, b):
    return pa.gelu(x @ w + b)


def _check(m: int, k: int, n: int, dtype: str) -> pa.CompiledOp:
    rng = np.random.default_rng(seed_of("linear_gelu", m, k, n, dtype))
    args = [rng.standard_normal(s).astype(dtype) for s in [(m, k), (k, n), (n,), (m, n)]]
    op = pa.vjp(linear_gelu).compile(*args)
    got = op(*args)
    ts = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in args[:3]]
    dy = torch.tensor(args[3].astype(np.float64))
    torch.nn.functional.gelu(ts[0] @ ts[1] + ts[2]).backward(dy)
    for i, (g, t, a) in enumerate(zip(got, ts, args, strict=False)):
        assert g.dtype == a.dtype and g.shape == a.shape, i
        want = t.grad.numpy()
        tol = (2e-3 if dtype == "float16" else 1e-5) * max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(g.astype(np.float64), want, rtol=tol, atol=tol, err_msg=str(i))
    return op


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize(("m", "k", "n"), [(1, 33, 40), (7, 33, 40)])
def test_linear_gelu_backward(m: int, k: int, n: int, dtype: str):
    op = _check(m, k, n, dtype)
    # fwd matmul + GELU' epilogue; the ones column; db, dx, dw on the Cube
    assert op.info["kernels"] == 5


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize(("m", "k", "n"), [(33, 7, 513), (513, 33, 40)])
def test_linear_gelu_backward_on_tails(m: int, k: int, n: int, dtype: str):
    _check(m, k, n, dtype)


def test_fp16_gradient_matmuls_read_f16_operands():
    """Every matmul of the fp16 backward but the row sum (``b``'s gradient, float32) takes f16
    operands and accumulates in float32."""
    descs = [pa.TensorDesc(s, "float16") for s in [(7, 33), (33, 40), (40,), (7, 40)]]
    module, dtypes = Backward(linear_gelu).__pyasc_build__(descs, "linear_gelu_backward")
    assert dtypes == ["float16"] * 3
    mms = [op for op in module.walk() if op.name == "asc.matmul"]
    kinds = sorted(
        (str(op.operands[0].type.element_type), str(op.results[0].type.element_type)) for op in mms
    )
    assert kinds == [("f16", "f32")] * 3 + [("f32", "f32")]
