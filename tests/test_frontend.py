"""AST frontend: every op vs an independent NumPy reference (through the IR interpreter), the
IR it builds (verifies, ``asc.loc`` everywhere, opmath casts), compile-time evaluation, errors.

References compute in float32 from the inputs and round once to the result dtype.
Tolerances: fp32 rtol=atol=1e-5 (reductions 1e-4), fp16 rtol=atol=1e-3.
"""

from __future__ import annotations

import contextlib
import linecache
import math

import numpy as np
import pytest
from helpers import assert_close, erf_ref, line_of, make_input, seed_of, softmax_ref
from xdsl.dialects import func
from xdsl.dialects.builtin import Float16Type, Float32Type, TensorType

import pyasc_mlir.ops as pa
from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError, SourceLoc
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.ops import exp, where
from pyasc_mlir.types import TensorDesc

F16, F32 = np.float16, np.float32
DTYPES = ["float16", "float32"]
SHAPES = [(1,), (7,), (33,), (1000,), (4097,), (3, 33), (2, 5, 7)]
THIS_FILE = __file__


# --------------------------------------------------------------------------- helpers


def func_of(module) -> func.FuncOp:
    (fop,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return fop


def check_ir(module) -> None:
    """The module verifies and every op in the function body carries a loc in this file."""
    module.verify()
    fop = func_of(module)
    assert asc.LOC_ATTR in fop.attributes
    for op in fop.body.block.ops:
        assert asc.LOC_ATTR in op.attributes, op.name
        loc = SourceLoc.parse(op.attributes[asc.LOC_ATTR].data)
        assert loc is not None and loc.file == THIS_FILE and loc.line > 0 and loc.col >= 0


def body_ops(module, name: str | None = None) -> list:
    ops = list(func_of(module).body.block.ops)
    return [op for op in ops if name is None or op.name == name]


def compile_and_run(fn, args, inputs):
    module, dtypes = build_module(fn, args)
    check_ir(module)
    outs = run_function(module, fn.__name__, inputs)
    assert [o.dtype.name for o in outs] == dtypes
    return outs, dtypes


# --------------------------------------------------------------------------- unary ops


def u_exp(x):
    return pa.exp(x)


def u_exp_direct(x):
    return exp(x)


def u_log(x):
    return pa.log(x)


def u_sqrt(x):
    return pa.sqrt(x)


def u_rsqrt(x):
    return pa.rsqrt(x)


def u_abs(x):
    return pa.abs(x)


def u_abs_builtin(x):
    return abs(x)


def u_relu(x):
    return pa.relu(x)


def u_sigmoid(x):
    return pa.sigmoid(x)


def u_tanh(x):
    return pa.tanh(x)


def u_erf(x):
    return pa.erf(x)


def u_neg(x):
    return -x


def u_pos(x):
    return +x


def u_pow2(x):
    return x**2


def u_pow3(x):
    return x**3


def u_pow_half(x):
    return x**0.5


def u_pow_m1(x):
    return x**-1


def u_pow_mhalf(x):
    return x**-0.5


def u_method_exp(x):
    return x.exp()


UNARY = {
    "exp": (u_exp, np.exp, "any"),
    "exp_direct_import": (u_exp_direct, np.exp, "any"),
    "log": (u_log, np.log, "pos"),
    "sqrt": (u_sqrt, np.sqrt, "pos"),
    "rsqrt": (u_rsqrt, lambda x: np.float32(1) / np.sqrt(x), "pos"),
    "abs": (u_abs, np.abs, "any"),
    "abs_builtin": (u_abs_builtin, np.abs, "any"),
    "relu": (u_relu, lambda x: np.maximum(x, np.float32(0)), "any"),
    "sigmoid": (u_sigmoid, lambda x: np.float32(1) / (np.float32(1) + np.exp(-x)), "any"),
    "tanh": (u_tanh, np.tanh, "any"),
    "erf": (u_erf, erf_ref, "any"),
    "neg": (u_neg, np.negative, "any"),
    "pos": (u_pos, lambda x: x, "any"),
    "pow2": (u_pow2, lambda x: x * x, "any"),
    "pow3": (u_pow3, lambda x: x * x * x, "any"),
    "pow0.5": (u_pow_half, np.sqrt, "pos"),
    "pow-1": (u_pow_m1, lambda x: np.float32(1) / x, "nonzero"),
    "pow-0.5": (u_pow_mhalf, lambda x: np.float32(1) / np.sqrt(x), "pos"),
    "method_exp": (u_method_exp, np.exp, "any"),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, dtype, shape):
    fn, ref, domain = UNARY[name]
    rng = np.random.default_rng(seed_of(name, shape))
    x = make_input(rng, shape, dtype, domain)
    (out,), dtypes = compile_and_run(fn, [TensorDesc(shape, dtype)], [x])
    assert dtypes == [dtype]
    assert_close(out, ref(x.astype(np.float32)), dtype)


# --------------------------------------------------------------------------- binary ops


def b_add(x, y):
    return x + y


def b_sub(x, y):
    return x - y


def b_mul(x, y):
    return x * y


def b_div(x, y):
    return x / y


def b_maximum(x, y):
    return pa.maximum(x, y)


def b_minimum(x, y):
    return pa.minimum(x, y)


def c_lt(x, y):
    return pa.cast(x < y, pa.float32)


def c_gt(x, y):
    return pa.cast(x > y, pa.float32)


def c_le(x, y):
    return pa.cast(x <= y, pa.float32)


def c_ge(x, y):
    return pa.cast(x >= y, pa.float32)


def c_eq(x, y):
    return pa.cast(x == y, pa.float32)


def c_ne(x, y):
    return pa.cast(x != y, pa.float32)


def w_where(x, y):
    return where(x > y, x, y * 2.0)


BINARY = {
    "add": (b_add, np.add, "any", None),
    "sub": (b_sub, np.subtract, "any", None),
    "mul": (b_mul, np.multiply, "any", None),
    "div": (b_div, np.divide, "any", None),
    "maximum": (b_maximum, np.maximum, "any", None),
    "minimum": (b_minimum, np.minimum, "any", None),
    "lt": (c_lt, np.less, "int", "float32"),
    "gt": (c_gt, np.greater, "int", "float32"),
    "le": (c_le, np.less_equal, "int", "float32"),
    "ge": (c_ge, np.greater_equal, "int", "float32"),
    "eq": (c_eq, np.equal, "int", "float32"),
    "ne": (c_ne, np.not_equal, "int", "float32"),
    "where": (w_where, lambda x, y: np.where(x > y, x, y * np.float32(2)), "int", None),
}
BROADCAST_PAIRS = [
    ((4, 1, 7), (1, 5, 1)),
    ((8, 33), (33,)),
    ((), (7,)),
    ((33,), (8, 33)),
    ((3, 1), (3, 33)),
]


def _check_binary(name, dtype, sx, sy):
    fn, ref, domain, out_dtype = BINARY[name]
    rng = np.random.default_rng(seed_of(name, sx, sy))
    x = make_input(rng, sx, dtype, domain)
    y = make_input(rng, sy, dtype, "nonzero" if name == "div" else domain)
    (out,), dtypes = compile_and_run(fn, [TensorDesc(sx, dtype), TensorDesc(sy, dtype)], [x, y])
    result_dtype = out_dtype or dtype
    assert dtypes == [result_dtype]
    expected = np.asarray(ref(x.astype(np.float32), y.astype(np.float32)), dtype=np.float32)
    assert_close(out, expected, result_dtype)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_same_shape(name, dtype, shape):
    _check_binary(name, dtype, shape, shape)


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "lt", "eq", "where"])
def test_binary_broadcast(name, dtype, shapes):
    _check_binary(name, dtype, *shapes)


