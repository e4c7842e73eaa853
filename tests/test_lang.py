"""The kernel language end to end: every construct of tests/lang_kernels.py against float64
NumPy, fp16 and fp32, on shapes with tails (1, 7, 33, 513, 4097).

The sweep runs the whole pipeline (asc-raise-loops first) and interprets the tile-level IR
(every pass but the emitter); a few kernels also run on the CPU build of the emitted Ascend C
(g++), through ``@lang.kernel``'s call, torch tensors and ``pa.compile``/``load_op``."""

from __future__ import annotations

import lang_kernels as K
import numpy as np
import pytest
from helpers import assert_close, erf_ref, seed_of, softmax_ref
from lang_kernels import lowered, run_stage

import pyasc_mlir as pa


def _rand(shape, dtype, *key):
    rng = np.random.default_rng(seed_of(*key, shape, dtype))
    return (rng.standard_normal(shape) * 2.0).astype(dtype)


def _f64(x):
    return np.asarray(x).astype(np.float64)


def _gelu_erf(x):
    x = _f64(x)
    return 0.5 * x * (1.0 + erf_ref(x / np.sqrt(2.0)))


def _gelu_tanh(x):
    x = _f64(x)
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def _swiglu(g, u):
    g = _f64(g)
    return g / (1.0 + np.exp(-g)) * _f64(u)


SHAPES_1D = [(1,), (7,), (33,), (513,), (4097,)]
SHAPES_2D = [(1, 7), (7, 33), (33, 513), (513, 1), (1, 4097)]

MAPS = {
    "vector_add": (
        {"float16": K.vector_add, "float32": K.vector_add32},
        2,
        lambda a, b: _f64(a) + b,
    ),
    "gelu_erf": ({"float16": K.gelu_erf16, "float32": K.gelu_erf32}, 1, _gelu_erf),
    "gelu_tanh": ({"float16": K.gelu_tanh16, "float32": K.gelu_tanh32}, 1, _gelu_tanh),
    "swiglu": ({"float16": K.swiglu16, "float32": K.swiglu32}, 2, _swiglu),
}
REDUCTIONS = {
    "row_sum": ({"float16": K.row_sum16, "float32": K.row_sum32}, lambda x: _f64(x).sum(1)),
    "row_max": ({"float16": K.row_max16, "float32": K.row_max32}, lambda x: _f64(x).max(1)),
}


