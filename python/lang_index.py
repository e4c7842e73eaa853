"""Index arithmetic of the kernel language: ``i + c``, ``c + i``, ``i - c``, ``c - i``,
``i + j``, ``i - j``, ``c * i``, ``i * c`` on loop variables (:class:`Idx`) and compile-time
ints, as ``arith`` index ops. Each result is an :class:`Idx` whose range ``[lo, hi)`` bounds
every value it takes (interval arithmetic), so ``ExprGen.index`` checks it against the axis.
Affine forms other than ``i +- c`` are not raised (``asc-raise-loops`` runs them as scalar
loops); ``//``, ``%`` and products of two loop variables are not supported.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Operation, SSAValue

from pyasc_mlir.frontend.lang_exprs import Idx

__all__ = ["DynRange", "index_arith"]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def index_arith(
    a: Any, b: Any, op: ast.operator, add: Callable[[Operation], SSAValue]
) -> Idx | None:
    """``a op b`` for a loop variable and an int (or two loop variables) as an :class:`Idx`,
    its ops added with ``add``; ``None`` when the operation is not index arithmetic."""
    if not (isinstance(a, Idx) or _is_int(a)) or not (isinstance(b, Idx) or _is_int(b)):
        return None

    def value(v: Idx | int) -> SSAValue:
        return v.value if isinstance(v, Idx) else add(arith.ConstantOp(IntegerAttr(v, IndexType())))

    def bounds(v: Idx | int) -> tuple[int, int]:
        return (v.lo, v.hi - 1) if isinstance(v, Idx) else (v, v)

    (alo, ahi), (blo, bhi) = bounds(a), bounds(b)
    if isinstance(op, ast.Add):
        kind: type[arith.AddiOp | arith.SubiOp | arith.MuliOp] = arith.AddiOp
        lo, hi = alo + blo, ahi + bhi
    elif isinstance(op, ast.Sub):
        kind, lo, hi = arith.SubiOp, alo - bhi, ahi - blo
    elif isinstance(op, ast.Mult) and (_is_int(a) or _is_int(b)):
        kind = arith.MuliOp
        corners = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
        lo, hi = min(corners), max(corners)
    else:
        return None
    return Idx(add(kind(value(a), value(b))), lo, hi + 1)


@dataclass(frozen=True)
class DynRange:
    """``range(start, stop, step)`` whose ``stop`` is index arithmetic on a loop variable (a
    triangular loop, ``for j in range(i + 1)``); ``start`` and ``step`` are ints."""

    start: int
    stop: Idx
    step: int

    @property
    def max_stop(self) -> int:
        """The largest value ``stop`` takes (the loop's static upper bound)."""
        return self.stop.hi - 1


def make_dyn_range(args: list[Any]) -> DynRange | None:
    """``range(stop)``/``range(start, stop[, step])`` with a loop-variable ``stop`` and int
    ``start``/``step``, else ``None``."""
    if not args or len(args) > 3 or not isinstance(args[min(1, len(args) - 1)], Idx):
        return None
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], 1)
    if len(args) == 3:
        step = args[2]
    if not (_is_int(start) and _is_int(step) and step > 0 and isinstance(stop, Idx)):
        return None
    return DynRange(start, stop, step)
