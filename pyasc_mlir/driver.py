"""Compile driver: Python operator -> IR at every stage -> Ascend C -> CPU build, with caching.

``compile`` runs the frontend, the pass pipeline (``asc-decompose``, ``asc-fuse``, ``asc-tile``,
``asc-double-buffer``, ``asc-buffer-alloc``, ``convert-asc-to-ascendc``), emits ``kernel.cpp``,
``host.cpp``, ``cpu_entry.cpp`` and ``op.json`` and builds the CPU library. Results are cached
in memory and on disk (``PYASC_CACHE_DIR``, default ``~/.cache/pyasc_mlir``) under a key made of
the compiler version, the operator's source (and its helpers'), the argument descriptions,
compile-time constants, platform and options. ``PYASC_CACHE_DISABLE=1`` turns the cache off.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, memref, scf
from xdsl.dialects.builtin import ModuleOp, TensorType

from pyasc_mlir.dialects.asc import Asc, LaunchOp
from pyasc_mlir.dialects.ascendc import Ascendc
from pyasc_mlir.errors import PyAscUsageError
from pyasc_mlir.passes.registry import PASSES
from pyasc_mlir.platform import get_platform
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


def _source_of(fn: Callable[..., Any]) -> str:
    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError):
        text = repr(fn)
    helpers = []
    for name, value in sorted(getattr(fn, "__globals__", {}).items()):
        if name in text and inspect.isfunction(value) and value is not fn:
            try:
                helpers.append(inspect.getsource(value))
            except (OSError, TypeError):
                continue
        elif name in text and isinstance(value, int | float | str | bool):
            helpers.append(f"{name}={value!r}")
    return text + "\n".join(helpers)


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
    for part in (compiler_fingerprint(), _source_of(fn), repr(list(inputs)),
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
        self._rebuild = rebuild
        self._stages: dict[str, ModuleOp] | None = None
        self._cpu = None

    # -- argument handling -----------------------------------------------------------------
    def _check(self, arrays: Sequence[Any]) -> list[np.ndarray]:
        if len(arrays) != len(self.inputs):
            raise PyAscUsageError(f"{self.name} takes {len(self.inputs)} tensor arguments "
                                  f"({', '.join(str(list(d.shape)) for d in self.inputs)}), "
                                  f"got {len(arrays)}")
        out = []
        for i, (a, d) in enumerate(zip(arrays, self.inputs, strict=True)):
            arr = np.asarray(a)
            if tuple(arr.shape) != d.shape:
                raise PyAscUsageError(f"argument {i} of {self.name} has shape {list(arr.shape)}"
                                      f" but the operator was compiled for {list(d.shape)}; "
                                      "compile again for the new shape")
            if arr.dtype != d.np_dtype:
                if arr.dtype.kind not in "fiu" or arr.dtype == np.bool_:
                    raise PyAscUsageError(f"argument {i} of {self.name} has dtype {arr.dtype};"
                                          f" expected {d.dtype}")
                arr = arr.astype(d.np_dtype)  # documented rule: numeric inputs are converted
            out.append(np.ascontiguousarray(arr))
        return out

    @staticmethod
    def _result(outs: list[np.ndarray]) -> np.ndarray | tuple[np.ndarray, ...]:
        return outs[0] if len(outs) == 1 else tuple(outs)

    # -- execution ---------------------------------------------------------------------------
    def stages(self) -> dict[str, ModuleOp]:
        """IR modules after the frontend (tensor), tiling (tile) and conversion (ascendc)."""
        if self._stages is None:
            assert self._rebuild is not None, "this operator was loaded without its source"
            self._stages = self._rebuild()
        return self._stages

    def run_stage(self, stage: str, *arrays: Any) -> list[np.ndarray]:
        """Run the IR of ``stage`` ("tensor", "tile" or "ascendc") in the interpreter."""
        from pyasc_mlir.interpreter.core import run_function

        if stage not in STAGES:
            raise PyAscUsageError(f"unknown stage {stage!r}; use one of {STAGES}")
        args = self._check(arrays)
        outs = run_function(self.stages()[stage], self.name, args)
        return [np.asarray(o).reshape(d.shape) for o, d in zip(outs, self.outputs, strict=True)]

    def _cpu_kernel(self) -> Any:
        if self._cpu is None:
            from pyasc_mlir.runtime.cpu import CpuKernel
            self._cpu = CpuKernel(Path(self.info["library"]))
        return self._cpu

    def run_cpu(self, *arrays: Any) -> list[np.ndarray]:
        """Run the CPU build of the emitted Ascend C, block by block."""
        args = self._check(arrays)
        outs = [np.zeros(d.shape, d.np_dtype) for d in self.outputs]
        tiling = np.array(list(self.info["tiling"].values()), dtype=np.int64).tobytes()
        ins = [args[i] for i in self.info.get("kernel_args", range(len(args)))]
        start = time.perf_counter()
        self._cpu_kernel().run(self.info["block_dim"], [*ins, *outs], tiling)
        notify_profilers(self, start)
        return outs

    def __call__(self, *arrays: Any, backend: str = "cpu") -> np.ndarray | tuple[np.ndarray, ...]:
        if backend == "cpu":
            return self._result(self.run_cpu(*arrays))
        if backend == "interp":
            return self._result(self.run_stage("ascendc", *arrays))
        raise PyAscUsageError(f"unknown backend {backend!r}; use 'cpu' or 'interp'")


def _lower(fn: Callable[..., Any], inputs: Sequence[object], name: str, platform: str,
           double_buffer: bool, fuse: bool = True
           ) -> tuple[dict[str, ModuleOp], list[str], dict[str, float]]:
    from pyasc_mlir.frontend.ast_frontend import build_module

    times: dict[str, float] = {}
    t0 = time.perf_counter()
    module, result_dtypes = build_module(fn, list(inputs), name)
    times["frontend"] = time.perf_counter() - t0
    ctx = make_context()
    stages = {"tensor": module.clone()}
    plan = [("asc-decompose", {}), ("asc-fuse", {"per_op": not fuse}),
            ("asc-tile", {"platform": platform, "buffers": 2 if double_buffer else 1}),
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


def compile(fn: Callable[..., Any], inputs: Sequence[object], output_dir: str | Path | None = None,
            platform: str = "910B2", double_buffer: bool = True, cache: bool = True,
            name: str | None = None) -> CompiledOp:
    """Compile a Python operator for the given argument descriptions.

    Args:
        fn: the operator (a plain Python function over tensors).
        inputs: one entry per parameter: ``TensorDesc(shape, dtype)`` for tensors, or a Python
            int/float/bool/str compile-time constant.
        output_dir: where to write ``kernel.cpp``, ``host.cpp``, ``cpu_entry.cpp``,
            ``op.json`` (default: a folder in the cache).
        platform: Ascend SoC from ``pyasc_mlir.platform.PLATFORMS``.
        double_buffer: two rotating copy-in/copy-out buffers (MTE2/V/MTE3 overlap).
        cache: reuse an earlier compilation with the same key.

    Returns:
        A ``CompiledOp``; ``info`` holds name, inputs, outputs, block_dim, tiling, ub_bytes,
        platform, kernels, gm_bytes (each input read once + each output written once),
        gm_bytes_per_core_consts (extra bytes when every core re-reads broadcast inputs),
        unfused_gm_bytes, fused_ops, compile_ms, stage_ms and library.

    Raises:
        PyAscCompileError: the operator cannot be compiled (with its source location).
        CompileError: g++ rejected the emitted code (a compiler bug).
    """
    from pyasc_mlir.emitter import emit_cpu_entry, emit_host_source, emit_kernel_source
    from pyasc_mlir.runtime.cpu import build_library

    get_platform(platform)
    name = name or fn.__name__
    options = {"platform": platform, "double_buffer": double_buffer, "name": name}
    key = _cache_key(fn, inputs, options)
    use_cache = cache and cache_enabled()

    def rebuild() -> dict[str, ModuleOp]:
        return _lower(fn, inputs, name, platform, double_buffer)[0]

    if use_cache and key in _MEMORY_CACHE and output_dir is None:
        return _MEMORY_CACHE[key]
    directory = Path(output_dir) if output_dir is not None else cache_dir() / "ops" / key
    info_path = directory / "op.json"
    if use_cache and info_path.exists():
        try:
            t0 = time.perf_counter()
            info = json.loads(info_path.read_text())
            if info.get("key") == key and Path(info["library"]).exists():
                info["compile_ms"] = (time.perf_counter() - t0) * 1e3
                info["cache_hit"] = True
                op = CompiledOp(directory, info, rebuild)
                _MEMORY_CACHE[key] = op
                return op
        except (OSError, ValueError, KeyError):
            pass  # corrupt entry: rebuild below
    t0 = time.perf_counter()
    stages, result_dtypes, times = _lower(fn, inputs, name, platform, double_buffer)
    module = stages["ascendc"]
    descs = [d for d in inputs if isinstance(d, TensorDesc)]
    kernel_src = emit_kernel_source(module)
    host_src = emit_host_source(module, [list(d.shape) for d in descs])
    entry_src = emit_cpu_entry(module)
    lower_ms = (time.perf_counter() - t0) * 1e3
    t1 = time.perf_counter()
    lib = build_library({"kernel.cpp": kernel_src, "cpu_entry.cpp": entry_src},
                        get_platform(platform))
    gxx_ms = (time.perf_counter() - t1) * 1e3
    info = _describe(stages, name, descs, result_dtypes, platform)
    info.update(key=key, library=str(lib), compile_ms=lower_ms + gxx_ms, lower_ms=lower_ms,
                gxx_ms=gxx_ms, stage_ms={k: v * 1e3 for k, v in times.items()},
                cache_hit=False, version=__version__)
    directory.mkdir(parents=True, exist_ok=True)
    for fname, text in (("kernel.cpp", kernel_src), ("host.cpp", host_src),
                        ("cpu_entry.cpp", entry_src)):
        (directory / fname).write_text(text)
    tmp = directory / f"op.json.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(info, indent=2))
    os.replace(tmp, info_path)
    op = CompiledOp(directory, info, lambda: stages)
    op._stages = stages
    if use_cache:
        _MEMORY_CACHE[key] = op
    return op


def _describe(stages: dict[str, ModuleOp], name: str, descs: list[TensorDesc],
              result_dtypes: list[str], platform: str) -> dict[str, Any]:
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
    k = ks[0]
    tiling = tiling_fields(k)
    tile_k = next(o for o in stages["tile"].body.block.ops
                  if isinstance(o, func.FuncOp) and "asc.kernel" in o.attributes)
    per_core = 0
    for a in tile_k.walk():
        if getattr(a, "name", "") == "asc.alloc" and a.role.data == "const":  # type: ignore
            for use in a.results[0].uses:
                src = use.operation.operands[0]
                if use.operation.name == "asc.copy_in":
                    per_core += src.type.get_shape()[0] * np_dtype_of(  # type: ignore
                        src.type.element_type).itemsize * (tiling["block_dim"] - 1)  # type: ignore
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
    }


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
    if not Path(info.get("library", "")).exists():
        raise PyAscUsageError(f"the CPU library of {path} is missing; compile again")
    return CompiledOp(Path(directory), info)
