"""The lit + FileCheck regression suite (``lit_tests/``), one pytest test per lit file.

lit runs once per session, on the lit files selected in that session (all of them, or those
``-k`` picks: ``pytest tests/test_lit.py -k asc-tile`` runs the asc-tile pass's files), and
writes its results as JSON (``lit -o``). Each test asserts that its file passed (or failed as
``XFAIL`` expects) and shows lit's output for it otherwise. A lit file is any file under
``lit_tests/`` with a ``RUN:`` line; one that lit did not run (``lit.cfg.py`` does not pick it
up, or lit stopped early) fails, with lit's own output. The same with plain lit:
``lit -v lit_tests/passes/asc-tile``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIT_TESTS = ROOT / "lit_tests"
SUITE = "pyasc-mlir"  # config.name in lit_tests/lit.cfg.py
PASSING = {"PASS", "XFAIL"}


def lit_files() -> list[str]:
    """The lit files (paths relative to ``lit_tests/``): every file with a ``RUN:`` line,
    outside lit's ``Output`` folders."""
    files = []
    for path in sorted(LIT_TESTS.rglob("*")):
        rel = path.relative_to(LIT_TESTS)
        if not path.is_file() or "Output" in rel.parts or path.name == "lit.cfg.py":
            continue
        if "RUN:" in path.read_text(errors="replace"):
            files.append(rel.as_posix())
    return files


def _bin_dirs() -> list[str]:
    """The folders holding this Python's console scripts (``lit``, ``filecheck``,
    ``pyasc-opt``): the venv's ``bin``, or pyenv's version ``bin`` (not its shims)."""
    dirs: list[str] = []
    for d in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        if d and d not in dirs and os.path.isdir(d):
            dirs.append(d)
    return dirs


def run_lit(files: list[str], results: Path) -> tuple[dict[str, dict], str]:
    """Run lit on ``files`` (relative to ``lit_tests/``), writing JSON results to ``results``.

    Returns each run file's result (lit's ``code`` and ``output``) by relative path, and lit's
    console output (its summary, or why it stopped)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([*_bin_dirs(), env.get("PATH", "")])
    lit = shutil.which("lit", path=env["PATH"])
    cmd = [lit] if lit else [sys.executable, "-c", "from lit.main import main; main()"]
    proc = subprocess.run(
        [*cmd, "-q", "-o", str(results), *(str(LIT_TESTS / f) for f in files)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    console = f"lit exited with {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    if not results.exists():
        return {}, console
    prefix = f"{SUITE} :: "
    by_file = {t["name"].removeprefix(prefix): t for t in json.loads(results.read_text())["tests"]}
    return by_file, console


@pytest.fixture(scope="session")
def lit_results(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, dict], str]:
    """lit's results for the lit files selected in this session, from one lit run."""
    selected = [
        item.callspec.params["lit_file"]
        for item in request.session.items
        if item.originalname == "test_lit_file" and hasattr(item, "callspec")
    ]
    return run_lit(selected, tmp_path_factory.mktemp("lit") / "results.json")


@pytest.mark.parametrize("lit_file", lit_files())
def test_lit_file(lit_file: str, lit_results: tuple[dict[str, dict], str]) -> None:
    by_file, console = lit_results
    result = by_file.get(lit_file)
    if result is None:
        pytest.fail(f"lit did not run lit_tests/{lit_file}\n{console}", pytrace=False)
    if result["code"] not in PASSING:
        pytest.fail(
            f"lit: {result['code']}: lit_tests/{lit_file}\n{result['output']}", pytrace=False
        )
