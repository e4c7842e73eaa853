"""Compile-time iteration in the frontend's AST visitor: ``for``/``while`` statements,
``break``/``continue`` and comprehensions (list, set, dict, generator). Loops and comprehensions
run at compile time over compile-time values (``range(n)``, tuples, lists) and are unrolled;
iterating over a tensor, or a condition that depends on a tensor's value, is a located
:class:`~pyasc_mlir.errors.PyAscCompileError`.

:class:`LoopEvaluator` is a part of
:class:`~pyasc_mlir.frontend.code_generator.CodeGenerator`, which supplies ``eval``,
``assign``, ``exec_body`` and ``truth``.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pyasc_mlir.frontend.context import Component
from pyasc_mlir.frontend.hints import ITER_HINT
from pyasc_mlir.frontend.values import LoopBreak, LoopContinue, SymbolicTensor, contains_tensor

__all__ = ["LoopEvaluator"]


class LoopEvaluator(Component):
    """``stmt_For``, ``stmt_While``, ``stmt_Break``, ``stmt_Continue`` and the comprehension
    ``expr_<Kind>`` methods of the AST visitor."""

    if TYPE_CHECKING:  # defined by CodeGenerator

        def eval(self, node: ast.expr) -> Any: ...

        def assign(self, target: ast.expr, value: Any) -> None: ...

        def exec_body(self, stmts: Sequence[ast.stmt]) -> None: ...

        def truth(self, value: Any, node: ast.AST) -> bool: ...

    def stmt_While(self, s: ast.While) -> None:
        if contains_tensor(self.eval(s.test)):
            self.runtime_error("this 'while' condition", s.test)
        self.error(
            "'while' loops are not supported in a compiled operator",
            s,
            "use 'for i in range(n)' with a compile-time n (it is unrolled)",
        )

    def stmt_For(self, s: ast.For) -> None:
        iterable = self.eval(s.iter)
        if isinstance(iterable, SymbolicTensor):
            self.error(
                "iterating over a tensor is not supported",
                s.iter,
                "ops work on whole tensors; 'for' loops run at compile time over "
                "compile-time values such as range(n)",
            )
        try:
            items = list(iterable)
        except Exception as exc:
            self.error(f"cannot iterate over {type(iterable).__name__}: {exc}", s.iter, ITER_HINT)
        for item in items:
            self.assign(s.target, item)
            try:
                self.exec_body(s.body)
            except LoopBreak:
                return
            except LoopContinue:
                continue
        self.exec_body(s.orelse)

    def stmt_Break(self, s: ast.Break) -> None:
        raise LoopBreak

    def stmt_Continue(self, s: ast.Continue) -> None:
        raise LoopContinue

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> list[Any]:
        assert self.ctx.frame is not None
        saved = self.ctx.frame.locals
        self.ctx.frame.locals = dict(saved)
        out: list[Any] = []

        def run(i: int) -> None:
            if i == len(node.generators):
                if isinstance(node, ast.DictComp):
                    out.append((self.eval(node.key), self.eval(node.value)))
                else:
                    out.append(self.eval(node.elt))
                return
            gen = node.generators[i]
            iterable = self.eval(gen.iter)
            if isinstance(iterable, SymbolicTensor):
                self.error(
                    "iterating over a tensor is not supported",
                    gen.iter,
                    "ops work on whole tensors; comprehensions run at compile time over "
                    "compile-time values such as range(n)",
                )
            try:
                items = list(iterable)
            except Exception as exc:
                self.error(
                    f"cannot iterate over {type(iterable).__name__}: {exc}", gen.iter, ITER_HINT
                )
            for item in items:
                self.assign(gen.target, item)
                ok = True
                for cond in gen.ifs:
                    c = self.eval(cond)
                    if contains_tensor(c):
                        self.runtime_error("this comprehension condition", cond)
                    if not self.truth(c, cond):
                        ok = False
                        break
                if ok:
                    run(i + 1)

        try:
            run(0)
        finally:
            self.ctx.frame.locals = saved
        return out

    def expr_ListComp(self, node: ast.ListComp) -> Any:
        return self._comprehension(node)

    def expr_GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        return self._comprehension(node)

    def expr_SetComp(self, node: ast.SetComp) -> Any:
        items = self._comprehension(node)
        if contains_tensor(items):
            self.error("a set cannot hold tensors", node, "use a tuple or a list of tensors")
        return set(items)

    def expr_DictComp(self, node: ast.DictComp) -> Any:
        return dict(self._comprehension(node))
