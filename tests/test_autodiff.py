"""``asc-autodiff`` on elementwise and reduction kinds: every derivative rule of
``dialects/opset_grad.py`` against central finite differences of a float64 NumPy forward.

The backward IR is run by the tensor-level interpreter. The reference gradient of an
elementwise op is ``dy * (f(x + h) - f(x - h)) / 2h`` in float64 (``h = 1e-6 * max(1, |x|)``),
per element; a reduction's is the full finite-difference gradient of
``L(x) = sum(dy * f(x))``. Tolerances: fp32 ``rtol = 1e-4, atol = 1e-5 * max|grad|`` (the
rules compute in float32 from the rounded forward: ``1 - y`` for sigmoid and tanh loses up to
~1e-5 relative near |x| = 3); fp16 (inputs and cotangent in f16, gradient rounded to f16)
``rtol = atol = 2e-3`` relative to max|grad| (one f16 rounding of the result, ~5e-4, plus the
f16 forward operands). Inputs avoid kinks and ties by a margin (``abs``/``relu`` at 0,
``maximum`` ties); the tie rules have tests of their own.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import dialect_context, parse, seed_of
from xdsl.dialects import arith, builtin, func

from pyasc_mlir.dialects import opset, opset_grad
from pyasc_mlir.dialects.asc import Asc
from pyasc_mlir.dialects.opset_numerics import gelu64, sigmoid64, softplus64
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.passes.autodiff import AscAutodiffPass

CTX = dialect_context(builtin.Builtin, func.Func, arith.Arith, Asc)
SHAPES = [(1,), (7,), (33,), (513,), (4097,)]
DTYPES = ["float32", "float16"]
MLIR = {"float32": "f32", "float16": "f16"}

UNARY_REF = {
    "neg": (np.negative, "any"),
    "exp": (np.exp, "any"),
    "log": (np.log, "pos"),
    "sqrt": (np.sqrt, "pos"),
    "rsqrt": (lambda x: 1 / np.sqrt(x), "pos"),
    "abs": (np.abs, "nonzero"),
    "relu": (lambda x: np.maximum(x, 0.0), "nonzero"),
    "reciprocal": (np.reciprocal, "nonzero"),
    "sigmoid": (sigmoid64, "any"),
    "tanh": (np.tanh, "any"),
    "erf": (np.vectorize(math.erf), "any"),
    "sin": (np.sin, "any"),
    "cos": (np.cos, "any"),
    "softplus": (softplus64, "any"),
    "gelu": (gelu64, "any"),
}
"""Unary kind -> (float64 forward, input domain)."""

BINARY_REF = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
}


def _input(rng: np.random.Generator, shape: tuple[int, ...], domain: str) -> np.ndarray:
    if domain == "pos":
        return rng.uniform(0.2, 4.0, size=shape)
    if domain == "nonzero":
        return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.3, 3.0, size=shape)
    return np.clip(rng.standard_normal(size=shape) * 1.5, -3.0, 3.0)


def _elementwise_module(op: str, n_args: int, shape: tuple[int, ...], dtype: str) -> str:
    """``func.func @f`` applying ``op`` (``asc.unary "k"`` / ``asc.binary "k"``) in f32 to its
    arguments, as the frontend builds it (f16: cast in, compute, cast out)."""
    dims = "x".join(map(str, shape))
    t, w = f"tensor<{dims}x{MLIR[dtype]}>", f"tensor<{dims}xf32>"
    args = ", ".join(f"%a{i}: {t}" for i in range(n_args))
    f16 = dtype == "float16"
    lines = [f"%w{i} = asc.cast %a{i} : {t} -> {w}" for i in range(n_args) if f16]
    operands = ", ".join(f"%{'w' if f16 else 'a'}{i}" for i in range(n_args))
    lines.append(f"%r = {op} {operands} : {w}")
    if f16:
        lines.append(f"%y = asc.cast %r : {w} -> {t}")
    body = "\n  ".join(lines)
    res = "%y" if f16 else "%r"
    return f"func.func @f({args}) -> {t} {{\n  {body}\n  func.return {res} : {t}\n}}"


def backward(src: str, *args: np.ndarray) -> list[np.ndarray]:
    """Parse ``src``, run ``asc-autodiff`` and interpret ``@f_backward`` on ``args``."""
    module = parse(src, CTX)
    AscAutodiffPass().apply(CTX, module)
    module.verify()
    return run_function(module, "f_backward", list(args))


def _fd_elementwise(f, xs: list[np.ndarray], i: int, dy: np.ndarray) -> np.ndarray:
    x64 = [x.astype(np.float64) for x in xs]
    h = 1e-6 * np.maximum(1.0, np.abs(x64[i]))
    up = [x.copy() for x in x64]
    dn = [x.copy() for x in x64]
    up[i] += h
    dn[i] -= h
    return dy.astype(np.float64) * (f(*up) - f(*dn)) / (2 * h)


def _check(got: np.ndarray, want: np.ndarray, dtype: str) -> None:
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    scale = max(1.0, float(np.max(np.abs(want))))
    if dtype == "float16":
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3 * scale)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("kind", sorted(opset_grad.UNARY_RULES))
def test_unary_rule_matches_finite_differences(kind: str, shape: tuple[int, ...], dtype: str):
    ref, domain = UNARY_REF[kind]
    rng = np.random.default_rng(seed_of(kind, shape, dtype))
    x = _input(rng, shape, domain).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    (dx,) = backward(_elementwise_module(f'asc.unary "{kind}"', 1, shape, dtype), x, dy)
    _check(dx, _fd_elementwise(ref, [x], 0, dy), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("kind", sorted(opset_grad.BINARY_RULES))
def test_binary_rule_matches_finite_differences(kind: str, shape: tuple[int, ...], dtype: str):
    rng = np.random.default_rng(seed_of(kind, shape, dtype))
    a = _input(rng, shape, "any").astype(dtype)
    b = _input(rng, shape, "nonzero").astype(dtype)
    if kind in ("max", "min"):  # no ties (the tie rule is tested below)
        b = np.where(np.abs(a.astype(np.float64) - b) < 0.05, b + 0.5, b).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    da, db = backward(_elementwise_module(f'asc.binary "{kind}"', 2, shape, dtype), a, b, dy)
    _check(da, _fd_elementwise(BINARY_REF[kind], [a, b], 0, dy), dtype)
    _check(db, _fd_elementwise(BINARY_REF[kind], [a, b], 1, dy), dtype)


def test_kink_and_tie_rules_are_torchs():
    """``abs``/``relu`` have derivative 0 at 0; ``maximum``/``minimum`` give each operand
    half the cotangent at a tie (as torch.autograd)."""
    x = np.array([-1.0, 0.0, -0.0, 2.0], np.float32)
    dy = np.array([3.0, 5.0, 7.0, 11.0], np.float32)
    (d_abs,) = backward(_elementwise_module('asc.unary "abs"', 1, (4,), "float32"), x, dy)
    np.testing.assert_array_equal(d_abs, [-3.0, 0.0, 0.0, 11.0])
    (d_relu,) = backward(_elementwise_module('asc.unary "relu"', 1, (4,), "float32"), x, dy)
    np.testing.assert_array_equal(d_relu, [0.0, 0.0, 0.0, 11.0])
    b = np.array([-1.0, 1.0, -0.0, 1.0], np.float32)
    for kind, d1, d2 in (
        ("max", [1.5, 0.0, 3.5, 11.0], [1.5, 5.0, 3.5, 0.0]),
        ("min", [1.5, 5.0, 3.5, 0.0], [1.5, 0.0, 3.5, 11.0]),
    ):
        da, db = backward(_elementwise_module(f'asc.binary "{kind}"', 2, (4,), "float32"), x, b, dy)
        np.testing.assert_array_equal(da, d1)
        np.testing.assert_array_equal(db, d2)


def test_special_values_propagate():
    """NaN in, NaN gradient out; exp overflow gives an infinite gradient (never a silent
    finite value); the derivative of sqrt at +0 is +inf."""
    x = np.array([np.nan, 100.0, 0.0], np.float32)
    dy = np.ones(3, np.float32)
    (d_exp,) = backward(_elementwise_module('asc.unary "exp"', 1, (3,), "float32"), x, dy)
    assert np.isnan(d_exp[0]) and d_exp[1] == np.inf and d_exp[2] == 1.0
    (d_sqrt,) = backward(_elementwise_module('asc.unary "sqrt"', 1, (3,), "float32"), x, dy)
    assert np.isnan(d_sqrt[0]) and d_sqrt[2] == np.inf


# --------------------------------------------------------------------------- reductions


def _fd_full(f, xs: list[np.ndarray], i: int, dy: np.ndarray) -> np.ndarray:
    """The finite-difference gradient of ``sum(dy * f(*xs))`` w.r.t. ``xs[i]`` (float64)."""
    x64 = [x.astype(np.float64) for x in xs]
    dy64 = dy.astype(np.float64)
    g = np.zeros_like(x64[i])
    flat = g.reshape(-1)
    for k in range(flat.size):
        h = 1e-6 * max(1.0, abs(x64[i].reshape(-1)[k]))
        vals = []
        for sign in (1.0, -1.0):
            p = [x.copy() for x in x64]
            p[i].reshape(-1)[k] += sign * h
            vals.append(np.sum(dy64 * f(*p)))
        flat[k] = (vals[0] - vals[1]) / (2 * h)
    return g


def _reduce_module(kind: str, shape, axes, keepdim: bool, dtype: str, corr: int = 0) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}x{MLIR[dtype]}>"
    w = t.replace(MLIR[dtype] + ">", "f32>")
    out = (
        [1 if i in axes else d for i, d in enumerate(shape)]
        if keepdim
        else [d for i, d in enumerate(shape) if i not in axes]
    )
    o = f"tensor<{'x'.join(map(str, out))}xf32>" if out else "tensor<f32>"
    ot = o.replace("f32>", MLIR[dtype] + ">")
    extra = f", correction = #builtin.int<{corr}>" if kind == "var" else ""
    ax = ", ".join(map(str, axes))
    cast_in = f"%w = asc.cast %x : {t} -> {w}" if dtype == "float16" else ""
    src = "%w" if cast_in else "%x"
    cast_out = f"%y = asc.cast %r : {o} -> {ot}" if dtype == "float16" else ""
    res = "%y" if cast_out else "%r"
    props = f"axes = array<i64: {ax}>, keepdim = {str(keepdim).lower()}{extra}"
    lines = [cast_in, f'%r = asc.reduce "{kind}" {src} {{{props}}} : {w} -> {o}', cast_out]
    body = "\n  ".join(line for line in lines if line)
    return f"func.func @f(%x: {t}) -> {ot} {{\n  {body}\n  func.return {res} : {ot}\n}}"


REDUCE_CASES = [
    ("sum", (7, 33), (1,), True),
    ("sum", (33, 7), (0,), False),
    ("mean", (5, 3, 7), (1, 2), True),
    ("mean", (1, 33), (1,), False),
    ("var", (7, 33), (1,), True),
    ("max", (7, 33), (1,), True),
    ("min", (3, 4, 5), (0, 2), False),
]


def _np_reduce(kind: str, axes, keepdim: bool, corr: int = 0):
    def f(x):
        if kind == "var":
            return np.var(x, axis=axes, keepdims=keepdim, ddof=corr)
        return getattr(np, {"sum": "sum", "mean": "mean", "max": "max", "min": "min"}[kind])(
            x, axis=axes, keepdims=keepdim
        )

    return f


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("kind", "shape", "axes", "keepdim"), REDUCE_CASES)
def test_reduce_rule_matches_finite_differences(kind, shape, axes, keepdim, dtype):
    rng = np.random.default_rng(seed_of(kind, shape, axes, dtype))
    x = rng.standard_normal(shape).astype(dtype)  # continuous: no ties for max/min
    f = _np_reduce(kind, axes, keepdim)
    dy = rng.standard_normal(np.shape(f(x.astype(np.float64)))).astype(dtype)
    (dx,) = backward(_reduce_module(kind, shape, axes, keepdim, dtype), x, dy)
    _check(dx, _fd_full(f, [x], 0, dy), dtype)


@pytest.mark.parametrize("corr", [0, 1])
@pytest.mark.parametrize("shape", [(7, 33), (3, 513)], ids=str)
def test_var_rule_with_correction(shape, corr: int):
    rng = np.random.default_rng(seed_of("var", shape, corr))
    x = rng.standard_normal(shape).astype(np.float32)
    dy = rng.standard_normal((shape[0], 1)).astype(np.float32)
    (dx,) = backward(_reduce_module("var", shape, (1,), True, "float32", corr), x, dy)
    mean = x.astype(np.float64).mean(axis=1, keepdims=True)
    want = dy * 2 * (x - mean) / (shape[1] - corr)  # d var = 2 (x - mean) / (n - corr)
    _check(dx, want, "float32")


def test_reduce_max_ties_share_the_cotangent_evenly():
    """``torch.amax``'s rule: the elements equal to the maximum share the cotangent."""
    x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 5.0]], np.float32)
    dy = np.array([[6.0], [8.0]], np.float32)
    (dx,) = backward(_reduce_module("max", (2, 4), (1,), True, "float32"), x, dy)
    np.testing.assert_array_equal(dx, [[0.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])


def test_every_table_kind_has_a_rule_or_a_reason():
    """Every kind of the op table is differentiable (a rule in its category) or declared not
    differentiable with a reason -- never both, never neither."""
    for r in opset.RECORDS:
        rule = opset_grad.rule_for(r.category, r.kind)
        reason = opset_grad.NOT_DIFFERENTIABLE.get(r.kind)
        assert (rule is None) != (reason is None), f"{r.category}:{r.kind}"
    kinds = {r.kind for r in opset.RECORDS}
    for table in (opset_grad.UNARY_RULES, opset_grad.BINARY_RULES, opset_grad.REDUCE_RULES):
        assert set(table) <= kinds, set(table) - kinds
    assert set(opset_grad.NOT_DIFFERENTIABLE) <= kinds
    assert set(opset_grad.UNARY_RULES) == set(UNARY_REF)  # each rule has an FD test above
    assert set(opset_grad.BINARY_RULES) == set(BINARY_REF)
