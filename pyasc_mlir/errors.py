"""Errors a user of pyasc-mlir can act on.

Every user error names ``file:line:col``, shows the source line with a caret under the column,
says what is wrong and what to do. Internal stacks are hidden unless ``PYASC_LOG_LEVEL`` >= 2.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass


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
    """Base class of every error pyasc-mlir reports to its users."""


class PyAscCompileError(PyAscError):
    """A problem in the user's operator, reported at a source location.

    Args:
        message: what is wrong.
        loc: where (optional: some errors concern a whole kernel).
        hint: what to do about it.
    """

    def __init__(self, message: str, loc: SourceLoc | None = None, hint: str | None = None):
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self.format())

    def format(self) -> str:
        lines = []
        if self.loc is not None:
            lines.append(f"{self.loc}: error: {self.message}")
            src = linecache.getline(self.loc.file, self.loc.line).rstrip("\n")
            if src:
                lines.append(f"    {src}")
                lines.append("    " + " " * self.loc.col + "^")
        else:
            lines.append(f"error: {self.message}")
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


class PyAscUsageError(PyAscError, ValueError):
    """Wrong arguments at call time (count, shapes, dtypes versus the compiled signature)."""
