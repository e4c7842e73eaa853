"""The compile-time values the frontend reads, recorded so that a ``@jit`` function notices
when one changes (``Cfg.scale = 11``, ``fn.__defaults__ = (5.0,)``) and compiles again.

While :func:`recording` is active, the frontend calls :func:`note_global`, :func:`note_cell`,
:func:`note_attr` and :func:`note_defaults` for every module global, closure variable,
attribute of a non-tensor object and default-argument tuple it evaluates (in the operator and
in every inlined helper), and :func:`note_python_call` for a user function it runs in Python.
Each :class:`Read` keeps the object it came from, the value seen and,
for small mutable containers, their ``repr``; :func:`changed` checks them all (identity, then
value equality for small immutables, e.g. an ``int`` recomputed by a property).

Attributes of pyasc-mlir, NumPy and standard-library modules (``pa.exp``, ``math.pi``) are not
recorded: nobody rebinds them, and the compiler fingerprint covers pyasc-mlir's own code.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "Read",
    "ReadLog",
    "changed",
    "note_attr",
    "note_cell",
    "note_defaults",
    "note_global",
    "note_run",
    "recording",
]

GLOBAL, CELL, ATTR, DEFAULTS, KWDEFAULTS = range(5)
_LIBRARIES = frozenset({"pyasc_mlir", "numpy", "ml_dtypes", "xdsl", "builtins"})
_SMALL = (int, float, complex, str, bytes, bool, type(None))
_UNBOUND = object()


@dataclass(slots=True)
class Read:
    """One compile-time value read: ``kind`` (global, closure cell, attribute, defaults,
    keyword defaults), where it was read from (``holder``, ``key``), the value and, for a
    small list/dict/set/array, its ``repr`` (a change in place keeps the identity)."""

    kind: int
    holder: Any
    key: Any
    value: Any
    text: str | None


@dataclass
class ReadLog:
    """The reads of one compilation; ``ran``: whether the frontend ran at all (a cache hit
    does not run it)."""

    reads: list[Read] = field(default_factory=list)
    ran: bool = False
    seen: set[tuple[int, int, Any]] = field(default_factory=set)


_LOGS: list[ReadLog] = []


@contextmanager
def recording() -> Iterator[ReadLog]:
    """Record the reads of every frontend run inside the ``with`` block."""
    log = ReadLog()
    _LOGS.append(log)
    try:
        yield log
    finally:
        _LOGS.remove(log)


def note_run() -> None:
    """The frontend starts evaluating an operator."""
    for log in _LOGS:
        log.ran = True


def _text(v: Any) -> str | None:
    if isinstance(v, np.ndarray) and v.size <= 256:
        return repr(v.tolist())
    if isinstance(v, list | dict | set) and len(v) <= 256:
        return repr(v)
    return None


def _note(kind: int, holder: Any, key: Any, value: Any) -> None:
    if not _LOGS:
        return
    text = _text(value) if kind != KWDEFAULTS else repr(sorted(value.items()))
    for log in _LOGS:
        tag = (kind, id(holder), key)
        if tag not in log.seen:
            log.seen.add(tag)
            log.reads.append(Read(kind, holder, key, value, text))


def note_global(namespace: dict[str, Any], name: str, value: Any) -> None:
    """``name`` was read from the module globals ``namespace``."""
    _note(GLOBAL, namespace, name, value)


def note_cell(fn: types.FunctionType, name: str, value: Any) -> None:
    """The closure variable ``name`` of ``fn`` was read."""
    cell = (fn.__closure__ or ())[fn.__code__.co_freevars.index(name)]
    _note(CELL, cell, None, value)


def _library(obj: Any) -> bool:
    if not isinstance(obj, types.ModuleType):
        return False
    top = obj.__name__.split(".")[0]
    return top in _LIBRARIES or top in sys.stdlib_module_names


def note_attr(obj: Any, attr: str, value: Any) -> None:
    """``obj.attr`` was evaluated to ``value`` (``obj`` not a tensor)."""
    if not _library(obj):
        _note(ATTR, obj, attr, value)


def note_defaults(fn: types.FunctionType) -> None:
    """The defaults of ``fn`` were applied (its ``__defaults__``/``__kwdefaults__``)."""
    _note(DEFAULTS, fn, None, fn.__defaults__)
    if fn.__kwdefaults__:
        _note(KWDEFAULTS, fn, None, fn.__kwdefaults__)


def note_python_call(fn: Any, depth: int = 0) -> None:
    """``fn`` is called in Python at compile time (all its arguments are constants), so the
    frontend does not see what it reads: record, over-approximating, every global and
    closure variable its code names, their attributes that its code names, its defaults, and
    so on for the user functions it reaches (up to 8 levels)."""
    if not _LOGS or not isinstance(fn, types.FunctionType) or depth > 8:
        return
    if _library(sys.modules.get(fn.__module__ or "")):
        return
    code = fn.__code__
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= set(c.co_names)
    note_defaults(fn)
    values = []
    for cell in fn.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:
            continue
        _note(CELL, cell, None, values[-1])
    for var in sorted(names):
        if var in fn.__globals__:
            values.append(fn.__globals__[var])
            note_global(fn.__globals__, var, values[-1])
    for v in values:
        for attr in sorted(names):
            if not isinstance(v, types.FunctionType) and attr in getattr(v, "__dict__", ()):
                note_attr(v, attr, getattr(v, attr))
        if isinstance(v, types.FunctionType):
            note_python_call(v, depth + 1)


def _same(cur: Any, old: Any) -> bool:
    if cur is old:
        return True
    if type(cur) is not type(old):
        return False
    if isinstance(old, _SMALL) or (isinstance(old, tuple) and all(type(x) in _SMALL for x in old)):
        return bool(cur == old)
    if isinstance(old, types.MethodType | types.BuiltinMethodType):
        return bool(cur == old)  # a bound method is a new object on every attribute read
    return False


def changed(reads: list[Read]) -> bool:
    """Whether any value in ``reads`` is now another object or value, or a small mutable
    container recorded there was changed in place. On the call path of every ``@jit`` call:
    the common case (same object, nothing to re-``repr``) is one lookup and one ``is``."""
    for r in reads:
        kind = r.kind
        try:
            if kind == GLOBAL:
                cur = r.holder.get(r.key, _UNBOUND)
            elif kind == ATTR:
                cur = getattr(r.holder, r.key)
            elif kind == CELL:
                cur = r.holder.cell_contents
            elif kind == DEFAULTS:
                cur = r.holder.__defaults__
            else:
                cur = r.holder.__kwdefaults__
        except Exception:  # noqa: BLE001 - a deleted attribute, an empty cell, ...
            return True
        if cur is not r.value and not _same(cur, r.value):
            return True
        if r.text is not None:
            now = repr(sorted(cur.items())) if kind == KWDEFAULTS else _text(cur)
            if now != r.text:
                return True
    return False
