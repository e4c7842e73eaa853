"""Expressions of the kernel language (``pyasc_mlir.language``): values and the code that
evaluates an expression node to a compile-time Python value or to ``asc_loop`` IR.

Values: :class:`Arr` (a kernel argument, read-only ``tensor``, or a local array ``memref``),
:class:`Idx` (a loop variable), :class:`Scal` (an f32 scalar SSA value), :class:`Reg` (a
scalar variable that changes inside a loop: a rank-0 local array); anything else is a
compile-time Python value (ints, floats, tuples, dtypes, functions, modules).
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, StringAttr
from xdsl.ir import Block, Operation, SSAValue

from pyasc_mlir.dialects import asc, asc_loop
from pyasc_mlir.errors import PyAscCompileError, SourceLoc
from pyasc_mlir.frontend.lang_dims import note_reads
from pyasc_mlir.frontend.lang_names import missing_module_attribute
from pyasc_mlir.language import builtins as lb
from pyasc_mlir.language.tiles import TILE_FNS
from pyasc_mlir.language.types import Dim, DType

__all__ = ["Arr", "ExprGen", "Idx", "Partial", "Reg", "Scal"]


@dataclass(frozen=True)
class Arr:
    """An array: ``value`` a ``tensor`` (kernel argument, read-only) or a local ``memref``."""

    value: SSAValue
    shape: tuple[int, ...]
    dtype: str
    local: bool

    @property
    def ndim(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class Idx:
    """A loop variable (``index``) with its range ``[lo, hi)``."""

    value: SSAValue
    lo: int
    hi: int


@dataclass(frozen=True)
class Scal:
    """A runtime f32 scalar."""

    value: SSAValue


@dataclass(frozen=True)
class Reg:
    """A scalar variable assigned inside a loop: a rank-0 ``memref<f32>``."""

    buf: SSAValue


@dataclass(frozen=True)
class Partial:
    """A reduction variable after its distributed loop: each worker's partial."""

    reg: Reg
    kind: str
    init: Scal
    comp: Reg | None
    name: str

    def describe(self) -> str:
        return (
            f"the per-core partials of {self.name!r} (combine them first: "
            f"lang.allreduce({self.name}))"
        )


_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.MatMult: operator.matmul,
}
_SCALAR_KINDS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_MATH_UNARY = {
    math.exp: "exp",
    math.log: "log",
    math.sqrt: "sqrt",
    math.tanh: "tanh",
    math.erf: "erf",
    math.sin: "sin",
    math.cos: "cos",
    builtins.abs: "abs",
}
_SAFE_BUILTINS = {len, int, float, bool, tuple, list, min, max, abs, round, sum, divmod, pow}
RUNTIME = (Scal, Idx, Reg, Partial)

_LOOP_IF_HINT = (
    "loops are not unrolled, so a loop variable is a runtime value and Python control flow "
    "runs at compile time; split the loop at the condition instead (for i in range(4): ...; "
    "then for i in range(4, N): ...)"
)
_IF_HINT = (
    "Python control flow runs at compile time: conditions must be compile-time values; for a "
    "choice per element use lang.maximum/lang.minimum or arithmetic"
)


