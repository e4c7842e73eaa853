"""Benchmark section: shape changes without recompiling (``@pa.jit(dynamic=True)``).

For a workload at ``[rows, H]`` (H = its seed shape's last dim): the first call compiles one
kernel; then every call with a row count not seen before is timed (*new-shape call*), and the
same shape's raw kernel run (``CpuKernel.run`` with that shape's tiling, on prepared buffers)
is subtracted: *new-shape overhead* = median(new-shape call - raw run of that shape). The
targets use the raw run into freshly allocated outputs (each call must allocate its results; a
new large output's pages fault in on first touch, which no compiler work causes); the overhead
over prepared buffers is reported next to it. It holds the host tiling (timed alone too:
``DynamicTiling.compute``), argument checks and the ``@jit`` lookup; the run checks that no new
shape lowered or built anything. *Cached overhead* = median(jit call - raw run) at one shape,
timed in alternation.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import pyasc_mlir as pa
from benchmarks import harness
from pyasc_mlir import pipeline


def _raw(op: Any, arrays: tuple[np.ndarray, ...], fresh: bool = False) -> Any:
    """The kernel's own run for these arrays with this shape's tiling: into prepared output
    buffers, or (``fresh``) into outputs allocated by each run (``np.empty``, as every call
    must: a large output is a fresh mmap whose pages fault in on first touch)."""
    from pyasc_mlir.runtime.cpu import CpuKernel

    kernel = CpuKernel(op.library)
    ins = [np.ascontiguousarray(arrays[i]) for i in op.info.get("kernel_args", range(len(arrays)))]
    launch = op._launch_for(tuple(a.shape for a in arrays))
    specs = [(s, d.np_dtype) for s, d in zip(launch.out_shapes, op.outputs, strict=True)]
    if fresh:
        return lambda: kernel.run(
            launch.block_dim, [*ins, *(np.empty(s, d) for s, d in specs)], launch.tiling_bytes
        )
    gm = [*ins, *(np.zeros(s, d) for s, d in specs)]
    return lambda: kernel.run(launch.block_dim, gm, launch.tiling_bytes)


def bench_dynamic(w: Any, s: Any, call_args: Any) -> dict[str, Any]:
    """New-shape and cached call overhead of ``@jit(dynamic=True)`` for workload ``w``."""
    rng = np.random.default_rng(3)
    hidden = w.seed_shape[-1]
    fn = pa.jit(w.fn, dynamic=True)
    lowered = {"n": 0}
    lower = pipeline.lower

    def counting(*a: Any, **k: Any) -> Any:
        lowered["n"] += 1
        return lower(*a, **k)

    first = w.make_inputs(rng, (8, hidden))
    t0 = time.perf_counter()
    fn(*call_args(w, (8, hidden), first))
    compile_ms = (time.perf_counter() - t0) * 1e3
    (ops,) = fn._dyn_ops.values()
    (op,) = ops
    count = 20 if s.quick else 60
    rows = [9 + 3 * i for i in range(count)]  # every call a row count not seen before
    inputs = {r: w.make_inputs(rng, (r, hidden)) for r in rows}
    new_call, raw, raw_fresh, tiling = [], [], [], []
    pipeline.lower = counting
    try:
        for r in rows:
            args = call_args(w, (r, hidden), inputs[r])
            t0 = time.perf_counter()
            fn(*args)
            new_call.append(time.perf_counter() - t0)
        for r in rows:
            raw.append(harness.timeit(_raw(op, inputs[r]), 1, 5)["median_s"])
            raw_fresh.append(harness.timeit(_raw(op, inputs[r], fresh=True), 1, 5)["median_s"])
            shapes = tuple(a.shape for a in inputs[r])
            tiling.append(harness.timeit(lambda sh=shapes: op._dyn.compute(sh), 2, 20)["median_s"])
    finally:
        pipeline.lower = lower
    over = [(a - b) * 1e6 for a, b in zip(new_call, raw, strict=True)]
    over_fresh = [(a - b) * 1e6 for a, b in zip(new_call, raw_fresh, strict=True)]
    cached_args = call_args(w, (rows[0], hidden), inputs[rows[0]])
    t = harness.interleaved(
        {
            "jit_call": lambda: fn(*cached_args),
            "raw_run": _raw(op, inputs[rows[0]]),
            "raw_fresh": _raw(op, inputs[rows[0]], fresh=True),
        },
        warmup=max(3, s.warmup),
        rounds=s.call_rounds,
    )
    return {
        "hidden": hidden,
        "rows": [rows[0], rows[-1]],
        "new_shapes": count,
        "first_call_compile_ms": compile_ms,
        "kernels_compiled": len(ops),
        "lowerings_on_new_shapes": lowered["n"],
        "tiling_computations": op.tiling_computations,
        "inputs": [list(d.shape) for d in op.inputs],
        "new_shape_call_us": float(np.median(new_call) * 1e6),
        "new_shape_raw_run_us": float(np.median(raw) * 1e6),
        "new_shape_overhead_us": float(np.median(over)),
        "new_shape_overhead_max_us": float(np.max(over)),
        "new_shape_raw_fresh_us": float(np.median(raw_fresh) * 1e6),
        "new_shape_overhead_fresh_us": float(np.median(over_fresh)),
        "tiling_compute_us": float(np.median(tiling) * 1e6),
        "cached_jit_call_us": t["jit_call"]["median_s"] * 1e6,
        "cached_raw_run_us": t["raw_run"]["median_s"] * 1e6,
        "cached_overhead_us": (t["jit_call"]["median_s"] - t["raw_run"]["median_s"]) * 1e6,
        "cached_overhead_min_us": (t["jit_call"]["min_s"] - t["raw_run"]["min_s"]) * 1e6,
        "cached_overhead_fresh_us": (t["jit_call"]["median_s"] - t["raw_fresh"]["median_s"]) * 1e6,
    }


def targets(r: dict[str, Any], add: Any) -> None:
    """The issue's dynamic-shape targets, from ``r["dynamic_shapes"]``."""
    for k, d in r.get("dynamic_shapes", {}).items():
        if "error" in d:
            continue
        title = r["workloads"][k]["title"]
        clean = d["lowerings_on_new_shapes"] == 0 and d["kernels_compiled"] == 1
        fresh = d.get("new_shape_overhead_fresh_us", d["new_shape_overhead_us"])
        add(
            f"new shape with @jit(dynamic=True), {title} [rows, {d['hidden']}] (median of "
            f"{d['new_shapes']} new row counts)",
            "<= 200 us",
            f"{fresh:.1f} us above the kernel's run into fresh outputs (call "
            f"{d['new_shape_call_us']:.1f} us - raw {d.get('new_shape_raw_fresh_us', 0):.1f} "
            f"us; host tiling {d['tiling_compute_us']:.1f} us; vs prepared buffers "
            f"{d['new_shape_overhead_us']:.1f} us); {d['lowerings_on_new_shapes']} lowerings, "
            "1 kernel",
            clean and fresh <= 200,
        )
        cached = d.get("cached_overhead_fresh_us", d["cached_overhead_us"])
        add(
            f"cached call overhead, @jit(dynamic=True) {title} [{d['rows'][0]}, {d['hidden']}]",
            "<= 20 us",
            f"{cached:.1f} us above the kernel's run into fresh outputs (vs "
            f"prepared buffers {d['cached_overhead_us']:.1f} us, min-based "
            f"{d['cached_overhead_min_us']:.1f} us)",
            cached <= 20,
        )


