"""Accuracy of the transcendental composites ``tanh``, ``erf``, ``sigmoid`` (issue 10, item 5).

The bounds are :data:`pyasc_mlir.dialects.opset_numerics.ULP_BOUNDS` (the "Numerics" table of
docs/DESIGN.md states the same numbers; a test checks they agree). Every executor is held to
them on dense grids that include tiny (subnormal) and huge |x|, ``±inf``, ``±0`` and NaN: the
tensor interpreter (float64 reference, rounded once), the decomposition evaluated at tensor level
(``asc-decompose``), the tile and ascendc interpreters and the CPU build. Errors are in ulps of
the correctly rounded result (the spacing of ``|round(want)|``, at least the smallest subnormal).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Float16Type, Float32Type, ModuleOp, TensorType
from xdsl.ir import Block, Region

import pyasc_mlir as pa
from pyasc_mlir.dialects import asc, opset, opset_numerics
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.passes.decompose import AscDecomposePass

FUNCS = ("tanh", "erf", "sigmoid")
SHAPES = [(1,), (7,), (33,), (513,), (4097,)]
DOCS = Path(__file__).resolve().parents[1] / "docs" / "DESIGN.md"
_erf = np.frompyfunc(math.erf, 1, 1)


def exact(name: str, x: np.ndarray) -> np.ndarray:
    """The float64 value of ``name`` at ``x`` (``math.erf``; sigmoid without overflow)."""
    x64 = np.asarray(x, np.float64)
    if name == "tanh":
        return np.tanh(x64)
    if name == "erf":
        return np.asarray(_erf(x64), np.float64)
    with np.errstate(over="ignore"):
        z = np.exp(-np.abs(x64))
    return np.where(x64 >= 0, 1.0 / (1.0 + z), z / (1.0 + z))


RANGES = {"tanh": 12.0, "erf": 6.0, "sigmoid": 110.0}


def grid(name: str, n: int = 60001) -> np.ndarray:
    """fp32 points: dense over ``[-R, R]``, log-spaced from the smallest subnormal to 3e38 with
    both signs, the specials, and the issue's cases."""
    r = RANGES[name]
    tiny_huge = np.geomspace(1e-45, 3e38, n // 4)
    special = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        1.6e-7,
        -1.6e-7,
        1e-7,
        -1e-7,
        -0.03,
        -0.0300001,
        -90.0,
        -88.0,
        -100.0,
        -103.9,
        1e-30,
        -1e-30,
        1e30,
        -1e30,
        2.0**-149,
        -(2.0**-149),
        2.0**-126,
        0.625,
        -0.625,
        1.0,
        -1.0,
        3.92,
        4.0,
        88.7,
        -88.7,
    ]
    return np.concatenate([np.array(special), np.linspace(-r, r, n), tiny_huge, -tiny_huge]).astype(
        np.float32
    )


def ulp_error(got: np.ndarray, want: np.ndarray, dtype) -> np.ndarray:
    """``|got - want|`` in ulps of ``round(want)`` (0 where both are the same inf; NaN where
    exactly one is NaN, so comparisons fail)."""
    dt = np.dtype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = want.astype(dt)
        spacing = np.maximum(
            np.spacing(np.abs(rounded)).astype(np.float64), float(np.finfo(dt).smallest_subnormal)
        )
        g = got.astype(np.float64)
        err = np.abs(g - want) / spacing
    same = (g == want) | (np.isnan(g) & np.isnan(want))
    return np.where(same, 0.0, err)


def check(name: str, got: np.ndarray, x: np.ndarray, dtype, where: str) -> None:
    """``got`` is within the bound of ``name`` for ``dtype``, keeps NaN, infinities and the
    sign of zero of the correctly rounded result."""
    x = np.ravel(x)
    got = np.ravel(got)
    want = exact(name, x.astype(np.float32))
    bound = opset_numerics.ULP_BOUNDS[name][np.dtype(dtype).name]
    err = ulp_error(got, want, dtype)
    worst = int(np.nanargmax(np.where(np.isnan(err), np.inf, err)))
    assert np.all(err <= bound), (
        f"{where} {name} {np.dtype(dtype).name}: x={x[worst]!r} got {got[worst]!r} want "
        f"{want[worst]!r}: {err[worst]:.2f} ulps > {bound}"
    )
    assert np.array_equal(np.isnan(got), np.isnan(want)), where
    zero = want == 0
    assert np.array_equal(np.signbit(got[zero]), np.signbit(want.astype(dtype)[zero])), where


def unary_module(kind: str, dtype, n: int) -> ModuleOp:
    t = TensorType(dtype, [n])
    block = Block(arg_types=[t])
    op = asc.UnaryOp(kind, block.args[0])
    block.add_ops([op, func.ReturnOp(op.result)])
    return ModuleOp([func.FuncOp("f", ([t], [t]), Region(block))])


# --------------------------------------------------------------------------- the cases


def decomposed(kind: str, x: np.ndarray) -> np.ndarray:
    """The fp32 decomposition of ``kind`` at ``x``, evaluated at tensor level."""
    module = unary_module(kind, Float32Type(), x.size)
    AscDecomposePass().apply(Context(), module)
    (got,) = run_function(module, "f", [np.asarray(x, np.float32)])
    return got


