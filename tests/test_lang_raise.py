"""``asc-raise-loops``: translation validation (the loop IR interpreted element by element vs
the raised tensor IR, on tails 1, 7, 33, 513) and the raised kernels equal to the tensor
frontend's (same kernel count, same GM bytes, the Cube for contractions)."""

from __future__ import annotations

import math
import time
import warnings

import lang_kernels as K
import numpy as np
import pytest
from helpers import assert_close, seed_of
from lang_kernels import lowered

import pyasc_mlir as pa
import pyasc_mlir.language as lang
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.language import N
from pyasc_mlir.language.kernel import build_kernel_module
from pyasc_mlir.passes.raise_loops import AscRaiseLoopsPass
from pyasc_mlir.pipeline import make_context
from pyasc_mlir.types import TensorDesc


def _rand(shape, dtype, *key):
    rng = np.random.default_rng(seed_of(*key, shape, dtype))
    return (rng.standard_normal(shape) * 2.0).astype(dtype)


def _validate(kern, *arrays, **tol):
    """Interpret the loop IR and the raised IR on ``arrays``; return the raised module."""
    name = kern.fn.__name__
    descs = [TensorDesc(a.shape, a.dtype.name) for a in arrays]
    module, _ = build_kernel_module(kern, descs, name)
    module.verify()
    assert any(op.name == "asc_loop.for" for op in module.walk())
    raised = module.clone()
    AscRaiseLoopsPass().apply(make_context(), raised)
    raised.verify()
    assert not any(op.dialect_name() == "asc_loop" for op in raised.walk())
    before = run_function(module, name, list(arrays))
    after = run_function(raised, name, list(arrays))
    for b, a in zip(before, after, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert_close(a, b, **tol)
    return raised


TAILS_2D = [(1, 513), (7, 33), (33, 7), (513, 1)]


@pytest.mark.parametrize("shape", TAILS_2D, ids=str)
@pytest.mark.parametrize(
    "kern",
    [K.gelu_erf16, K.gelu_tanh32, K.swiglu16, K.swiglu32, K.bias_relu16],
    ids=lambda k: k.fn.__name__,
)
def test_maps_validate(kern, shape):
    nargs = len(kern.signature.params)
    dtype = kern.signature.params["x" if "x" in kern.signature.params else "gate"].dtype.name
    args = [_rand(shape, dtype, kern.fn.__name__, i) for i in range(nargs)]
    if kern is K.bias_relu16:
        args[1] = args[1][0]
    _validate(kern, *args)


@pytest.mark.parametrize("n", [1, 7, 33, 513])
def test_vector_add_validates(n):
    _validate(K.vector_add, _rand((n,), "float16", "a"), _rand((n,), "float16", "b"))
    _validate(K.vector_add32, _rand((n,), "float32", "a"), _rand((n,), "float32", "b"))


@pytest.mark.parametrize("n", [3, 7, 33, 513])
def test_offsets_and_partial_ranges_validate(n):
    raised = _validate(K.second_difference32, _rand((n,), "float32", "d"))
    assert len([op for op in raised.walk() if op.name == "asc.slice"]) == 3
    x = _rand((7, 9), "float16", "h")
    descs = [TensorDesc((7, 9), "float16"), 3]
    module, _ = build_kernel_module(K.head_sum16, descs, "head_sum16")
    raised = module.clone()
    AscRaiseLoopsPass().apply(make_context(), raised)
    before = run_function(module, "head_sum16", [x])[0]
    after = run_function(raised, "head_sum16", [x])[0]
    assert_close(after, before, "float16")


@pytest.mark.parametrize("shape", TAILS_2D, ids=str)
def test_reductions_validate(shape):
    raised = _validate(K.row_sum32, _rand(shape, "float32", "s"), reduction=True)
    assert [op.kind.data for op in raised.walk() if op.name == "asc.reduce"] == ["sum"]
    _validate(K.row_sum16, _rand(shape, "float16", "s16"))  # an f32 scalar accumulator
    raised = _validate(K.row_max16, _rand(shape, "float16", "m"))
    assert [op.kind.data for op in raised.walk() if op.name == "asc.reduce"] == ["max"]
    _validate(K.row_max32, _rand(shape, "float32", "m"))
    _validate(K.two_results16, _rand(shape, "float16", "t"), reduction=True)
    _validate(K.softmax_rows32, _rand(shape, "float32", "sm"), reduction=True)
    x = _rand(shape, "float32", "budget")
    _validate(K.row_budget32, x, reduction=True)
    (out,) = run_function(lowered(K.row_budget32, x)[0]["tile"], "row_budget32", [x])
    assert_close(out, 100.0 - x.astype(np.float64).sum(1), "float32", reduction=True)
    _validate(K.centered16, _rand((shape[0] * shape[1],), "float16", "c"))


@pytest.mark.parametrize(("m", "n", "k"), [(1, 7, 33), (7, 33, 1), (33, 1, 7), (7, 33, 7)])
def test_contractions_validate_and_are_matmuls(m, n, k):
    for kern, dtype in ((K.matmul16, "float16"), (K.matmul_acc32, "float32")):
        a, b = _rand((m, n), dtype, "a"), _rand((n, k), dtype, "b")
        # fp16: the loop IR's f32 scalar accumulator vs the Cube's f32 accumulation: one
        # fp16 rounding of the result apart at most
        raised = _validate(kern, a, b, reduction=True, rtol=2e-3, atol=2e-3 * max(1, n))
        assert [op.name for op in raised.walk() if op.name == "asc.matmul"] == ["asc.matmul"]


# ------------------------------------------------------------ equal to the tensor frontend


def _add(a, b):
    return a + b


def _gelu_erf(x):
    return 0.5 * x * (1.0 + pa.erf(x / math.sqrt(2.0)))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + pa.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def _swiglu(g, u):
    return g * pa.sigmoid(g) * u


def _row_sum(x):
    return x.sum(1)


def _row_max(x):
    return x.max(1)


def _matmul(a, b):
    return a @ b


def _softmax(x):
    return pa.softmax(x, -1)


@pytest.mark.parametrize(
    ("kern", "tensor_fn", "shapes"),
    [
        (K.vector_add, _add, [(4097,), (4097,)]),
        (K.gelu_erf16, _gelu_erf, [(33, 513)]),
        (K.gelu_tanh16, _gelu_tanh, [(33, 513)]),
        (K.swiglu16, _swiglu, [(513, 33), (513, 33)]),
        (K.row_sum16, _row_sum, [(513, 33)]),
        (K.row_max16, _row_max, [(7, 4097)]),
        (K.matmul16, _matmul, [(33, 7), (7, 513)]),
        (K.softmax_rows32, _softmax, [(33, 513)]),
    ],
    ids=lambda v: getattr(getattr(v, "fn", v), "__name__", ""),
)
def test_raised_kernel_equals_tensor_frontend(kern, tensor_fn, shapes):
    dtype = "float32" if kern is K.softmax_rows32 else "float16"
    args = [_rand(s, dtype, i) for i, s in enumerate(shapes)]
    _, loop_info = lowered(kern, *args)
    _, tensor_info = lowered(tensor_fn, *args)
    assert loop_info["kernels"] == tensor_info["kernels"] == 1
    assert loop_info["gm_bytes"] == tensor_info["gm_bytes"]
    assert loop_info["kernel_type"] == tensor_info["kernel_type"]
    ideal = sum(a.nbytes for a in args) + sum(
        math.prod(o["shape"]) * np.dtype(o["dtype"]).itemsize for o in loop_info["outputs"]
    )
    assert loop_info["gm_bytes"] == ideal  # each input read once, each output written once
    if kern is K.matmul16:
        assert loop_info["cube_blocks"] >= 1 and loop_info["kernel_type"].startswith("MIX")
    else:
        assert (
            loop_info["kernel_type"].startswith("AIV")
            or "cube" not in str(loop_info["kernel_type"]).lower()
        )


def test_loop_ir_round_trips_through_the_parser():
    from xdsl.parser import Parser

    descs = [TensorDesc((3, 4), "float16"), TensorDesc((4, 5), "float16")]
    module, _ = build_kernel_module(K.matmul16, descs, "matmul16")
    text = str(module)
    again = Parser(make_context(), text).parse_module()
    assert str(again) == text


@pytest.mark.slow
def test_matmul_1024_cube_on_the_cpu_build():
    a, b = _rand((1024, 1024), "float16", "A"), _rand((1024, 1024), "float16", "B")
    op = K.matmul16.compile(a, b)
    assert op.info["kernels"] == 1 and op.info["cube_blocks"] >= 1
    t0 = time.perf_counter()
    out = K.matmul16(a, b)
    seconds = time.perf_counter() - t0
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert_close(out, ref, "float16", rtol=2e-3, atol=2e-3 * np.abs(ref).max())
    print(f"1024^3 fp16 matmul on the CPU build: {seconds:.2f} s")
    assert seconds < 60  # "a few seconds" on an idle machine (about 1 s measured)


def _total_body(x, n):
    s = 0.0
    for i in range(n):
        s += x[i]
    out = lang.empty((1,), lang.float32)
    out[0] = s
    return out


@lang.kernel
def total16(x: lang.float16[N]) -> lang.float32[1]:
    return _total_body(x, N)


@lang.kernel
def total32(x: lang.float32[N]) -> lang.float32[1]:
    return _total_body(x, N)


def _mean_plus_max_body(x, n, dtype):
    s = 0.0
    m = -60000.0
    for i in range(n):
        s += x[i]
        m = lang.maximum(m, x[i])
    out = lang.empty((1, 1), dtype)
    out[0, 0] = s / n + m
    return out


@lang.kernel
def mean_plus_max16(x: lang.float16[N]) -> lang.float16[1, 1]:
    return _mean_plus_max_body(x, N, lang.float16)


@lang.kernel
def mean_plus_max32(x: lang.float32[N]) -> lang.float32[1, 1]:
    return _mean_plus_max_body(x, N, lang.float32)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("n", [1, 7, 33, 513, 4097])
def test_a_top_level_store_of_a_scalar_reduction_is_raised(n, dtype):
    """``out[0] = s`` outside every loop (what the hint for ``return s`` recommends) writes
    the whole one-element array: one vector kernel, no PyAscPerformanceWarning (it ran as
    scalar loops: 'an index is a constant')."""
    x = _rand((n,), dtype, "total")
    x64 = x.astype(np.float64)
    kerns = {"float16": (total16, mean_plus_max16), "float32": (total32, mean_plus_max32)}
    total, mpm = kerns[dtype]
    with warnings.catch_warnings():
        warnings.simplefilter("error", pa.PyAscPerformanceWarning)
        for kern, ref, out_dtype in [
            (total, [x64.sum()], "float32"),
            (mpm, [[x64.mean() + x64.max()]], dtype),
        ]:
            stages, info = lowered(kern, x)
            assert info["kernels"] == 1 and info["kernel_type"] == "AIV_ONLY", info
            assert not any(op.name == "asc_loop.nest" for op in stages["tensor"].walk())
            (out,) = run_function(stages["tile"], kern.fn.__name__, [x])
            assert_close(out, np.asarray(ref), out_dtype, reduction=True)
            if n in (7, 4097):  # the CPU build too
                assert_close(kern(x), np.asarray(ref), out_dtype, reduction=True)
