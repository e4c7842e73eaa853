"""Check modes for the IR interpreter and the CPU build: memory check and numeric check.

Memory check (``enable_memory_check()``, or ``PYASC_MEMORY_CHECK=1`` in the environment):

* fresh UB is filled with ``0xFF`` bytes at every block start: NaN in fp16 and fp32, ``-1`` (a
  sentinel) in integers (the interpreter always does this; the CPU build then uses a separate
  library compiled with ``-DPYASC_MEMCHECK=1``);
* every UB bit has a shadow "defined" bit, cleared at every block start. Writes define bits;
  elementwise ops propagate definedness lane by lane; the data leaving the vector unit (UB->GM
  copies, reductions over their valid range, ``GetValue``/scalar broadcasts) must be defined,
  else :class:`MemoryCheckError` ("read of uninitialised UB") names the op / Ascend C call and
  its source location. The exact rule is in ``docs/CPU_RUNTIME.md`` ("Memory check").

Out-of-bounds and misaligned UB/GM accesses are checked by both backends whether or not the mode
is on; they raise :class:`MemoryCheckError` subclasses too (the interpreters'
``TileInterpretationError``/``AscendcInterpretationError``, the CPU runtime's ``KernelError``),
whose messages name the op, the Ascend C call, ``file:line:col`` and the offsets and sizes.

Numeric check (``enable_numeric_check()``, or ``PYASC_NUMERIC_CHECK=1``): every output of
``CompiledOp.run_cpu``/``run_stage`` (so ``op(...)`` with both backends) is scanned for NaN/Inf;
:class:`NumericCheckError` gives the output index, the first bad element (flat and
multi-dimensional index), its value and, when the operator's source is known, the source line of
the tensor-level op that first produced a non-finite value.

Both switches are process-wide. ``enable_*`` returns an object that also works as a context
manager restoring the previous setting::

    pa.enable_memory_check()              # on from now on
    with pa.enable_numeric_check():       # on inside the block only
        y = op(x)
    pa.enable_memory_check(False)         # explicitly off (overrides the environment)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.interpreter import Interpreter

from pyasc_mlir.dialects.asc import LOC_ATTR
from pyasc_mlir.errors import PyAscError, SourceLoc
from pyasc_mlir.types import is_float_dtype

__all__ = [
    "MEMORY_CHECK_ENV",
    "NUMERIC_CHECK_ENV",
    "MemoryCheckError",
    "NumericCheckError",
    "check_outputs",
    "enable_memory_check",
    "enable_numeric_check",
    "memory_check_enabled",
    "nonfinite_origin",
    "numeric_check_enabled",
]

MEMORY_CHECK_ENV = "PYASC_MEMORY_CHECK"
NUMERIC_CHECK_ENV = "PYASC_NUMERIC_CHECK"
_TRUE = ("1", "true", "yes", "on")

_setting: dict[str, bool | None] = {"memory": None, "numeric": None}
"""Explicit settings (``None``: follow the environment variable)."""


_ENVIRON = os.environ
_ENV_DATA: dict[Any, Any] | None = getattr(_ENVIRON, "_data", None)
_ENV_KEYS: dict[str, Any] = {}


def _env(name: str) -> bool:
    """Whether environment variable ``name`` is set to a true value, read at every call.

    The modes are queried on every operator call, so while ``os.environ`` is CPython's own
    mapping this reads its backing dict directly (the same data ``os.environ.get`` reads,
    without the ``Mapping.get`` / key-encoding chain around it)."""
    env = os.environ
    if env is not _ENVIRON or _ENV_DATA is None:  # replaced or unusual: the public way
        return env.get(name, "").strip().lower() in _TRUE
    key = _ENV_KEYS.get(name)
    if key is None:
        key = _ENV_KEYS[name] = env.encodekey(name)
    raw = _ENV_DATA.get(key)
    return raw is not None and env.decodevalue(raw).strip().lower() in _TRUE


def memory_check_enabled() -> bool:
    """Whether memory-check mode is on (``enable_memory_check`` wins over
    ``PYASC_MEMORY_CHECK``)."""
    on = _setting["memory"]
    return _env(MEMORY_CHECK_ENV) if on is None else on


def numeric_check_enabled() -> bool:
    """Whether numeric-check mode is on (``enable_numeric_check`` wins over
    ``PYASC_NUMERIC_CHECK``)."""
    on = _setting["numeric"]
    return _env(NUMERIC_CHECK_ENV) if on is None else on


class _Switch:
    """Result of ``enable_*``: the setting is already applied; as a context manager it restores
    the previous setting on exit."""

    def __init__(self, key: str, on: bool | None):
        self._key = key
        self._previous = _setting[key]
        _setting[key] = on

    def __enter__(self) -> _Switch:
        return self

    def __exit__(self, *exc: object) -> None:
        _setting[self._key] = self._previous

    def __repr__(self) -> str:
        return f"<{self._key} check {'on' if _setting[self._key] else 'off'}>"


def enable_memory_check(on: bool | None = True) -> _Switch:
    """Turn memory-check mode on (``on=False``: off; ``None``: follow ``PYASC_MEMORY_CHECK``).
    Usable as a context manager that restores the previous setting."""
    return _Switch("memory", None if on is None else bool(on))


def enable_numeric_check(on: bool | None = True) -> _Switch:
    """Turn numeric-check mode on (``on=False``: off; ``None``: follow ``PYASC_NUMERIC_CHECK``).
    Usable as a context manager that restores the previous setting."""
    return _Switch("numeric", None if on is None else bool(on))


class MemoryCheckError(PyAscError):
    """A UB/GM access a kernel must not make: out of bounds, misaligned, or (memory-check mode)
    a read of UB never written since the block started.

    Backends raise subclasses that also derive from their own error type
    (``TileInterpretationError``, ``AscendcInterpretationError``, ``runtime.cpu.KernelError``).

    Attributes:
        op: the IR op (``asc.copy_out``) or Ascend C call (``DataCopyPad(UB->GM)``), if known.
        loc: the user source location (``SourceLoc``; ``str()`` gives ``file:line:col``), if
            known.
        message: the backend's message (also ``str(error)``).
    """

    op: str | None = None
    loc: SourceLoc | None = None
    message: str = ""
    hint: str | None = None

    def located(self, message: str, op: str | None, loc: str | None) -> None:
        """Fill ``message``, ``op`` and ``loc`` (from ``file:line:col`` text) after a backend
        constructed the error with its own base class."""
        self.message = message
        self.op = op
        self.loc = SourceLoc.parse(loc) if loc else None


class NumericCheckError(PyAscError):
    """An output holds NaN or Inf (numeric-check mode).

    Attributes:
        output: index of the output.
        index: multi-dimensional index of the first non-finite element (row-major order).
        flat_index: its flat index.
        value: its value.
        count: how many elements of that output are NaN/Inf.
        origin: ``(op name, "file:line:col")`` of the tensor-level op that first produced a
            non-finite value from finite operands, when known.
        loc: that op's location as a ``SourceLoc`` (the message then starts with it and shows
            the source line), else ``None``.
    """

    def __init__(
        self,
        message: str,
        output: int,
        index: tuple[int, ...],
        flat_index: int,
        value: float,
        count: int,
        origin: tuple[str, str | None] | None = None,
    ):
        loc = SourceLoc.parse(origin[1]) if origin is not None and origin[1] else None
        from_input = origin is not None and origin[0].startswith("input")
        super().__init__(
            message,
            loc,
            "the operator was given NaN/Inf: check the arrays passed in"
            if from_input
            else "check the inputs reaching that op "
            "(e.g. log or sqrt of values <= 0, overflow of float16 beyond 65504, "
            "of bfloat16 beyond 3.39e38, 0/0); guard them with pa.where/pa.maximum or compute "
            "in float32",
        )
        self.output = output
        self.index = index
        self.flat_index = flat_index
        self.value = value
        self.count = count
        self.origin = origin


def check_outputs(
    outputs: Sequence[Any],
    name: str,
    where: str,
    origin: Callable[[], tuple[str, str | None] | None] | None = None,
) -> None:
    """Raise :class:`NumericCheckError` for the first output (in order) holding NaN/Inf.

    Args:
        outputs: the output arrays.
        name: the operator's name (for the message).
        where: the backend, e.g. ``"CPU build"`` or ``"interpreter, tile stage"``.
        origin: called only on failure; gives ``(op, loc)`` of the op that produced the first
            non-finite value (see :func:`nonfinite_origin`), or ``None``.
    """
    for k, out in enumerate(outputs):
        a = np.asarray(out)
        if not is_float_dtype(a.dtype) or a.size == 0:
            continue
        bad = ~np.isfinite(a.reshape(-1))
        if not bad.any():
            continue
        flat = int(np.argmax(bad))
        index = tuple(int(i) for i in np.unravel_index(flat, a.shape))
        value = a.reshape(-1)[flat]
        kind = "NaN" if np.isnan(value) else "Inf"
        count = int(bad.sum())
        found = origin() if origin is not None else None
        msg = (
            f"numeric check: output {k} of {name} ({where}) holds {kind} at element {flat} "
            f"(index {list(index)}): value {value}; {count} of {a.size} elements are "
            "NaN/Inf"
        )
        if found is not None:
            op, loc = found
            msg += f"; the first non-finite value is produced by {op}" + (
                f" at {loc}" if loc else ""
            )
        raise NumericCheckError(msg, k, index, flat, float(value), count, found)


def nonfinite_origin(module: Any, name: str, args: Sequence[Any]) -> tuple[str, str | None] | None:
    """Interpret ``func.func @name`` of a tensor-level ``module`` on ``args`` and return the
    first op (in execution order) whose result holds NaN/Inf while all its tensor operands are
    finite, as ``(op description, asc.loc or None)``. An input that already holds NaN/Inf is
    reported as ``("input k", None)``. ``None`` when no op produces one."""
    from pyasc_mlir.interpreter.core import make_interpreter  # it imports this module

    for k, a in enumerate(args):
        arr = np.asarray(a)
        if is_float_dtype(arr.dtype) and not np.isfinite(arr).all():
            return (f"input {k}", None)
    found: list[tuple[str, str | None]] = []

    def finite(vals: Sequence[Any]) -> bool:
        for v in vals:
            if isinstance(v, np.ndarray) and is_float_dtype(v.dtype) and not np.isfinite(v).all():
                return False
        return True

    class _Listener(Interpreter.Listener):
        def __init__(self) -> None:
            self.operands: Sequence[Any] = ()

        def will_interpret_op(self, op: Any, args: Sequence[Any]) -> None:
            self.operands = args

        def did_interpret_op(self, op: Any, results: Sequence[Any]) -> None:
            if found or op.name in ("asc.fusion", "func.call", "asc.launch"):
                return
            if not finite(results) and finite(self.operands):
                loc = op.attributes.get(LOC_ATTR)
                kind = op.properties.get("kind")
                what = op.name + (f' "{kind.data}"' if isinstance(kind, StringAttr) else "")
                found.append((what, loc.data if isinstance(loc, StringAttr) else None))

    interp = make_interpreter(module)
    interp.listeners = (_Listener(),)
    try:
        interp.call_op(name, tuple(np.asarray(a) for a in args))
    except Exception:  # noqa: BLE001 - provenance is best effort, on an error path
        return found[0] if found else None
    return found[0] if found else None
