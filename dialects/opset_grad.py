"""Derivative rules of the op table (:mod:`pyasc_mlir.dialects.opset`), keyed by kind.

``asc-autodiff`` (``passes/autodiff.py``) differentiates a tensor-level function in reverse
mode; for every elementwise and reduction op it looks the op's kind up here. A rule builds the
vector-Jacobian product with a :class:`GradBuilder` (tensor-level ``asc`` ops, computed in
float32: the pass widens f16 primal values before a rule sees them):

* unary ``f(b, x, y, g) -> dx``, ``y = op(x)`` and ``g`` the cotangent of ``y``;
* binary ``f(b, x1, x2, y, g) -> (dx1, dx2)``;
* reduce ``f(b, r, x, y, g) -> dx``; ``r`` is a :class:`ReduceInfo` and ``b.expand(v)`` takes a
  value of the reduction's result shape back to the input's shape.

Every kind of the table is either in :data:`UNARY_RULES` / :data:`BINARY_RULES` /
:data:`REDUCE_RULES` or declared in :data:`NOT_DIFFERENTIABLE` with the reason
(``tests/test_opset_grad.py`` checks it). Formulas: the standard calculus identities
(e.g. Abramowitz & Stegun 4.2, 4.3, 4.5, 7.1.19 for ``d erf/dx = 2/sqrt(pi) exp(-x^2)``).

Tie and kink rules (the same as PyTorch's autograd, so the two agree bit for bit on them):
``abs``'s and ``relu``'s derivative at 0 is 0; ``maximum``/``minimum`` give each operand half
the cotangent where the operands are equal; ``reduce max``/``min`` share the cotangent evenly
among the elements equal to the result (``torch.amax``'s rule).

Only the standard library and the op table's builder protocol are imported (a dialect module).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pyasc_mlir.dialects.opset import Builder

__all__ = [
    "BINARY_RULES",
    "NOT_DIFFERENTIABLE",
    "REDUCE_RULES",
    "UNARY_RULES",
    "GradBuilder",
    "ReduceInfo",
    "rule_for",
]


class GradBuilder(Builder, Protocol):
    """What a derivative rule builds IR with (``asc-autodiff`` passes its builder): the
    decompositions' :class:`~pyasc_mlir.dialects.opset.Builder` (constants are float32 here)
    and the reduction helpers below."""

    def expand(self, v: Any) -> Any:
        """A value of the current reduction's result shape broadcast to its input shape."""

    def reduce_sum(self, x: Any) -> Any:
        """``asc.reduce "sum"`` of ``x`` over the current reduction's axes (its keepdim)."""


@dataclass(frozen=True)
class ReduceInfo:
    """The reduction a reduce rule differentiates: ``axes`` (sorted), ``keepdim``, ``count``
    (elements reduced into each result element) and the variance's ``correction``."""

    axes: tuple[int, ...]
    keepdim: bool
    count: int
    correction: int = 0


UnaryRule = Callable[[GradBuilder, Any, Any, Any], Any]
BinaryRule = Callable[[GradBuilder, Any, Any, Any, Any], tuple[Any, Any]]
ReduceRule = Callable[[GradBuilder, ReduceInfo, Any, Any, Any], Any]


# --------------------------------------------------------------------------- unary


def _sign(b: GradBuilder, x: Any) -> Any:
    """``sign(x)`` with ``sign(0) = 0`` (and 0 for NaN: no comparison holds)."""
    zero, one = b.const(0.0, x), b.const(1.0, x)
    neg = b.select(b.compare("lt", x, zero), b.const(-1.0, x), zero)
    return b.select(b.compare("gt", x, zero), one, neg)


def _abs(b: GradBuilder, x: Any, y: Any, g: Any) -> Any:
    return b.binary("mul", g, _sign(b, x))


def _relu(b: GradBuilder, x: Any, y: Any, g: Any) -> Any:
    zero = b.const(0.0, x)
    return b.select(b.compare("gt", x, zero), g, zero)


def _sqrt(b: GradBuilder, x: Any, y: Any, g: Any) -> Any:
    return b.binary("div", g, b.binary_const("mul", y, 2.0))  # d sqrt = 1 / (2 sqrt x)


def _rsqrt(b: GradBuilder, x: Any, y: Any, g: Any) -> Any:
    y3 = b.binary("mul", b.binary("mul", y, y), y)  # d x^-1/2 = -1/2 x^-3/2
    return b.binary("mul", g, b.binary_const("mul", y3, -0.5))


def _reciprocal(b: GradBuilder, x: Any, y: Any, g: Any) -> Any:
    return b.binary("mul", g, b.binary_const("mul", b.binary("mul", y, y), -1.0))


def _sigmoid(b: GradBuilder, x: Any, y: Any, g: Any) -> Any:
    one_minus = b.binary("sub", b.const(1.0, y), y)
    return b.binary("mul", g, b.binary("mul", y, one_minus))


def _tanh(b: GradBuilder, x: Any, y: Any, g: Any) -> Any:
    return b.binary("mul", g, b.binary("sub", b.const(1.0, y), b.binary("mul", y, y)))


def _erf(b: GradBuilder, x: Any, y: Any, g: Any) -> Any:
    e = b.unary("exp", b.binary_const("mul", b.binary("mul", x, x), -1.0))
    return b.binary("mul", g, b.binary_const("mul", e, 2.0 / math.sqrt(math.pi)))


