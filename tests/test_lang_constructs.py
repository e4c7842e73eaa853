"""Kernel-language bodies with module-level classes (instances created inside the kernel,
methods, properties and dataclass fields inlined) and ``with lang.scope(...)``; the errors
for what stays out (a class defined in the body, a user context manager, runtime scalars
in attributes, attributes changed in a loop). Results vs NumPy on tails, fp16 and fp32."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import assert_close, line_of, seed_of
from lang_kernels import lowered, run_stage

import pyasc_mlir as pa
import pyasc_mlir.language as lang

# ruff: noqa: F821  (the dim names N, D are bare on purpose)

HERE = __file__


@dataclasses.dataclass
class Affine:
    """A compile-time config with a method."""

    scale: float
    shift: float = 0.5

    def apply(self, v):
        return self.scale * v + self.shift


class BiasedRows:
    """A helper object holding arrays and compile-time values."""

    def __init__(self, x, bias, gain):
        self.x = x
        self.bias = bias
        self.gain = gain
        self.rows, self.cols = x.shape

    @property
    def width(self):
        return self.cols

    @staticmethod
    def twice(v):
        return 2.0 * v

    def value(self, i, j):
        return self.gain * (self.x[i, j] + self.bias[j])


def objects_body(x, b, y):
    aff = Affine(1.5)
    rows = BiasedRows(x, b, gain=3.0)
    with lang.scope("affine"):
        for i in range(rows.rows):
            for j in range(rows.width):
                y[i, j] = aff.apply(rows.value(i, j)) + BiasedRows.twice(rows.bias[j])
    return y


@lang.kernel
def objects16(x: lang.float16[N, D], b: lang.float16[D]) -> lang.float16[N, D]:
    return objects_body(x, b, lang.empty_like(x))


@lang.kernel
def objects32(x: lang.float32[N, D], b: lang.float32[D]) -> lang.float32[N, D]:
    return objects_body(x, b, lang.empty_like(x))


def _rand(shape, dtype, *key):
    rng = np.random.default_rng(seed_of(*key, shape, dtype))
    return rng.standard_normal(shape).astype(dtype)


def _ref(x, b):
    x, b = x.astype(np.float64), b.astype(np.float64)
    return 1.5 * (3.0 * (x + b)) + 0.5 + 2.0 * b


@pytest.mark.parametrize("shape", [(1, 1), (7, 33), (33, 513), (513, 7)], ids=str)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_objects_and_scope_on_tails(shape, dtype):
    kern = objects16 if dtype == "float16" else objects32
    x, b = _rand(shape, dtype, "x"), _rand(shape[1:], dtype, "b")
    stages, info = lowered(kern, x, b)
    assert info["kernels"] == 1 and info["kernel_type"] == "AIV_ONLY"
    (out,) = run_stage(stages, "tile", kern, x, b)
    assert_close(out, _ref(x, b), dtype)
    # the scope names the raised ops
    scoped = [o for o in stages["tensor"].walk() if "lang.scope" in o.attributes]
    assert scoped and all(o.attributes["lang.scope"].data == "affine" for o in scoped)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_objects_on_the_cpu_build(dtype):
    kern = objects16 if dtype == "float16" else objects32
    x, b = _rand((33, 513), dtype, "x"), _rand((513,), dtype, "b")
    assert_close(kern(x, b), _ref(x, b), dtype)


def _err(kern, *args) -> pa.PyAscError:
    with pytest.raises(pa.PyAscCompileError) as info:
        kern(*args)
    exc = info.value
    assert exc.loc is not None and exc.loc.file == HERE, str(exc)
    assert exc.loc.line == line_of(kern.fn, "# ERR"), str(exc)
    assert "hint:" in str(exc) and "Traceback" not in str(exc)
    return exc


class Opened:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


@lang.kernel
def user_context(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    with Opened():  # ERR
        for i in range(N):
            y[i] = x[i]
    return y


@lang.kernel
def class_in_body(x: lang.float32[N]) -> lang.float32[N]:
    class Local:  # ERR
        pass

    return x


class Holder:
    def __init__(self):
        self.total = 0.0


@lang.kernel
def runtime_attr(x: lang.float32[N]) -> lang.float32[N]:
    h = Holder()
    y = lang.empty_like(x)
    for i in range(N):
        h.total = x[i]  # ERR
        y[i] = x[i]
    return y


@lang.kernel
def attr_in_loop(x: lang.float32[N]) -> lang.float32[N]:
    a = Affine(1.0)
    y = lang.empty_like(x)
    for i in range(N):
        a.scale = 2.0  # ERR
        y[i] = a.apply(x[i])
    return y


@lang.kernel
def error_in_scope(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    with lang.scope("outer"), lang.scope("inner"):
        for i in range(N):
            y[i] = x[i] < 0.0  # ERR
    return y


def test_with_and_class_errors_are_located():
    x = np.ones(7, np.float32)
    exc = _err(user_context, x)
    assert "with works only on lang.scope(...)" in exc.message and "Opened(...)" in exc.message
    exc = _err(class_in_body, x)
    assert "'ClassDef' statements are not supported" in exc.message
    assert "module level" in (exc.hint or "")
    exc = _err(runtime_attr, x)
    assert "Holder.total would hold a runtime scalar" in exc.message
    exc = _err(attr_in_loop, x)
    assert "assigned inside a loop the object was not created in" in exc.message
    exc = _err(error_in_scope, x)
    assert exc.message.endswith("(in lang.scope 'outer/inner')")


def test_scope_and_objects_run_in_the_debugger_mode(monkeypatch):
    monkeypatch.setenv("PYASC_DEBUG", "1")
    x, b = _rand((7, 33), "float32", "x"), _rand((33,), "float32", "b")
    assert_close(objects32(x, b), _ref(x, b), "float32")
