"""PyTorch interop (``pyasc_mlir.torch``): CPU ``torch.Tensor`` arguments to ``@jit`` functions
and ``CompiledOp`` (torch in -> torch out, NumPy in -> NumPy out, mixed -> torch), memory
sharing, the refused tensors (other devices, integer dtypes) with located errors, and
``custom_op`` (``torch.library``) called from an ``nn.Module``, on CPU, meta and fake tensors.

Skipped as a whole, with its reason, when PyTorch is not installed (``pip install
torch==2.13.0``).
"""

from __future__ import annotations

import inspect
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed (pip install torch==2.13.0): interop tests skip"
)

from helpers import assert_close, tagged_line  # noqa: E402

import pyasc_mlir as pa  # noqa: E402
from pyasc_mlir.errors import PyAscUsageError  # noqa: E402
from pyasc_mlir.torch import TorchOp, custom_op, to_numpy  # noqa: E402

THIS = __file__
SHAPES = [(7, 33), (1, 513)]
DTYPES = [torch.float16, torch.float32]
TOL = {torch.float16: 2e-3, torch.float32: 2e-6}
GEN = torch.Generator().manual_seed(11)


def rand(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    return (torch.rand(shape, generator=GEN) * 4 - 2).to(dtype)


@pa.jit
def gated(x, y, w, scale=0.5):
    """x * sigmoid(y) * w * scale, and the row sums of x * y (two results)."""
    return x * pa.sigmoid(y) * w * scale, (x * y).sum(-1, keepdim=True)


def gated_ref(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, scale: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """NumPy reference in float32 (the kernel computes float16 in float32, rounds once)."""
    x32, y32, w32 = (a.astype(np.float32) for a in (x, y, w))
    a = x32 / (1 + np.exp(-y32)) * w32 * np.float32(scale)
    b = (x32 * y32).sum(-1, keepdims=True, dtype=np.float64)
    return a.astype(x.dtype), b.astype(x.dtype)


def assert_tensor_close(got: torch.Tensor, want: np.ndarray, dtype: torch.dtype) -> None:
    """``got`` is a CPU tensor of ``dtype`` and ``want``'s shape, within this module's
    tolerance (``TOL``; atol 4x rtol)."""
    assert isinstance(got, torch.Tensor) and got.device.type == "cpu"
    assert got.dtype == dtype and tuple(got.shape) == want.shape
    assert_close(got.numpy(), want, rtol=TOL[dtype], atol=TOL[dtype] * 4)


def assert_located(err: PyAscUsageError, line: int, *words: str) -> None:
    """The error names this file at ``line`` and says ``words``, with a hint."""
    text = str(err)
    assert err.loc is not None and err.loc.file == THIS and err.loc.line == line, text
    assert "hint: " in text, text
    for w in words:
        assert w in text, (w, text)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_jit_torch_in_torch_out(shape: tuple[int, ...], dtype: torch.dtype) -> None:
    x, y = rand(shape, dtype), rand(shape, dtype)
    w = rand(shape[-1:], dtype)
    a, b = gated(x, y, w, scale=0.25)
    want_a, want_b = gated_ref(x.numpy(), y.numpy(), w.numpy(), 0.25)
    assert_tensor_close(a, want_a, dtype)
    assert_tensor_close(b, want_b, dtype)
    na, nb = gated(x.numpy(), y.numpy(), w.numpy(), scale=0.25)  # NumPy in -> NumPy out
    assert type(na) is np.ndarray and type(nb) is np.ndarray
    np.testing.assert_array_equal(na, a.numpy())
    ma, mb = gated(x.numpy(), y, w.numpy(), scale=0.25)  # mixed -> torch
    assert isinstance(ma, torch.Tensor) and isinstance(mb, torch.Tensor)
    assert torch.equal(ma, a) and torch.equal(mb, b)


def test_views_grad_and_memory_sharing() -> None:
    base = rand((33, 7), torch.float32)
    x = base.T  # non-contiguous (7, 33) view
    y = rand((7, 33), torch.float32).requires_grad_()
    w = torch.nn.Parameter(rand((33,), torch.float32))
    with torch.no_grad():  # no gradient wanted: tensors that require grad are fine
        a, _ = gated(x, y, w)
    want, _ = gated_ref(x.numpy(), y.detach().numpy(), w.detach().numpy())
    assert_tensor_close(a, want, torch.float32)
    assert not a.requires_grad
    c = rand((7, 33), torch.float16)
    assert to_numpy(c, "c").ctypes.data == c.data_ptr()  # contiguous: a view, no copy
    assert to_numpy(x, "x").flags.c_contiguous


def test_tensors_that_need_a_gradient_are_refused() -> None:
    """A pyasc operator has no backward: in a grad-enabled context a tensor that requires grad
    is a located error naming the operator, not a silent detach (upstream grads None)."""
    x, y = rand((7, 33), torch.float32), rand((7, 33), torch.float32)
    leaf = rand((33,), torch.float32).requires_grad_()
    w = leaf * 2  # a non-leaf in the graph: its upstream gradient would be lost
    with pytest.raises(PyAscUsageError) as info:
        gated(x, y, w)  # ERR call1
    assert_located(
        info.value,
        tagged_line(__file__, "call1"),
        "argument 2 of gated()",
        "requires grad",
        "no backward",
        ".detach()",
        "torch.no_grad()",
    )
    assert leaf.grad is None
    op = pa.compile(
        gated, [pa.TensorDesc((7, 33), "float32")] * 2 + [pa.TensorDesc((33,), "float32")]
    )
    param = torch.nn.Parameter(rand((7, 33), torch.float32))
    with pytest.raises(PyAscUsageError) as info:
        op(x, param, w.detach())  # ERR call2
    assert_located(
        info.value,
        tagged_line(__file__, "call2"),
        "argument 1 ('y')",
        "gated()",
        "requires grad",
        ".detach()",
    )
    with pytest.raises(PyAscUsageError) as info:
        gated((x, y)[0], y, torch.nn.Parameter(w.detach()))  # ERR call3
    assert_located(info.value, tagged_line(__file__, "call3"), "argument 2 of gated()")
    want, _ = gated_ref(x.numpy(), y.numpy(), w.detach().numpy())
    a, _ = gated(x, y, w.detach())  # the hint's way out: same values, no gradient
    assert_tensor_close(a, want, torch.float32)
    assert not a.requires_grad
    with torch.no_grad():
        b, _ = op(x, y, w)
    assert torch.equal(a, b)
    with torch.inference_mode():
        c, _ = gated(x, y, w)
    assert torch.equal(a, c)


def test_custom_op_backward_names_the_operator(rms_op: TorchOp) -> None:
    """The backward of a custom op of an operator without grad_mode is a located error naming
    it (never a silent None gradient)."""
    leaf = rand((7, 33), torch.float32).requires_grad_()
    y = rms_op(leaf * 1.0, torch.ones(33))
    assert y.requires_grad and y.grad_fn is not None
    with pytest.raises(PyAscUsageError, match="pyasc::rms_scale_test: the operator has no"):
        y.sum().backward()
    assert leaf.grad is None
    with torch.no_grad():
        want = rms_op(leaf.detach(), torch.ones(33))
    assert torch.equal(y.detach(), want)


def test_compiled_and_loaded_op_take_tensors(tmp_path) -> None:
    descs = [pa.TensorDesc((7, 33), "float16")] * 2 + [pa.TensorDesc((33,), "float16")]
    op = pa.compile(gated, [*descs, 2.0], output_dir=tmp_path / "gated")
    loaded = pa.load_op(tmp_path / "gated")
    x, y, w = rand((7, 33), torch.float16), rand((7, 33), torch.float16), rand((33,), torch.float16)
    want_a, want_b = gated_ref(x.numpy(), y.numpy(), w.numpy(), 2.0)
    for run in (op, loaded):
        a, b = run(x, y, w)
        assert_tensor_close(a, want_a, torch.float16)
        assert_tensor_close(b, want_b, torch.float16)
    a, _ = op(x.double(), y.numpy(), w)  # a float64 tensor is converted like a float64 array
    assert_tensor_close(a, want_a, torch.float16)
    na, _ = op(x.numpy(), y.numpy(), w.numpy())
    assert type(na) is np.ndarray
    ia, _ = op(x, y, w, backend="interp")
    assert_tensor_close(ia, want_a, torch.float16)


def test_refused_tensors_have_located_errors() -> None:
    x = rand((7, 33), torch.float32)
    w = rand((33,), torch.float32)
    with pytest.raises(PyAscUsageError) as info:
        gated(x.to("meta"), x, w)  # ERR call4
    assert_located(
        info.value,
        tagged_line(__file__, "call4"),
        "argument 0 of gated()",
        "device 'meta'",
        "only CPU tensors are supported",
        ".cpu()",
    )
    with pytest.raises(PyAscUsageError) as info:
        gated(x, x.to(torch.int32), w)  # ERR call5
    assert_located(
        info.value,
        tagged_line(__file__, "call5"),
        "argument 1 of gated()",
        "holds int32 elements; tensors are float16, bfloat16 or float32",
        "x.float()",
    )
    op = pa.compile(
        gated, [pa.TensorDesc((7, 33), "float32")] * 2 + [pa.TensorDesc((33,), "float32")]
    )
    with pytest.raises(PyAscUsageError) as info:
        op(x, x, w.to("meta"))  # ERR call6
    assert_located(
        info.value,
        tagged_line(__file__, "call6"),
        "argument 2 ('w')",
        "only CPU tensors are supported",
    )
    with pytest.raises(PyAscUsageError) as info:
        gated(x.to_sparse(), x, w)  # ERR call7
    assert_located(info.value, tagged_line(__file__, "call7"), "only dense")


@pa.jit
def rms_scale(x, w, eps=1e-6):
    return x * pa.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w


class Block(torch.nn.Module):
    """A linear layer, then the pyasc RMS norm registered with torch.library."""

    def __init__(self, norm: TorchOp, dim: int, dtype: torch.dtype):
        super().__init__()
        self.norm = norm
        self.lin = torch.nn.Linear(dim, dim, dtype=dtype)
        self.weight = torch.nn.Parameter(rand((dim,), dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.lin(x), self.weight, eps=1e-5)


@pytest.fixture(scope="module")
def rms_op() -> TorchOp:
    return custom_op(rms_scale, "rms_scale_test")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_custom_op_in_a_model(rms_op: TorchOp, shape: tuple[int, ...], dtype: torch.dtype) -> None:
    model = Block(rms_op, shape[-1], dtype)
    x = rand(shape, dtype)
    with torch.no_grad():
        got = model(x)
        h = model.lin(x).float()
        want = h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 1e-5) * model.weight.float()
    assert_tensor_close(got, want.to(dtype).numpy(), dtype)
    assert rms_op.qualname == "pyasc::rms_scale_test"
    direct = torch.ops.pyasc.rms_scale_test(model.lin(x).detach(), model.weight.detach(), 1e-5)
    assert isinstance(direct, list) and torch.equal(direct[0], got)


def test_custom_op_fake_and_meta_shapes(rms_op: TorchOp) -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    meta = rms_op(
        torch.empty(7, 33, device="meta", dtype=torch.float16),
        torch.empty(33, device="meta", dtype=torch.float16),
    )
    assert meta.device.type == "meta" and meta.shape == (7, 33) and meta.dtype == torch.float16
    with FakeTensorMode():
        fake = rms_op(torch.empty(1, 513), torch.empty(513))
    assert fake.shape == (1, 513) and fake.dtype == torch.float32
    op = pa.compile(
        gated,
        [pa.TensorDesc((7, 33), "float32")] * 2 + [pa.TensorDesc((33,), "float32")],
        name="gated_fixed",
    )
    fixed = custom_op(op)
    a, b = fixed(
        torch.empty(7, 33, device="meta"),
        torch.empty(7, 33, device="meta"),
        torch.empty(33, device="meta"),
    )
    assert (a.shape, b.shape) == ((7, 33), (7, 1))
    x, w = rand((7, 33), torch.float32), rand((33,), torch.float32)
    got_a, got_b = fixed(x, x, w)
    want_a, want_b = gated_ref(x.numpy(), x.numpy(), w.numpy(), 0.5)
    assert_tensor_close(got_a, want_a, torch.float32)
    assert_tensor_close(got_b, want_b, torch.float32)
    with pytest.raises(PyAscUsageError, match=r"compiled for \[7, 33\] float32"):
        fixed(
            torch.empty(8, 33, device="meta"),
            torch.empty(8, 33, device="meta"),
            torch.empty(33, device="meta"),
        )


def test_custom_op_exports_with_torch_export(rms_op: TorchOp) -> None:
    model = Block(rms_op, 33, torch.float32).eval()
    x = rand((7, 33), torch.float32)
    with torch.no_grad():
        exported = torch.export.export(model, (x,))
        assert "torch.ops.pyasc.rms_scale_test" in exported.graph_module.code
        assert torch.equal(exported.module()(x), model(x))


def test_custom_op_passes_torch_opcheck(rms_op: TorchOp) -> None:
    x, w = rand((7, 33), torch.float32), rand((33,), torch.float32)
    torch.library.opcheck(
        rms_op.op.default, (x, w), {"eps": 1e-5}, test_utils=("test_schema", "test_faketensor")
    )


def test_custom_op_refuses_other_devices_at_the_call(rms_op: TorchOp) -> None:
    x = rand((7, 33), torch.float32)
    with pytest.raises(PyAscUsageError) as info:
        rms_op(x, torch.ones(33, dtype=torch.int32))  # ERR call8
    assert_located(
        info.value,
        tagged_line(__file__, "call8"),
        "argument 1 of rms_scale() holds int32 elements",
        "tensors are float16, bfloat16 or float32",
    )
    with pytest.raises(PyAscUsageError, match="parameter 'mode' has default None"):
        custom_op(lambda_like_op)


def lambda_like_op(x, mode=None):
    return x


def test_importing_pyasc_does_not_import_torch_and_missing_torch_hint() -> None:
    code = (
        "import sys, pyasc_mlir\nassert 'torch' not in sys.modules\n"
        "sys.modules['torch'] = None\n"
        "try:\n    import pyasc_mlir.torch\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "pip install torch==2.13.0" in out, out


def _softmax_rows(x):
    e = pa.exp(x - x.max(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def test_custom_op_shape_error_points_at_the_calling_line() -> None:
    """torch.library's dispatch frames are skipped: the error names the user's call."""
    op = pa.compile(_softmax_rows, [pa.TensorDesc((4, 8), "float32")])
    co = custom_op(op, name="softmax_rows_4x8")
    line = inspect.currentframe().f_lineno + 2  # the call below
    with pytest.raises(PyAscUsageError) as info:
        co(torch.randn(4, 9))
    assert_located(info.value, line, "has shape [4, 9]", "compiled for [4, 8]")
