"""The class form, relocatable compiled folders and operator libraries (issue 13, items 2, 5).

- ``pa.compile(MyReLU, inputs=[...], output_dir=...)`` and the five-input ``SwiGLU`` class,
  ``load_op`` of them, against NumPy (shapes with tails, fp16 and fp32); misuse is a located
  error naming what does not fit the declaration.
- A compiled folder copied elsewhere, its cache deleted, loads and runs in a fresh process
  with an empty ``PYASC_CACHE_DIR`` (no g++); ``op.json`` holds no absolute path; edits of
  the copy are still refused.
- ``registry.json``: ``pa.compile(..., library=, version=)``, ``output_dir=lib/x`` into an
  existing library, ``load_op("name")`` through ``PYASC_OP_PATH`` and ``pa.add_op_library``,
  the version and signature choice, errors, a moved library, ``pyasc ops list``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_close

import pyasc_mlir as pa
from pyasc_mlir import driver, op_library
from pyasc_mlir.runtime import cpu
from pyasc_mlir.tools.cli import main as cli_main

ROWS = (1, 7, 33, 513, 4097)
HERE = Path(__file__).name


class MyReLU(pa.Op):
    inputs = [pa.TensorDesc((None, 1024), pa.float16)]
    outputs = [pa.TensorDesc((None, 1024), pa.float16)]

    def forward(self, x):
        return pa.relu(x)


class MyReLU32(MyReLU):
    inputs = [pa.TensorDesc((None, 1024), pa.float32)]
    outputs = [pa.TensorDesc((None, 1024), pa.float32)]


class SwiGLU(pa.Op):
    """Five inputs: ``silu(x @ w + bg) * (x @ v + bu)``."""

    inputs = [
        pa.TensorDesc((None, 64), pa.float16),
        pa.TensorDesc((64, 96), pa.float16),
        pa.TensorDesc((64, 96), pa.float16),
        pa.TensorDesc((96,), pa.float16),
        pa.TensorDesc((96,), pa.float16),
    ]
    outputs = [pa.TensorDesc((None, 96), pa.float16)]
    version = "2.1"

    def forward(self, x, w, v, bg, bu):
        g = x @ w + bg
        return g * pa.sigmoid(g) * (x @ v + bu)


def swiglu_ref(x, w, v, bg, bu):
    x, w, v, bg, bu = (a.astype(np.float64) for a in (x, w, v, bg, bu))
    g = x @ w + bg
    return g / (1 + np.exp(-g)) * (x @ v + bu)


def relu_input(rows: int, dtype: type) -> np.ndarray:
    x = np.random.default_rng(rows).standard_normal((rows, 1024)).astype(dtype)
    x.flat[:4] = [np.nan, -0.0, np.inf, -np.inf][: x.size]
    return x


def relu_ref(x: np.ndarray) -> np.ndarray:
    """``+0`` where ``x < 0``, else ``x`` (NaN and ``-0`` kept), as ``pa.relu``."""
    return np.where(x < 0, np.zeros_like(x), x)


def same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    ints = {2: np.uint16, 4: np.uint32}[a.dtype.itemsize]
    np.testing.assert_array_equal(a.view(ints), b.view(ints))


# ------------------------------------------------------------------------------ class form


@pytest.mark.parametrize("rows", ROWS)
@pytest.mark.parametrize("cls", [MyReLU, MyReLU32], ids=["fp16", "fp32"])
def test_class_form_compiles_concrete_shapes_and_loads(cls, rows, tmp_path):
    dtype = cls.inputs[0].np_dtype
    op = pa.compile(cls, inputs=[pa.TensorDesc((rows, 1024), dtype)], output_dir=tmp_path / "relu")
    assert op.name == cls.__name__.lower() and not op.dynamic  # static at the given shape
    assert op.inputs == [pa.TensorDesc((rows, 1024), dtype)]
    x = relu_input(rows, dtype)
    same_bits(op(x), relu_ref(x))
    loaded = pa.load_op(tmp_path / "relu")
    same_bits(loaded(x), relu_ref(x))
    same_bits(loaded(x, backend="interp"), relu_ref(x))


def test_class_form_without_inputs_compiles_the_declared_dynamic_ones(tmp_path):
    op = MyReLU.compile(output_dir=tmp_path / "relu")
    assert op.dynamic and op.inputs[0].shape == (None, 1024)
    for rows in ROWS:
        x = relu_input(rows, np.float16)
        same_bits(op(x), relu_ref(x))
    x = relu_input(7, np.float16)
    same_bits(MyReLU()(x), relu_ref(x))  # the instance call compiles the declared inputs


@pytest.mark.parametrize(("rows", "dtype"), [(1, "float32"), (7, "float16"), (33, "float16")])
def test_five_input_swiglu_class(rows, dtype, tmp_path):
    rng = np.random.default_rng(rows)
    shapes = [(rows, 64), (64, 96), (64, 96), (96,), (96,)]
    args = [(rng.standard_normal(s) * 0.3).astype(dtype) for s in shapes]
    descs = [pa.TensorDesc(s, dtype) for s in shapes]
    if dtype == "float32":  # the declaration is fp16: another class for fp32

        class SwiGLU32(SwiGLU):
            inputs = [pa.TensorDesc(d.shape, "float32") for d in SwiGLU.inputs]
            outputs = [pa.TensorDesc((None, 96), "float32")]

        cls: type = SwiGLU32
    else:
        cls = SwiGLU
    op = pa.compile(cls, inputs=descs, output_dir=tmp_path / "swiglu")
    want = swiglu_ref(*args)
    assert_close(op(*args), want, dtype, reduction=True)
    assert_close(pa.load_op(tmp_path / "swiglu")(*args), want, dtype, reduction=True)


def test_an_instance_call_of_a_matmul_class_compiles_per_shape():
    """SwiGLU's ``None`` dim cannot be dynamic (a Cube kernel): ``SwiGLU()(...)`` compiles the
    arrays' shapes, once per shape, instead of failing."""
    rng = np.random.default_rng(3)
    for rows in (2, 5, 2):
        shapes = [(rows, 64), (64, 96), (64, 96), (96,), (96,)]
        args = [(rng.standard_normal(s) * 0.3).astype(np.float16) for s in shapes]
        assert_close(SwiGLU()(*args), swiglu_ref(*args), "float16", reduction=True)
    assert sorted(SwiGLU._compiled_op) == sorted(  # two shapes, two kernels
        repr([pa.TensorDesc(s, "float16") for s in [(r, 64), (64, 96), (64, 96), (96,), (96,)]])
        for r in (2, 5)
    )


