"""Compile driver: ``compile`` (Python operator -> IR at every stage -> Ascend C -> CPU build,
with caching) and ``load_op``.

``compile`` lowers the operator (:mod:`pyasc_mlir.pipeline`: the frontend, then the
``asc-to-ascendc`` pipeline of ``passes/registry.py``), emits ``kernel.cpp``, ``host.cpp`` and
``cpu_entry.cpp``, builds the CPU library (:mod:`pyasc_mlir.runtime.library`) and writes
``op.json`` and every stage's IR (:mod:`pyasc_mlir.artifacts`). Results are cached in memory
and on disk (``PYASC_CACHE_DIR``, default ``~/.cache/pyasc_mlir``) under a key made of the
compiler version, the operator's source (and its helpers'), the argument descriptions,
compile-time constants, platform and options (:mod:`pyasc_mlir.cache`).
``PYASC_CACHE_DISABLE=1`` turns the cache off.

Files are published atomically (a temporary file, then ``os.replace``), so concurrent
compilations of one operator leave a valid entry; ``op.json`` records the SHA-256 of the
library, and a truncated or corrupt entry is rebuilt with a
:class:`pyasc_mlir.errors.CacheWarning`.

The result is a :class:`pyasc_mlir.compiled_op.CompiledOp`; inputs: see its ``__call__``.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from pyasc_mlir import emitter, pipeline
from pyasc_mlir.artifacts import (
    describe,
    describe_dynamic,
    describe_empty,
    read_cached_info,
    write_artifacts,
)
from pyasc_mlir.cache import (
    atomic_write,
    cache_dir,
    cache_enabled,
    cache_key,
    file_sha256,
    text_sha256,
)
from pyasc_mlir.compiled_op import CompiledOp
from pyasc_mlir.errors import PyAscCompileError, PyAscUsageError, user_facing
from pyasc_mlir.platform import DEFAULT_PLATFORM, get_platform
from pyasc_mlir.runtime.library import operator_library
from pyasc_mlir.version import __version__

__all__ = ["CompiledOp", "clear_memory_cache", "compile", "load_op"]

_MEMORY_CACHE: dict[str, CompiledOp] = {}


def clear_memory_cache() -> None:
    """Forget in-memory compiled operators (the next ``compile`` reads the disk cache)."""
    _MEMORY_CACHE.clear()


@dataclass
class _Entry:
    """Where one ``compile`` call puts its result: the cache key, the output folder (``keep``:
    the temporary folder holding it when the cache is disabled), whether g++ runs even where
    the library cache has the build (``fresh``) and whether the library is published into
    the library cache (``shared``)."""

    key: str
    directory: Path
    keep: tempfile.TemporaryDirectory[str] | None
    fresh: bool
    shared: bool


def _entry(
    output_dir: str | Path | None, key: str, name: str, read_cache: bool, write_cache: bool
) -> _Entry:
    """The output folder: ``output_dir``, the cache entry of ``key``, or (cache disabled) a
    temporary folder."""
    keep: tempfile.TemporaryDirectory[str] | None = None
    if output_dir is not None:
        directory = Path(output_dir)
    elif write_cache:
        directory = cache_dir() / "ops" / key
    else:  # PYASC_CACHE_DISABLE=1: nothing goes to (or comes from) the cache
        keep = tempfile.TemporaryDirectory(prefix=f"pyasc-{name}-")
        directory = Path(keep.name)
    return _Entry(key, directory, keep, fresh=not read_cache, shared=write_cache)


def _key_options(
    platform: str,
    double_buffer: bool,
    name: str,
    tile: int,
    block_dim: int,
    tile_m: int,
    tile_n: int,
    dynamic: bool,
) -> dict[str, Any]:
    """The options part of the cache key (only the knobs that are set)."""
    options: dict[str, Any] = {"platform": platform, "double_buffer": double_buffer, "name": name}
    if tile or block_dim:
        options["tiling"] = (tile, block_dim)
    if tile_m or tile_n:
        options["cube_tiling"] = (tile_m, tile_n)
    if dynamic:
        options["dynamic"] = True
    return options


@user_facing
def compile(
    fn: Callable[..., Any],
    inputs: Sequence[object],
    output_dir: str | Path | None = None,
    platform: str = DEFAULT_PLATFORM,
    double_buffer: bool = True,
    cache: bool = True,
    name: str | None = None,
    tiling: dict[str, int] | None = None,
    dynamic: bool = False,
) -> CompiledOp:
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
        build; see :func:`pyasc_mlir.artifacts.launch_plan`).

    Raises:
        PyAscCompileError: the operator cannot be compiled (with its source location).
        CompileError: g++ rejected the emitted code (a compiler bug).
    """
    get_platform(platform)
    name = name or fn.__name__
    tile, block_dim, double_buffer = pipeline.check_tiling(tiling, double_buffer)
    tile_m, tile_n = pipeline.cube_tiles(tiling)
    key = cache_key(
        fn,
        inputs,
        _key_options(platform, double_buffer, name, tile, block_dim, tile_m, tile_n, dynamic),
    )
    write_cache = cache_enabled()
    read_cache = cache and write_cache
    concrete, request = pipeline.dynamic_request(fn, inputs, dynamic)

    def lower() -> tuple[dict[str, ModuleOp], list[str], dict[str, float]]:
        return pipeline.lower(
            fn,
            concrete,
            name,
            platform,
            double_buffer,
            tile=tile,
            block_dim=block_dim,
            dynamic=request,
            tile_m=tile_m,
            tile_n=tile_n,
        )

    if read_cache and key in _MEMORY_CACHE and output_dir is None:
        return _MEMORY_CACHE[key]
    entry = _entry(output_dir, key, name, read_cache, write_cache)
    if any(0 in d.shape for d in pipeline.tensor_descs(inputs)):
        return _compile_empty(fn, inputs, name, platform, entry)
    if read_cache:
        t0 = time.perf_counter()
        info, entry.fresh = read_cached_info(entry.directory, key)  # fresh: corrupt library
        if info is not None:
            info["cache_hit"] = True
            op = CompiledOp(entry.directory, info, lambda: lower()[0])
            op.info["compile_ms"] = (time.perf_counter() - t0) * 1e3
            _MEMORY_CACHE[key] = op
            return op
    t0 = time.perf_counter()
    try:
        stages, _, times = lower()
    except PyAscCompileError as exc:
        if request and any(strict for _, _, strict in request["dims"]):
            exc.hint = (
                f"{exc.hint or ''} (dims given as None are compiled at the stand-in "
                f"size {pipeline.STAND_IN})"
            ).strip()
        raise
    op = _build(fn, inputs, concrete, request, (stages, times, t0), name, platform, entry)
    if write_cache:
        _MEMORY_CACHE[key] = op
    return op