def _check(kern, args, expected, dtype, reduction=False):
    stages, info = lowered(kern, *args)
    assert info["kernels"] == 1
    (out,) = run_stage(stages, "tile", kern, *args)
    if reduction and dtype == "float32":
        assert_close(out, expected, dtype, reduction=True)
    elif reduction:  # an fp16 result of a long f32 sum: one fp16 rounding of the result
        assert_close(out, expected, dtype, rtol=2e-3, atol=2e-3 * max(1.0, np.abs(expected).max()))
    else:
        assert_close(out, expected, dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("name", sorted(MAPS))
@pytest.mark.parametrize("shape", SHAPES_2D, ids=str)
def test_elementwise_loops_match_numpy(name, dtype, shape):
    kerns, arity, ref = MAPS[name]
    if name == "vector_add":
        shape = (shape[0] * shape[1],)  # 7, 231, 16929, 513, 4097 elements: 1-d tails
    args = [_rand(shape, dtype, name, i) for i in range(arity)]
    _check(kerns[dtype], args, ref(*args), dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("shape", SHAPES_2D, ids=str)
def test_reduction_loops_match_numpy(name, dtype, shape):
    kerns, ref = REDUCTIONS[name]
    x = _rand(shape, dtype, name)
    _check(kerns[dtype], [x], ref(x), dtype, reduction=name == "row_sum")


@pytest.mark.parametrize(
    ("m", "n", "k"), [(1, 7, 33), (7, 33, 1), (33, 513, 7), (513, 1, 33)], ids=str
)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_matmul_loops_match_numpy(m, n, k, dtype):
    kern = K.matmul16 if dtype == "float16" else K.matmul_acc32
    a, b = _rand((m, n), dtype, "a"), _rand((n, k), dtype, "b")
    stages, info = lowered(kern, a, b)
    assert info["kernels"] == 1 and info["kernel_type"].startswith("MIX")  # the Cube
    (out,) = run_stage(stages, "tile", kern, a, b)
    ref = _f64(a) @ _f64(b)
    if dtype == "float16":
        assert_close(out, ref, dtype, rtol=2e-3, atol=2e-3 * max(1.0, np.abs(ref).max()))
    else:
        assert_close(out, ref, dtype, reduction=True)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("shape", SHAPES_2D, ids=str)
def test_softmax_and_full_reduction_loops(shape, dtype):
    x = _rand(shape, dtype, "softmax")
    kern = K.softmax_rows16 if dtype == "float16" else K.softmax_rows32
    _check(kern, [x], softmax_ref(_f64(x)), dtype)
    v = _rand((shape[0] * shape[1],), dtype, "centered")
    kern = K.centered16 if dtype == "float16" else K.centered32
    _check(kern, [v], _f64(v) - _f64(v).mean(), dtype)


@pytest.mark.parametrize("n", [3, 7, 33, 513, 4097])
def test_offset_indices_and_partial_ranges(n):
    """x[i + 1], y[i - 1] with lang.range(1, n - 1), and a loop over part of an axis: the
    reads become slices (data-movement kernels), the values NumPy's."""
    x = _rand((n,), "float32", "stencil")
    stages, _ = lowered(K.second_difference32, x)
    (out,) = run_stage(stages, "tile", K.second_difference32, x)
    assert_close(out, np.diff(_f64(x), 2), "float32")
    m = _rand((min(n, 33), 9), "float16", "head")
    stages, _ = lowered(K.head_sum16, m, 3)
    (out,) = run_stage(stages, "tile", K.head_sum16, m, 3)
    assert_close(out, _f64(m)[:, :3].sum(1), "float16")


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("shape", SHAPES_1D, ids=str)
def test_constructs(shape, dtype):
    """Compile-time if/else and while, a recursive helper, math.pi, lang.cast to fp16,
    lang.ones/full, a compile-time str and float parameter."""
    kern = K.constructs16 if dtype == "float16" else K.constructs32
    x = _rand(shape, dtype, "constructs")
    stages, _ = lowered(kern, x, 2.0, "round")
    (out,) = run_stage(stages, "tile", kern, x, 2.0, "round")
    rounded = (x.astype(np.float32) * np.float32(2.0)).astype(np.float16).astype(np.float64)
    assert_close(out, rounded + 8.0 + 8.0 + np.pi, dtype)
    stages, _ = lowered(kern, x, 2.0, "other")
    (out,) = run_stage(stages, "tile", kern, x, 2.0, "other")
    assert_close(out, _f64(x) - np.sqrt(2.0) / 4.0, dtype)


@pytest.mark.parametrize("shape", [(1, 7), (7, 33), (33, 513)], ids=str)
def test_bias_broadcast_and_two_results(shape):
    x, b = _rand(shape, "float16", "x"), _rand(shape[1:], "float16", "b")
    stages, info = lowered(K.bias_relu16, x, b)
    assert info["kernels"] == 1
    (out,) = run_stage(stages, "tile", K.bias_relu16, x, b)
    assert_close(out, np.maximum(_f64(x) + _f64(b), 0.0), "float16")
    stages, info = lowered(K.two_results16, x)
    e, s = run_stage(stages, "tile", K.two_results16, x)
    ref = np.exp(_f64(x) - 1.0)
    assert_close(e, ref, "float16")
    assert_close(s, ref.astype(np.float16).astype(np.float64).sum(1), "float32", reduction=True)


def _tensor_max(x):
    return x.max(1)


def test_nonfinite_values_as_the_tensor_frontend():
    """NaN, +-inf, -0 and fp16 subnormals through a map and a max: bit for bit what the
    tensor frontend's a + b and x.max(1) give (the pipeline's semantics)."""
    x = np.array([[np.nan, np.inf, -np.inf, -0.0, 6e-8, -6e-8, 1.0]] * 2, np.float16)
    x[1, 0] = 2.0
    a, b = x.ravel(), np.concatenate([np.zeros(7), -np.ones(7)]).astype(np.float16)
    stages, _ = lowered(K.vector_add, a, b)
    (out,) = run_stage(stages, "tile", K.vector_add, a, b)
    ref, _ = lowered(lambda_add, a, b)
    (want,) = run_stage(ref, "tile", lambda_add, a, b)
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))
    assert np.isnan(out[0]) and out[1] == np.inf and out[9] == -np.inf
    cpu = K.vector_add(a, b)  # the CPU build of the emitted Ascend C: the same bits
    np.testing.assert_array_equal(cpu.view(np.uint16), out.view(np.uint16))
    stages, _ = lowered(K.row_max16, x)
    (m,) = run_stage(stages, "tile", K.row_max16, x)
    ref, _ = lowered(_tensor_max, x)
    (want,) = run_stage(ref, "tile", _tensor_max, x)
    np.testing.assert_array_equal(m.view(np.uint16), want.view(np.uint16))
    assert m[1] == np.inf


def lambda_add(a, b):
    return a + b


# ----------------------------------------------------------------------------- CPU build


def test_vector_add_cpu_build_numpy_and_torch():
    a, b = _rand((4097,), "float16", "a"), _rand((4097,), "float16", "b")
    before = K.vector_add.compilations
    assert_close(K.vector_add(a, b), _f64(a) + b, "float16")
    torch = pytest.importorskip("torch")
    out = K.vector_add(torch.from_numpy(a), torch.from_numpy(b))
    assert isinstance(out, torch.Tensor)
    assert_close(out.numpy(), _f64(a) + b, "float16")
    assert K.vector_add.compilations == before + 1  # one signature, one compilation


def test_gelu_and_matmul_cpu_build():
    x = _rand((33, 513), "float16", "gelu")
    assert_close(K.gelu_erf16(x), _gelu_erf(x), "float16")
    a, b = _rand((33, 7), "float16", "a"), _rand((7, 513), "float16", "b")
    ref = _f64(a) @ _f64(b)
    out = K.matmul16(a, b)
    assert_close(out, ref, "float16", rtol=2e-3, atol=2e-3 * np.abs(ref).max())
    op = K.matmul16.compile(a, b)
    assert op.info["kernels"] == 1 and op.info["cube_blocks"] >= 1


def test_compile_and_load_op(tmp_path):
    a, b = _rand((513,), "float32", "a"), _rand((513,), "float32", "b")
    desc = pa.TensorDesc((513,), "float32")
    op = pa.compile(K.vector_add32, [desc, desc], output_dir=tmp_path / "vadd")
    loaded = pa.load_op(tmp_path / "vadd")
    assert_close(loaded(a, b), _f64(a) + b, "float32")
    assert op.info["kernels"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES_2D, ids=str)
def test_cpu_build_sweep(shape):
    for dtype in ("float16", "float32"):
        x = _rand(shape, dtype, "sweep")
        assert_close(MAPS["gelu_tanh"][0][dtype](x), _gelu_tanh(x), dtype)
        out = REDUCTIONS["row_max"][0][dtype](x)
        assert_close(out, _f64(x).max(1), dtype)