def report(r: dict[str, Any]) -> list[str]:
    """The Markdown section (empty when the run has no dynamic-shape figures)."""
    ds = r.get("dynamic_shapes")
    if not ds:
        return []
    lines = [
        "## 7. Shape changes without recompiling (µs, measured)",
        "",
        "`@pa.jit(dynamic=True)` at `[rows, H]`: one kernel compiled on the first call; "
        "then each call with a row count not seen before (*new shape*) is timed and the "
        "raw kernel run of that shape subtracted (*overhead*); *host tiling* = the Python "
        "tiling computation alone. *Cached* = repeated calls at one shape, minus the raw "
        "run, timed in alternation. *lowerings* counts frontend+pass runs during the new "
        "shapes (0 = tiling only, no g++).",
        "",
    ]
    head = [
        "workload",
        "H",
        "new rows",
        "new-shape call",
        "raw run",
        "**new-shape overhead**",
        "host tiling",
        "cached jit call",
        "cached raw run",
        "**cached overhead**",
        "lowerings",
        "compiled inputs",
    ]
    rows = []
    for k, d in ds.items():
        title = r["workloads"][k]["title"]
        if "error" in d:
            rows.append([title, "", "", d["error"], *[""] * 8])
            continue
        rows.append(
            [
                title,
                d["hidden"],
                f"{d['new_shapes']} ({d['rows'][0]}..{d['rows'][1]})",
                f"{d['new_shape_call_us']:.1f}",
                f"{d['new_shape_raw_run_us']:.1f}",
                f"**{d['new_shape_overhead_us']:.1f}**",
                f"{d['tiling_compute_us']:.1f}",
                f"{d['cached_jit_call_us']:.1f}",
                f"{d['cached_raw_run_us']:.1f}",
                f"**{d['cached_overhead_us']:.1f}**",
                d["lowerings_on_new_shapes"],
                f"`{d['inputs']}`",
            ]
        )
    lines += ["| " + " | ".join(map(str, head)) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in rows]
    return [*lines, ""]
