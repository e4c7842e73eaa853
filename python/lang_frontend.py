"""The kernel-language frontend: a ``@lang.kernel`` function -> a module of ``asc_loop`` IR.

Loops over ``range``/``lang.range`` become ``asc_loop.for`` ops (not unrolled); element reads
and writes become ``asc_loop.load``/``asc_loop.store``; Python ``if``/``while`` and helper
calls run at compile time (conditions must be compile-time values; helpers are inlined,
recursion on compile-time values included, up to :data:`MAX_DEPTH`). A scalar variable
assigned more than once with an assignment inside a loop (``acc = 0.0`` ... ``acc += x``)
becomes a rank-0 local array. ``asc-raise-loops`` then raises the loop nests to tensor-level
``asc`` (see ``passes/raise_loops.py``).

Errors (:class:`PyAscCompileError`, located at the node): unsupported statements
(``try``, ``raise``, ``global``, nested ``def``/``class``, ``eval``; ``with`` on anything
but ``lang.scope``: ``lang_objects``), a condition on a runtime
value (``if``, ``while`` on array elements), a variable that changes type, writes into a kernel
argument, bad indices, loop bounds that are not compile-time ints.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr, TensorType, f32
from xdsl.ir import Block, Operation, Region, SSAValue

from pyasc_mlir.dialects import asc, asc_loop
from pyasc_mlir.errors import PyAscCompileError, SourceLoc
from pyasc_mlir.frontend.ast_frontend import SHAPE_READ_ATTR
from pyasc_mlir.frontend.lang_dims import DimInt
from pyasc_mlir.frontend.lang_exprs import Arr, Idx, Reg, Scal
from pyasc_mlir.frontend.lang_index import DynRange
from pyasc_mlir.frontend.lang_objects import ObjectGen
from pyasc_mlir.frontend.lang_parallel import DistRange, ParallelGen
from pyasc_mlir.frontend.lang_precision import copy_array
from pyasc_mlir.frontend.lang_tile_types import Tile
from pyasc_mlir.frontend.lang_tiles import TileGen
from pyasc_mlir.frontend.source import parse_function
from pyasc_mlir.types import TensorDesc, dtype_name, ir_type

__all__ = ["MAX_DEPTH", "build_lang_module"]

MAX_DEPTH = 64
"""How deep helper calls may nest (recursion on compile-time values)."""

MAX_WHILE = 100_000
"""Iterations a compile-time ``while`` may run before it is reported as endless."""

_UNSUPPORTED = {
    "Try": "exceptions do not exist inside a kernel: check inputs before the call",
    "TryStar": "exceptions do not exist inside a kernel: check inputs before the call",
    "Raise": "check inputs before the call; a kernel cannot raise",
    "Global": "pass values as compile-time arguments instead of global statements",
    "Nonlocal": "pass values as compile-time arguments",
    "FunctionDef": "define helper functions at module level; they are inlined",
    "ClassDef": "define the class at module level and instantiate it in the kernel",
    "Delete": "local arrays live until the kernel returns; drop the del",
    "Import": "import at module level",
    "ImportFrom": "import at module level",
    "AsyncFor": "a kernel is synchronous",
    "AsyncWith": "a kernel is synchronous",
}


class _Return(Exception):
    def __init__(self, value: Any):
        self.value = value


def _loop_registers(body: Sequence[ast.stmt]) -> set[str]:
    """Names assigned at two or more places (or augmented) with one assignment inside a
    ``for`` loop: scalar variables that change inside a loop."""
    count: dict[str, int] = {}
    in_loop: set[str] = set()

    def visit(stmts: Sequence[ast.stmt], loop: bool) -> None:
        for s in stmts:
            targets: list[ast.expr] = []
            if isinstance(s, ast.Assign):
                targets = s.targets
            elif isinstance(s, ast.AugAssign | ast.AnnAssign):
                targets = [s.target]
                if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                    count[s.target.id] = count.get(s.target.id, 0) + 1
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                        count[n.id] = count.get(n.id, 0) + 1
                        if loop:
                            in_loop.add(n.id)
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(s, field, None)
                if isinstance(sub, list):
                    visit(sub, loop or isinstance(s, ast.For))

    visit(body, False)
    return {n for n in in_loop if count.get(n, 0) >= 2}


class LangGen(ParallelGen, TileGen, ObjectGen):
    """Generates the ``asc_loop`` module of one kernel (``workers``: a ``@lang.parallel``
    kernel's, 0 for others)."""

    def __init__(self, fn: types.FunctionType, precision: str = "default", workers: int = 0):
        self.fn = fn
        self.workers = workers
        self.mixed = precision == "mixed"
        self.readonly: set[SSAValue] = set()
        """Local copies of arguments (mixed precision): read-only as the arguments."""
        self.depth = 0
        self.registers: set[str] = set()
        self.scopes: list[str] = []

    # -- module ----------------------------------------------------------------------------
    def build(
        self, args: Sequence[object], dims: dict[str, int], name: str
    ) -> tuple[ModuleOp, list[str]]:
        node, file, delta = parse_function(self.fn, None)
        self.file, self.delta, self.globals = file, delta, self.fn.__globals__
        params = [a.arg for a in node.args.args]
        if len(params) != len(args) or node.args.vararg or node.args.kwarg:
            raise self.error(node, "kernels take positional parameters only", "drop *args")
        types_in = [
            TensorType(ir_type(dtype_name(a.dtype)), list(a.static_shape))
            for a in args
            if isinstance(a, TensorDesc)
        ]
        self.block = Block(arg_types=types_in)
        self.tiles_init(self.block)
        self.shape_read: ast.AST | None = None
        self.dims = {k: self.dim(v) for k, v in dims.items()}
        self.env = {k: v for k, v in self.dims.items() if k not in params}
        it = iter(self.block.args)
        for p, a in zip(params, args, strict=True):
            if isinstance(a, TensorDesc):
                shape = tuple(self.dim(d) for d in a.static_shape)
                arr = Arr(next(it), shape, dtype_name(a.dtype), False)
                if self.mixed and arr.dtype == "float32":
                    arr = copy_array(self, arr, "float16", node)
                    self.readonly.add(arr.value)
                self.env[p] = arr
            else:
                self.env[p] = a
        self.registers = _loop_registers(node.body)
        try:
            self.stmts(node.body)
            raise self.error(node, "the kernel returns nothing", "return the result array(s)")
        except _Return as r:
            results, dtypes = self.results(r.value, node)
        ret = func.ReturnOp(*results)
        ret.attributes[asc.LOC_ATTR] = StringAttr(str(self.loc(node)))
        self.block.add_op(ret)
        fop = func.FuncOp(name, (types_in, [v.type for v in results]), Region(self.block))
        fop.attributes[asc.LOC_ATTR] = StringAttr(str(self.loc(node)))
        fop.attributes.update(self.tile_attrs())
        if self.shape_read is not None:  # a dim used as a number: compiled per shape
            fop.attributes[SHAPE_READ_ATTR] = StringAttr(str(self.loc(self.shape_read)))
        return ModuleOp([fop]), dtypes

    def dim(self, size: int) -> DimInt:
        """A dim size that notes its use as a number (:mod:`lang_dims`)."""

        def read() -> None:
            if self.shape_read is None:
                self.shape_read = self.node_now

        return DimInt(size, read)

    node_now: ast.AST | None = None
    """The statement being compiled (where a dim read is reported)."""

    def results(self, value: Any, node: ast.AST) -> tuple[list[SSAValue], list[str]]:
        items = value if isinstance(value, tuple) else (value,)
        out: list[SSAValue] = []
        dtypes: list[str] = []
        for v in items:
            if self.workers and isinstance(v, Scal | int | float) and not isinstance(v, bool):
                v = self.parallel_result(v, self.ret_node or node)
            if not isinstance(v, Arr):
                raise self.error(
                    self.ret_node or node,
                    f"a kernel returns arrays, not {self.describe(v)}",
                    "store the value in an array: out = lang.empty((1,), lang.float32); "
                    "out[0] = value; return out",
                )
            if self.mixed and v.local and v.dtype == "float16":
                v = copy_array(self, v, "float32", self.ret_node or node)
            val = v.value
            if v.local:
                val = self.add(asc_loop.ToTensorOp(v.value), self.ret_node or node).results[0]
            out.append(val)
            dtypes.append(v.dtype)
        return out, dtypes

    ret_node: ast.AST | None = None

    # -- statements ------------------------------------------------------------------------
    def stmts(self, body: Sequence[ast.stmt]) -> None:
        for s in body:
            self.stmt(s)

    def stmt(self, node: ast.stmt) -> None:
        self.node_now = node
        kind = type(node).__name__
        if kind in _UNSUPPORTED:
            raise self.error(
                node, f"'{kind}' statements are not supported in a kernel", _UNSUPPORTED[kind]
            )
        method = getattr(self, f"stmt_{kind}", None)
        if method is None:
            raise self.error(node, f"{kind} statements are not supported in a kernel", "")
        method(node)

    def stmt_Pass(self, node: ast.Pass) -> None:
        return None

    def stmt_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant):
            return  # a docstring
        if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            if node.value.func.id in ("print", "breakpoint"):
                from pyasc_mlir.language import debug

                if debug.mode() is not None:  # PYASC_DEBUG=compare compiles it: skipped
                    return
                raise self.error(
                    node,
                    f"{node.value.func.id}() runs only in the debugger mode",
                    "run with PYASC_DEBUG=1 (or python -m pyasc_mlir.debugger script.py) to "
                    "execute the kernel body as Python, where print and breakpoint work",
                )
        self.expr(node.value)

    def stmt_Return(self, node: ast.Return) -> None:
        self.ret_node = node
        raise _Return(self.expr(node.value) if node.value is not None else None)

    def stmt_Assert(self, node: ast.Assert) -> None:
        if not self.truth(node.test):
            msg = self.expr(node.msg) if node.msg is not None else "assertion failed"
            raise self.error(node, f"compile-time assertion failed: {msg}", "")

    def stmt_If(self, node: ast.If) -> None:
        self.stmts(node.body if self.truth(node.test) else node.orelse)

    def stmt_While(self, node: ast.While) -> None:
        n = 0
        while self.while_test(node):
            n += 1
            if n > MAX_WHILE:
                raise self.error(node, f"the while loop ran {MAX_WHILE} times", "end it")
            self.stmts(node.body)
        self.stmts(node.orelse)

    def while_test(self, node: ast.While) -> bool:
        try:
            return self.truth(node.test)
        except PyAscCompileError as exc:
            if "runtime" not in exc.message:
                raise
            raise self.error(
                node,
                "a while loop whose condition reads runtime values (array elements) is not "
                "supported: while runs at compile time",
                "loop over range(N) with a compile-time bound; a data-dependent loop is not "
                "part of the kernel language",
            ) from None

    def stmt_For(self, node: ast.For) -> None:
        if self.tile_for(node):
            return
        it = self.expr(node.iter)
        if isinstance(it, DistRange):
            self.distributed_loop(node, it)
            return
        if node.orelse:
            raise self.error(node, "for ... else is not supported in a kernel", "drop the else")
        if isinstance(it, DynRange) and isinstance(node.target, ast.Name):  # range(i + 1)
            self.loop(node, asc_loop.ForOp(it.start, it.max_stop, it.step, it.stop.value), it)
            return
        if not isinstance(it, range):
            if isinstance(it, tuple | list):  # a compile-time sequence: unrolled
                for v in it:
                    self.assign(node.target, v, node)
                    self.stmts(node.body)
                return
            raise self.error(
                node.iter,
                f"a kernel loop runs over range(...) or lang.range(...), not {self.describe(it)}",
                "write for i in range(N) (N a compile-time int)",
            )
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "the loop variable must be a name", "for i in range(N)")
        self.loop(node, asc_loop.ForOp(it.start, it.stop, it.step), it)

    def loop(self, node: ast.For, loop: asc_loop.ForOp, it: range | DynRange) -> None:
        """Emit ``loop`` and its body (``node``'s) with the loop variable bound."""
        assert isinstance(node.target, ast.Name)
        self.add(loop, node)
        outer, self.block = self.block, loop.body.block
        old = self.env.get(node.target.id)
        stop = it.max_stop if isinstance(it, DynRange) else it.stop
        self.env[node.target.id] = Idx(loop.body.block.args[0], it.start, stop)
        try:
            self.stmts(node.body)
            self.add(asc_loop.YieldOp(), node)
        finally:
            self.block = outer
        if old is None:
            self.env.pop(node.target.id, None)
        else:
            self.env[node.target.id] = old

    def stmt_Assign(self, node: ast.Assign) -> None:
        if self.reduction_stmt(node) or self.slice_assign(node):
            return
        value = self.expr(node.value)
        for t in node.targets:
            self.assign(t, value, node)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None and not self.reduction_stmt(node):
            self.assign(node.target, self.expr(node.value), node)

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:
        if self.reduction_stmt(node) or self.slice_assign(node):
            return
        load = ast.copy_location(
            ast.BinOp(left=_as_load(node.target), op=node.op, right=node.value), node
        )
        ast.fix_missing_locations(load)
        self.assign(node.target, self.expr(load), node)

    def assign(self, target: ast.expr, value: Any, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target.id, value, target)
        elif isinstance(target, ast.Tuple | ast.List):
            if not isinstance(value, tuple) or len(value) != len(target.elts):
                raise self.error(target, "cannot unpack this value", "match the count")
            for t, v in zip(target.elts, value, strict=True):
                self.assign(t, v, node)
        elif isinstance(target, ast.Subscript):
            self.store(target, value)
        elif isinstance(target, ast.Attribute):
            self.assign_attribute(target, value)
        else:
            raise self.error(target, "cannot assign to this target", "")

    def assign_name(self, name: str, value: Any, node: ast.AST) -> None:
        old = self.env.get(name)
        if isinstance(value, Tile) and value.name is None:
            value.name = name
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if isinstance(old, Reg) and not self.visible(old):
            old = None  # a variable of an earlier, finished loop nest: a new one here
        if isinstance(old, Reg):
            if not (number or isinstance(value, Scal)):
                raise self.type_change(name, "a runtime scalar", value, node)
            self.add(asc_loop.StoreOp(self.scalar(value, node), old.buf, []), node)
            return
        if name in self.registers and (number or isinstance(value, Scal)):
            buf = self.add(asc_loop.AllocOp(MemRefType(f32, [])), node).results[0]
            self.add(asc_loop.StoreOp(self.scalar(value, node), buf, []), node)
            self.env[name] = Reg(buf)
            return
        if isinstance(old, Scal | Arr | Idx) and type(old) is not type(value):
            raise self.type_change(name, self.describe(old), value, node)
        self.env[name] = value

    def storage_dtype(self, dtype: str) -> str:
        return "float16" if self.mixed and dtype == "float32" else dtype

    def visible(self, reg: Reg) -> bool:
        """Whether ``reg``'s alloc is in the current block or one enclosing it."""
        home = reg.buf.owner.parent if isinstance(reg.buf.owner, Operation) else None
        block: Block | None = self.block
        while block is not None:
            if block is home:
                return True
            op = block.parent_op()
            block = op.parent if op is not None else None
        return False

    def type_change(self, name: str, was: str, value: Any, node: ast.AST) -> PyAscCompileError:
        return self.error(
            node,
            f"variable {name!r} changes type: it was {was}, now {self.describe(value)}",
            "use a new name for a value of another kind",
        )

    def store(self, target: ast.Subscript, value: Any) -> None:
        arr = self.expr(target.value)
        if self.tile_store(arr, target, value):
            return
        if not isinstance(arr, Arr):
            raise self.error(target, f"cannot write into {self.describe(arr)}", "")
        if not arr.local or arr.value in self.readonly:
            raise self.error(
                target,
                "kernel arguments are read-only",
                "write into a local array (out = lang.empty_like(a)) and return it",
            )
        idx = self.indices(arr, target)
        self.add(asc_loop.StoreOp(self.scalar(value, target), arr.value, idx), target)

    # -- helpers ---------------------------------------------------------------------------
    def call_helper(
        self, fn: types.FunctionType, args: list[Any], kw: dict[str, Any], node: ast.AST
    ) -> Any:
        if self.depth >= MAX_DEPTH:
            raise self.error(
                node,
                f"helper calls nest deeper than {MAX_DEPTH} (endless recursion?)",
                "recursion must end on a compile-time value",
            )
        where = self.loc(node)
        fnode, file, delta = parse_function(fn, where)
        params = [a.arg for a in fnode.args.args]
        defaults = dict(zip(reversed(params), reversed(fn.__defaults__ or ()), strict=False))
        bound: dict[str, Any] = dict(zip(params, args, strict=False)) | kw
        for p in params:
            if p not in bound:
                if p not in defaults:
                    raise self.error(node, f"{fn.__name__}() misses argument {p!r}", "")
                bound[p] = defaults[p]
        saved = (self.file, self.delta, self.env, self.globals, self.registers, self.ret_node)
        self.file, self.delta, self.env, self.globals = file, delta, bound, fn.__globals__
        self.registers = _loop_registers(fnode.body)
        self.depth += 1
        try:
            self.stmts(fnode.body)
            result: Any = None
        except _Return as r:
            result = r.value
        finally:
            self.depth -= 1
            (self.file, self.delta, self.env, self.globals, self.registers, self.ret_node) = saved
        return result


