"""``custom_op`` autograd (``pyasc_mlir.torch_autograd``): a ``grad_mode`` operator registered
with ``torch.library`` differentiates through its compiled backward (``pyasc::<name>_backward``)
in eager torch, in ``torch.compile`` (aot_eager, inductor) and in ``torch.export`` graphs
(inference and the joint forward-backward graph), against torch's float64 autograd of the same
math. Errors: double backward, an operator without a backward. The fp16 matmul backward does not
compile at [33, 16] @ [16, 7] (its dW output does not span the leading dims): not tested.

Tolerances against float64 references: fp32 ``rtol = 1e-4``, ``atol = 1e-5 * max|grad|``
(weight/bias gradients sum up to 33 rows in float32); fp16 inputs ``rtol = atol = 2e-3 *
max|grad|`` relative to the largest gradient (fp16 storage, float32 compute, one rounding).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import pyasc_mlir as pa
from pyasc_mlir.torch import TorchOp, custom_op


def layer_norm(x, w, b):
    m = pa.mean(x, axis=-1, keepdim=True)
    d = x - m
    return d * pa.rsqrt(pa.mean(d * d, axis=-1, keepdim=True) + 1e-5) * w + b


def rms_norm(x, w, eps=1e-6):
    return x * pa.rsqrt(pa.mean(x * x, axis=-1, keepdim=True) + eps) * w


def softmax(x):
    e = pa.exp(x - pa.max(x, axis=-1, keepdim=True))
    return e / pa.sum(e, axis=-1, keepdim=True)


def gelu(x):
    return 0.5 * x * (1.0 + pa.erf(x * 0.7071067811865476))


def linear(x, w):
    return pa.matmul(x, w)


def _t_rms(x, w, eps=1e-6):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w


# name -> (operator, torch reference, input shapes): rows 1, 7 and 33 (tails), odd columns
CASES: dict[str, tuple[Callable[..., Any], Callable[..., Any], list[tuple[int, ...]]]] = {
    "layer_norm": (
        layer_norm,
        lambda x, w, b: torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
        [(7, 33), (33,), (33,)],
    ),
    "rms_norm": (rms_norm, _t_rms, [(33, 40), (40,)]),
    "softmax": (softmax, lambda x: torch.softmax(x, -1), [(1, 33)]),
    "gelu": (gelu, torch.nn.functional.gelu, [(7, 33)]),
    "linear": (linear, lambda x, w: x @ w, [(33, 16), (16, 7)]),
}

_OPS: dict[tuple[str, torch.dtype], TorchOp] = {}


def _op(name: str, dtype: torch.dtype = torch.float32) -> TorchOp:
    """The custom op of case ``name`` (registered once per dtype: separate names keep the
    per-shape kernels of each test apart)."""
    key = (name, dtype)
    if key not in _OPS:
        tag = "f16" if dtype == torch.float16 else "f32"
        fn = CASES[name][0]
        _OPS[key] = custom_op(pa.jit(fn, grad_mode=True), f"ag_{name}_{tag}")
    return _OPS[key]


def _inputs(name: str, dtype: torch.dtype) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(len(name))
    return [torch.randn(s, generator=gen).to(dtype).requires_grad_() for s in CASES[name][2]]


def _check(name: str, xs: list[torch.Tensor], dy: torch.Tensor) -> None:
    """Each ``x.grad`` against torch's float64 autograd of the reference on ``xs``, ``dy``."""
    ref64 = [x.detach().double().requires_grad_() for x in xs]
    CASES[name][1](*ref64).backward(dy.double())
    for i, (x, r) in enumerate(zip(xs, ref64, strict=True)):
        assert x.grad is not None and x.grad.dtype == x.dtype and x.grad.shape == x.shape, i
        scale = float(r.grad.abs().max())
        fp16 = x.dtype == torch.float16
        tol = dict(rtol=2e-3, atol=2e-3 * scale) if fp16 else dict(rtol=1e-4, atol=1e-5 * scale)
        torch.testing.assert_close(x.grad.double(), r.grad, **tol, msg=f"{name} input {i}")


def _run(name: str, dtype: torch.dtype, call: Callable[..., torch.Tensor]) -> None:
    xs = _inputs(name, dtype)
    y = call(*xs)
    assert y.grad_fn is not None and y.dtype == dtype
    dy = torch.randn(y.shape, generator=torch.Generator().manual_seed(7)).to(dtype)
    y.backward(dy)
    _check(name, xs, dy)


