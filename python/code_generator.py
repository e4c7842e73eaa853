"""The AST visitor of the frontend: statements, expressions, names, calls and control flow.

:class:`CodeGenerator` evaluates an operator's body *symbolically*: names are bound either to
symbolic tensors (:class:`~pyasc_mlir.frontend.values.SymbolicTensor`, one SSA value each) or
to ordinary Python values (compile-time constants). Python control flow (``if``, ``for``,
conditional expressions, ``and``/``or``) runs at compile time on compile-time values; on a
tensor it is an error that points at the line and suggests ``pyasc_mlir.where``. Calls and
operators go through :class:`~pyasc_mlir.frontend.dispatch.Dispatcher`; what tensor
operations mean is :class:`~pyasc_mlir.frontend.semantic_layout.LayoutSemantic`'s business.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, BlockArgument, Region, SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.frontend import reads
from pyasc_mlir.frontend.code_imports import ImportStatements
from pyasc_mlir.frontend.code_loops import LoopEvaluator
from pyasc_mlir.frontend.context import FrontendContext
from pyasc_mlir.frontend.dispatch import Dispatcher
from pyasc_mlir.frontend.hints import (
    MASK_HINT,
    PY_HINT,
    RAN_HINT,
    UNSUPPORTED_EXPRS,
    UNSUPPORTED_STMTS,
)
from pyasc_mlir.frontend.names import OP_NAMES
from pyasc_mlir.frontend.semantic_torch import TorchSemantic
from pyasc_mlir.frontend.signature import argument_types, bind_error, bind_operator
from pyasc_mlir.frontend.source import make_frame, parse_function
from pyasc_mlir.frontend.spellings import name_hint
from pyasc_mlir.frontend.values import (
    FunctionReturn,
    SymbolicTensor,
    contains_tensor,
)

__all__ = ["SHAPE_READ_ATTR", "CodeGenerator"]

SHAPE_READ_ATTR = "asc.shape_read"
"""On the top-level ``func.func``: where the operator first reads a tensor shape."""

_CONVERSIONS: dict[int, Callable[[object], str]] = {115: str, 114: repr, 97: ascii}
"""An f-string field's ``!s``, ``!r``, ``!a`` (``ast.FormattedValue.conversion``, a code point)."""


