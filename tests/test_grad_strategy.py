"""Save vs recompute at run time (``pyasc_mlir/grad_strategy.py``): both strategies' compiled
backwards (CPU build) give the torch float64 autograd gradients, ``auto`` takes
``compare_strategies``' choice, ``info["backward"]`` / ``op.json`` report the strategy, the
saved values and both strategies' MODELED µs, and a bad strategy is a located error.

Tolerances: against torch float64 ``rtol = atol = 1e-4 * max(1, max|grad|)`` (fp32, as in
``test_autodiff_kernels.py``); save against recompute ``rtol = atol = 1e-5 * max(1, max|grad|)``
(the same float32 statistics, read from GM instead of recomputed: only the kernels' operation
order differs).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_autodiff_kernels import REFS, _args, _torch_grads
from test_autodiff_structural import gelu_tanh, layer_norm, rms_norm, softmax

import pyasc_mlir as pa
from pyasc_mlir.grad_cost import compare_strategies


def _close(got, want, rel: float) -> None:
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        tol = rel * max(1.0, float(np.max(np.abs(w))))
        np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=tol, atol=tol, err_msg=i)


def _both(name: str, rows: int, cols: int) -> None:
    fn, ref, _ = REFS[name]
    args = _args(name, rows, cols, "float32")
    want = _torch_grads(ref, args[:-1], args[-1])
    rec = pa.vjp(fn, strategy="recompute")(*args)
    save = pa.vjp(fn, strategy="save")
    outs, saved = save.forward(*args[:-1])
    assert [s.dtype for s in saved] == [np.float32] * len(saved)
    if name == "softmax":  # its output itself (passes/autodiff_softmax.py)
        assert len(saved) == 1 and saved[0] is outs[0]
    else:
        assert [s.shape for s in saved] == [(rows, 1)] * len(saved)  # per-row statistics
    got = save(*args, saved=saved)
    _close(rec, want, 1e-4)
    _close(got, want, 1e-4)
    _close(got, [np.asarray(r, np.float64) for r in rec], 1e-5)
    _close(save(*args), [np.asarray(g, np.float64) for g in got], 0.0)  # forward run inside


def test_save_layer_norm_matches_torch_on_a_tail():
    """The fast check (the recompute backward: ``test_autodiff_kernels.py``)."""
    fn, ref, _ = REFS["layer_norm"]
    args = _args("layer_norm", 7, 33, "float32")
    got = pa.vjp(fn, strategy="save")(*args)
    _close(got, _torch_grads(ref, args[:-1], args[-1]), 1e-4)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "rows", "cols"), [("layer_norm", 7, 33), ("rms_norm", 7, 33), ("softmax", 33, 7)]
)
def test_save_and_recompute_on_tails(name: str, rows: int, cols: int):
    _both(name, rows, cols)


@pytest.mark.parametrize(
    ("fn", "n", "dtype"),
    [(softmax, 1, "float32"), (layer_norm, 3, "float32"), (rms_norm, 2, "float16")],
)
def test_auto_is_the_cost_models_choice(fn, n: int, dtype: str):
    """At [4096, 1024] (no g++: the decision only lowers and models both variants)."""
    descs = [pa.TensorDesc((4096, 1024), dtype), *[pa.TensorDesc((1024,), dtype)] * (n - 1)]
    decision = pa.vjp(fn).decision(*descs)
    modeled = compare_strategies(fn, descs)
    assert decision["strategy"] == modeled["choice"]
    assert decision["requested"] == "auto" and decision["reason"].startswith("auto: ")
    for s in ("recompute", "save"):
        assert decision["modeled"][s]["total_us"] == modeled[s]["total_us"]
    saved = sum(e["bytes"] for e in decision["saved"])
    assert saved == (modeled["save"]["saved_bytes"] if decision["strategy"] == "save" else 0)


def test_softmax_output_is_saved_as_itself():
    """The save backward of a softmax result reads y itself (no extra GM write; its
    ``y * (dy - sum(dy * y))`` is checked by ``test_save_and_recompute_on_tails``)."""
    x = pa.TensorDesc((33, 7), "float32")
    decision = pa.vjp(softmax, strategy="save").decision(x)
    assert decision["saved"] == [
        {"name": "saved0", "kind": "softmax", "shape": [33, 7], "dtype": "float32", "bytes": 0}
        | {"output": 0}
    ]
    assert decision["modeled"]["save"]["saved_bytes"] == 0


def test_nothing_to_save_is_recompute():
    decision = pa.vjp(gelu_tanh).decision(pa.TensorDesc((64, 128), "float32"))
    assert decision["strategy"] == "recompute" and decision["saved"] == []
    assert decision["reason"] == "auto: the forward has no reduction results to save"


def test_compile_grad_save_records_the_choice(tmp_path):
    """``compile(grad=True, grad_strategy="save")``: op.json's backward entry lists the saved
    values (LayerNorm: the mean and variance rows, float32) and both strategies' modeled µs;
    the saving forward and the backward loaded from the folder give ``pa.vjp``'s gradients."""
    x, w, b, dy = _args("layer_norm", 7, 33, "float32")
    descs = [pa.TensorDesc(a.shape, a.dtype) for a in (x, w, b)]
    op = pa.compile(layer_norm, descs, output_dir=tmp_path / "ln", grad=True, grad_strategy="save")
    entry = json.loads((tmp_path / "ln" / "op.json").read_text())["backward"]
    assert entry["strategy"] == "save" and entry["requested"] == "save"
    assert entry["saving_forward"] == "saving_forward"
    assert entry["saved"] == [
        {"name": n, "kind": "mean", "shape": [7, 1], "dtype": "float32", "bytes": 28}
        for n in ("m", "v")
    ]
    assert entry["saved_bytes"] == 56
    assert [d["shape"] for d in entry["inputs"]] == [[7, 33], [33], [33], [7, 33], [7, 1], [7, 1]]
    modeled = entry["modeled"]
    assert modeled["label"] == "modeled" and modeled["platform"] == op.info["platform"]
    assert modeled["save"]["saved_bytes"] == 56 and modeled["recompute"]["saved_bytes"] == 0
    for s in ("recompute", "save"):
        assert modeled[s]["total_us"] > 0
    outs = pa.load_saving_forward(tmp_path / "ln")(x, w, b)
    np.testing.assert_allclose(outs[0], op(x, w, b), rtol=1e-6, atol=1e-6)
    grads = pa.load_backward(tmp_path / "ln")(x, w, b, dy, *outs[1:])
    want = pa.vjp(layer_norm, strategy="save")(x, w, b, dy)
    for g, v in zip(grads, want, strict=True):
        np.testing.assert_array_equal(g, v)
    assert pa.vjp(layer_norm, strategy="save").compile(x, w, b, dy).info["backward"] == {
        k: v for k, v in entry.items() if k in ("strategy", "saved", "saved_bytes", "requested")
    } | {"forward": "layer_norm", "reason": entry["reason"], "modeled": modeled}


