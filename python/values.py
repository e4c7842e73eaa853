"""The values the frontend's symbolic evaluation works with.

A name in a compiled operator is bound either to a :class:`SymbolicTensor` (one SSA value) or
to an ordinary Python value (a compile-time constant). This module holds the tensor value, the
bound tensor method (``x.sum`` before it is called), a function's evaluation frame, the
exceptions that carry ``return``/``break``/``continue`` out of a body, and small predicates.
"""

from __future__ import annotations

import ast
import numbers
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, NoReturn

import numpy as np
from xdsl.ir import SSAValue

from pyasc_mlir.types import TensorDesc

__all__ = [
    "Frame",
    "FunctionReturn",
    "LoopBreak",
    "LoopContinue",
    "MinMax",
    "NotComputedIndices",
    "ShapeMatch",
    "SymbolicTensor",
    "TensorMethod",
    "contains_tensor",
    "holds_desc",
    "is_int",
    "is_number",
    "shapes_text",
]


class SymbolicTensor:
    """A tensor value during symbolic evaluation.

    ``value`` is the SSA value (element type f16, f32 or i1), ``dtype`` the logical dtype
    (``"float16"``, ``"float32"`` or ``"bool"`` for masks) and ``shape`` the static shape.
    The IR element type may differ from ``dtype``: arithmetic results are f32 in the IR even
    when their logical dtype is float16.
    """

    __slots__ = ("value", "dtype", "shape")

    def __init__(self, value: SSAValue, dtype: str, shape: Sequence[int]):
        self.value = value
        self.dtype = dtype
        self.shape = tuple(int(d) for d in shape)

    @property
    def ndim(self) -> int:
        """The rank."""
        return len(self.shape)

    def __bool__(self) -> bool:
        raise TypeError("the truth value of a symbolic tensor is not known at compile time")

    def __repr__(self) -> str:
        return f"<tensor {list(self.shape)} {self.dtype}>"


class NotComputedIndices:
    """The ``indices`` of ``x.max(dim=d)``: not computed (there is no argmax here); any use
    is a compile error naming it."""

    MESSAGE = (
        "the indices of x.max(dim=) / x.min(dim=) are not computed (pyasc_mlir has no "
        "argmax); use the values: x.max(dim=d).values or pyasc_mlir.amax(x, d)"
    )

    def __repr__(self) -> str:
        return "<indices of max/min(dim=): not computed, pyasc_mlir has no argmax>"

    def _refuse(self, *args: Any) -> NoReturn:
        raise TypeError(self.MESSAGE)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __rtruediv__ = __lt__ = __gt__ = __le__ = __ge__ = __getitem__ = _refuse


class MinMax(NamedTuple):
    """``x.max(dim=d)`` / ``x.min(dim=d)`` as PyTorch returns it: ``(values, indices)``."""

    values: Any
    indices: Any


class ShapeMatch(tuple[int, ...]):
    """What ``pyasc_mlir.match_shape(x, other, dim=d)`` returns: the tuple of ``x``'s dims
    (``B, S, H = m``, ``m[0]``, ``len(m)``) that is also indexed by name.

    ``m["target_dim"]`` / ``m.target_dim``: ``d`` as a non-negative int (``None`` without
    ``dim``); ``m["target_size"]``: ``x.shape[d]`` (``None`` without ``dim``);
    ``m["shape"]``: ``x``'s shape; ``m["other_shape"]``: ``other``'s shape.
    """

    KEYS = ("target_dim", "target_size", "shape", "other_shape")

    target_dim: int | None
    target_size: int | None
    other_shape: tuple[int, ...]

    def __new__(
        cls, shape: Sequence[int], target_dim: int | None, other_shape: Sequence[int]
    ) -> ShapeMatch:
        m = super().__new__(cls, tuple(int(d) for d in shape))
        m.target_dim = target_dim
        m.target_size = None if target_dim is None else m[target_dim]
        m.other_shape = tuple(int(d) for d in other_shape)
        return m

    @property
    def shape(self) -> tuple[int, ...]:
        """``x``'s shape as a plain tuple."""
        return tuple(self)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            if key not in self.KEYS:
                raise KeyError(f"{key!r}; match_shape() results have {', '.join(self.KEYS)}")
            return getattr(self, key)
        return tuple.__getitem__(self, key)

    def keys(self) -> tuple[str, ...]:
        """The names ``m[name]`` accepts."""
        return self.KEYS


@dataclass
class TensorMethod:
    """A tensor method looked up but not called yet (``x.sum`` in ``x.sum(-1)``)."""

    tensor: SymbolicTensor
    name: str


class FunctionReturn(Exception):
    """A ``return`` statement: carries the returned value out of the function body."""

    def __init__(self, value: Any, node: ast.Return):
        self.value = value
        self.node = node


class LoopBreak(Exception):
    """A ``break`` statement, caught by the enclosing (compile-time unrolled) ``for``."""


class LoopContinue(Exception):
    """A ``continue`` statement, caught by the enclosing (compile-time unrolled) ``for``."""


@dataclass
class Frame:
    """One function being evaluated (the operator or an inlined helper).

    ``line_delta`` is added to an AST line number to give the line in ``file``.
    """

    fn: types.FunctionType
    file: str
    line_delta: int
    globals: dict[str, Any]
    closure: dict[str, Any]
    locals: dict[str, Any]


def contains_tensor(v: Any) -> bool:
    """Whether ``v`` is a tensor (or tensor method) or a container holding one."""
    if isinstance(v, SymbolicTensor | TensorMethod):
        return True
    if isinstance(v, list | tuple | set | frozenset):
        return any(contains_tensor(x) for x in v)
    if isinstance(v, dict):
        return any(contains_tensor(x) for x in v.values())
    return False


def is_number(v: Any) -> bool:
    """Whether ``v`` is a real Python or NumPy number (bools included)."""
    return isinstance(v, numbers.Real)


def is_int(v: Any) -> bool:
    """Whether ``v`` is a Python or NumPy int (bools excluded)."""
    return isinstance(v, int | np.integer) and not isinstance(v, bool)


def holds_desc(v: Any) -> bool:
    """A tuple or list argument that holds tensors (a variadic tensor-tuple argument)."""
    return isinstance(v, tuple | list) and any(isinstance(x, TensorDesc) for x in v)


def shapes_text(ts: Sequence[SymbolicTensor]) -> str:
    """The shapes of ``ts`` for a message: ``[2, 3], [4, 3]``."""
    return ", ".join(str(list(t.shape)) for t in ts)