@pytest.mark.parametrize(
    ("kind", "x"),
    [
        ("tanh", 1.6e-7),
        ("tanh", -1.6e-7),
        ("tanh", 1e-30),
        ("erf", 1e-7),
        ("erf", -1e-7),
        ("erf", -0.03),
        ("erf", -0.0300001),
        ("erf", 2.0**-149),
        ("sigmoid", -90.0),
        ("sigmoid", -100.0),
        ("sigmoid", -103.0),
    ],
)
def test_the_reported_cases_are_correctly_rounded_or_nearly(kind, x):
    got = decomposed(kind, np.array([x], np.float32))
    want = exact(kind, np.array([x], np.float32))
    assert ulp_error(got, want, np.float32)[0] <= 1.0, (kind, x, got, want)


def test_sigmoid_of_very_negative_x_is_the_correctly_rounded_subnormal():
    x = np.array([-90.0, -95.5, -100.0, -103.0], np.float32)
    want = exact("sigmoid", x).astype(np.float32)
    assert np.all(want > 0) and np.all(want < np.finfo(np.float32).tiny)
    np.testing.assert_array_equal(decomposed("sigmoid", x), want)


@pytest.mark.parametrize("kind", FUNCS)
def test_signed_zeros_nan_and_infinities(kind):
    x = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 3e38, -3e38], np.float32)
    got = decomposed(kind, x)
    want = exact(kind, x).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got[:2]), np.signbit(want[:2]))  # tanh/erf(-0) = -0


# --------------------------------------------------------------------------- dense grids


@pytest.mark.parametrize("kind", FUNCS)
def test_decomposition_within_bound_on_a_dense_grid(kind):
    x = grid(kind, 400001)
    check(kind, decomposed(kind, x), x, np.float32, "asc-decompose")


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("kind", FUNCS)
def test_tensor_interpreter_is_the_reference_rounded_once(kind, dtype):
    x = grid(kind).astype(dtype)
    elt = Float16Type() if dtype == "float16" else Float32Type()
    (got,) = run_function(unary_module(kind, elt, x.size), "f", [x])
    want = exact(kind, x.astype(np.float32))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, want.astype(dtype))


def fn_of(kind: str):
    return {"tanh": u_tanh, "erf": u_erf, "sigmoid": u_sigmoid}[kind]


def u_tanh(x):
    return pa.tanh(x)


def u_erf(x):
    return pa.erf(x)


def u_sigmoid(x):
    return pa.sigmoid(x)


def every_executor(kind: str, x: np.ndarray) -> dict[str, np.ndarray]:
    op = pa.compile(fn_of(kind), [pa.TensorDesc(x.shape, x.dtype.name)])
    return {
        "cpu": op(x, backend="cpu"),
        "interp": op(x, backend="interp"),
        "tile": op.run_stage("tile", x)[0],
        "ascendc": op.run_stage("ascendc", x)[0],
    }


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("kind", FUNCS)
def test_every_executor_within_bound_on_a_dense_grid(kind, dtype):
    with np.errstate(over="ignore"):
        x = grid(kind, 20001).astype(dtype)
    for where, got in every_executor(kind, x).items():
        assert got.dtype == np.dtype(dtype) and got.shape == x.shape, where
        check(kind, got, x, dtype, where)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("kind", FUNCS)
def test_every_executor_on_shapes_with_tails(kind, dtype, shape):
    rng = np.random.default_rng(math.prod(shape))
    with np.errstate(over="ignore"):
        x = rng.choice(grid(kind, 2001), size=shape).astype(dtype)
    for where, got in every_executor(kind, x).items():
        assert got.shape == shape, where
        check(kind, got, x, dtype, where)


def test_fp16_erf_on_subnormals_is_correctly_rounded():
    x = np.arange(1, 1024, dtype=np.uint16).view(np.float16)  # every positive subnormal
    x = np.concatenate([x, -x])
    want = exact("erf", x.astype(np.float32)).astype(np.float16)
    for where, got in every_executor("erf", x).items():
        np.testing.assert_array_equal(got, want, err_msg=where)


# --------------------------------------------------------------------------- folding, docs, fuzz


def u_fold(x):
    return x + pa.sigmoid(-1000.0) + pa.tanh(-0.0) + pa.erf(1e-7)


def test_constant_folding_does_not_overflow():
    module, _ = build_module(u_fold, [pa.TensorDesc((2,), "float32")])
    (out,) = run_function(module, "u_fold", [np.zeros(2, np.float32)])
    np.testing.assert_array_equal(out, np.float32(math.erf(1e-7)))


def test_docs_state_the_bounds():
    text = DOCS.read_text()
    for kind, bounds in opset_numerics.ULP_BOUNDS.items():
        row = re.search(rf"^\| `{kind}` \|([^|]*)\|([^|]*)\|", text, re.M)
        assert row, f"no Numerics row for {kind} in {DOCS.name}"
        assert f"{bounds['float32']:g}" in row.group(1), row.group(0)
        assert f"{bounds['float16']:g}" in row.group(2), row.group(0)


@pytest.mark.parametrize("kind", FUNCS)
def test_fuzz_model_covers_the_decomposition(kind):
    """The fuzzer's first-order error bound (exact operands) covers the measured error."""
    x = grid(kind, 100001)
    x = x[np.isfinite(x)]
    r, bound = opset.UNARY[kind].fuzz.error(x.astype(np.float64), np.zeros(x.size))
    err = np.abs(decomposed(kind, x).astype(np.float64) - r)
    assert np.all(err <= bound)
    assert np.all(bound <= 32 * opset_numerics.U * np.abs(r) + 2 * opset_numerics.TINY)


def test_coefficients_are_reproduced_by_the_documented_fit():
    derived = opset_numerics.derive_coefficients()
    for name, coeffs in derived.items():
        stored = getattr(opset_numerics, name)
        np.testing.assert_allclose(coeffs, stored, rtol=1e-5, atol=1e-9, err_msg=name)