def s_radd(x):
    return 1 + x


def s_rsub(x):
    return 2.5 - x


def s_sub(x):
    return x - 2.5


def s_rmul(x):
    return 3 * x


def s_rdiv(x):
    return 1.0 / x


def s_div(x):
    return x / 4


def s_max0(x):
    return pa.maximum(x, 0.0)


def s_min_left(x):
    return pa.minimum(1.5, x)


def s_leaky(x):
    return pa.where(x > 0, x, 0.1 * x)


def s_where_numbers(x):
    return pa.where(x > 0, 1.0, -1.0)


def s_cmp_left(x):
    return pa.cast(0.5 < x, pa.float16)


SCALAR = {
    "radd": (s_radd, lambda x: 1 + x, "any"),
    "rsub": (s_rsub, lambda x: np.float32(2.5) - x, "any"),
    "sub": (s_sub, lambda x: x - np.float32(2.5), "any"),
    "rmul": (s_rmul, lambda x: 3 * x, "any"),
    "rdiv": (s_rdiv, lambda x: np.float32(1) / x, "nonzero"),
    "div": (s_div, lambda x: x / np.float32(4), "any"),
    "max0": (s_max0, lambda x: np.maximum(x, np.float32(0)), "any"),
    "min_left": (s_min_left, lambda x: np.minimum(np.float32(1.5), x), "any"),
    "leaky": (s_leaky, lambda x: np.where(x > 0, x, np.float32(0.1) * x), "any"),
}