def _as_load(target: ast.expr) -> ast.expr:
    copy = ast.parse(ast.unparse(target), mode="eval").body
    ast.copy_location(copy, target)
    for n in ast.walk(copy):
        ast.copy_location(n, target)
        if hasattr(n, "ctx"):
            n.ctx = ast.Load()
    return copy


def build_lang_module(
    fn: Callable[..., Any],
    args: Sequence[object],
    name: str | None,
    dims: dict[str, int],
    precision: str = "default",
    workers: int = 0,
) -> tuple[ModuleOp, list[str]]:
    """The ``asc_loop`` module of kernel ``fn`` for ``args`` (``TensorDesc`` per array
    parameter, a value per compile-time one) with the signature's dims bound (``dims``,
    visible in the body as ints); ``precision``: ``"mixed"`` for a float32 interface around
    float16 storage (``lang_precision``); ``workers``: the cores of a ``@lang.parallel``
    kernel (``lang_parallel``). Returns ``(module, result dtype names)``.

    Raises:
        PyAscCompileError: see the module docstring."""
    f = getattr(fn, "fn", fn)
    if not isinstance(f, types.FunctionType):
        raise PyAscCompileError(f"{f!r} is not a def function", SourceLoc("<kernel>", 1, 0), "")
    from pyasc_mlir.language.types import check_results, read_signature

    module, dtypes = LangGen(f, precision, workers).build(args, dims, name or f.__name__)
    fop = next(op for op in module.ops if isinstance(op, func.FuncOp))
    shapes = [tuple(t.get_shape()) for t in fop.function_type.outputs.data]  # type: ignore[attr-defined]
    check_results(read_signature(f), list(zip(shapes, dtypes, strict=True)), dims, f.__name__)
    return module, dtypes
