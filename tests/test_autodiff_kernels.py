"""Backward kernels compiled by the ordinary pipeline (``pa.vjp``): the CPU build of the
emitted Ascend C against the interpreter and a float64 reference, kernel counts and GM bytes,
``op.info["backward"]``, and the API's errors.

Tolerances: the gradient against the float64 reference (``torch.autograd`` on float64 copies
of the inputs) ``rtol = atol = 1e-4 * max(1, max|grad|)`` for fp32 (weight/bias gradients
sum up to 513 rows), ``2e-3 * max(1, max|grad|)`` for fp16; the CPU build against the
interpreter ``rtol = atol = 1e-5 * max(1, max|grad|)`` for fp32 (the Cube's row sums
accumulate in the CPU runtime's ``Mmad`` order, not NumPy's; ``expf`` differs from the
interpreter's rounding in ~1e-4 of the elements by one ulp) and one f16 ulp (``1e-3``) for
fp16. Two runs of the CPU build give the same bits (the row sums are deterministic).
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from helpers import seed_of
from test_autodiff_structural import (
    attention,
    layer_norm,
    residual_layer_norm,
    rms_norm,
    softmax,
    swiglu,
)

import pyasc_mlir as pa

F32 = np.dtype("float32").itemsize


def _torch_grads(ref, args: list[np.ndarray], dy: np.ndarray) -> list[np.ndarray]:
    ts = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in args]
    ref(*ts).backward(torch.tensor(dy.astype(np.float64)))
    return [t.grad.numpy() for t in ts]


def _t_ln(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def _t_rms(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w


REFS = {
    "layer_norm": (layer_norm, _t_ln, lambda r, c: [(r, c), (c,), (c,)]),
    "residual_layer_norm": (
        residual_layer_norm,
        lambda x, r, w, b: _t_ln(x + r, w, b),
        lambda r, c: [(r, c), (r, c), (c,), (c,)],
    ),
    "rms_norm": (rms_norm, _t_rms, lambda r, c: [(r, c), (c,)]),
    "softmax": (softmax, lambda x: torch.softmax(x, -1), lambda r, c: [(r, c)]),
}


def _args(name: str, rows: int, cols: int, dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(seed_of(name, rows, cols, dtype))
    shapes = REFS[name][2](rows, cols)
    return [rng.standard_normal(s).astype(dtype) for s in [*shapes, (rows, cols)]]


def _check_backward(name: str, rows: int, cols: int, dtype: str) -> pa.CompiledOp:
    fn, ref, _ = REFS[name]
    args = _args(name, rows, cols, dtype)
    op = pa.vjp(fn).compile(*args)
    cpu, interp = op(*args), op(*args, backend="interp")
    cpu = cpu if isinstance(cpu, tuple) else (cpu,)
    interp = interp if isinstance(interp, tuple) else (interp,)
    want = _torch_grads(ref, args[:-1], args[-1])
    again = op(*args)
    for c, d in zip(cpu, again if isinstance(again, tuple) else (again,), strict=True):
        np.testing.assert_array_equal(c, d)  # deterministic: the same bits on every run
    for i, (c, s, w, a) in enumerate(zip(cpu, interp, want, args, strict=False)):
        assert c.dtype == a.dtype and c.shape == a.shape, i
        scale = max(1.0, float(np.abs(w).max()))
        same = 1e-3 if dtype == "float16" else 1e-5  # one f16 ulp / fp32 sums reordered
        np.testing.assert_allclose(
            c, s, rtol=same, atol=same * scale, err_msg=f"grad {i}: CPU build vs interpreter"
        )
        tol = (2e-3 if dtype == "float16" else 1e-4) * scale
        np.testing.assert_allclose(c.astype(np.float64), w, rtol=tol, atol=tol, err_msg=str(i))
    return op


@pytest.mark.parametrize(("name", "dtype"), [("layer_norm", "float32"), ("softmax", "float16")])
def test_backward_cpu_build_matches_interpreter_and_torch(name: str, dtype: str):
    _check_backward(name, 7, 33, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("rows", [1, 33, 513])
@pytest.mark.parametrize("name", sorted(REFS))
def test_backward_cpu_build_on_tails(name: str, rows: int, dtype: str):
    _check_backward(name, rows, 33 if rows != 33 else 513, dtype)


def test_kernel_counts_and_gm_bytes():
    """The backward of residual+LayerNorm and RMSNorm is 2 kernels (one vector kernel: the
    recomputed forward, dx and the row products; one Cube kernel: the weight/bias sums over the
    rows); softmax's is 1 vector kernel at the minimum GM traffic (read x, dy; write dx).

    GM bytes, by tensor (``plane`` = one [rows, cols] fp32 tensor, ``col`` = one [cols] vector,
    ``ones`` = the [rows, 1] ones column, written by the vector kernel, read by the Cube one):
    residual+LayerNorm reads x, r, w, dy and writes dx, dr, dy * xhat, ones; the Cube kernel
    reads dy, dy * xhat, ones and writes dw, db (``b`` is never read). RMSNorm: x, w, dy ->
    dx, dy * x * rstd, ones; then that product and ones -> dw."""
    rows, cols = 513, 256
    plane, col, ones = rows * cols * F32, cols * F32, rows * F32
    expect = {
        "residual_layer_norm": (2, 8 * plane + 3 * col + 2 * ones),
        "rms_norm": (2, 5 * plane + 2 * col + 2 * ones),
        "softmax": (1, 3 * plane),
    }
    for name, (kernels, gm_bytes) in expect.items():
        fn = REFS[name][0]
        info = pa.vjp(fn, strategy="recompute").compile(*_args(name, rows, cols, "float32")).info
        assert info["kernels"] == kernels, name
        assert info["gm_bytes"] == gm_bytes, (name, info["gm_bytes"])
        entry = info["backward"]
        assert {k: entry[k] for k in ("strategy", "saved", "saved_bytes", "forward")} == {
            "strategy": "recompute",
            "saved": [],
            "saved_bytes": 0,
            "forward": fn.__name__,
        }
        assert entry["requested"] == "recompute" and entry["modeled"]["label"] == "modeled"
        assert info["gm_bytes"] < info["unfused_gm_bytes"], name


def test_vjp_of_a_jit_function_and_single_input():
    @pa.jit
    def gelu(x):
        return 0.5 * x * (1.0 + pa.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))

    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 33)).astype(np.float32)
    dy = rng.standard_normal((5, 33)).astype(np.float32)
    grads = pa.vjp(gelu)(x, dy)
    assert isinstance(grads, tuple) and len(grads) == 1
    t = torch.tensor(x.astype(np.float64), requires_grad=True)
    torch.nn.functional.gelu(t, approximate="tanh").backward(torch.tensor(dy.astype(np.float64)))
    np.testing.assert_allclose(grads[0], t.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_wrong_cotangents_are_located_errors():
    x, w, b, dy = _args("layer_norm", 7, 33, "float32")
    vjp = pa.vjp(layer_norm)
    with pytest.raises(pa.PyAscUsageError) as e:
        vjp(x, w, b, dy[:3])  # the line of this call
    text = str(e.value)
    assert "layer_norm_backward: cotangent 0 must be [7, 33] float32" in text
    assert "got [3, 33] float32" in text and "test_autodiff_kernels.py:" in text
    assert "hint: pass one cotangent per result of layer_norm() after its arguments" in text
    with pytest.raises(pa.PyAscUsageError, match="expected 1 cotangent"):
        vjp(x, w, b)
    with pytest.raises(
        pa.PyAscUsageError, match=r"must be \[7, 33\] float32.*got \[7, 33\] float16"
    ):
        vjp(x, w, b, dy.astype(np.float16))


def test_constant_inputs_get_no_gradient_slot():
    """A compile-time constant of the forward is passed to the backward too; gradients come
    only for the tensor arguments."""

    def scaled(x, k):
        return x * k

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    dy = np.ones((2, 3), np.float32)
    (dx,) = pa.vjp(scaled)(x, 2.5, dy)
    np.testing.assert_array_equal(dx, np.full((2, 3), 2.5, np.float32))


def test_compile_grad_writes_a_relocatable_backward_entry(tmp_path):
    """``pa.compile(..., grad=True)``: op.json's ``backward`` entry names the sub-folder
    holding the compiled backward; a copy of the folder loads both with ``load_op`` /
    ``load_backward`` and the backward computes what ``pa.vjp`` does."""
    x, w, b, dy = _args("layer_norm", 7, 33, "float32")
    descs = [pa.TensorDesc(a.shape, a.dtype) for a in (x, w, b)]
    op = pa.compile(layer_norm, descs, output_dir=tmp_path / "ln", grad=True)
    entry = json.loads((tmp_path / "ln" / "op.json").read_text())["backward"]
    assert entry["folder"] == "backward" and entry["name"] == "layer_norm_backward"
    assert entry["strategy"] == "recompute" and entry["kernels"] == 2
    assert [d["shape"] for d in entry["inputs"]] == [[7, 33], [33], [33], [7, 33]]
    assert [d["shape"] for d in entry["outputs"]] == [[7, 33], [33], [33]]
    moved = tmp_path / "moved"
    shutil.copytree(tmp_path / "ln", moved)
    np.testing.assert_array_equal(pa.load_op(moved)(x, w, b), op(x, w, b))
    grads = pa.load_backward(moved)(x, w, b, dy)
    for g, v in zip(grads, pa.vjp(layer_norm)(x, w, b, dy), strict=True):
        np.testing.assert_array_equal(g, v)


def test_load_backward_without_grad_is_an_error(tmp_path):
    op = pa.compile(softmax, [pa.TensorDesc((4, 8), "float32")], output_dir=tmp_path / "sm")
    with pytest.raises(pa.PyAscUsageError) as e:
        pa.load_backward(op)
    assert "op.json has no backward entry" in str(e.value)
    assert "hint: compile the operator with pa.compile(fn, inputs, grad=True)" in str(e.value)


def _t_attention(q, k, v):
    return torch.softmax(q @ k.transpose(-1, -2) * 0.125, -1) @ v


def _t_swiglu(x, wg, wu):
    return torch.nn.functional.silu(x @ wg) * (x @ wu)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fn", "ref", "shapes", "kernels"),
    [
        (attention, _t_attention, [(2, 16, 8), (2, 24, 8), (2, 24, 8)], 4),
        (swiglu, _t_swiglu, [(33, 16), (16, 40), (16, 40)], 5),
    ],
    ids=["attention", "swiglu"],
)
def test_matmul_operator_backward_kernels(fn, ref, shapes, kernels: int):
    """Attention and SwiGLU backward on the CPU build (Cube kernels for every matmul of the
    backward) against torch float64 autograd; the kernel counts as measured."""
    rng = np.random.default_rng(seed_of(fn.__name__))
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    out = ref(*[torch.tensor(a) for a in args])
    dy = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    op = pa.vjp(fn).compile(*args, dy)
    assert op.info["kernels"] == kernels
    want = _torch_grads(ref, args, dy)
    for g, w in zip(op(*args, dy), want, strict=True):
        tol = 1e-4 * max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g.astype(np.float64), w, rtol=tol, atol=tol)
