"""The body of a ``@lang.parallel`` kernel, read from its source: a distributed reduction.

The form (``N`` a dim of the signature, ``x`` a 1-D array parameter)::

    acc = 0.0                                  # a number: the reduction's start value
    for i in lang.distributed_range(N):        # core b takes its share of 0..N
        acc += f(x[i])                         # or: acc = lang.maximum(acc, f(x[i]))
    return lang.allreduce(acc)                 # or allreduce(acc, op="max"); a [1] result

``f`` is built from ``x[i]``, numbers, ``+ - * /``, unary ``-`` and ``abs``/``lang.abs``.
:func:`read_plan` returns a :class:`ParallelPlan`: the element expression as C++ (over the
float ``v``) and as a Python function (the reference executor's). Anything else is a located
:class:`PyAscCompileError` naming the construct and the form above.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyasc_mlir.errors import PyAscCompileError, SourceLoc

__all__ = ["FORM", "ParallelPlan", "read_plan"]

FORM = (
    "write: acc = 0.0; for i in lang.distributed_range(N): acc += f(x[i]) (or acc = "
    "lang.maximum(acc, f(x[i]))); return lang.allreduce(acc[, op='max'])"
)
"""The supported form, for hints."""


@dataclass(frozen=True)
class ParallelPlan:
    """A distributed reduction: ``op`` (``"sum"`` or ``"max"``) over ``f(array[i])`` for
    ``i < dim``, starting at ``init``; ``cxx`` is ``f`` in C++ over the float ``v``, ``py``
    the same in Python (float32 NumPy scalars in, out)."""

    array: str
    dim: str
    acc: str
    init: float
    op: str
    cxx: str
    py: Callable[[Any], Any]


class _Reader:
    def __init__(self, file: str, line0: int):
        self.file = file
        self.line0 = line0

    def loc(self, node: ast.AST) -> SourceLoc:
        return SourceLoc(self.file, getattr(node, "lineno", 1) + self.line0, node.col_offset)  # type: ignore[attr-defined]

    def fail(self, node: ast.AST, what: str) -> PyAscCompileError:
        return PyAscCompileError(f"@lang.parallel: {what}", self.loc(node), FORM)


def _is_lang_call(node: ast.AST, name: str) -> bool:
    """``lang.<name>(...)`` or a bare ``<name>(...)``."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr == name) or (
        isinstance(f, ast.Name) and f.id == name
    )


def _number(r: _Reader, node: ast.expr) -> float:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_number(r, node.operand)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.Attribute) and node.attr == "inf":
        return math.inf
    raise r.fail(node, f"the accumulator's start {ast.unparse(node)!r} must be a number")


_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def _expr(r: _Reader, node: ast.expr, array: str, var: str) -> str:
    """``node`` as a C++ float expression over ``v`` (= ``array[var]``)."""
    if isinstance(node, ast.Subscript):
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == array
            and isinstance(node.slice, ast.Name)
            and node.slice.id == var
        ):
            return "v"
        raise r.fail(node, f"{ast.unparse(node)!r}: only {array}[{var}] may be read")
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return f"{float(node.value)!r}f"
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _expr(r, node.left, array, var), _expr(r, node.right, array, var)
        return f"({a} {_OPS[type(node.op)]} {b})"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return f"(-{_expr(r, node.operand, array, var)})"
    if _is_lang_call(node, "abs") and len(node.args) == 1:  # type: ignore[attr-defined]
        return f"std::fabs({_expr(r, node.args[0], array, var)})"  # type: ignore[attr-defined]
    raise r.fail(node, f"{ast.unparse(node)!r} is not supported in a distributed reduction")


def _py(cxx: str) -> Callable[[Any], Any]:
    """The C++ element expression as a Python function of a float32 ``v``."""
    import numpy as np

    text = cxx.replace("std::fabs", "np.abs")
    for lit in {w for w in text.replace("(", " ").replace(")", " ").split() if w.endswith("f")}:
        if lit[:-1].replace(".", "").replace("e-", "").replace("e+", "").isdigit():
            text = text.replace(lit, f"np.float32({lit[:-1]})")
    code = compile(text, "<parallel element>", "eval")
    return lambda v: eval(code, {"np": np, "v": v})  # noqa: S307 - our own text


