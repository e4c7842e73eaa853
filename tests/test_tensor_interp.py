"""The IR interpreter on hand-built tensor-level ``asc`` IR vs NumPy, plus ``run_function``.

Tolerances: fp32 rtol=atol=1e-5 (reductions 1e-4), fp16 rtol=atol=1e-3; composites that the
interpreter evaluates in float64 are checked against float64 references at 1 ulp-ish.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from helpers import assert_close, erf_ref, make_input
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Block, Region

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscUsageError
from pyasc_mlir.interpreter import core
from pyasc_mlir.interpreter.core import make_interpreter, run_function
from pyasc_mlir.interpreter.tensor_impls import erf

F16, F32 = np.float16, np.float32
ELT = {"float16": Float16Type(), "float32": Float32Type()}
SHAPES = [(1,), (7,), (33,), (1000,), (4097,), (3, 33), (2, 5, 7)]


def ttype(shape, dtype="float32") -> TensorType:
    return TensorType(ELT[dtype] if isinstance(dtype, str) else dtype, list(shape))


def build(arg_types, body) -> ModuleOp:
    """A module with ``func.func @f(args) -> results`` where ``body(add, *args)`` returns the
    result values; ``add(op)`` appends an op and returns its first result."""
    block = Block(arg_types=arg_types)

    def add(op):
        block.add_op(op)
        return op.results[0] if op.results else op

    results = body(add, *block.args)
    results = list(results) if isinstance(results, tuple | list) else [results]
    block.add_op(func.ReturnOp(*results))
    fop = func.FuncOp("f", (arg_types, [r.type for r in results]), Region(block))
    module = ModuleOp([fop])
    module.verify()
    return module


def run(module, *args):
    return run_function(module, "f", list(args))


def rand(shape, dtype, domain="any", seed=0):
    return make_input(np.random.default_rng(seed), shape, dtype, domain)


_ERFC = np.vectorize(math.erfc, otypes=[np.float64])

UNARY_REF = {
    "neg": (np.negative, "any"),
    "exp": (np.exp, "any"),
    "log": (np.log, "pos"),
    "sqrt": (np.sqrt, "pos"),
    "rsqrt": (lambda x: 1 / np.sqrt(x.astype(np.float64)), "pos"),
    "abs": (np.abs, "any"),
    "relu": (lambda x: np.maximum(x, 0), "any"),
    "reciprocal": (lambda x: np.float32(1) / x, "nonzero"),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x.astype(np.float64))), "any"),
    "tanh": (lambda x: np.tanh(x.astype(np.float64)), "any"),
    "erf": (erf_ref, "any"),
    "sin": (lambda x: np.sin(x.astype(np.float64)), "any"),
    "cos": (lambda x: np.cos(x.astype(np.float64)), "any"),
    "softplus": (lambda x: np.logaddexp(0.0, x.astype(np.float64)), "any"),
    # x Phi(x) = x erfc(-x / sqrt 2) / 2: erfc keeps the far negative tail (1 + erf cancels)
    "gelu": (lambda x: 0.5 * x * _ERFC(-x.astype(np.float64) / math.sqrt(2.0)), "any"),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("kind", asc.UNARY_KINDS)
def test_unary(kind, dtype, shape):
    ref, domain = UNARY_REF[kind]
    x = rand(shape, dtype, domain, seed=len(shape) + shape[0])
    m = build([ttype(shape, dtype)], lambda add, a: add(asc.UnaryOp(kind, a)))
    (out,) = run(m, x)
    assert_close(out, ref(x.astype(np.float32)), dtype)


def test_composites_are_precise_and_quiet():
    x = np.array([-1000.0, -100.0, -20.0, -1e-3, 0.0, 1e-30, 0.5, 3.0, 20.0, 1000.0], dtype=F32)
    x64 = x.astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for kind, ref in [
            ("sigmoid", 1 / (1 + np.exp(-np.clip(x64, -700, 700)))),
            ("tanh", np.tanh(x64)),
            ("erf", erf_ref(x64)),
            ("rsqrt", 1 / np.sqrt((np.abs(x) + 1).astype(np.float64))),
        ]:
            arg = np.abs(x) + 1 if kind == "rsqrt" else x
            m = build([ttype(x.shape)], lambda add, a, k=kind: add(asc.UnaryOp(k, a)))
            (out,) = run(m, arg)
            # evaluated in float64, rounded once: equal to the correctly rounded value
            np.testing.assert_array_equal(out, ref.astype(F32), err_msg=kind)
        m = build([ttype((3,))], lambda add, a: add(asc.UnaryOp("log", a)))
        (out,) = run(m, np.array([-1.0, 0.0, 1.0], dtype=F32))
    assert np.isnan(out[0]) and out[1] == -np.inf and out[2] == 0


def test_erf_helper_matches_math():
    x = np.linspace(-6, 6, 101)
    np.testing.assert_array_equal(erf(x), [math.erf(v) for v in x])
    assert erf(np.zeros((2, 3))).shape == (2, 3)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("kind", asc.BINARY_KINDS)
def test_binary(kind, dtype, shape):
    x = rand(shape, dtype, seed=1)
    y = rand(shape, dtype, "nonzero" if kind == "div" else "any", seed=2)
    m = build([ttype(shape, dtype)] * 2, lambda add, a, b: add(asc.BinaryOp(kind, a, b)))
    (out,) = run(m, x, y)
    f = {
        "add": np.add,
        "sub": np.subtract,
        "mul": np.multiply,
        "div": np.divide,
        "max": np.maximum,
        "min": np.minimum,
    }[kind]
    assert_close(out, f(x.astype(F32), y.astype(F32)), dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("pred", asc.COMPARE_PREDICATES)
def test_compare_and_select(pred, dtype):
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 4, size=(3, 33)).astype(dtype)
    y = rng.integers(-3, 4, size=(3, 33)).astype(dtype)

    def body(add, a, b):
        mask = add(asc.CompareOp(pred, a, b))
        return mask, add(asc.SelectOp(mask, a, b))

    m = build([ttype((3, 33), dtype)] * 2, body)
    mask, sel = run(m, x, y)
    f = {
        "lt": np.less,
        "gt": np.greater,
        "le": np.less_equal,
        "ge": np.greater_equal,
        "eq": np.equal,
        "ne": np.not_equal,
    }[pred]
    assert mask.dtype == np.bool_
    np.testing.assert_array_equal(mask, f(x, y))
    assert sel.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(sel, np.where(f(x, y), x, y))


def test_cast_rounding():
    # round to nearest even, overflow to inf, f16 -> f32 exact
    x = np.array([1.0, 1 + 2**-11, 1 + 3 * 2**-11, 65504.0, 65520.0, -1e6, 1e-8, 0.1], dtype=F32)
    m = build([ttype((8,))], lambda add, a: add(asc.CastOp(a, Float16Type())))
    (out,) = run(m, x)
    assert out.dtype == F16
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, x.astype(F16))
    assert out[1] == 1.0 and out[2] == 1 + 2**-9 and out[4] == np.inf and out[5] == -np.inf
    h = rand((33,), F16)
    m = build([ttype((33,), "float16")], lambda add, a: add(asc.CastOp(a, Float32Type())))
    (out,) = run(m, h)
    assert out.dtype == F32
    np.testing.assert_array_equal(out, h.astype(F32))


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_constant(dtype):
    m = build([], lambda add: add(asc.ConstantOp(0.1, ttype((3, 4), dtype))))
    (out,) = run(m)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, np.full((3, 4), 0.1, dtype=dtype))


@pytest.mark.parametrize(
    "src,dst",
    [((4, 1, 7), (4, 5, 7)), ((33,), (8, 33)), ((), (7,)), ((3, 1), (2, 3, 33)), ((1,), (4097,))],
    ids=str,
)
def test_broadcast(src, dst):
    x = rand(src, F32, seed=4)
    m = build([ttype(src)], lambda add, a: add(asc.BroadcastOp(a, dst)))
    (out,) = run(m, x)
    assert out.flags.writeable and out.flags.c_contiguous
    np.testing.assert_array_equal(out, np.broadcast_to(x, dst))


def test_broadcast_mask():
    x = np.array([[True], [False]])

    def body(add, a):
        zero = add(asc.ConstantOp(0.0, ttype((2, 1))))
        mask = add(asc.CompareOp("gt", a, zero))
        big = add(asc.BroadcastOp(mask, (2, 3)))
        one = add(asc.ConstantOp(1.0, ttype((2, 3))))
        zeros = add(asc.ConstantOp(0.0, ttype((2, 3))))
        return add(asc.SelectOp(big, one, zeros))

    m = build([ttype((2, 1))], body)
    (out,) = run(m, x.astype(F32))
    np.testing.assert_array_equal(out, np.broadcast_to(x, (2, 3)).astype(F32))


REDUCE_REF = {
    "sum": lambda x, a, k, c: np.sum(x, axis=a, keepdims=k),
    "mean": lambda x, a, k, c: np.mean(x, axis=a, keepdims=k),
    "max": lambda x, a, k, c: np.max(x, axis=a, keepdims=k),
    "min": lambda x, a, k, c: np.min(x, axis=a, keepdims=k),
    "var": lambda x, a, k, c: np.var(x, axis=a, keepdims=k, ddof=c),
}
REDUCE_CASES = [("sum", 0), ("mean", 0), ("max", 0), ("min", 0), ("var", 0), ("var", 1)]


@pytest.mark.parametrize("keepdim", [True, False])
@pytest.mark.parametrize("width", [3, 100, 1000, 1023])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("kind,correction", REDUCE_CASES)
def test_reduce_widths(kind, correction, dtype, width, keepdim):
    x = rand((3, width), dtype, seed=width)
    m = build(
        [ttype((3, width), dtype)],
        lambda add, a: add(asc.ReduceOp(kind, a, [1], keepdim, correction)),
    )
    (out,) = run(m, x)
    assert_close(
        out, REDUCE_REF[kind](x.astype(F32), 1, keepdim, correction), dtype, reduction=True
    )


@pytest.mark.parametrize("axes", [(0,), (1,), (2,), (0, 2), (1, 2), (0, 1, 2)], ids=str)
@pytest.mark.parametrize("keepdim", [True, False])
@pytest.mark.parametrize("kind,correction", REDUCE_CASES)
def test_reduce_axes(kind, correction, keepdim, axes):
    for dtype in ("float16", "float32"):
        x = rand((2, 5, 7), dtype, seed=len(axes))
        m = build(
            [ttype((2, 5, 7), dtype)],
            lambda add, a: add(asc.ReduceOp(kind, a, axes, keepdim, correction)),
        )
        (out,) = run(m, x)
        assert_close(
            out, REDUCE_REF[kind](x.astype(F32), axes, keepdim, correction), dtype, reduction=True
        )


def test_reduce_accumulates_precisely():
    n = 1 << 20
    x = np.full((n,), 0.1, dtype=F32)
    m = build([ttype((n,))], lambda add, a: add(asc.ReduceOp("sum", a, [0], False)))
    (out,) = run(m, x)
    assert out.shape == () and out == F32(np.float64(F32(0.1)) * n)
    m = build([ttype((4,))], lambda add, a: add(asc.ReduceOp("var", a, [0], True, 1)))
    (out,) = run(m, np.array([1e4 + 1, 1e4 + 2, 1e4 + 3, 1e4 + 4], dtype=F32))
    assert out.shape == (1,) and out[0] == F32(5 / 3)


def test_reduce_var_single_element_unbiased_is_nan():
    m = build([ttype((3, 1))], lambda add, a: add(asc.ReduceOp("var", a, [1], False, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (out,) = run(m, np.ones((3, 1), dtype=F32))
    assert np.isnan(out).all()


def test_reshape():
    x = rand((2, 5, 7), F16)
    m = build([ttype((2, 5, 7), "float16")], lambda add, a: add(asc.ReshapeOp(a, [10, 7])))
    (out,) = run(m, x)
    assert out.dtype == F16
    np.testing.assert_array_equal(out, x.reshape(10, 7))


def test_fusion_region():
    """``asc.fusion`` runs its body with the operands as block arguments."""
    t = ttype((3, 33))
    r = ttype((3, 1))

    def body(add, a, b):
        inner = Block(arg_types=[t, t])
        x, y = inner.args
        s = asc.BinaryOp("mul", x, y)
        red = asc.ReduceOp("sum", s.results[0], [1], True)
        inner.add_ops([s, red, asc.YieldOp([s.results[0], red.results[0]])])
        fusion = asc.FusionOp(operands=[[a, b]], result_types=[[t, r]], regions=[Region(inner)])
        add(fusion)
        return fusion.results[0], add(asc.BinaryOp("add", fusion.results[1], fusion.results[1]))

    m = build([t, t], body)
    x, y = rand((3, 33), F32, seed=1), rand((3, 33), F32, seed=2)
    prod, doubled = run(m, x, y)
    np.testing.assert_array_equal(prod, x * y)
    assert_close(doubled, 2 * (x * y).sum(1, keepdims=True), F32, reduction=True)


def test_stock_scf_and_arith_with_tensors():
    """xDSL's stock func/arith/scf implementations run alongside ours."""
    t = ttype((5,))

    def body(add, a):
        lb = add(arith.ConstantOp(IntegerAttr(0, IndexType())))
        ub = add(arith.ConstantOp(IntegerAttr(3, IndexType())))
        step = add(arith.ConstantOp(IntegerAttr(1, IndexType())))
        loop_body = Block(arg_types=[IndexType(), t])
        acc = loop_body.args[1]
        nxt = asc.BinaryOp("add", acc, a)
        loop_body.add_ops([nxt, scf.YieldOp(nxt.results[0])])
        loop = scf.ForOp(lb, ub, step, [a], Region(loop_body))
        add(loop)
        return loop.results[0]

    m = build([t], body)
    x = rand((5,), F32)
    (out,) = run(m, x)
    np.testing.assert_array_equal(out, x + x + x + x)