def misuse(fn, *words):
    with pytest.raises(pa.PyAscUsageError) as err:
        fn()
    text = str(err.value)
    for w in words:
        assert w in text, (w, text)
    return text


def test_class_form_misuse_is_located():
    f16 = pa.float16

    class NotAnOp:
        def forward(self, x):
            return x

    text = misuse(lambda: pa.compile(NotAnOp, [pa.TensorDesc((4, 4))]), "not a pyasc_mlir.Op")
    assert HERE in text and "subclass pa.Op" in text
    text = misuse(
        lambda: pa.compile(MyReLU, inputs=[pa.TensorDesc((8, 512), f16)]),
        "input 0 has size 512 in dim 1, declared 1024",
    )
    assert HERE in text and "MyReLU declares inputs ([None, 1024] float16)" in text
    misuse(lambda: pa.compile(MyReLU, [pa.TensorDesc((8, 1024), "float32")]), "dtype float32")
    misuse(lambda: pa.compile(MyReLU, [pa.TensorDesc((1024,), f16)]), "has rank 1")
    misuse(lambda: pa.compile(MyReLU, [pa.TensorDesc((2, 1024), f16)] * 2), "got 2 inputs")
    misuse(lambda: pa.compile(MyReLU, [3.0]), "not a TensorDesc")

    class Undeclared(pa.Op):
        def forward(self, x):
            return x

    misuse(lambda: pa.compile(Undeclared), "needs inputs", "pa.compile(Undeclared, inputs=[")


class WrongOutputs(pa.Op):  # ERR outputs
    inputs = [pa.TensorDesc((4, 8), "float32")]
    outputs = [pa.TensorDesc((4, 9), "float32")]

    def forward(self, x):
        return x * 2.0


def test_declared_outputs_that_do_not_fit_are_located_at_the_class():
    with pytest.raises(pa.PyAscUsageError) as err:
        pa.compile(WrongOutputs)
    text = str(err.value)
    assert "forward returns ([4, 8] float32) but outputs declares ([4, 9] float32)" in text
    from helpers import tagged_line

    assert f"{HERE}:{tagged_line(__file__, 'outputs')}" in text


def test_an_op_instance_compiles_with_its_attributes():
    class Scale(pa.Op):
        inputs = [pa.TensorDesc((3, 40), "float32")]
        factor = 2.0

        def forward(self, x):
            return x * self.factor

    x = np.arange(120, dtype=np.float32).reshape(3, 40)
    np.testing.assert_array_equal(pa.compile(Scale)(x), x * 2.0)
    np.testing.assert_array_equal(Scale().compile()(x), x * 2.0)


# ---------------------------------------------------------------------------- relocation


def _private_cache(root: Path) -> Path:
    """An empty cache folder sharing only the default cache's precompiled header."""
    shared = cpu.default_cache_dir() / "cpu" / "pch"
    shared.mkdir(parents=True, exist_ok=True)
    (root / "cpu").mkdir(parents=True)
    (root / "cpu" / "pch").symlink_to(shared, target_is_directory=True)
    return root


