"""Compile driver: Python operator -> IR at every stage -> Ascend C -> CPU build, with caching.

``compile`` runs the frontend, the pass pipeline (``asc-decompose``, ``asc-fuse``, ``asc-tile``,
``asc-double-buffer``, ``asc-buffer-alloc``, ``convert-asc-to-ascendc``), emits ``kernel.cpp``,
``host.cpp``, ``cpu_entry.cpp`` and ``op.json`` and builds the CPU library. Results are cached
in memory and on disk (``PYASC_CACHE_DIR``, default ``~/.cache/pyasc_mlir``) under a key made of
the compiler version, the operator's source (and its helpers'), the argument descriptions,
compile-time constants, platform and options. ``PYASC_CACHE_DISABLE=1`` turns the cache off.

Cache details: the key covers a hash of the compiler's own sources, the source of the operator
and of every user helper it reaches (through globals, closures, module attributes, classes),
default arguments and the global constants they read. Files are published atomically (a
temporary file, then ``os.replace``), so concurrent compilations of one operator leave a valid
entry; ``op.json`` records the SHA-256 of the library, and a truncated or corrupt entry is
rebuilt with a :class:`CacheWarning`.

Inputs: see :meth:`CompiledOp.__call__` (dtype conversion rule, views, zero-size dimensions).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import os
import shutil
import sys
import tempfile
import time
import types
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, memref, scf
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

from pyasc_mlir.checks import (
    check_outputs,
    memory_check_enabled,
    nonfinite_origin,
    numeric_check_enabled,
)
from pyasc_mlir.dialects.asc import Asc, LaunchOp
from pyasc_mlir.dialects.ascendc import Ascendc
from pyasc_mlir.dynamic import DynamicTiling, ShapeMismatch
from pyasc_mlir.errors import (
    CacheWarning,
    PyAscCompileError,
    PyAscUsageError,
    caller_loc,
    user_facing,
)
from pyasc_mlir.passes.registry import PASSES
from pyasc_mlir.platform import DEFAULT_PLATFORM, get_platform
from pyasc_mlir.profiler import notify as notify_profilers
from pyasc_mlir.types import TensorDesc, np_dtype_of

__version__ = "0.1.0"
STAGES = ("tensor", "tile", "ascendc")
_MEMORY_CACHE: dict[str, CompiledOp] = {}


def make_context() -> Context:
    """An xDSL context with every dialect pyasc-mlir uses."""
    ctx = Context()
    for d in (builtin.Builtin, func.Func, arith.Arith, scf.Scf, memref.MemRef, Asc, Ascendc):
        ctx.load_dialect(d)
    return ctx


def clear_memory_cache() -> None:
    """Forget in-memory compiled operators (the next ``compile`` reads the disk cache)."""
    _MEMORY_CACHE.clear()


def cache_dir() -> Path:
    """The on-disk cache root (``PYASC_CACHE_DIR`` or ``~/.cache/pyasc_mlir``)."""
    return Path(os.environ.get("PYASC_CACHE_DIR", Path.home() / ".cache" / "pyasc_mlir"))


def cache_enabled() -> bool:
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


class _Fingerprint:
    """Text that changes whenever anything the frontend would read while compiling an operator
    changes: the source of the operator and of every user helper it reaches (transitively,
    through globals, closures, module attributes and classes), default arguments, and the
    global constants they read (``name=repr``; arrays by content hash)."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.seen: set[int] = set()
        self.watch: list[tuple[Any, str | None, Any, str | None]] = []
        """Every global/closure binding read: ``(namespace or cell, name, value, small
        mutable container's repr)`` (see :func:`watch_changed`)."""

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
        else:
            try:
                text = repr(v)
            except Exception:  # noqa: BLE001 - any broken __repr__
                text = f"<{type(v).__qualname__} object>"
            self.parts.append(f"{name}={text}")

    def function(self, name: str, fn: types.FunctionType, depth: int) -> None:
        fn = inspect.unwrap(fn)
        if not isinstance(fn, types.FunctionType) or not _is_user_code(fn):
            self.parts.append(f"{name}=<{getattr(fn, '__module__', '')}."
                              f"{getattr(fn, '__qualname__', fn)!s}>")
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


def _source_of(fn: Callable[..., Any], inputs: Sequence[object] = ()) -> str:
    """The source-level part of the cache key (see :class:`_Fingerprint`); ``inputs`` adds the
    compile-time arguments that are classes or objects (e.g. an ``Op`` subclass as ``self``)."""
    fp = _Fingerprint()
    fp.value(getattr(fn, "__name__", "fn"), fn)
    for i, a in enumerate(inputs):
        if not isinstance(a, TensorDesc | int | float | str | bool | type(None)):
            fp.value(f"<input {i}>", a)
    return "\n".join(fp.parts)


_UNBOUND = object()


def global_watch(fn: Callable[..., Any]) -> list[tuple[Any, str | None, Any, str | None]]:
    """The global and closure bindings ``fn`` and the helpers it reaches read (what
    :class:`_Fingerprint` puts in the cache key), to notice cheaply that one changed."""
    fp = _Fingerprint()
    fp.value(getattr(fn, "__name__", "fn"), fn)
    return fp.watch


def watch_changed(watch: list[tuple[Any, str | None, Any, str | None]]) -> bool:
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
    import pyasc_mlir.dialects
    import pyasc_mlir.frontend
    import pyasc_mlir.passes

    h = hashlib.sha256(__version__.encode())
    roots = [Path(__file__).parent, *(Path(m.__file__).parent for m in (
        pyasc_mlir.dialects, pyasc_mlir.passes, pyasc_mlir.frontend))]
    for root in roots:
        for f in sorted(root.rglob("*")):
            if f.suffix in (".py", ".h") and "__pycache__" not in f.parts:
                h.update(f.read_bytes())
    return h.hexdigest()


def _cache_key(fn: Callable[..., Any], inputs: Sequence[object], options: dict) -> str:
    h = hashlib.sha256()
    for part in (compiler_fingerprint(), _source_of(fn, inputs), repr(list(inputs)),
                 repr(sorted(options.items()))):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _tensor_bytes(t: TensorType) -> int:
    return math.prod(t.get_shape()) * np_dtype_of(t.element_type).itemsize


def _unfused_bytes(module: ModuleOp) -> int:
    """GM bytes if every tensor-level op ran as its own kernel (operands read, result written)."""
    total = 0
    for op in module.walk():
        if op.name.startswith("asc.") and op.results and isinstance(op.results[0].type,
                                                                     TensorType):
            for v in [*op.operands, *op.results]:
                if isinstance(v.type, TensorType):
                    total += _tensor_bytes(v.type)
    return total


@dataclass
class _Launch:
    """What one call needs besides the arrays: the tiling struct (bytes and values), the
    number of blocks and the output shapes."""

    tiling_bytes: bytes
    tiling: dict[str, int]
    block_dim: int
    out_shapes: list[tuple[int, ...]]


_new_output: Callable[[tuple[int, ...], np.dtype], np.ndarray] = np.empty
"""Allocates a kernel's result array, uninitialised: every kernel writes every element of its
results (``tests/test_multi_kernel.py`` checks that with a stand-in that fills NaN)."""


@dataclass
class _Step:
    """One launch of a multi-kernel operator (see :func:`_launch_plan`): value ids of the
    arguments, ``(shape, dtype)`` of the results (value ids follow on from the earlier ones)."""

    kernel: str
    block_dim: int
    tiling_bytes: bytes
    args: list[int]
    results: list[tuple[tuple[int, ...], np.dtype]]