def _gelu(b: GradBuilder, x: Any, y: Any, g: Any) -> Any:
    """d/dx x Phi(x) = Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2 and
    phi(x) = exp(-x^2 / 2) / sqrt(2 pi) (the erf form, torch's ``gelu`` default)."""
    cdf = b.binary_const("mul", b.unary("erf", b.binary_const("mul", x, math.sqrt(0.5))), 0.5)
    cdf = b.binary_const("add", cdf, 0.5)
    pdf = b.unary("exp", b.binary_const("mul", b.binary("mul", x, x), -0.5))
    pdf = b.binary_const("mul", pdf, 1.0 / math.sqrt(2.0 * math.pi))
    return b.binary("mul", g, b.binary("add", cdf, b.binary("mul", x, pdf)))


UNARY_RULES: dict[str, UnaryRule] = {
    "neg": lambda b, x, y, g: b.binary_const("mul", g, -1.0),
    "exp": lambda b, x, y, g: b.binary("mul", g, y),
    "log": lambda b, x, y, g: b.binary("div", g, x),
    "sqrt": _sqrt,
    "rsqrt": _rsqrt,
    "abs": _abs,
    "relu": _relu,
    "reciprocal": _reciprocal,
    "sigmoid": _sigmoid,
    "tanh": _tanh,
    "erf": _erf,
    "sin": lambda b, x, y, g: b.binary("mul", g, b.unary("cos", x)),
    "cos": lambda b, x, y, g: b.binary("mul", g, b.binary_const("mul", b.unary("sin", x), -1.0)),
    "softplus": lambda b, x, y, g: b.binary("mul", g, b.unary("sigmoid", x)),
    "gelu": _gelu,
}
"""Unary kind -> rule ``(b, x, y, g) -> dx``."""


# --------------------------------------------------------------------------- binary


def _extremum(b: GradBuilder, x1: Any, x2: Any, y: Any, g: Any, wins: str) -> tuple[Any, Any]:
    """``maximum`` (``wins="gt"``) / ``minimum`` (``"lt"``): the winner takes ``g``, a tie
    gives each operand ``g / 2``."""
    zero = b.const(0.0, g)
    half = b.binary_const("mul", g, 0.5)
    tie = b.compare("eq", x1, x2)
    d1 = b.select(tie, half, b.select(b.compare(wins, x1, x2), g, zero))
    d2 = b.select(tie, half, b.select(b.compare(wins, x2, x1), g, zero))
    return d1, d2


def _div(b: GradBuilder, x1: Any, x2: Any, y: Any, g: Any) -> tuple[Any, Any]:
    d1 = b.binary("div", g, x2)
    return d1, b.binary_const("mul", b.binary("mul", d1, y), -1.0)  # -g x1 / x2^2


BINARY_RULES: dict[str, BinaryRule] = {
    "add": lambda b, x1, x2, y, g: (g, g),
    "sub": lambda b, x1, x2, y, g: (g, b.binary_const("mul", g, -1.0)),
    "mul": lambda b, x1, x2, y, g: (b.binary("mul", g, x2), b.binary("mul", g, x1)),
    "div": _div,
    "max": lambda b, x1, x2, y, g: _extremum(b, x1, x2, y, g, "gt"),
    "min": lambda b, x1, x2, y, g: _extremum(b, x1, x2, y, g, "lt"),
}
"""Binary kind -> rule ``(b, x1, x2, y, g) -> (dx1, dx2)``."""


# --------------------------------------------------------------------------- reductions


def _mean(b: GradBuilder, r: ReduceInfo, x: Any, y: Any, g: Any) -> Any:
    return b.binary_const("mul", b.expand(g), 1.0 / r.count)


def _var(b: GradBuilder, r: ReduceInfo, x: Any, y: Any, g: Any) -> Any:
    """``d var / dx = 2 (x - mean) / (n - correction)``; the mean is recomputed."""
    mean = b.binary_const("mul", b.expand(b.reduce_sum(x)), 1.0 / r.count)
    scale = 2.0 / (r.count - r.correction) if r.count > r.correction else math.inf
    return b.binary("mul", b.expand(g), b.binary_const("mul", b.binary("sub", x, mean), scale))


def _reduce_extremum(b: GradBuilder, r: ReduceInfo, x: Any, y: Any, g: Any) -> Any:
    """The cotangent shared evenly by the elements equal to the result (``torch.amax``)."""
    hit = b.compare("eq", x, b.expand(y))
    ones = b.select(hit, b.const(1.0, x), b.const(0.0, x))
    share = b.binary("div", g, b.reduce_sum(ones))
    return b.binary("mul", ones, b.expand(share))


REDUCE_RULES: dict[str, ReduceRule] = {
    "sum": lambda b, r, x, y, g: b.expand(g),
    "mean": _mean,
    "var": _var,
    "max": _reduce_extremum,
    "min": _reduce_extremum,
}
"""Reduce kind -> rule ``(b, r, x, y, g) -> dx``."""


NOT_DIFFERENTIABLE: dict[str, str] = {
    **{
        k: "a comparison's i1 mask carries no gradient; its operands get zero from it"
        for k in ("lt", "gt", "eq", "le", "ge", "ne")
    },
    **{
        k: "a tile-level op (a tensor and an immediate): it never appears at tensor level"
        for k in ("adds", "muls", "maxs", "mins")
    },
}
"""Kinds of the op table without a derivative rule, with the reason."""


def rule_for(category: str, kind: str) -> Callable[..., Any] | None:
    """The rule of ``kind`` in ``category`` (``"unary"``, ``"binary"``, ``"reduce"``), or
    ``None`` when it has none."""
    table: dict[str, dict[str, Any]] = {
        "unary": UNARY_RULES,
        "binary": BINARY_RULES,
        "reduce": REDUCE_RULES,
    }
    return table.get(category, {}).get(kind)
