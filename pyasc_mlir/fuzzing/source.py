"""Python source of a fuzz :class:`~pyasc_mlir.fuzzing.program.Program`.

The frontend reads source, so every program is rendered as a module (``import pyasc_mlir as
pa``, inlined helpers, one function). A node's ``form`` parameter picks among equivalent
spellings (``abs(x)`` / ``pa.abs(x)`` / ``x.abs()``, augmented assignment, a helper call, a
``-1`` in a reshape, ...), so the generator covers the frontend's spellings as well as its ops.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pyasc_mlir.fuzzing.program import GUARDED, METHOD_FNS, Node, Program

_HELPERS = {
    "add": "def _fz_add(a, b):\n    return a + b\n",
    "mul": "def _fz_mul(a, b):\n    return a * b\n",
    "sub": "def _fz_sub(a, b):\n    return a - b\n",
    "scale": "def _fz_scale(a, k=2.0):\n    for _ in range(1):\n        a = a * k\n    return a\n",
}
_BINOP_SYM = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
CMP_SYM = {"lt": "<", "gt": ">", "le": "<=", "ge": ">=", "eq": "==", "ne": "!="}
"""Comparison predicates and their Python operators (the generator draws from its keys)."""


def _num(x: Any) -> str:
    if isinstance(x, bool):
        x = int(x)
    if isinstance(x, int):
        return str(x)
    r = repr(float(x))
    return f"({r})" if r.startswith("-") else r


def _guard_src(a: str, guard: str, c: float) -> str:
    if guard == "abs":
        return f"(abs({a}) + {_num(c)})"
    if guard == "max":
        return f"pa.maximum({a}, {_num(c)})"
    if guard == "where":
        return f"pa.where({a} > {_num(c)}, {a}, {_num(c)})"
    return a


def _axis_src(axis: Any) -> str:
    return repr(tuple(axis)) if isinstance(axis, tuple | list) else repr(axis)


def _unary_line(n: Node, out: str, a: str, form: int) -> str:
    fn = n.p("fn")
    g = _guard_src(a, n.p("guard", "none"), n.p("c", 0.0)) if fn in GUARDED else a
    if fn == "neg":
        return f"{out} = -{a}"
    if fn == "abs":
        return f"{out} = " + ("abs({})", "pa.abs({})", "{}.abs()")[form % 3].format(a)
    if fn == "square":
        return f"{out} = " + ("{0} ** 2", "{0} * {0}", "pow({0}, 2)")[form % 3].format(a)
    if fn == "cube":
        return f"{out} = {a} ** 3"
    if fn == "recip":
        return f"{out} = " + ("1.0 / {}", "{} ** -1", "1 / {}")[form % 3].format(g)
    if fn == "sqrt" and form % 2:
        return f"{out} = {g} ** 0.5"
    if fn == "rsqrt" and form % 3 == 1:
        return f"{out} = {g} ** -0.5"
    if fn == "rsqrt" and form % 3 == 2:
        return f"{out} = 1.0 / pa.sqrt({g})"
    if form % 2 and fn not in GUARDED and fn in METHOD_FNS:
        return f"{out} = {g}.{fn}()"
    return f"{out} = pa.{fn}({g})"


def _binary_lines(n: Node, out: str, a: str, b: str, form: int, helpers: set[str]) -> list[str]:
    fn = n.p("fn")
    if fn == "div":
        b = _guard_src(b, n.p("guard", "none"), n.p("c", 0.0))
    if fn in ("maximum", "minimum"):
        return [f"{out} = pa.{fn}({a}, {b})"]
    sym = _BINOP_SYM[fn]
    if form % 4 == 1 and n.args[0][0] == "v":
        return [f"{out} = {a}", f"{out} {sym}= {b}"]
    if form % 4 == 2 and fn in ("add", "mul", "sub"):
        helpers.add(fn)
        return [f"{out} = _fz_{fn}({a}, {b})"]
    return [f"{out} = {a} {sym} {b}"]


def _node_lines(
    n: Node, out: str, name: Callable[[tuple[str, Any]], str], helpers: set[str]
) -> list[str]:
    k, form = n.kind, n.p("form", 0)
    args = [name(a) for a in n.args]
    if k == "unary":
        (a,) = args
        return [_unary_line(n, out, a, form)]
    if k == "binary":
        a, b = args
        return _binary_lines(n, out, a, b, form, helpers)
    if k == "compare":
        a, b = args
        return [f"{out} = {a} {CMP_SYM[n.p('pred')]} {b}"]
    if k == "logic":
        fn = n.p("fn")
        if fn == "not":
            return [f"{out} = ~{args[0]}"]
        return [f"{out} = {args[0]} {dict(and_='&', or_='|', xor='^')[fn]} {args[1]}"]
    if k == "where":
        return [f"{out} = pa.where({args[0]}, {args[1]}, {args[2]})"]
    if k == "cast":
        (a,) = args
        to = n.p("to")
        return [
            f"{out} = "
            + ("pa.cast({}, pa.{})", "{}.astype(pa.{})", "pa.cast({}, '{}')")[form % 3].format(
                a, to
            )
        ]
    if k == "reduce":
        (a,) = args
        fn, axis, keep = n.p("fn"), n.p("axis"), n.p("keepdim")
        extra = ", unbiased=True" if n.p("unbiased") else ""
        ax = _axis_src(axis)
        if axis is None and not keep and form % 2 == 0:
            return [f"{out} = {a}.{fn}({extra[2:]})"]
        if form % 3 == 1:
            return [f"{out} = pa.{fn}({a}, {ax}, {keep}{extra})"]
        return [f"{out} = {a}.{fn}({ax}, keepdim={keep}{extra})"]
    if k == "reshape":
        (a,) = args
        shape = list(n.p("shape"))
        if form % 2 and len(shape) > 1 and math.prod(shape) > 0:
            i = max(range(len(shape)), key=lambda j: shape[j])
            shape[i] = -1
            return [f"{out} = {a}.reshape({', '.join(map(str, shape))})"]
        return [f"{out} = {a}.reshape({tuple(shape)!r})"]
    if k == "softmax":
        (a,) = args
        return [
            f"{out}_e = pa.exp({a} - {a}.max(-1, keepdim=True))",
            f"{out} = {out}_e / {out}_e.sum(-1, keepdim=True)",
        ]
    if k == "layernorm":
        (a,) = args
        eps = _num(n.p("eps"))
        return [
            f"{out}_d = {a} - {a}.mean(-1, keepdim=True)",
            f"{out} = {out}_d * pa.rsqrt({a}.var(-1, keepdim=True) + {eps})",
        ]
    if k == "logsumexp":
        (a,) = args
        return [
            f"{out}_m = {a}.max(-1, keepdim=True)",
            f"{out} = {out}_m + pa.log(pa.exp({a} - {out}_m).sum(-1, keepdim=True))",
        ]
    raise ValueError(k)


def render(p: Program) -> str:
    """The Python source of the program (``import pyasc_mlir as pa`` + helpers + the op)."""
    n_in = len(p.inputs)

    def vname(i: int) -> str:
        return f"x{i}" if i < n_in else f"t{i - n_in}"

    def name(a: tuple[str, Any]) -> str:
        if a[0] == "s":
            i, d = a[1]
            return f"len({vname(i)})" if d == 0 else f"{vname(i)}.shape[{d}]"
        return vname(a[1]) if a[0] == "v" else _num(a[1])

    helpers: set[str] = set()
    body: list[str] = []
    for j, n in enumerate(p.nodes):
        body += _node_lines(n, vname(n_in + j), name, helpers)
    outs = [vname(i) for i in p.outputs]
    if (
        p.nodes
        and p.nodes[-1].kind == "binary"
        and p.nodes[-1].p("form", 0) % 4 == 3
        and len(outs) == 1
        and p.outputs[0] == n_in + len(p.nodes) - 1
    ):
        helpers.add("scale")  # an extra inlined helper with a compile-time loop: *2 then /2
        body += [f"{outs[0]} = _fz_scale({outs[0]}) * 0.5"]
    ret = ", ".join(outs) + ("," if len(outs) == 1 and p.data_seed % 7 == 0 else "")
    params = ", ".join(vname(i) for i in range(n_in))
    lines = ["import pyasc_mlir as pa", ""]
    for h in sorted(helpers):
        lines += [_HELPERS[h]]
    lines += [f"def {p.name}({params}):"] + ["    " + b for b in body] + [f"    return {ret}", ""]
    return "\n".join(lines)
