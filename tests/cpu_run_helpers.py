"""Run ``pyasc cpu-run`` in a subprocess (tests/test_cpu_run.py, tests/test_samples.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SAMPLES = Path(__file__).resolve().parent / "samples"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "ascendc"


def shared_pch_cache(root: Path) -> Path:
    """``root`` (empty, or not there yet) as a pyasc cache whose precompiled-header folder is
    the default cache's: its libraries are its own, but a build there does not precompile the
    runtime header again (~5 s of g++ per platform and flag set, once per test module before).
    A precompiled header's folder is keyed by g++'s version, the header's text and the flags,
    so sharing it changes no build."""
    from pyasc_mlir.runtime import cpu

    shared = cpu.default_cache_dir() / "cpu" / "pch"
    shared.mkdir(parents=True, exist_ok=True)
    (root / "cpu").mkdir(parents=True, exist_ok=True)
    (root / "cpu" / "pch").symlink_to(shared, target_is_directory=True)
    return root


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str
    out_dir: Path

    def output(self, name: str) -> np.ndarray:
        return np.load(self.out_dir / f"{name}.npy")


class CpuRun:
    """Calls ``pyasc cpu-run`` with a shared cache (one precompiled header for all tests) and
    a fresh working folder per call."""

    def __init__(self, cache: Path, work: Path):
        self.cache = shared_pch_cache(cache)
        self.work = work
        self.calls = 0

    def save(self, **arrays: np.ndarray) -> dict[str, str]:
        """Write each array to ``<work>/<name>.npy``; the paths by name."""
        self.work.mkdir(parents=True, exist_ok=True)
        out = {}
        for name, arr in arrays.items():
            path = self.work / f"{name}.npy"
            np.save(path, arr)
            out[name] = str(path)
        return out

    def __call__(self, kernel: Path | str, *args: str) -> Result:
        self.calls += 1
        out_dir = self.work / f"out{self.calls}"
        env = dict(os.environ, PYASC_CACHE_DIR=str(self.cache))
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pyasc_mlir.tools.cli",
                "cpu-run",
                str(kernel),
                *args,
                "--out-dir",
                str(out_dir),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.work,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr, out_dir)
