"""Reading a Python function for the frontend: its ``def`` node, file and line offset, and
the evaluation frame its body runs in."""

from __future__ import annotations

import ast
import inspect
import linecache
import types
from typing import Any

from pyasc_mlir.errors import PyAscCompileError, SourceLoc
from pyasc_mlir.frontend.values import Frame

__all__ = ["make_frame", "parse_function"]


def parse_function(
    fn: types.FunctionType, where: SourceLoc | None
) -> tuple[ast.FunctionDef, str, int]:
    """The ``def`` node of ``fn``, its file, and the delta from AST to file line numbers.

    Raises:
        PyAscCompileError: located at ``where`` (the call being inlined; ``None`` for the
            operator itself) when ``fn`` is a lambda, its source cannot be read or parsed, or
            it is not a plain ``def``.
    """
    if fn.__name__ == "<lambda>":
        raise PyAscCompileError(
            "a lambda cannot be compiled or inlined",
            where or _lambda_loc(fn),
            "define the function with def",
        )
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise PyAscCompileError(
            f"cannot read the source of {fn.__qualname__}(): {exc}",
            where,
            "operators and their helpers must be defined in a .py file",
        ) from None
    src = "".join(lines)
    prefix = 0
    if lines and lines[0][:1] in (" ", "\t"):
        # Keep the original columns: wrap the indented block instead of dedenting it.
        src, prefix = "if 1:\n" + src, 1
    try:
        tree = ast.parse(src)
    except SyntaxError as exc:
        raise PyAscCompileError(
            f"cannot parse the source of {fn.__qualname__}(): {exc}",
            where,
            "the .py file changed after it was imported, or is not valid Python; re-import it",
        ) from None
    node: ast.stmt = tree.body[0]
    if prefix:
        assert isinstance(node, ast.If)
        node = node.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise PyAscCompileError(
            f"{fn.__qualname__}() is not a plain 'def' function",
            where,
            "write the operator as a plain module-level def function (not "
            "async, a class or a callable object)",
        )
    file = fn.__code__.co_filename
    return node, file, start - 1 - prefix


def make_frame(fn: types.FunctionType, file: str, delta: int) -> Frame:
    """A fresh frame for evaluating ``fn``'s body: its globals, closure cells and no locals."""
    closure: dict[str, Any] = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
        try:
            closure[name] = cell.cell_contents
        except ValueError:  # empty cell
            pass
    return Frame(fn, file, delta, fn.__globals__, closure, {})


def _lambda_loc(fn: types.FunctionType) -> SourceLoc:
    """Where ``fn`` (a lambda) is written: its code object's file and first line, the column of
    the ``lambda`` keyword on that line (0 when not found)."""
    code = fn.__code__
    text = linecache.getline(code.co_filename, code.co_firstlineno)
    return SourceLoc(code.co_filename, code.co_firstlineno, max(text.find("lambda"), 0))