@pytest.mark.parametrize("shape", [(1,), (33,), (2, 5, 7)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(SCALAR))
def test_scalar_operands(name, dtype, shape):
    fn, ref, domain = SCALAR[name]
    rng = np.random.default_rng(7)
    x = make_input(rng, shape, dtype, domain)
    (out,), dtypes = compile_and_run(fn, [TensorDesc(shape, dtype)], [x])
    assert dtypes == [dtype]  # Python numbers do not promote
    assert_close(out, ref(x.astype(np.float32)).astype(np.float32), dtype)


def test_where_with_numbers_only_is_float32():
    x = np.array([-2.0, 0.0, 3.0], dtype=F16)
    (out,), dtypes = compile_and_run(s_where_numbers, [TensorDesc((3,), "float16")], [x])
    assert dtypes == ["float32"]
    np.testing.assert_array_equal(out, np.array([-1.0, -1.0, 1.0], dtype=F32))


def test_compare_number_on_left_and_mask_cast_to_f16():
    x = np.array([0.0, 0.5, 0.75], dtype=F32)
    (out,), dtypes = compile_and_run(s_cmp_left, [TensorDesc((3,), "float32")], [x])
    assert dtypes == ["float16"]
    np.testing.assert_array_equal(out, np.array([0.0, 0.0, 1.0], dtype=F16))


def m_logic(x, y):
    a = x > 0
    b = y > 0
    return (
        pa.cast(a & b, pa.float32),
        pa.cast(a | b, pa.float32),
        pa.cast(a ^ b, pa.float32),
        pa.cast(~a, pa.float32),
    )


def test_mask_logic():
    x = np.array([1.0, 1.0, -1.0, -1.0], dtype=F32)
    y = np.array([1.0, -1.0, 1.0, -1.0], dtype=F32)
    outs, _ = compile_and_run(m_logic, [TensorDesc((4,), "float32")] * 2, [x, y])
    a, b = x > 0, y > 0
    for out, ref in zip(outs, [a & b, a | b, a ^ b, ~a], strict=True):
        np.testing.assert_array_equal(out, ref.astype(F32))


# --------------------------------------------------------------------------- dtypes (opmath)


def d_mixed(x, y):
    return x * y + 1.0


def test_mixed_dtypes_promote_to_float32():
    rng = np.random.default_rng(3)
    x = make_input(rng, (3, 33), F16)
    y = make_input(rng, (33,), F32)
    (out,), dtypes = compile_and_run(
        d_mixed, [TensorDesc((3, 33), "float16"), TensorDesc((33,), "float32")], [x, y]
    )
    assert dtypes == ["float32"]
    assert_close(out, x.astype(F32) * y + 1, "float32")


def d_opmath(x):
    return (x * 1000.0) * 0.001, (x + 0.0001) - x


def test_opmath_intermediates_stay_float32():
    x = np.array([100.0, 1.0, -200.0], dtype=F16)
    (big, small), dtypes = compile_and_run(d_opmath, [TensorDesc((3,), "float16")], [x])
    assert dtypes == ["float16", "float16"]
    np.testing.assert_allclose(big.astype(F32), x.astype(F32), rtol=1e-3)  # no f16 overflow
    x32 = x.astype(F32)
    np.testing.assert_array_equal(small, ((x32 + F32(1e-4)) - x32).astype(F16))
    assert small[1] != 0  # an f16 intermediate would have rounded 1 + 1e-4 to 1


def d_cast_round(x):
    y = pa.cast(x, pa.float16)
    return y, pa.cast(y, pa.float32) - x, x.astype("float16")


def test_cast_rounds_to_float16():
    rng = np.random.default_rng(4)
    x = make_input(rng, (1000,), F32)
    (y, err, y2), dtypes = compile_and_run(d_cast_round, [TensorDesc((1000,), "float32")], [x])
    assert dtypes == ["float16", "float32", "float16"]
    np.testing.assert_array_equal(y, x.astype(F16))
    np.testing.assert_array_equal(y2, x.astype(F16))
    np.testing.assert_array_equal(err, x.astype(F16).astype(F32) - x)


def d_cast_up(x):
    return pa.cast(x, pa.float32) * 3.0


def test_cast_to_float32_changes_result_dtype():
    x = np.array([1.5, 2.0009765625, -3.0], dtype=F16)
    (out,), dtypes = compile_and_run(d_cast_up, [TensorDesc((3,), "float16")], [x])
    assert dtypes == ["float32"]
    np.testing.assert_array_equal(out, x.astype(F32) * 3)


def d_identity(x):
    return x


def d_identity_cast(x):
    return pa.cast(x, pa.float32)


def test_return_argument_and_cast_of_argument():
    x = np.array([1.0, 2.0], dtype=F16)
    module, dtypes = build_module(d_identity, [TensorDesc((2,), "float16")])
    check_ir(module)
    assert dtypes == ["float16"] and body_ops(module, "asc.cast") == []
    module, dtypes = build_module(d_identity_cast, [TensorDesc((2,), "float16")])
    check_ir(module)
    assert dtypes == ["float32"] and len(body_ops(module, "asc.cast")) == 1
    (out,) = run_function(module, "d_identity_cast", [x])
    assert out.dtype == F32


def test_f16_argument_cast_once_and_results_rounded():
    module, dtypes = build_module(
        d_mixed, [TensorDesc((8, 33), "float16"), TensorDesc((33,), "float16")]
    )
    check_ir(module)
    casts = body_ops(module, "asc.cast")
    # one f16->f32 per argument, one f32->f16 for the result
    assert len(casts) == 3
    assert [type(c.results[0].type.element_type) for c in casts] == [
        Float32Type,
        Float32Type,
        Float16Type,
    ]
    assert len(body_ops(module, "asc.broadcast")) == 1
    (const,) = body_ops(module, "asc.constant")
    assert const.results[0].type == TensorType(Float32Type(), [8, 33])
    for op in body_ops(module):
        if op.name in ("asc.binary", "asc.constant"):
            assert isinstance(op.results[0].type.element_type, Float32Type)
    fop = func_of(module)
    assert [str(t) for t in fop.function_type.inputs] == ["tensor<8x33xf16>", "tensor<33xf16>"]
    assert [str(t) for t in fop.function_type.outputs] == ["tensor<8x33xf16>"]


# --------------------------------------------------------------------------- reductions


def r_sum(x, axis, keepdim):
    return pa.sum(x, axis, keepdim=keepdim)


def r_mean(x, axis, keepdim):
    return pa.mean(x, axis=axis, keepdim=keepdim)


def r_max(x, axis, keepdim):
    return x.max(axis, keepdim=keepdim)


def r_min(x, axis, keepdim):
    return x.min(axis, keepdim)


def r_var(x, axis, keepdim):
    return pa.var(x, axis, keepdim)


def r_var_unbiased(x, axis, keepdim):
    return x.var(axis, keepdim=keepdim, unbiased=True)


REDUCE = {
    "sum": (r_sum, lambda x, a, k: np.sum(x, axis=a, keepdims=k)),
    "mean": (r_mean, lambda x, a, k: np.mean(x, axis=a, keepdims=k)),
    "max": (r_max, lambda x, a, k: np.max(x, axis=a, keepdims=k)),
    "min": (r_min, lambda x, a, k: np.min(x, axis=a, keepdims=k)),
    "var": (r_var, lambda x, a, k: np.var(x, axis=a, keepdims=k)),
    "var_unbiased": (r_var_unbiased, lambda x, a, k: np.var(x, axis=a, keepdims=k, ddof=1)),
}


def _check_reduce(name, dtype, shape, axis, keepdim):
    fn, ref = REDUCE[name]
    rng = np.random.default_rng(seed_of(name, shape, axis))
    x = make_input(rng, shape, dtype)
    (out,), dtypes = compile_and_run(fn, [TensorDesc(shape, dtype), axis, keepdim], [x])
    assert dtypes == [dtype]
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    expected = np.asarray(ref(x.astype(np.float32), np_axis, keepdim), dtype=np.float32)
    assert_close(out, expected, dtype, reduction=True)


@pytest.mark.parametrize("keepdim", [True, False])
@pytest.mark.parametrize("width", [3, 100, 1000, 1023])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(REDUCE))
def test_reduce_last_axis(name, dtype, width, keepdim):
    _check_reduce(name, dtype, (4, width), -1, keepdim)


