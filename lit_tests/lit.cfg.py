# ruff: noqa: F821  (``config`` and ``lit_config`` are injected by lit)
"""lit configuration of the pyasc-mlir regression suite.

One folder per dialect, pass and target; tests are ``.mlir`` files run through ``pyasc-opt`` and
``.py`` files run with ``%python``, both checked with ``filecheck`` (the PyPI port of LLVM's
FileCheck). Run with ``lit -v lit_tests`` (or ``pytest tests/test_lit.py``, one test per
file); one pass's or dialect's folder with ``lit -v lit_tests/passes/asc-tile`` (or
``pytest tests/test_lit.py -k asc-tile``); one file with ``lit -v lit_tests/<path>``.
"""

import os
import shutil
import sys
import sysconfig

import lit.formats

config.name = "pyasc-mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "lit.local.cfg", "Inputs", "Output"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = config.test_source_root

# The tools live next to the Python that runs lit (a venv's or pyenv's bin folder); put that
# folder first on PATH so RUN lines call the scripts directly, not through shims.
bin_dirs = []
for d in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
    if d and d not in bin_dirs and os.path.isdir(d):
        bin_dirs.append(d)
path = os.pathsep.join([*bin_dirs, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
for var in ("HOME", "TMPDIR", "LANG", "LC_ALL"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
config.environment.pop("PYASC_LOG_LEVEL", None)

filecheck = shutil.which("filecheck", path=path)
if filecheck is None:
    lit_config.fatal("filecheck not found: pip install filecheck (the [dev] extras)")
pyasc_opt = shutil.which("pyasc-opt", path=path)
if pyasc_opt is None:
    lit_config.fatal("pyasc-opt not found: pip install -e '.[dev]'")

# ``filecheck`` as a word (not inside a path) -> the resolved binary.
config.substitutions.append((r"(?<![\w/.-])filecheck\b", filecheck))
config.substitutions.append(("%python", sys.executable))
# Round trips: print, parse back the printed text, and the generic form.
config.substitutions.append(("%roundtrip", f"{pyasc_opt} %s | {pyasc_opt}"))
config.substitutions.append(
    ("%generic-roundtrip", f"{pyasc_opt} %s --print-op-generic | {pyasc_opt}")
)
