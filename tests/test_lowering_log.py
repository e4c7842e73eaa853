"""Seeing the lowering (issue 13, item 7): ``PYASC_LOG_LEVEL=3`` / ``PA_LOG_LEVEL=3`` print the
IR after the frontend and after every pass, named, in pipeline order, on stderr;
``PYASC_DUMP_DIR`` keeps a folder per compile with every step's IR and the emitted sources
(the last step equal to the ``ascendc`` stage the compile wrote)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pyasc_mlir as pa
from pyasc_mlir.passes.registry import PIPELINES
from pyasc_mlir.pipeline import PIPELINE

STEPS = ["frontend", *PIPELINES[PIPELINE]]

SCRIPT = """
import numpy as np, pyasc_mlir as pa
def shifted_exp(x):
    return pa.exp(x - 1.0)
op = pa.compile(shifted_exp, [pa.TensorDesc((7, 40), "float32")], cache=False)
x = np.linspace(-1, 1, 280, dtype=np.float32).reshape(7, 40)
np.testing.assert_allclose(op(x), np.exp(x - 1.0), rtol=1e-5)
print("ran")
"""


def run(env: dict[str, str], tmp: Path) -> subprocess.CompletedProcess[str]:
    """``SCRIPT`` in a fresh process (a file: the frontend reads the operator's source)."""
    script = tmp / "script.py"
    script.write_text(SCRIPT)
    full = {k: v for k, v in os.environ.items() if k not in ("PYASC_LOG_LEVEL", "PA_LOG_LEVEL")}
    return subprocess.run(
        [sys.executable, str(script)],
        env={**full, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )


@pytest.mark.parametrize("var", ["PYASC_LOG_LEVEL", "PA_LOG_LEVEL"])
def test_log_level_3_prints_the_ir_after_every_pass(var, tmp_path):
    out = run({var: "3"}, tmp_path)
    assert out.stdout.strip() == "ran"
    heads = re.findall(r"// -----// IR Dump After (\S+) \(shifted_exp\) //----- //", out.stderr)
    assert heads == STEPS
    chunks = re.split(r"// -----// IR Dump After .*\n", out.stderr)[1:]
    assert "asc." in chunks[0] and "ascendc." not in chunks[0]  # tensor level
    assert all(c.lstrip().startswith("builtin.module") for c in chunks)
    assert "ascendc." in chunks[-1]  # the last pass converted to ascendc


def test_lower_levels_print_no_ir(tmp_path):
    out = run({"PYASC_LOG_LEVEL": "2"}, tmp_path)
    assert "IR Dump After" not in out.stderr


def test_dump_dir_keeps_every_stage_and_the_sources_of_every_compile(tmp_path, monkeypatch):
    dump = tmp_path / "dump"
    monkeypatch.setenv("PYASC_DUMP_DIR", str(dump))

    def twice(x):
        return x * 2.0

    ops = [pa.compile(twice, [pa.TensorDesc((r, 40), "float32")], cache=False) for r in (3, 3, 5)]
    folders = sorted(dump.iterdir())
    assert [f.name[:4] for f in folders] == ["0000", "0001", "0002"]
    assert all(re.fullmatch(r"\d{4}-twice-[0-9a-f]{8}", f.name) for f in folders)
    for folder, op in zip(folders, ops, strict=True):
        names = sorted(p.name for p in folder.iterdir())
        want = [f"{i:02d}-{s}.mlir" for i, s in enumerate(STEPS)]
        assert names == sorted([*want, "cpu_entry.cpp", "host.cpp", "kernel.cpp"])
        for f in ("kernel.cpp", "host.cpp", "cpu_entry.cpp"):
            assert (folder / f).read_text() == (op.directory / f).read_text()
        last = (folder / want[-1]).read_text()
        assert last == (op.directory / "ascendc.mlir").read_text() + "\n"
        assert (folder / want[0]).read_text() == (op.directory / "tensor.mlir").read_text() + "\n"
    x = np.ones((5, 40), np.float32)
    np.testing.assert_array_equal(ops[2](x), x * 2.0)


def test_an_unwritable_dump_dir_is_a_located_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("PYASC_DUMP_DIR", str(blocker))

    def thrice(x):
        return x * 3.0

    with pytest.raises(pa.PyAscUsageError) as err:
        pa.compile(thrice, [pa.TensorDesc((3, 40), "float32")], cache=False)
    text = str(err.value)
    assert "PYASC_DUMP_DIR" in text and Path(__file__).name in text and "writable" in text
