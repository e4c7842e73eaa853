"""Dim sizes as the kernel body sees them: :class:`DimInt`, an ``int`` that notes when it is
used as a number.

A dim (``N`` of ``lang.float32[N, D]``, ``x.shape[0]``) used as a loop bound or a local
array's size keeps the kernel shape-generic: ``asc-raise-loops`` raises the nest to tensor
ops over the whole axis, which ``@lang.kernel(dynamic_shape=True)`` compiles once for many
sizes. Arithmetic with it (``total / N``, ``lang.range(1, N - 1)``) bakes the compile-time
size into the kernel, so the frontend marks the kernel as reading shapes and the driver then
compiles it per shape (as ``@pa.jit(dynamic=True)`` does for tensor-frontend shape reads).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["DimInt", "note_reads"]

_ARITH = (
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "divmod",
    "lshift",
    "rshift",
    "and",
    "or",
    "xor",
)


class DimInt(int):
    """A dim size; ``on_read`` is called when it takes part in arithmetic, becomes a float or
    a bool (the frontend adds comparisons and builtin calls in the body: :func:`note_reads`;
    indexing, ``range`` and array shapes do not count)."""

    on_read: Callable[[], None]

    def __new__(cls, value: int, on_read: Callable[[], None]) -> DimInt:
        self = super().__new__(cls, value)
        self.on_read = on_read
        return self

    def __repr__(self) -> str:
        return int.__repr__(self)

    def __float__(self) -> float:
        self.on_read()
        return int.__float__(self)

    def __neg__(self) -> int:
        self.on_read()
        return -int(self)

    def __bool__(self) -> bool:
        self.on_read()
        return int(self) != 0

    def __abs__(self) -> int:
        self.on_read()
        return int(self)


def note_reads(*values: Any) -> None:
    """Note the :class:`DimInt` s among ``values`` as read (a compile-time comparison or a
    builtin call on a size: ``if N > 16``, ``min(N, 8)``)."""
    for v in values:
        if isinstance(v, DimInt):
            v.on_read()


def _wrap(name: str) -> Callable[..., Any]:
    base = getattr(int, name)

    def f(self: DimInt, *args: Any) -> Any:
        self.on_read()
        return base(int(self), *(int(a) if isinstance(a, DimInt) else a for a in args))

    f.__name__ = name
    return f


for _op in _ARITH:
    for _n in (f"__{_op}__", f"__r{_op}__"):
        if hasattr(int, _n):
            setattr(DimInt, _n, _wrap(_n))
