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

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from pyasc_mlir import emit_host, emitter, op_class, op_library, pipeline
from pyasc_mlir.artifacts import describe, describe_dynamic, read_cached_info, write_artifacts
from pyasc_mlir.cache import (
    cache_enabled,
    cache_key,
    compile_options,
    file_sha256,
    text_sha256,
)
from pyasc_mlir.compile_args import check_call, check_results
from pyasc_mlir.compiled_op import CompiledOp
from pyasc_mlir.empty_op import compile_empty
from pyasc_mlir.errors import PyAscCompileError, user_facing
from pyasc_mlir.grad import attach_backward, check_grad_strategy
from pyasc_mlir.integrity import signature
from pyasc_mlir.lowering_log import Observer, observer
from pyasc_mlir.output import Entry, drop_stale_libraries, entry, place_library
from pyasc_mlir.platform import DEFAULT_PLATFORM
from pyasc_mlir.runtime.library import operator_library
from pyasc_mlir.types import TensorDesc
from pyasc_mlir.version import __version__

__all__ = ["CompiledOp", "clear_memory_cache", "compile", "load_op"]

_MEMORY_CACHE: dict[str, CompiledOp] = {}


def clear_memory_cache() -> None:
    """Forget in-memory compiled operators (the next ``compile`` reads the disk cache)."""
    _MEMORY_CACHE.clear()


@user_facing
def compile(
    fn: Callable[..., Any] | type,
    inputs: Sequence[object] | None = None,
    output_dir: str | Path | None = None,
    platform: str = DEFAULT_PLATFORM,
    double_buffer: bool = True,
    cache: bool = True,
    name: str | None = None,
    tiling: dict[str, int] | None = None,
    dynamic: bool = False,
    library: str | Path | None = None,
    version: str | None = None,
    grad: bool = False,
    grad_strategy: str = "auto",
) -> CompiledOp:
    """Compile a Python operator for the given argument descriptions.

    Args:
        fn: the operator: a plain Python function over tensors, or an ``Op`` subclass (or
            instance; :mod:`pyasc_mlir.op_class`), whose ``forward`` is compiled.
        inputs: a list with one entry per parameter: ``TensorDesc(shape, dtype)`` for
            tensors, or a Python (or NumPy scalar) int/float/bool/str compile-time constant.
            Every tensor, argument or result, must fit the platform's device memory
            (``Platform.hbm_bytes``). For an ``Op`` class: its declared ``inputs`` with
            concrete sizes for the ``None`` dims (a static kernel), or left out (the declared
            ones, ``None`` dims dynamic).
        output_dir: where to write ``kernel.cpp``, ``host.cpp``, ``cpu_entry.cpp``, the IR
            of every stage, the CPU library and ``op.json`` (default: a folder in the cache).
            The folder is relocatable (:mod:`pyasc_mlir.output`): copied anywhere, ``load_op``
            loads and runs it with an empty cache. When its parent folder holds a
            ``registry.json``, the operator is registered there.
        library: an operator library folder (:mod:`pyasc_mlir.op_library`): the operator is
            compiled into ``library/<name>-<version>-<signature hash>`` (unless
            ``output_dir`` names a folder inside it) and recorded in its ``registry.json``.
        version: the version recorded in the registry (default: the ``Op`` class's
            ``version``, else ``"1"``).
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
            ``None`` in ``inputs``/``outputs``); see ``docs/DESIGN.md``. ``False`` keeps the
            exact static shapes (a ``@jit`` function turns dynamic by itself on a shape change).
        grad: also compile the backward (``pa.vjp``) into ``backward/``, recorded as
            ``info["backward"]`` (:func:`.grad.attach_backward`; ``pa.load_backward``) with
            ``grad_strategy`` ``"auto"``/``"recompute"``/``"save"`` (``"auto"`` if not ``grad``).

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
        PyAscUsageError: at the caller's line: ``fn`` is not a function or ``Op`` class,
            ``inputs`` is not a list or does not fit the class's declared inputs, an unknown
            platform, a tensor larger than the device memory, a ``PYASC_CACHE_DIR`` that is a
            file or not writable (cache enabled), a corrupt ``registry.json``; at the class:
            results that do not fit its declared ``outputs``.
        CompileError: g++ rejected the emitted code (a compiler bug).
    """
    strategy = check_grad_strategy(grad_strategy, grad, "grad=True")
    call = op_class.resolve(fn, inputs, name)
    if call is not None:
        fn, inputs, name, version = call.fn, call.inputs, call.name, version or call.version
    lib = op_library.library_for(library, output_dir)
    ver = op_library.check_version(version or "1")
    if lib is not None and output_dir is None:
        stem = str(name or getattr(fn, "__name__", "op"))
        output_dir = op_library.folder_for(lib, stem, ver, list(inputs or ()), platform)
    args = (inputs, output_dir, platform, double_buffer, cache, name, tiling, dynamic)
    op = _compile(fn, *args)
    if call is not None:
        call.check_outputs(op.outputs)
    if grad:
        attach_backward(op, fn, list(inputs or ()), strategy)
    if lib is not None:
        op_library.register(lib, op.directory, op.info, ver)
    return op