FAST_EAGER = ("layer_norm", "rms_norm", "linear")


@pytest.mark.parametrize(
    "name",
    [n if n in FAST_EAGER else pytest.param(n, marks=pytest.mark.slow) for n in sorted(CASES)],
)
def test_eager_gradients_match_torch_float64(name: str) -> None:
    _run(name, torch.float32, _op(name))


@pytest.mark.parametrize("name", ["layer_norm", pytest.param("softmax", marks=pytest.mark.slow)])
def test_eager_gradients_fp16(name: str) -> None:
    _run(name, torch.float16, _op(name, torch.float16))


@pytest.mark.parametrize(
    "name",
    ["rms_norm", *(pytest.param(n, marks=pytest.mark.slow) for n in ("softmax", "gelu"))],
)
def test_torch_compile_aot_eager_gradients(name: str) -> None:
    op = _op(name)
    torch._dynamo.reset()
    _run(name, torch.float32, torch.compile(lambda *xs: op(*xs), backend="aot_eager"))


@pytest.mark.slow
def test_torch_compile_inductor_gradients() -> None:
    """Inductor keeps the two custom ops opaque (fallback kernels) on this CPU."""
    op = _op("layer_norm")
    torch._dynamo.reset()
    _run("layer_norm", torch.float32, torch.compile(lambda *xs: op(*xs), backend="inductor"))


class _Block(torch.nn.Module):
    """``nn.Linear -> pyasc LayerNorm -> sum of squares`` (a scalar loss)."""

    def __init__(self, norm: TorchOp) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.norm = norm
        self.lin = torch.nn.Linear(16, 33)
        self.w = torch.nn.Parameter(torch.randn(33))
        self.b = torch.nn.Parameter(torch.randn(33))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (self.norm(self.lin(x), self.w, self.b) ** 2).sum()


