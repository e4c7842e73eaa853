"""``import`` statements in the frontend's AST visitor: ``import m``, ``import m.n as x``
and ``from m import name`` run at compile time, binding the modules or their names as
compile-time values in the operator's frame; a module that cannot be imported, or ``from m
import *``, is a located :class:`~pyasc_mlir.errors.PyAscCompileError`.

:class:`ImportStatements` is a part of
:class:`~pyasc_mlir.frontend.code_generator.CodeGenerator`.
"""

from __future__ import annotations

import ast
import importlib
from typing import Any

from pyasc_mlir.frontend.context import Component

__all__ = ["ImportStatements"]


class ImportStatements(Component):
    """``stmt_Import`` and ``stmt_ImportFrom`` of the AST visitor."""

    def stmt_Import(self, s: ast.Import) -> None:
        assert self.ctx.frame is not None
        for alias in s.names:
            mod = self._import(alias.name, 0, s)
            if alias.asname:
                for part in alias.name.split(".")[1:]:
                    mod = getattr(mod, part)
                self.ctx.frame.locals[alias.asname] = mod
            else:
                top = alias.name.split(".")[0]
                self.ctx.frame.locals[top] = self._import(top, 0, s)

    def stmt_ImportFrom(self, s: ast.ImportFrom) -> None:
        assert self.ctx.frame is not None
        mod = self._import(s.module or "", s.level, s)
        for alias in s.names:
            if alias.name == "*":
                self.error(
                    "'from ... import *' is not supported in a compiled operator",
                    s,
                    "import the names you use: from module import name",
                )
            try:
                v = getattr(mod, alias.name)
            except AttributeError:
                v = self._import(f"{mod.__name__}.{alias.name}", 0, s)
            self.ctx.frame.locals[alias.asname or alias.name] = v

    def _import(self, name: str, level: int, node: ast.AST) -> Any:
        assert self.ctx.frame is not None
        try:
            return importlib.import_module(
                "." * level + name, self.ctx.frame.globals.get("__package__")
            )
        except Exception as exc:
            self.error(
                f"cannot import {'.' * level + name}: {exc}",
                node,
                "the module must be importable when the operator compiles; import it at "
                "module level",
            )
