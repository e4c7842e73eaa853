"""The AST frontend: a Python operator function -> ``asc`` tensor-level IR.

:func:`build_module` reads the function's source with :mod:`inspect`, parses it with
:mod:`ast` and evaluates it *symbolically*: names are bound either to symbolic tensors
(:class:`SymbolicTensor`, one SSA value each) or to ordinary Python values (compile-time
constants). Python control flow (``if``, ``for``, conditional expressions, ``and``/``or``) runs
at compile time on compile-time values; on a tensor it is an error that points at the line and
suggests ``pyasc_mlir.where``. Calls to the tensor functions of :mod:`pyasc_mlir.ops` become IR;
calls to user helper functions with tensor arguments are inlined (their own source is parsed);
calls whose arguments are all compile-time values are evaluated in Python.

dtype semantics ("opmath", as PyTorch's fused kernels): every tensor has a *logical* dtype
(``float16``/``float32``; comparisons give ``bool`` masks), but arithmetic is always computed
in f32 IR: an f16 value is ``asc.cast`` to f32 once (cached) before its first arithmetic use.
A result is ``float16`` when every tensor operand is ``float16`` (Python numbers do not
promote); values are rounded to their logical dtype only by an explicit
``cast(x, float16)`` and when returned.

Every op built carries ``asc.loc = "file:line:col"`` of the Python expression it came from.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import linecache
import math
import numbers
import operator
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from pyasc_mlir import ops
from pyasc_mlir.dialects import asc, opset
from pyasc_mlir.errors import PyAscCompileError, SourceLoc
from pyasc_mlir.types import TensorDesc, dtype_name, ir_type

__all__ = ["SymbolicTensor", "build_module"]

_WHERE_HINT = ("use pyasc_mlir.where(cond, a, b) to choose between values elementwise; Python "
               "`if`/`while`/`and`/`or`/`not` run at compile time, on compile-time values only")
_MASK_HINT = ("use pyasc_mlir.where(mask, a, b), or pyasc_mlir.cast(mask, pyasc_mlir.float32) "
              "for 1.0/0.0")
_PY_HINT = ("this expression runs in Python at compile time on compile-time values; fix it as "
            "ordinary Python")
_RAN_HINT = ("it ran at compile time on compile-time values; check the shapes and arguments the "
             "operator is called with")
_ITER_HINT = "iterate over range(n), or a tuple or list of compile-time values or tensors"
_CALL_HINT = "call pyasc_mlir functions, helpers defined with def, or builtins"
_RESHAPE_HINT = "give positive compile-time ints (from x.shape or constants), at most one -1"
_MATCH_HINT = "call the operator with a tensor of that shape (None accepts any size)"
_RANK_HINT = "pass tensors of one rank; reshape one first, e.g. x.reshape(1, n)"
_UNARY = tuple(r.function for r in opset.UNARY.values() if r.function is not None)
_REDUCE = ("sum", "mean", "max", "min", "var")
_LAYOUT = ("matmul", "transpose", "concat")
SHAPE_READ_ATTR = "asc.shape_read"
"""On the top-level ``func.func``: where the operator first reads a tensor shape."""
_SHAPE_HELPERS = ("match_shape", "assert_same_rank", "assert_compatible")
_BINARY = tuple(r.function for r in opset.BINARY.values() if r.function is not None)
_OP_NAMES = (*_UNARY, *_REDUCE, *_BINARY, "where", "cast", *_LAYOUT, *_SHAPE_HELPERS)
_MARKERS: dict[Callable[..., Any], str] = {getattr(ops, n): n for n in _OP_NAMES}
_METHODS = (*(m for r in opset.UNARY.values() for m in r.methods), *_REDUCE, "reshape", "astype",
            "transpose", "permute")
_STRUCTURAL = (builtins.len, builtins.enumerate, builtins.zip, builtins.list, builtins.tuple,
               builtins.reversed, builtins.isinstance)
"""Builtins that only look at the structure of a tuple or list of tensors (``len(xs)``,
``enumerate(xs)``); they run in Python at compile time."""
_SUPPORTED_FUNCS = ", ".join(_OP_NAMES)


class SymbolicTensor:
    """A tensor value during symbolic evaluation.

    ``value`` is the SSA value (element type f16, f32 or i1), ``dtype`` the logical dtype
    (``"float16"``, ``"float32"`` or ``"bool"`` for masks) and ``shape`` the static shape.
    The IR element type may differ from ``dtype``: arithmetic results are f32 in the IR even
    when their logical dtype is float16.
    """

    __slots__ = ("value", "dtype", "shape")

    def __init__(self, value: SSAValue, dtype: str, shape: Sequence[int]):
        self.value = value
        self.dtype = dtype
        self.shape = tuple(int(d) for d in shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __bool__(self) -> bool:
        raise TypeError("the truth value of a symbolic tensor is not known at compile time")

    def __repr__(self) -> str:
        return f"<tensor {list(self.shape)} {self.dtype}>"


@dataclass
class _TensorMethod:
    tensor: SymbolicTensor
    name: str


class _Return(Exception):
    def __init__(self, value: Any, node: ast.Return):
        self.value = value
        self.node = node


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


@dataclass
class _Frame:
    """One function being evaluated (the operator or an inlined helper)."""

    fn: types.FunctionType
    file: str
    line_delta: int
    globals: dict[str, Any]
    closure: dict[str, Any]
    locals: dict[str, Any]


def _contains_tensor(v: Any) -> bool:
    if isinstance(v, SymbolicTensor | _TensorMethod):
        return True
    if isinstance(v, list | tuple | set | frozenset):
        return any(_contains_tensor(x) for x in v)
    if isinstance(v, dict):
        return any(_contains_tensor(x) for x in v.values())
    return False


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real)


def _is_int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool)


def _holds_desc(v: Any) -> bool:
    """A tuple or list argument that holds tensors (a variadic tensor-tuple argument)."""
    return isinstance(v, tuple | list) and any(isinstance(x, TensorDesc) for x in v)


def _shapes(ts: Sequence[SymbolicTensor]) -> str:
    return ", ".join(str(list(t.shape)) for t in ts)


def _plain_signature(fn: Callable[..., Any]) -> inspect.Signature:
    sig = inspect.signature(fn)
    return sig.replace(parameters=[p.replace(annotation=inspect.Parameter.empty)
                                   for p in sig.parameters.values()],
                       return_annotation=inspect.Signature.empty)


def _bind_error(what: str, exc: TypeError) -> str:
    text = str(exc)
    if "positional" in text or "missing" in text:
        return f"wrong number of arguments for {what}: {text}"
    return f"invalid arguments for {what}: {text}"


def _callee_name(callee: Any) -> str:
    name = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None)
    if name is None:
        return type(callee).__name__
    mod = getattr(callee, "__module__", None)
    if mod and mod not in ("builtins", "__main__") and isinstance(mod, str):
        return f"{mod}.{name}"
    return str(name)


_PY_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
_OP_SYMBOLS: dict[type[ast.operator], str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^",
    ast.BitAnd: "&", ast.MatMult: "@",
}
_TENSOR_BINOPS = {t: r.kind for t, sym in _OP_SYMBOLS.items() for r in opset.BINARY.values()
                  if r.py_operator == sym}
_CMP_PREDICATES: dict[type[ast.cmpop], str] = {
    ast.Lt: "lt", ast.Gt: "gt", ast.LtE: "le", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_PY_CMPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.Gt: operator.gt, ast.LtE: operator.le, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_,
    ast.IsNot: operator.is_not, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_PY_UNARY: dict[str, Callable[[float], float]] = {
    k: r.py_fold for k, r in opset.UNARY.items() if r.py_fold is not None}
_UNSUPPORTED_STMTS: dict[str, tuple[str, str | None]] = {
    "Try": ("try/except is not supported in a compiled operator",
            "mistakes in an operator are compile errors; remove the try block"),
    "TryStar": ("try/except* is not supported in a compiled operator", None),
    "With": ("'with' statements are not supported in a compiled operator", None),
    "AsyncWith": ("'async with' is not supported in a compiled operator", None),
    "AsyncFor": ("'async for' is not supported in a compiled operator", None),
    "FunctionDef": ("nested function definitions are not supported in a compiled operator",
                    "define the helper at module level; helpers called with tensors are "
                    "inlined"),
    "AsyncFunctionDef": ("nested function definitions are not supported in a compiled "
                         "operator", None),
    "ClassDef": ("class definitions are not supported in a compiled operator", None),
    "Global": ("'global' declarations are not supported in a compiled operator",
               "an operator cannot change Python state; pass values as arguments"),
    "Nonlocal": ("'nonlocal' declarations are not supported in a compiled operator",
                 "an operator cannot change Python state; pass values as arguments"),
    "Delete": ("'del' is not supported in a compiled operator", None),
    "Match": ("'match' statements are not supported in a compiled operator",
              "use if/elif on compile-time values"),
}
_UNSUPPORTED_EXPRS: dict[str, tuple[str, str | None]] = {
    "Lambda": ("lambda expressions are not supported in a compiled operator",
               "define a helper function with def at module level; it is inlined"),
    "Yield": ("'yield' is not supported in a compiled operator", None),
    "YieldFrom": ("'yield from' is not supported in a compiled operator", None),
    "Await": ("'await' is not supported in a compiled operator", None),
    "Starred": ("a starred expression is only supported in calls and tuple/list displays",
                None),
}


class _Compiler:
    """Symbolic evaluator and IR builder for one :func:`build_module` call."""

    def __init__(self) -> None:
        self.block = Block()
        self.frame: _Frame | None = None
        self.active: list[types.CodeType] = []
        self._casts: dict[tuple[SSAValue, str], SSAValue] = {}
        self._bcasts: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}
        self.shape_read: str | None = None
        """Where the operator first reads a tensor's shape (``.shape``, ``len``,
        ``match_shape``): such an operator must not be compiled with dynamic dims."""

    # ------------------------------------------------------------------ locations and errors
    def note_shape_read(self, node: ast.AST) -> None:
        if self.shape_read is None:
            self.shape_read = str(self.loc(node))


    def loc(self, node: ast.AST) -> SourceLoc:
        f = self.frame
        assert f is not None
        return SourceLoc(f.file, getattr(node, "lineno", 1) + f.line_delta,
                         getattr(node, "col_offset", 0))

    def error(self, message: str, node: ast.AST, hint: str | None = None) -> NoReturn:
        raise PyAscCompileError(message, self.loc(node), hint)

    def runtime_error(self, what: str, node: ast.AST) -> NoReturn:
        self.error(f"{what} depends on a runtime tensor value", node, _WHERE_HINT)

    def emit(self, op: Operation, node: ast.AST) -> Operation:
        op.attributes[asc.LOC_ATTR] = StringAttr(str(self.loc(node)))
        self.block.add_op(op)
        return op

    # ------------------------------------------------------------------ parsing functions

    def parse_function(self, fn: types.FunctionType, use: ast.AST | None
                       ) -> tuple[ast.FunctionDef, str, int]:
        """The ``def`` node of ``fn``, its file, and the delta from AST to file line numbers."""
        where = self.loc(use) if (use is not None and self.frame is not None) else None
        if fn.__name__ == "<lambda>":
            raise PyAscCompileError("a lambda cannot be compiled or inlined",
                                    where or _lambda_loc(fn), "define the function with def")
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError) as exc:
            raise PyAscCompileError(
                f"cannot read the source of {fn.__qualname__}(): {exc}", where,
                "operators and their helpers must be defined in a .py file") from None
        src = "".join(lines)
        prefix = 0
        if lines and lines[0][:1] in (" ", "\t"):
            # Keep the original columns: wrap the indented block instead of dedenting it.
            src, prefix = "if 1:\n" + src, 1
        try:
            tree = ast.parse(src)
        except SyntaxError as exc:
            raise PyAscCompileError(f"cannot parse the source of {fn.__qualname__}(): {exc}",
                                    where,
                                    "the .py file changed after it was imported, or is not valid "
                                    "Python; re-import it") from None
        node: ast.stmt = tree.body[0]
        if prefix:
            assert isinstance(node, ast.If)
            node = node.body[0]
        if not isinstance(node, ast.FunctionDef):
            raise PyAscCompileError(f"{fn.__qualname__}() is not a plain 'def' function", where,
                                    "write the operator as a plain module-level def function (not "
                                    "async, a class or a callable object)")
        file = fn.__code__.co_filename
        return node, file, start - 1 - prefix

    def make_frame(self, fn: types.FunctionType, fdef: ast.FunctionDef, file: str,
                   delta: int) -> _Frame:
        closure: dict[str, Any] = {}
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # empty cell
                pass
        return _Frame(fn, file, delta, fn.__globals__, closure, {})

    # ------------------------------------------------------------------ entry point

    def build(self, fn: Any, args: Sequence[Any], name: str | None) -> tuple[ModuleOp, list[str]]:
        bound_self: list[Any] = []
        if inspect.ismethod(fn):
            bound_self = [fn.__self__]
            fn = fn.__func__
        fn = inspect.unwrap(fn)
        if not isinstance(fn, types.FunctionType):
            raise PyAscCompileError(f"cannot compile {fn!r}: expected a Python function",
                                    None, "write the operator as a module-level def")
        fdef, file, delta = self.parse_function(fn, None)
        self.frame = self.make_frame(fn, fdef, file, delta)
        def_loc = self.loc(fdef)

        arg_types: list[TensorType] = []
        for i, a in enumerate(args):
            for x in (a if _holds_desc(a) else [a]):
                if isinstance(x, TensorDesc):
                    if any(d is None or d < 0 for d in x.shape):
                        raise PyAscCompileError(
                            f"argument {i} of {fn.__name__}() has shape {list(x.shape)}: only "
                            "static, positive dimensions are supported (or 0 for an empty "
                            "tensor)", def_loc, "give every dimension as an int")
                    arg_types.append(TensorType(ir_type(x.dtype), x.shape))
                elif isinstance(x, np.ndarray):
                    raise PyAscCompileError(
                        f"argument {i} of {fn.__name__}() is a NumPy array", def_loc,
                        "describe tensor arguments with TensorDesc(shape, dtype) or "
                        "TensorDesc.of(array)")
        self.block = Block(arg_types=arg_types)
        values: list[Any] = list(bound_self)
        block_args = iter(self.block.args)

        def symbolic(x: Any) -> Any:
            if isinstance(x, TensorDesc):
                return SymbolicTensor(next(block_args), x.dtype, x.shape)
            return x

        for a in args:
            values.append(tuple(symbolic(x) for x in a) if _holds_desc(a) else symbolic(a))
        try:
            bound = inspect.signature(fn).bind(*values)
        except TypeError as exc:
            raise PyAscCompileError(
                _bind_error(f"{fn.__name__}()", exc), def_loc,
                "pass one TensorDesc or compile-time value per parameter") from None
        bound.apply_defaults()
        for pname, v in bound.arguments.items():
            items = list(enumerate(v)) if isinstance(v, tuple) else [(None, v)]
            for j, x in items:
                if isinstance(x, SymbolicTensor) and isinstance(x.value, BlockArgument):
                    hint = pname if j is None else f"{pname}{j}"
                    if SSAValue.is_valid_name(hint) and x.value.name_hint is None:
                        x.value.name_hint = hint
        self.frame.locals.update(bound.arguments)
        self.active.append(fn.__code__)

        ret_node: ast.AST = fdef
        value: Any = None
        try:
            self.exec_body(fdef.body)
        except _Return as r:
            value, ret_node = r.value, r.node
        if value is None:
            self.error(f"{fn.__name__}() returns no tensor", ret_node,
                       "return a tensor or a tuple of tensors")
        value_node = getattr(ret_node, "value", None) or ret_node
        if isinstance(value, tuple | list):
            items = list(value)
            elt_nodes = (list(value_node.elts) if isinstance(value_node, ast.Tuple | ast.List)
                         and len(value_node.elts) == len(items) else [value_node] * len(items))
        else:
            items, elt_nodes = [value], [value_node]
        if not items:
            self.error(f"{fn.__name__}() returns an empty tuple", ret_node,
                       "return one tensor or a tuple of tensors")
        results: list[SSAValue] = []
        dtypes: list[str] = []
        for item, n in zip(items, elt_nodes, strict=True):
            if not isinstance(item, SymbolicTensor):
                self.error(f"an operator must return tensors, not {type(item).__name__} "
                           f"{item!r}", n, "compile-time values are not results; return "
                           "tensors computed from the arguments")
            if item.dtype == "bool":
                self.error("a boolean mask cannot be returned", n, _MASK_HINT)
            results.append(self.convert(item.value, item.dtype, n))
            dtypes.append(item.dtype)
        self.emit(func.ReturnOp(*results), ret_node)
        self.erase_dead_layout_ops()
        fop = func.FuncOp(name or fn.__name__, (arg_types, [r.type for r in results]),
                          Region(self.block))
        fop.attributes[asc.LOC_ATTR] = StringAttr(str(def_loc))
        if self.shape_read is not None:
            fop.attributes[SHAPE_READ_ATTR] = StringAttr(self.shape_read)
        return ModuleOp([fop]), dtypes

    # ------------------------------------------------------------------ statements

    def exec_body(self, stmts: Sequence[ast.stmt]) -> None:
        for s in stmts:
            self.exec_stmt(s)

    def exec_stmt(self, s: ast.stmt) -> None:
        kind = type(s).__name__
        method = getattr(self, "stmt_" + kind, None)
        if method is None:
            msg, hint = _UNSUPPORTED_STMTS.get(
                kind, (f"'{kind}' statements are not supported in a compiled operator", None))
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
            self.error("augmented assignment is only supported to a plain name", s,
                       "tensors are immutable values; assign a new name instead")
        current = self.lookup(s.target.id, s.target)
        self.assign(s.target, self.binop(s.op, current, self.eval(s.value), s))

    def stmt_Return(self, s: ast.Return) -> None:
        raise _Return(None if s.value is None else self.eval(s.value), s)

    def stmt_If(self, s: ast.If) -> None:
        test = self.eval(s.test)
        if _contains_tensor(test):
            self.runtime_error("this 'if' condition", s.test)
        self.exec_body(s.body if self.truth(test, s.test) else s.orelse)

    def stmt_While(self, s: ast.While) -> None:
        if _contains_tensor(self.eval(s.test)):
            self.runtime_error("this 'while' condition", s.test)
        self.error("'while' loops are not supported in a compiled operator", s,
                   "use 'for i in range(n)' with a compile-time n (it is unrolled)")

    def stmt_For(self, s: ast.For) -> None:
        iterable = self.eval(s.iter)
        if isinstance(iterable, SymbolicTensor):
            self.error("iterating over a tensor is not supported", s.iter,
                       "ops work on whole tensors; 'for' loops run at compile time over "
                       "compile-time values such as range(n)")
        try:
            items = list(iterable)
        except Exception as exc:
            self.error(f"cannot iterate over {type(iterable).__name__}: {exc}", s.iter, _ITER_HINT)
        for item in items:
            self.assign(s.target, item)
            try:
                self.exec_body(s.body)
            except _Break:
                return
            except _Continue:
                continue
        self.exec_body(s.orelse)

    def stmt_Break(self, s: ast.Break) -> None:
        raise _Break

    def stmt_Continue(self, s: ast.Continue) -> None:
        raise _Continue

    def stmt_Assert(self, s: ast.Assert) -> None:
        test = self.eval(s.test)
        if _contains_tensor(test):
            self.runtime_error("this assertion", s.test)
        if not self.truth(test, s.test):
            msg = "" if s.msg is None else f": {self.eval(s.msg)}"
            self.error(f"assertion failed{msg}", s, _RAN_HINT)

    def stmt_Raise(self, s: ast.Raise) -> None:
        exc = None if s.exc is None else self.eval(s.exc)
        if isinstance(exc, type):
            exc = self.pycall(exc, [], {}, s)
        text = (f"{type(exc).__name__}: {exc}" if isinstance(exc, BaseException)
                else "the operator raised an exception")
        self.error(f"operator raised {text}", s, _RAN_HINT)

    def stmt_Import(self, s: ast.Import) -> None:
        assert self.frame is not None
        for alias in s.names:
            mod = self._import(alias.name, 0, s)
            if alias.asname:
                for part in alias.name.split(".")[1:]:
                    mod = getattr(mod, part)
                self.frame.locals[alias.asname] = mod
            else:
                top = alias.name.split(".")[0]
                self.frame.locals[top] = self._import(top, 0, s)

    def stmt_ImportFrom(self, s: ast.ImportFrom) -> None:
        assert self.frame is not None
        mod = self._import(s.module or "", s.level, s)
        for alias in s.names:
            if alias.name == "*":
                self.error("'from ... import *' is not supported in a compiled operator", s,
                           "import the names you use: from module import name")
            try:
                v = getattr(mod, alias.name)
            except AttributeError:
                v = self._import(f"{mod.__name__}.{alias.name}", 0, s)
            self.frame.locals[alias.asname or alias.name] = v

    def _import(self, name: str, level: int, node: ast.AST) -> Any:
        assert self.frame is not None
        try:
            return importlib.import_module("." * level + name,
                                           self.frame.globals.get("__package__"))
        except Exception as exc:
            self.error(f"cannot import {'.' * level + name}: {exc}", node,
                       "the module must be importable when the operator compiles; import it at "
                       "module level")

    # ------------------------------------------------------------------ assignment and names

    def assign(self, target: ast.expr, value: Any) -> None:
        assert self.frame is not None
        if isinstance(target, ast.Name):
            if (isinstance(value, SymbolicTensor) and value.value.name_hint is None
                    and not isinstance(value.value, BlockArgument)
                    and SSAValue.is_valid_name(target.id)):
                value.value.name_hint = target.id
            self.frame.locals[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            if isinstance(value, SymbolicTensor):
                self.error("cannot unpack a tensor", target,
                           "only tuples of values (e.g. a helper's results) can be unpacked")
            try:
                seq = list(value)
            except TypeError:
                self.error(f"cannot unpack {type(value).__name__}", target,
                           "unpack a tuple or a list, e.g. n, d = x.shape")
            starred = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
            n = len(target.elts)
            if starred:
                i = starred[0]
                if len(seq) < n - 1:
                    self.error(f"not enough values to unpack (expected at least {n - 1}, got "
                               f"{len(seq)})", target,
                               "use one target per value; x.shape has one value per dim")
                tail = n - i - 1
                parts = seq[:i] + [seq[i:len(seq) - tail]] + seq[len(seq) - tail:]
            else:
                if len(seq) != n:
                    self.error(f"cannot unpack {len(seq)} values into {n} targets", target,
                               "use one target per value; x.shape has one value per dim")
                parts = seq
            for t, v in zip(target.elts, parts, strict=True):
                self.assign(t.value if isinstance(t, ast.Starred) else t, v)
        else:
            self.error("assignment to an element or attribute is not supported in a compiled "
                       "operator", target, "tensors are immutable values; bind a new name")

    def lookup(self, name: str, node: ast.AST) -> Any:
        f = self.frame
        assert f is not None
        for scope in (f.locals, f.closure, f.globals):
            if name in scope:
                return scope[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        self.error(f"name '{name}' is not defined", node,
                   "define it at module level or pass it as an argument; an operator sees module "
                   "globals, closure variables and builtins")

    def truth(self, value: Any, node: ast.AST) -> bool:
        try:
            return bool(value)
        except Exception as exc:
            self.error(f"cannot take the truth value of {type(value).__name__}: {exc}", node,
                       "if/while/and/or/not need compile-time values (ints, floats, bools, tuples)")

    # ------------------------------------------------------------------ expressions

    def eval(self, node: ast.expr) -> Any:
        kind = type(node).__name__
        method = getattr(self, "expr_" + kind, None)
        if method is None:
            msg, hint = _UNSUPPORTED_EXPRS.get(
                kind, (f"'{kind}' expressions are not supported in a compiled operator", None))
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
            if node.attr == "shape":
                self.note_shape_read(node)
                return obj.shape
            if node.attr == "ndim":
                return obj.ndim
            if node.attr == "dtype":
                return {"float16": ops.float16, "float32": ops.float32}.get(obj.dtype, ops.bool_)
            if node.attr == "T":
                if obj.ndim != 2:
                    self.error(f".T needs a 2-D tensor, got shape {list(obj.shape)}", node,
                               "use x.transpose(d0, d1) or x.permute(*dims) for other ranks")
                return self.transpose(obj, (1, 0), node)
            if node.attr in _METHODS:
                return _TensorMethod(obj, node.attr)
            self.error(f"a tensor has no attribute '{node.attr}'", node,
                       "tensor attributes: shape, ndim, dtype, T; methods: "
                       + ", ".join(_METHODS))
        try:
            return getattr(obj, node.attr)
        except Exception as exc:
            if (isinstance(obj, types.ModuleType) and obj.__name__.split(".")[0] == "pyasc_mlir"
                    and isinstance(exc, AttributeError)):
                self.error(f"unknown function {obj.__name__}.{node.attr}", node,
                           "supported tensor functions: " + _SUPPORTED_FUNCS)
            self.error(f"{type(exc).__name__}: {exc}", node, _PY_HINT)

    def expr_Subscript(self, node: ast.Subscript) -> Any:
        obj = self.eval(node.value)
        index = self.eval(node.slice)
        if _contains_tensor(index):
            self.error("a tensor cannot be used as an index", node.slice,
                       "index with compile-time ints and slices; select by a mask with "
                       "pyasc_mlir.where(mask, a, b)")
        if isinstance(obj, SymbolicTensor):
            return self.index(obj, index, node)
        try:
            return obj[index]
        except Exception as exc:
            self.error(f"{type(exc).__name__}: {exc}", node, _PY_HINT)

    def expr_Slice(self, node: ast.Slice) -> Any:
        parts = [None if p is None else self.eval(p) for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def _elements(self, elts: Sequence[ast.expr]) -> list[Any]:
        out: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.eval(e.value)
                if isinstance(v, SymbolicTensor):
                    self.error("cannot unpack a tensor with *", e,
                               "index the tensor (x[0]) or pass several tensors as a tuple or list")
                try:
                    out.extend(v)
                except TypeError:
                    self.error(f"cannot unpack {type(v).__name__} with *", e,
                               "* unpacks a tuple, a list or another iterable")
            else:
                out.append(self.eval(e))
        return out

    def expr_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self._elements(node.elts))

    def expr_List(self, node: ast.List) -> Any:
        return self._elements(node.elts)

    def expr_Set(self, node: ast.Set) -> Any:
        items = self._elements(node.elts)
        if _contains_tensor(items):
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
                    self.error("a tensor cannot be a dict key", k,
                               "use a str or int key and put the tensor in the value")
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
        conv = {115: str, 114: repr, 97: ascii}.get(node.conversion)
        if conv is not None:
            value = conv(value)
        spec = "" if node.format_spec is None else self.eval(node.format_spec)
        try:
            return format(value, spec)
        except Exception as exc:
            self.error(f"{type(exc).__name__}: {exc}", node, _PY_HINT)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
                       ) -> list[Any]:
        assert self.frame is not None
        saved = self.frame.locals
        self.frame.locals = dict(saved)
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
                self.error("iterating over a tensor is not supported", gen.iter,
                           "ops work on whole tensors; comprehensions run at compile time over "
                           "compile-time values such as range(n)")
            try:
                items = list(iterable)
            except Exception as exc:
                self.error(f"cannot iterate over {type(iterable).__name__}: {exc}", gen.iter,
                           _ITER_HINT)
            for item in items:
                self.assign(gen.target, item)
                ok = True
                for cond in gen.ifs:
                    c = self.eval(cond)
                    if _contains_tensor(c):
                        self.runtime_error("this comprehension condition", cond)
                    if not self.truth(c, cond):
                        ok = False
                        break
                if ok:
                    run(i + 1)

        try:
            run(0)
        finally:
            self.frame.locals = saved
        return out

    def expr_ListComp(self, node: ast.ListComp) -> Any:
        return self._comprehension(node)

    def expr_GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        return self._comprehension(node)

    def expr_SetComp(self, node: ast.SetComp) -> Any:
        items = self._comprehension(node)
        if _contains_tensor(items):
            self.error("a set cannot hold tensors", node, "use a tuple or a list of tensors")
        return set(items)

    def expr_DictComp(self, node: ast.DictComp) -> Any:
        return dict(self._comprehension(node))

    def expr_IfExp(self, node: ast.IfExp) -> Any:
        test = self.eval(node.test)
        if _contains_tensor(test):
            self.runtime_error("this conditional expression", node.test)
        return self.eval(node.body if self.truth(test, node.test) else node.orelse)

    def expr_BoolOp(self, node: ast.BoolOp) -> Any:
        word = "and" if isinstance(node.op, ast.And) else "or"
        value: Any = None
        for v in node.values:
            value = self.eval(v)
            if _contains_tensor(value):
                self.runtime_error(f"'{word}'", v)
            t = self.truth(value, v)
            if (word == "and" and not t) or (word == "or" and t):
                return value
        return value

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.eval(node.operand)
        if isinstance(v, SymbolicTensor):
            if isinstance(node.op, ast.USub):
                self.check_arith(v, node, "-")
                return self.unary("neg", v, node)
            if isinstance(node.op, ast.UAdd):
                self.check_arith(v, node, "+")
                return v
            if isinstance(node.op, ast.Not):
                self.runtime_error("'not'", node)
            if v.dtype == "bool":
                return self.mask_not(v, node)
            self.error("'~' is only supported on boolean masks", node,
                       "'~' negates a boolean mask such as ~(x > 0); use -x to negate numbers")
        if isinstance(node.op, ast.Not) and _contains_tensor(v):
            self.runtime_error("'not'", node)
        ufn = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
               ast.Invert: operator.invert}[type(node.op)]
        return self.pyop(ufn, [v], node)

    def expr_BinOp(self, node: ast.BinOp) -> Any:
        return self.binop(node.op, self.eval(node.left), self.eval(node.right), node)

    def expr_Compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        if len(node.ops) == 1:
            return self.compare(node.ops[0], left, self.eval(node.comparators[0]), node)
        result: Any = True
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = self.eval(comp)
            if isinstance(left, SymbolicTensor) or isinstance(right, SymbolicTensor):
                self.error("chained comparisons on tensors are not supported", node,
                           "compare once per expression, e.g. (a < x) & (x < b)")
            result = self.compare(op, left, right, node)
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
                    self.error("** needs a mapping", kw.value,
                               "pass a dict, e.g. f(**{'axis': -1})")
                kwargs.update(extra)
            else:
                kwargs[kw.arg] = self.eval(kw.value)
        return self.call(callee, args, kwargs, node)

    # ------------------------------------------------------------------ calls

    def call(self, callee: Any, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        if isinstance(callee, _TensorMethod):
            return self.call_method(callee, args, kwargs, node)
        if not callable(callee):
            self.error(f"'{type(callee).__name__}' object is not callable", node, _CALL_HINT)
        if isinstance(callee, types.FunctionType) and callee in _MARKERS:
            return self.call_op(_MARKERS[callee], callee, args, kwargs, node)
        if callee is builtins.print:
            self.error("print() is not supported in a compiled operator", node,
                       "the operator runs on the device; return the value, or run with "
                       "backend='interp' and inspect the results")
        if not (_contains_tensor(args) or _contains_tensor(kwargs)) or callee is isinstance:
            return self.pycall(callee, args, kwargs, node)
        if callee is builtins.abs and len(args) == 1 and not kwargs:
            return self.unary("abs", args[0], node)
        if callee is builtins.pow and len(args) == 2 and not kwargs:
            return self.power(args[0], args[1], node)
        if callee is builtins.len and len(args) == 1 and isinstance(args[0], SymbolicTensor):
            if not args[0].shape:
                self.error("len() of a 0-d tensor", node,
                           "a 0-d tensor has no length; read its dims with x.shape")
            self.note_shape_read(node)
            return args[0].shape[0]
        if any(callee is c for c in _STRUCTURAL) and not any(
                isinstance(a, SymbolicTensor) for a in args):
            return self.pycall(callee, args, kwargs, node)  # len(xs), enumerate(xs), ...
        if any(callee is c for c in (builtins.bool, builtins.int, builtins.float)):
            self.runtime_error(f"{callee.__name__}() of a tensor", node)
        if isinstance(callee, types.MethodType) and isinstance(callee.__func__,
                                                               types.FunctionType):
            return self.inline(callee.__func__, [callee.__self__, *args], kwargs, node)
        if isinstance(callee, types.FunctionType):
            return self.inline(callee, args, kwargs, node)
        name = getattr(callee, "__name__", None)
        alt = {"max": "maximum", "min": "minimum"}.get(name or "", name)
        if any(callee is c for c in (builtins.max, builtins.min, builtins.sum)):
            hint = (f"use pyasc_mlir.{alt}() (elementwise) or pyasc_mlir.{name}(x, axis) "
                    "(reduction)" if alt != name else f"use pyasc_mlir.{name}(x, axis)")
        elif name in _OP_NAMES:
            hint = f"use pyasc_mlir.{name}()"
        else:
            hint = ("supported tensor functions: " + _SUPPORTED_FUNCS +
                    "; helper functions written with def are inlined")
        self.error(f"unknown function {_callee_name(callee)}() on tensor arguments", node, hint)

    def pycall(self, callee: Any, args: Sequence[Any], kwargs: Mapping[str, Any],
               node: ast.AST) -> Any:
        """Call ``callee`` in Python (all arguments are compile-time values)."""
        if not callable(callee):
            self.error(f"'{type(callee).__name__}' object is not callable", node, _CALL_HINT)
        try:
            return callee(*args, **kwargs)
        except PyAscCompileError:
            raise
        except Exception as exc:
            self.error(f"calling {_callee_name(callee)}() at compile time raised "
                       f"{type(exc).__name__}: {exc}", node, _PY_HINT)

    def pyop(self, fn: Callable[..., Any], args: Sequence[Any], node: ast.AST) -> Any:
        """Apply a Python operator to compile-time values."""
        try:
            return fn(*args)
        except Exception as exc:
            self.error(f"{type(exc).__name__}: {exc}", node, _PY_HINT)

    def inline(self, fn: types.FunctionType, args: list[Any], kwargs: dict[str, Any],
               node: ast.AST) -> Any:
        """Evaluate a user helper's body with the given (possibly symbolic) arguments."""
        fn = inspect.unwrap(fn)
        if fn.__code__ in self.active:
            self.error(f"recursive call to {fn.__name__}() is not supported", node,
                       "recursion cannot be unrolled at compile time; use a for loop over "
                       "range(n)")
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            self.error(_bind_error(f"{fn.__name__}()", exc), node,
                       "call the helper with the parameters its def names")
        bound.apply_defaults()
        fdef, file, delta = self.parse_function(fn, node)
        caller = self.frame
        self.frame = self.make_frame(fn, fdef, file, delta)
        self.frame.locals.update(bound.arguments)
        self.active.append(fn.__code__)
        try:
            self.exec_body(fdef.body)
        except _Return as r:
            return r.value
        finally:
            self.active.pop()
            self.frame = caller
        return None

    def call_method(self, m: _TensorMethod, args: list[Any], kwargs: dict[str, Any],
                    node: ast.AST) -> Any:
        if m.name == "reshape":
            if kwargs:
                self.error("reshape() takes the new shape only", node,
                           "call x.reshape(d0, d1, ...) or x.reshape((d0, d1, ...))")
            shape = args[0] if len(args) == 1 and isinstance(args[0], tuple | list) else args
            return self.reshape(m.tensor, shape, node)
        if m.name == "transpose":
            if kwargs or len(args) != 2 or not all(_is_int(a) for a in args):
                self.error("x.transpose(d0, d1) swaps two dims given as compile-time ints, got "
                           f"{args!r}", node, "use x.permute(*dims) for a full permutation")
            perm = list(range(m.tensor.ndim))
            d0, d1 = (self.norm_axis(int(a), m.tensor, node) for a in args)
            perm[d0], perm[d1] = perm[d1], perm[d0]
            return self.transpose(m.tensor, perm, node)
        if m.name == "permute":
            if kwargs:
                self.error("permute() takes the dims only", node,
                           "call x.permute(d0, d1, ...) with compile-time ints")
            dims = args[0] if len(args) == 1 and isinstance(args[0], tuple | list) else args
            return self.transpose(m.tensor, dims, node)
        name = "cast" if m.name == "astype" else m.name
        return self.call_op(name, getattr(ops, name), [m.tensor, *args], kwargs, node)

    def call_op(self, name: str, marker: Callable[..., Any], args: list[Any],
                kwargs: dict[str, Any], node: ast.AST) -> Any:
        try:
            bound = inspect.signature(marker).bind(*args, **kwargs)
        except TypeError as exc:
            self.error(_bind_error(f"pyasc_mlir.{name}()", exc), node,
                       f"signature: pyasc_mlir.{name}{_plain_signature(marker)}")
        bound.apply_defaults()
        a = bound.arguments
        if name in _UNARY:
            return self.unary(name, a["x"], node)
        if name in ("maximum", "minimum"):
            return self.binary(name[:3], a["a"], a["b"], node)
        if name == "where":
            return self.select(a["cond"], a["a"], a["b"], node)
        if name == "cast":
            return self.cast(a["x"], a["dtype"], node)
        if name == "matmul":
            return self.matmul(a["a"], a["b"], a["transpose_a"], a["transpose_b"], node)
        if name == "transpose":
            x = self.need_tensor(a["x"], "transpose()", node)
            dims = a["dims"]
            return self.transpose(x, tuple(reversed(range(x.ndim))) if dims is None else dims,
                                  node)
        if name == "concat":
            return self.concat(a["tensors"], a["axis"], node)
        if name in _SHAPE_HELPERS:
            return self.shape_helper(name, a, node)
        correction = 0
        if name == "var":
            unbiased = a["unbiased"]
            if _contains_tensor(unbiased):
                self.error("'unbiased' must be a compile-time bool", node,
                           "pass unbiased=True or unbiased=False as a constant")
            correction = 1 if unbiased else 0
        return self.reduce(name, a["x"], a["axis"], a["keepdim"], correction, node)

    # ------------------------------------------------------------------ IR helpers

    def convert(self, v: SSAValue, dtype: str, node: ast.AST) -> SSAValue:
        """``v`` with element type ``dtype`` (an ``asc.cast``, cached per value)."""
        t = v.type
        assert isinstance(t, TensorType)
        want = ir_type(dtype)
        if t.element_type == want:
            return v
        key = (v, dtype)
        if key not in self._casts:
            self._casts[key] = self.emit(asc.CastOp(v, want), node).results[0]
        return self._casts[key]

    def broadcast(self, v: SSAValue, shape: tuple[int, ...], node: ast.AST) -> SSAValue:
        t = v.type
        assert isinstance(t, TensorType)
        if tuple(t.get_shape()) == shape:
            return v
        key = (v, shape)
        if key not in self._bcasts:
            self._bcasts[key] = self.emit(asc.BroadcastOp(v, shape), node).results[0]
        return self._bcasts[key]

    def constant(self, value: float, shape: tuple[int, ...], node: ast.AST) -> SSAValue:
        return self.emit(asc.ConstantOp(float(value), TensorType(ir_type("float32"), shape)),
                         node).results[0]

    def f32_operand(self, v: Any, shape: tuple[int, ...], node: ast.AST) -> SSAValue:
        """A number or non-mask tensor as an f32 value of ``shape``."""
        if isinstance(v, SymbolicTensor):
            return self.broadcast(self.convert(v.value, "float32", node), shape, node)
        return self.constant(float(v), shape, node)

    def result_shape(self, values: Sequence[Any], node: ast.AST) -> tuple[int, ...]:
        shape: tuple[int, ...] | None = None
        for v in values:
            if not isinstance(v, SymbolicTensor):
                continue
            if shape is None:
                shape = v.shape
                continue
            new = asc.broadcast_shapes(shape, v.shape)
            if new is None:
                self.error(f"cannot broadcast shapes {list(shape)} and {list(v.shape)}", node,
                           "NumPy broadcasting: trailing dimensions must be equal or 1")
            shape = new
        return () if shape is None else shape

    @staticmethod
    def promote(values: Sequence[Any]) -> str:
        """float16 if every (non-mask) tensor operand is float16, else float32."""
        dts = [v.dtype for v in values if isinstance(v, SymbolicTensor) and v.dtype != "bool"]
        return "float16" if dts and all(d == "float16" for d in dts) else "float32"

    def check_arith(self, v: Any, node: ast.AST, what: str) -> None:
        if isinstance(v, SymbolicTensor):
            if v.dtype == "bool":
                self.error(f"a boolean mask cannot be used in arithmetic ({what})", node,
                           _MASK_HINT)
            return
        if not _is_number(v) or isinstance(v, complex):
            self.error(f"unsupported operand of type {type(v).__name__} for {what} with a "
                       "tensor", node, "operands are tensors or Python numbers")

    # ------------------------------------------------------------------ tensor semantics

    def binop(self, op: ast.operator, a: Any, b: Any, node: ast.AST) -> Any:
        if not (isinstance(a, SymbolicTensor) or isinstance(b, SymbolicTensor)):
            return self.pyop(_PY_BINOPS[type(op)], [a, b], node)
        sym = _OP_SYMBOLS[type(op)]
        if isinstance(op, ast.Pow):
            return self.power(a, b, node)
        if type(op) in _TENSOR_BINOPS:
            return self.binary(_TENSOR_BINOPS[type(op)], a, b, node, sym)
        if isinstance(op, ast.BitAnd | ast.BitOr | ast.BitXor):
            return self.mask_logic(sym, a, b, node)
        if isinstance(op, ast.MatMult):
            return self.matmul(a, b, False, False, node)
        self.error(f"operator '{sym}' is not supported on tensors", node,
                   "on tensors: + - * / ** @, comparisons, and & | ^ ~ on boolean masks")

    def binary(self, kind: str, a: Any, b: Any, node: ast.AST, what: str | None = None
               ) -> Any:
        if what:
            what = f"'{what}'"
        else:
            what = {"max": "maximum()", "min": "minimum()"}.get(kind, f"{kind}()")
        if not (isinstance(a, SymbolicTensor) or isinstance(b, SymbolicTensor)):
            for v in (a, b):
                self.check_arith(v, node, what)
            return (builtins.max if kind == "max" else builtins.min)(a, b)
        for v in (a, b):
            self.check_arith(v, node, what)
        shape = self.result_shape([a, b], node)
        lhs = self.f32_operand(a, shape, node)
        rhs = self.f32_operand(b, shape, node)
        r = self.emit(asc.BinaryOp(kind, lhs, rhs), node).results[0]
        return SymbolicTensor(r, self.promote([a, b]), shape)

    def unary(self, kind: str, x: Any, node: ast.AST) -> Any:
        if not isinstance(x, SymbolicTensor):
            self.check_arith(x, node, f"{kind}()")
            if kind == "neg":
                return -x
            try:
                return _PY_UNARY[kind](float(x))
            except (ValueError, OverflowError, ZeroDivisionError) as exc:
                self.error(f"{kind}({x!r}) at compile time: {exc}", node,
                           "the constant is outside the function's domain; check the value")
        self.check_arith(x, node, f"{kind}()" if kind != "neg" else "'-'")
        r = self.emit(asc.UnaryOp(kind, self.convert(x.value, "float32", node)), node)
        return SymbolicTensor(r.results[0], x.dtype, x.shape)

    def power(self, base: Any, exponent: Any, node: ast.AST) -> Any:
        if isinstance(exponent, SymbolicTensor):
            self.error("a tensor exponent is not supported", node,
                       "use pyasc_mlir.exp(y * pyasc_mlir.log(x)) for x ** y with x > 0")
        if not isinstance(base, SymbolicTensor):
            return self.pyop(operator.pow, [base, exponent], node)
        self.check_arith(base, node, "'**'")
        if not _is_number(exponent):
            self.error(f"unsupported exponent of type {type(exponent).__name__}", node,
                       "use a number exponent, e.g. x ** 2 or x ** 0.5")
        e = float(exponent)
        if e == 1:
            return base
        if e in (2, 3):
            sq = self.binary("mul", base, base, node, "**")
            return sq if e == 2 else self.binary("mul", sq, base, node, "**")
        kinds = {0.5: "sqrt", -1: "reciprocal", -0.5: "rsqrt"}
        if e in kinds:
            return self.unary(kinds[e], base, node)
        self.error(f"unsupported exponent {exponent!r} for a tensor", node,
                   "supported constant exponents: 2, 3, 0.5, -1, -0.5 (and 1); use "
                   "pyasc_mlir.exp(e * pyasc_mlir.log(x)) for others")

    def compare(self, op: ast.cmpop, a: Any, b: Any, node: ast.AST) -> Any:
        if not (isinstance(a, SymbolicTensor) or isinstance(b, SymbolicTensor)):
            return self.pyop(_PY_CMPS[type(op)], [a, b], node)
        if isinstance(op, ast.Is | ast.IsNot):
            return (a is b) == isinstance(op, ast.Is)
        if type(op) not in _CMP_PREDICATES:
            self.error("'in' / 'not in' are not supported on tensors", node,
                       "compare elementwise with == and combine the masks with |")
        for v in (a, b):
            if isinstance(v, SymbolicTensor) and v.dtype == "bool":
                self.error("boolean masks cannot be compared", node,
                           "combine masks with & | ^ ~, or use pyasc_mlir.where")
            self.check_arith(v, node, "a comparison")
        shape = self.result_shape([a, b], node)
        lhs = self.f32_operand(a, shape, node)
        rhs = self.f32_operand(b, shape, node)
        r = self.emit(asc.CompareOp(_CMP_PREDICATES[type(op)], lhs, rhs), node).results[0]
        return SymbolicTensor(r, "bool", shape)

    def mask_as_f32(self, m: SymbolicTensor, shape: tuple[int, ...], node: ast.AST
                    ) -> SSAValue:
        cond = self.broadcast(m.value, shape, node)
        one = self.constant(1.0, shape, node)
        zero = self.constant(0.0, shape, node)
        return self.emit(asc.SelectOp(cond, one, zero), node).results[0]

    def mask_logic(self, sym: str, a: Any, b: Any, node: ast.AST) -> Any:
        for v in (a, b):
            if not (isinstance(v, SymbolicTensor) and v.dtype == "bool"):
                self.error(f"operator '{sym}' needs two boolean masks", node,
                           "masks come from comparisons such as x > 0")
        shape = self.result_shape([a, b], node)
        fa = self.mask_as_f32(a, shape, node)
        fb = self.mask_as_f32(b, shape, node)
        kind, pred = {"&": ("min", "gt"), "|": ("max", "gt"), "^": ("sub", "ne")}[sym]
        combined = self.emit(asc.BinaryOp(kind, fa, fb), node).results[0]
        zero = self.constant(0.0, shape, node)
        r = self.emit(asc.CompareOp(pred, combined, zero), node).results[0]
        return SymbolicTensor(r, "bool", shape)

    def mask_not(self, m: SymbolicTensor, node: ast.AST) -> SymbolicTensor:
        f = self.mask_as_f32(m, m.shape, node)
        zero = self.constant(0.0, m.shape, node)
        r = self.emit(asc.CompareOp("eq", f, zero), node).results[0]
        return SymbolicTensor(r, "bool", m.shape)

    def select(self, cond: Any, a: Any, b: Any, node: ast.AST) -> Any:
        if not (isinstance(cond, SymbolicTensor) and cond.dtype == "bool"):
            self.error("the condition of where() must be a boolean mask (e.g. x > 0), not "
                       f"{cond!r}", node, "for a compile-time condition use 'a if c else b'")
        for v in (a, b):
            self.check_arith(v, node, "where()")
        shape = self.result_shape([cond, a, b], node)
        c = self.broadcast(cond.value, shape, node)
        lhs = self.f32_operand(a, shape, node)
        rhs = self.f32_operand(b, shape, node)
        r = self.emit(asc.SelectOp(c, lhs, rhs), node).results[0]
        return SymbolicTensor(r, self.promote([a, b]), shape)

    def cast(self, x: Any, dtype: Any, node: ast.AST) -> Any:
        if isinstance(dtype, ops.DType):
            name = dtype.name
        else:
            try:
                name = dtype_name(dtype)
            except TypeError:
                name = "unsupported"
        if name not in ("float16", "float32"):
            self.error(f"unsupported dtype {dtype!r}", node,
                       "use pyasc_mlir.float16 or pyasc_mlir.float32")
        if not isinstance(x, SymbolicTensor):
            self.check_arith(x, node, "cast()")
            return float(np.dtype(name).type(x))
        if x.dtype == "bool":
            return SymbolicTensor(self.mask_as_f32(x, x.shape, node), name, x.shape)
        if name == "float16":
            return SymbolicTensor(self.convert(x.value, "float16", node), name, x.shape)
        return SymbolicTensor(x.value, name, x.shape)

    def reduce(self, kind: str, x: Any, axis: Any, keepdim: Any, correction: int,
               node: ast.AST) -> Any:
        if not isinstance(x, SymbolicTensor):
            self.error(f"{kind}() reduces a tensor, not {type(x).__name__}", node,
                       "for Python numbers use the builtins" if kind != "var" else None)
        self.check_arith(x, node, f"{kind}()")
        if _contains_tensor(keepdim) or _contains_tensor(axis):
            self.error(f"axis and keepdim of {kind}() must be compile-time values", node,
                       "pass axis as an int or a tuple of ints and keepdim as True or False")
        rank = x.ndim
        if axis is None:
            axes = list(range(rank))
        elif isinstance(axis, int | np.integer) and not isinstance(axis, bool):
            axes = [int(axis)]
        elif isinstance(axis, tuple | list) and all(
                isinstance(a, int | np.integer) and not isinstance(a, bool) for a in axis):
            axes = [int(a) for a in axis]
        else:
            self.error(f"axis must be an int, a tuple of ints or None, got {axis!r}", node,
                       "pass axis=-1, axis=(0, 1) or axis=None (every dim)")
        norm: list[int] = []
        for a in axes:
            if not -rank <= a < rank:
                self.error(f"axis {a} is out of range for a tensor of rank {rank} (shape "
                           f"{list(x.shape)})", node, f"valid axes: {-rank}..{rank - 1}"
                           if rank else "a 0-d tensor has no axes")
            a = a % rank
            if a in norm:
                self.error(f"axis {a} is repeated in axis={axis!r}", node, "name each dim once")
            norm.append(a)
        if not norm:
            if kind != "var":
                return x
            value = 0.0 if correction == 0 else math.nan
            return SymbolicTensor(self.constant(value, x.shape, node), x.dtype, x.shape)
        op = asc.ReduceOp(kind, self.convert(x.value, "float32", node), sorted(norm),
                          bool(keepdim), correction)
        r = self.emit(op, node).results[0]
        t = r.type
        assert isinstance(t, TensorType)
        return SymbolicTensor(r, x.dtype, tuple(t.get_shape()))

    def reshape(self, x: SymbolicTensor, shape: Sequence[Any], node: ast.AST) -> Any:
        if _contains_tensor(shape) or not all(
                isinstance(d, int | np.integer) and not isinstance(d, bool) for d in shape):
            self.error(f"reshape() needs a shape of compile-time ints, got {list(shape)!r}",
                       node, _RESHAPE_HINT)
        dims = [int(d) for d in shape]
        total = math.prod(x.shape)
        if dims.count(-1) > 1 or any(d < -1 or d == 0 for d in dims):
            self.error(f"invalid shape {dims} for reshape()", node, _RESHAPE_HINT)
        if -1 in dims:
            known = math.prod(d for d in dims if d != -1)
            if total % known:
                self.error(f"cannot reshape {list(x.shape)} to {dims}", node,
                           f"the new shape must hold {total} elements; {_RESHAPE_HINT}")
            dims[dims.index(-1)] = total // known
        if math.prod(dims) != total:
            self.error(f"cannot reshape {list(x.shape)} ({total} elements) to {dims}", node,
                       f"the new shape must hold {total} elements; {_RESHAPE_HINT}")
        if tuple(dims) == x.shape:
            return x
        r = self.emit(asc.ReshapeOp(x.value, dims), node).results[0]
        return SymbolicTensor(r, x.dtype, dims)

    # ------------------------------------------------------------------ matmul and layout

    def need_tensor(self, x: Any, what: str, node: ast.AST) -> SymbolicTensor:
        if not isinstance(x, SymbolicTensor):
            self.error(f"{what} needs a tensor, got {type(x).__name__} {x!r}", node,
                       "pass a tensor (an argument of the operator or a value computed from one)")
        return x

    def norm_axis(self, axis: Any, x: SymbolicTensor, node: ast.AST) -> int:
        """``axis`` (negative counts from the end) as an index into ``x.shape``."""
        if not _is_int(axis):
            self.error(f"a dim must be a compile-time int, got {axis!r}", node,
                       "pass the dim as an int constant, e.g. -1")
        rank = x.ndim
        if not -rank <= int(axis) < rank:
            self.error(f"dim {axis} is out of range for a tensor of shape {list(x.shape)}",
                       node, f"valid dims: {-rank}..{rank - 1}" if rank else None)
        return int(axis) % rank

    def layout_value(self, x: SymbolicTensor, node: ast.AST) -> SSAValue:
        """The IR value a data-movement op moves: the value itself (f16 stays f16, so half the
        bytes move), or a mask as 1.0/0.0 in f32 (masks are bit-packed on chip)."""
        return self.mask_as_f32(x, x.shape, node) if x.dtype == "bool" else x.value

    def layout_result(self, r: SSAValue, dtype: str, node: ast.AST) -> SymbolicTensor:
        t = r.type
        assert isinstance(t, TensorType)
        shape = tuple(t.get_shape())
        if dtype == "bool":
            zero = self.constant(0.0, shape, node)
            r = self.emit(asc.CompareOp("ne", r, zero), node).results[0]
        return SymbolicTensor(r, dtype, shape)

    def transpose(self, x: Any, dims: Any, node: ast.AST) -> SymbolicTensor:
        x = self.need_tensor(x, "transpose()", node)
        if not isinstance(dims, tuple | list) or not all(_is_int(d) for d in dims):
            self.error(f"transpose dims must be a tuple of compile-time ints, got {dims!r}",
                       node,
                       "pass a permutation of the dims such as (1, 0), or swap two with "
                       "x.transpose(0, 1)")
        if len(dims) != x.ndim:
            self.error(f"permutation {list(dims)} has {len(dims)} dims but the tensor has shape "
                       f"{list(x.shape)}", node, f"give all {x.ndim} dims in their new order")
        perm = [self.norm_axis(d, x, node) for d in dims]
        if sorted(perm) != list(range(x.ndim)):
            self.error(f"{list(dims)} is not a permutation of the dims of a tensor of shape "
                       f"{list(x.shape)}", node, "each dim must appear exactly once")
        if perm == sorted(perm):
            return x
        r = self.emit(asc.TransposeOp(self.layout_value(x, node), perm), node).results[0]
        return self.layout_result(r, x.dtype, node)

    def concat(self, tensors: Any, axis: Any, node: ast.AST) -> SymbolicTensor:
        if not isinstance(tensors, tuple | list) or not tensors or not all(
                isinstance(t, SymbolicTensor) for t in tensors):
            self.error(f"concat() takes a non-empty list or tuple of tensors, got {tensors!r}",
                       node, "e.g. pyasc_mlir.concat([a, b], axis=0)")
        ts: list[SymbolicTensor] = list(tensors)
        first = ts[0]
        if any(t.ndim != first.ndim for t in ts):
            self.error(f"concat() needs tensors of one rank, got shapes {_shapes(ts)}", node,
                       "reshape the tensors to one rank first, e.g. x.reshape(1, n)")
        if first.ndim == 0:
            self.error("concat() of 0-d tensors", node, "reshape them to [1] first")
        k = self.norm_axis(axis, first, node)
        for t in ts[1:]:
            bad = [i for i in range(first.ndim) if i != k and t.shape[i] != first.shape[i]]
            if bad:
                self.error(f"concat() along axis {k}: shapes {_shapes(ts)} differ in dim "
                           f"{bad[0]}", node, "all dims except the concat axis must be equal")
        masks = [t.dtype == "bool" for t in ts]
        if any(masks) and not all(masks):
            self.error("concat() of boolean masks with number tensors", node, _MASK_HINT)
        if len(ts) == 1:
            return first
        values = [self.layout_value(t, node) for t in ts]
        if len({v.type.element_type for v in values}) > 1:  # type: ignore[attr-defined]
            values = [self.convert(v, "float32", node) for v in values]
        r = self.emit(asc.ConcatOp(values, k), node).results[0]
        return self.layout_result(r, "bool" if masks[0] else self.promote(ts), node)

    def index(self, x: SymbolicTensor, index: Any, node: ast.AST) -> SymbolicTensor:
        """``x[index]``: constant ints, slices with step 1, ``...`` and ``None``."""
        items = list(index) if isinstance(index, tuple) else [index]
        for it in items:
            if not (_is_int(it) or isinstance(it, slice) or it is Ellipsis or it is None):
                self.error(f"unsupported index {it!r} for a tensor", node,
                           "index with compile-time ints, slices with step 1, ... and None")
        if items.count(Ellipsis) > 1:
            self.error("an index can only have a single ellipsis ('...')", node,
                       "use '...' once, e.g. x[..., 0]")
        used = sum(1 for it in items if it is not None and it is not Ellipsis)
        if used > x.ndim:
            self.error(f"too many indices ({used}) for a tensor of shape {list(x.shape)}", node,
                       f"use at most {x.ndim} indices, one per dim")
        if Ellipsis in items:
            at = items.index(Ellipsis)
            items[at:at + 1] = [slice(None)] * (x.ndim - used)
        else:
            items += [slice(None)] * (x.ndim - used)
        offsets: list[int] = []
        sizes: list[int] = []
        out_shape: list[int] = []
        dim = 0
        for it in items:
            if it is None:
                out_shape.append(1)
                continue
            d = x.shape[dim]
            if isinstance(it, slice):
                for part in (it.start, it.stop):
                    if part is not None and not _is_int(part):
                        self.error(f"slice bounds must be compile-time ints, got {it!r}", node,
                                   "use int constants or values read from x.shape")
                if it.step is not None and it.step != 1:
                    self.error(f"slice step {it.step!r} in dim {dim} is not supported", node,
                               "only step 1 is supported")
                start, stop, _ = it.indices(d)
                n = max(0, stop - start)
                if n == 0:
                    self.error(f"the slice {it.start}:{it.stop} of dim {dim} (size {d}) of "
                               f"shape {list(x.shape)} is empty", node,
                               "empty tensors cannot be computed on")
                offsets.append(start)
                sizes.append(n)
                out_shape.append(n)
            else:
                i = int(it)
                if not -d <= i < d:
                    self.error(f"index {i} is out of range for dim {dim} (size {d}) of shape "
                               f"{list(x.shape)}", node, f"valid indices: {-d}..{d - 1}")
                offsets.append(i % d)
                sizes.append(1)
            dim += 1
        r: SymbolicTensor = x
        if tuple(sizes) != x.shape:
            v = self.emit(asc.SliceOp(self.layout_value(x, node), offsets, sizes),
                          node).results[0]
            r = self.layout_result(v, x.dtype, node)
        if tuple(out_shape) != r.shape:
            v = self.emit(asc.ReshapeOp(r.value, out_shape), node).results[0]
            r = SymbolicTensor(v, x.dtype, out_shape)
        return r

    def matmul(self, a: Any, b: Any, transpose_a: Any, transpose_b: Any,
               node: ast.AST) -> SymbolicTensor:
        for v, side in ((a, "left"), (b, "right")):
            if not isinstance(v, SymbolicTensor):
                self.error(f"the {side} operand of matmul is {type(v).__name__} {v!r}, not a "
                           "tensor", node,
                           "both operands of @ and pyasc_mlir.matmul must be tensors of rank >= "
                           "2; scale by a number with *")
            if v.dtype == "bool":
                self.error("a boolean mask cannot be a matmul operand", node, _MASK_HINT)
        for flag in (transpose_a, transpose_b):
            if not isinstance(flag, bool | np.bool_):
                self.error(f"transpose_a/transpose_b must be compile-time bools, got {flag!r}",
                           node, "pass transpose_a and transpose_b as True or False constants")
        ta, tb = bool(transpose_a), bool(transpose_b)
        if a.ndim < 2 or b.ndim < 2:
            self.error(f"matmul needs operands of rank >= 2, got shapes {list(a.shape)} and "
                       f"{list(b.shape)}", node,
                       "reshape a vector to [1, K] (left) or [K, 1] (right) first")
        shape = asc.matmul_shape(a.shape, b.shape, ta, tb)
        if shape is None:
            ka = a.shape[-2] if ta else a.shape[-1]
            kb = b.shape[-1] if tb else b.shape[-2]
            flags = "".join(f", {n}=True" for n, f in (("transpose_a", ta), ("transpose_b", tb))
                            if f)
            what = (f"K differs ({ka} vs {kb})" if ka != kb else
                    f"batch dims {list(a.shape[:-2])} and {list(b.shape[:-2])} do not broadcast")
            self.error(f"matmul shapes {list(a.shape)} and {list(b.shape)} do not multiply"
                       f"{flags}: {what}", node,
                       "a is [..., M, K] and b is [..., K, N]; use transpose_a/transpose_b or "
                       "x.transpose(-1, -2) to match K")
        va, ta = self.fold_transpose(a.value, ta)
        vb, tb = self.fold_transpose(b.value, tb)
        if va.type.element_type != vb.type.element_type:  # type: ignore[attr-defined]
            # The Cube reads one dtype. Both operands f16 for the user (one computed in f32):
            # round it to f16, as an f16 model on the NPU does (accumulation stays f32), so
            # the f16 one is read in place. Otherwise f32 (an f32 input is never rounded).
            want = "float16" if a.dtype == b.dtype == "float16" else "float32"
            va, vb = self.convert(va, want, node), self.convert(vb, want, node)
        r = self.emit(asc.MatmulOp(va, vb, ta, tb), node).results[0]
        return SymbolicTensor(r, self.promote([a, b]), shape)

    @staticmethod
    def fold_transpose(v: SSAValue, flag: bool) -> tuple[SSAValue, bool]:
        """``x.transpose(-1, -2)`` feeding a matmul becomes its transpose flag (no data
        movement); the transpose is erased at the end when nothing else uses it."""
        owner = v.owner
        if isinstance(owner, asc.TransposeOp):
            perm = owner.permutation
            n = len(perm)
            if perm == (*range(n - 2), n - 1, n - 2):
                return owner.input, not flag
        return v, flag

    def erase_dead_layout_ops(self) -> None:
        """Erase data-movement ops whose results nothing uses (transposes folded into a
        matmul's flags), last first so chains go too."""
        for op in reversed(list(self.block.ops)):
            if isinstance(op, asc.TransposeOp | asc.SliceOp | asc.ConcatOp) and not any(
                    r.uses for r in op.results):
                self.block.erase_op(op)

    def shape_helper(self, name: str, a: Mapping[str, Any], node: ast.AST) -> Any:
        if name == "match_shape":
            self.note_shape_read(node)
            x = self.need_tensor(a["x"], "match_shape()", node)
            pattern = a["pattern"]
            if not isinstance(pattern, tuple | list) or not all(
                    p is None or _is_int(p) for p in pattern):
                self.error(f"match_shape() pattern must be a tuple of ints and None, got "
                           f"{pattern!r}", node,
                           "pass a tuple such as (None, 64): an int fixes a dim, None accepts any "
                           "size")
            want = "(" + ", ".join("None" if p is None else str(int(p)) for p in pattern) + (
                ",)" if len(pattern) == 1 else ")")
            if len(pattern) != x.ndim:
                self.error(f"shape {list(x.shape)} does not match {want}: rank {x.ndim}, "
                           f"expected {len(pattern)}", node, _MATCH_HINT)
            for i, (d, p) in enumerate(zip(x.shape, pattern, strict=True)):
                if p is not None and d != p:
                    self.error(f"shape {list(x.shape)} does not match {want}: dim {i} is {d}, "
                               f"expected {p}", node, _MATCH_HINT)
            return x.shape
        if name == "assert_same_rank":
            ts = a["tensors"]
            if len(ts) == 1 and isinstance(ts[0], tuple | list):
                ts = ts[0]
            ts = [self.need_tensor(t, "assert_same_rank()", node) for t in ts]
            if len({t.ndim for t in ts}) > 1:
                self.error(f"tensors of different ranks: shapes {_shapes(ts)}", node, _RANK_HINT)
            return None
        ts = a["tensors"]
        if not isinstance(ts, tuple | list):
            self.error(f"assert_compatible() takes a list or tuple of tensors, got {ts!r}", node,
                       "pass a list or tuple of tensors, e.g. pyasc_mlir.assert_compatible([a, b])")
        ts = [self.need_tensor(t, "assert_compatible()", node) for t in ts]
        if not ts:
            return None
        if len({t.ndim for t in ts}) > 1:
            self.error(f"tensors of different ranks: shapes {_shapes(ts)}", node, _RANK_HINT)
        ex = a["exclude_dim"]
        k = None if ex is None else self.norm_axis(ex, ts[0], node)
        for i in range(ts[0].ndim):
            if i != k and len({t.shape[i] for t in ts}) > 1:
                where = "" if k is None else f" (exclude_dim={ex})"
                self.error(f"shapes {_shapes(ts)} differ in dim {i}{where}", node,
                           "the tensors must have equal sizes in every dim (except exclude_dim); "
                           "check the shapes the operator is called with")
        return None


