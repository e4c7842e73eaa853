"""Errors, not tracebacks, at the Python API and the ``pyasc`` CLI (issue 10): the cache
environment (``PYASC_CACHE_DIR`` that is a file, read-only or empty; ``PYASC_CACHE_DISABLE=1``
writes nothing), ``TensorDesc`` dims (types, signs, sizes beyond the platform's device memory),
``compile``'s arguments (no list, an unknown platform, not a function, ``yield``/``async def``
operators), NumPy scalars as compile-time constants, and ``pyasc profile``'s target and
platform. Gradients through torch tensors: ``tests/test_torch.py``.

The line each located error must name is marked in this file with ``# ERR <tag>``.
"""

from __future__ import annotations

import linecache
import os
from pathlib import Path

import numpy as np
import pytest
from helpers import tagged_line

import pyasc_mlir as pa
from pyasc_mlir import driver
from pyasc_mlir.errors import PyAscError, PyAscUsageError
from pyasc_mlir.platform import PLATFORMS, get_platform
from pyasc_mlir.runtime import cpu
from pyasc_mlir.tools.cli import main as cli_main

THIS = __file__
GIB = 1024**3


def check(err: PyAscError, tag: str, *words: str) -> str:
    """``err`` is located at the ``# ERR tag`` line of this file, formatted with the source
    line, a caret under code and a hint, and mentions ``words``."""
    line = tagged_line(THIS, tag)
    text = str(err)
    lines = text.splitlines()
    assert err.loc is not None and err.loc.file == THIS and err.loc.line == line, text
    assert lines[0].startswith(f"{THIS}:{line}:{err.loc.col + 1}: error: "), text
    source = linecache.getline(THIS, line).rstrip("\n")
    assert lines[1] == f"    {source}", text
    assert lines[2] == "    " + " " * err.loc.col + "^", text
    assert source[err.loc.col :].strip(), text
    assert any(x.startswith("hint: ") and len(x) > 10 for x in lines[3:]), text
    for w in words:
        assert w in text, (w, text)
    assert err.__cause__ is None and "Traceback" not in text
    return text


def double(x):
    return x * 2.0


def scaled(x, s):
    return x * s


def outer(a, b):
    return a * b


@pytest.fixture
def shared_pch_cache(tmp_path: Path) -> Path:
    """An empty cache folder whose precompiled-header folder is the default cache's (so a
    build here does not precompile the runtime header again)."""
    shared = cpu.default_cache_dir() / "cpu" / "pch"
    shared.mkdir(parents=True, exist_ok=True)
    root = tmp_path / "cache"
    (root / "cpu").mkdir(parents=True)
    (root / "cpu" / "pch").symlink_to(shared, target_is_directory=True)
    return root


@pytest.fixture(autouse=True)
def fresh_memory_cache():
    driver.clear_memory_cache()
    yield
    driver.clear_memory_cache()


X = np.linspace(-3, 3, 7 * 33, dtype=np.float32).reshape(7, 33)


# ------------------------------------------------------------------- cache environment


def test_cache_dir_that_is_a_file(tmp_path, monkeypatch):
    path = tmp_path / "not-a-folder"
    path.write_text("x")
    monkeypatch.setenv("PYASC_CACHE_DIR", str(path))
    monkeypatch.delenv("PYASC_CACHE_DISABLE", raising=False)
    with pytest.raises(PyAscUsageError) as info:
        pa.compile(double, [pa.TensorDesc((7, 33))])  # ERR cache-file
    check(
        info.value,
        "cache-file",
        "PYASC_CACHE_DIR",
        str(path),
        "not a folder",
        "PYASC_CACHE_DISABLE=1",
    )
    with pytest.raises(PyAscUsageError) as info:  # a file on the way to the folder
        monkeypatch.setenv("PYASC_CACHE_DIR", str(path / "sub"))
        pa.compile(double, [pa.TensorDesc((7, 33))])  # ERR cache-file-parent
    check(info.value, "cache-file-parent", str(path / "sub"), "cannot be created")


@pytest.mark.parametrize("sub", ["cpu", "ops"])
def test_cache_subfolder_that_is_a_file(tmp_path, monkeypatch, sub):
    (tmp_path / sub).write_text("x")  # the cache's own cpu/ or ops/ is a file
    monkeypatch.setenv("PYASC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PYASC_CACHE_DISABLE", raising=False)
    with pytest.raises(PyAscUsageError) as info:
        pa.compile(double, [pa.TensorDesc((7, 33))])  # ERR cache-sub
    check(info.value, "cache-sub", str(tmp_path / sub), "not a folder", "PYASC_CACHE_DISABLE=1")


