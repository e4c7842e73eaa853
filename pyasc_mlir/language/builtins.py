"""The kernel language's functions: local arrays, loops, casts and scalar math.

Inside a ``@lang.kernel`` body the frontend (``pyasc_mlir.frontend.lang_frontend``) compiles
calls of these functions (it recognises them by identity: :data:`UNARY`, :data:`BINARY`,
:data:`ALLOCS`). Called as plain Python (the debugger mode, or outside a kernel) they compute
with NumPy: ``empty``/``zeros``/... return arrays, the scalar math returns NumPy scalars.
Scalar math follows the op table (``dialects/opset.py``): f32 arithmetic, ``erf`` exact.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pyasc_mlir.dialects import opset
from pyasc_mlir.language.types import DType, float32

__all__ = [
    "ALLOCS",
    "BINARY",
    "UNARY",
    "allreduce",
    "cast",
    "distributed_range",
    "empty",
    "empty_like",
    "full",
    "maximum",
    "minimum",
    "ones",
    "range",
    "scope",
    "zeros",
]

Shape = int | Sequence[int]


def _shape(shape: Shape) -> tuple[int, ...]:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def empty(shape: Shape, dtype: DType = float32) -> np.ndarray:
    """A local array of ``shape`` (an int or a tuple of ints) and ``dtype`` (uninitialised:
    write every element before reading it)."""
    return np.zeros(_shape(shape), dtype.np_dtype)


def zeros(shape: Shape, dtype: DType = float32) -> np.ndarray:
    """A local array of ``shape`` and ``dtype`` filled with 0."""
    return np.zeros(_shape(shape), dtype.np_dtype)


def ones(shape: Shape, dtype: DType = float32) -> np.ndarray:
    """A local array of ``shape`` and ``dtype`` filled with 1."""
    return np.ones(_shape(shape), dtype.np_dtype)


def full(shape: Shape, value: float, dtype: DType = float32) -> np.ndarray:
    """A local array of ``shape`` and ``dtype`` filled with ``value`` (rounded to ``dtype``)."""
    return np.full(_shape(shape), value, dtype.np_dtype)


def empty_like(x: Any, dtype: DType | None = None) -> np.ndarray:
    """A local array of ``x``'s shape and dtype (or ``dtype``), uninitialised."""
    a = np.asarray(x)
    return np.zeros(a.shape, a.dtype if dtype is None else dtype.np_dtype)


def range(start: int, stop: int | None = None, step: int = 1) -> builtins.range:  # noqa: A001
    """``range`` for kernel loops: ``lang.range(stop)`` or ``lang.range(start, stop, step)``
    (compile-time ints, ``step`` > 0): a loop in the IR, not unrolled."""
    return builtins.range(start, stop, step) if stop is not None else builtins.range(start)


def distributed_range(n: int) -> builtins.range:
    """The loop of a ``@lang.parallel`` kernel whose iterations are split across its cores
    (contiguous shares of 32-iteration units, ``dialects/asc_loop.py``). As plain Python
    (``PYASC_DEBUG=1``) it is ``range(n)``: one worker doing all of them."""
    return builtins.range(n)


def allreduce(value: Any, op: str = "sum") -> Any:
    """The combine of a reduction variable's per-core partials in a ``@lang.parallel``
    kernel (``op``: ``"sum"``, ``"max"`` or ``"min"``, the variable's update), the same value
    on every core. As plain Python (one worker) it is ``value``.

    Raises:
        ValueError: an unknown ``op``."""
    if op not in ("sum", "max", "min"):
        raise ValueError(f"lang.allreduce: op must be 'sum', 'max' or 'min', got {op!r}")
    return value


class scope:  # noqa: N801 - used as a function: with lang.scope("name"):
    """``with lang.scope("name"):`` names a region of a kernel body: the ops compiled inside
    carry the attribute ``lang.scope`` (``"outer/inner"`` when nested) in the IR dumps, and a
    compile error inside names the scope. As plain Python (the debugger mode) it does
    nothing.

    Raises:
        ValueError: ``name`` is not a non-empty string without ``/``."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"a scope name is a non-empty string without '/', got {name!r}")
        self.name = name

    def __enter__(self) -> scope:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __repr__(self) -> str:
        return f"lang.scope({self.name!r})"


def cast(x: Any, dtype: DType) -> Any:
    """``x`` rounded to ``dtype`` (round to nearest even); a scalar stays a scalar (the value
    is then computed on in f32, as every kernel-language scalar)."""
    return np.asarray(x).astype(dtype.np_dtype)[()]


def _unary(kind: str) -> Callable[[Any], Any]:
    impl = opset.UNARY[kind].tensor_impl()
    assert impl is not None  # every unary record has NumPy semantics (tensor_impls checks)

    def f(x: Any) -> Any:
        return impl(np.asarray(x, np.float32))[()]

    f.__name__ = kind
    f.__doc__ = (
        f"Scalar ``{kind}`` of an f32 value (the op table's semantics; fp16 inputs are "
        "computed in f32). Inside a kernel: one element op; a loop of them is raised to a "
        "vector op."
    )
    return f


UNARY: dict[Callable[..., Any], str] = {}
"""Marker function -> ``asc_loop.unary`` kind."""
_funcs: dict[str, Callable[[Any], Any]] = {}
for _kind in opset.UNARY:
    _funcs[_kind] = _unary(_kind)
    UNARY[_funcs[_kind]] = _kind

exp, log, sqrt, rsqrt, tanh, erf = (
    _funcs[k] for k in ("exp", "log", "sqrt", "rsqrt", "tanh", "erf")
)
sigmoid, relu, sin, cos = (_funcs[k] for k in ("sigmoid", "relu", "sin", "cos"))
abs, reciprocal, softplus, neg = (_funcs[k] for k in ("abs", "reciprocal", "softplus", "neg"))  # noqa: A001


def maximum(a: Any, b: Any) -> Any:
    """The larger of two scalars (``max`` of the op table)."""
    return np.maximum(np.float32(a), np.float32(b))


def minimum(a: Any, b: Any) -> Any:
    """The smaller of two scalars (``min`` of the op table)."""
    return np.minimum(np.float32(a), np.float32(b))


BINARY: dict[Callable[..., Any], str] = {maximum: "max", minimum: "min"}
"""Marker function -> ``asc_loop.binary`` kind."""

ALLOCS: dict[Callable[..., Any], str] = {
    empty: "empty",
    zeros: "zeros",
    ones: "ones",
    full: "full",
    empty_like: "empty_like",
}
"""The local-array constructors."""