def _steps_of(launches: list[dict[str, Any]], n_inputs: int, returns: list[int]) -> list[_Step]:
    """``op.json``'s ``launches`` as :class:`_Step` s, checked: every value id refers to an
    input or an earlier launch's result, result ids are consecutive.

    Raises:
        ValueError, KeyError, TypeError: malformed launches."""
    steps = []
    known = n_inputs
    for la in launches:
        if any(not 0 <= int(i) < known for i in la["args"]):
            raise ValueError(f"{la['kernel']} reads a value that is not computed before it")
        for r in la["results"]:
            if r["id"] != known:
                raise ValueError(f"{la['kernel']}: result id {r['id']}, expected {known}")
            known += 1
        if int(la["block_dim"]) < 1:
            raise ValueError(f"{la['kernel']}: block_dim {la['block_dim']}")
        steps.append(_Step(str(la["kernel"]), int(la["block_dim"]),
                           np.array(list(la["tiling"].values()), dtype=np.int64).tobytes(),
                           [int(i) for i in la["args"]],
                           [(tuple(int(d) for d in r["shape"]), np.dtype(r["dtype"]))
                            for r in la["results"]]))
    if any(not 0 <= int(i) < known for i in returns):
        raise ValueError("a returned value is not computed")
    return steps


class CompiledOp:
    """A compiled operator: callable on NumPy arrays.

    Attributes:
        name: kernel base name.
        inputs, outputs: ``TensorDesc`` of the runtime arguments and results.
        info: the ``op.json`` content (see ``compile``).
        directory: folder holding ``kernel.cpp``, ``host.cpp``, ``cpu_entry.cpp``, ``op.json``.
    """

    def __init__(self, directory: Path, info: dict[str, Any],
                 rebuild: Callable[[], dict[str, ModuleOp]] | None = None):
        self.directory = directory
        self.info = info
        self.name = info["name"]
        self.inputs = [TensorDesc(d["shape"], d["dtype"]) for d in info["inputs"]]
        self.outputs = [TensorDesc(d["shape"], d["dtype"]) for d in info["outputs"]]
        self._in_specs = [(d.shape, d.np_dtype) for d in self.inputs]
        self._out_dtypes = [d.np_dtype for d in self.outputs]
        self._rebuild = rebuild
        self._stages: dict[str, ModuleOp] | None = None
        self._cpu = None
        self._keep: Any = None  # a TemporaryDirectory holding the files (cache disabled)
        self._dyn: DynamicTiling | None = None
        self._launches: dict[tuple, _Launch] = {}
        self._steps: list[_Step] | None = None
        self._cpu_multi: dict[bool, dict[str, Any]] = {}
        self.tiling_computations = 0
        """How often the host tiling was computed (dynamic dims: once per new shape)."""
        if info.get("dynamic"):
            self._dyn = DynamicTiling(info["dynamic"]["spec"], info["dynamic"]["fields"],
                                      info["dynamic"]["shapes"], info.get("arg_names") or [])

    @property
    def dynamic(self) -> bool:
        """Whether the kernel has dynamic dims (``None`` in ``inputs``/``outputs``)."""
        return self._dyn is not None

    def accepts(self, shapes: Sequence[tuple[int, ...]]) -> bool:
        """Whether input arrays of these shapes fit the compiled kernel (dynamic dims: ranks and
        static dims; other kernels: the exact shapes). Dynamic dims that the kernel treats as
        one dimension must also be equal."""
        if self._dyn is None:
            return [tuple(s) for s in shapes] == [d.shape for d in self.inputs]
        if isinstance(shapes, tuple) and shapes in self._launches:
            return True
        try:
            self._launch_for(tuple(tuple(s) for s in shapes))
        except PyAscUsageError:
            return False
        return True

    def _launch(self, args: list[np.ndarray]) -> _Launch:
        """Tiling bytes, block_dim and output shapes for these inputs (dynamic dims: computed
        on the first call with each new shape, then cached)."""
        return self._launch_for(tuple(a.shape for a in args))

    def _launch_for(self, shapes: tuple[tuple[int, ...], ...]) -> _Launch:
        hit = self._launches.get(shapes)
        if hit is not None:
            return hit
        if self._dyn is None:
            tiling = self.info["tiling"]
            outs = [d.shape for d in self.outputs]
        else:
            try:
                tiling, outs = self._dyn.compute(shapes)
            except ShapeMismatch as exc:
                raise PyAscUsageError(f"{self.name}(): {exc.message}", caller_loc(),
                                      f"{exc.hint}; compiled signature: ({self._signature()})"
                                      ) from None
            self.tiling_computations += 1
        launch = _Launch(np.array(list(tiling.values()), dtype=np.int64).tobytes(),
                         dict(tiling), int(tiling["block_dim"]), outs)  # type: ignore[arg-type]
        if len(self._launches) > 4096:
            self._launches.clear()
        self._launches[shapes] = launch
        return launch

    # -- argument handling -----------------------------------------------------------------
    def _signature(self) -> str:
        names = self.info.get("arg_names") or [f"arg{i}" for i in range(len(self.inputs))]
        return ", ".join(f"{n}: {list(d.shape)} {d.dtype}"
                         for n, d in zip(names, self.inputs, strict=False))

    def _arg_name(self, i: int) -> str:
        names = self.info.get("arg_names") or []
        return f"argument {i} ({names[i]!r})" if i < len(names) else f"argument {i}"

    def _check(self, arrays: Sequence[Any]) -> list[np.ndarray]:
        """The arguments as C-contiguous arrays of the compiled dtypes (see ``__call__``).

        The common case (plain C-contiguous arrays of the compiled dtypes and, for static
        kernels, shapes) is checked inline; anything else takes :meth:`_check_slow`."""
        specs = self._in_specs
        if len(arrays) == len(specs):
            static = self._dyn is None
            for a, (shape, dtype) in zip(arrays, specs, strict=True):
                if not (type(a) is np.ndarray and a.dtype == dtype and a.flags.c_contiguous
                        and a.ndim and (not static or a.shape == shape)):  # 0-d: made 1-d
                    return self._check_slow(arrays)
            return list(arrays)
        return self._check_slow(arrays)

    def _check_slow(self, arrays: Sequence[Any]) -> list[np.ndarray]:
        """:meth:`_check` for any arguments: count, shapes, torch tensors, dtype conversion,
        copies of non-contiguous views."""
        if len(arrays) != len(self.inputs):
            n = len(self.inputs)
            raise PyAscUsageError(
                f"{self.name}() takes {n} tensor argument{'s' if n != 1 else ''}, got "
                f"{len(arrays)}", caller_loc(),
                f"the operator was compiled for ({self._signature()})")
        out = []
        for i, (a, d) in enumerate(zip(arrays, self.inputs, strict=True)):
            arr = a if isinstance(a, np.ndarray) else np.asarray(
                torch_to_numpy(a, f"{self._arg_name(i)} of {self.name}()"))
            if tuple(arr.shape) != d.shape and self._dyn is None:
                raise PyAscUsageError(
                    f"{self._arg_name(i)} of {self.name}() has shape {list(arr.shape)} but the "
                    f"operator was compiled for {list(d.shape)}", caller_loc(),
                    f"compiled signature: ({self._signature()}); compile again for the new "
                    "shape (a @jit function does that by itself)")
            out.append(np.ascontiguousarray(self._convert(i, arr, d)))
        return out

    def _convert(self, i: int, arr: np.ndarray, d: TensorDesc) -> np.ndarray:
        """The documented input rule: an array of the compiled dtype is used as is; another
        float or integer array is converted with ``astype`` (rounding to nearest) unless a
        finite value would overflow to inf; bool, complex and other arrays are refused."""
        if arr.dtype == d.np_dtype:
            return arr
        what = f"{self._arg_name(i)} of {self.name}()"
        if arr.dtype.kind not in "fiu":
            raise PyAscUsageError(
                f"{what} has dtype {arr.dtype}; the operator was compiled for {d.dtype}",
                caller_loc(), f"float and integer arrays are converted to {d.dtype}; convert "
                f"this one explicitly, e.g. x.astype(np.{d.dtype})")
        with np.errstate(over="ignore", invalid="ignore"):
            conv = arr.astype(d.np_dtype)
        bad = ~np.isfinite(conv)
        if arr.dtype.kind == "f":
            bad &= np.isfinite(arr)
        if bad.any():
            idx = tuple(int(k) for k in np.argwhere(bad)[0])
            top = float(np.finfo(d.np_dtype).max)
            raise PyAscUsageError(
                f"{what} holds {arr.dtype} value {arr[idx].item()!r} at index {list(idx)}, "
                f"outside the {d.dtype} range (largest finite {top:g}); "
                "converting it would give inf", caller_loc(),
                "scale the input, or compile the operator for float32")
        return conv

    def _run_empty(self, args: list[np.ndarray]) -> list[np.ndarray]:
        """Outputs of an operator with a zero-size input dimension (no kernel)."""
        if all(0 in d.shape for d in self.outputs):
            return [np.zeros(d.shape, d.np_dtype) for d in self.outputs]
        from pyasc_mlir.interpreter.core import run_function

        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty axis: NaN
            outs = run_function(self.stages()["tensor"], self.name, args)
        return [np.asarray(o).astype(d.np_dtype).reshape(d.shape)
                for o, d in zip(outs, self.outputs, strict=True)]

    @staticmethod
    def _result(outs: list[np.ndarray]) -> np.ndarray | tuple[np.ndarray, ...]:
        return outs[0] if len(outs) == 1 else tuple(outs)

    # -- execution ---------------------------------------------------------------------------
    def stages(self) -> dict[str, ModuleOp]:
        """IR modules after the frontend (tensor), tiling (tile) and conversion (ascendc)."""
        if self._stages is None:
            self._stages = self._rebuild() if self._rebuild is not None else self._read_ir()
        return self._stages

    def _read_ir(self) -> dict[str, ModuleOp]:
        """The stage modules ``compile`` wrote next to ``op.json`` (``<stage>.mlir``)."""
        from xdsl.parser import Parser

        stages = {}
        for stage in STAGES:
            path = self.directory / f"{stage}.mlir"
            if not path.is_file():
                raise PyAscUsageError(f"{path} is missing, so this loaded operator cannot run "
                                      "in the interpreter", None,
                                      "compile it again with pyasc_mlir.compile(..., "
                                      "output_dir=...) to write its IR")
            stages[stage] = Parser(make_context(), path.read_text(), str(path)).parse_module()
        return stages

    @user_facing
    def run_stage(self, stage: str, *arrays: Any) -> list[np.ndarray]:
        """Run the IR of ``stage`` ("tensor", "tile" or "ascendc") in the interpreter."""
        from pyasc_mlir.interpreter.core import run_function

        if stage not in STAGES:
            raise PyAscUsageError(f"unknown stage {stage!r}; use one of {STAGES}")
        args = self._check(arrays)
        if self.info.get("empty"):
            return self._run_empty(args)
        if self._dyn is not None:
            outs = self._interp_dynamic(stage, args)
            self._numeric_check(outs, args, f"interpreter, {stage} stage")
            return outs
        outs = run_function(self.stages()[stage], self.name, args)  # memory check: BlockState
        outs = [np.asarray(o).reshape(d.shape) for o, d in zip(outs, self.outputs, strict=True)]
        self._numeric_check(outs, args, f"interpreter, {stage} stage")
        return outs

    def _interp_dynamic(self, stage: str, args: list[np.ndarray]) -> list[np.ndarray]:
        """Interpret the kernel of a ``tile``/``ascendc`` stage directly, block by block, with
        the tiling computed for these shapes (the top-level function is specialised to the
        compile-time stand-in shapes)."""
        from pyasc_mlir.interpreter.core import make_interpreter
        from pyasc_mlir.interpreter.tile_impls import kernel_ub_bytes, set_block

        if stage == "tensor":
            raise PyAscUsageError(
                f"{self.name}() has dynamic dims; its tensor stage is specialised to the "
                "compile-time stand-in sizes", caller_loc(),
                "run the 'tile' or 'ascendc' stage, or compile with static shapes")
        launch = self._launch(args)
        outs = [np.zeros(s, d.np_dtype) for s, d in zip(launch.out_shapes, self.outputs,
                                                         strict=True)]
        if launch.tiling.get("units", 1) == 0:
            return outs
        module = self.stages()[stage]
        (kname,) = self.info["kernel_names"]
        kernel = next(o for o in module.body.block.ops
                      if isinstance(o, func.FuncOp) and o.sym_name.data == kname)
        ins = [args[i] for i in self.info.get("kernel_args", range(len(args)))]
        flat = tuple(a.reshape(-1) for a in [*ins, *outs])
        interp = make_interpreter(module)
        for idx in range(launch.block_dim):
            set_block(interp, idx, launch.block_dim, launch.tiling, kernel_ub_bytes(kernel))
            interp.call_op(kname, flat)
        return outs

    def _numeric_check(self, outs: list[np.ndarray], args: list[np.ndarray], where: str) -> None:
        """Numeric-check mode (``pyasc_mlir.checks``): NaN/Inf in an output raises."""
        if not numeric_check_enabled():
            return

        def origin() -> tuple[str, str | None] | None:
            if self._stages is None and self._rebuild is None:
                return None  # loaded without its source
            return nonfinite_origin(self.stages()["tensor"], self.name, args)

        check_outputs(outs, self.name, where, origin)

    def _cpu_kernel(self, memcheck: bool = False) -> Any:
        """The loaded CPU library; ``memcheck``: its memory-check build (``-DPYASC_MEMCHECK=1``,
        built from ``kernel.cpp``/``cpu_entry.cpp`` on first use and cached like any build)."""
        from pyasc_mlir.runtime.cpu import CpuKernel

        if memcheck:
            if getattr(self, "_cpu_memcheck", None) is None:
                self._cpu_memcheck = CpuKernel(self._memcheck_library())
            return self._cpu_memcheck
        if self._cpu is None:
            self._cpu = CpuKernel(Path(self.info["library"]))
        return self._cpu

    def _cpu_entries(self, memcheck: bool) -> dict[str, Any]:
        """Several kernels: kernel name -> its entry (``pyasc_run_block_<kernel>``) in the
        CPU library (``memcheck``: the memory-check build, see :meth:`_cpu_kernel`)."""
        from pyasc_mlir.runtime.cpu import CpuKernel

        hit = self._cpu_multi.get(memcheck)
        if hit is None:
            lib = self._memcheck_library() if memcheck else Path(self.info["library"])
            hit = {k: CpuKernel(lib, entry=f"pyasc_run_block_{k}")
                   for k in dict.fromkeys(step.kernel for step in self._plan())}
            self._cpu_multi[memcheck] = hit
        return hit

    def _plan(self) -> list[_Step]:
        """``info["launches"]`` as :class:`_Step` s (built once).

        Raises:
            PyAscUsageError: the launches are malformed (a hand-edited ``op.json``)."""
        if self._steps is None:
            try:
                self._steps = _steps_of(self.info["launches"], len(self.inputs),
                                        self.info["returns"])
            except (KeyError, TypeError, ValueError) as exc:
                raise PyAscUsageError(f"{self.directory / 'op.json'}: bad launches ({exc})", None,
                                      "compile the operator again") from exc
        return self._steps

    def _memcheck_library(self) -> Path:
        from pyasc_mlir.runtime.cpu import build_library

        try:
            sources = {f: (self.directory / f).read_text() for f in ("kernel.cpp", "cpu_entry.cpp")}
        except OSError as exc:
            raise PyAscUsageError(f"memory check needs the emitted sources in {self.directory}: "
                                  f"{exc}; compile again") from exc
        root = None
        if not cache_enabled():  # PYASC_CACHE_DISABLE: build privately, next to nothing shared
            self._memcheck_dir = tempfile.TemporaryDirectory(prefix=f"pyasc-{self.name}-mc-")
            root = Path(self._memcheck_dir.name)
        return build_library(sources, get_platform(self.info["platform"]), cache_dir=root,
                             memcheck=True)

    @user_facing
    def run_cpu(self, *arrays: Any) -> list[np.ndarray]:
        """Run the CPU build of the emitted Ascend C, block by block (several kernels: one
        after another, as the host function launches them)."""
        return self._run_cpu(arrays)

    def _run_cpu(self, arrays: Sequence[Any]) -> list[np.ndarray]:
        """:meth:`run_cpu` without the ``user_facing`` wrapper (the call path's own)."""
        args = self._check(arrays)
        info = self.info
        if info.get("empty"):
            return self._run_empty(args)
        if len(info.get("launches", ())) > 1:
            outs = self._run_launches(args)
            self._numeric_check(outs, args, "CPU build")
            return outs
        launch = self._launch(args)
        new_output = _new_output
        outs = [new_output(s, dt) for s, dt in zip(launch.out_shapes, self._out_dtypes,
                                                   strict=True)]
        if launch.tiling.get("units", 1) == 0:  # a zero-size dynamic dim: no kernel
            return outs
        order = info.get("kernel_args")
        ins = args if order is None else [args[i] for i in order]
        memcheck = memory_check_enabled()
        kernel = self._cpu if self._cpu is not None and not memcheck else self._cpu_kernel(
            memcheck)  # may load the library or build the memcheck one
        start = time.perf_counter()
        kernel.run(launch.block_dim, [*ins, *outs], launch.tiling_bytes)
        notify_profilers(self, start)
        self._numeric_check(outs, args, "CPU build")
        return outs

    def _run_launches(self, args: list[np.ndarray]) -> list[np.ndarray]:
        """Several kernels (static shapes): each launch in order, its results in fresh arrays
        that later launches read; returns the values ``info["returns"]`` names (a returned
        input, or a value returned twice, as a copy). One profiler record for the whole op."""
        steps = self._plan()
        entries = self._cpu_entries(memory_check_enabled())  # may build the memcheck library
        values = list(args)
        start = time.perf_counter()
        for step in steps:
            outs = [_new_output(shape, dtype) for shape, dtype in step.results]
            entries[step.kernel].run(step.block_dim, [*(values[i] for i in step.args), *outs],
                                     step.tiling_bytes)
            values += outs
        notify_profilers(self, start)
        seen: set[int] = set()
        result = []
        for i in self.info["returns"]:
            result.append(values[i].copy() if i < len(args) or i in seen else values[i])
            seen.add(i)
        return result

    @user_facing
    def __call__(self, *arrays: Any, backend: str = "cpu") -> np.ndarray | tuple[np.ndarray, ...]:
        """Run the operator: ``backend="cpu"`` (the CPU build) or ``"interp"`` (the IR
        interpreter). One array per tensor parameter, of the compiled shape.

        Input rule: arrays of the compiled dtype are used as they are; other float or integer
        arrays (float64, int32, ...) are converted with ``astype`` (round to nearest), except
        that a finite value that would overflow the compiled dtype (e.g. 70000.0 for float16)
        is refused; bool, complex and object arrays are refused. Non-contiguous views (slices,
        transposes, negative strides) are copied to C order first. Operators compiled for a
        zero-size dimension return empty results without running a kernel. CPU
        ``torch.Tensor`` arguments are viewed as arrays (``pyasc_mlir.torch.to_numpy``), and
        then the results are ``torch.Tensor``s.

        Raises:
            PyAscUsageError: wrong argument count, shape or dtype (names the calling line).
        """
        return same_kind_as(arrays, self._call(arrays, backend))

    def _call(self, arrays: Sequence[Any], backend: str) -> np.ndarray | tuple[np.ndarray, ...]:
        """:meth:`__call__` without the wrappers: the results as NumPy arrays."""
        if backend == "cpu":
            return self._result(self._run_cpu(arrays))
        if backend == "interp":
            return self._result(self.run_stage("ascendc", *arrays))
        raise PyAscUsageError(f"unknown backend {backend!r}; use 'cpu' or 'interp'")


