"""User errors through the public API (``@jit``, ``compile``, ``CompiledOp``): every error names
``file:line:col`` of the right line, shows that line with a caret under the column, says what
is wrong and what to do (``hint:``), and carries no pyasc-mlir internal stack (unless
``PYASC_LOG_LEVEL`` >= 2). Also the documented input rules: dtype conversion, views and
zero-size dimensions.

The line each error must name is marked in this file with ``# ERR <tag>``.
"""

from __future__ import annotations

import contextlib
import linecache
import re
import traceback

import numpy as np
import pytest
from helpers import tagged_line

import pyasc_mlir as pa
from pyasc_mlir.errors import PyAscCompileError, PyAscError, PyAscUsageError, is_internal_file

THIS = __file__
F16, F32 = np.float16, np.float32
RNG = np.random.default_rng(7)


def check(err: PyAscError, tag: str, *words: str) -> str:
    """``err`` is located at the ``# ERR tag`` line of this file, formatted with source line,
    caret and hint, mentions ``words``, and its traceback holds no pyasc-mlir internals."""
    line = tagged_line(THIS, tag)
    text = str(err)
    lines = text.splitlines()
    assert err.loc is not None and err.loc.file == THIS and err.loc.line == line, text
    assert lines[0].startswith(f"{THIS}:{line}:{err.loc.col + 1}: error: "), text
    source = linecache.getline(THIS, line).rstrip("\n")
    assert lines[1] == f"    {source}", text
    assert lines[2] == "    " + " " * err.loc.col + "^", text
    assert source[err.loc.col :].strip(), text  # the caret points at code, not past it
    assert any(x.startswith("hint: ") and len(x) > 10 for x in lines[3:]), text
    for w in words:
        assert w in text, (w, text)
    check_no_internal_stack(err)
    return text


def check_no_internal_stack(err: BaseException) -> None:
    """Only the user's frames, plus the one API boundary frame that re-raises the error."""
    frames = traceback.extract_tb(err.__traceback__)
    internal = [f for f in frames if is_internal_file(f.filename)]
    assert len(internal) <= 1, [f"{f.filename}:{f.lineno} {f.name}" for f in internal]
    for f in internal:
        assert f.filename.endswith("errors.py") and f.name == "entry", f
    assert err.__cause__ is None and err.__suppress_context__
    assert "Traceback" not in str(err)


# ------------------------------------------------------------------- unsupported Python


@pa.jit
def k_try(x):
    try:  # ERR try
        y = x * 2.0
    except ValueError:
        y = x
    return y


@pa.jit
def k_while(x):
    n = 0
    while n < 2:  # ERR while
        n += 1
    return x


@pa.jit
def k_lambda(x):
    f = lambda v: v * 2.0  # ERR lambda  # noqa: E731
    return f(x)


@pa.jit
def k_nested_def(x):
    def twice(v):  # ERR nested_def
        return v * 2.0

    return twice(x)


def _countdown(x, n):
    return x if n == 0 else _countdown(x + 1.0, n - 1)  # ERR recursion


@pa.jit
def k_recursion(x):
    return _countdown(x, 3)


@pa.jit
def k_print(x):
    print("x is", x)  # ERR print
    return x


_SCALE = 2.0


@pa.jit
def k_global(x):
    global _SCALE  # ERR global
    return x * _SCALE


@pa.jit
def k_if_tensor(x):
    if x.max() > 0:  # ERR if_tensor
        return x
    return -x


@pa.jit
def k_broadcast(x, y):
    return x + y  # ERR broadcast


@pa.jit
def k_cast_int8(x):
    return pa.cast(x, "int8")  # ERR cast_int8


@pa.jit
def k_mask_arith(x):
    return (x > 0) * x  # ERR mask_arith


@pa.jit
def k_return_mask(x):
    return x > 0  # ERR return_mask


X4 = np.ones((3, 4), F16)
UNSUPPORTED = {
    "try": (k_try, [X4], "try/except is not supported", "remove the try block"),
    "while": (k_while, [X4], "'while' loops are not supported", "range(n)"),
    "lambda": (k_lambda, [X4], "lambda expressions are not supported", "def"),
    "nested_def": (k_nested_def, [X4], "nested function definitions", "module level"),
    "recursion": (k_recursion, [X4], "recursive call to _countdown()", "for loop"),
    "print": (k_print, [X4], "print() is not supported", "backend='interp'"),
    "global": (k_global, [X4], "'global' declarations are not supported", "arguments"),
    "if_tensor": (
        k_if_tensor,
        [X4],
        "'if' condition depends on a runtime tensor value",
        "pyasc_mlir.where",
    ),
    "broadcast": (
        k_broadcast,
        [X4, np.ones(5, F16)],
        "cannot broadcast shapes [3, 4] and [5]",
        "trailing dimensions",
    ),
    "cast_int8": (k_cast_int8, [X4], "unsupported dtype 'int8'", "pyasc_mlir.float32"),
    "mask_arith": (
        k_mask_arith,
        [X4],
        "boolean mask cannot be used in arithmetic",
        "pyasc_mlir.where",
    ),
    "return_mask": (k_return_mask, [X4], "boolean mask cannot be returned", "pyasc_mlir.cast"),
}