def _torch_block_grads(block: _Block, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The float64 gradients of ``block``'s loss with torch's own LayerNorm."""
    params = {k: p.detach().double().requires_grad_() for k, p in block.named_parameters()}
    h = torch.nn.functional.linear(x.double(), params["lin.weight"], params["lin.bias"])
    y = torch.nn.functional.layer_norm(h, (33,), params["w"], params["b"], 1e-5)
    (y**2).sum().backward()
    return {k: p.grad for k, p in params.items()}


def test_torch_export_runs_and_trains_through_the_exported_module() -> None:
    block = _Block(_op("layer_norm"))
    x = torch.randn(7, 16, generator=torch.Generator().manual_seed(3))
    exported = torch.export.export(block, (x,))
    code = exported.graph_module.code
    assert "torch.ops.pyasc.ag_layer_norm_f32.default" in code
    module = exported.module()
    loss = module(x)
    torch.testing.assert_close(loss, block(x), rtol=1e-6, atol=1e-6)
    loss.backward()  # the exported module keeps the op's autograd formula
    want = _torch_block_grads(block, x)
    got = dict(module.named_parameters())
    assert set(got) == set(want)
    for k, p in got.items():
        scale = float(want[k].abs().max())
        torch.testing.assert_close(p.grad.double(), want[k], rtol=1e-4, atol=1e-5 * scale)
    decomposed = exported.run_decompositions()
    assert "torch.ops.pyasc.ag_layer_norm_f32.default" in decomposed.graph_module.code
    torch.testing.assert_close(decomposed.module()(x), loss, rtol=0, atol=0)


def test_torch_export_joint_graph_has_the_backward_op() -> None:
    """``_export_forward_backward``: the exported joint graph calls ``<name>_backward`` and
    its gradient outputs equal torch's."""
    from torch.export.experimental import _export_forward_backward

    block = _Block(_op("layer_norm"))
    x = torch.randn(7, 16, generator=torch.Generator().manual_seed(3))
    joint = _export_forward_backward(torch.export.export(block, (x,)), joint_loss_index=0)
    assert "torch.ops.pyasc.ag_layer_norm_f32_backward.default" in joint.graph_module.code
    specs = joint.graph_signature.output_specs
    targets = [s.target for s in specs if s.kind.name == "GRADIENT_TO_PARAMETER"]
    params = dict(block.named_parameters())
    with torch.no_grad():
        out = joint.graph_module(
            *(
                params[s.target]
                for s in joint.graph_signature.input_specs
                if s.kind.name == "PARAMETER"
            ),
            x,
        )
    want = _torch_block_grads(block, x)
    grads = out[1:]
    assert sorted(targets) == sorted(want)
    for k, g in zip(targets, grads, strict=True):
        scale = float(want[k].abs().max())
        torch.testing.assert_close(g.double(), want[k], rtol=1e-4, atol=1e-5 * scale)


def test_defaulted_constant_gets_no_gradient_slot() -> None:
    """``eps`` left at (or passed equal to) its default is dropped by the dispatcher before
    autograd sees it; passed otherwise, it gets a ``None`` gradient: both backward."""
    op = _op("rms_norm")
    for kwargs in ({}, {"eps": 1e-6}, {"eps": 1e-3}):
        xs = _inputs("rms_norm", torch.float32)
        y = op(*xs, **kwargs)
        dy = torch.ones_like(y)
        y.backward(dy)
        ref64 = [x.detach().double().requires_grad_() for x in xs]
        _t_rms(*ref64, **kwargs).backward(dy.double())
        for x, r in zip(xs, ref64, strict=True):
            torch.testing.assert_close(x.grad.double(), r.grad, rtol=1e-4, atol=1e-5)


def test_backward_op_schema_and_fake_shapes() -> None:
    op = _op("rms_norm")
    bwd = torch.ops.pyasc.ag_rms_norm_f32_backward.default
    assert str(bwd._schema).endswith(
        "(Tensor x, Tensor w, float eps, Tensor[] cotangents) -> Tensor[]"
    )
    x, w = torch.empty(33, 40, device="meta"), torch.empty(40, device="meta")
    gx, gw = bwd(x, w, 1e-6, [torch.empty(33, 40, device="meta")])
    assert (gx.shape, gw.shape, gx.dtype) == ((33, 40), (40,), torch.float32)
    xs = _inputs("rms_norm", torch.float32)
    torch.library.opcheck(
        op.op.default, tuple(xs), test_utils=("test_schema", "test_autograd_registration")
    )


def test_double_backward_is_a_located_error() -> None:
    op = _op("layer_norm")
    xs = _inputs("layer_norm", torch.float32)
    y = op(*xs)
    with pytest.raises(pa.PyAscUsageError) as e:
        torch.autograd.grad((y * y).sum(), xs[0], create_graph=True)  # the line of the error
    text = str(e.value)
    assert "double backward through pyasc::ag_layer_norm_f32" in text
    assert "test_custom_op_autograd.py:" in text and "create_graph=True" in text


def test_operator_without_grad_mode_is_a_located_error_on_backward() -> None:
    op = custom_op(softmax, "ag_softmax_no_grad")
    x = torch.randn(4, 8, requires_grad=True)
    y = op(x)
    assert y.grad_fn is not None
    with pytest.raises(pa.PyAscUsageError) as e:
        y.sum().backward()  # the line of the error
    text = str(e.value)
    assert "backward through pyasc::ag_softmax_no_grad: the operator has no backward" in text
    assert "test_custom_op_autograd.py:" in text and "grad_mode=True" in text
    assert x.grad is None


def test_compiled_op_with_grad_folder_differentiates(tmp_path) -> None:
    descs = [pa.TensorDesc((7, 33), "float32")]
    op = custom_op(pa.compile(softmax, descs, output_dir=tmp_path / "sm", grad=True), "ag_sm_c")
    x = torch.randn(7, 33, generator=torch.Generator().manual_seed(1)).requires_grad_()
    y = op(x)
    dy = torch.randn(7, 33, generator=torch.Generator().manual_seed(2))
    y.backward(dy)
    r = x.detach().double().requires_grad_()
    torch.softmax(r, -1).backward(dy.double())
    torch.testing.assert_close(x.grad.double(), r.grad, rtol=1e-4, atol=1e-5)


def test_compiled_op_without_grad_is_an_error_on_backward() -> None:
    op = custom_op(pa.compile(softmax, [pa.TensorDesc((4, 8), "float32")]), "ag_sm_nograd")
    x = torch.randn(4, 8, requires_grad=True)
    with pytest.raises(pa.PyAscUsageError, match="grad=True"):
        op(x).sum().backward()