def test_run_function_checks_arguments():
    m = build([ttype((3,))], lambda add, a: add(asc.UnaryOp("neg", a)))
    with pytest.raises(PyAscUsageError, match="takes 1 arguments, got 2"):
        run(m, np.ones(3, F32), np.ones(3, F32))
    with pytest.raises(PyAscUsageError, match="expected dtype float32, got float16"):
        run(m, np.ones(3, F16))
    with pytest.raises(PyAscUsageError, match=r"expected shape \[3\], got \[4\]"):
        run(m, np.ones(4, F32))
    with pytest.raises(PyAscUsageError, match="no function @g"):
        run_function(m, "g", [np.ones(3, F32)])
    (out,) = run(m, np.ones(6, F32)[::2])  # non-contiguous input is fine
    np.testing.assert_array_equal(out, -np.ones(3, F32))


def test_make_interpreter_and_optional_impls(monkeypatch):
    m = build([ttype((2,))], lambda add, a: add(asc.UnaryOp("abs", a)))
    interp = make_interpreter(m)
    (out,) = interp.call_op("f", (np.array([-1.0, 2.0], dtype=F32),))
    np.testing.assert_array_equal(out, [1.0, 2.0])
    monkeypatch.setattr(
        core, "_OPTIONAL_IMPLS", (("pyasc_mlir.interpreter.no_such_impls", "Missing"),)
    )
    assert core._optional_impls() == []
    make_interpreter(m)


def test_mask_types():
    m = build([ttype((2,))], lambda add, a: add(asc.CompareOp("gt", a, a)))
    (out,) = run(m, np.zeros(2, F32))
    assert out.dtype == np.bool_ and not out.any()
    assert isinstance(m.body.block.first_op.function_type.outputs.data[0].element_type, IntegerType)