@pytest.mark.parametrize("tag", sorted(UNSUPPORTED))
def test_compile_errors_through_jit(tag):
    fn, args, *words = UNSUPPORTED[tag]
    with pytest.raises(PyAscCompileError) as info:
        fn(*args)
    check(info.value, tag, *words)


@pytest.mark.parametrize("tag", ["while", "broadcast", "if_tensor"])
def test_compile_errors_through_compile(tag):
    fn, args, *words = UNSUPPORTED[tag]
    with pytest.raises(PyAscCompileError) as info:
        pa.compile(fn.fn, [pa.TensorDesc.of(a) for a in args])
    check(info.value, tag, *words)


def test_log_level_keeps_the_internal_stack(monkeypatch):
    monkeypatch.setenv("PYASC_LOG_LEVEL", "2")
    with pytest.raises(PyAscCompileError) as info:
        k_while(X4)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(f.filename.endswith("ast_frontend.py") for f in frames)
    monkeypatch.setenv("PYASC_LOG_LEVEL", "debug")
    with pytest.raises(PyAscCompileError) as info:
        k_while(X4)
    assert any(
        f.filename.endswith("ast_frontend.py")
        for f in traceback.extract_tb(info.value.__traceback__)
    )
    monkeypatch.setenv("PYASC_LOG_LEVEL", "1")
    with pytest.raises(PyAscCompileError) as info:
        k_while(X4)
    check_no_internal_stack(info.value)


# ---------------------------------------------------------------------------- UB capacity


def tall_softmax(x):
    m = x.max(1, keepdim=True)  # ERR ub
    e = pa.exp(x - m)
    return e / e.sum(1, keepdim=True)


def test_operator_that_cannot_fit_ub_names_buffers_and_sizes():
    # a reduction over a long MIDDLE axis (long last-axis rows are processed in row passes)
    with pytest.raises(PyAscCompileError) as info:
        pa.compile(tall_softmax, [pa.TensorDesc((2, 100_000, 16), "float32")])
    text = check(info.value, "ub", "bytes of UB", "usable", "buffers:")
    sizes = re.findall(r"(in|out|tmp|const) (\d+)x(\d+) B", text)
    assert len(sizes) >= 2 and any(int(b) >= 400_000 for _, _, b in sizes), text


# ------------------------------------------------------------ call time vs the signature


def axpy(x, y):
    return x * 2.0 + y


@pytest.fixture(scope="module")
def op():
    return pa.compile(axpy, [pa.TensorDesc((6, 40), "float16")] * 2)


def test_wrong_argument_count(op):
    x = np.ones((6, 40), F16)
    with pytest.raises(PyAscUsageError) as info:
        op(x, x, x)  # ERR call_count
    check(
        info.value,
        "call_count",
        "axpy() takes 2 tensor arguments, got 3",
        "x: [6, 40] float16, y: [6, 40] float16",
    )
    with pytest.raises(PyAscUsageError) as info:
        op.run_stage("tensor", x)  # ERR stage_count
    check(info.value, "stage_count", "got 1")


def test_wrong_shape(op):
    x = np.ones((6, 40), F16)
    with pytest.raises(PyAscUsageError) as info:
        op(x, x[:, :39])  # ERR call_shape
    check(
        info.value,
        "call_shape",
        "argument 1 ('y')",
        "[6, 39]",
        "compiled for [6, 40]",
        "compile again",
    )


@pytest.mark.parametrize("dtype", [np.bool_, np.complex64, object])
def test_unsupported_dtypes_are_refused(op, dtype):
    x = np.ones((6, 40), F16)
    with pytest.raises(PyAscUsageError) as info:
        op(x.astype(dtype), x)  # ERR call_dtype
    check(
        info.value, "call_dtype", f"has dtype {np.dtype(dtype)}", "compiled for float16", "astype"
    )


def test_float64_overflowing_float16_is_refused(op):
    x = np.ones((6, 40))
    x[2, 5] = 70000.0
    with pytest.raises(PyAscUsageError) as info:
        op(x, x)  # ERR call_overflow
    check(
        info.value, "call_overflow", "float64 value 70000.0 at index [2, 5]", "float16 range", "inf"
    )
    big = np.full((6, 40), 100000, np.int32)
    with pytest.raises(PyAscUsageError) as info:
        op(big, big)  # ERR call_overflow_int
    check(info.value, "call_overflow_int", "int32 value 100000")


