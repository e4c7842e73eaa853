"""Dispatch of calls and Python operators: to the semantics layer when a tensor is involved,
to Python (at compile time) when every operand is a compile-time value.

:class:`Dispatcher` decides what ``f(...)``, ``x.method(...)``, ``a + b``, ``a < b`` and
``-x`` mean: a ``pyasc_mlir`` op (:data:`~pyasc_mlir.frontend.names.MARKERS`), a tensor
method, a builtin on tensors, a user helper (inlined by the code generator), or a plain Python
call.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import operator
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

from pyasc_mlir import ops
from pyasc_mlir.dialects import opset
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.frontend import reads
from pyasc_mlir.frontend.context import Component, FrontendContext
from pyasc_mlir.frontend.dispatch_torch import TorchCalls
from pyasc_mlir.frontend.hints import CALL_HINT, PY_HINT
from pyasc_mlir.frontend.names import (
    MARKERS,
    OP_NAMES,
    REDUCE,
    SHAPE_HELPERS,
    TORCH,
    TORCH_METHODS,
    UNARY,
)
from pyasc_mlir.frontend.semantic_torch import TorchSemantic
from pyasc_mlir.frontend.signature import bind_error
from pyasc_mlir.frontend.spellings import keyword_hint, name_hint, unknown_keyword
from pyasc_mlir.frontend.values import SymbolicTensor, TensorMethod, contains_tensor, is_int

__all__ = ["CMP_PREDICATES", "Dispatcher", "Inliner", "OP_SYMBOLS", "TENSOR_BINOPS"]

Inliner = Callable[[types.FunctionType, list[Any], dict[str, Any], ast.AST], Any]
"""Evaluates a user helper ``fn(*args, **kwargs)`` called at ``node`` (inlining its body)."""

_STRUCTURAL = (
    builtins.len,
    builtins.enumerate,
    builtins.zip,
    builtins.list,
    builtins.tuple,
    builtins.reversed,
    builtins.isinstance,
)
"""Builtins that only look at the structure of a tuple or list of tensors (``len(xs)``,
``enumerate(xs)``); they run in Python at compile time."""

_PY_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
OP_SYMBOLS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.BitAnd: "&",
    ast.MatMult: "@",
}
TENSOR_BINOPS = {
    t: r.kind
    for t, sym in OP_SYMBOLS.items()
    for r in opset.BINARY.values()
    if r.py_operator == sym
}
CMP_PREDICATES: dict[type[ast.cmpop], str] = {
    ast.Lt: "lt",
    ast.Gt: "gt",
    ast.LtE: "le",
    ast.GtE: "ge",
    ast.Eq: "eq",
    ast.NotEq: "ne",
}
_PY_CMPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.Gt: operator.gt,
    ast.LtE: operator.le,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_PY_UNARYOPS: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}


def _callee_name(callee: Any) -> str:
    """``callee``'s qualified name for messages (``module.name``; no module for builtins)."""
    name = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None)
    if name is None:
        return type(callee).__name__
    mod = getattr(callee, "__module__", None)
    if mod and mod not in ("builtins", "__main__") and isinstance(mod, str):
        return f"{mod}.{name}"
    return str(name)


def _plain_signature(fn: Callable[..., Any]) -> inspect.Signature:
    """``fn``'s signature without annotations, for hints."""
    sig = inspect.signature(fn)
    return sig.replace(
        parameters=[p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()],
        return_annotation=inspect.Signature.empty,
    )


def _dims(args: list[Any]) -> Any:
    """The dims of ``x.f(d0, d1, ...)`` or ``x.f((d0, d1, ...))`` (``reshape``, ``permute``):
    a lone tuple or list argument, else the arguments themselves."""
    return args[0] if len(args) == 1 and isinstance(args[0], tuple | list) else args


