"""The class form of an operator: ``pa.compile(MyOp, inputs=[TensorDesc, ...])``.

An ``Op`` subclass (:class:`OpBase` is its base; ``pyasc_mlir.Op`` adds ``compile`` and
``__call__``) declares ``inputs`` (``TensorDesc`` s, ``None`` for a dim of any size), optionally
``outputs`` and ``version``, and a ``forward(self, ...)`` method written like a ``@jit``
function. :func:`resolve` turns a class (or an instance) given to ``compile`` into the function
the frontend compiles: ``forward`` with the class (or the instance) as its first, compile-time
argument, so ``self.eps`` reads a class attribute. The ``inputs`` of the call, when given,
replace the declared ones: concrete sizes for the ``None`` dims (the kernel is then static at
those sizes) and the same sizes elsewhere; leaving them out compiles the declared ones
(``None`` dims dynamic). The compiled results are checked against ``outputs``
(:meth:`ClassCall.check_outputs`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pyasc_mlir.errors import PyAscUsageError, SourceLoc, caller_loc
from pyasc_mlir.platform import DEFAULT_PLATFORM
from pyasc_mlir.types import TensorDesc


class OpBase:
    """Base of ``pyasc_mlir.Op``: ``inputs``/``outputs`` lists of ``TensorDesc`` (shape,
    dtype; ``None`` = any size), ``platform``, ``version`` (for operator libraries) and
    ``forward``."""

    inputs: list[TensorDesc] = []
    outputs: list[TensorDesc] = []
    platform = DEFAULT_PLATFORM
    version: str | None = None

    def forward(self, *args: Any) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError


def class_loc(cls: type) -> SourceLoc | None:
    """Where ``cls`` is defined (for errors about its declarations)."""
    try:
        file, line = inspect.getsourcefile(cls), inspect.getsourcelines(cls)[1]
    except (OSError, TypeError):
        return None
    return SourceLoc(file, line, 0) if file else None


def _text(descs: Sequence[object]) -> str:
    return ", ".join(
        f"{list(d.shape)} {d.dtype}" if isinstance(d, TensorDesc) else repr(d) for d in descs
    )


def _fits(got: object, declared: TensorDesc) -> str | None:
    """What is wrong with ``got`` for the declared input (``None``: it fits)."""
    if not isinstance(got, TensorDesc):
        return f"is {got!r}, not a TensorDesc"
    if got.dtype != declared.dtype:
        return f"has dtype {got.dtype}, declared {declared.dtype}"
    if len(got.shape) != len(declared.shape):
        return f"has rank {len(got.shape)} ({list(got.shape)}), declared {list(declared.shape)}"
    for j, (g, d) in enumerate(zip(got.shape, declared.shape, strict=True)):
        if d is not None and g != d:
            return f"has size {g} in dim {j}, declared {d} ({list(declared.shape)})"
    return None


@dataclass
class ClassCall:
    """A class-form compile: the function the frontend compiles (``forward``), its inputs (the
    class or instance first), the kernel name, the version and the class."""

    fn: Callable[..., Any]
    inputs: list[object]
    name: str
    version: str | None
    cls: type

    def check_outputs(self, outputs: Sequence[TensorDesc]) -> None:
        """The compiled results fit ``cls.outputs`` (rank, dtype, the declared sizes).

        Raises:
            PyAscUsageError: located at the class definition."""
        declared = list(getattr(self.cls, "outputs", []) or [])
        if not declared:
            return
        bad = len(declared) != len(outputs) or any(
            _fits(g, d) is not None for g, d in zip(outputs, declared, strict=False)
        )
        if bad:
            raise PyAscUsageError(
                f"{self.cls.__name__}.forward returns ({_text(outputs)}) but outputs declares "
                f"({_text(declared)})",
                class_loc(self.cls),
                "make `outputs` match what forward returns (shape, dtype; None = any size)",
            )


def resolve(fn: object, inputs: Sequence[object] | None, name: str | None) -> ClassCall | None:
    """The class-form compile of ``fn`` (an ``Op`` subclass or instance), or ``None`` when
    ``fn`` is not one.

    Raises:
        PyAscUsageError: located at the caller: a class that is not an ``Op`` subclass, no
            inputs given or declared, or inputs that do not fit the declared ones (count,
            dtype, rank, a declared size)."""
    self_arg: object
    if isinstance(fn, OpBase):
        cls, self_arg = type(fn), fn
    elif isinstance(fn, type) and issubclass(fn, OpBase):
        cls, self_arg = fn, fn
    elif isinstance(fn, type):
        raise PyAscUsageError(
            f"compile() got the class {fn.__name__}, which is not a pyasc_mlir.Op subclass",
            caller_loc(),
            "subclass pa.Op (inputs = [...], def forward(self, ...)) or pass a function",
        )
    else:
        return None
    declared = list(cls.inputs or [])
    given = declared if inputs is None else inputs
    hint = f"{cls.__name__} declares inputs ({_text(declared) or 'none'}); None = any size"
    if not isinstance(given, list | tuple) or not given:
        raise PyAscUsageError(
            f"compile({cls.__name__}) needs inputs: none given and {cls.__name__}.inputs is empty"
            if not given
            else f"inputs must be a list, got {type(given).__name__}",
            caller_loc(),
            f"pa.compile({cls.__name__}, inputs=[pa.TensorDesc(shape, dtype), ...]); {hint}",
        )
    n_params = len(inspect.signature(cls.forward).parameters) - 1
    if declared and len(given) != len(declared) or len(given) > n_params:
        raise PyAscUsageError(
            f"compile({cls.__name__}) got {len(given)} inputs; {cls.__name__}.forward takes "
            f"{n_params}" + (f" and {len(declared)} are declared" if declared else ""),
            caller_loc(),
            hint,
        )
    for i, (g, d) in enumerate(zip(given, declared, strict=False)):
        problem = _fits(g, d)
        if problem is not None:
            raise PyAscUsageError(
                f"compile({cls.__name__}): input {i} {problem}", caller_loc(), hint
            )
    return ClassCall(
        cls.forward,
        [self_arg, *given],
        name or cls.__name__.lower(),
        None if cls.version is None else str(cls.version),
        cls,
    )
