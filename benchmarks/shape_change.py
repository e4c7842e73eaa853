"""Shape changes and first calls (issue 13, item 6): what a ``@pa.jit`` operator costs.

    python benchmarks/shape_change.py [--shapes 40] [--processes 3] [--out FILE.json]

1. *Third shape*: residual + LayerNorm ``[rows, 384]`` fp16 under automatic dynamic shapes (the
   ``@pa.jit`` default): a call at 8 rows (static kernel), at 9 rows (the one dynamic
   compile), then ``--shapes`` calls, each at a row count not seen before (10, 11, ...). Each
   such call is timed; the kernel's own run for that shape (``CpuKernel.run`` with that
   shape's tiling on prepared buffers, median of 5) is subtracted: *host work* = call - run.
   Lowerings and g++ builds during these calls are counted (must be 0). The host tiling alone
   (``DynamicTiling.compute``) is timed too.
2. *First call* of the same operator in ``--processes`` fresh processes, each with an empty
   compile cache sharing only the precompiled runtime header (the state of a new operator on a
   machine that has compiled before): total first-call time, split into lowering (frontend,
   passes, emitting the sources: ``info["lower_ms"]``), g++ (``info["gxx_ms"]``) and the rest
   (cache key, artifacts, loading the library, the run). One more process with a cold header
   (no precompiled header yet) shows what building it costs once.

Medians are printed as a table and, with ``--out``, written as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import pyasc_mlir as pa

ROOT = Path(__file__).resolve().parents[1]
HIDDEN = 384


def residual_ln(x, r, w, b, eps=1e-5):  # noqa: ANN001, ANN201 - an operator
    h = x + r
    d = h - h.mean(-1, keepdim=True)
    return d * pa.rsqrt((d * d).mean(-1, keepdim=True) + eps) * w + b


def _args(rows: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(rows)
    x, r = (rng.standard_normal((rows, HIDDEN)).astype(np.float16) for _ in range(2))
    w, b = (rng.standard_normal(HIDDEN).astype(np.float16) for _ in range(2))
    return x, r, w, b


def _raw_run_ms(op: Any, args: tuple[np.ndarray, ...]) -> float:
    """Median ms of the kernel's own run for these arrays (prepared output buffers)."""
    from pyasc_mlir.runtime.cpu import CpuKernel

    kernel = CpuKernel(op.library)
    launch = op._launch_for(tuple(a.shape for a in args))  # noqa: SLF001 - the measured path
    ins = [args[i] for i in op.info.get("kernel_args", range(len(args)))]
    gm = [
        *ins,
        *(np.zeros(s, d.np_dtype) for s, d in zip(launch.out_shapes, op.outputs, strict=True)),
    ]
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        kernel.run(launch.block_dim, gm, launch.tiling_bytes)
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def third_shape(n_shapes: int) -> dict[str, Any]:
    """Section 1 (see the module docstring)."""
    from pyasc_mlir import pipeline
    from pyasc_mlir.runtime import cpu

    counts = {"lower": 0, "gxx": 0}
    lower, build = pipeline.lower, cpu.build_library

    def counting_lower(*a: Any, **k: Any) -> Any:
        counts["lower"] += 1
        return lower(*a, **k)

    def counting_build(*a: Any, **k: Any) -> Any:
        counts["gxx"] += 1
        return build(*a, **k)

    fn = pa.jit(residual_ln)
    fn(*_args(8))
    fn(*_args(9))
    (ops,) = fn._dyn_ops.values()  # noqa: SLF001 - the one dynamic kernel
    (op,) = ops
    pipeline.lower, cpu.build_library = counting_lower, counting_build
    host, calls, tiling = [], [], []
    try:
        for rows in range(10, 10 + n_shapes):
            args = _args(rows)
            t0 = time.perf_counter()
            fn(*args)
            call = (time.perf_counter() - t0) * 1e3
            calls.append(call)
            host.append(call - _raw_run_ms(op, args))
            shapes = tuple(a.shape for a in args)
            t0 = time.perf_counter()
            op._dyn.compute(shapes)  # noqa: SLF001 - the host tiling alone
            tiling.append((time.perf_counter() - t0) * 1e3)
    finally:
        pipeline.lower, cpu.build_library = lower, build
    return {
        "shapes": n_shapes,
        "dynamic_kernel": op.dynamic,
        "lowerings": counts["lower"],
        "gxx_builds": counts["gxx"],
        "call_ms_median": statistics.median(calls),
        "host_ms_median": statistics.median(host),
        "host_ms_p90": statistics.quantiles(host, n=10)[-1],
        "host_ms_max": max(host),
        "tiling_ms_median": statistics.median(tiling),
    }