@pytest.mark.parametrize("axis", [0, 1, -2, (0, 2), [2, 0], None, (0, 1, 2), (-1, -3)], ids=str)
@pytest.mark.parametrize("keepdim", [True, False])
@pytest.mark.parametrize("name", list(REDUCE))
def test_reduce_axes(name, keepdim, axis):
    for dtype in DTYPES:
        _check_reduce(name, dtype, (2, 5, 7), axis, keepdim)


def test_reduce_ir_attributes():
    module, _ = build_module(r_var_unbiased, [TensorDesc((2, 5, 7), "float32"), (-1, 0), False])
    check_ir(module)
    (red,) = body_ops(module, "asc.reduce")
    assert red.kind.data == "var" and red.axis_list == (0, 2) and not red.keeps_dims
    assert red.correction.data == 1
    assert red.results[0].type == TensorType(Float32Type(), [5])
    module, _ = build_module(r_var, [TensorDesc((2, 5, 7), "float32"), None, True])
    (red,) = body_ops(module, "asc.reduce")
    assert red.correction.data == 0 and red.axis_list == (0, 1, 2) and red.keeps_dims


def k_softmax(x):
    e = pa.exp(x - x.max(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def k_layer_norm(x, w, b, eps, variant):
    if variant == "rms":
        y = x * pa.rsqrt((x * x).mean(-1, keepdim=True) + eps)
    else:
        mu = pa.mean(x, -1, keepdim=True)
        y = (x - mu) / pa.sqrt(pa.var(x, -1, keepdim=True) + eps)
    return y * w + b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("width", [3, 100, 1023])
def test_softmax(dtype, width):
    x = make_input(np.random.default_rng(width), (5, width), dtype)
    (out,), _ = compile_and_run(k_softmax, [TensorDesc((5, width), dtype)], [x])
    x32 = x.astype(F32)
    assert_close(out, softmax_ref(x32), dtype, reduction=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("variant", ["rms", "layer"])
def test_norm_variants(dtype, variant):
    rng = np.random.default_rng(11)
    x = make_input(rng, (6, 100), dtype)
    w = make_input(rng, (100,), dtype)
    b = make_input(rng, (100,), dtype)
    args = [
        TensorDesc((6, 100), dtype),
        TensorDesc((100,), dtype),
        TensorDesc((100,), dtype),
        1e-5,
        variant,
    ]
    (out,), _ = compile_and_run(k_layer_norm, args, [x, w, b])
    x32, w32, b32 = (a.astype(F32) for a in (x, w, b))
    if variant == "rms":
        y = x32 / np.sqrt((x32 * x32).mean(-1, keepdims=True) + F32(1e-5))
    else:
        y = (x32 - x32.mean(-1, keepdims=True)) / np.sqrt(x32.var(-1, keepdims=True) + F32(1e-5))
    assert_close(out, y * w32 + b32, dtype, reduction=True)


# --------------------------------------------------------------------------- compile time


def t_loops(x, n, scale):
    acc = x
    for i in range(n):
        acc = acc + x * float(i)
    k = 0
    for v in [1, 2, 3]:
        if v == 2:
            continue
        k += v
    acc *= k
    return acc * scale if scale != 1 else acc


def test_for_unrolled_and_int_args():
    x = np.array([1.0, -2.0, 0.5], dtype=F32)
    module, _ = build_module(t_loops, [TensorDesc((3,), "float32"), 4, 2.0])
    check_ir(module)
    assert len(body_ops(module, "asc.binary")) == 4 * 2 + 2
    (out,) = run_function(module, "t_loops", [x])
    np.testing.assert_allclose(out, (x + x * (0 + 1 + 2 + 3)) * 4 * 2, rtol=1e-6)
    module, _ = build_module(t_loops, [TensorDesc((3,), "float32"), 0, 1])
    (out,) = run_function(module, "t_loops", [x])
    np.testing.assert_allclose(out, x * 4, rtol=1e-6)


def _gelu_tanh(x):
    c = math.sqrt(2 / math.pi)
    return 0.5 * x * (1 + pa.tanh(c * (x + 0.044715 * x**3)))


def _gelu_erf(x):
    return 0.5 * x * (1 + pa.erf(x / math.sqrt(2.0)))


def _act(x, variant="gelu_tanh"):
    if variant == "gelu_tanh":
        return _gelu_tanh(x)
    elif variant == "gelu":
        return _gelu_erf(x)
    elif variant == "silu":
        return x * pa.sigmoid(x)
    raise ValueError(f"unknown activation {variant!r}")  # ERR


def t_activation(x, variant):
    return _act(x, variant=variant)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("variant", ["gelu_tanh", "gelu", "silu"])
def test_helpers_inlined_with_variant_strings(variant, dtype):
    x = make_input(np.random.default_rng(5), (3, 33), dtype)
    (out,), _ = compile_and_run(t_activation, [TensorDesc((3, 33), dtype), variant], [x])
    x32 = x.astype(F32)
    if variant == "gelu_tanh":
        c = F32(math.sqrt(2 / math.pi))
        ref = F32(0.5) * x32 * (1 + np.tanh(c * (x32 + F32(0.044715) * x32**3)))
    elif variant == "gelu":
        ref = F32(0.5) * x32 * (1 + erf_ref(x32 / F32(math.sqrt(2.0))).astype(F32))
    else:
        ref = x32 / (1 + np.exp(-x32))
    assert_close(out, ref, dtype)
    module, _ = build_module(t_activation, [TensorDesc((3, 33), dtype), variant])
    helper_lines = {
        line_of(_gelu_tanh, "pa.tanh"),
        line_of(_gelu_erf, "pa.erf"),
        line_of(_act, "pa.sigmoid"),
    }
    locs = {SourceLoc.parse(op.attributes[asc.LOC_ATTR].data).line for op in body_ops(module)}
    assert locs & helper_lines  # ops carry the helper's own source lines


def _stats(x):
    return x.mean(-1, keepdim=True), x.max(-1, keepdim=True)


def t_misc(x, cfg):
    mu, mx = _stats(x)
    rows, cols = x.shape
    assert x.ndim == 2, "2-d only"
    n = len(x.shape) + int(cfg["extra"]) + sum(i for i in range(3) if i != 1)
    sixteen = x.dtype == pa.float16
    scale = 2.0 if sixteen else 3.0
    dims = [d * 2 for d in x.shape]
    y = (x - mu) * scale + mx * n + dims[0] + float(f"{cols}") + cols % 7
    if (not sixteen) and rows > 1 or False:
        y = y + 1
    return y.reshape(cols, rows) if cfg["transpose_shape"] else y.reshape(-1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_misc_compile_time_python(dtype):
    x = make_input(np.random.default_rng(9), (3, 33), dtype)
    cfg = {"extra": 1, "transpose_shape": True}
    (out,), _ = compile_and_run(t_misc, [TensorDesc((3, 33), dtype), cfg], [x])
    x32 = x.astype(F32)
    n = 2 + 1 + 2
    scale = 2.0 if dtype == "float16" else 3.0
    y = (x32 - x32.mean(-1, keepdims=True)) * F32(scale) + x32.max(-1, keepdims=True) * F32(n)
    y = y + F32(6) + F32(33) + F32(33 % 7)
    if dtype == "float32":
        y = y + 1
    assert_close(out, y.reshape(33, 3), dtype, reduction=True)
    module, _ = build_module(
        t_misc, [TensorDesc((3, 33), dtype), {**cfg, "transpose_shape": False}]
    )
    check_ir(module)
    assert func_of(module).function_type.outputs.data[0].get_shape() == (99,)
    assert len(body_ops(module, "asc.reshape")) == 1


def _closure_kernel_factory(alpha):
    def kernel(x):
        return x * alpha + _BIAS

    return kernel


_BIAS = 0.25


class _Scaler:
    def __init__(self, factor):
        self.factor = factor

    def forward(self, x):
        return self.apply(x) + 1

    def apply(self, x):
        return x * self.factor


def test_closures_globals_and_methods():
    x = np.array([1.0, 2.0], dtype=F32)
    kernel = _closure_kernel_factory(3.0)
    module, _ = build_module(kernel, [TensorDesc((2,), "float32")], name="scaled")
    check_ir(module)
    (out,) = run_function(module, "scaled", [x])
    np.testing.assert_allclose(out, x * 3 + 0.25)
    (add,) = [op for op in body_ops(module, "asc.binary") if op.kind.data == "add"]
    line = line_of(kernel, "_BIAS")
    assert add.attributes[asc.LOC_ATTR].data == f"{THIS_FILE}:{line}:16"  # indented source
    module, _ = build_module(_Scaler(4.0).forward, [TensorDesc((2,), "float32")])
    check_ir(module)
    (out,) = run_function(module, "forward", [x])
    np.testing.assert_allclose(out, x * 4 + 1)


def _scale(v, s):
    if isinstance(v, int | float):
        return v * s
    return v * s + 0.0


def t_features(x, sizes):
    import math as m

    from pyasc_mlir import ops as P

    first, *rest = sizes
    total = 0
    for s in sizes:
        if s > 100:
            break
        total += s
    y = _scale(x, total) + _scale(2, first)
    parts = [P.exp(x) for _ in range(2)]
    if (n := len(rest)) == 2:
        y = y + parts[1] * n
    return (y, x * m.pi)[0]


def test_more_python_features():
    x = make_input(np.random.default_rng(2), (7,), F32)
    (out,), _ = compile_and_run(t_features, [TensorDesc((7,), "float32"), (1, 2, 500)], [x])
    assert_close(out, x * 3 + 2 + np.exp(x) * 2, "float32")


def test_compile_time_args_are_not_arguments():
    module, _ = build_module(
        k_layer_norm,
        [
            TensorDesc((2, 8), "float16"),
            TensorDesc((8,), "float16"),
            TensorDesc((8,), "float16"),
            1e-6,
            "rms",
        ],
    )
    fop = func_of(module)
    assert len(fop.body.block.args) == 3
    assert [a.name_hint for a in fop.body.block.args] == ["x", "w", "b"]
    assert fop.sym_name.data == "k_layer_norm"


def k_locs(x):
    y = pa.exp(x)
    return y + 1.0


def test_asc_loc_points_at_the_expression():
    module, _ = build_module(k_locs, [TensorDesc((4,), "float32")])
    check_ir(module)
    line = line_of(k_locs, "pa.exp")
    (un,) = body_ops(module, "asc.unary")
    assert un.attributes[asc.LOC_ATTR].data == f"{THIS_FILE}:{line}:9"
    (add,) = body_ops(module, "asc.binary")
    assert add.attributes[asc.LOC_ATTR].data == f"{THIS_FILE}:{line + 1}:12"
    (ret,) = body_ops(module, "func.return")
    assert ret.attributes[asc.LOC_ATTR].data == f"{THIS_FILE}:{line + 1}:5"
    assert func_of(module).attributes[asc.LOC_ATTR].data == f"{THIS_FILE}:{line - 1}:1"


def test_markers_raise_outside_an_operator():
    with pytest.raises(pa.OutsideOperatorError, match="inside an operator"):
        pa.exp(np.ones(3))
    assert pa.float16 == "float16" and pa.float16 == np.float16 and pa.float32 != pa.float16
    assert np.dtype(pa.float32) == np.float32


# --------------------------------------------------------------------------- errors


def e_try(x):
    try:  # ERR
        y = x
    except Exception:
        y = x
    return y


def e_while(x):
    n = 0
    while n < 3:  # ERR
        n += 1
    return x


def e_while_tensor(x):
    while x.sum() > 0:  # ERR
        x = x - 1
    return x


def e_lambda(x):
    return (lambda v: v)(x)  # ERR


def e_nested_def(x):
    def inner(v):  # ERR
        return v

    return inner(x)


def e_global(x):
    global _BIAS  # ERR
    return x


def e_print(x):
    print(x)  # ERR
    return x


def e_with(x):
    with contextlib.nullcontext():  # ERR
        y = x
    return y


def e_if_tensor(x):
    if x.sum() > 0:  # ERR
        return x
    return -x


def e_and(x, y):
    return pa.where((x > 0) and (y > 0), x, y)  # ERR


def e_or(x, y):
    return pa.where((x > 0) or (y > 0), x, y)  # ERR


def e_not(x, y):
    return pa.where(not (x > 0), x, y)  # ERR


def e_bool(x, y):
    return x if bool(x > y) else y  # ERR


def e_ifexp(x, y):
    return x if x > y else y  # ERR


def e_broadcast(x, y):
    return x + y  # ERR


def e_broadcast_where(x, y):
    return pa.where(x > 0, x, y)  # ERR


def e_axis(x):
    return pa.sum(x, axis=2)  # ERR


def e_axis_dup(x):
    return x.mean((1, -1))  # ERR


def e_axis_type(x):
    return x.max(axis=1.5)  # ERR


def e_dtype(x):
    return pa.cast(x, "int8")  # ERR


def e_unknown_function(x):
    return np.sin(x)  # ERR


def e_unknown_name(x):
    return not_defined_anywhere(x)  # ERR  # noqa: F821


def e_unknown_op(x):
    return pa.no_such_op(x)  # ERR


def e_builtin_max(x, y):
    return max(x, y)  # ERR


def _rec(x, n):
    return x if n == 0 else _rec(x, n - 1)  # ERR


def e_recursion(x):
    return _rec(x, 3)


def _two(a, b):
    return a + b


def e_nargs_helper(x):
    return _two(x, x, x)  # ERR


def e_nargs_op(x):
    return pa.exp(x, x)  # ERR


def e_nargs_top(x, y):  # ERR
    return x + y


def e_return_mask(x):
    return x > 0  # ERR


def e_mask_arith(x):
    return (x > 0) * 2.0  # ERR


def e_pow(x):
    return x**2.5  # ERR


def e_pow_tensor(x):
    return 2.0**x  # ERR


def e_index(x):
    return x[::2]  # ERR


def e_return_number(x):
    return 1.0  # ERR


def e_no_return(x):  # ERR
    y = x + 1  # noqa: F841


def e_assert(x):
    assert x.shape[0] % 16 == 0, f"rows must be a multiple of 16, got {x.shape[0]}"  # ERR
    return x


def e_compile_time_exception(x):
    return x * (1 / (x.shape[0] - 4))  # ERR


def e_shape_index(x):
    return x * x.shape[3]  # ERR


def e_raise_variant(x):
    return _act(x, "relu6")


def e_matmul(x, y):
    return x @ y  # ERR


def e_chained(x):
    return pa.cast(0 < x < 1, pa.float32)  # ERR


def e_tensor_attr(x):
    return x.T  # ERR


def e_iterate(x):
    for row in x:  # ERR
        x = x + row
    return x


def e_unpack(x):
    a, b = x  # ERR
    return a + b


def e_bad_keyword(x):
    return pa.sum(x, dims=1)  # ERR


def e_assign_subscript(x):
    y = [x]
    y[0] = x + 1  # ERR
    return y[0]


def _indented_error_factory():
    def kernel(x):
        if x > 0:  # ERR
            x = -x
        return x

    return kernel


V4 = TensorDesc((4,), "float32")
M34 = TensorDesc((3, 4), "float32")
ERRORS = {
    "try": (e_try, [V4], "try/except is not supported"),
    "while": (e_while, [V4], "'while' loops are not supported"),
    "while_tensor": (e_while_tensor, [V4], "depends on a runtime tensor value"),
    "lambda": (e_lambda, [V4], "lambda expressions are not supported"),
    "nested_def": (e_nested_def, [V4], "nested function definitions are not supported"),
    "global": (e_global, [V4], "'global' declarations are not supported"),
    "print": (e_print, [V4], "print() is not supported"),
    "with": (e_with, [V4], "'with' statements are not supported"),
    "if_tensor": (e_if_tensor, [V4], "depends on a runtime tensor value"),
    "and": (e_and, [V4, V4], "'and' depends on a runtime tensor value"),
    "or": (e_or, [V4, V4], "'or' depends on a runtime tensor value"),
    "not": (e_not, [V4, V4], "'not' depends on a runtime tensor value"),
    "bool": (e_bool, [V4, V4], "bool() of a tensor depends on a runtime tensor value"),
    "ifexp": (e_ifexp, [V4, V4], "depends on a runtime tensor value"),
    "broadcast": (
        e_broadcast,
        [M34, TensorDesc((5,), "float32")],
        "cannot broadcast shapes [3, 4] and [5]",
    ),
    "broadcast_where": (
        e_broadcast_where,
        [M34, TensorDesc((3,), "float16")],
        "cannot broadcast shapes [3, 4] and [3]",
    ),
    "axis": (e_axis, [M34], "axis 2 is out of range for a tensor of rank 2 (shape [3, 4])"),
    "axis_dup": (e_axis_dup, [M34], "axis 1 is repeated"),
    "axis_type": (e_axis_type, [M34], "axis must be an int, a tuple of ints or None"),
    "dtype": (e_dtype, [V4], "unsupported dtype 'int8'"),
    "unknown_function": (e_unknown_function, [V4], "unknown function numpy.sin()"),
    "unknown_name": (e_unknown_name, [V4], "name 'not_defined_anywhere' is not defined"),
    "unknown_op": (e_unknown_op, [V4], "unknown function pyasc_mlir.ops.no_such_op"),
    "builtin_max": (e_builtin_max, [V4, V4], "unknown function max()"),
    "recursion": (e_recursion, [V4], "recursive call to _rec() is not supported"),
    "nargs_helper": (e_nargs_helper, [V4], "wrong number of arguments for _two()"),
    "nargs_op": (e_nargs_op, [V4], "wrong number of arguments for pyasc_mlir.exp()"),
    "nargs_top": (e_nargs_top, [V4], "wrong number of arguments for e_nargs_top()"),
    "return_mask": (e_return_mask, [V4], "a boolean mask cannot be returned"),
    "mask_arith": (e_mask_arith, [V4], "a boolean mask cannot be used in arithmetic"),
    "pow": (e_pow, [V4], "unsupported exponent 2.5"),
    "pow_tensor": (e_pow_tensor, [V4], "a tensor exponent is not supported"),
    "index": (e_index, [V4], "slice step 2 in dim 0 is not supported"),
    "return_number": (e_return_number, [V4], "an operator must return tensors"),
    "no_return": (e_no_return, [V4], "e_no_return() returns no tensor"),
    "assert": (e_assert, [V4], "assertion failed: rows must be a multiple of 16, got 4"),
    "compile_time_exception": (e_compile_time_exception, [V4], "ZeroDivisionError"),
    "shape_index": (e_shape_index, [V4], "IndexError: tuple index out of range"),
    "raise": (e_raise_variant, [V4], "operator raised ValueError: unknown activation 'relu6'"),
    "matmul": (e_matmul, [V4, V4], "matmul needs operands of rank >= 2, got shapes [4] and [4]"),
    "chained": (e_chained, [V4], "chained comparisons on tensors are not supported"),
    "tensor_attr": (e_tensor_attr, [V4], ".T needs a 2-D tensor, got shape [4]"),
    "iterate": (e_iterate, [V4], "iterating over a tensor is not supported"),
    "unpack": (e_unpack, [V4], "cannot unpack a tensor"),
    "assign_subscript": (e_assign_subscript, [V4], "assignment to an element"),
    "indented": (_indented_error_factory(), [V4], "this 'if' condition depends on a runtime"),
    "bad_keyword": (
        e_bad_keyword,
        [V4],
        "invalid arguments for pyasc_mlir.sum(): got an unexpected keyword argument 'dims'",
    ),
}
# where the error is reported when it is not in the kernel itself
ERROR_SITES = {"recursion": _rec, "raise": _act}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    fn, args, message = ERRORS[name]
    site = ERROR_SITES.get(name, fn)
    with pytest.raises(PyAscCompileError) as info:
        build_module(fn, args)
    err = info.value
    text = str(err)
    line = line_of(site)
    assert message in err.message, text
    assert f"{THIS_FILE}:{line}:" in text, text
    assert err.loc is not None and err.loc.file == THIS_FILE and err.loc.line == line
    source = linecache.getline(THIS_FILE, line).rstrip()
    lines = text.splitlines()
    assert f"    {source}" in lines, text
    caret = lines[lines.index(f"    {source}") + 1]
    assert caret.strip() == "^" and len(caret) - 1 == 4 + err.loc.col, text


def test_error_columns_and_hints():
    with pytest.raises(PyAscCompileError) as info:
        build_module(e_if_tensor, [V4])
    line = line_of(e_if_tensor)
    assert str(info.value.loc) == f"{THIS_FILE}:{line}:8"  # the condition, not the 'if'
    assert "pyasc_mlir.where(cond, a, b)" in str(info.value)
    with pytest.raises(PyAscCompileError) as info:
        build_module(e_mask_arith, [V4])
    assert "pyasc_mlir.cast(mask, pyasc_mlir.float32)" in str(info.value)
    with pytest.raises(PyAscCompileError) as info:
        build_module(e_builtin_max, [V4, V4])
    assert "pyasc_mlir.maximum()" in str(info.value)


def test_bad_arguments():
    with pytest.raises(PyAscCompileError, match="static, positive"):
        build_module(d_identity, [TensorDesc((None, 4), "float32")])
    with pytest.raises(PyAscCompileError, match="NumPy array"):
        build_module(d_identity, [np.ones(3)])
    with pytest.raises(PyAscCompileError, match="lambda"):
        build_module(lambda x: x, [V4])
    with pytest.raises(PyAscCompileError, match="expected a Python function"):
        build_module(np.exp, [V4])
