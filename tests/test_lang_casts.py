"""``lang.cast`` on elements: to float32 (a no-op: kernel-language scalars are f32 values, so
nothing is emitted; the CPU build once refused the f32 -> f32 ``Cast`` it got), to float16 and
bfloat16 (round to nearest even, then computed on in f32), from fp16 and fp32 inputs, alone and
in expressions. Results vs float64 NumPy on tails: the tile-level IR interpreted for every
size, the CPU build of the emitted Ascend C for a few."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import assert_close, seed_of
from lang_kernels import lowered, run_stage

import pyasc_mlir.language as lang

# ruff: noqa: F821  (the dim name N is bare on purpose)


def to_f32_body(x, y):
    for i in range(x.shape[0]):
        v = lang.cast(x[i], lang.float32)
        y[i] = v * v + lang.cast(x[i], lang.float32) ** 2 + (lang.cast(x[i], lang.float32) + 1.0)
    return y


@lang.kernel
def to_f32_16(x: lang.float16[N]) -> lang.float32[N]:
    return to_f32_body(x, lang.empty((N,), lang.float32))


@lang.kernel
def to_f32_32(x: lang.float32[N]) -> lang.float32[N]:
    return to_f32_body(x, lang.empty((N,), lang.float32))


def rounds_body(x, y):
    for i in range(x.shape[0]):
        v = x[i] * 3.0
        y[i] = lang.cast(v, lang.float16) + 2.0 * lang.cast(v, lang.bfloat16)
    return y


@lang.kernel
def rounds16(x: lang.float16[N]) -> lang.float32[N]:
    return rounds_body(x, lang.empty((N,), lang.float32))


@lang.kernel
def rounds32(x: lang.float32[N]) -> lang.float32[N]:
    return rounds_body(x, lang.empty((N,), lang.float32))


@lang.kernel
def plain16(x: lang.float16[N]) -> lang.float32[N]:
    y = lang.empty((N,), lang.float32)
    for i in range(N):
        v = x[i]
        y[i] = v * v + x[i] ** 2 + (x[i] + 1.0)
    return y


TO_F32 = {"float16": to_f32_16, "float32": to_f32_32}
ROUNDS = {"float16": rounds16, "float32": rounds32}
SIZES = [1, 7, 33, 513, 4097]


def _rand(n, dtype, *key):
    return (np.random.default_rng(seed_of(*key, n, dtype)).standard_normal(n) * 3).astype(dtype)


def _to_f32_ref(x):
    v = x.astype(np.float64)
    return v * v + v**2 + (v + 1.0)


def _rounds_ref(x):
    v = x.astype(np.float32) * np.float32(3.0)  # the element product, in f32
    f16 = v.astype(np.float16).astype(np.float64)
    bf16 = v.astype(ml_dtypes.bfloat16).astype(np.float64)
    return f16 + 2.0 * bf16


def _casts(stages):
    return [o.name for m in stages.values() for o in m.walk() if "cast" in o.name]


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("n", SIZES)
def test_cast_to_float32_emits_nothing(n, dtype):
    x = _rand(n, dtype, "to_f32")
    stages, info = lowered(TO_F32[dtype], x)
    assert info["kernels"] == 1
    (out,) = run_stage(stages, "tile", TO_F32[dtype], x)
    assert_close(out, _to_f32_ref(x), "float32")
    # no f32 -> f32 Cast at any level: an fp16 input's casts are those of the same body
    # without lang.cast (its widening to f32)
    twin = _casts(lowered(plain16, x)[0]) if dtype == "float16" else []
    assert _casts(stages) == twin, _casts(stages)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("n", SIZES)
def test_cast_to_float16_and_bfloat16_rounds(n, dtype):
    x = _rand(n, dtype, "rounds")
    stages, _ = lowered(ROUNDS[dtype], x)
    (out,) = run_stage(stages, "tile", ROUNDS[dtype], x)
    assert_close(out, _rounds_ref(x), "float32")


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("n", [7, 4097])
def test_casts_on_the_cpu_build(n, dtype):
    """The CPU build (where a cast to float32 was a raw ``KernelError``)."""
    x = _rand(n, dtype, "cpu")
    assert_close(TO_F32[dtype](x), _to_f32_ref(x), "float32")
    assert_close(ROUNDS[dtype](x), _rounds_ref(x), "float32")