def _child() -> None:
    """One first call in this (fresh) process, printed as JSON."""
    fn = pa.jit(residual_ln)
    args = _args(8)
    t0 = time.perf_counter()
    fn(*args)
    total = (time.perf_counter() - t0) * 1e3
    info = fn.compile(*args).info
    print(
        json.dumps(
            {
                "first_call_ms": total,
                "lower_ms": info["lower_ms"],
                "gxx_ms": info["gxx_ms"],
                "other_ms": total - info["lower_ms"] - info["gxx_ms"],
                "stage_ms": info["stage_ms"],
            }
        )
    )


def _fresh_process(cold_header: bool) -> dict[str, Any]:
    from pyasc_mlir.runtime.cpu import default_cache_dir

    with tempfile.TemporaryDirectory(prefix="pyasc-first-call-") as tmp:
        if not cold_header:
            shared = default_cache_dir() / "cpu" / "pch"
            shared.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / "cpu").mkdir()
            (Path(tmp) / "cpu" / "pch").symlink_to(shared, target_is_directory=True)
        env = {**os.environ, "PYASC_CACHE_DIR": tmp}
        out = subprocess.run(
            [sys.executable, __file__, "--child"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def first_call(processes: int) -> dict[str, Any]:
    """Section 2 (see the module docstring)."""
    runs = [_fresh_process(cold_header=False) for _ in range(processes)]
    keys = ("first_call_ms", "lower_ms", "gxx_ms", "other_ms")
    med = {k: statistics.median(r[k] for r in runs) for k in keys}
    passes = {s: statistics.median(r["stage_ms"][s] for r in runs) for s in runs[0]["stage_ms"]}
    cold = _fresh_process(cold_header=True)
    return {"processes": processes, **med, "stage_ms": passes, "cold_header": cold}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", type=int, default=40)
    p.add_argument("--processes", type=int, default=3)
    p.add_argument("--out", type=Path)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        _child()
        return 0
    third = third_shape(a.shapes)
    first = first_call(a.processes)
    print(f"residual+LayerNorm [rows, {HIDDEN}] fp16, automatic dynamic shapes")
    print(
        f"  new shape after the first change ({third['shapes']} shapes): host work median "
        f"{third['host_ms_median'] * 1e3:.0f} us (p90 {third['host_ms_p90'] * 1e3:.0f} us, max "
        f"{third['host_ms_max'] * 1e3:.0f} us; "
        f"call {third['call_ms_median'] * 1e3:.0f} us; host tiling "
        f"{third['tiling_ms_median'] * 1e3:.1f} us); lowerings {third['lowerings']}, "
        f"g++ {third['gxx_builds']}"
    )
    print(
        f"  first call, fresh process, warm precompiled header (median of {first['processes']}):"
        f" {first['first_call_ms']:.0f} ms = lowering {first['lower_ms']:.0f} ms + g++ "
        f"{first['gxx_ms']:.0f} ms + other {first['other_ms']:.0f} ms (import not included)"
    )
    cold = first["cold_header"]
    print(
        f"  first call with a cold header (once per machine and compiler version): "
        f"{cold['first_call_ms']:.0f} ms (g++ {cold['gxx_ms']:.0f} ms)"
    )
    if a.out:
        a.out.write_text(json.dumps({"third_shape": third, "first_call": first}, indent=2))
    return 0 if third["lowerings"] == 0 and third["gxx_builds"] == 0 else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
