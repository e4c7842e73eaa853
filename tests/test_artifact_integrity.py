"""Artifacts that cannot be fed garbage (issue 10, item 3).

``load_op`` on a folder whose ``op.json`` was edited (input shape, dtype, blockDim, units per
core, output shape, one digit of a tiling value), whose library is truncated or was swapped
for another operator's, or whose IR was edited: a ``PyAscUsageError`` naming the file and what
differs (hint: compile again), never an over-read, a wrong-shaped result, NaN or a crash. The
same edits of a *cached* entry: a ``CacheWarning`` and a rebuild. The library itself knows what
it was compiled for (``pyasc_signature()``) and refuses a launch with another block count,
tiling or argument count.

Folders are compiled with ``PYASC_CACHE_DISABLE=1`` so that each holds its own library
(``lib-<hash>.so``) and damaging it touches nothing shared.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pyasc_mlir as pa
from pyasc_mlir import cache, driver, integrity
from pyasc_mlir.errors import CacheWarning
from pyasc_mlir.runtime import cpu

SHAPE = (33, 40)
F32 = np.float32


def scaled_exp(a, b):
    return pa.exp(a) * 0.5 + b


def plus_seven(a):
    return a + 7.0


def dyn_exp(a):
    return pa.exp(a)


def ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (np.exp(a.astype(np.float64)) * 0.5 + b).astype(F32)


RNG = np.random.default_rng(10)
A, B = (RNG.uniform(-2, 2, SHAPE).astype(F32) for _ in range(2))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Folders compiled once per module: the static operator, another one and a dynamic one."""
    root = tmp_path_factory.mktemp("integrity")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYASC_CACHE_DISABLE", "1")
        pa.compile(scaled_exp, [pa.TensorDesc(SHAPE, "float32")] * 2, output_dir=root / "f")
        pa.compile(plus_seven, [pa.TensorDesc(SHAPE, "float32")], output_dir=root / "g")
        pa.compile(dyn_exp, [pa.TensorDesc((None, 40), "float32")], output_dir=root / "d")
    return {"f": root / "f", "g": root / "g", "d": root / "d"}


def copy_of(src: Path, dst: Path) -> Path:
    """A copy of a compiled folder: relocatable, its library comes along (``op.json`` names it
    relative to the folder), so only the edit a test makes differs."""
    shutil.copytree(src, dst)
    assert not Path(json.loads((dst / "op.json").read_text())["library"]).is_absolute()
    return dst


def edited(folder: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    info = json.loads((folder / "op.json").read_text())
    change(info)
    (folder / "op.json").write_text(json.dumps(info, indent=2))
    return folder


def refused(folder: Path, *words: str) -> str:
    with pytest.raises(pa.PyAscUsageError) as err:
        pa.load_op(folder)
    text = str(err.value)
    for w in words:
        assert w in text, (w, text)
    assert "compile" in text  # the hint
    return text


def set_tiling(info: dict[str, Any], field: str, value: int) -> None:
    """A careful edit: the field in ``tiling`` and in every launch, and ``block_dim``."""
    info["tiling"][field] = value
    for la in info["launches"]:
        la["tiling"][field] = value
    if field == "block_dim":
        info["block_dim"] = value
        for la in info["launches"]:
            la["block_dim"] = value


EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "input shape": (lambda i: i["inputs"][0].update(shape=[33, 41]), "inputs"),
    "input dtype": (lambda i: i["inputs"][1].update(dtype="float16"), "inputs"),
    "block_dim": (lambda i: set_tiling(i, "block_dim", 12), "block_dim"),
    "units per core": (lambda i: set_tiling(i, "units_per_core", 2), "units_per_core"),
    "output shape": (lambda i: i["outputs"][0].update(shape=[33, 20]), "outputs"),
    "one tiling digit": (lambda i: set_tiling(i, "l", 1820), "tiling"),
    "launch result": (lambda i: i["launches"][0]["results"][0].update(shape=[3, 40]), "launches"),
}


@pytest.mark.parametrize("what", list(EDITS))
def test_edited_op_json_is_refused_by_load_op(
    built: dict[str, Path], tmp_path: Path, what: str
) -> None:
    folder = copy_of(built["f"], tmp_path / "op")
    np.testing.assert_allclose(
        pa.load_op(folder)(A, B), ref(A, B), rtol=2e-6, atol=1e-6
    )  # intact: runs
    change, field = EDITS[what]
    shutil.rmtree(folder)
    folder = edited(copy_of(built["f"], tmp_path / "op"), change)
    text = refused(folder, "op.json", field)
    assert "differs" in text or "compiled for" in text


@pytest.mark.parametrize("what", list(EDITS))
def test_edit_with_a_recomputed_checksum_is_refused_by_the_library(
    built: dict[str, Path], tmp_path: Path, what: str
) -> None:
    """Someone who also re-seals ``op.json``: the library's own signature still refuses it."""
    folder = copy_of(built["f"], tmp_path / "op")
    change, field = EDITS[what]

    def reseal(info: dict[str, Any]) -> None:
        change(info)
        integrity.seal(info, folder)

    refused(edited(folder, reseal), "library", field)


def test_op_json_without_checksum_is_refused(built: dict[str, Path], tmp_path: Path) -> None:
    folder = edited(copy_of(built["f"], tmp_path / "op"), lambda i: i.pop("checksum"))
    refused(folder, "op.json", "checksum")


