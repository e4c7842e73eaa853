"""Kernel-language errors: signature mismatches at the call and unsupported Python in the
body are located ``PyAscError``s (file:line:col, the source line, what is wrong, a hint),
never a raw traceback. The kernels here use bare, undefined dim names (annotations are read
from the source)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import line_of

import pyasc_mlir as pa
import pyasc_mlir.language as lang

# ruff: noqa: F821  (the dim names N, D are bare on purpose)

HERE = __file__


def _err(kern, *args) -> pa.PyAscError:
    with pytest.raises(pa.PyAscError) as info:
        kern(*args)
    return info.value


def _at(exc: pa.PyAscError, fn, marker="# ERR"):
    line = line_of(fn, marker)
    assert exc.loc is not None and exc.loc.file == HERE and exc.loc.line == line, str(exc)
    text = str(exc)
    assert f"{HERE}:{line}:" in text and "hint:" in text and "Traceback" not in text


@lang.kernel
def add_rows(
    a: lang.float32[N, D],
    b: lang.float32[N, D],  # ERR
) -> lang.float32[N, D]:
    c = lang.empty((N, D), lang.float32)
    for i in range(N):
        for j in range(D):
            c[i, j] = a[i, j] + b[i, j]
    return c


@lang.kernel
def fixed(x: lang.float16[4, N]) -> lang.float16[4, N]:  # ERR
    y = lang.empty_like(x)
    for i in range(4):
        for j in range(N):
            y[i, j] = x[i, j]
    return y


def test_bare_dim_names_bind_at_the_call():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(add_rows(a, a), a + a)


def test_dim_name_mismatch_is_located_at_the_annotation():
    exc = _err(add_rows, np.zeros((3, 4), np.float32), np.zeros((3, 5), np.float32))
    assert exc.message == (
        "add_rows(): argument 'b': dim D = 5 (axis 1), but argument 'a' gave D = 4"
    )
    assert exc.hint == "every D in the signature must have the same size"
    _at(exc, add_rows)


def test_an_empty_argument_is_located_at_its_annotation():
    exc = _err(add_rows, np.zeros((3, 4), np.float32), np.zeros((3, 0), np.float32))
    assert exc.message.startswith("add_rows(): argument 'b' is empty (shape [3, 0])")
    assert "x.size == 0" in exc.hint
    _at(exc, add_rows)


def test_literal_dim_rank_and_dtype_are_checked():
    exc = _err(fixed, np.zeros((5, 3), np.float16))
    assert "axis 0 has size 5, declared 4 in lang.float16[4, N]" in exc.message
    _at(exc, fixed)
    exc = _err(fixed, np.zeros((4, 3, 1), np.float16))
    assert "rank 3" in exc.message and "(rank 2)" in exc.message
    exc = _err(fixed, np.zeros((4, 3), np.float32))
    assert exc.message == "fixed(): argument 'x' is float32, declared lang.float16[4, N]"
    assert exc.hint == "convert it: x.astype(np.float16)"


@lang.kernel
def transposed_result(x: lang.float32[N, D]) -> lang.float32[D, N]:  # ERR
    y = lang.empty_like(x)  # [N, D], not the declared [D, N]
    for i in range(N):
        for j in range(D):
            y[i, j] = x[i, j]
    return y


@lang.kernel
def fp16_result(x: lang.float32[N]) -> lang.float16[N]:  # ERR
    y = lang.empty_like(x)  # float32, not the declared float16
    for i in range(N):
        y[i] = x[i]
    return y


@lang.kernel
def shorter_result(x: lang.float32[N]) -> lang.float32[L]:
    y = lang.empty(N - 1, lang.float32)  # L: no parameter binds it, any size
    for i in range(N - 1):
        y[i] = x[i + 1] - x[i]
    return y


def test_the_return_annotation_is_checked():
    exc = _err(transposed_result, np.zeros((7, 33), np.float32))
    assert exc.message == (
        "transposed_result()'s result is float32[7, 33], declared lang.float32[D, N]"
    )
    _at(exc, transposed_result)
    np.testing.assert_array_equal(transposed_result(np.eye(5, dtype=np.float32)), np.eye(5))
    exc = _err(fp16_result, np.zeros(7, np.float32))
    assert exc.message == "fp16_result()'s result is float32[7], declared lang.float16[N]"
    assert "lang.cast" in exc.hint
    _at(exc, fp16_result)
    x = np.array([1.0, 4.0, 9.0, 16.0], np.float32)
    np.testing.assert_array_equal(shorter_result(x), np.diff(x))


@lang.kernel
def ints(x: lang.int32[N]) -> lang.float32[N]:  # ERR
    y = lang.empty(N, lang.float32)
    return y


def test_int32_arrays_are_declared_but_not_compiled():
    exc = _err(ints, np.zeros(4, np.int32))
    assert (
        exc.message
        == "ints(): argument 'x': lang.int32 arrays are not supported by the backend yet"
    )
    assert exc.hint == "use lang.float16, lang.bfloat16 or lang.float32"
    _at(exc, ints)


def k_try(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    try:  # ERR
        y[0] = x[0]
    except ValueError:
        pass
    return y


def k_eval(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        y[i] = eval("x[i]")  # ERR
    return y


def k_while(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.zeros(N, lang.float32)
    while y[0] < x[0]:  # ERR
        y[0] = y[0] + 1.0
    return y


def k_if(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        if x[i] > 0:  # ERR
            y[i] = x[i]
        else:
            y[i] = 0.0
    return y


def k_if_loop_var(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        if i < 4:  # ERR
            y[i] = 0.0
        else:
            y[i] = x[i]
    return y


def k_retype(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        t = x[i]
        t = lang.empty_like(x)  # noqa: F841  # ERR
        y[i] = x[i]
    return y


def k_write_arg(x: lang.float32[N]) -> lang.float32[N]:
    for i in range(N):
        x[i] = 0.0  # ERR
    return x


def k_slice(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        y[i] = x[0:2]  # ERR
    return y


def k_index_arith(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        y[i] = x[i + 1]  # ERR
    return y


def k_print(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    print(x)  # ERR
    return y


def k_not_raisable(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.zeros(N, lang.float32)
    for i in lang.range(1, N):  # ERR
        y[i] = x[i]
    return y


def test_a_nest_that_cannot_be_raised_runs_as_scalar_loops(tmp_path, monkeypatch):
    """Not an error any more (issue 11): a located performance warning, and the right values
    (tests/test_lang_fallback.py has the full set)."""
    monkeypatch.setenv("PYASC_CACHE_DIR", str(tmp_path))
    pa.clear_memory_cache()
    x = np.arange(1.0, 6.0, dtype=np.float32)
    with pytest.warns(pa.PyAscPerformanceWarning) as caught:
        y = lang.kernel(k_not_raisable, backend="interp")(x)
    np.testing.assert_array_equal(y, np.array([0, 2, 3, 4, 5], np.float32))
    text = str(caught[0].message)
    line = line_of(k_not_raisable)
    assert text.startswith(f"{HERE}:{line}:5: warning: ") and "(a partial write)" in text


def k_pa_call(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        y[i] = pa.exp(x[i])  # ERR
    return y


def k_zero_step(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.zeros(N, lang.float32)
    for i in lang.range(0, N, 0):  # ERR
        y[i] = x[i]
    return y


def k_zero_step_builtin(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.zeros(N, lang.float32)
    for i in range(0, N, 0):  # ERR
        y[i] = x[i]
    return y


def k_zero_step_triangular(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.zeros(N, lang.float32)
    for i in range(N):
        for j in range(0, i + 1, 0):  # ERR
            y[i] = x[j]
    return y


def k_negative_step(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.zeros(N, lang.float32)
    for i in range(N - 1, -1, -1):  # ERR
        y[i] = x[i]
    return y


def k_range_arity(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.zeros(N, lang.float32)
    for i in range(0, N, 1, 2):  # ERR
        y[i] = x[i]
    return y


def k_unknown_lang(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        y[i] = lang.exp2(x[i])  # ERR
    return y


def k_unknown_lang_math(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        y[i] = lang.math.tanhh(x[i])  # ERR
    return y


def k_unknown_dtype(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty((N,), lang.float64)  # ERR
    for i in range(N):
        y[i] = x[i]
    return y


def k_unknown_math(x: lang.float32[N]) -> lang.float32[N]:
    y = lang.empty_like(x)
    for i in range(N):
        y[i] = math.exp3(x[i])  # ERR
    return y


CASES = {
    k_try: ("'Try' statements are not supported in a kernel", "exceptions do not exist"),
    k_eval: ("eval() cannot be called in a kernel", "eval, exec"),
    k_while: ("a while loop whose condition reads runtime values", "range(N)"),
    k_if: ("a comparison of runtime values (array elements)", "lang.maximum"),
    k_if_loop_var: ("a comparison of a loop variable in a kernel", "split the loop"),
    k_retype: ("variable 't' changes type: it was a runtime scalar, now an array", "new name"),
    k_write_arg: ("kernel arguments are read-only", "lang.empty_like"),
    k_slice: ("expected a number, got a slice [2] (slices are read inside a whole-slice", ""),
    k_index_arith: (
        "the loop variable runs over [1, 6), outside the axis of size 5",
        "range(size)",
    ),
    k_print: ("print() runs only in the debugger mode", "PYASC_DEBUG=1"),
    k_pa_call: ("exp() is not a kernel-language function", "lang.*"),
    k_zero_step: ("a kernel loop needs a positive step, got 0", "a zero step never ends"),
    k_zero_step_builtin: ("a kernel loop needs a positive step, got 0", "step >= 1"),
    k_zero_step_triangular: ("a kernel loop needs a positive step, got 0", "step >= 1"),
    k_negative_step: ("a kernel loop needs a positive step, got -1", "a[N - 1 - i]"),
    k_range_arity: ("range takes 1 to 3 arguments, got 4", "range(start, stop, step)"),
    k_unknown_lang: ("lang has no function 'exp2'", "did you mean lang.exp? The element"),
    k_unknown_lang_math: ("lang.math has no function 'tanhh'", "did you mean lang.tanh?"),
    k_unknown_dtype: ("lang has no attribute 'float64'", "lang.float32"),
    k_unknown_math: ("math has no function 'exp3'", "did you mean math.exp"),
}


@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_unsupported_python_is_a_located_error(fn):
    message, hint = CASES[fn]
    kern = lang.kernel(fn)
    exc = _err(kern, np.ones(5, np.float32))
    assert message in exc.message and "<module" not in exc.message, exc.message
    assert exc.hint is not None and hint in exc.hint, exc.hint
    _at(exc, fn)