# -- PyTorch tensors in and out (pyasc_mlir.torch; torch is imported only once it is in use) --
def _torch_tensor_type() -> type | None:
    """``torch.Tensor`` when PyTorch is imported (no object can be a tensor before that)."""
    return getattr(sys.modules.get("torch"), "Tensor", None)


def uses_torch(values: Sequence[Any]) -> bool:
    """Whether any of ``values`` (or an item of a tuple/list value) is a ``torch.Tensor``."""
    tensor = _torch_tensor_type()
    return tensor is not None and any(
        isinstance(x, tensor) for v in values
        for x in (v if isinstance(v, tuple | list) else (v,)))


def torch_to_numpy(value: Any, what: str) -> Any:
    """A ``torch.Tensor`` as a NumPy array (:func:`pyasc_mlir.torch.to_numpy`: CPU only, no
    copy when contiguous, detached); any other value unchanged. ``what`` names the argument
    in errors.

    Raises:
        PyAscUsageError: a tensor not on the CPU, sparse, bfloat16, or without a NumPy dtype.
    """
    tensor = _torch_tensor_type()
    if tensor is None or not isinstance(value, tensor):
        return value
    from pyasc_mlir.torch import to_numpy

    return to_numpy(value, what)


def same_kind_as(inputs: Sequence[Any], result: Any) -> Any:
    """``result`` (an array, or a tuple/list of arrays) as ``torch.Tensor``s sharing its memory
    when any of ``inputs`` is a ``torch.Tensor``, else unchanged (NumPy in, NumPy out)."""
    if not uses_torch(inputs):
        return result
    from pyasc_mlir.torch import from_numpy

    if isinstance(result, np.ndarray):
        return from_numpy(result)
    return type(result)(from_numpy(r) for r in result)