def test_jit_wrong_argument_count():
    x = np.ones((6, 40), F16)
    with pytest.raises(PyAscUsageError) as info:
        pa.jit(axpy)(x)  # ERR jit_count
    check(info.value, "jit_count", "axpy()", "missing a required argument: 'y'", "def axpy(x, y)")


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int8, np.bool_])
def test_jit_refuses_dtypes_without_a_tensor_type(dtype):
    x = np.ones((6, 40), dtype)
    with pytest.raises(PyAscUsageError) as info:
        pa.jit(axpy)(x, x)  # ERR jit_dtype
    check(
        info.value,
        "jit_dtype",
        f"holds {np.dtype(dtype)} elements",
        "float16, bfloat16 or float32",
        "astype",
    )


# ------------------------------------------------------------------- documented input rule


def test_numeric_inputs_are_converted_to_the_compiled_dtype(op):
    x = RNG.uniform(-4, 4, (6, 40))
    y = RNG.integers(-50, 50, (6, 40))
    want = op(x.astype(F16), y.astype(F16))
    got = op(x, y)  # float64 and int64: astype(float16)
    assert got.dtype == F16 and got.shape == (6, 40)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(op(x.tolist(), y.astype(np.int16)), want)  # lists too
    # NaN and inf are values, not overflow: passed through
    x[0, 0], x[0, 1] = np.nan, np.inf
    got = op(x, y)
    assert np.isnan(got[0, 0]) and np.isinf(got[0, 1])


def test_non_contiguous_views_give_correct_results(op):
    big = RNG.uniform(-4, 4, (12, 120)).astype(F16)
    other = RNG.uniform(-4, 4, (40, 6)).astype(F16)
    views = {
        "strided": big[::2, ::3],
        "negative": big[5::-1, 119:79:-1],
        "transposed": other.T,
        "fortran": np.asfortranarray(big[:6, :40]),
    }
    for name, v in views.items():
        assert not v.flags.c_contiguous, name
        y = np.ascontiguousarray(big[6:, :40])
        ref = (v.astype(np.float32) * 2 + y.astype(np.float32)).astype(F16)
        got = op(v, y)
        np.testing.assert_allclose(
            got.astype(np.float32), ref.astype(np.float32), rtol=1e-3, atol=1e-3, err_msg=name
        )
        np.testing.assert_array_equal(got, op(np.ascontiguousarray(v), y), err_msg=name)
    # the caller's arrays are not modified
    before = big.copy()
    op(big[::2, ::3], big[::2, ::3])
    np.testing.assert_array_equal(big, before)


# ---------------------------------------------------------------------- zero-size dimensions


