"""Device tensors (issue 13, item 3): ``pa.Tensor`` in the runtime's device memory.

Factories and host transfers (values, dtypes, 64-byte alignment, copies where the API says
so, located errors); compiled operators taking and returning ``pa.Tensor`` without copies
(the kernel's argument addresses are the tensors' buffers; the result is the buffer the kernel
wrote); eager tensor functions, methods and operators on ``pa.Tensor`` (each a cached compiled
operator) against NumPy, float16/bfloat16/float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import assert_close, tagged_line

import pyasc_mlir as pa
from pyasc_mlir import compiled_op, eager
from pyasc_mlir.device import ALIGN_BYTES, aligned_empty
from pyasc_mlir.runtime import cpu
from pyasc_mlir.types import BF16, astype


def f32(a: np.ndarray) -> np.ndarray:
    return astype(a, np.dtype(np.float32))


# --------------------------------------------------------------------------- factories


def test_factories_shapes_dtypes_values_alignment() -> None:
    z = pa.zeros(2, 3)
    assert z.shape == (2, 3) and z.dtype == pa.float16 and z.ndim == 2 and z.size == 6
    assert z.nbytes == 12 and len(z) == 2
    assert pa.zeros((2, 3)).shape == (2, 3)
    np.testing.assert_array_equal(z.to_numpy(), np.zeros((2, 3), np.float16))
    assert not np.signbit(z.to_numpy()).any()
    o = pa.ones((4,), dtype=pa.bfloat16)
    assert o.dtype == pa.bfloat16 and o.to_numpy().dtype == BF16
    np.testing.assert_array_equal(f32(o.to_numpy()), np.ones(4, np.float32))
    f = pa.full((3,), np.nan, dtype="float32")
    assert np.isnan(f.to_numpy()).all()
    assert pa.full((1,), 1 / 3, dtype=pa.float16).to_numpy()[0] == np.float16(1 / 3)  # once
    assert pa.empty(5, dtype=pa.float32).shape == (5,)
    r1, r2 = pa.randn(7, 33, seed=3), pa.randn(7, 33, seed=3)
    np.testing.assert_array_equal(r1.to_numpy(), r2.to_numpy())
    want = np.random.default_rng(3).standard_normal((7, 33), dtype=np.float32).astype(np.float16)
    np.testing.assert_array_equal(r1.to_numpy(), want)
    assert pa.empty(0, 4).shape == (0, 4)
    for t in (z, o, f, r1, pa.from_numpy(np.ones(3, np.float32))):
        assert t.data_ptr() % ALIGN_BYTES == 0
    assert "pa.Tensor(" in repr(o) and "bfloat16" in repr(o)


def test_from_numpy_and_to_numpy_copy() -> None:
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = pa.from_numpy(host)
    assert t.dtype == pa.float32 and t.data_ptr() != host.ctypes.data
    host[0, 0] = 99.0  # the device copy does not change
    back = t.to_numpy()
    assert back[0, 0] == 0.0 and back.ctypes.data != t.data_ptr()
    back[0, 1] = -1.0  # nor does the host copy write through
    assert t.to_numpy()[0, 1] == 1.0
    assert np.asarray(t).ctypes.data == t.data_ptr()  # the buffer view: no copy
    b = pa.from_numpy(np.linspace(-1, 1, 9), dtype=pa.bfloat16)
    np.testing.assert_array_equal(b.to_numpy(), np.linspace(-1, 1, 9).astype(BF16))
    assert pa.from_numpy(np.arange(3, dtype=np.int32), dtype=pa.float16).dtype == pa.float16


def test_transfer_errors_are_located() -> None:
    with pytest.raises(pa.PyAscUsageError) as info:
        pa.from_numpy(np.zeros(3))  # ERR f64
    err = info.value
    assert err.loc is not None and err.loc.line == tagged_line(__file__, "f64")
    assert "float64 array" in str(err) and "dtype=pa.float32" in str(err)
    with pytest.raises(pa.PyAscUsageError, match="only float and integer arrays"):
        pa.from_numpy(np.zeros(3, bool), dtype=pa.float16)
    with pytest.raises(pa.PyAscUsageError, match="outside the float16 range"):
        pa.from_numpy(np.array([1.0, 70000.0]), dtype=pa.float16)
    with pytest.raises(pa.PyAscUsageError) as info:
        pa.zeros(2, 3.5)  # ERR dim
    assert info.value.loc is not None and info.value.loc.line == tagged_line(__file__, "dim")
    with pytest.raises(pa.PyAscUsageError, match="bfloat16"):
        pa.ones(3, dtype="int8")


# --------------------------------------------------------------------------- no copies


def gated(x, w):
    return x * pa.sigmoid(x) * w


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[int]]:
    """Records the addresses every CPU kernel launch gets and every result buffer allocated."""
    seen: dict[str, list[int]] = {"args": [], "outs": []}
    run = cpu.CpuKernel.run

    def spy_run(self, block_dim, gm_args, tiling, workspace_bytes=0):  # type: ignore[no-untyped-def]
        seen["args"] += [a.ctypes.data for a in gm_args]
        return run(self, block_dim, gm_args, tiling, workspace_bytes)

    def spy_alloc(shape, dtype):  # type: ignore[no-untyped-def]
        out = aligned_empty(shape, dtype)
        seen["outs"].append(out.ctypes.data)
        return out

    monkeypatch.setattr(cpu.CpuKernel, "run", spy_run)
    monkeypatch.setattr(compiled_op, "new_output", spy_alloc)
    return seen


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_compiled_operator_takes_and_returns_device_tensors_without_copies(
    dtype: str, spy: dict[str, list[int]]
) -> None:
    x, w = pa.randn(7, 33, dtype=dtype, seed=1), pa.randn(33, dtype=dtype, seed=2)
    op = pa.compile(gated, [pa.TensorDesc((7, 33), dtype), pa.TensorDesc((33,), dtype)])
    y = op(x, w)
    assert isinstance(y, pa.Tensor) and y.shape == (7, 33) and y.dtype == dtype
    assert spy["args"] == [x.data_ptr(), w.data_ptr(), y.data_ptr()]  # inputs read in place
    assert spy["outs"] == [y.data_ptr()]  # the result is the buffer the kernel wrote
    assert y.data_ptr() % ALIGN_BYTES == 0
    xf, wf = f32(x.to_numpy()), f32(w.to_numpy())
    assert_close(
        y.to_numpy(), xf / (1 + np.exp(-xf)) * wf, np.dtype(pa.TensorDesc((1,), dtype).np_dtype)
    )
    z = op(y, w)  # a result feeds the next call in place
    assert spy["args"][-3:-1] == [y.data_ptr(), w.data_ptr()]
    assert isinstance(z, pa.Tensor)


def test_jit_function_on_device_tensors(spy: dict[str, list[int]]) -> None:
    jitted = pa.jit(gated)
    x, w = pa.randn(5, 16, dtype=pa.float32, seed=4), pa.ones(16, dtype=pa.float32)
    y = jitted(x, w)
    assert isinstance(y, pa.Tensor) and spy["args"][:2] == [x.data_ptr(), w.data_ptr()]
    np.testing.assert_array_equal(y.to_numpy(), jitted(x.to_numpy(), w.to_numpy()))
    assert isinstance(jitted(x.to_numpy(), w.to_numpy()), np.ndarray)  # NumPy in, NumPy out


# --------------------------------------------------------------------------- eager


HALF_CHECKS = ("chain", "exp", "sum", "max", "T")
"""The eager ops run for the 16-bit dtypes too (float32 runs them all: the eager machinery is
the same; each eager op is a compile and a g++ build)."""


@pytest.mark.parametrize(
    "dtype",
    [
        "float32",
        pytest.param("float16", marks=pytest.mark.slow),
        pytest.param("bfloat16", marks=pytest.mark.slow),
    ],
)
def test_eager_arithmetic_functions_methods_and_reductions(dtype: str) -> None:
    a, b = pa.randn(7, 33, dtype=dtype, seed=5), pa.randn(7, 33, dtype=dtype, seed=6)
    af, bf = f32(a.to_numpy()), f32(b.to_numpy())
    np_dtype = a.to_numpy().dtype
    checks: dict[str, Any] = {
        "add": lambda: (a + b, af + bf),
        "rsub": lambda: (2.0 - a, 2.0 - af),
        "mul": lambda: (a * b, af * bf),
        "div": lambda: (a / 4.0, af / 4.0),
        "neg": lambda: (-a, -af),
        "chain": lambda: ((a * 2.0 - b) * 0.5 + 1.0, (af * 2 - bf) * 0.5 + 1),
        "exp": lambda: (pa.exp(a), np.exp(af)),
        "maximum": lambda: (pa.maximum(a, b), np.maximum(af, bf)),
        "sum": lambda: (a.sum(-1, keepdim=True), af.sum(-1, keepdims=True)),
        "mean": lambda: (pa.mean(a, -1), af.mean(-1)),
        "max": lambda: (a.max(0), af.max(0)),
        "reshape": lambda: (a.reshape(33, 7), af.reshape(33, 7)),
        "T": lambda: (a.T, af.T),
    }
    for name, run in checks.items():  # lazily: each eager op compiles
        if dtype != "float32" and name not in HALF_CHECKS:
            continue
        got, want = run()
        assert isinstance(got, pa.Tensor), name
        assert got.to_numpy().dtype == np_dtype, name
        assert_close(got.to_numpy(), want, np_dtype, reduction=name in ("sum", "mean"))


def test_eager_matmul_cast_and_mixed_operands() -> None:
    a, b = pa.randn(33, 64, dtype=pa.bfloat16, seed=7), pa.randn(64, 40, dtype=pa.bfloat16, seed=8)
    af, bf = f32(a.to_numpy()), f32(b.to_numpy())
    for got in (a @ b, pa.matmul(a, b)):
        assert got.dtype == pa.bfloat16
        assert_close(got.to_numpy(), af.astype(np.float64) @ bf, BF16)
    c = pa.cast(a, pa.float32)
    assert c.dtype == pa.float32
    np.testing.assert_array_equal(c.to_numpy(), af)
    host = np.full((64,), 0.5, np.float32)
    mixed = pa.from_numpy(bf.T.copy(), dtype=pa.float32) * host  # a NumPy operand: a tensor too
    assert mixed.dtype == pa.float32
    np.testing.assert_array_equal(mixed.to_numpy(), bf.T * np.float32(0.5))
    parts = pa.concat([a, a], axis=0)
    assert parts.shape == (66, 64)


def test_eager_operators_are_cached() -> None:
    a, b = pa.randn(4, 8, dtype=pa.float32, seed=9), pa.randn(4, 8, dtype=pa.float32, seed=10)
    a + b
    before, kernels = eager.cached_operators(), _compilations()
    for _ in range(3):
        s = a + b
    assert _compilations() == kernels  # no compile per call
    c = pa.randn(2, 8, dtype=pa.float32, seed=11) + pa.randn(2, 8, dtype=pa.float32, seed=12)
    assert eager.cached_operators() == before  # same expression and structure: same operator
    # a new shape: at most one new kernel (none if an earlier shape change already made the
    # operator dynamic: @jit's automatic dynamic shapes)
    assert kernels <= _compilations() <= kernels + 1
    np.testing.assert_array_equal(s.to_numpy(), a.to_numpy() + b.to_numpy())
    assert c.shape == (2, 8)


def _compilations() -> int:
    return sum(op.compilations for op in eager.operators())


def test_eager_errors_are_located_at_the_call() -> None:
    a, b = pa.zeros(3, 4, dtype=pa.float32), pa.zeros(5, dtype=pa.float32)
    with pytest.raises(pa.PyAscError) as info:
        a + b  # ERR bcast
    err = info.value
    assert err.loc is not None and err.loc.file == __file__
    assert err.loc.line == tagged_line(__file__, "bcast")
    assert "cannot broadcast shapes [3, 4] and [5]" in str(err) and "hint:" in str(err)
    with pytest.raises(pa.PyAscError) as info:
        a.sum(7)  # ERR axis
    assert info.value.loc is not None and info.value.loc.line == tagged_line(__file__, "axis")
    with pytest.raises(AttributeError, match="no attribute 'no_such_method'"):
        a.no_such_method()  # noqa: B018
    with pytest.raises(pa.ops.OutsideOperatorError, match="pa.from_numpy"):
        pa.exp(np.zeros(3, np.float32))  # NumPy values still are not computed on


def test_every_frontend_function_is_eager_on_device_tensors() -> None:
    """Names the frontend learns later (``names.OP_NAMES``) are eager too: every marker of
    ``pyasc_mlir.ops`` routes device-tensor calls to :func:`eager.call_function`."""
    from pyasc_mlir.frontend.names import MARKERS

    for fn, name in MARKERS.items():
        assert getattr(pa, name) is fn and hasattr(fn, "__wrapped__"), name
    assert eager.tensor_methods() >= {"sum", "mean", "reshape", "transpose"}


def test_torch_tensor_copied_into_device_memory() -> None:
    torch = pytest.importorskip("torch")
    src = torch.randn(3, 5, dtype=torch.bfloat16)
    t = pa.from_numpy(src)
    assert t.dtype == pa.bfloat16 and t.data_ptr() != src.data_ptr()
    np.testing.assert_array_equal(t.to_numpy().view(np.uint16), src.view(torch.uint16).numpy())


def test_comparisons_and_indexing_outside_an_operator_are_located_errors() -> None:
    t = pa.from_numpy(np.ones((2, 4), np.float32))
    for expr in (lambda: t > 0, lambda: t <= 1, lambda: t[1:3]):
        with pytest.raises(pa.PyAscUsageError) as info:
            expr()
        assert info.value.loc is not None and info.value.loc.file == __file__
        assert "outside an operator" in str(info.value) and "@pyasc_mlir.jit" in str(info.value)


def test_eager_max_with_dim_returns_values_like_torch() -> None:
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    t = pa.from_numpy(x)
    r = t.max(dim=-1)
    np.testing.assert_array_equal(r.values.to_numpy(), x.max(-1))
    v, _ = t.min(dim=1)
    np.testing.assert_array_equal(v.to_numpy(), x.min(1))
    with pytest.raises(pa.PyAscUsageError, match="not computed"):
        r.indices  # noqa: B018