TILING_KEYS = ("tile", "block_dim", "buffers", "tile_m", "tile_n")


def check_tiling(tiling: dict[str, int] | None, double_buffer: bool
                 ) -> tuple[int, int, bool]:
    """``(tile, block_dim, double_buffer)`` of a pinned ``tiling`` dict (see ``compile``; its
    ``tile_m``/``tile_n`` are read by :func:`cube_tiles`); the ranges that depend on the kernel
    (UB/L0C fit, core count, multiples of 16) are checked by ``asc-tile`` and
    ``asc-lower-cube``.

    Raises:
        PyAscUsageError: unknown key, a value that is not an int >= 0, or buffers not 1 or 2
            (located at the calling line)."""
    if tiling is None:
        return 0, 0, double_buffer
    hint = ('pin e.g. tiling={"tile": 24, "block_dim": 40, "buffers": 2} (matmul kernels: '
            '"tile_m", "tile_n"); 0 or a missing key keeps the automatic choice')
    if not isinstance(tiling, dict):
        raise PyAscUsageError(f"tiling must be a dict, got {type(tiling).__name__}",
                              caller_loc(), hint)
    for k, v in tiling.items():
        if k not in TILING_KEYS:
            raise PyAscUsageError(f"unknown tiling key {k!r}; known: {', '.join(TILING_KEYS)}",
                                  caller_loc(), hint)
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0:
            raise PyAscUsageError(f"tiling[{k!r}] = {v!r} is not an integer >= 0",
                                  caller_loc(), hint)
    buffers = tiling.get("buffers", 0)
    if buffers not in (0, 1, 2):
        raise PyAscUsageError(f"tiling['buffers'] = {buffers} is not 1 or 2", caller_loc(),
                              "1 = single buffering, 2 = double buffering (MTE2/V/MTE3 overlap)")
    return (int(tiling.get("tile", 0)), int(tiling.get("block_dim", 0)),
            double_buffer if not buffers else buffers == 2)


