"""Explicit parallelism in the kernel-language frontend: ``lang.distributed_range`` and
``lang.allreduce`` in a ``@lang.parallel(num_workers=W)`` kernel.

Every statement of a parallel kernel runs on each of its ``W`` workers (cores); a loop over
``lang.distributed_range(n)`` becomes an ``asc_loop.for`` with ``workers = W``: worker ``b``
runs its share of ``0..n`` (``dialects/asc_loop.py``, "Parallel nests"). A scalar variable
that exists before the loop and is updated in it by ``acc += e``, ``acc -= e`` or ``acc =
lang.maximum(acc, e)`` / ``lang.minimum`` (also ``max``/``min``) is a *reduction variable*:
before the loop its value is kept as the reduction's start and the variable restarts from the
identity (``-0.0``; ``-inf``/``+inf``), a sum also gets a compensation variable and is
accumulated compensated (Kahan), so each worker ends with its partial. After the loop the
variable holds a partial: only ``lang.allreduce(acc[, op=...])`` may read it (an
``asc_loop.allreduce``: the start value combined with every worker's partial, in worker
order). A parallel kernel may return such a scalar: it becomes a one-element array of the
declared result dtype.

Errors (located :class:`PyAscCompileError`): ``distributed_range`` outside a parallel kernel,
nested in another distributed loop or with anything but one compile-time int; another
assignment to a scalar variable of the enclosing scope inside a distributed loop; a partial
read outside ``allreduce``; ``allreduce`` of a value that is not a reduction variable, inside a
distributed loop, or with an ``op`` that is not the variable's update.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import MemRefType, f32

from pyasc_mlir.dialects import asc_loop
from pyasc_mlir.frontend.lang_exprs import Arr, Partial, Reg, Scal
from pyasc_mlir.types import ir_type

__all__ = ["DistRange", "ParallelGen"]

FORM = (
    "in a distributed loop update scalars with acc += e, acc -= e or acc = lang.maximum(acc, e)"
    " (lang.minimum), then combine them with lang.allreduce(acc[, op='max'|'min'])"
)
_IDENTITY = {"sum": -0.0, "max": float("-inf"), "min": float("inf")}
_UPDATE = {"maximum": "max", "max": "max", "minimum": "min", "min": "min"}


@dataclass(frozen=True)
class DistRange:
    """``lang.distributed_range(n)``."""

    n: int


def _call_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute):
            return f.attr
        if isinstance(f, ast.Name):
            return f.id
    return None


def reduction_update(node: ast.stmt) -> tuple[str, str, ast.expr, bool] | None:
    """``(variable, kind, element expression, negated)`` of a reduction update statement."""
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        if isinstance(node.op, ast.Add | ast.Sub):
            return node.target.id, "sum", node.value, isinstance(node.op, ast.Sub)
        return None
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and _call_name(node.value) in _UPDATE
        and len(node.value.args) == 2
        and not node.value.keywords
    ):
        return None
    name = node.targets[0].id
    a, b = node.value.args
    kind = _UPDATE[_call_name(node.value) or ""]
    if isinstance(a, ast.Name) and a.id == name:
        return name, kind, b, False
    if isinstance(b, ast.Name) and b.id == name:
        return name, kind, a, False
    return None


class ParallelGen:
    """Mixin of the statement generator (``lang_frontend.LangGen``): ``workers`` (0: not a
    parallel kernel), the reduction variables of the distributed loop being generated."""

    workers: int = 0
    reducing: dict[str, tuple[str, Reg | None]] | None = None
    dist_body: Any = None
    """The body block of the distributed loop being generated."""

    # -- lang.distributed_range -------------------------------------------------------------
    def distributed_range(self, args: list[Any], kw: dict[str, Any], node: ast.AST) -> DistRange:
        if not self.workers:
            raise self.error(  # type: ignore[attr-defined]
                node,
                "lang.distributed_range splits a loop across cores: it needs a "
                "@lang.parallel(num_workers=N) kernel",
                "decorate the kernel with @lang.parallel(num_workers=N), or loop over range(N)",
            )
        if kw or len(args) != 1 or not isinstance(args[0], int) or isinstance(args[0], bool):
            raise self.error(  # type: ignore[attr-defined]
                node,
                "lang.distributed_range takes one compile-time int (a dim of the signature)",
                "for i in lang.distributed_range(N):",
            )
        return DistRange(args[0])

    def distributed_loop(self, node: ast.For, it: DistRange) -> None:
        """Emit the distributed loop ``node`` with its reduction variables set up."""
        if self.reducing is not None:
            raise self.error(  # type: ignore[attr-defined]
                node,
                "a distributed loop inside another distributed loop",
                "distribute the outer loop only; inner loops use range(...)",
            )
        if not isinstance(node.target, ast.Name) or node.orelse:
            raise self.error(  # type: ignore[attr-defined]
                node, "a distributed loop has one loop variable and no else", "for i in ..."
            )
        reducing: dict[str, tuple[str, Reg | None]] = {}
        inits: dict[str, Scal] = {}
        for s in ast.walk(node):
            got = reduction_update(s) if isinstance(s, ast.stmt) else None
            if got is None or not isinstance(self.env.get(got[0]), Reg):  # type: ignore[attr-defined]
                continue
            name, kind = got[0], got[1]
            if reducing.get(name, (kind,))[0] != kind:
                raise self.error(  # type: ignore[attr-defined]
                    s, f"{name!r} is updated by two kinds of reduction in this loop", FORM
                )
            if name not in reducing:
                reg = self.env[name]  # type: ignore[attr-defined]
                inits[name] = self.read_reg(reg, s)  # type: ignore[attr-defined]
                comp = self.new_reg(0.0, s) if kind == "sum" else None
                start = self.scalar(_IDENTITY[kind], s)  # type: ignore[attr-defined]
                self.add(asc_loop.StoreOp(start, reg.buf, []), s)  # type: ignore[attr-defined]
                reducing[name] = (kind, comp)
        loop = asc_loop.ForOp(0, it.n, 1, workers=self.workers)
        self.reducing, self.dist_body = reducing, loop.body.block
        try:
            self.loop(node, loop, range(it.n))  # type: ignore[attr-defined]
        finally:
            self.reducing = None
        for name, (kind, comp) in reducing.items():
            reg = self.env[name]  # type: ignore[attr-defined]
            self.env[name] = Partial(reg, kind, inits[name], comp, name)  # type: ignore[attr-defined]

    def new_reg(self, value: float, node: ast.AST) -> Reg:
        buf = self.add(asc_loop.AllocOp(MemRefType(f32, [])), node).results[0]  # type: ignore[attr-defined]
        self.add(asc_loop.StoreOp(self.scalar(value, node), buf, []), node)  # type: ignore[attr-defined]
        return Reg(buf)

    def reduction_stmt(self, node: ast.stmt) -> bool:
        """Emit ``node`` when it updates a reduction variable of the current distributed loop;
        refuse other assignments to scalar variables of the enclosing scope."""
        if self.reducing is None:
            return False
        got = reduction_update(node)
        if got is not None and got[0] in self.reducing:
            name, kind, elem, negated = got
            reg = self.env[name]  # type: ignore[attr-defined]
            e = self.scalar(self.expr(elem), node)  # type: ignore[attr-defined]
            if negated:
                e = self.add(asc_loop.UnaryOp("neg", e), node).results[0]  # type: ignore[attr-defined]
            comp = self.reducing[name][1]
            if comp is None:
                acc = self.read_reg(reg, node).value  # type: ignore[attr-defined]
                new = self.add(asc_loop.BinaryOp(kind, acc, e), node).results[0]  # type: ignore[attr-defined]
                self.add(asc_loop.StoreOp(new, reg.buf, []), node)  # type: ignore[attr-defined]
            else:
                self.kahan(reg, comp, e, node)
            return True
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Name) and isinstance(self.env.get(t.id), Reg):  # type: ignore[attr-defined]
                home = self.env[t.id].buf.owner  # type: ignore[attr-defined]
                if not self.inside_loop(home):
                    raise self.error(  # type: ignore[attr-defined]
                        node,
                        f"{t.id!r} of the enclosing scope is assigned inside a distributed "
                        "loop: each core would hold a different value",
                        FORM,
                    )
        return False

    def inside_loop(self, op: Any) -> bool:
        """Whether ``op`` was emitted inside the distributed loop's body (or deeper)."""
        block = getattr(op, "parent", None)
        while block is not None:
            if block is self.dist_body:
                return True
            parent = block.parent_op()
            block = parent.parent if parent is not None else None
        return False

    def kahan(self, acc: Reg, comp: Reg, e: Any, node: ast.AST) -> None:
        """``acc, comp = kahan(acc, comp, e)`` (``scalar_f32.kahan_step``)."""
        a = self.read_reg(acc, node).value  # type: ignore[attr-defined]
        c = self.read_reg(comp, node).value  # type: ignore[attr-defined]
        step = self.add(asc_loop.KahanOp(a, c, e), node)  # type: ignore[attr-defined]
        self.add(asc_loop.StoreOp(step.results[1], comp.buf, []), node)  # type: ignore[attr-defined]
        self.add(asc_loop.StoreOp(step.results[0], acc.buf, []), node)  # type: ignore[attr-defined]

    # -- lang.allreduce ---------------------------------------------------------------------
    def allreduce(self, args: list[Any], kw: dict[str, Any], node: ast.AST) -> Scal:
        if not self.workers:
            raise self.error(  # type: ignore[attr-defined]
                node,
                "lang.allreduce combines the partials of a @lang.parallel kernel's cores",
                "decorate the kernel with @lang.parallel(num_workers=N)",
            )
        if self.reducing is not None:
            raise self.error(  # type: ignore[attr-defined]
                node, "lang.allreduce inside a distributed loop", "call it after the loop"
            )
        op = kw.pop("op", None)
        if kw or len(args) != 1:
            raise self.error(node, "lang.allreduce(acc, op='sum'|'max'|'min')", FORM)  # type: ignore[attr-defined]
        p = args[0]
        if not isinstance(p, Partial):
            raise self.error(  # type: ignore[attr-defined]
                node,
                f"lang.allreduce takes a scalar reduced in a distributed loop, not "
                f"{self.describe(p)}",  # type: ignore[attr-defined]
                FORM,
            )
        kind = op if op is not None else p.kind
        if kind != p.kind:
            raise self.error(  # type: ignore[attr-defined]
                node, f"allreduce op={op!r}, but {p.name!r} is reduced by {p.kind}", FORM
            )
        comp = p.comp.buf if p.comp is not None else None
        red = asc_loop.AllreduceOp(p.kind, p.init.value, p.reg.buf, comp)
        return Scal(self.add(red, node).results[0])  # type: ignore[attr-defined]

    def partial_error(self, p: Partial, node: ast.AST) -> Exception:
        return self.error(  # type: ignore[attr-defined]
            node,
            f"{p.name!r} holds each core's partial after the distributed loop",
            f"combine the partials first: lang.allreduce({p.name})",
        )

    def parallel_result(self, v: Any, node: ast.AST) -> Arr:
        """A returned scalar of a parallel kernel as a one-element array of the declared
        result dtype (float32 without one)."""
        from pyasc_mlir.language.types import ArraySpec, read_signature

        res = read_signature(self.fn).result  # type: ignore[attr-defined]
        dtype = res.dtype.name if isinstance(res, ArraySpec) else "float32"
        buf = self.add(asc_loop.AllocOp(MemRefType(ir_type(dtype), [1])), node).results[0]  # type: ignore[attr-defined]
        zero = self.index(0, 1, node)  # type: ignore[attr-defined]
        self.add(asc_loop.StoreOp(self.scalar(v, node), buf, [zero]), node)  # type: ignore[attr-defined]
        return Arr(buf, (1,), dtype, True)
