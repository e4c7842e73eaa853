"""The decomposed softmax in ``asc-autodiff``'s ``save`` strategy.

The frontend decomposes ``softmax`` into ``e = exp(x - max(x)); y = e / sum(e)`` (the
subtraction optional), so the op-by-op backward recomputes ``exp`` and differentiates the max
(its tie rule) although softmax does not depend on it. When such a ``y`` is a result of the
forward, the ``save`` backward takes ``y`` itself (already written by the forward: no extra
GM bytes) and uses ``dx = y * (dy - sum(dy * y))`` (over the softmax axes, kept dims); the
pattern's reductions are then not saved. Matched only when the pattern's inner values have
no other use.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.passes.autodiff_rules import GradEmitter, shape_of

__all__ = ["Softmax", "match", "softmax_grad"]


@dataclass(frozen=True)
class Softmax:
    """A matched softmax: its input ``x``, the reduction ``axes`` and its ops (``ops[0]``
    the ``div`` giving the output)."""

    x: SSAValue
    axes: tuple[int, ...]
    ops: tuple[Operation, ...]


def _owner(v: SSAValue, cls: type[Operation], kind: str | None = None) -> Operation | None:
    op = v.owner
    if not isinstance(op, cls):
        return None
    if kind is not None and op.kind.data != kind:  # type: ignore[attr-defined]
        return None
    return op


def _row(op: Operation | None, kind: str, of: SSAValue) -> asc.ReduceOp | None:
    """``op`` if it broadcasts a keep-dims reduction ``kind`` of ``of``; that reduction."""
    if op is None:
        return None
    r = _owner(op.operands[0], asc.ReduceOp, kind)
    if not isinstance(r, asc.ReduceOp) or r.input != of or not r.keeps_dims:
        return None
    return r


def match(y: SSAValue) -> Softmax | None:
    """The softmax whose output is ``y``, or ``None``."""
    div = _owner(y, asc.BinaryOp, "div")
    if not isinstance(div, asc.BinaryOp):
        return None
    exp = _owner(div.lhs, asc.UnaryOp, "exp")
    bcast_sum = _owner(div.rhs, asc.BroadcastOp)
    total = _row(bcast_sum, "sum", div.lhs)
    if not isinstance(exp, asc.UnaryOp) or bcast_sum is None or total is None:
        return None
    ops: list[Operation] = [div, bcast_sum, total, exp]
    x = exp.input
    sub = _owner(x, asc.BinaryOp, "sub")
    if isinstance(sub, asc.BinaryOp):
        bcast_max = _owner(sub.rhs, asc.BroadcastOp)
        top = _row(bcast_max, "max", sub.lhs)
        if bcast_max is not None and top is not None and top.axis_list == total.axis_list:
            x = sub.lhs
            ops += [sub, bcast_max, top]
    inside = set(ops)
    for op in ops[1:]:
        if any(u.operation not in inside for r in op.results for u in r.uses):
            return None
    return Softmax(x, tuple(total.axis_list), tuple(ops))


def softmax_grad(b: GradEmitter, axes: tuple[int, ...], y: SSAValue, g: SSAValue) -> SSAValue:
    """``y * (g - sum(g * y))`` (float32; ``y`` the saved output, ``g`` its cotangent)."""
    y = b.wide(y)
    gy = b.put(asc.BinaryOp("mul", g, y))
    rows = b.put(asc.ReduceOp("sum", gy, list(axes), True))
    spread = b.put(asc.BroadcastOp(rows, shape_of(g)))
    return b.put(asc.BinaryOp("mul", y, b.put(asc.BinaryOp("sub", g, spread))))