def cube_tiles(tiling: dict[str, int] | None) -> tuple[int, int]:
    """``(tile_m, tile_n)`` of a ``tiling`` dict already checked by :func:`check_tiling`
    (0 = automatic)."""
    if tiling is None:
        return 0, 0
    return int(tiling.get("tile_m", 0)), int(tiling.get("tile_n", 0))


def _lower(fn: Callable[..., Any], inputs: Sequence[object], name: str, platform: str,
           double_buffer: bool, fuse: bool = True, tile: int = 0, block_dim: int = 0,
           dynamic: dict[str, Any] | None = None, tile_m: int = 0, tile_n: int = 0
           ) -> tuple[dict[str, ModuleOp], list[str], dict[str, float]]:
    """Frontend and pass pipeline; ``dynamic``: the dynamic-dim request for ``asc-tile``
    (see :func:`_dynamic_request`), put on the top-level function. ``tile``: asc-tile's
    pinned tile; ``tile_m``/``tile_n``: asc-lower-cube's pinned block; ``block_dim``: both
    passes' pinned cores (0 = automatic)."""
    from pyasc_mlir.frontend.ast_frontend import build_module
    from pyasc_mlir.passes.dynamic_shapes import REQUEST_ATTR

    times: dict[str, float] = {}
    t0 = time.perf_counter()
    module, result_dtypes = build_module(fn, list(inputs), name)
    dynamic = _no_shape_reads(module, name, dynamic)
    if dynamic is not None:
        for op in module.body.block.ops:
            if isinstance(op, func.FuncOp) and op.sym_name.data == name:
                op.attributes[REQUEST_ATTR] = builtin.StringAttr(json.dumps(dynamic))
    times["frontend"] = time.perf_counter() - t0
    ctx = make_context()
    stages = {"tensor": module.clone()}
    plan = [("asc-decompose", {}), ("asc-fuse", {"per_op": not fuse}),
            ("asc-lower-layout", {"platform": platform, "buffers": 2 if double_buffer else 1}),
            ("asc-lower-cube", {"platform": platform, "buffers": 2 if double_buffer else 1,
                                "tile_m": tile_m, "tile_n": tile_n, "block_dim": block_dim}),
            ("asc-tile", {"platform": platform, "buffers": 2 if double_buffer else 1,
                          "tile": tile, "block_dim": block_dim}),
            ("asc-double-buffer", {"enable": double_buffer}), ("asc-buffer-alloc", {}),
            ("convert-asc-to-ascendc", {})]
    for pass_name, opts in plan:
        t0 = time.perf_counter()
        PASSES[pass_name]()(**opts).apply(ctx, module)
        times[pass_name] = time.perf_counter() - t0
        if pass_name == "asc-buffer-alloc":
            stages["tile"] = module.clone()
    stages["ascendc"] = module
    return stages, result_dtypes, times


