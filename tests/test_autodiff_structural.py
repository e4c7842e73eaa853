"""``asc-autodiff`` on the structural ops and on whole operators built by the frontend:
translation validation of the pass, i.e. the backward IR (tensor-level interpreter) against a
numerical vector-Jacobian product of the float64 NumPy forward.

For ``L(x) = sum(dy * f(x))`` the check is both the full central finite-difference gradient
(small inputs) and, on larger ones, directional derivatives ``<grad L, v>`` against
``(L(x + h v) - L(x - h v)) / 2h`` for random ``v`` (a numerical Jacobian-vector product:
``<J^T dy, v> = <dy, J v>``). Tolerances: fp32 ``rtol = 1e-4``, ``atol = 1e-5 * max|grad|``;
directional checks relative ``2e-4`` (a float32 reduction over up to 513 x 33 elements); fp16
inputs ``rtol = atol = 2e-3 * max|grad|``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import seed_of

import pyasc_mlir as pa
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.passes.autodiff import AscAutodiffPass
from pyasc_mlir.pipeline import make_context


def grads(fn, *args: np.ndarray, consts: tuple = ()) -> tuple[list[np.ndarray], list]:
    """``(gradients, forward results)`` of ``fn`` at ``args`` with random cotangents (seeded),
    by the backward IR on the tensor interpreter."""
    descs = [pa.TensorDesc(a.shape, a.dtype) for a in args]
    module, _ = build_module(fn, [*descs, *consts], fn.__name__)
    AscAutodiffPass().apply(make_context(), module)
    module.verify()
    outs = run_function(module, fn.__name__, list(args))
    rng = np.random.default_rng(seed_of(fn.__name__, *[a.shape for a in args]))
    dys = [rng.standard_normal(o.shape).astype(o.dtype) for o in outs]
    return run_function(module, f"{fn.__name__}_backward", [*args, *dys]), dys


def loss(ref, dys: list[np.ndarray]):
    def f(*xs):
        out = ref(*xs)
        outs = out if isinstance(out, tuple) else (out,)
        return sum(np.sum(dy.astype(np.float64) * o) for dy, o in zip(dys, outs, strict=True))

    return f


def fd_grad(f, xs: list[np.ndarray], i: int) -> np.ndarray:
    """Central finite differences of the scalar ``f`` w.r.t. ``xs[i]`` (float64)."""
    x64 = [x.astype(np.float64) for x in xs]
    g = np.zeros_like(x64[i])
    for k in range(g.size):
        h = 1e-6 * max(1.0, abs(x64[i].reshape(-1)[k]))
        p, m = [x.copy() for x in x64], [x.copy() for x in x64]
        p[i].reshape(-1)[k] += h
        m[i].reshape(-1)[k] -= h
        g.reshape(-1)[k] = (f(*p) - f(*m)) / (2 * h)
    return g


def check_full(fn, ref, *args: np.ndarray, consts: tuple = ()) -> None:
    """Every gradient of ``fn`` against the finite-difference gradient of ``ref``."""
    got, dys = grads(fn, *args, consts=consts)
    f = loss(ref, dys)
    for i, (g, a) in enumerate(zip(got, args, strict=True)):
        assert g.dtype == a.dtype and g.shape == a.shape, i
        want = fd_grad(f, list(args), i)
        scale = max(1.0, float(np.max(np.abs(want))))
        tol = 2e-3 if a.dtype == np.float16 else 1e-4
        atol = 2e-3 * scale if a.dtype == np.float16 else 1e-5 * scale
        np.testing.assert_allclose(g.astype(np.float64), want, rtol=tol, atol=atol, err_msg=str(i))


def check_jvp(fn, ref, *args: np.ndarray, directions: int = 3, consts: tuple = ()) -> None:
    """``<grad, v>`` against the numerical directional derivative, for random ``v`` (fp16
    inputs: relative ``5e-3``, the gradients rounded to f16)."""
    got, dys = grads(fn, *args, consts=consts)
    rel = 5e-3 if args[0].dtype == np.float16 else 2e-4
    f = loss(ref, dys)
    rng = np.random.default_rng(seed_of("jvp", fn.__name__))
    x64 = [a.astype(np.float64) for a in args]
    for _ in range(directions):
        vs = [rng.standard_normal(a.shape) for a in args]
        h = 1e-6
        num = (
            f(*[x + h * v for x, v in zip(x64, vs, strict=True)])
            - f(*[x - h * v for x, v in zip(x64, vs, strict=True)])
        ) / (2 * h)
        ana = sum(np.sum(g.astype(np.float64) * v) for g, v in zip(got, vs, strict=True))
        assert math.isclose(ana, num, rel_tol=rel, abs_tol=1e-6), (ana, num)


def _rand(shape, dtype="float32", seed=0):
    return np.random.default_rng(seed_of(shape, dtype, seed)).standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------- structural ops


def bcast(x, w, b):
    return x * w + b


def where_op(x, y):
    return pa.where(x > y, x * y, y - x)


def cast_op(x):
    return pa.cast(pa.cast(x, pa.float32) * 3.0, pa.float16)


def reshape_op(x):
    return pa.exp(x.reshape(3, 14)) * 2.0


def transpose_op(x):
    return pa.transpose(x, 0, 1) * pa.transpose(x, 0, 1)


def concat_op(x, y):
    return pa.sin(pa.concat([x, y * 2.0], axis=1))


def slice_op(x):
    return x[1:4, 2:7] * x[0:3, 0:5]


def matmul_op(a, b):
    return pa.matmul(a, b)


def matmul_t(a, b, ta, tb):
    return pa.matmul(a, b, transpose_a=ta, transpose_b=tb)


def mask_as_value(x, y):
    return pa.cast(x > y, pa.float32) * x + y


def test_comparison_used_as_a_value_has_zero_gradient():
    """``cast(x > y) * x + y``: the mask contributes nothing; dx = mask * dy, dy_y = dy."""
    x, y = _rand((7, 5)), _rand((7, 5), seed=1)
    (dx, dyy), dys = grads(mask_as_value, x, y)
    np.testing.assert_array_equal(dx, np.where(x > y, dys[0], 0.0).astype(np.float32))
    np.testing.assert_array_equal(dyy, dys[0])


STRUCTURAL_TAILS = {
    "broadcast": (bcast, lambda x, w, b: x * w + b, lambda r: [(r, 33), (33,), (r, 1)]),
    "where": (where_op, lambda x, y: np.where(x > y, x * y, y - x), lambda r: [(r, 33)] * 2),
    "transpose": (transpose_op, lambda x: x.T * x.T, lambda r: [(r, 33)]),
    "concat": (
        concat_op,
        lambda x, y: np.sin(np.concatenate([x, y * 2.0], axis=1)),
        lambda r: [(r, 7), (r, 33)],
    ),
    "matmul": (matmul_op, lambda a, b: a @ b, lambda r: [(r, 33), (33, 7)]),
}


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("rows", [1, 7, 33, 513])
@pytest.mark.parametrize("name", sorted(STRUCTURAL_TAILS))
def test_structural_ops_on_tails(name: str, rows: int, dtype: str):
    fn, ref, shapes = STRUCTURAL_TAILS[name]
    args = [_rand(s, dtype, seed=i) for i, s in enumerate(shapes(rows))]
    if name == "where":  # keep x and y 0.5 apart: the finite differences must not cross x == y
        args[1] = (args[0] + np.where(args[1] > 0, 0.5, -0.5)).astype(dtype)
    check_jvp(fn, ref, *args)


def test_broadcast_sums_back_to_each_inputs_shape():
    x, w, b = _rand((7, 33)), _rand((33,), seed=1), _rand((7, 1), seed=2)
    check_full(bcast, lambda x, w, b: x * w + b, x, w, b)


@pytest.mark.parametrize("rows", [1, 7, 33, 513])
def test_weight_gradient_over_many_rows(rows: int):
    """The leading-dim sum (on the Cube) for row counts with tails."""
    x, w, b = _rand((rows, 33)), _rand((33,), seed=1), _rand((rows, 1), seed=2)
    check_jvp(bcast, lambda x, w, b: x * w + b, x, w, b)


def test_where_gives_no_gradient_to_the_condition():
    x, y = _rand((7, 5)), _rand((7, 5), seed=1)
    check_full(where_op, lambda x, y: np.where(x > y, x * y, y - x), x, y)


def test_cast_gradient_in_the_input_dtype():
    x = _rand((33,), "float16")
    (dx,), dys = grads(cast_op, x)
    assert dx.dtype == np.float16
    want = (dys[0].astype(np.float32) * 3.0).astype(np.float16)  # fp32 math, one rounding
    np.testing.assert_array_equal(dx, want)


def test_reshape_transpose_concat_slice():
    check_full(reshape_op, lambda x: np.exp(x.reshape(3, 14)) * 2.0, _rand((6, 7)))
    check_full(transpose_op, lambda x: x.T * x.T, _rand((5, 3)))
    check_full(
        concat_op,
        lambda x, y: np.sin(np.concatenate([x, y * 2.0], axis=1)),
        _rand((3, 4)),
        _rand((3, 2), seed=1),
    )
    check_full(slice_op, lambda x: x[1:4, 2:7] * x[0:3, 0:5], _rand((5, 8)))


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_with_transposes(ta: bool, tb: bool):
    a = _rand((5, 7) if ta else (7, 5))
    b = _rand((3, 5) if tb else (5, 3), seed=1)
    ref = lambda a, b: (a.T if ta else a) @ (b.T if tb else b)  # noqa: E731
    check_full(matmul_t, ref, a, b, consts=(ta, tb))


def test_matmul_batch_broadcast():
    """A ``[2, 3, 4, 5] @ [5, 6]`` product: the weight's gradient sums over the batch (one
    matmul over all 24 rows), also for a transposed weight (``x @ w^T``, ``w [6, 5]``)."""
    check_full(matmul_op, lambda a, b: a @ b, _rand((2, 3, 4, 5)), _rand((5, 6), seed=1))
    ref_t = lambda a, b: a @ b.T  # noqa: E731
    check_full(matmul_t, ref_t, _rand((2, 3, 5)), _rand((6, 5), seed=1), consts=(False, True))
    check_full(matmul_op, lambda a, b: a @ b, _rand((1, 4, 5)), _rand((3, 5, 2), seed=1))


def test_matmul_fp16_operands():
    check_full(matmul_op, lambda a, b: a @ b, _rand((4, 6), "float16"), _rand((6, 3), "float16"))


# --------------------------------------------------------------------------- whole operators


def layer_norm(x, w, b):
    m = pa.mean(x, axis=-1, keepdim=True)
    d = x - m
    v = pa.mean(d * d, axis=-1, keepdim=True)
    return d * pa.rsqrt(v + 1e-5) * w + b


def residual_layer_norm(x, r, w, b):
    return layer_norm(x + r, w, b)


def rms_norm(x, w):
    return x * pa.rsqrt(pa.mean(x * x, axis=-1, keepdim=True) + 1e-6) * w


def softmax(x):
    e = pa.exp(x - pa.max(x, axis=-1, keepdim=True))
    return e / pa.sum(e, axis=-1, keepdim=True)


def gelu_erf(x):
    return 0.5 * x * (1.0 + pa.erf(x * 0.7071067811865476))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + pa.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def _ln64(x, w, b, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def _erf64(x):
    return np.vectorize(math.erf)(x)


OPERATORS = {
    "layer_norm": (layer_norm, _ln64, [(7, 33), (33,), (33,)]),
    "residual_layer_norm": (
        residual_layer_norm,
        lambda x, r, w, b: _ln64(x + r, w, b),
        [(7, 33), (7, 33), (33,), (33,)],
    ),
    "rms_norm": (
        rms_norm,
        lambda x, w: x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w,
        [(7, 33), (33,)],
    ),
    "softmax": (
        softmax,
        lambda x: (
            np.exp(x - x.max(-1, keepdims=True))
            / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)
        ),
        [(7, 33)],
    ),
    "gelu_erf": (gelu_erf, lambda x: 0.5 * x * (1 + _erf64(x / math.sqrt(2))), [(7, 33)]),
    "gelu_tanh": (
        gelu_tanh,
        lambda x: 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3))),
        [(7, 33)],
    ),
}


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_backward_matches_finite_differences(name: str):
    fn, ref, shapes = OPERATORS[name]
    check_full(fn, ref, *[_rand(s, seed=i) for i, s in enumerate(shapes)])


@pytest.mark.parametrize("name", sorted(OPERATORS))
@pytest.mark.parametrize("rows", [1, 33, 513])
def test_operator_backward_jvp_on_tails(name: str, rows: int):
    fn, ref, shapes = OPERATORS[name]
    shapes = [(rows, *s[1:]) if len(s) == 2 else s for s in shapes]
    check_jvp(fn, ref, *[_rand(s, seed=i) for i, s in enumerate(shapes)])


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_backward_fp16(name: str):
    fn, ref, shapes = OPERATORS[name]
    check_full(fn, ref, *[_rand(s, "float16", seed=i) for i, s in enumerate(shapes)])


def attention(q, k, v):
    s = pa.matmul(q, k, transpose_b=True) * 0.125
    e = pa.exp(s - pa.max(s, axis=-1, keepdim=True))
    return pa.matmul(e / pa.sum(e, axis=-1, keepdim=True), v)


def swiglu(x, wg, wu):
    g = pa.matmul(x, wg)
    return g * pa.sigmoid(g) * pa.matmul(x, wu)


def _softmax64(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


MATMUL_OPERATORS = {
    "attention": (
        attention,
        lambda q, k, v: _softmax64(q @ np.swapaxes(k, -1, -2) * 0.125) @ v,
        [(2, 5, 4), (2, 6, 4), (2, 6, 3)],
    ),
    "swiglu": (
        swiglu,
        lambda x, wg, wu: (x @ wg) / (1 + np.exp(-(x @ wg))) * (x @ wu),
        [(7, 5), (5, 6), (5, 6)],
    ),
}


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", sorted(MATMUL_OPERATORS))
def test_matmul_operator_backward(name: str, dtype: str):
    """A batched single-head attention block and SwiGLU with its two matmuls."""
    fn, ref, shapes = MATMUL_OPERATORS[name]
    check_full(fn, ref, *[_rand(s, dtype, seed=i) for i, s in enumerate(shapes)])