@pa.jit
def softmax(x):
    e = pa.exp(x - x.max(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def sum_rows(x, y):
    return x.sum(0) + y, x.mean(0)


def max_rows(x):
    return x.max(0)  # ERR empty_max


def bcast(x, y):
    return x + y


@contextlib.contextmanager
def no_gxx(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("g++ must not run for a zero-size operator")

    monkeypatch.setattr("pyasc_mlir.runtime.cpu.build_library", refuse)
    yield


def test_zero_size_dimensions_give_empty_results(monkeypatch, tmp_path):
    with no_gxx(monkeypatch):
        for shape in [(0, 16), (3, 0), (0, 0)]:
            y = softmax(np.zeros(shape, F16))
            assert y.shape == shape and y.dtype == F16
        op = pa.compile(
            bcast,
            [pa.TensorDesc((0, 1), "float32"), pa.TensorDesc((1, 7), "float32")],
            output_dir=tmp_path,
        )
        assert op.info["empty"] and op.info["library"] is None and op.info["kernels"] == 0
        assert [d.shape for d in op.outputs] == [(0, 7)]
        for backend in ("cpu", "interp"):
            out = op(np.zeros((0, 1), F32), np.ones((1, 7), F32), backend=backend)
            assert out.shape == (0, 7) and out.dtype == F32
        (out,) = op.run_stage("tile", np.zeros((0, 1), F32), np.ones((1, 7), F32))
        assert out.shape == (0, 7)
        loaded = pa.load_op(tmp_path)
        assert loaded(np.zeros((0, 1), F32), np.ones((1, 7), F32)).shape == (0, 7)
        # a result that is not empty: NumPy's values (sum of nothing = 0, mean = NaN)
        op = pa.compile(
            sum_rows, [pa.TensorDesc((0, 8), "float32"), pa.TensorDesc((8,), "float32")]
        )
        s, m = op(np.zeros((0, 8), F32), np.arange(8, dtype=F32))
        np.testing.assert_array_equal(s, np.arange(8, dtype=F32))
        assert m.shape == (8,) and np.isnan(m).all()
        # shapes are still checked at call time
        with pytest.raises(PyAscUsageError) as info:
            op(np.zeros((1, 8), F32), np.zeros(8, F32))  # ERR empty_shape
        check(info.value, "empty_shape", "[1, 8]", "[0, 8]")


def test_max_over_a_zero_size_dimension_is_an_error():
    with pytest.raises(PyAscCompileError) as info:
        pa.compile(max_rows, [pa.TensorDesc((0, 8), "float16")])
    check(info.value, "empty_max", "max() over a zero-size dimension")


def test_jit_refuses_python_lists_at_the_call_line():
    f = pa.jit(_list_add)
    with pytest.raises(pa.PyAscUsageError) as info:
        f([1.0, 2.0], [1.0, 2.0])  # the line below is the one named
    assert "is a Python list" in str(info.value) and "np.asarray" in str(info.value)


def test_tensor_desc_with_an_unsupported_dtype_is_a_located_usage_error():
    with pytest.raises(pa.PyAscUsageError) as info:
        pa.TensorDesc((4, 16), "int32")
    assert isinstance(info.value, TypeError)
    assert "test_errors.py" in str(info.value) and "float16, bfloat16 or float32" in str(info.value)


def _list_add(a, b):
    return a + b


# ------------------------------------------------------- errors that each carry a hint


def h_matmul_scalar(a):
    return a @ 2.0  # ERR matmul_scalar


def h_transpose_tensor(a):
    return pa.matmul(a, a, transpose_b=a)  # ERR transpose_tensor


def h_transpose_int(a):
    return pa.matmul(a, a, transpose_b=1)  # ERR transpose_int


def h_reshape(a):
    return a.reshape(3, 3)  # ERR reshape


def h_match_dim(a):
    pa.match_shape(a, (4, 9))  # ERR match_dim
    return a


def h_match_rank(a):
    pa.match_shape(a, (4,))  # ERR match_rank
    return a


def h_same_rank(a, b):
    pa.assert_same_rank(a, b)  # ERR same_rank
    return a


def h_undefined(a):
    return a * undefined_name  # ERR undefined  # noqa: F821


A48 = np.ones((4, 8), F16)
HINTED = {
    "matmul_scalar": (h_matmul_scalar, [A48], "right operand of matmul is float 2.0", "*"),
    "transpose_tensor": (h_transpose_tensor, [A48], "must be compile-time bools", "True or False"),
    "transpose_int": (h_transpose_int, [A48], "must be compile-time bools, got 1", "True or False"),
    "reshape": (
        h_reshape,
        [A48],
        "cannot reshape [4, 8] (32 elements) to [3, 3]",
        "must hold 32 elements",
    ),
    "match_dim": (h_match_dim, [A48], "does not match (4, 9): dim 1 is 8", "None accepts"),
    "match_rank": (h_match_rank, [A48], "does not match (4,): rank 2, expected 1", "None accepts"),
    "same_rank": (h_same_rank, [A48, np.ones(4, F16)], "different ranks", "reshape"),
    "undefined": (h_undefined, [A48], "name 'undefined_name' is not defined", "module level"),
}


@pytest.mark.parametrize("tag", sorted(HINTED))
def test_shape_and_operand_errors_carry_a_hint(tag):
    fn, args, *words = HINTED[tag]
    with pytest.raises(PyAscCompileError) as info:
        pa.jit(fn)(*args)
    check(info.value, tag, *words)


def test_a_lambda_operator_is_located_at_the_lambda():
    with pytest.raises(PyAscCompileError) as info:
        pa.jit(lambda a, b: a @ b)(A48, A48.T.copy())  # ERR top_lambda
    check(info.value, "top_lambda", "a lambda cannot be compiled", "def")
    assert info.value.loc.col == linecache.getline(THIS, info.value.loc.line).index("lambda")


def test_every_frontend_error_passes_a_hint():
    """Static check: each ``self.error(...)`` / ``PyAscCompileError(...)`` in the AST frontend
    (every module of ``pyasc_mlir.frontend``) passes a hint (the third argument)."""
    import ast
    from pathlib import Path

    import pyasc_mlir.frontend as fe

    missing = []
    for path in sorted(Path(fe.__file__).parent.glob("*.py")):
        for n in ast.walk(ast.parse(path.read_text())):
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            is_error = (
                isinstance(f, ast.Attribute)
                and f.attr == "error"
                and isinstance(f.value, ast.Name)
                and f.value.id == "self"
            )
            if (is_error or (isinstance(f, ast.Name) and f.id == "PyAscCompileError")) and (
                len(n.args) < 3 and not n.keywords
            ):
                missing.append(f"{path.name}:{n.lineno}")
    assert not missing, f"errors without a hint at {missing}"
