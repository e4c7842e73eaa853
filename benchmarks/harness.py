"""Timing helpers, the machine description, and the unfused (one kernel per op) CPU build.

Timing rule: every figure is the median of ``repeats`` timed calls made after ``warmup``
untimed calls; ratios are taken between medians measured in the same run.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform as _platform
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def timeit(fn: Callable[[], Any], warmup: int, repeats: int) -> dict[str, float]:
    """Median, min and quartiles (seconds) of ``repeats`` calls after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return stats(ts)


def stats(ts: list[float]) -> dict[str, float]:
    a = np.asarray(ts, dtype=np.float64)
    return {
        "median_s": float(np.median(a)),
        "min_s": float(a.min()),
        "q1_s": float(np.percentile(a, 25)),
        "q3_s": float(np.percentile(a, 75)),
        "n": len(ts),
    }


def interleaved(
    fns: dict[str, Callable[[], Any]], warmup: int, rounds: int
) -> dict[str, dict[str, float]]:
    """Time several callables in alternation (a, b, a, b, ...) so drift hits all alike."""
    for _ in range(warmup):
        for f in fns.values():
            f()
    ts: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            ts[k].append(time.perf_counter() - t0)
    return {k: stats(v) for k, v in ts.items()}


def machine() -> dict[str, Any]:
    """What the CPU figures were measured on (the NPU figures are modeled, not measured)."""
    cpu = _platform.processor() or _platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gxx = shutil.which("g++")
    gxx_ver = ""
    if gxx:
        try:
            gxx_ver = subprocess.run(
                [gxx, "--version"], capture_output=True, text=True, check=True
            ).stdout.splitlines()[0]
        except (OSError, subprocess.CalledProcessError):
            gxx_ver = "unknown"
    mem = ""
    try:
        kb = int(
            next(
                x
                for x in Path("/proc/meminfo").read_text().splitlines()
                if x.startswith("MemTotal")
            ).split()[1]
        )
        mem = f"{kb / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    import xdsl

    import pyasc_mlir

    info = {
        "date_utc": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cpus_available": len(os.sched_getaffinity(0)),
        "memory": mem,
        "os": f"{_platform.system()} {_platform.release()}",
        "python": _platform.python_version(),
        "numpy": np.__version__,
        "xdsl": getattr(xdsl, "__version__", "?"),
        "pyasc_mlir": pyasc_mlir.__version__,
        "gxx": gxx_ver,
    }
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
        ).stdout.strip()
        info["git"] = rev + (" (+ uncommitted changes)" if dirty else "")
    except OSError:
        pass
    return info


# -- the unfused baseline's CPU build ---------------------------------------------------------
def unfused_sources(module: Any) -> dict[str, str]:
    """``kernel.cpp`` with every kernel of a multi-kernel (unfused) ascendc module, and a
    ``cpu_entry.cpp`` with one ``pyasc_run_block_<kernel>`` entry per kernel (the batch-library
    form of docs/CPU_RUNTIME.md)."""
    from pyasc_mlir.emitter import emit_kernel_source, kernels

    lines = [
        "// pyasc-mlir benchmarks: per-kernel CPU entries (unfused baseline).",
        '#include "kernel_operator.h"',
    ]
    for k in kernels(module):
        n = len(k.body.block.args) + 2
        name = k.sym_name.data
        lines += [
            f'extern "C" __global__ __aicore__ void {name}(' + ", ".join(["GM_ADDR"] * n) + ");",
            f"PYASC_CPU_ENTRY_NAMED({name})",
        ]
    lines += ["PYASC_CPU_LAST_ERROR()", ""]
    return {"kernel.cpp": emit_kernel_source(module), "cpu_entry.cpp": "\n".join(lines)}


class UnfusedCpu:
    """Runs an unfused module's kernels one after another on the CPU build, as its host
    function's ``asc.launch`` sequence says, with intermediates in (NumPy) GM buffers.

    Raises:
        NotImplementedError: the host function holds something other than launches.
    """

    def __init__(self, stages: dict[str, Any], name: str, platform: str):
        from xdsl.dialects import func

        from pyasc_mlir.dialects.asc import LaunchOp
        from pyasc_mlir.emitter import kernels, tiling_fields
        from pyasc_mlir.platform import get_platform
        from pyasc_mlir.runtime.cpu import CpuKernel, build_library
        from pyasc_mlir.types import np_dtype_of

        module = stages["ascendc"]
        t0 = time.perf_counter()
        self.sources = unfused_sources(module)
        self.emit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.library = build_library(self.sources, get_platform(platform))
        self.gxx_s = time.perf_counter() - t0
        ks = {k.sym_name.data: k for k in kernels(module)}
        self.n_kernels = len(ks)
        top = next(
            op
            for op in module.body.block.ops
            if isinstance(op, func.FuncOp) and op.sym_name.data == name
        )
        self._args = list(top.body.block.args)
        self._plan: list[tuple[Any, ...]] = []
        self._ret: list[Any] = []
        loaded: dict[str, Any] = {}
        for op in top.body.block.ops:
            if isinstance(op, LaunchOp):
                kname = op.callee.root_reference.data
                if kname not in loaded:
                    loaded[kname] = CpuKernel(self.library, entry=f"pyasc_run_block_{kname}")
                fields = tiling_fields(ks[kname])
                tiling = np.array(list(fields.values()), dtype=np.int64).tobytes()
                outs = [
                    (tuple(r.type.get_shape()), np_dtype_of(r.type.element_type))
                    for r in op.outputs
                ]
                self._plan.append(
                    (
                        loaded[kname],
                        fields["block_dim"],
                        tiling,
                        list(op.inputs),
                        list(op.outputs),
                        outs,
                    )
                )
            elif isinstance(op, func.ReturnOp):
                self._ret = list(op.operands)
            else:
                raise NotImplementedError(f"host op {op.name} in the unfused module")

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        env: dict[Any, np.ndarray] = {
            a: np.ascontiguousarray(x) for a, x in zip(self._args, arrays, strict=True)
        }
        for kernel, block_dim, tiling, ins, res, outs in self._plan:
            out_arrays = [np.zeros(s, d) for s, d in outs]
            kernel.run(block_dim, [env[v] for v in ins] + out_arrays, tiling)
            env.update(zip(res, out_arrays, strict=True))
        return [env[v] for v in self._ret]
