"""The shape of the code (issue 15): module sizes and module boundaries, checked on every run.

* No shipped or tooling module (everything outside ``tests/`` and ``lit_tests/``) is longer
  than 600 lines; ``pyasc_mlir/driver.py`` stays a facade of at most 300.
* No module imports another module's private (``_name``) definitions: what is shared across
  modules has a public name. ``from m import _x`` and ``import m`` followed by ``m._x`` at module
  level are both caught for first-party modules (``pyasc_mlir``, ``benchmarks``, ``examples``).
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 600
DRIVER_MAX_LINES = 300
FIRST_PARTY = ("pyasc_mlir", "benchmarks", "examples")


def _sources() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / p for p in out if not p.startswith(("tests/", "lit_tests/"))]


def test_no_module_is_longer_than_600_lines() -> None:
    long = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for p in _sources()
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    ]
    assert not long, f"modules over {MAX_LINES} lines (split them by concern):\n" + "\n".join(long)


def test_driver_is_a_thin_facade() -> None:
    n = len((ROOT / "pyasc_mlir" / "driver.py").read_text().splitlines())
    assert n <= DRIVER_MAX_LINES, f"pyasc_mlir/driver.py has {n} lines (at most {DRIVER_MAX_LINES})"


def _first_party(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in FIRST_PARTY


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    hits: list[str] = []
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or _first_party(node.module)):
            for a in node.names:
                if _private(a.name):
                    hits.append(
                        f"{path.relative_to(ROOT)}:{node.lineno}: from "
                        f"{'.' * node.level}{node.module or ''} import {a.name}"
                    )
                else:
                    aliases.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if _first_party(a.name):
                    aliases.add(a.asname or a.name.split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            hits.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    return hits


def test_no_module_imports_a_private_name_of_another() -> None:
    hits = [h for p in _sources() for h in _private_imports(p)]
    assert not hits, (
        "private names used across modules (give the shared definition a public "
        "name):\n" + "\n".join(hits)
    )


def test_the_private_import_check_fires(tmp_path: Path) -> None:
    bad = ROOT / "tools" / "_probe_private_import.py"
    bad.write_text(
        "from pyasc_mlir.platform import _b910\nfrom pyasc_mlir import cache\nx = cache._hidden\n"
    )
    try:
        hits = _private_imports(bad)
    finally:
        bad.unlink()
    assert len(hits) == 2 and "_b910" in hits[0] and "cache._hidden" in hits[1]