class Dispatcher(Component):
    """Resolves calls and operators for the code generator."""

    def __init__(self, ctx: FrontendContext, sem: TorchSemantic, inline: Inliner) -> None:
        super().__init__(ctx)
        self.sem = sem
        self.inline = inline
        self.torch = TorchCalls(ctx, sem)

    # ------------------------------------------------------------------ operators

    def binop(self, op: ast.operator, a: Any, b: Any, node: ast.AST) -> Any:
        """``a <op> b`` for a binary operator: tensor arithmetic, ``**``, ``@`` or mask logic
        when a tensor is involved, else the Python result."""
        if not (isinstance(a, SymbolicTensor) or isinstance(b, SymbolicTensor)):
            return self.sem.pyop(_PY_BINOPS[type(op)], [a, b], node)
        sym = OP_SYMBOLS[type(op)]
        if isinstance(op, ast.Pow):
            return self.sem.power(a, b, node)
        if type(op) in TENSOR_BINOPS:
            return self.sem.binary(TENSOR_BINOPS[type(op)], a, b, node, sym)
        if isinstance(op, ast.BitAnd | ast.BitOr | ast.BitXor):
            return self.sem.mask_logic(sym, a, b, node)
        if isinstance(op, ast.MatMult):
            return self.sem.matmul(a, b, False, False, node)
        self.error(
            f"operator '{sym}' is not supported on tensors",
            node,
            "on tensors: + - * / ** @, comparisons, and & | ^ ~ on boolean masks",
        )

    def compare(self, op: ast.cmpop, a: Any, b: Any, node: ast.AST) -> Any:
        """``a <op> b``: a boolean mask when a tensor is involved, else the Python result."""
        if not (isinstance(a, SymbolicTensor) or isinstance(b, SymbolicTensor)):
            return self.sem.pyop(_PY_CMPS[type(op)], [a, b], node)
        if isinstance(op, ast.Is | ast.IsNot):
            return (a is b) == isinstance(op, ast.Is)
        if type(op) not in CMP_PREDICATES:
            self.error(
                "'in' / 'not in' are not supported on tensors",
                node,
                "compare elementwise with == and combine the masks with |",
            )
        return self.sem.compare(CMP_PREDICATES[type(op)], a, b, node)

    def unaryop(self, op: ast.unaryop, v: Any, node: ast.UnaryOp) -> Any:
        """``-v``, ``+v``, ``~v`` or ``not v``."""
        if isinstance(v, SymbolicTensor):
            if isinstance(op, ast.USub):
                self.sem.check_arith(v, node, "-")
                return self.sem.unary("neg", v, node)
            if isinstance(op, ast.UAdd):
                self.sem.check_arith(v, node, "+")
                return v
            if isinstance(op, ast.Not):
                self.runtime_error("'not'", node)
            if v.dtype == "bool":
                return self.sem.mask_not(v, node)
            self.error(
                "'~' is only supported on boolean masks",
                node,
                "'~' negates a boolean mask such as ~(x > 0); use -x to negate numbers",
            )
        if isinstance(op, ast.Not) and contains_tensor(v):
            self.runtime_error("'not'", node)
        return self.sem.pyop(_PY_UNARYOPS[type(op)], [v], node)

    # ------------------------------------------------------------------ calls

    def call(self, callee: Any, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        """``callee(*args, **kwargs)`` at ``node``: a ``pyasc_mlir`` op, a tensor method, a
        builtin, an inlined helper, or a compile-time Python call."""
        if isinstance(callee, TensorMethod):
            return self.call_method(callee, args, kwargs, node)
        if not callable(callee):
            self.error(f"'{type(callee).__name__}' object is not callable", node, CALL_HINT)
        if isinstance(callee, types.FunctionType) and callee in MARKERS:
            return self.call_op(MARKERS[callee], callee, args, kwargs, node)
        if callee is builtins.print:
            self.error(
                "print() is not supported in a compiled operator",
                node,
                "the operator runs on the device; return the value, or run with "
                "backend='interp' and inspect the results",
            )
        if not (contains_tensor(args) or contains_tensor(kwargs)) or callee is isinstance:
            return self.pycall(callee, args, kwargs, node)
        if callee is builtins.abs and len(args) == 1 and not kwargs:
            return self.sem.unary("abs", args[0], node)
        if callee is builtins.pow and len(args) == 2 and not kwargs:
            return self.sem.power(args[0], args[1], node)
        if callee is builtins.len and len(args) == 1 and isinstance(args[0], SymbolicTensor):
            if not args[0].shape:
                self.error(
                    "len() of a 0-d tensor",
                    node,
                    "a 0-d tensor has no length; read its dims with x.shape",
                )
            self.note_shape_read(node)
            return args[0].shape[0]
        if any(callee is c for c in _STRUCTURAL) and not any(
            isinstance(a, SymbolicTensor) for a in args
        ):
            return self.pycall(callee, args, kwargs, node)  # len(xs), enumerate(xs), ...
        if any(callee is c for c in (builtins.bool, builtins.int, builtins.float)):
            self.runtime_error(f"{callee.__name__}() of a tensor", node)
        if isinstance(callee, types.MethodType) and isinstance(callee.__func__, types.FunctionType):
            return self.inline(callee.__func__, [callee.__self__, *args], kwargs, node)
        if isinstance(callee, types.FunctionType):
            return self.inline(callee, args, kwargs, node)
        self.unknown_function(callee, node)

    def pycall(
        self, callee: Any, args: Sequence[Any], kwargs: Mapping[str, Any], node: ast.AST
    ) -> Any:
        """Call ``callee`` in Python (all arguments are compile-time values)."""
        if not callable(callee):
            self.error(f"'{type(callee).__name__}' object is not callable", node, CALL_HINT)
        reads.note_python_call(callee)
        try:
            return callee(*args, **kwargs)
        except PyAscCompileError:
            raise
        except Exception as exc:
            self.error(
                f"calling {_callee_name(callee)}() at compile time raised "
                f"{type(exc).__name__}: {exc}",
                node,
                PY_HINT,
            )

    def unknown_function(self, callee: Any, node: ast.AST) -> NoReturn:
        """Raise the error for calling ``callee``, which has no meaning on tensors, with a hint
        naming the ``pyasc_mlir`` function to use instead when there is one."""
        name = getattr(callee, "__name__", None)
        alt = {"max": "maximum", "min": "minimum"}.get(name or "", name)
        if any(callee is c for c in (builtins.max, builtins.min, builtins.sum)):
            hint = (
                f"use pyasc_mlir.{alt}() (elementwise) or pyasc_mlir.{name}(x, axis) (reduction)"
                if alt != name
                else f"use pyasc_mlir.{name}(x, axis)"
            )
        elif name in OP_NAMES:
            hint = f"use pyasc_mlir.{name}()"
        else:
            hint = (
                name_hint(name or "", OP_NAMES) + "; helper functions written with def are inlined"
            )
        self.error(f"unknown function {_callee_name(callee)}() on tensor arguments", node, hint)

    def call_method(
        self, m: TensorMethod, args: list[Any], kwargs: dict[str, Any], node: ast.AST
    ) -> Any:
        """``x.<m.name>(*args, **kwargs)`` for a tensor method (:data:`METHODS`)."""
        if m.name == "reshape":
            if kwargs:
                self.error(
                    "reshape() takes the new shape only",
                    node,
                    "call x.reshape(d0, d1, ...) or x.reshape((d0, d1, ...))",
                )
            return self.sem.reshape(m.tensor, _dims(args), node)
        if m.name == "transpose":
            if kwargs or len(args) != 2 or not all(is_int(a) for a in args):
                self.error(
                    f"x.transpose(d0, d1) swaps two dims given as compile-time ints, got {args!r}",
                    node,
                    "use x.permute(*dims) for a full permutation",
                )
            perm = list(range(m.tensor.ndim))
            d0, d1 = (self.sem.norm_axis(int(a), m.tensor, node) for a in args)
            perm[d0], perm[d1] = perm[d1], perm[d0]
            return self.sem.transpose(m.tensor, perm, node)
        if m.name == "permute":
            if kwargs:
                self.error(
                    "permute() takes the dims only",
                    node,
                    "call x.permute(d0, d1, ...) with compile-time ints",
                )
            return self.sem.transpose(m.tensor, _dims(args), node)
        if m.name in TORCH_METHODS:
            return self.torch.method(m.name, m.tensor, args, kwargs, node)
        name = "cast" if m.name == "astype" else m.name
        return self.call_op(name, getattr(ops, name), [m.tensor, *args], kwargs, node)

    def call_op(
        self,
        name: str,
        marker: Callable[..., Any],
        args: list[Any],
        kwargs: dict[str, Any],
        node: ast.AST,
    ) -> Any:
        """``pyasc_mlir.<name>(*args, **kwargs)``: bind to the marker's signature and
        build the op."""
        try:
            bound = inspect.signature(marker).bind(*args, **kwargs)
        except TypeError as exc:
            bad = unknown_keyword(exc)
            params = list(inspect.signature(marker).parameters)
            hint = None if bad is None else keyword_hint(bad, params)
            self.error(
                bind_error(f"pyasc_mlir.{name}()", exc),
                node,
                hint or f"signature: pyasc_mlir.{name}{_plain_signature(marker)}",
            )
        bound.apply_defaults()
        a = bound.arguments
        if name in UNARY:
            return self.sem.unary(name, a["x"], node)
        if name in ("maximum", "minimum"):
            return self.sem.binary(name[:3], a["a"], a["b"], node)
        if name == "where":
            return self.sem.select(a["cond"], a["a"], a["b"], node)
        if name == "cast":
            return self.sem.cast(a["x"], a["dtype"], node)
        if name == "matmul":
            return self.sem.matmul(a["a"], a["b"], a["transpose_a"], a["transpose_b"], node)
        if name == "transpose":
            return self.torch.transpose(a, node)
        if name == "concat":
            return self.sem.concat(a["tensors"], self.torch.pick(a, "dim", "axis", 0, node), node)
        if name == "match_shape" and isinstance(a["pattern"], SymbolicTensor):
            return self.sem.match_dims(a["x"], a["pattern"], a["dim"], node)
        if name == "match_shape" and a["dim"] is not None:
            self.error(
                "match_shape(x, pattern, dim=) takes dim= only with a tensor to match",
                node,
                "match_shape(x, (None, 64)) checks a pattern; match_shape(x, mask, dim=-1) "
                "checks mask against x's shape without that dim",
            )
        if name in SHAPE_HELPERS:
            return self.sem.shape_helper(name, a, node)
        if name in REDUCE:
            return self.torch.reduction(name, a, kwargs, node)
        assert name in TORCH, name
        return self.torch.call(name, a, node)
