"""``pa.softplus(x) = log(1 + exp(x))``: an op added by one op-table record.

It is a composite: ``relu(x) + log1p(exp(-|x|))`` with ``log1p(e)`` computed by Goldberg's trick
(``u = 1 + e``; ``e`` where ``u == 1``, else ``log(u) * e / (u - 1)``). Checked against float64
NumPy on dense grids over [-100, 100] (fp32 decomposition at tensor level), and end to end on
the interpreter and the CPU build for fp16 / fp32 and shapes with tails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Float16Type, Float32Type, ModuleOp, TensorType
from xdsl.ir import Block, Region

import pyasc_mlir as pa
from pyasc_mlir import fuzzing as fuzz
from pyasc_mlir.dialects import asc
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.passes.decompose import AscDecomposePass

ULP32 = 2.0**-23
F32_DENORM = 2.0**-149
SHAPES = [(1,), (7,), (33,), (513,), (4097,)]


def softplus64(x: np.ndarray) -> np.ndarray:
    x64 = np.asarray(x, dtype=np.float64)
    return np.maximum(x64, 0.0) + np.log1p(np.exp(-np.abs(x64)))


def grid(n: int) -> np.ndarray:
    """``n`` points over [-100, 100], plus the points where the formula changes branch."""
    pts = np.linspace(-100.0, 100.0, n)
    edges = [
        0.0,
        -0.0,
        1e-30,
        -1e-30,
        1e-7,
        -1e-7,
        16.6,
        17.0,
        -16.6,
        -17.0,
        87.3,
        -87.3,
        88.8,
        -88.8,
        103.0,
        -103.0,
        104.0,
        -104.0,
        1e4,
        -1e4,
        3e38,
        -3e38,
    ]
    return np.concatenate([pts, edges]).astype(np.float32)


def unary_module(dtype, n: int) -> ModuleOp:
    t = TensorType(dtype, [n])
    block = Block(arg_types=[t])
    op = asc.UnaryOp("softplus", block.args[0])
    block.add_ops([op, func.ReturnOp(op.result)])
    return ModuleOp([func.FuncOp("f", ([t], [t]), Region(block))])


def assert_fp32_close(got: np.ndarray, x: np.ndarray, ulps: float) -> None:
    """Within ``ulps`` fp32 ulps of the float64 value (plus 2 denormal steps absolute)."""
    want = softplus64(x)
    err = np.abs(got.astype(np.float64) - want)
    tol = ulps * ULP32 * np.abs(want) + 2 * F32_DENORM
    worst = int(np.argmax(err / tol))
    assert np.all(err <= tol), (
        f"x={x[worst]!r}: got {got[worst]!r}, want {want[worst]!r}, "
        f"{err[worst] / (ULP32 * abs(want[worst])):.2f} ulps"
    )


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_tensor_semantics_are_float64_rounded_once(dtype):
    x = grid(20001).astype(dtype)
    elt = Float16Type() if dtype == np.float16 else Float32Type()
    (got,) = run_function(unary_module(elt, x.size), "f", [x])
    np.testing.assert_array_equal(got, softplus64(x).astype(dtype))


def test_decomposition_is_accurate_in_fp32():
    """The fp32 expansion on a dense grid: a few ulps from float64 everywhere, no overflow."""
    x = grid(400001)
    module = unary_module(Float32Type(), x.size)
    AscDecomposePass().apply(Context(), module)
    kinds = {op.kind.data for op in module.walk() if isinstance(op, asc.UnaryOp)}
    assert kinds <= set(asc.VECTOR_UNARY_KINDS)
    (got,) = run_function(module, "f", [x])
    assert np.all(np.isfinite(got[np.isfinite(softplus64(x))]))
    assert_fp32_close(got, x, ulps=4)


def u_softplus(x):
    return pa.softplus(x)


def u_softplus_const(x):
    return x + pa.softplus(2.0)


def test_frontend_builds_and_folds():
    module, _ = build_module(u_softplus, [pa.TensorDesc((4,), "float32")])
    assert [op.kind.data for op in module.walk() if isinstance(op, asc.UnaryOp)] == ["softplus"]
    module, _ = build_module(u_softplus_const, [pa.TensorDesc((3,), "float32")])
    (out,) = run_function(module, "u_softplus_const", [np.zeros(3, np.float32)])
    np.testing.assert_array_equal(out, np.float32(math.log1p(math.exp(2.0))))
    with pytest.raises(pa.ops.OutsideOperatorError):
        pa.softplus(1.0)


def inputs(shape, dtype) -> np.ndarray:
    n = math.prod(shape)
    rng = np.random.default_rng(n)
    x = np.where(rng.random(n) < 0.5, rng.uniform(-100, 100, n), rng.normal(0, 4, n))
    x[: min(n, 9)] = [0.0, -100.0, 100.0, 1e-7, -20.0, 20.0, 11.0, -88.5, 60000.0][: min(n, 9)]
    return x.reshape(shape).astype(dtype)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_end_to_end_on_every_backend(dtype, shape):
    x = inputs(shape, dtype)
    op = pa.compile(u_softplus, [pa.TensorDesc(shape, dtype)])
    outs = {
        "cpu": op(x, backend="cpu"),
        "interp": op(x, backend="interp"),
        "tile": op.run_stage("tile", x)[0],
    }
    for where, got in outs.items():
        assert got.dtype == np.dtype(dtype) and got.shape == shape, where
        if dtype == "float32":
            assert_fp32_close(np.ravel(got), np.ravel(x), ulps=4)
        else:  # fp32 opmath, rounded once to fp16: within one fp16 ulp of the true value
            want = softplus64(x)
            spacing = np.spacing(np.abs(want).astype(np.float16)).astype(np.float64)
            assert np.all(np.abs(got.astype(np.float64) - want) <= spacing), where
    np.testing.assert_allclose(outs["cpu"], outs["interp"], rtol=4 * ULP32, atol=F32_DENORM)


def test_fuzzer_draws_softplus():
    assert "softplus" in fuzz.UNARY_FNS
    progs = [fuzz.generate_one(fuzz.Spec(3, i, "910B2")) for i in range(150)]
    fns = {n.p("fn") for p in progs for n in p.nodes if n.kind == "unary"}
    assert "softplus" in fns