def _lambda_loc(fn: types.FunctionType) -> SourceLoc:
    """Where ``fn`` (a lambda) is written: its code object's file and first line, the column of
    the ``lambda`` keyword on that line (0 when not found)."""
    code = fn.__code__
    text = linecache.getline(code.co_filename, code.co_firstlineno)
    return SourceLoc(code.co_filename, code.co_firstlineno, max(text.find("lambda"), 0))


def build_module(fn: Callable[..., Any], args: Sequence[TensorDesc | int | float | bool | str],
                 name: str | None = None) -> tuple[ModuleOp, list[str]]:
    """Compile the Python operator ``fn`` to a ``builtin.module`` of tensor-level ``asc`` IR.

    Args:
        fn: a plain ``def`` function (or bound method) defined in a source file.
        args: one entry per parameter, in order. A :class:`TensorDesc` becomes a function
            argument of type ``tensor<shape x f16|f32>`` (static dims; 0 = empty); any
            other value (int, float, bool, str, tuple, ...) is a compile-time constant baked
            into the IR.
        name: the symbol name of the ``func.func`` (default ``fn.__name__``).

    Returns:
        ``(module, result_dtypes)``: the module holds one ``func.func`` whose arguments are
        the TensorDesc args in order and whose results are the returned tensor(s) (a single
        tensor or a tuple), each of its logical dtype; ``result_dtypes`` names those dtypes
        (``"float16"``/``"float32"``). Every op in the body (and the function) carries
        ``asc.loc = "file:line:col"``.

    Raises:
        PyAscCompileError: for every mistake in the operator (unsupported syntax, Python
            control flow on tensor values, broadcast mismatches, bad axes or dtypes, unknown
            functions, recursion, wrong argument counts, returning masks or non-tensors), with
            the source location and a hint.
    """
    return _Compiler().build(fn, args, name)