LOAD_AND_RUN = """
import sys, numpy as np, pyasc_mlir as pa
op = pa.load_op(sys.argv[1])
x = np.load(sys.argv[2])
np.save(sys.argv[3], op(x))
np.save(sys.argv[4], op(x, backend="interp"))
"""


def test_a_copied_folder_loads_and_runs_with_an_empty_cache(tmp_path, monkeypatch):
    cache_a = _private_cache(tmp_path / "cache_a")
    monkeypatch.setenv("PYASC_CACHE_DIR", str(cache_a))
    driver.clear_memory_cache()
    src = tmp_path / "build" / "relu"
    op = pa.compile(MyReLU, [pa.TensorDesc((33, 1024), "float16")], output_dir=src)
    info = json.loads((src / "op.json").read_text())
    assert info["library"] == op.library.name and (src / info["library"]).is_file()
    for f in ("kernel.cpp", "host.cpp", "cpu_entry.cpp", "tensor.mlir", "tile.mlir"):
        assert (src / f).is_file(), f
    text = (src / "op.json").read_text()
    assert str(tmp_path) not in text and str(cache_a) not in text  # no absolute path
    moved = tmp_path / "elsewhere" / "relu"
    shutil.copytree(src, moved)
    shutil.rmtree(src)
    shutil.rmtree(cache_a)  # nothing of the compile's cache is left
    driver.clear_memory_cache()
    fresh = tmp_path / "fresh_cache"
    x = relu_input(33, np.float16)
    np.save(tmp_path / "x.npy", x)
    env = {**os.environ, "PYASC_CACHE_DIR": str(fresh)}
    outs = [tmp_path / "cpu.npy", tmp_path / "interp.npy"]
    subprocess.run(
        [sys.executable, "-c", LOAD_AND_RUN, str(moved), str(tmp_path / "x.npy"), *map(str, outs)],
        env=env,
        check=True,
        timeout=300,
    )
    for out in outs:
        same_bits(np.load(out), relu_ref(x))
    assert not any(p.suffix == ".so" for p in fresh.rglob("*")) if fresh.exists() else True
    # the integrity checks still hold for the moved folder
    (moved / "kernel.cpp").write_text((moved / "kernel.cpp").read_text() + "// edited\n")
    with pytest.raises(pa.PyAscUsageError, match="kernel.cpp is missing or differs"):
        pa.load_op(moved)


def test_recompiling_into_a_folder_keeps_only_its_library(tmp_path):
    out = tmp_path / "op"
    pa.compile(MyReLU, [pa.TensorDesc((7, 1024), "float16")], output_dir=out)
    pa.compile(MyReLU, [pa.TensorDesc((9, 1024), "float16")], output_dir=out)
    libs = sorted(p.name for p in out.glob("*.so"))
    assert libs == [json.loads((out / "op.json").read_text())["library"]]
    x = relu_input(9, np.float16)
    same_bits(pa.load_op(out)(x), relu_ref(x))


# ------------------------------------------------------------------------------ registry


def scale_add(x, y):
    return x * 3.0 + y


def scale_add_v2(x, y):
    return x * 4.0 + y


@pytest.fixture
def op_path(monkeypatch):
    """A clean search path: no ``PYASC_OP_PATH``, no added libraries."""
    monkeypatch.delenv(op_library.OP_PATH_VAR, raising=False)
    monkeypatch.setattr(op_library, "_ADDED", [])


def f32(*shape: int) -> pa.TensorDesc:
    return pa.TensorDesc(shape, "float32")