def test_truncated_library_is_refused(built: dict[str, Path], tmp_path: Path) -> None:
    folder = copy_of(built["f"], tmp_path / "op")
    lib = folder / json.loads((folder / "op.json").read_text())["library"]
    data = lib.read_bytes()
    lib.write_bytes(data[: len(data) // 2])
    refused(folder, lib.name, "truncated")


def test_swapped_library_from_another_op_is_refused(built: dict[str, Path], tmp_path: Path) -> None:
    folder = copy_of(built["f"], tmp_path / "op")
    other = built["g"] / json.loads((built["g"] / "op.json").read_text())["library"]
    lib = folder / json.loads((folder / "op.json").read_text())["library"]
    shutil.copy(other, lib)
    refused(folder, lib.name, "plus_seven")
    # ... also when op.json's record of the library digest is updated to match it
    edited(
        folder,
        lambda i: (i.update(library_sha256=cache.file_sha256(lib)), integrity.seal(i, folder)),
    )
    refused(folder, lib.name, "plus_seven")


def test_edited_ir_is_refused_when_interpreted(built: dict[str, Path], tmp_path: Path) -> None:
    folder = copy_of(built["f"], tmp_path / "op")
    ir = folder / "tensor.mlir"
    ir.write_text(ir.read_text().replace("5.000000e-01", "5.000000e+00"))
    loaded = pa.load_op(folder)
    np.testing.assert_allclose(
        loaded(A, B), ref(A, B), rtol=2e-6, atol=1e-6
    )  # the CPU build is intact
    with pytest.raises(pa.PyAscUsageError, match="tensor.mlir"):
        loaded.run_stage("tensor", A, B)


def test_dynamic_op_takes_new_shapes_but_not_edited_static_dims(
    built: dict[str, Path], tmp_path: Path
) -> None:
    folder = copy_of(built["d"], tmp_path / "op")
    loaded = pa.load_op(folder)
    for rows in (1, 7, 513):
        x = RNG.uniform(-2, 2, (rows, 40)).astype(F32)
        np.testing.assert_allclose(loaded(x), np.exp(x), rtol=2e-6)
    shutil.rmtree(folder)
    folder = copy_of(built["d"], tmp_path / "op")

    def static_dim(info: dict[str, Any]) -> None:
        info["inputs"][0]["shape"] = [None, 41]
        info["outputs"][0]["shape"] = [None, 41]
        integrity.seal(info, folder)

    refused(edited(folder, static_dim), "inputs")
    shutil.rmtree(folder)
    folder = copy_of(built["d"], tmp_path / "op")

    def recipe(info: dict[str, Any]) -> None:
        info["dynamic"]["spec"]["tile"] += 32
        integrity.seal(info, folder)

    refused(edited(folder, recipe), "dynamic")


def test_the_library_refuses_a_launch_it_was_not_compiled_for(built: dict[str, Path]) -> None:
    info = json.loads((built["f"] / "op.json").read_text())
    kernel = cpu.CpuKernel(built["f"] / info["library"])
    sig = kernel.signature()
    assert sig is not None and json.loads(sig)["inputs"] == info["inputs"]
    tiling = np.array(list(info["tiling"].values()), dtype=np.int64)
    out = np.empty(SHAPE, F32)
    kernel.run(info["block_dim"], [A, B, out], tiling.tobytes())
    np.testing.assert_allclose(out, ref(A, B), rtol=2e-6, atol=1e-6)
    with pytest.raises(cpu.KernelError, match="block"):
        kernel.run(info["block_dim"] + 1, [A, B, out], tiling.tobytes())
    bad = tiling.copy()
    bad[list(info["tiling"]).index("units_per_core")] += 1
    with pytest.raises(cpu.KernelError, match="tiling"):
        kernel.run(info["block_dim"], [A, B, out], bad.tobytes())
    with pytest.raises(cpu.KernelError, match="arguments"):
        kernel.run(info["block_dim"], [A, out], tiling.tobytes())


# ------------------------------------------------------------------------------ the cache


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private cache folder sharing only the precompiled header with the default cache."""
    shared = cpu.default_cache_dir() / "cpu" / "pch"
    shared.mkdir(parents=True, exist_ok=True)
    (tmp_path / "cache" / "cpu").mkdir(parents=True)
    (tmp_path / "cache" / "cpu" / "pch").symlink_to(shared, target_is_directory=True)
    monkeypatch.setenv("PYASC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PYASC_CACHE_DISABLE", raising=False)
    driver.clear_memory_cache()
    yield tmp_path / "cache"
    driver.clear_memory_cache()


def test_one_digit_edit_of_a_cached_op_json_is_rebuilt_with_a_warning(private_cache: Path) -> None:
    descs = [pa.TensorDesc(SHAPE, "float32")] * 2
    op = pa.compile(scaled_exp, descs)
    path = op.directory / "op.json"
    text = path.read_text()
    assert '"l": 1320' in text
    path.write_text(text.replace('"l": 1320', '"l": 1820'))
    driver.clear_memory_cache()
    with pytest.warns(CacheWarning, match="checksum"):
        op = pa.compile(scaled_exp, descs)
    assert not op.info["cache_hit"]
    got = op(A, B)
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, ref(A, B), rtol=2e-6, atol=1e-6)
    driver.clear_memory_cache()
    assert pa.compile(scaled_exp, descs).info["cache_hit"]  # repaired
