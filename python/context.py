"""The state one :func:`~pyasc_mlir.frontend.ast_frontend.build_module` call shares between
the AST visitor and the semantics layer: the block being built, the frame being evaluated
(source locations come from it), and where the operator first reads a tensor shape.
"""

from __future__ import annotations

import ast
from typing import NoReturn

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, Operation

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError, SourceLoc
from pyasc_mlir.frontend.hints import WHERE_HINT
from pyasc_mlir.frontend.values import Frame

__all__ = ["Component", "FrontendContext"]


class FrontendContext:
    """Where ops go and where errors point, for one compilation."""

    def __init__(self) -> None:
        self.block = Block()
        self.frame: Frame | None = None
        self.shape_read: str | None = None
        """Where the operator first reads a tensor's shape (``.shape``, ``len``,
        ``match_shape``): such an operator must not be compiled with dynamic dims."""

    def note_shape_read(self, node: ast.AST) -> None:
        """Record ``node`` as the first shape read (later reads are ignored)."""
        if self.shape_read is None:
            self.shape_read = str(self.loc(node))

    def loc(self, node: ast.AST) -> SourceLoc:
        """The file position of ``node`` in the function being evaluated."""
        f = self.frame
        assert f is not None
        return SourceLoc(
            f.file, getattr(node, "lineno", 1) + f.line_delta, getattr(node, "col_offset", 0)
        )

    def error(self, message: str, node: ast.AST, hint: str | None = None) -> NoReturn:
        """Raise :class:`PyAscCompileError` located at ``node``."""
        raise PyAscCompileError(message, self.loc(node), hint)

    def emit(self, op: Operation, node: ast.AST) -> Operation:
        """Append ``op`` to the block, with ``asc.loc`` set to the position of ``node``."""
        op.attributes[asc.LOC_ATTR] = StringAttr(str(self.loc(node)))
        self.block.add_op(op)
        return op


class Component:
    """A part of the frontend working on a shared :class:`FrontendContext`."""

    def __init__(self, ctx: FrontendContext) -> None:
        self.ctx = ctx

    def loc(self, node: ast.AST) -> SourceLoc:
        """See :meth:`FrontendContext.loc`."""
        return self.ctx.loc(node)

    def error(self, message: str, node: ast.AST, hint: str | None = None) -> NoReturn:
        """See :meth:`FrontendContext.error`."""
        self.ctx.error(message, node, hint)

    def runtime_error(self, what: str, node: ast.AST) -> NoReturn:
        """Raise the error for Python control flow on a runtime tensor value (``what``)."""
        self.error(f"{what} depends on a runtime tensor value", node, WHERE_HINT)

    def emit(self, op: Operation, node: ast.AST) -> Operation:
        """See :meth:`FrontendContext.emit`."""
        return self.ctx.emit(op, node)

    def note_shape_read(self, node: ast.AST) -> None:
        """See :meth:`FrontendContext.note_shape_read`."""
        self.ctx.note_shape_read(node)
