"""Seeing the lowering: the IR after every pass on stderr, and a folder per compile.

- ``PYASC_LOG_LEVEL=3`` (or the seed's ``PA_LOG_LEVEL=3``; ``trace`` is 3 as well): every
  lowering prints its IR after the frontend and after each pass of the pipeline to stderr,
  each dump headed ``// -----// IR Dump After <pass> (<operator>) //----- //`` (the header of
  ``mlir-opt --mlir-print-ir-after-all``).
- ``PYASC_DUMP_DIR=dir``: every compile that lowers (not a cache hit) writes a new subfolder
  ``dir/<NNNN>-<operator>-<key[:8]>/`` holding ``00-frontend.mlir``, ``01-<pass>.mlir``, ... (the
  IR after each pass, in pipeline order) and the emitted ``kernel.cpp``, ``host.cpp`` and
  ``cpu_entry.cpp``. ``NNNN`` counts up; the folder is created atomically (``os.mkdir``), so
  concurrent compiles get distinct folders.

Both are off when the variables are unset; then :func:`observer` returns ``None`` and the
lowering does no extra work.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from pyasc_mlir.errors import PyAscUsageError, caller_loc, log_level

IR_LOG_LEVEL = 3
"""The ``PYASC_LOG_LEVEL`` from which every pass's IR is printed."""

DUMP_DIR_VAR = "PYASC_DUMP_DIR"
"""The variable naming the folder that keeps every compile's stages and sources."""

FRONTEND = "frontend"
"""The name of the first dump (the tensor-level IR the frontend built)."""


class Observer:
    """Sees one lowering: :meth:`after` once per step (the frontend, then each pass), then
    :meth:`sources` with the emitted files. ``log``: print each step's IR to stderr; ``folder``:
    the compile's dump folder (``None``: no dump)."""

    def __init__(self, name: str, log: bool, folder: Path | None):
        self.name = name
        self.log = log
        self.folder = folder
        self.steps = 0

    def after(self, step: str, module: ModuleOp) -> None:
        """The IR ``module`` after ``step`` (a pass name or :data:`FRONTEND`)."""
        text = str(module)
        if self.log:
            sys.stderr.write(
                f"// -----// IR Dump After {step} ({self.name}) //----- //\n{text}\n\n"
            )
            sys.stderr.flush()
        if self.folder is not None:
            (self.folder / f"{self.steps:02d}-{step}.mlir").write_text(text + "\n")
        self.steps += 1

    def sources(self, files: dict[str, str]) -> None:
        """The emitted sources (file name -> text), kept in the dump folder."""
        if self.folder is not None:
            for fname, text in files.items():
                (self.folder / fname).write_text(text)


def _dump_folder(name: str, key: str) -> Path | None:
    """A new subfolder of ``PYASC_DUMP_DIR`` for one compile (``None`` when it is unset).

    Raises:
        PyAscUsageError: the folder cannot be created or written (located at the caller)."""
    root_text = os.environ.get(DUMP_DIR_VAR, "")
    if not root_text:
        return None
    root = Path(root_text)
    tag = f"{name}-{key[:8]}" if key else name
    try:
        root.mkdir(parents=True, exist_ok=True)
        n = sum(1 for _ in root.iterdir())
        while True:
            folder = root / f"{n:04d}-{tag}"
            try:
                folder.mkdir()
                return folder
            except FileExistsError:
                n += 1
    except OSError as exc:
        raise PyAscUsageError(
            f"{DUMP_DIR_VAR}={root_text}: cannot create a dump folder there: {exc.strerror or exc}",
            caller_loc(),
            f"set {DUMP_DIR_VAR} to a writable folder, or unset it",
        ) from None


def observer(name: str, key: str = "") -> Observer | None:
    """The observer of one lowering of operator ``name`` (cache key ``key``, for the dump
    folder's name), or ``None`` when neither the IR log nor the dump is on.

    Raises:
        PyAscUsageError: ``PYASC_DUMP_DIR`` cannot be created or written."""
    log = log_level() >= IR_LOG_LEVEL
    folder = _dump_folder(name, key)
    if not log and folder is None:
        return None
    return Observer(name, log, folder)