def test_grad_mode_with_save_keeps_the_statistics():
    """``@pa.jit(grad_mode=True, grad_strategy="save")`` on torch tensors: the gradients of
    torch's float64 autograd (the saved statistics stay in the autograd context)."""
    op = pa.jit(layer_norm, grad_mode=True, grad_strategy="save")
    args = [torch.from_numpy(a) for a in _args("layer_norm", 7, 33, "float32")]
    ts = [a.clone().requires_grad_(True) for a in args[:-1]]
    op(*ts).backward(args[-1])
    want = _torch_grads(REFS["layer_norm"][1], [a.numpy() for a in args[:-1]], args[-1].numpy())
    _close([t.grad.numpy() for t in ts], want, 1e-4)


def test_bad_strategy_is_a_located_error():
    with pytest.raises(pa.PyAscUsageError) as e:
        pa.vjp(layer_norm, strategy="keep")  # the line of the error
    text = str(e.value)
    assert "strategy='keep' is not a backward strategy" in text
    assert "test_grad_strategy.py" in text and "'recompute'" in text
    with pytest.raises(pa.PyAscUsageError, match="grad_strategy='fast' is not a backward"):
        pa.jit(layer_norm, grad_mode=True, grad_strategy="fast")
    with pytest.raises(pa.PyAscUsageError, match="grad_strategy=None is not a backward"):
        pa.compile(layer_norm, [pa.TensorDesc((7, 33), "float32")], grad=True, grad_strategy=None)


def test_saved_values_for_a_recompute_backward_is_an_error():
    x, w, b, dy = _args("layer_norm", 7, 33, "float32")
    with pytest.raises(pa.PyAscUsageError, match=r"1 saved value\(s\) given to the recompute"):
        pa.vjp(layer_norm, strategy="recompute")(x, w, b, dy, saved=[x[:, :1]])


@pytest.mark.slow
def test_custom_op_of_a_saving_compiled_op(tmp_path):
    """``custom_op`` of ``compile(softmax, grad=True, grad_strategy="save")``: the backward
    formula gets the saved value (the softmax output, from the saving forward) and gives
    torch's float64 gradient."""
    from pyasc_mlir.torch import custom_op

    descs = [pa.TensorDesc((7, 33), "float32")]
    folder = tmp_path / "sm"
    compiled = pa.compile(softmax, descs, output_dir=folder, grad=True, grad_strategy="save")
    assert compiled.info["backward"]["saved"][0]["output"] == 0
    op = custom_op(compiled, "gs_softmax_saved")
    x = torch.randn(7, 33, generator=torch.Generator().manual_seed(3)).requires_grad_()
    dy = torch.randn(7, 33, generator=torch.Generator().manual_seed(4))
    op(x).backward(dy)
    r = x.detach().double().requires_grad_()
    torch.softmax(r, -1).backward(dy.double())
    _close([x.grad.numpy()], [r.grad.numpy()], 1e-4)
