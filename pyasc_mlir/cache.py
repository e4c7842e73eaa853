"""The compile cache: keys, fingerprints, the watch of globals, the cache folder, atomic I/O.

Results are cached on disk under ``PYASC_CACHE_DIR`` (unset or empty: ``~/.cache/pyasc_mlir``;
a path that is a file or not writable is a located ``PyAscUsageError``) under a
key (:func:`cache_key`) made of a hash of the compiler's own sources
(:func:`compiler_fingerprint`), the source of the operator and of every user helper it reaches
(through globals, closures, module attributes, classes), default arguments and the global
constants they read, attributes of user objects included (:func:`source_fingerprint`), the
argument descriptions and the options. A ``@jit`` function also watches the values its
operator read while compiling (:mod:`pyasc_mlir.frontend.reads`).
``PYASC_CACHE_DISABLE=1`` turns the cache off: nothing is read or written there, not even the
precompiled runtime header. Files are published atomically
(:func:`atomic_write`: a temporary file, then ``os.replace``), so concurrent compilations of
one operator leave a valid entry.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import sys
import tempfile
import types
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import pyasc_mlir.dialects
import pyasc_mlir.frontend
import pyasc_mlir.passes
from pyasc_mlir import version
from pyasc_mlir.errors import CacheWarning, PyAscUsageError, caller_loc
from pyasc_mlir.runtime.cpu import default_cache_dir
from pyasc_mlir.types import TensorDesc

Watch = list[tuple[Any, str | None, Any, str | None]]
"""Every global/closure binding an operator reads: ``(namespace or cell, name, value, small
mutable container's repr)`` (see :func:`global_watch`, :func:`watch_changed`)."""


_CACHE_HINT = (
    "set PYASC_CACHE_DIR to a writable folder (unset or empty: ~/.cache/pyasc_mlir), "
    "or PYASC_CACHE_DISABLE=1 to compile without the cache"
)


_CACHE_SUBFOLDERS = ("cpu", "ops", "fuzz")
"""The folders the cache keeps under its root: CPU libraries and precompiled headers, operator
entries, the fuzzer's batch libraries."""


def cache_dir() -> Path:
    """The on-disk cache root: ``PYASC_CACHE_DIR``, or ``~/.cache/pyasc_mlir`` when it is
    unset or empty (:func:`pyasc_mlir.runtime.cpu.default_cache_dir`), created when missing.

    Raises:
        PyAscUsageError: located at the caller's line: the path (or one of the cache's own
            subfolders ``cpu``, ``ops``, ``fuzz``) is a file, cannot be created (a file on the
            way, no permission) or is not writable; the hint names
            ``PYASC_CACHE_DISABLE=1``.
    """
    root = default_cache_dir()
    where = f"the cache folder {root} (PYASC_CACHE_DIR)"
    if root.exists() and not root.is_dir():
        raise PyAscUsageError(f"{where} is a file, not a folder", caller_loc(), _CACHE_HINT)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PyAscUsageError(
            f"{where} cannot be created: {exc.strerror or exc}", caller_loc(), _CACHE_HINT
        ) from None
    if not os.access(root, os.W_OK | os.X_OK):
        raise PyAscUsageError(f"{where} is not writable", caller_loc(), _CACHE_HINT)
    for sub in _CACHE_SUBFOLDERS:
        path = root / sub
        if path.exists() and not path.is_dir():
            problem = "is a file, not a folder"
        elif path.exists() and not os.access(path, os.W_OK | os.X_OK):
            problem = "is not writable"
        else:
            continue
        raise PyAscUsageError(f"{path}, inside {where}, {problem}", caller_loc(), _CACHE_HINT)
    return root


def cache_enabled() -> bool:
    """Whether the cache is on (``PYASC_CACHE_DISABLE`` is not ``1``/``true``/``yes``)."""
    return os.environ.get("PYASC_CACHE_DISABLE", "") not in ("1", "true", "yes")


_LIBRARY_MODULES = frozenset({"pyasc_mlir", "numpy", "ml_dtypes", "xdsl", "builtins"})


def _is_user_code(obj: Any) -> bool:
    """Whether ``obj`` (function, class or module) is code whose source belongs in the cache key:
    everything but pyasc-mlir itself (covered by the compiler fingerprint), the standard
    library and NumPy (``ml_dtypes``, ``xdsl``)."""
    module = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", "")
    top = (module or "").split(".")[0]
    return top not in _LIBRARY_MODULES and top not in sys.stdlib_module_names


def _code_names(code: types.CodeType) -> set[str]:
    """Global and attribute names a code object (and the code nested in it) reads."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def _opaque_instance(v: Any) -> bool:
    """An instance of a user class with the default ``repr`` (``<... object at 0x...>``) and
    attributes in ``__dict__``."""
    cls = type(v)
    return (
        cls.__repr__ is object.__repr__
        and _is_user_code(cls)
        and isinstance(getattr(v, "__dict__", None), dict)
    )


class _Fingerprint:
    """Text that changes whenever anything the frontend would read while compiling an operator
    changes: the source of the operator and of every user helper it reaches (transitively,
    through globals, closures, module attributes and classes), default arguments, and the
    global constants they read (``name=repr``; arrays by content hash)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.seen: set[int] = set()
        self.watch: Watch = []
        """Every global/closure binding read (see :data:`Watch`)."""

    def _watch(self, holder: Any, name: str | None, v: Any) -> None:
        text = None
        if isinstance(v, list | dict | set | np.ndarray) and len(v) <= 256:
            text = repr(v.tolist() if isinstance(v, np.ndarray) else v)
        self.watch.append((holder, name, v, text))

    def value(self, name: str, v: Any, depth: int = 0) -> None:
        if isinstance(v, types.MethodType):
            self.value(f"{name}.__self__", v.__self__, depth)
            v = v.__func__
        wrapped = getattr(v, "__wrapped__", None) if not isinstance(v, type) else None
        if isinstance(wrapped, types.FunctionType):  # @jit helpers, functools.wraps
            v = wrapped
        if isinstance(v, types.FunctionType):
            self.function(name, v, depth)
        elif isinstance(v, type):
            self.klass(name, v, depth)
        elif isinstance(v, types.ModuleType):
            self.parts.append(f"{name}=<module {v.__name__}>")
        elif isinstance(v, np.ndarray):
            digest = hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()
            self.parts.append(f"{name}=ndarray({v.dtype},{v.shape},{digest})")
        elif _opaque_instance(v):
            self.instance(name, v, depth)
        else:
            try:
                text = repr(v)
            except Exception:  # noqa: BLE001 - any broken __repr__
                text = f"<{type(v).__qualname__} object>"
            self.parts.append(f"{name}={text}")

    def instance(self, name: str, obj: Any, depth: int) -> None:
        """An instance of a user class whose ``repr`` is the default one (an address): its
        class and its attributes (``vars``), so the key follows ``OBJ.scale = 11`` and is the
        same in every process."""
        cls = type(obj)
        if id(obj) in self.seen or depth > 50:
            self.parts.append(f"{name}=<{cls.__module__}.{cls.__qualname__} instance (seen)>")
            return
        self.seen.add(id(obj))
        self.parts.append(f"{name}=<{cls.__module__}.{cls.__qualname__} instance>")
        self.klass(f"{name}.__class__", cls, depth + 1)
        for attr, v in sorted(vars(obj).items()):
            self.value(f"{name}.{attr}", v, depth + 1)

    def function(self, name: str, fn: types.FunctionType, depth: int) -> None:
        fn = inspect.unwrap(fn)
        if not isinstance(fn, types.FunctionType) or not _is_user_code(fn):
            self.parts.append(
                f"{name}=<{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', fn)!s}>"
            )
            return
        if id(fn) in self.seen or depth > 50:
            self.parts.append(f"{name}=<{fn.__module__}.{fn.__qualname__} (seen)>")
            return
        self.seen.add(id(fn))
        try:
            source = inspect.getsource(fn)
        except (OSError, TypeError):
            source = repr(fn.__code__.co_code) + repr(fn.__code__.co_consts)
        self.parts.append(f"def {name} {fn.__module__}.{fn.__qualname__}:\n{source}")
        if fn.__defaults__:
            self.value(f"{name}.__defaults__", fn.__defaults__, depth + 1)
        if fn.__kwdefaults__:
            self.value(f"{name}.__kwdefaults__", sorted(fn.__kwdefaults__.items()), depth + 1)
        names = _code_names(fn.__code__)
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
            try:
                self.value(f"{name}.<closure {var}>", cell.cell_contents, depth + 1)
                self._watch(cell, None, cell.cell_contents)
            except ValueError:  # empty cell
                continue
        g = fn.__globals__
        for var in sorted(names):
            if var not in g:
                continue
            v = g[var]
            self._watch(g, var, v)
            if isinstance(v, types.ModuleType):
                if _is_user_code(v):  # helpers reached as module.attr
                    for attr in sorted(names):
                        if attr in vars(v):
                            self._watch(vars(v), attr, vars(v)[attr])
                            self.value(f"{var}.{attr}", vars(v)[attr], depth + 1)
                else:
                    self.parts.append(f"{var}=<module {v.__name__}>")
            else:
                self.value(var, v, depth + 1)

    def klass(self, name: str, cls: type, depth: int) -> None:
        if not _is_user_code(cls) or id(cls) in self.seen:
            self.parts.append(f"{name}=<class {cls.__module__}.{cls.__qualname__}>")
            return
        self.seen.add(id(cls))
        for k in cls.__mro__:
            if not _is_user_code(k):
                continue
            for attr, v in sorted(vars(k).items()):
                if (attr.startswith("__") and attr.endswith("__")) or attr == "_compiled_op":
                    continue  # dunders; the compiled result Op.__call__ caches on the class
                if isinstance(v, staticmethod | classmethod):
                    v = v.__func__
                self.value(f"{k.__qualname__}.{attr}", v, depth + 1)


def source_fingerprint(fn: Callable[..., Any], inputs: Sequence[object] = ()) -> str:
    """The source-level part of the cache key (see :class:`_Fingerprint`); ``inputs`` adds the
    compile-time arguments that are classes or objects (e.g. an ``Op`` subclass as ``self``)."""
    fp = _Fingerprint()
    fp.value(getattr(fn, "__name__", "fn"), fn)
    for i, a in enumerate(inputs):
        if not isinstance(a, TensorDesc | int | float | str | bool | type(None)):
            fp.value(f"<input {i}>", a)
    return "\n".join(fp.parts)


_UNBOUND = object()


def global_watch(fn: Callable[..., Any]) -> Watch:
    """The global and closure bindings ``fn`` and the helpers it reaches read (what
    :class:`_Fingerprint` puts in the cache key), to notice cheaply that one changed."""
    fp = _Fingerprint()
    fp.value(getattr(fn, "__name__", "fn"), fn)
    return fp.watch


def watch_changed(watch: Watch) -> bool:
    """A binding in ``watch`` now names another object (``SCALE = 3.0`` after compiling with
    2.0), or a small list/dict/set/array constant was changed in place."""
    for holder, name, v, text in watch:
        if name is None:
            try:
                cur = holder.cell_contents
            except ValueError:
                return True
        else:
            cur = holder.get(name, _UNBOUND)
        if cur is not v:
            return True
        if text is not None and repr(v.tolist() if isinstance(v, np.ndarray) else v) != text:
            return True
    return False


@functools.cache
def compiler_fingerprint() -> str:
    """SHA-256 over the compiler's own sources (dialects, passes, frontend, emitter, runtime
    header), so a changed compiler never reuses a stale cache entry."""
    h = hashlib.sha256(version.__version__.encode())
    roots = [Path(__file__).parent]
    for m in (pyasc_mlir.dialects, pyasc_mlir.passes, pyasc_mlir.frontend):
        assert m.__file__ is not None, f"{m.__name__} has no __init__.py"
        roots.append(Path(m.__file__).parent)
    for root in roots:
        for f in sorted(root.rglob("*")):
            if f.suffix in (".py", ".h") and "__pycache__" not in f.parts:
                h.update(f.read_bytes())
    return h.hexdigest()


def cache_key(fn: Callable[..., Any], inputs: Sequence[object], options: dict) -> str:
    """The 32-hex-digit key of compiling ``fn`` for ``inputs`` with ``options``: the compiler
    fingerprint, the source fingerprint, the argument descriptions and the options, with a
    derived operator's variant (its ``__pyasc_key__`` dict, e.g. a backward's strategy)."""
    h = hashlib.sha256()
    for part in (
        compiler_fingerprint(),
        source_fingerprint(fn, inputs),
        repr(list(inputs)),
        repr(sorted({**options, **getattr(fn, "__pyasc_key__", {})}.items())),
    ):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def compile_options(
    platform: str,
    double_buffer: bool,
    name: str,
    tile: int,
    block_dim: int,
    tile_m: int,
    tile_n: int,
    dynamic: bool,
) -> dict[str, Any]:
    """The options part of ``compile``'s cache key (:func:`cache_key`): platform,
    double_buffer and name, then only the knobs that are set (tile/block_dim, tile_m/tile_n,
    dynamic)."""
    options: dict[str, Any] = {"platform": platform, "double_buffer": double_buffer, "name": name}
    if tile or block_dim:
        options["tiling"] = (tile, block_dim)
    if tile_m or tile_n:
        options["cube_tiling"] = (tile_m, tile_n)
    if dynamic:
        options["dynamic"] = True
    return options


def warn_cache(message: str) -> None:
    """A :class:`CacheWarning` ``pyasc-mlir cache: <message>``, located at the user's call."""
    loc = caller_loc()
    text = f"pyasc-mlir cache: {message}"
    if loc is None:
        warnings.warn(text, CacheWarning, stacklevel=3)
    else:
        warnings.warn_explicit(text, CacheWarning, loc.file, loc.line)


def file_sha256(path: Path) -> str:
    """The SHA-256 of the file at ``path`` (hex)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``path`` so that readers (other processes too) see the old or the new content,
    never a partial file: a unique temporary file in the same folder, then ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def text_sha256(text: str) -> str:
    """The SHA-256 of ``text`` encoded as UTF-8 (hex)."""
    return hashlib.sha256(text.encode()).hexdigest()