def _compile(
    fn: Callable[..., Any],
    inputs: Sequence[object] | None,
    output_dir: str | Path | None,
    platform: str,
    double_buffer: bool,
    cache: bool,
    name: str | None,
    tiling: dict[str, int] | None,
    dynamic: bool,
) -> CompiledOp:
    """:func:`compile` of a function into ``output_dir`` (the arguments as there)."""
    fn_name, inputs, plat = check_call(fn, inputs, platform)
    name = name or fn_name
    tile, block_dim, double_buffer = pipeline.check_tiling(tiling, double_buffer)
    tile_m, tile_n = pipeline.cube_tiles(tiling)
    opts = compile_options(platform, double_buffer, name, tile, block_dim, tile_m, tile_n, dynamic)
    key = cache_key(fn, inputs, opts)
    write_cache = cache_enabled()
    read_cache = cache and write_cache
    concrete, request = pipeline.dynamic_request(fn, inputs, dynamic)

    def lower(watch: Observer | None = None) -> tuple[dict[str, ModuleOp], list[str], dict]:
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
            watch=watch,
        )

    if read_cache and key in _MEMORY_CACHE and output_dir is None:
        return _MEMORY_CACHE[key]
    where = entry(output_dir, key, name, read_cache, write_cache)
    if any(0 in d.shape for d in pipeline.tensor_descs(inputs)):
        return compile_empty(fn, inputs, name, platform, where)
    if read_cache:
        t0 = time.perf_counter()
        info, where.fresh = read_cached_info(where.directory, key)  # fresh: corrupt library
        if info is not None:
            info["cache_hit"] = True
            op = CompiledOp(where.directory, info, lambda: lower()[0])
            op.info["compile_ms"] = (time.perf_counter() - t0) * 1e3
            _MEMORY_CACHE[key] = op
            return op
    t0 = time.perf_counter()
    watch = observer(name, key)
    try:
        stages, _, times = lower(watch)
    except PyAscCompileError as exc:
        if request and any(strict for _, _, strict in request["dims"]):
            exc.hint = (
                f"{exc.hint or ''} (dims given as None are compiled at the stand-in "
                f"size {pipeline.STAND_IN})"
            ).strip()
        raise
    check_results(stages["tensor"], name, fn_name, plat)
    op = _build(fn, inputs, concrete, request, (stages, times, t0, watch), name, platform, where)
    if write_cache:
        _MEMORY_CACHE[key] = op
    return op


def _build(
    fn: Callable[..., Any],
    inputs: Sequence[object],
    concrete: Sequence[object],
    request: dict[str, Any] | None,
    lowered: tuple[dict[str, ModuleOp], dict[str, float], float, Observer | None],
    name: str,
    platform: str,
    entry: Entry,
) -> CompiledOp:
    """Emit the lowered operator, build its CPU library and write the artifacts into
    ``entry``. ``lowered``: the stages and step times of ``pipeline.lower``, the
    ``perf_counter`` at its start and its observer (which also gets the sources);
    ``concrete``/``request``: see ``pipeline.dynamic_request``."""
    stages, times, t0, watch = lowered
    module = stages["ascendc"]
    descs = pipeline.tensor_descs(concrete)
    info = describe(stages, name, descs, platform)
    info["arg_names"] = pipeline.tensor_arg_names(fn, inputs)
    if request is not None:
        describe_dynamic(info, stages, descs, any(d[2] for d in request["dims"]))
    sources = {
        "kernel.cpp": emitter.emit_kernel_source(module),
        "host.cpp": emit_host.emit_host_source(module, [list(d.static_shape) for d in descs]),
        "cpu_entry.cpp": emit_host.emit_cpu_entry(module, signature(info)),
    }
    if watch is not None:
        watch.sources(sources)
    lower_ms = (time.perf_counter() - t0) * 1e3
    t1 = time.perf_counter()
    built = {f: sources[f] for f in ("kernel.cpp", "cpu_entry.cpp")}
    lib = operator_library(built, platform, entry.directory, fresh=entry.fresh, shared=entry.shared)
    gxx_ms = (time.perf_counter() - t1) * 1e3
    info.update(
        key=entry.key,
        library=place_library(lib, entry),
        library_sha256=file_sha256(lib) if lib.is_file() else None,
        source_sha256={f: text_sha256(text) for f, text in built.items()},
        compile_ms=lower_ms + gxx_ms,
        lower_ms=lower_ms,
        gxx_ms=gxx_ms,
        stage_ms={k: v * 1e3 for k, v in times.items()},
        cache_hit=False,
        version=__version__,
    )
    write_artifacts(entry.directory, sources, stages, info)
    if entry.local:
        drop_stale_libraries(entry.directory, info)
    return CompiledOp(entry.directory, info, lambda: stages, stages=stages, keep=entry.keep)


@user_facing
def load_op(
    target: str | Path,
    version: str | None = None,
    inputs: Sequence[TensorDesc] | None = None,
    platform: str | None = None,
) -> CompiledOp:
    """Load a compiled operator (CPU backend only): from the folder ``compile`` wrote, or by
    name from the operator libraries (``PYASC_OP_PATH``, ``pa.add_op_library``; ``version``,
    ``inputs`` and ``platform`` choose among its entries; :func:`pyasc_mlir.op_library.find`).

    Everything the CPU build trusts is checked first (:func:`pyasc_mlir.integrity.verify_folder`):
    ``op.json``'s checksum, the library's own signature against ``op.json``, its SHA-256, the
    sources; the IR files when interpreted.

    Raises:
        PyAscUsageError: the folder holds no valid ``op.json``, or an artifact is missing,
            damaged or edited (the message names the file and what differs); no library
            lists the name, or several signatures fit (the message lists them).
    """
    return op_library.load(target, version, inputs, platform)
