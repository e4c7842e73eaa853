"""Runs the lit + FileCheck regression suite (``lit_tests/``) as one pytest test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIT_TESTS = ROOT / "lit_tests"


def _bin_dirs() -> list[str]:
    """The folders holding this Python's console scripts (``lit``, ``filecheck``,
    ``pyasc-opt``): the venv's ``bin``, or pyenv's version ``bin`` (not its shims)."""
    dirs: list[str] = []
    for d in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        if d and d not in dirs and os.path.isdir(d):
            dirs.append(d)
    return dirs


def test_lit_suite() -> None:
    bins = _bin_dirs()
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([*bins, env.get("PATH", "")])
    lit = shutil.which("lit", path=env["PATH"])
    cmd = [lit] if lit else [sys.executable, "-c", "from lit.main import main; main()"]
    proc = subprocess.run([*cmd, "-q", str(LIT_TESTS)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"lit failed (exit {proc.returncode}):\n{output}"
