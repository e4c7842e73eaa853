"""Eager tensor functions on device tensors: ``pa.add(t1, t2)``, ``t1 + t2``, ``t.sum(-1)``.

Each eager call is compiled as a tiny ``@pa.jit`` operator whose body is that one call,
written as a user would write it inside an operator (``return pa.add(p0, p1)``,
``return p0.sum(dim=p1)``), and cached per (expression, argument structure); the ``@jit``
caches then hold one kernel per shapes and dtypes. Nothing here knows the op names: a tensor
function or method the frontend learns later is eager at once (``pyasc_mlir.ops`` routes every
marker through :func:`call_function` when a :class:`~pyasc_mlir.device.Tensor` is among its
arguments; the methods are the frontend's ``METHODS``).

Arguments: device tensors and NumPy arrays become tensor parameters; Python numbers, bools,
strings, ``None`` and tuples of them are compile-time constants (a new value compiles a new
kernel, once); dtype constants (``pa.float32``) are written into the source; lists and tuples
holding tensors (``pa.concat([a, b])``) become lists of parameters. The results are device
tensors (the buffers the kernel wrote). An error is reported at the user's eager call.
"""

from __future__ import annotations

import functools
import linecache
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from pyasc_mlir.device import Tensor, buffer_of
from pyasc_mlir.errors import PyAscError, PyAscUsageError, SourceLoc, caller_loc, user_facing
from pyasc_mlir.ops import DType

__all__ = [
    "EAGER_DIR",
    "bound_method",
    "cached_operators",
    "call_function",
    "operators",
    "run_expression",
    "tensor_methods",
]

EAGER_DIR = Path(__file__).resolve().parent / "eager_sources"
"""Where the generated operators' sources appear to live (only in ``linecache``, never
written): inside the package, so errors and ``caller_loc`` treat them as pyasc-mlir's own."""

_OPERATORS: dict[str, Any] = {}
"""Generated source -> its ``JitFunction``."""


def operators() -> list[Any]:
    """The eager operators made in this process (``JitFunction`` objects: one per expression and
    argument structure; each holds its kernels per shapes and dtypes)."""
    return list(_OPERATORS.values())


def cached_operators() -> int:
    """How many eager operators this process made (see :func:`operators`)."""
    return len(_OPERATORS)


@functools.cache
def tensor_methods() -> frozenset[str]:
    """The tensor method names the frontend knows (``sum``, ``reshape``, ``exp`` ...)."""
    from pyasc_mlir.frontend.names import METHODS

    return frozenset(METHODS)


class _Source:
    """The parameters and argument values of one generated operator while it is written."""

    def __init__(self) -> None:
        self.params: list[str] = []
        self.values: list[Any] = []

    def param(self, value: Any) -> str:
        name = f"p{len(self.params)}"
        self.params.append(name)
        self.values.append(buffer_of(value) if isinstance(value, Tensor) else value)
        return name

    def text(self, value: Any) -> str:
        """The source text standing for ``value`` in the call (a parameter or a literal)."""
        if isinstance(value, DType):
            return "pa.bool_" if value.name == "bool" else f"pa.{value.name}"
        if isinstance(value, list | tuple) and any(
            isinstance(x, Tensor | np.ndarray | DType) for x in value
        ):
            items = ", ".join(self.text(x) for x in value)
            return (
                f"[{items}]" if isinstance(value, list) else f"({items}{',' * (len(value) == 1)})"
            )
        return self.param(value)


def _operator(body: str, src: _Source) -> Any:
    """The cached ``JitFunction`` returning ``body`` over ``src``'s parameters."""
    text = f"def eager_op({', '.join(src.params)}):\n    return {body}\n"
    op = _OPERATORS.get(text)
    if op is None:
        from pyasc_mlir.jit import jit

        filename = str(EAGER_DIR / f"op{len(_OPERATORS)}.py")
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        import pyasc_mlir

        # a module name outside pyasc_mlir: the disk cache keys user code by its source
        scope: dict[str, Any] = {"pa": pyasc_mlir, "__name__": "pyasc_eager"}
        exec(compile(text, filename, "exec"), scope)  # noqa: S102  (our own generated source)
        op = _OPERATORS[text] = jit(scope["eager_op"])
    return op


def _relocated(exc: PyAscError, where: SourceLoc | None, body: str) -> PyAscError:
    """``exc`` (raised inside a generated operator) reported at the user's eager call."""
    message = exc.message
    if exc.loc is not None and exc.loc.file.startswith(str(EAGER_DIR)):
        message = f"{message} (in the eager call {body})"
    try:
        return type(exc)(message, where, exc.hint)
    except TypeError:  # an error class with another constructor
        return PyAscUsageError(message, where, exc.hint)


def _run(body: str, src: _Source, frame: FrameType) -> Any:
    """Run the operator of ``body``; an error is located at ``frame`` (the user's call: found
    only when needed, as walking the stack costs more than a cached call)."""
    op = _operator(body, src)
    try:
        result = op(*src.values)
    except PyAscError as exc:
        raise _relocated(exc, caller_loc(frame), body) from None
    if isinstance(result, np.ndarray):
        return Tensor(result)
    return tuple(Tensor(r) for r in result)


@user_facing
def run_expression(template: str, operands: tuple[Any, ...]) -> Any:
    """Run ``template`` (``"{0} + {1}"``) on ``operands`` eagerly; the results as device
    tensors. Raises the operator's ``PyAscError``, located at the caller."""
    src = _Source()
    body = template.format(*(src.text(v) for v in operands))
    return _run(body, src, sys._getframe(1))


def _call_text(callee: str, args: tuple[Any, ...], kwargs: dict[str, Any], src: _Source) -> str:
    parts = [src.text(a) for a in args]
    parts += [f"{k}={src.text(v)}" for k, v in kwargs.items()]
    return f"{callee}({', '.join(parts)})"


@user_facing
def call_function(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``pa.<name>(*args, **kwargs)`` run eagerly (some argument is a device tensor); the
    results as device tensors. Raises the operator's ``PyAscError``, located at the caller."""
    src = _Source()
    return _run(_call_text(f"pa.{name}", args, kwargs, src), src, sys._getframe(1))


class MinMaxResult(tuple):
    """What eager ``t.max(dim=d)`` / ``t.min(dim=d)`` return, as torch does: ``(values,
    indices)`` with ``.values``; the indices are not computed (pyasc_mlir has no argmax), so
    ``.indices`` is a located error and the second item is ``None``."""

    def __new__(cls, values: Any) -> MinMaxResult:
        return super().__new__(cls, (values, None))

    @property
    def values(self) -> Any:
        return self[0]

    @property
    def indices(self) -> Any:
        raise PyAscUsageError(
            "the indices of max/min(dim=) are not computed (pyasc_mlir has no argmax)",
            caller_loc(),
            "use .values (or pa.amax / pa.amin)",
        )


def bound_method(tensor: Tensor, name: str) -> Any:
    """``tensor.<name>`` as a callable running the tensor method eagerly."""

    @user_facing
    def method(*args: Any, **kwargs: Any) -> Any:
        src = _Source()
        this = src.text(tensor)
        call = _call_text(f"{this}.{name}", args, kwargs, src)
        if name in ("max", "min") and "dim" in kwargs:  # torch's (values, indices) pair
            return MinMaxResult(_run(f"{call}.values", src, sys._getframe(1)))
        return _run(call, src, sys._getframe(1))

    method.__name__ = method.__qualname__ = name
    return method