def test_read_only_cache_dir(tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    if os.access(ro, os.W_OK):  # root ignores the mode bits: use a folder of procfs
        ro = Path("/proc/sys")
    assert ro.is_dir() and not os.access(ro, os.W_OK)
    monkeypatch.setenv("PYASC_CACHE_DIR", str(ro))
    monkeypatch.delenv("PYASC_CACHE_DISABLE", raising=False)
    with pytest.raises(PyAscUsageError) as info:
        pa.compile(double, [pa.TensorDesc((7, 33))])  # ERR cache-ro
    check(info.value, "cache-ro", str(ro), "not writable", "PYASC_CACHE_DISABLE=1")
    # the cache switched off, the same folder is fine: nothing is read or written there
    monkeypatch.setenv("PYASC_CACHE_DISABLE", "1")
    op = pa.compile(double, [pa.TensorDesc((7, 33), "float32")])
    np.testing.assert_array_equal(op(X), X * np.float32(2))
    assert not Path(op.info["library"]).is_relative_to(ro)


def test_empty_cache_dir_means_the_default(tmp_path, monkeypatch, shared_pch_cache):
    home = tmp_path / "home"
    default = home / ".cache" / "pyasc_mlir"
    default.parent.mkdir(parents=True)
    shared_pch_cache.rename(default)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PYASC_CACHE_DIR", "")
    monkeypatch.delenv("PYASC_CACHE_DISABLE", raising=False)
    op = pa.compile(double, [pa.TensorDesc((7, 33), "float32")])
    np.testing.assert_array_equal(op(X), X * np.float32(2))
    assert list(cwd.iterdir()) == []  # nothing in the current folder
    assert op.directory.is_relative_to(default / "ops")  # entries and libraries: the default
    assert Path(op.info["library"]).is_relative_to(default / "cpu")


def test_cache_disable_writes_nothing_not_even_the_precompiled_header(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("PYASC_CACHE_DIR", str(root))
    monkeypatch.setenv("PYASC_CACHE_DISABLE", "1")
    op = pa.compile(double, [pa.TensorDesc((7, 33), "float32")])
    np.testing.assert_array_equal(op(X), X * np.float32(2))
    assert not root.exists(), sorted(str(p) for p in root.rglob("*"))


# ------------------------------------------------------------------- TensorDesc dims


def test_tensor_desc_refuses_dims_that_are_not_ints():
    with pytest.raises(PyAscUsageError) as info:
        pa.TensorDesc((4, 8.7))  # ERR dim-float
    check(info.value, "dim-float", "dim 1", "8.7", "float")
    with pytest.raises(PyAscUsageError) as info:
        pa.TensorDesc((4, "8"))  # ERR dim-str
    check(info.value, "dim-str", "dim 1", "'8'", "str")
    with pytest.raises(PyAscUsageError) as info:
        pa.TensorDesc((True, 8))  # ERR dim-bool
    check(info.value, "dim-bool", "dim 0", "True", "bool")
    with pytest.raises(PyAscUsageError) as info:
        pa.TensorDesc((np.bool_(False), 8))  # ERR dim-npbool
    check(info.value, "dim-npbool", "dim 0", "bool")
    with pytest.raises(PyAscUsageError) as info:
        pa.TensorDesc((4, -1))  # ERR dim-neg
    check(info.value, "dim-neg", "dim 1", "-1", ">= 0")
    with pytest.raises(PyAscUsageError) as info:
        pa.TensorDesc(8)  # ERR dim-scalar
    check(info.value, "dim-scalar", "tuple", "(8,)")


def test_tensor_desc_accepts_ints_numpy_ints_and_none():
    d = pa.TensorDesc((np.int64(4), np.int32(8), None, 0))
    assert d.shape == (4, 8, None, 0)
    assert [type(x) for x in d.shape] == [int, int, type(None), int]
    assert pa.TensorDesc([7, 33], np.float32) == pa.TensorDesc((7, 33), "float32")
    assert pa.TensorDesc.of(np.zeros((3, 5), np.float16)).shape == (3, 5)


def test_tensors_larger_than_device_memory_are_refused():
    with pytest.raises(PyAscUsageError) as info:
        pa.compile(double, [pa.TensorDesc((3, 2**62))])  # ERR hbm-wrap
    check(
        info.value,
        "hbm-wrap",
        "argument 0 of double()",
        "[3, 4611686018427387904]",
        "64 GiB",
        "910B2",
    )
    with pytest.raises(PyAscUsageError) as info:  # beyond int64: no raw VerifyException
        pa.compile(double, [pa.TensorDesc((2**40, 2**40))])  # ERR hbm-int64
    check(info.value, "hbm-int64", "argument 0 of double()", "device memory")
    column, row = pa.TensorDesc((2**31, 1)), pa.TensorDesc((1, 2**31))  # 4 GiB each
    with pytest.raises(PyAscUsageError) as info:
        pa.compile(outer, [column, row])  # ERR hbm-result
    check(info.value, "hbm-result", "result 0 of outer()", "[2147483648, 2147483648]")
    # the bound is the platform's: 64 GiB of fp32 fits a 910B2, not a 310P3
    big = [pa.TensorDesc((16 * GIB,), "float32")]
    assert get_platform("910B2").hbm_bytes >= 64 * GIB > get_platform("310P3").hbm_bytes
    with pytest.raises(PyAscUsageError) as info:
        pa.compile(double, big, platform="310P3")  # ERR hbm-310p
    check(info.value, "hbm-310p", "310P3", f"{get_platform('310P3').hbm_bytes // GIB} GiB")
    assert pa.compile(double, big).outputs == [pa.TensorDesc((16 * GIB,), "float32")]


def test_every_platform_has_a_device_memory_size():
    for plat in PLATFORMS.values():
        assert 16 * GIB <= plat.hbm_bytes <= 128 * GIB, plat


# ------------------------------------------------------------------- compile's arguments


def test_compile_needs_a_list_of_inputs():
    with pytest.raises(PyAscUsageError) as info:
        pa.compile(double, pa.TensorDesc((7, 33)))  # ERR no-list
    check(info.value, "no-list", "a list", "TensorDesc", "[pa.TensorDesc(")


def test_compile_needs_a_function():
    with pytest.raises(PyAscUsageError) as info:
        pa.compile(3, [pa.TensorDesc((7, 33))])  # ERR not-fn
    check(info.value, "not-fn", "int", "def")


def test_unknown_platform_is_a_located_error():
    with pytest.raises(PyAscUsageError) as info:
        pa.compile(double, [pa.TensorDesc((7, 33))], platform="910X")  # ERR platform
    check(info.value, "platform", "'910X'", *PLATFORMS)
    jf = pa.jit(double, platform="910C")
    with pytest.raises(PyAscUsageError) as info:
        jf(X)  # ERR jit-platform
    check(info.value, "jit-platform", "'910C'", "910B2")


def gen_op(x):
    yield x * 2.0  # ERR yield


def gen_from_op(x):
    yield from (x,)  # ERR yield-from


async def async_op(x):  # ERR async
    return x * 2.0


def test_generator_and_async_operators_are_located_errors():
    with pytest.raises(PyAscError) as info:
        pa.compile(gen_op, [pa.TensorDesc((7, 33))])
    check(info.value, "yield", "'yield'", "return")
    with pytest.raises(PyAscError) as info:
        pa.compile(gen_from_op, [pa.TensorDesc((7, 33))])
    check(info.value, "yield-from", "'yield from'")
    with pytest.raises(PyAscError) as info:
        pa.compile(async_op, [pa.TensorDesc((7, 33))])
    check(info.value, "async", "async def", "async_op()")


@pytest.mark.parametrize(
    "value",
    [1 / np.sqrt(32), np.float64(0.3), np.float32(0.5), np.int64(3), np.int32(-2)],
    ids=lambda v: f"{type(v).__name__}({v})",
)
def test_numpy_scalars_are_compile_time_constants(value):
    plain = value.item()
    ref = (X * np.float32(plain)).astype(np.float32)
    jf = pa.jit(scaled)
    got = jf(X, value)
    np.testing.assert_array_equal(got, jf(X, plain))
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    op = jf.compile(X, value)
    assert op.inputs == [pa.TensorDesc((7, 33), "float32")]  # one tensor, not two
    assert op is jf.compile(X, plain)  # the same signature as the Python number
    direct = pa.compile(scaled, [pa.TensorDesc((7, 33), "float32"), value])
    assert (
        direct.info["key"]
        == pa.compile(scaled, [pa.TensorDesc((7, 33), "float32"), plain]).info["key"]
    )
    np.testing.assert_array_equal(direct(X), got)


# ------------------------------------------------------------------- pyasc profile


@pytest.fixture
def target(tmp_path: Path) -> Path:
    src = tmp_path / "ops_file.py"
    src.write_text("def double(x):\n    return x * 2.0\n\n\nSCALE = 3\n")
    return src


@pytest.mark.parametrize(
    "name, words",
    [
        ("NOT_A_FUNCTION", "has no function 'NOT_A_FUNCTION'"),
        ("SCALE", "'SCALE' is an int, not a function"),
    ],
)
def test_profile_target_that_is_not_a_function(target, name, words, capsys):
    with pytest.raises(SystemExit) as e:
        cli_main(["profile", f"{target}::{name}", "--shape", "7,33"])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert "pyasc profile: error: " in err and words in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["profile", "tune"])
def test_cli_unknown_platform_is_a_usage_error(target, command, capsys):
    with pytest.raises(SystemExit) as e:
        cli_main([command, f"{target}::double", "--shape", "7,33", "--platform", "910X"])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert f"pyasc {command}: error: " in err and "unknown Ascend platform '910X'" in err, err
    assert all(p in err for p in PLATFORMS) and "Traceback" not in err


def test_unknown_backend_is_refused_where_it_is_named():
    with pytest.raises(PyAscUsageError) as info:
        pa.jit(double, backend="gpu")  # ERR backend-jit
    check(info.value, "backend-jit", "unknown backend 'gpu'", "interp")
    op = pa.compile(double, [pa.TensorDesc((7, 33), "float32")])
    with pytest.raises(PyAscUsageError) as info:
        op(X, backend="GPU")  # ERR backend-call
    check(info.value, "backend-call", "unknown backend 'GPU'", "cpu")