def _build(
    fn: Callable[..., Any],
    inputs: Sequence[object],
    concrete: Sequence[object],
    request: dict[str, Any] | None,
    lowered: tuple[dict[str, ModuleOp], dict[str, float], float],
    name: str,
    platform: str,
    entry: _Entry,
) -> CompiledOp:
    """Emit the lowered operator, build its CPU library and write the artifacts into
    ``entry``. ``lowered``: the stages and step times of ``pipeline.lower`` and the
    ``perf_counter`` at its start; ``concrete``/``request``: see ``pipeline.dynamic_request``."""
    stages, times, t0 = lowered
    module = stages["ascendc"]
    descs = pipeline.tensor_descs(concrete)
    sources = {
        "kernel.cpp": emitter.emit_kernel_source(module),
        "host.cpp": emitter.emit_host_source(module, [list(d.static_shape) for d in descs]),
        "cpu_entry.cpp": emitter.emit_cpu_entry(module),
    }
    lower_ms = (time.perf_counter() - t0) * 1e3
    t1 = time.perf_counter()
    built = {f: sources[f] for f in ("kernel.cpp", "cpu_entry.cpp")}
    lib = operator_library(built, platform, entry.directory, fresh=entry.fresh, shared=entry.shared)
    gxx_ms = (time.perf_counter() - t1) * 1e3
    info = describe(stages, name, descs, platform)
    info.update(
        key=entry.key,
        library=str(lib),
        library_sha256=file_sha256(lib) if lib.is_file() else None,
        source_sha256={f: text_sha256(text) for f, text in built.items()},
        arg_names=pipeline.tensor_arg_names(fn, inputs),
        compile_ms=lower_ms + gxx_ms,
        lower_ms=lower_ms,
        gxx_ms=gxx_ms,
        stage_ms={k: v * 1e3 for k, v in times.items()},
        cache_hit=False,
        version=__version__,
    )
    if request is not None:
        describe_dynamic(info, stages, descs, any(d[2] for d in request["dims"]))
    write_artifacts(entry.directory, sources, stages, info)
    return CompiledOp(entry.directory, info, lambda: stages, stages=stages, keep=entry.keep)


def _compile_empty(
    fn: Callable[..., Any], inputs: Sequence[object], name: str, platform: str, entry: _Entry
) -> CompiledOp:
    """An operator with a zero-size input dimension: the frontend gives the result shapes and
    no kernel is built. Empty results are returned as empty arrays; a result that is not empty
    (e.g. a sum over the zero-size axis) is computed by the tensor-level interpreter."""
    t0 = time.perf_counter()
    module, outs = pipeline.lower_empty(fn, inputs, name)
    info = describe_empty(
        name,
        platform,
        entry.key,
        pipeline.tensor_descs(inputs),
        outs,
        pipeline.tensor_arg_names(fn, inputs),
        (time.perf_counter() - t0) * 1e3,
    )
    if entry.keep is None:
        atomic_write(entry.directory / "op.json", json.dumps(info, indent=2))
    stages = {"tensor": module}
    return CompiledOp(entry.directory, info, lambda: stages, stages=stages, keep=entry.keep)


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
