"""Errors a user of pyasc-mlir can act on.

Every user error names ``file:line:col``, shows the source line with a caret under the column,
says what is wrong and what to do. Internal stacks are hidden unless ``PYASC_LOG_LEVEL`` >= 2.
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ParamSpec, TypeVar


@dataclass(frozen=True)
class SourceLoc:
    """A position in user source: 1-based ``line``, 0-based ``col`` (as Python's ``ast``)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"

    @staticmethod
    def parse(text: str) -> SourceLoc | None:
        """Read back ``file:line:col`` (as stored in the ``asc.loc`` attribute)."""
        parts = text.rsplit(":", 2)
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
            return None
        return SourceLoc(parts[0], int(parts[1]), int(parts[2]) - 1)


class PyAscError(Exception):
    """Base class of every error pyasc-mlir reports to its users.

    Args:
        message: what is wrong.
        loc: where (optional: some errors concern a whole kernel).
        hint: what to do about it.
    """

    def __init__(self, message: str = "", loc: SourceLoc | None = None, hint: str | None = None):
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self.format())

    def format(self) -> str:
        """``file:line:col: error: message``, the source line, a caret under the column and
        ``hint: ...`` (the parts that are known)."""
        lines = []
        if self.loc is not None:
            lines.append(f"{self.loc}: error: {self.message}")
            src = linecache.getline(self.loc.file, self.loc.line).rstrip("\n")
            if src:
                lines.append(f"    {src}")
                lines.append("    " + " " * self.loc.col + "^")
        elif self.hint is None and not isinstance(self, PyAscCompileError):
            return self.message
        else:
            lines.append(f"error: {self.message}")
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


class PyAscCompileError(PyAscError):
    """A problem in the user's operator, reported at a source location (``loc``, the line of
    the operator's source that causes it) with a ``hint``."""


class CacheWarning(UserWarning):
    """An on-disk cache entry was unusable (truncated, corrupt, or its library is missing or
    does not load); it is rebuilt."""


class PyAscPerformanceWarning(UserWarning):
    """The operator compiles and runs correctly, but a part of it takes a slow path (a loop
    nest of the kernel language that runs as scalar loops on one core); the message is
    located and says why and what to write instead."""


class PyAscUsageError(PyAscError, ValueError):
    """Wrong arguments at call time (count, shapes, dtypes versus the compiled signature).

    Raised at the public API, ``loc`` is the caller's line (see :func:`caller_loc`)."""


_LEVELS = {"error": 0, "warning": 0, "info": 1, "debug": 2, "trace": 3}


LOG_LEVEL_VARS = ("PYASC_LOG_LEVEL", "PA_LOG_LEVEL")
"""The log-level variables: ours and the seed's spelling (the higher level wins)."""


def log_level() -> int:
    """``PYASC_LOG_LEVEL`` (or ``PA_LOG_LEVEL``; the higher wins) as an int (``0`` default;
    ``debug`` = 2, ``trace`` = 3). At 2 and above, errors keep pyasc-mlir's internal stack (for
    bug reports); at 3 every lowering prints its IR after each pass
    (:mod:`pyasc_mlir.lowering_log`)."""
    level = 0
    for var in LOG_LEVEL_VARS:
        text = os.environ.get(var, "").strip().lower()
        try:
            level = max(level, int(text) if text else 0)
        except ValueError:
            level = max(level, _LEVELS.get(text, 0))
    return level


@functools.cache
def _internal_roots() -> tuple[str, ...]:
    """Folders holding pyasc-mlir's own code (the package and its mapped subpackages)."""
    import importlib

    roots = {Path(__file__).resolve().parent}
    for name in ("pyasc_mlir.dialects", "pyasc_mlir.passes", "pyasc_mlir.frontend"):
        mod_file = getattr(importlib.import_module(name), "__file__", None)
        if mod_file:
            roots.add(Path(mod_file).resolve().parent)
    return tuple(str(r) + os.sep for r in roots)


def is_internal_file(filename: str) -> bool:
    """Whether ``filename`` is part of pyasc-mlir itself (not user code)."""
    try:
        path = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return path.startswith(_internal_roots())


def caller_loc(frame: types.FrameType | None = None) -> SourceLoc | None:
    """The innermost stack position outside pyasc-mlir: where the user called the API (line and
    the column of the call expression)."""
    f: types.FrameType | None = frame if frame is not None else sys._getframe(1)
    torch = sys.modules.get("torch")  # torch.library dispatching to a registered custom_op
    torch_file = getattr(torch, "__file__", None)
    torch_root = str(Path(torch_file).parent) if torch_file else None
    while f is not None and (
        is_internal_file(f.f_code.co_filename)
        or f.f_code.co_filename == functools.__file__
        or (torch_root is not None and f.f_code.co_filename.startswith(torch_root))
    ):
        f = f.f_back
    if f is None:
        return None
    col = 0
    try:
        positions = list(f.f_code.co_positions())
        pos = positions[f.f_lasti // 2] if f.f_lasti >= 0 else None
        if pos is not None and pos[2] is not None:
            col = pos[2]
    except (AttributeError, IndexError):
        pass
    return SourceLoc(f.f_code.co_filename, f.f_lineno, col)


P = ParamSpec("P")
R = TypeVar("R")


def user_facing(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorate a public entry point: a :class:`PyAscError` leaves it without pyasc-mlir's
    internal stack (and without chained internal exceptions), so the user sees their own frames
    and the located message. ``PYASC_LOG_LEVEL`` >= 2 keeps the full stack."""

    @functools.wraps(fn)
    def entry(*args: P.args, **kwargs: P.kwargs) -> R:
        __tracebackhide__ = True  # noqa: F841  (pytest)
        try:
            return fn(*args, **kwargs)
        except PyAscError as exc:
            if log_level() >= 2:
                raise
            raise exc.with_traceback(None) from None  # the user-facing error, no internals

    return entry


class PyAscDtypeError(PyAscUsageError, TypeError):
    """An unsupported dtype given to the Python API (e.g. ``TensorDesc(shape, "int32")``)."""