def _loop(r: _Reader, node: ast.stmt, dims: set[str]) -> tuple[str, str, ast.stmt]:
    """(loop variable, dim, body statement) of the distributed loop."""
    if not isinstance(node, ast.For) or not _is_lang_call(node.iter, "distributed_range"):
        raise r.fail(node, "expected a `for i in lang.distributed_range(N):` loop here")
    call = node.iter
    assert isinstance(call, ast.Call)
    if len(call.args) != 1 or not isinstance(call.args[0], ast.Name) or call.args[0].id not in dims:
        raise r.fail(call, "lang.distributed_range takes one dim of the signature (N)")
    if not isinstance(node.target, ast.Name) or len(node.body) != 1 or node.orelse:
        raise r.fail(node, "the distributed loop has one loop variable and one statement")
    return node.target.id, call.args[0].id, node.body[0]


def _update(r: _Reader, st: ast.stmt, acc: str) -> tuple[str, ast.expr]:
    """(op, element expression) of ``acc += e`` / ``acc = lang.maximum(acc, e)``."""
    if (
        isinstance(st, ast.AugAssign)
        and isinstance(st.op, ast.Add)
        and isinstance(st.target, ast.Name)
        and st.target.id == acc
    ):
        return "sum", st.value
    if (
        isinstance(st, ast.Assign)
        and len(st.targets) == 1
        and isinstance(st.targets[0], ast.Name)
        and st.targets[0].id == acc
        and (_is_lang_call(st.value, "maximum") or _is_lang_call(st.value, "max"))
    ):
        args = st.value.args  # type: ignore[attr-defined]
        if len(args) == 2 and isinstance(args[0], ast.Name) and args[0].id == acc:
            return "max", args[1]
    raise r.fail(
        st,
        f"the loop body must update {acc!r}: `{acc} += ...` or `{acc} = lang.maximum({acc}, ...)`",
    )


def _allreduce(r: _Reader, st: ast.stmt, acc: str, op: str) -> None:
    if (
        not isinstance(st, ast.Return)
        or st.value is None
        or not _is_lang_call(st.value, "allreduce")
    ):
        raise r.fail(st, "the kernel must end with `return lang.allreduce(acc)`")
    call = st.value
    assert isinstance(call, ast.Call)
    if len(call.args) != 1 or not isinstance(call.args[0], ast.Name) or call.args[0].id != acc:
        raise r.fail(call, f"lang.allreduce takes the accumulator {acc!r}")
    want: object = "sum"
    for kw in call.keywords:
        if kw.arg != "op" or not isinstance(kw.value, ast.Constant):
            raise r.fail(kw, "lang.allreduce takes op='sum' or op='max' only")
        want = kw.value.value
    if want not in ("sum", "max"):
        raise r.fail(call, f"allreduce op {want!r} is not supported (use 'sum' or 'max')")
    if want != op:
        raise r.fail(call, f"allreduce op={want!r} does not match the loop's {op} update")


def read_plan(fn: Callable[..., Any], arrays: dict[str, int], dims: set[str]) -> ParallelPlan:
    """The :class:`ParallelPlan` of ``fn``'s body; ``arrays``: array parameter -> rank.

    Raises:
        PyAscCompileError: located at the first statement that is not of the form."""
    import inspect

    from pyasc_mlir.frontend.source import parse_function

    node, file, line0 = parse_function(inspect.unwrap(fn), None)
    r = _Reader(file, line0)
    body = [
        s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if len(body) != 3:
        raise r.fail(node, f"the body has {len(body)} statements, the form has 3")
    first = body[0]
    if not (
        isinstance(first, ast.Assign)
        and len(first.targets) == 1
        and isinstance(first.targets[0], ast.Name)
    ):
        raise r.fail(first, "the body starts with the accumulator: `acc = 0.0`")
    acc = first.targets[0].id
    init = _number(r, first.value)
    var, dim, st = _loop(r, body[1], dims)
    op, elem = _update(r, st, acc)
    reads = {
        n.value.id
        for n in ast.walk(elem)
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
    }
    one_d = [a for a in reads if arrays.get(a) == 1]
    if len(one_d) != 1 or len(reads) != 1:
        raise r.fail(elem, "the loop reads exactly one 1-D array parameter, x[i]")
    array = one_d[0]
    cxx = _expr(r, elem, array, var)
    _allreduce(r, body[2], acc, op)
    return ParallelPlan(array, dim, acc, init, op, cxx, _py(cxx))