def test_registry_finds_operators_by_name_version_and_signature(tmp_path, op_path, monkeypatch):
    lib = tmp_path / "lib"
    pa.compile(scale_add, [f32(7, 33), f32(7, 33)], library=lib, name="scale_add")
    pa.compile(scale_add_v2, [f32(7, 33), f32(7, 33)], library=lib, name="scale_add", version="2")
    pa.compile(scale_add, [f32(5, 8), f32(5, 8)], library=lib, name="scale_add", version="1")
    pa.compile(
        SwiGLU,
        [pa.TensorDesc(d.shape if d.shape[0] else (4, 64)) for d in SwiGLU.inputs],
        library=lib,
    )
    reg = json.loads((lib / "registry.json").read_text())
    assert {(e["name"], e["version"]) for e in reg["ops"]} == {
        ("scale_add", "1"),
        ("scale_add", "2"),
        ("swiglu", "2.1"),
    }
    assert all(not Path(e["folder"]).is_absolute() for e in reg["ops"])
    with pytest.raises(pa.PyAscUsageError, match="no operator named 'scale_add'"):
        pa.load_op("scale_add")  # the library is not on the search path yet
    monkeypatch.setenv(op_library.OP_PATH_VAR, os.pathsep.join([str(tmp_path / "none"), str(lib)]))
    x, y = (np.random.default_rng(i).standard_normal((7, 33)).astype(np.float32) for i in (1, 2))
    latest = pa.load_op("scale_add")  # version 2: the highest, one signature
    np.testing.assert_array_equal(latest(x, y), x * np.float32(4.0) + y)
    v1 = pa.load_op("scale_add", version="1", inputs=[f32(7, 33), f32(7, 33)])
    np.testing.assert_array_equal(v1(x, y), x * np.float32(3.0) + y)
    text = str(pytest.raises(pa.PyAscUsageError, pa.load_op, "scale_add", version=1).value)
    assert "2 signatures" in text and "[7, 33] float32" in text and "[5, 8] float32" in text
    assert "inputs=[pa.TensorDesc" in text
    small = pa.load_op("scale_add", version="1", inputs=[f32(5, 8), f32(5, 8)])
    assert small.inputs == [f32(5, 8), f32(5, 8)]
    text = str(pytest.raises(pa.PyAscUsageError, pa.load_op, "scale_add", version="3").value)
    assert "no entry for the version" in text and "version 2:" in text
    with pytest.raises(pa.PyAscUsageError) as err:
        pa.load_op("nope")
    text = str(err.value)
    assert "known: scale_add, swiglu" in text and HERE in text
    sw = pa.load_op("swiglu")
    assert sw.inputs[0].shape == (4, 64)


def test_add_op_library_output_dir_into_a_library_and_a_moved_library(tmp_path, op_path):
    lib = tmp_path / "lib"
    pa.compile(scale_add, [f32(3, 40), f32(3, 40)], library=lib)
    pa.compile(scale_add_v2, [f32(2, 8), f32(2, 8)], output_dir=lib / "v2", name="v2op")
    names = {e["name"] for e in json.loads((lib / "registry.json").read_text())["ops"]}
    assert names == {"scale_add", "v2op"}  # output_dir=lib/x registers in an existing library
    moved = tmp_path / "moved"
    shutil.copytree(lib, moved)
    shutil.rmtree(lib)
    pa.add_op_library(moved)
    x = np.ones((2, 8), np.float32)
    np.testing.assert_array_equal(pa.load_op("v2op")(x, x), np.full((2, 8), 5.0, np.float32))
    with pytest.raises(pa.PyAscUsageError, match="is not a folder"):
        pa.add_op_library(tmp_path / "missing")
    # a folder recompiled outside the library no longer matches its registry entry
    pa.compile(scale_add_v2, [f32(2, 8), f32(2, 8)], output_dir=tmp_path / "other", name="v2op")
    shutil.rmtree(moved / "v2")
    shutil.copytree(tmp_path / "other", moved / "v2")
    with pytest.raises(pa.PyAscUsageError, match="is not the compile of 'v2op'"):
        pa.load_op("v2op")
    (moved / "registry.json").write_text("{not json")
    with pytest.raises(pa.PyAscUsageError, match="registry.json is not an operator registry"):
        pa.load_op("v2op")


def test_load_op_arguments_and_library_misuse(tmp_path, op_path):
    with pytest.raises(pa.PyAscUsageError, match="choose among the entries"):
        pa.load_op(tmp_path / "x", version="1")
    with pytest.raises(pa.PyAscUsageError, match="not a version string"):
        pa.compile(scale_add, [f32(3, 40), f32(3, 40)], library=tmp_path / "l", version="a b")
    with pytest.raises(pa.PyAscUsageError, match="is not inside the operator library"):
        pa.compile(
            scale_add,
            [f32(3, 40), f32(3, 40)],
            library=tmp_path / "l",
            output_dir=tmp_path / "outside",
        )
    with pytest.raises(pa.PyAscUsageError, match="takes a folder or an operator name"):
        pa.load_op(3)  # type: ignore[arg-type]


def test_pyasc_ops_list(tmp_path, op_path, capsys):
    lib = tmp_path / "lib"
    pa.compile(scale_add, [f32(3, 40), f32(3, 40)], library=lib, version="1.10")
    pa.compile(scale_add, [f32(3, 40), f32(3, 40)], library=lib, version="1.9")
    assert cli_main(["ops", "list", "--library", str(lib)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("2 operator(s) in")
    assert "scale_add  version 1.9" in out[1] and "scale_add  version 1.10" in out[2]
    assert "(x: [3, 40] float32, y: [3, 40] float32 -> [3, 40] float32)" in out[1]
    assert cli_main(["ops", "list"]) == 2  # no library at all
    assert "no operator library" in capsys.readouterr().err
    (lib / "registry.json").write_text("[]")
    assert cli_main(["ops", "list", "--library", str(lib)]) == 1
    assert "not an operator registry" in capsys.readouterr().err