class CodeGenerator(ImportStatements, LoopEvaluator):
    """Symbolic evaluator and IR builder for one ``build_module`` call.

    ``stmt_<Kind>`` executes one kind of ``ast`` statement and ``expr_<Kind>`` evaluates one
    kind of expression; a kind without a method is an unsupported construct. Loops and
    comprehensions are :class:`~pyasc_mlir.frontend.code_loops.LoopEvaluator`'s, ``import``
    statements :class:`~pyasc_mlir.frontend.code_imports.ImportStatements`'.
    """

    def __init__(self) -> None:
        super().__init__(FrontendContext())
        self.sem = TorchSemantic(self.ctx)
        self.dispatch = Dispatcher(self.ctx, self.sem, self.inline)
        self.active: list[types.CodeType] = []
        """The code objects being evaluated (the operator and inlined helpers): recursion."""

    # ------------------------------------------------------------------ functions

    def build(self, fn: Any, args: Sequence[Any], name: str | None) -> tuple[ModuleOp, list[str]]:
        """The module of operator ``fn`` called with ``args`` (see ``build_module``)."""
        bound_self: list[Any] = []
        if inspect.ismethod(fn):
            bound_self = [fn.__self__]
            fn = fn.__func__
        fn = inspect.unwrap(fn)
        if not isinstance(fn, types.FunctionType):
            raise PyAscCompileError(
                f"cannot compile {fn!r}: expected a Python function",
                None,
                "write the operator as a module-level def",
            )
        reads.note_run()
        fdef, file, delta = parse_function(fn, None)
        self.ctx.frame = make_frame(fn, file, delta)
        def_loc = self.loc(fdef)
        arg_types = argument_types(fn, args, def_loc)
        self.ctx.block = Block(arg_types=arg_types)
        bound = bind_operator(fn, bound_self, args, self.ctx.block.args, def_loc)
        self.ctx.frame.locals.update(bound.arguments)
        self.active.append(fn.__code__)

        ret_node: ast.AST = fdef
        value: Any = None
        try:
            self.exec_body(fdef.body)
        except FunctionReturn as r:
            value, ret_node = r.value, r.node
        results, dtypes = self.results(fn.__name__, value, ret_node)
        self.emit(func.ReturnOp(*results), ret_node)
        self.sem.erase_dead_layout_ops()
        fop = func.FuncOp(
            name or fn.__name__, (arg_types, [r.type for r in results]), Region(self.ctx.block)
        )
        fop.attributes[asc.LOC_ATTR] = StringAttr(str(def_loc))
        if self.ctx.shape_read is not None:
            fop.attributes[SHAPE_READ_ATTR] = StringAttr(self.ctx.shape_read)
        return ModuleOp([fop]), dtypes

    def results(
        self, fn_name: str, value: Any, ret_node: ast.AST
    ) -> tuple[list[SSAValue], list[str]]:
        """The returned ``value`` (a tensor or a tuple/list of tensors, returned at
        ``ret_node``) as result values in their logical dtypes, and those dtypes."""
        if value is None:
            self.error(
                f"{fn_name}() returns no tensor", ret_node, "return a tensor or a tuple of tensors"
            )
        value_node = getattr(ret_node, "value", None) or ret_node
        if isinstance(value, tuple | list):
            items = list(value)
            elt_nodes = (
                list(value_node.elts)
                if isinstance(value_node, ast.Tuple | ast.List)
                and len(value_node.elts) == len(items)
                else [value_node] * len(items)
            )
        else:
            items, elt_nodes = [value], [value_node]
        if not items:
            self.error(
                f"{fn_name}() returns an empty tuple",
                ret_node,
                "return one tensor or a tuple of tensors",
            )
        results: list[SSAValue] = []
        dtypes: list[str] = []
        for item, n in zip(items, elt_nodes, strict=True):
            if not isinstance(item, SymbolicTensor):
                self.error(
                    f"an operator must return tensors, not {type(item).__name__} {item!r}",
                    n,
                    "compile-time values are not results; return "
                    "tensors computed from the arguments",
                )
            if item.dtype == "bool":
                self.error("a boolean mask cannot be returned", n, MASK_HINT)
            results.append(self.sem.convert(item.value, item.dtype, n))
            dtypes.append(item.dtype)
        return results, dtypes

    def inline(
        self, fn: types.FunctionType, args: list[Any], kwargs: dict[str, Any], node: ast.AST
    ) -> Any:
        """Evaluate a user helper's body with the given (possibly symbolic) arguments."""
        fn = inspect.unwrap(fn)
        if fn.__code__ in self.active:
            self.error(
                f"recursive call to {fn.__name__}() is not supported",
                node,
                "recursion cannot be unrolled at compile time; use a for loop over range(n)",
            )
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            self.error(
                bind_error(f"{fn.__name__}()", exc),
                node,
                "call the helper with the parameters its def names",
            )
        bound.apply_defaults()
        reads.note_defaults(fn)
        fdef, file, delta = parse_function(fn, self.loc(node))
        caller = self.ctx.frame
        self.ctx.frame = make_frame(fn, file, delta)
        self.ctx.frame.locals.update(bound.arguments)
        self.active.append(fn.__code__)
        try:
            self.exec_body(fdef.body)
        except FunctionReturn as r:
            return r.value
        finally:
            self.active.pop()
            self.ctx.frame = caller
        return None

    # ------------------------------------------------------------------ statements

    def exec_body(self, stmts: Sequence[ast.stmt]) -> None:
        """Execute the statements ``stmts`` in order."""
        for s in stmts:
            self.exec_stmt(s)

    def exec_stmt(self, s: ast.stmt) -> None:
        """Execute one statement (``stmt_<Kind>``; unsupported kinds are errors)."""
        kind = type(s).__name__
        method = getattr(self, "stmt_" + kind, None)
        if method is None:
            msg, hint = UNSUPPORTED_STMTS.get(
                kind, (f"'{kind}' statements are not supported in a compiled operator", None)
            )
            self.error(msg, s, hint)
        method(s)

    def stmt_Expr(self, s: ast.Expr) -> None:
        if isinstance(s.value, ast.Constant):  # docstring or bare literal
            return
        self.eval(s.value)

    def stmt_Pass(self, s: ast.Pass) -> None:
        pass

    def stmt_Assign(self, s: ast.Assign) -> None:
        value = self.eval(s.value)
        for t in s.targets:
            self.assign(t, value)

    def stmt_AnnAssign(self, s: ast.AnnAssign) -> None:
        if s.value is not None:
            self.assign(s.target, self.eval(s.value))

    def stmt_AugAssign(self, s: ast.AugAssign) -> None:
        if not isinstance(s.target, ast.Name):
            self.error(
                "augmented assignment is only supported to a plain name",
                s,
                "tensors are immutable values; assign a new name instead",
            )
        current = self.lookup(s.target.id, s.target)
        self.assign(s.target, self.dispatch.binop(s.op, current, self.eval(s.value), s))

    def stmt_Return(self, s: ast.Return) -> None:
        raise FunctionReturn(None if s.value is None else self.eval(s.value), s)

    def stmt_If(self, s: ast.If) -> None:
        test = self.eval(s.test)
        if contains_tensor(test):
            self.runtime_error("this 'if' condition", s.test)
        self.exec_body(s.body if self.truth(test, s.test) else s.orelse)

    def stmt_Assert(self, s: ast.Assert) -> None:
        test = self.eval(s.test)
        if contains_tensor(test):
            self.runtime_error("this assertion", s.test)
        if not self.truth(test, s.test):
            msg = "" if s.msg is None else f": {self.eval(s.msg)}"
            self.error(f"assertion failed{msg}", s, RAN_HINT)

    def stmt_Raise(self, s: ast.Raise) -> None:
        exc = None if s.exc is None else self.eval(s.exc)
        if isinstance(exc, type):
            exc = self.dispatch.pycall(exc, [], {}, s)
        text = (
            f"{type(exc).__name__}: {exc}"
            if isinstance(exc, BaseException)
            else "the operator raised an exception"
        )
        self.error(f"operator raised {text}", s, RAN_HINT)

    # ------------------------------------------------------------------ assignment and names

    def assign(self, target: ast.expr, value: Any) -> None:
        """Bind ``value`` to ``target``: a name, or a tuple/list pattern (one ``*`` target)."""
        assert self.ctx.frame is not None
        if isinstance(target, ast.Name):
            if (
                isinstance(value, SymbolicTensor)
                and value.value.name_hint is None
                and not isinstance(value.value, BlockArgument)
                and SSAValue.is_valid_name(target.id)
            ):
                value.value.name_hint = target.id
            self.ctx.frame.locals[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            if isinstance(value, SymbolicTensor):
                self.error(
                    "cannot unpack a tensor",
                    target,
                    "only tuples of values (e.g. a helper's results) can be unpacked",
                )
            try:
                seq = list(value)
            except TypeError:
                self.error(
                    f"cannot unpack {type(value).__name__}",
                    target,
                    "unpack a tuple or a list, e.g. n, d = x.shape",
                )
            starred = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
            n = len(target.elts)
            if starred:
                i = starred[0]
                if len(seq) < n - 1:
                    self.error(
                        f"not enough values to unpack (expected at least {n - 1}, got {len(seq)})",
                        target,
                        "use one target per value; x.shape has one value per dim",
                    )
                tail = n - i - 1
                parts = seq[:i] + [seq[i : len(seq) - tail]] + seq[len(seq) - tail :]
            else:
                if len(seq) != n:
                    self.error(
                        f"cannot unpack {len(seq)} values into {n} targets",
                        target,
                        "use one target per value; x.shape has one value per dim",
                    )
                parts = seq
            for t, v in zip(target.elts, parts, strict=True):
                self.assign(t.value if isinstance(t, ast.Starred) else t, v)
        else:
            self.error(
                "assignment to an element or attribute is not supported in a compiled operator",
                target,
                "tensors are immutable values; bind a new name",
            )

    def lookup(self, name: str, node: ast.AST) -> Any:
        """The value of ``name``: locals, closure, module globals, then builtins."""
        f = self.ctx.frame
        assert f is not None
        if name in f.locals:
            return f.locals[name]
        if name in f.closure:
            reads.note_cell(f.fn, name, f.closure[name])
            return f.closure[name]
        if name in f.globals:
            reads.note_global(f.globals, name, f.globals[name])
            return f.globals[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        self.error(
            f"name '{name}' is not defined",
            node,
            "define it at module level or pass it as an argument; an operator sees module "
            "globals, closure variables and builtins",
        )

    def truth(self, value: Any, node: ast.AST) -> bool:
        """``bool(value)`` of a compile-time value, for ``if``/``while``/``and``/``or``/``not``."""
        try:
            return bool(value)
        except Exception as exc:
            self.error(
                f"cannot take the truth value of {type(value).__name__}: {exc}",
                node,
                "if/while/and/or/not need compile-time values (ints, floats, bools, tuples)",
            )

    # ------------------------------------------------------------------ expressions

    def eval(self, node: ast.expr) -> Any:
        """The value of expression ``node`` (``expr_<Kind>``; unsupported kinds are errors)."""
        kind = type(node).__name__
        method = getattr(self, "expr_" + kind, None)
        if method is None:
            msg, hint = UNSUPPORTED_EXPRS.get(
                kind, (f"'{kind}' expressions are not supported in a compiled operator", None)
            )
            self.error(msg, node, hint)
        return method(node)

    def expr_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def expr_Name(self, node: ast.Name) -> Any:
        return self.lookup(node.id, node)

    def expr_NamedExpr(self, node: ast.NamedExpr) -> Any:
        value = self.eval(node.value)
        self.assign(node.target, value)
        return value

    def expr_Attribute(self, node: ast.Attribute) -> Any:
        obj = self.eval(node.value)
        if isinstance(obj, SymbolicTensor):
            return self.sem.tensor_attribute(obj, node)
        try:
            value = getattr(obj, node.attr)
        except Exception as exc:
            if (
                isinstance(obj, types.ModuleType)
                and obj.__name__.split(".")[0] == "pyasc_mlir"
                and isinstance(exc, AttributeError)
            ):
                self.error(
                    f"unknown function {obj.__name__}.{node.attr}",
                    node,
                    name_hint(node.attr, OP_NAMES),
                )
            self.error(f"{type(exc).__name__}: {exc}", node, PY_HINT)
        reads.note_attr(obj, node.attr, value)
        return value

    def expr_Subscript(self, node: ast.Subscript) -> Any:
        obj = self.eval(node.value)
        index = self.eval(node.slice)
        if contains_tensor(index):
            self.error(
                "a tensor cannot be used as an index",
                node.slice,
                "index with compile-time ints and slices; select by a mask with "
                "pyasc_mlir.where(mask, a, b)",
            )
        if isinstance(obj, SymbolicTensor):
            return self.sem.index(obj, index, node)
        try:
            return obj[index]
        except Exception as exc:
            self.error(f"{type(exc).__name__}: {exc}", node, PY_HINT)

    def expr_Slice(self, node: ast.Slice) -> Any:
        parts = [None if p is None else self.eval(p) for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def _elements(self, elts: Sequence[ast.expr]) -> list[Any]:
        out: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.eval(e.value)
                if isinstance(v, SymbolicTensor):
                    self.error(
                        "cannot unpack a tensor with *",
                        e,
                        "index the tensor (x[0]) or pass several tensors as a tuple or list",
                    )
                try:
                    out.extend(v)
                except TypeError:
                    self.error(
                        f"cannot unpack {type(v).__name__} with *",
                        e,
                        "* unpacks a tuple, a list or another iterable",
                    )
            else:
                out.append(self.eval(e))
        return out

    def expr_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self._elements(node.elts))

    def expr_List(self, node: ast.List) -> Any:
        return self._elements(node.elts)

    def expr_Set(self, node: ast.Set) -> Any:
        items = self._elements(node.elts)
        if contains_tensor(items):
            self.error("a set cannot hold tensors", node, "use a tuple or a list of tensors")
        return set(items)

    def expr_Dict(self, node: ast.Dict) -> Any:
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                out.update(self.eval(v))
            else:
                key = self.eval(k)
                if isinstance(key, SymbolicTensor):
                    self.error(
                        "a tensor cannot be a dict key",
                        k,
                        "use a str or int key and put the tensor in the value",
                    )
                out[key] = self.eval(v)
        return out

    def expr_JoinedStr(self, node: ast.JoinedStr) -> Any:
        parts: list[str] = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                parts.append(self.eval(v))
        return "".join(parts)

    def expr_FormattedValue(self, node: ast.FormattedValue) -> Any:
        value = self.eval(node.value)
        conv = _CONVERSIONS.get(node.conversion)
        if conv is not None:
            value = conv(value)
        spec = "" if node.format_spec is None else self.eval(node.format_spec)
        try:
            return format(value, spec)
        except Exception as exc:
            self.error(f"{type(exc).__name__}: {exc}", node, PY_HINT)

    def expr_IfExp(self, node: ast.IfExp) -> Any:
        test = self.eval(node.test)
        if contains_tensor(test):
            self.runtime_error("this conditional expression", node.test)
        return self.eval(node.body if self.truth(test, node.test) else node.orelse)

    def expr_BoolOp(self, node: ast.BoolOp) -> Any:
        word = "and" if isinstance(node.op, ast.And) else "or"
        value: Any = None
        for v in node.values:
            value = self.eval(v)
            if contains_tensor(value):
                self.runtime_error(f"'{word}'", v)
            t = self.truth(value, v)
            if (word == "and" and not t) or (word == "or" and t):
                return value
        return value

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Any:
        return self.dispatch.unaryop(node.op, self.eval(node.operand), node)

    def expr_BinOp(self, node: ast.BinOp) -> Any:
        return self.dispatch.binop(node.op, self.eval(node.left), self.eval(node.right), node)

    def expr_Compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        if len(node.ops) == 1:
            return self.dispatch.compare(node.ops[0], left, self.eval(node.comparators[0]), node)
        result: Any = True
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = self.eval(comp)
            if isinstance(left, SymbolicTensor) or isinstance(right, SymbolicTensor):
                self.error(
                    "chained comparisons on tensors are not supported",
                    node,
                    "compare once per expression, e.g. (a < x) & (x < b)",
                )
            result = self.dispatch.compare(op, left, right, node)
            if not self.truth(result, node):
                return result
            left = right
        return result

    def expr_Call(self, node: ast.Call) -> Any:
        callee = self.eval(node.func)
        args = self._elements(node.args)
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                extra = self.eval(kw.value)
                if not isinstance(extra, Mapping):
                    self.error(
                        "** needs a mapping", kw.value, "pass a dict, e.g. f(**{'axis': -1})"
                    )
                kwargs.update(extra)
            else:
                kwargs[kw.arg] = self.eval(kw.value)
        return self.dispatch.call(callee, args, kwargs, node)