def _no_shape_reads(module: ModuleOp, name: str, dynamic: dict[str, Any] | None
                    ) -> dict[str, Any] | None:
    """An operator that reads tensor shapes (``.shape``, ``len``, ``match_shape``) would bake
    the compile-time size of a dynamic dim into its IR: with dims given as ``None`` that is a
    located error; under ``dynamic=True`` the operator stays static (compiled per shape).

    Raises:
        PyAscCompileError: ``None`` dims and a shape read.
    """
    from pyasc_mlir.errors import SourceLoc
    from pyasc_mlir.frontend.ast_frontend import SHAPE_READ_ATTR

    if dynamic is None:
        return None
    top = next(op for op in module.body.block.ops
               if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    where = top.attributes.get(SHAPE_READ_ATTR)
    if where is None:
        return dynamic
    if any(strict for _, _, strict in dynamic["dims"]):
        raise PyAscCompileError(
            "this operator reads a tensor's shape, which would fix the dims given as None to "
            "their compile-time stand-in size", SourceLoc.parse(where.data),  # type: ignore
            "give those dims static sizes, or use @pa.jit(dynamic=True), which compiles such "
            "an operator per shape")
    return None


_REQUIRED_INFO = ("name", "key", "inputs", "outputs", "library", "library_sha256", "block_dim",
                  "tiling")


def _warn_cache(message: str) -> None:
    loc = caller_loc()
    text = f"pyasc-mlir cache: {message}"
    if loc is None:
        warnings.warn(text, CacheWarning, stacklevel=3)
    else:
        warnings.warn_explicit(text, CacheWarning, loc.file, loc.line)


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _atomic_write(path: Path, data: str | bytes) -> None:
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


def _load_cached(directory: Path, key: str, rebuild: Callable[[], dict[str, ModuleOp]]
                 ) -> tuple[CompiledOp | None, bool]:
    """The operator cached in ``directory`` for ``key``, or ``(None, corrupt_library)``.

    A truncated or corrupt ``op.json``, a missing library or one whose SHA-256 differs from the
    recorded one is reported with a :class:`CacheWarning` and rebuilt by the caller
    (``corrupt_library``: the library cache entry itself must be rebuilt with g++)."""
    info_path = directory / "op.json"
    if not info_path.exists():
        return None, False
    try:
        info = json.loads(info_path.read_text())
        if not isinstance(info, dict):
            raise ValueError("not a JSON object")
        missing = [k for k in _REQUIRED_INFO if k not in info]
        if missing and not info.get("empty"):
            raise ValueError(f"missing {', '.join(missing)}")
        if len(info.get("launches", ())) > 1 or info.get("kernels", 1) > 1:
            try:
                _steps_of(info["launches"], len(info["inputs"]), info["returns"])
            except (KeyError, TypeError) as exc:
                raise ValueError(f"bad launches: {exc!r}") from exc
    except (OSError, ValueError) as exc:
        _warn_cache(f"{info_path} is truncated or corrupt ({exc}); rebuilding it")
        return None, False
    if info.get("key") != key or info.get("empty"):
        return None, False  # another operator's output folder, or an empty-input operator
    lib = Path(info["library"])
    if not lib.is_file():
        _warn_cache(f"the CPU library {lib} of {info_path} is missing; rebuilding it")
        return None, False
    if info["library_sha256"] is not None and _sha256(lib) != info["library_sha256"]:
        _warn_cache(f"the CPU library {lib} of {info_path} is corrupt (its SHA-256 differs "
                    "from the recorded one); rebuilding it")
        return None, True
    for fname, digest in info.get("source_sha256", {}).items():
        try:
            ok = _text_sha256((directory / fname).read_text()) == digest
        except OSError:
            ok = False
        if not ok:  # the sources rebuild the memory-check variant: they must be intact
            _warn_cache(f"{directory / fname} is missing or corrupt; rebuilding the operator")
            return None, False
    info["cache_hit"] = True
    return CompiledOp(directory, info, rebuild), False


def _text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _library_problem(lib: Path) -> str | None:
    """``None`` when ``lib`` looks like a complete ELF shared library, else what is wrong. A
    truncated file loses the section header table at its end, so this catches truncation
    without loading the library into the process."""
    try:
        size = lib.stat().st_size
        with open(lib, "rb") as f:
            head = f.read(64)
    except OSError as exc:
        return str(exc)
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
        return "not an ELF shared library"
    order = "little" if head[5] == 1 else "big"
    if head[4] == 2:  # 64-bit
        shoff, shentsize, shnum = (int.from_bytes(head[a:b], order)
                                   for a, b in ((0x28, 0x30), (0x3A, 0x3C), (0x3C, 0x3E)))
    else:
        shoff, shentsize, shnum = (int.from_bytes(head[a:b], order)
                                   for a, b in ((0x20, 0x24), (0x2E, 0x30), (0x30, 0x32)))
    end = shoff + shentsize * shnum
    if shnum == 0 or end > size:
        return f"truncated: {size} bytes, its section headers end at byte {end}"
    return None


def _publish(entry: Path, files: dict[str, str | bytes]) -> None:
    """Put ``files`` into the library cache entry ``entry`` atomically: a whole new folder
    renamed into place, or, where the entry exists (possibly corrupt), each file replaced."""
    for attempt in range(3):
        try:
            if entry.is_dir():
                for fname, data in files.items():
                    _atomic_write(entry / fname, data)
                return
            entry.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-publish-", dir=entry.parent))
            try:
                for fname, data in files.items():
                    (tmp / fname).write_bytes(data.encode() if isinstance(data, str) else data)
                os.replace(tmp, entry)
                return
            finally:
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
        except OSError:
            if attempt == 2:
                raise  # after retries: a real failure, not a race with another builder


def _build_library(sources: dict[str, str], platform: str, directory: Path, fresh: bool,
                   publish: bool) -> Path:
    """The CPU library of ``sources``.

    Not ``fresh``: the content-addressed library cache (``<cache>/cpu/<sha256>``), rebuilt with
    a :class:`CacheWarning` when the cached file is truncated or not a shared library.
    ``fresh``: g++ runs in a private folder (only the precompiled runtime header is shared);
    the library is then
    published atomically into the library cache (``publish``) or copied into ``directory``
    (cache disabled)."""
    from pyasc_mlir.runtime.cpu import LIBRARY_NAME, build_library

    plat = get_platform(platform)
    if not fresh:
        lib = build_library(sources, plat)
        problem = _library_problem(lib) if lib.is_file() else None
        if problem is None:
            return lib
        _warn_cache(f"the cached CPU library {lib} is unusable ({problem}); rebuilding it")
    shared = cache_dir() / "cpu"
    (shared / "pch").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pyasc-build-") as tmp:
        root = Path(tmp)
        (root / "cpu").mkdir()
        (root / "cpu" / "pch").symlink_to(shared / "pch", target_is_directory=True)
        built = build_library(sources, plat, cache_dir=root)
        if not built.is_file():  # nothing was built (a stand-in build_library)
            return built
        data = built.read_bytes()
        if publish:
            entry = shared / built.parent.name
            _publish(entry, {**sources, LIBRARY_NAME: data})
            return entry / LIBRARY_NAME
        lib = directory / f"lib-{built.parent.name[:16]}.so"  # content-named: dlopen caches
        _atomic_write(lib, data)                                # libraries by path
        return lib


def tensor_descs(inputs: Sequence[object]) -> list[TensorDesc]:
    """The tensor arguments in order: ``TensorDesc`` entries, and those inside a tuple or list
    entry (a variadic tensor-tuple argument) in place."""
    out: list[TensorDesc] = []
    for d in inputs:
        items = d if isinstance(d, tuple | list) else (d,)
        out.extend(x for x in items if isinstance(x, TensorDesc))
    return out


def _tensor_arg_names(fn: Callable[..., Any], inputs: Sequence[object]) -> list[str]:
    """Parameter names of the tensor arguments (for messages; ``xs[1]`` inside a tuple
    argument); ``arg<i>`` where unknown."""
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for i, d in enumerate(inputs):
        name = params[i] if i < len(params) else f"arg{i}"
        if isinstance(d, TensorDesc):
            names.append(name)
        elif isinstance(d, tuple | list):
            names += [f"{name}[{j}]" for j, x in enumerate(d) if isinstance(x, TensorDesc)]
    return names


def _compile_empty(fn: Callable[..., Any], inputs: Sequence[object], name: str, platform: str,
                   directory: Path, key: str, keep: Any) -> CompiledOp:
    """An operator with a zero-size input dimension: the frontend gives the result shapes and
    no kernel is built. Empty results are returned as empty arrays; a result that is not empty
    (e.g. a sum over the zero-size axis) is computed by the tensor-level interpreter."""
    from pyasc_mlir.dialects import asc
    from pyasc_mlir.frontend.ast_frontend import build_module
    from pyasc_mlir.passes.common import loc_of

    t0 = time.perf_counter()
    module, _ = build_module(fn, list(inputs), name)
    top = next(o for o in module.body.block.ops
               if isinstance(o, func.FuncOp) and o.sym_name.data == name)
    outs = [TensorDesc(t.get_shape(), np_dtype_of(t.element_type))  # type: ignore
            for t in top.function_type.outputs.data]
    for op in module.walk() if not all(0 in d.shape for d in outs) else ():
        if isinstance(op, asc.ReduceOp) and op.kind.data in ("max", "min"):
            shape = op.input.type.get_shape()  # type: ignore[attr-defined]
            if any(shape[a] == 0 for a in op.axes.get_values()):
                raise PyAscCompileError(
                    f"{op.kind.data}() over a zero-size dimension (shape {list(shape)}) has no "
                    "result", loc_of(op), "skip the call for empty inputs, or use sum()")
    descs = tensor_descs(inputs)
    info: dict[str, Any] = {
        "name": name, "platform": platform, "empty": True, "key": key, "library": None,
        "inputs": [{"shape": list(d.shape), "dtype": d.dtype} for d in descs],
        "outputs": [{"shape": list(d.shape), "dtype": d.dtype} for d in outs],
        "arg_names": _tensor_arg_names(fn, inputs), "kernels": 0, "kernel_names": [],
        "kernel_args": [], "block_dim": 0, "tiling": {}, "ub_bytes": 0, "gm_bytes": 0,
        "gm_bytes_per_core_consts": 0, "unfused_gm_bytes": 0, "fused_ops": 0,
        "compile_ms": (time.perf_counter() - t0) * 1e3, "cache_hit": False,
        "version": __version__}
    if keep is None:
        _atomic_write(directory / "op.json", json.dumps(info, indent=2))
    op = CompiledOp(directory, info, lambda: {"tensor": module})
    op._stages = {"tensor": module}
    op._keep = keep
    return op


@user_facing
def compile(fn: Callable[..., Any], inputs: Sequence[object], output_dir: str | Path | None = None,
            platform: str = DEFAULT_PLATFORM, double_buffer: bool = True, cache: bool = True,
            name: str | None = None, tiling: dict[str, int] | None = None,
            dynamic: bool = False) -> CompiledOp:
    """Compile a Python operator for the given argument descriptions.

    Args:
        fn: the operator (a plain Python function over tensors).
        inputs: one entry per parameter: ``TensorDesc(shape, dtype)`` for tensors, or a Python
            int/float/bool/str compile-time constant.
        output_dir: where to write ``kernel.cpp``, ``host.cpp``, ``cpu_entry.cpp``,
            ``op.json`` (default: a folder in the cache).
        platform: Ascend SoC from ``pyasc_mlir.platform.PLATFORMS``.
        double_buffer: two rotating copy-in/copy-out buffers (MTE2/V/MTE3 overlap).
        cache: reuse an earlier compilation with the same key (memory, then disk). ``False``
            (``@jit(always_compile=True)``) lowers and builds again, g++ included, and
            refreshes the cache entry. ``PYASC_CACHE_DISABLE=1`` neither reads nor writes the
            cache (the default output folder is then a temporary one).
        tiling: pinned knobs, e.g. ``{"tile": 24, "block_dim": 40, "buffers": 2}`` (what
            ``pyasc tune`` and ``@jit(autotune=True)`` print): ``tile`` rows per tile (or
            elements per chunk), ``block_dim`` cores, ``buffers`` 1 or 2 (overrides
            ``double_buffer``); for matmul (Cube) kernels ``tile_m``/``tile_n`` (output-block
            rows/columns, multiples of 16) and ``block_dim`` (cube cores); a missing key or 0
            keeps the automatic choice. Applies to every kernel of the operator.
        dynamic: also make every dim of size > 1 dynamic where the kernel allows it (the
            leading dims no reduction covers; ``@jit(dynamic=True)``); the others stay at
            their given sizes. Dims given as ``None`` in a ``TensorDesc`` are dynamic in any
            case, and one that the kernel needs static is a located error. A kernel with
            dynamic dims computes its tiling on the host at call time (``CompiledOp.dynamic``;
            ``None`` in ``inputs``/``outputs``); see ``docs/DESIGN.md``.

    Returns:
        A ``CompiledOp``; ``info`` holds name, inputs, outputs, block_dim, tiling, ub_bytes,
        platform, kernels, gm_bytes (each input read once + each output written once),
        gm_bytes_per_core_consts (extra bytes when every core re-reads broadcast inputs),
        unfused_gm_bytes, fused_ops, compile_ms, stage_ms and library. block_dim, tiling,
        ub_bytes and kernel_args describe the first kernel launched; launches and returns the
        host function (an operator may lower to several kernels, run in order on the CPU
        build; see :func:`_launch_plan`).

    Raises:
        PyAscCompileError: the operator cannot be compiled (with its source location).
        CompileError: g++ rejected the emitted code (a compiler bug).
    """
    from pyasc_mlir.emitter import emit_cpu_entry, emit_host_source, emit_kernel_source

    get_platform(platform)
    name = name or fn.__name__
    tile, block_dim, double_buffer = check_tiling(tiling, double_buffer)
    tile_m, tile_n = cube_tiles(tiling)
    options: dict[str, Any] = {"platform": platform, "double_buffer": double_buffer,
                               "name": name}
    if tile or block_dim:
        options["tiling"] = (tile, block_dim)
    if tile_m or tile_n:
        options["cube_tiling"] = (tile_m, tile_n)
    if dynamic:
        options["dynamic"] = True
    key = _cache_key(fn, inputs, options)
    write_cache = cache_enabled()
    read_cache = cache and write_cache
    concrete, request = _dynamic_request(fn, inputs, dynamic)

    def rebuild() -> dict[str, ModuleOp]:
        return _lower(fn, concrete, name, platform, double_buffer, tile=tile,
                      block_dim=block_dim, dynamic=request, tile_m=tile_m, tile_n=tile_n)[0]

    if read_cache and key in _MEMORY_CACHE and output_dir is None:
        return _MEMORY_CACHE[key]
    keep: tempfile.TemporaryDirectory[str] | None = None
    if output_dir is not None:
        directory = Path(output_dir)
    elif write_cache:
        directory = cache_dir() / "ops" / key
    else:  # PYASC_CACHE_DISABLE=1: nothing goes to (or comes from) the cache
        keep = tempfile.TemporaryDirectory(prefix=f"pyasc-{name}-")
        directory = Path(keep.name)
    if any(0 in d.shape for d in tensor_descs(inputs)):
        return _compile_empty(fn, inputs, name, platform, directory, key, keep)
    fresh = not read_cache  # run g++ even where the library cache has this build
    if read_cache:
        t0 = time.perf_counter()
        op, corrupt_library = _load_cached(directory, key, rebuild)
        if op is not None:
            op.info["compile_ms"] = (time.perf_counter() - t0) * 1e3
            _MEMORY_CACHE[key] = op
            return op
        fresh = corrupt_library
    t0 = time.perf_counter()
    try:
        stages, result_dtypes, times = _lower(fn, concrete, name, platform, double_buffer,
                                              tile=tile, block_dim=block_dim, dynamic=request,
                                              tile_m=tile_m, tile_n=tile_n)
    except PyAscCompileError as exc:
        if request and any(strict for _, _, strict in request["dims"]):
            exc.hint = (f"{exc.hint or ''} (dims given as None are compiled at the stand-in "
                        f"size {STAND_IN})").strip()
        raise
    module = stages["ascendc"]
    descs = tensor_descs(concrete)
    kernel_src = emit_kernel_source(module)
    host_src = emit_host_source(module, [list(d.shape) for d in descs])
    entry_src = emit_cpu_entry(module)
    lower_ms = (time.perf_counter() - t0) * 1e3
    t1 = time.perf_counter()
    lib = _build_library({"kernel.cpp": kernel_src, "cpu_entry.cpp": entry_src},
                         platform, directory, fresh=fresh, publish=write_cache)
    gxx_ms = (time.perf_counter() - t1) * 1e3
    info = _describe(stages, name, descs, result_dtypes, platform)
    info.update(key=key, library=str(lib),
                library_sha256=_sha256(lib) if lib.is_file() else None,
                source_sha256={"kernel.cpp": _text_sha256(kernel_src),
                               "cpu_entry.cpp": _text_sha256(entry_src)},
                arg_names=_tensor_arg_names(fn, inputs), compile_ms=lower_ms + gxx_ms,
                lower_ms=lower_ms, gxx_ms=gxx_ms,
                stage_ms={k: v * 1e3 for k, v in times.items()}, cache_hit=False,
                version=__version__)
    if request is not None:
        _describe_dynamic(info, stages, descs, any(d[2] for d in request["dims"]))
    directory.mkdir(parents=True, exist_ok=True)
    for fname, text in (("kernel.cpp", kernel_src), ("host.cpp", host_src),
                        ("cpu_entry.cpp", entry_src)):
        _atomic_write(directory / fname, text)
    for stage, module in stages.items():  # every stage's IR, so load_op can interpret it
        _atomic_write(directory / f"{stage}.mlir", str(module))
    _atomic_write(directory / "op.json", json.dumps(info, indent=2))  # last: marks complete
    op = CompiledOp(directory, info, lambda: stages)
    op._stages = stages
    op._keep = keep
    if write_cache:
        _MEMORY_CACHE[key] = op
    return op


STAND_IN = 997
"""The size a dynamic (``None``) dim is compiled at: > 1 (so it is not broadcast), prime and
unusual (so it rarely equals a static dim it meets)."""


def _dynamic_request(fn: Callable[..., Any], inputs: Sequence[object], auto: bool
                     ) -> tuple[list[object], dict[str, Any] | None]:
    """The inputs with ``None`` dims at :data:`STAND_IN`, and the request for ``asc-tile``
    (``passes/dynamic_shapes.py``): ``[tensor arg, dim, strict]`` per dim that may be dynamic
    (``strict``: given as ``None``; otherwise offered by ``dynamic=True``); ``None`` when no
    dim is dynamic and ``auto`` is off."""
    dims: list[list[Any]] = []
    count = 0

    def concrete(d: object) -> object:
        nonlocal count
        if isinstance(d, tuple | list):
            return type(d)(concrete(x) for x in d)
        if not isinstance(d, TensorDesc):
            return d
        shape = []
        for j, e in enumerate(d.shape):
            if e is None or (auto and e > 1):
                dims.append([count, j, e is None])
            shape.append(STAND_IN if e is None else e)
        count += 1
        return TensorDesc(shape, d.dtype)

    out = [concrete(d) for d in inputs]
    if not dims and not auto:
        return list(inputs), None
    return out, {"dims": dims, "names": _tensor_arg_names(fn, inputs)}


def _kernel_kinds(ks: list[func.FuncOp]) -> str:
    """``"it compiles to one Cube (matmul) kernel"`` or ``"... to 3 kernels: 1 Cube (matmul),
    2 vector"``: what the operator's kernels are (a Cube kernel's tiling has ``tile_m``)."""
    from pyasc_mlir.emitter import tiling_fields

    cube = sum("tile_m" in tiling_fields(k) for k in ks)
    if len(ks) == 1:
        return ("it compiles to one Cube (matmul) kernel" if cube else
                "it compiles to one vector kernel without a dynamic tiling recipe")
    return f"it compiles to {len(ks)} kernels: {cube} Cube (matmul), {len(ks) - cube} vector"


def _describe_dynamic(info: dict[str, Any], stages: dict[str, ModuleOp],
                      descs: list[TensorDesc], strict: bool) -> None:
    """``info["dynamic"]`` (the kernel's tiling recipe, struct fields, compiled shapes) and
    ``None`` for the dynamic dims of ``info["inputs"]``/``["outputs"]``. Without a recipe
    (not one vector kernel, e.g. matmul) and without ``None`` dims (``strict``), the operator
    stays static: ``dynamic=True`` only offered its dims.

    Raises:
        PyAscUsageError: ``None`` dims, but the operator's kernel has no dynamic tiling recipe
            (matmul)."""
    from pyasc_mlir.emitter import kernels
    from pyasc_mlir.passes.dynamic_shapes import SPEC_ATTR

    ks = kernels(stages["ascendc"])
    recipe = ks[0].attributes.get(SPEC_ATTR) if len(ks) == 1 else None
    if not isinstance(recipe, builtin.StringAttr):
        if not strict:
            return
        raise PyAscUsageError(f"{info['name']}: dynamic dims are supported for one fused vector "
                              f"kernel only; {_kernel_kinds(ks)}", caller_loc(),
                              "give static sizes in the TensorDesc instead of None, or use "
                              "@pa.jit(dynamic=True), which compiles such an operator once per "
                              "shape")
    dyn = {"spec": json.loads(recipe.data), "fields": list(info["tiling"]),
           "shapes": [list(d.shape) for d in descs]}
    tiling = DynamicTiling(dyn["spec"], dyn["fields"], dyn["shapes"], info["arg_names"])
    info["dynamic"] = dyn
    info["inputs"] = [{"shape": list(s), "dtype": d["dtype"]}
                      for s, d in zip(tiling.input_shapes(), info["inputs"], strict=True)]
    info["outputs"] = [{"shape": list(s), "dtype": d["dtype"]}
                       for s, d in zip(tiling.output_shapes(), info["outputs"], strict=True)]


def _describe(stages: dict[str, ModuleOp], name: str, descs: list[TensorDesc],
              result_dtypes: list[str], platform: str) -> dict[str, Any]:
    """``op.json``'s description of the lowered operator. ``block_dim``, ``tiling``,
    ``ub_bytes`` and ``kernel_args`` describe the first kernel launched; ``launches`` and
    ``returns`` the whole host function (see :func:`_launch_plan`)."""
    from pyasc_mlir.emitter import kernels, tiling_fields

    module = stages["ascendc"]
    ks = kernels(module)
    launches = [op for op in module.walk() if isinstance(op, LaunchOp)]
    top = next(op for op in module.body.block.ops
               if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    outs = [TensorDesc(t.get_shape(), np_dtype_of(t.element_type))  # type: ignore
            for t in top.function_type.outputs.data]
    del result_dtypes
    gm = sum(_tensor_bytes(v.type) for op in launches  # type: ignore[arg-type]
             for v in [*op.inputs, *op.outputs])
    by_name = {x.sym_name.data: x for x in ks}
    k = by_name[launches[0].callee.root_reference.data]
    tiling = tiling_fields(k)
    per_core = 0
    for tile_k in (o for o in stages["tile"].body.block.ops
                   if isinstance(o, func.FuncOp) and "asc.kernel" in o.attributes):
        cores = tiling_fields(by_name[tile_k.sym_name.data])["block_dim"]
        for a in tile_k.walk():
            if getattr(a, "name", "") == "asc.alloc" and a.role.data == "const":  # type: ignore
                for use in a.results[0].uses:
                    src = use.operation.operands[0]
                    if use.operation.name == "asc.copy_in":
                        per_core += src.type.get_shape()[0] * np_dtype_of(  # type: ignore
                            src.type.element_type).itemsize * (cores - 1)  # type: ignore
    plan, returns = _launch_plan(top, by_name)
    return {
        "name": name, "platform": platform,
        "inputs": [{"shape": list(d.shape), "dtype": d.dtype} for d in descs],
        "outputs": [{"shape": list(d.shape), "dtype": d.dtype} for d in outs],
        "kernels": len(ks), "kernel_names": [x.sym_name.data for x in ks],
        "kernel_args": [v.index for v in launches[0].inputs],  # type: ignore[attr-defined]
        "block_dim": tiling["block_dim"], "tiling": tiling,
        "ub_bytes": k.attributes["asc.ub_bytes"].value.data,  # type: ignore[attr-defined]
        "gm_bytes": gm, "gm_bytes_per_core_consts": per_core,
        "unfused_gm_bytes": _unfused_bytes(stages["tensor"]),
        "fused_ops": sum(1 for op in stages["tensor"].walk() if op.name.startswith("asc.")),
        "launches": plan, "returns": returns,
    }


def _launch_plan(top: func.FuncOp, kernels_by_name: dict[str, func.FuncOp]
                 ) -> tuple[list[dict[str, Any]], list[int]]:
    """The host function ``top`` as data: ``asc.launch`` ops in order and the returned values.

    Values are numbered in a table: the operator's tensor inputs first (0, 1, ...), then each
    launch's results in order. Each launch is ``{"kernel", "block_dim", "tiling" (the kernel's
    tiling struct fields in struct order, name -> value), "args" (value ids, kernel-parameter
    order), "results" ([{"id", "shape", "dtype"}])}``; the second list holds the value id of
    each returned value (an input or any launch result).

    Raises:
        NotImplementedError: the host function holds an op other than launches (a compiler
            bug: every tensor computation is inside a kernel).
    """
    from pyasc_mlir.emitter import tiling_fields

    ids: dict[SSAValue, int] = {a: i for i, a in enumerate(top.body.block.args)}
    plan: list[dict[str, Any]] = []
    returns: list[int] = []
    for op in top.body.block.ops:
        if isinstance(op, LaunchOp):
            kname = op.callee.root_reference.data
            tiling = tiling_fields(kernels_by_name[kname])
            results = []
            for r in op.outputs:
                ids[r] = len(ids)
                results.append({"id": ids[r], "shape": list(r.type.get_shape()),  # type: ignore
                                "dtype": np_dtype_of(r.type.element_type).name})  # type: ignore
            plan.append({"kernel": kname, "block_dim": tiling["block_dim"], "tiling": tiling,
                         "args": [ids[v] for v in op.inputs], "results": results})
        elif isinstance(op, func.ReturnOp):
            returns = [ids[v] for v in op.operands]
        else:
            raise NotImplementedError(f"host op {op.name} in {top.sym_name.data}")
    return plan, returns


@user_facing
def load_op(directory: str | Path) -> CompiledOp:
    """Load a compiled operator from the folder ``compile`` wrote (CPU backend only).

    Raises:
        PyAscUsageError: the folder holds no valid ``op.json`` or its library is missing.
    """
    path = Path(directory) / "op.json"
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise PyAscUsageError(f"{path} is missing or corrupt: {exc}") from exc
    if info.get("empty") and all(0 in d["shape"] for d in info.get("outputs", [])):
        return CompiledOp(Path(directory), info)
    if not Path(info.get("library") or "").exists():
        raise PyAscUsageError(f"the CPU library of {path} is missing; compile again")
    return CompiledOp(Path(directory), info)