class ExprGen:
    """Evaluates expressions; the statement generator (``lang_frontend``) subclasses it.
    ``block``: where ops are appended; ``env``: the current scope."""

    file: str
    delta: int
    block: Block
    env: dict[str, Any]
    globals: dict[str, Any]
    dims: dict[str, int]

    # -- helpers ---------------------------------------------------------------------------
    def loc(self, node: ast.AST) -> SourceLoc:
        return SourceLoc(self.file, getattr(node, "lineno", 1) + self.delta, node.col_offset)  # type: ignore[attr-defined]

    def error(self, node: ast.AST, msg: str, hint: str) -> PyAscCompileError:
        return PyAscCompileError(msg, self.loc(node), hint)

    def add(self, op: Operation, node: ast.AST) -> Operation:
        op.attributes[asc.LOC_ATTR] = StringAttr(str(self.loc(node)))
        self.block.add_op(op)
        return op

    def scalar(self, v: Any, node: ast.AST) -> SSAValue:
        """An f32 SSA value for a Scal, a Reg (loaded) or a Python number."""
        if isinstance(v, Reg):
            v = self.read_reg(v, node)
        if isinstance(v, Scal):
            return v.value
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.error(
                node,
                f"expected a number, got {self.describe(v)}",
                "element values are numbers: array elements a[i, j], loop arithmetic, scalars",
            )
        return self.add(asc_loop.ConstOp(float(v)), node).results[0]

    def read_reg(self, r: Reg, node: ast.AST) -> Scal:
        return Scal(self.add(asc_loop.LoadOp(r.buf, []), node).results[0])

    def index(self, v: Any, dim: int, node: ast.AST) -> SSAValue:
        if isinstance(v, Idx):
            if v.lo < 0 or v.hi > dim:
                raise self.error(
                    node,
                    f"the loop variable runs over [{v.lo}, {v.hi}), outside the axis of size {dim}",
                    "loop over range(size) of the axis it indexes",
                )
            return v.value
        if isinstance(v, int) and not isinstance(v, bool):
            k = v + dim if v < 0 else v
            if not 0 <= k < dim:
                raise self.error(node, f"index {v} is out of range for an axis of size {dim}", "")
            op = arith.ConstantOp(IntegerAttr(k, IndexType()))
            return self.add(op, node).results[0]
        raise self.error(
            node,
            f"an index must be a loop variable or an int, not {self.describe(v)}",
            "index with loop variables (for i in range(N)), i + c / i - c with a compile-time "
            "int c, or int constants; slices are not supported yet",
        )

    @staticmethod
    def describe(v: Any) -> str:
        if isinstance(v, Arr):
            return f"an array {list(v.shape)}"
        if isinstance(v, Idx):
            return "a loop variable"
        if isinstance(v, Scal | Reg):
            return "a runtime scalar"
        if callable(getattr(v, "describe", None)):  # buffers, slices (lang_tile_types)
            return str(v.describe())
        return f"{type(v).__name__} {v!r}"[:80]

    # -- expressions ---------------------------------------------------------------------
    def expr(self, node: ast.expr) -> Any:
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            raise self.error(
                node,
                f"{type(node).__name__} expressions are not supported in a kernel",
                "use numbers, array elements a[i, j], arithmetic and lang.* functions",
            )
        return method(node)

    def expr_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def expr_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self.expr(e) for e in node.elts)

    expr_List = expr_Tuple

    def expr_Name(self, node: ast.Name) -> Any:
        if node.id in self.env:
            v = self.env[node.id]
            return self.read_reg(v, node) if isinstance(v, Reg) else v
        if node.id in self.globals:
            g = self.globals[node.id]
            return self.dims.get(g.name, g) if isinstance(g, Dim) else g
        if hasattr(builtins, node.id):
            return getattr(builtins, node.id)
        raise self.error(node, f"name {node.id!r} is not defined", "define it before its use")

    def expr_Attribute(self, node: ast.Attribute) -> Any:
        base = self.expr(node.value)
        got = self.object_attribute(base, node)
        if got is not NotImplemented:
            return got
        if isinstance(base, Arr):
            if node.attr in ("shape", "ndim"):
                return getattr(base, node.attr)
            raise self.error(node, f"arrays have no attribute {node.attr!r} here", "use .shape")
        if isinstance(base, RUNTIME):
            raise self.error(node, f"a runtime value has no attribute {node.attr!r}", "")
        try:
            return getattr(base, node.attr)
        except AttributeError:
            if isinstance(base, types.ModuleType):  # lang.exp2: the closest names
                called = node is getattr(self, "callee", None)
                msg, hint = missing_module_attribute(
                    base, ast.unparse(node.value), node.attr, called
                )
                raise self.error(node, msg, hint) from None
            raise self.error(
                node, f"{self.describe(base)} has no attribute {node.attr!r}", ""
            ) from None

    def expr_Subscript(self, node: ast.Subscript) -> Any:
        base = self.expr(node.value)
        tiled = self.subscript_hook(base, node)
        if tiled is not None:
            return tiled
        if not isinstance(base, Arr):
            if isinstance(base, RUNTIME):
                raise self.error(node, "a scalar cannot be indexed", "")
            return base[self.expr(node.slice)]
        return Scal(
            self.add(asc_loop.LoadOp(base.value, self.indices(base, node)), node).results[0]
        )

    def indices(self, arr: Arr, node: ast.Subscript) -> list[SSAValue]:
        sl = node.slice
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if any(isinstance(e, ast.Slice) for e in items):
            raise self.error(
                node,
                "slices are not supported in loop kernels yet",
                "write a loop over the elements: for i in range(N): c[i] = a[i]",
            )
        if len(items) != arr.ndim:
            raise self.error(
                node,
                f"{len(items)} indices for an array of rank {arr.ndim} (shape {list(arr.shape)})",
                "index every axis: a[i, j] for a 2-d array",
            )
        return [self.index(self.expr(e), d, e) for e, d in zip(items, arr.shape, strict=True)]

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.expr(node.operand)
        if not isinstance(v, RUNTIME):
            ops: dict[type[ast.unaryop], Callable[[Any], Any]] = {
                ast.USub: operator.neg,
                ast.UAdd: operator.pos,
                ast.Not: operator.not_,
            }
            return ops.get(type(node.op), operator.invert)(v)
        if isinstance(node.op, ast.USub):
            return self.unary("neg", v, node)
        if isinstance(node.op, ast.UAdd):
            return v
        raise self.error(node, "this unary operator is not supported on runtime values", _IF_HINT)

    def expr_BinOp(self, node: ast.BinOp) -> Any:
        a, b = self.expr(node.left), self.expr(node.right)
        if not isinstance(a, RUNTIME) and not isinstance(b, RUNTIME):
            if isinstance(a, Arr) or isinstance(b, Arr):
                raise self.error(
                    node,
                    "whole-array arithmetic is not part of the loop language",
                    "loop over the elements (c[i] = a[i] + b[i]), or write it with @pa.jit",
                )
            return _BINOPS[type(node.op)](a, b)
        if isinstance(a, Idx) or isinstance(b, Idx):
            return self.shifted(a, b, node)
        if isinstance(node.op, ast.Pow) and isinstance(b, int | float) and not isinstance(b, bool):
            return self.power(a, b, node)
        kind = _SCALAR_KINDS.get(type(node.op))
        if kind is None:
            raise self.error(
                node,
                f"operator {type(node.op).__name__} is not supported on runtime scalars",
                "use + - * /, ** with a constant exponent and lang.* functions",
            )
        return self.binary(kind, a, b, node)

    def shifted(self, a: Any, b: Any, node: ast.BinOp) -> Idx:
        """``i + c``, ``c + i`` or ``i - c`` (``c`` a compile-time int): an index."""
        add = isinstance(node.op, ast.Add)
        if isinstance(b, Idx) and add:
            a, b = b, a
        if not (
            isinstance(a, Idx)
            and isinstance(b, int)
            and not isinstance(b, bool)
            and (add or isinstance(node.op, ast.Sub))
        ):
            from pyasc_mlir.frontend.lang_index import index_arith

            other = index_arith(a, b, node.op, lambda op: self.add(op, node).results[0])
            if other is not None:  # c - i, 2 * i, i + j: affine, run as scalar loops
                return other
            raise self.error(
                node,
                "this arithmetic on loop variables is not supported",
                "index with a loop variable plus or minus a compile-time int: a[i + 1], a[i - k] "
                "(c - i, c * i and i + j also work, as scalar loops)",
            )
        c = b if add else -b
        const = self.add(arith.ConstantOp(IntegerAttr(abs(c), IndexType())), node).results[0]
        kind = arith.AddiOp if c >= 0 else arith.SubiOp
        value = self.add(kind(a.value, const), node).results[0]
        return Idx(value, a.lo + c, a.hi + c)

    def power(self, a: Any, p: float, node: ast.AST) -> Scal:
        if p == 0.5:
            return self.unary("sqrt", a, node)
        if p == -1:
            return self.unary("reciprocal", a, node)
        if float(p).is_integer() and 1 <= p <= 8:
            out = a
            for _ in range(int(p) - 1):
                out = self.binary("mul", out, a, node)
            return out if isinstance(out, Scal) else Scal(self.scalar(out, node))
        raise self.error(
            node,
            f"x ** {p} is not supported on runtime scalars",
            "use an integer exponent 1..8, 0.5, -1, or lang.exp(p * lang.log(x)) for x > 0",
        )

    def unary(self, kind: str, v: Any, node: ast.AST) -> Scal:
        return Scal(self.add(asc_loop.UnaryOp(kind, self.scalar(v, node)), node).results[0])

    def binary(self, kind: str, a: Any, b: Any, node: ast.AST) -> Scal:
        x, y = self.scalar(a, node), self.scalar(b, node)
        return Scal(self.add(asc_loop.BinaryOp(kind, x, y), node).results[0])

    def expr_Compare(self, node: ast.Compare) -> Any:
        left = self.expr(node.left)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = self.expr(comp)
            if isinstance(left, Idx) or isinstance(right, Idx):
                raise self.error(node, "a comparison of a loop variable in a kernel", _LOOP_IF_HINT)
            if isinstance(left, RUNTIME) or isinstance(right, RUNTIME):
                raise self.error(
                    node, "a comparison of runtime values (array elements) in a kernel", _IF_HINT
                )
            note_reads(left, right)  # a branch on a size bakes it in (lang_dims)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True

    def expr_BoolOp(self, node: ast.BoolOp) -> Any:
        is_and = isinstance(node.op, ast.And)
        v: Any = None
        for e in node.values:
            v = self.expr(e)
            if isinstance(v, RUNTIME):
                raise self.error(node, "and/or on runtime values", _IF_HINT)
            if bool(v) != is_and:
                return v
        return v

    def expr_IfExp(self, node: ast.IfExp) -> Any:
        return self.expr(node.body) if self.truth(node.test) else self.expr(node.orelse)

    def truth(self, node: ast.expr) -> bool:
        v = self.expr(node)
        if isinstance(v, (*RUNTIME, Arr)):
            raise self.error(node, f"a condition on {self.describe(v)}", _IF_HINT)
        return bool(v)

    def expr_Call(self, node: ast.Call) -> Any:
        self.callee = node.func  # an attribute missing here is a function (lang_names)
        fn = self.expr(node.func)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg is not None}
        if fn in TILE_FNS:
            return self.tile_call(TILE_FNS[fn], args, kwargs, node)
        if fn in lb.ALLOCS:
            return self.alloc(lb.ALLOCS[fn], args, kwargs, node)
        if fn is lb.cast:
            return self.cast(args, kwargs, node)
        runtime = any(isinstance(a, RUNTIME) for a in [*args, *kwargs.values()])
        kind = lb.UNARY.get(fn) or (_MATH_UNARY.get(fn) if runtime else None)
        if kind is not None and len(args) == 1 and not kwargs:
            return self.unary(kind, args[0], node)
        bkind = lb.BINARY.get(fn) or ({max: "max", min: "min"}.get(fn) if runtime else None)
        if bkind is not None and len(args) == 2 and not kwargs:
            return self.binary(bkind, args[0], args[1], node)
        if fn in (range, lb.range):
            return self.make_range(args, node)
        if fn is lb.distributed_range:
            return self.distributed_range(args, kwargs, node)
        if fn is lb.allreduce:
            return self.allreduce(args, kwargs, node)
        got = self.call_object(fn, args, kwargs, node)
        if got is not NotImplemented:
            return got
        if (getattr(fn, "__module__", "") or "").startswith("pyasc_mlir"):
            raise self.error(
                node,
                f"{getattr(fn, '__name__', fn)}() is not a kernel-language function",
                "inside @lang.kernel use lang.* (lang.exp, lang.empty, ...); the pa.* "
                "tensor functions belong to @pa.jit operators",
            )
        if isinstance(fn, types.FunctionType) and not _is_library(fn):
            return self.call_helper(fn, args, kwargs, node)
        if runtime or any(isinstance(a, Arr) for a in args):
            raise self.error(
                node,
                f"{getattr(fn, '__name__', fn)}() cannot take runtime values in a kernel",
                "use lang.* functions (lang.exp, lang.tanh, lang.maximum, ...) on elements",
            )
        if fn in _SAFE_BUILTINS or isinstance(fn, type) or _is_library(fn):
            note_reads(*args, *kwargs.values())  # min(N, 8), float(N): the size as a number
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - a compile-time call failing
                raise self.error(node, f"{exc}", "") from None
        raise self.error(
            node,
            f"{getattr(fn, '__name__', fn)}() cannot be called in a kernel",
            "kernels call lang.* functions, math functions and helper functions written with "
            "def (inlined); eval, exec, I/O and other Python builtins are not supported",
        )

    def make_range(self, args: list[Any], node: ast.AST) -> Any:
        from pyasc_mlir.frontend.lang_index import make_dyn_range

        if not 1 <= len(args) <= 3:
            raise self.error(
                node,
                f"range takes 1 to 3 arguments, got {len(args)}",
                "range(stop), range(start, stop) or range(start, stop, step)",
            )
        step = args[2] if len(args) == 3 else 1
        if isinstance(step, int) and not isinstance(step, bool) and step <= 0:
            raise self.error(
                node,
                f"a kernel loop needs a positive step, got {step}",
                "count upwards with a step >= 1 (a zero step never ends)"
                if step == 0
                else "count upwards with a step >= 1 and index from the end (a[N - 1 - i])",
            )
        dyn = make_dyn_range(args)  # range(i + 1): a triangular loop, run as scalar loops
        if dyn is not None:
            return dyn
        if not all(isinstance(a, int) and not isinstance(a, bool) for a in args) or not args:
            raise self.error(
                node,
                "loop bounds must be compile-time ints",
                "loop over range(N) with N a dim of the signature or a constant",
            )
        return range(*args)

    def alloc(self, kind: str, args: list[Any], kw: dict[str, Any], node: ast.AST) -> Arr:
        if kind == "empty_like":
            like = args[0] if args else kw.get("x")
            if not isinstance(like, Arr):
                raise self.error(node, "empty_like takes an array", "lang.empty_like(a)")
            dt = args[1] if len(args) > 1 else kw.get("dtype")
            shape: Any = like.shape
            dtype, fill = (dt.name if dt else like.dtype), None
        else:
            names = ["shape", "value", "dtype"] if kind == "full" else ["shape", "dtype"]
            got = dict(zip(names, args, strict=False)) | kw
            shape = got.get("shape")
            shape = (shape,) if isinstance(shape, int) else shape
            dt = got.get("dtype", lb.float32)
            if not isinstance(dt, DType):
                raise self.error(node, f"{dt!r} is not a dtype", "use lang.float16/float32")
            dtype = dt.name
            fill = {"zeros": 0.0, "ones": 1.0, "empty": None}.get(kind, got.get("value"))
            if kind == "full" and not isinstance(fill, int | float):
                raise self.error(node, "lang.full needs a compile-time number", "")
        if not isinstance(shape, tuple) or not all(isinstance(d, int) and d > 0 for d in shape):
            raise self.error(
                node, f"a local array's shape must be positive ints, got {shape!r}", ""
            )
        from pyasc_mlir.types import ir_type

        dtype = self.storage_dtype(dtype)
        if dtype not in ("float16", "float32", "bfloat16"):
            raise self.error(node, f"local arrays of {dtype} are not supported", "")
        from xdsl.dialects.builtin import MemRefType

        op = asc_loop.AllocOp(MemRefType(ir_type(dtype), list(shape)), fill)
        return Arr(self.add(op, node).results[0], tuple(shape), dtype, True)

    def cast(self, args: list[Any], kw: dict[str, Any], node: ast.AST) -> Any:
        x, dt = (args + [kw.get("dtype")])[:2] if len(args) < 2 else args[:2]
        if not isinstance(dt, DType):
            raise self.error(
                node, "lang.cast(x, dtype) needs a dtype", "lang.cast(x, lang.float16)"
            )
        if isinstance(x, Arr):
            raise self.error(node, "lang.cast of a whole array", "cast elements inside a loop")
        if not isinstance(x, RUNTIME):
            return lb.cast(x, dt).item()
        value = self.scalar(x, node)  # a variable is read here: the cast is its value now
        if dt.name == "float32":
            return Scal(value)  # kernel-language scalars are f32 values: nothing to round
        from pyasc_mlir.types import ir_type

        return Scal(self.add(asc_loop.RoundOp(value, ir_type(dt.name)), node).results[0])

    def call_helper(
        self, fn: types.FunctionType, args: list[Any], kw: dict[str, Any], node: ast.AST
    ) -> Any:
        raise NotImplementedError  # the statement generator inlines helpers

    def subscript_hook(self, base: Any, node: ast.Subscript) -> Any:
        """A buffer or slice subscript (``python/lang_tiles.py``), else ``None``."""
        return None

    def tile_call(self, kind: str, args: list[Any], kw: dict[str, Any], node: ast.Call) -> Any:
        raise NotImplementedError  # the statement generator compiles tiles

    def storage_dtype(self, dtype: str) -> str:
        """The dtype a local array declared ``dtype`` holds (``lang_precision``: mixed)."""
        return dtype

    def object_attribute(self, base: Any, node: ast.Attribute) -> Any:
        """An attribute of a kernel object (``lang_objects``); ``NotImplemented`` here."""
        return NotImplemented

    def call_object(self, fn: Any, args: list[Any], kw: dict[str, Any], node: ast.AST) -> Any:
        """A class or method call (``lang_objects``); ``NotImplemented`` here."""
        return NotImplemented

    def distributed_range(self, args: list[Any], kw: dict[str, Any], node: ast.AST) -> Any:
        """``lang.distributed_range`` (``lang_parallel``)."""
        raise NotImplementedError

    def allreduce(self, args: list[Any], kw: dict[str, Any], node: ast.AST) -> Any:
        """``lang.allreduce`` (``lang_parallel``)."""
        raise NotImplementedError


def _is_library(fn: Any) -> bool:
    mod = getattr(fn, "__module__", "") or ""
    return mod.split(".")[0] in ("math", "numpy", "operator")
