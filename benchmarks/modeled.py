"""Section 6 of the benchmark suite: MODELED NPU time (``pyasc_mlir.cost_model``) against the
GM-bandwidth roofline, the autotuner's modeled gain and the two-kernel baseline."""

from __future__ import annotations

from typing import Any

import numpy as np

import pyasc_mlir as pa
from benchmarks.common import CONFIGS, PLATFORM, cfg_name, error_text
from benchmarks.workloads import Workload
from pyasc_mlir import cost_model, pipeline
from pyasc_mlir.platform import get_platform


def summarize_estimates(es: list[Any], ideal_us: float) -> dict[str, Any]:
    t = sum(e.time_us for e in es)
    pipe = {p: sum(e.pipe_us[p] for e in es) for p in cost_model.PIPES}
    return {
        "modeled_us": t,
        "kernels": len(es),
        "model_roofline_us": sum(e.roofline_us for e in es),
        "gm_bytes_moved": int(sum(e.gm_bytes for e in es)),
        "pct_of_ideal_roofline": 100.0 * ideal_us / t if t else None,
        "bound_pipe": max(pipe, key=lambda p: pipe[p]),
        "pipe_busy_us": pipe,
        "block_dim": es[0].block_dim if len(es) == 1 else None,
        "tiles_core0": es[0].tiles if len(es) == 1 else None,
    }


def ideal_bytes(w: Workload, shape: tuple[int, ...], stages: dict[str, Any]) -> int:
    """Each tensor input read once plus each output written once (the fused kernel's I/O)."""
    from xdsl.dialects import func

    module = stages["ascendc"]
    top = next(
        op
        for op in module.body.block.ops
        if isinstance(op, func.FuncOp) and op.sym_name.data == w.fn.__name__
    )
    from pyasc_mlir.types import np_dtype_of

    total = 0
    for t in [*top.function_type.inputs.data, *top.function_type.outputs.data]:
        total += int(np.prod(t.get_shape())) * np_dtype_of(t.element_type).itemsize
    return total


def bench_modeled(w: Workload, seed_stages: dict) -> dict[str, Any]:
    plat = get_platform(PLATFORM)
    gm = ideal_bytes(w, w.seed_shape, seed_stages[("fused", True)])
    ideal_us = gm / (plat.hbm_gbps * 1e9) * 1e6
    res: dict[str, Any] = {
        "platform": PLATFORM,
        "hbm_gbps": plat.hbm_gbps,
        "shape": list(w.seed_shape),
        "ideal_gm_bytes": gm,
        "ideal_roofline_us": ideal_us,
        "configs": {},
    }
    for fusion, db in CONFIGS:
        mod = seed_stages[(fusion, db)]["ascendc"]
        res["configs"][cfg_name(fusion, db) + " (as compiled)"] = summarize_estimates(
            cost_model.estimate(mod, PLATFORM), ideal_us
        )
        if db:
            res["configs"][cfg_name(fusion, False) + " (same kernel, buffers=1)"] = (
                summarize_estimates(cost_model.estimate(mod, PLATFORM, buffers=1), ideal_us)
            )
    if w.key == "swiglu":  # two [M, K] x [K, N] matmuls: the cube's compute roofline
        m, k, n = w.seed_shape
        macs = 2 * m * k * n
        res["cube_macs"] = macs
        res["cube_roofline_us"] = macs / (plat.cube_cores * 16**3 * plat.clock_mhz * 1e6) * 1e6
    c = res["configs"]
    f = c[cfg_name("fused", True) + " (as compiled)"]["modeled_us"]
    u = c[cfg_name("unfused", True) + " (as compiled)"]["modeled_us"]
    res["fusion_speedup_modeled"] = u / f
    res["double_buffer_speedup_modeled"] = (
        c[cfg_name("fused", False) + " (same kernel, buffers=1)"]["modeled_us"] / f
    )
    return res


def bench_autotune(w: Workload) -> dict[str, Any]:
    """Autotuned vs automatic tile/blockDim/buffers at the seed shape (MODELED,
    ``pyasc_mlir.autotune``; a fresh search, not the cached winner)."""
    from pyasc_mlir.autotune import tune

    try:
        res = tune(w.fn, w.descs(w.seed_shape), platform=PLATFORM, cache=False, progress=False)
    except pa.PyAscError as exc:  # e.g. a Cube-only operator: nothing for these knobs
        return {"error": error_text(exc)}
    win, d = res.winner, res.default
    return {
        "default_modeled_us": d.modeled_us,
        "tuned_modeled_us": win.modeled_us,
        "speedup_modeled": d.modeled_us / win.modeled_us,
        "default": d.knobs.pin,
        "tuned": win.knobs.pin,
        "candidates": len(res.candidates),
        "search_s": res.search_s,
        "workers": res.workers,
    }


def bench_two_kernel_baseline(w: Workload) -> dict[str, Any]:
    """residual+LayerNorm as two kernels (add, then LayerNorm): the partial-fusion baseline
    closest to an eager framework's (which has a fused LayerNorm but a separate add)."""
    from benchmarks import ops

    s = w.seed_shape
    x = pa.TensorDesc(s, "float16")
    v = pa.TensorDesc((s[-1],), "float16")
    a, _, _ = pipeline.lower(ops.residual_add, [x, x], "residual_add", PLATFORM, True)
    b, _, _ = pipeline.lower(ops.layernorm, [x, v, v, w.descs(s)[-1]], "layernorm", PLATFORM, True)
    ea = cost_model.estimate(a["ascendc"], PLATFORM)
    eb = cost_model.estimate(b["ascendc"], PLATFORM)
    return {
        "add_us": sum(e.time_us for e in ea),
        "layernorm_us": sum(e.time_us for e in eb),
        "modeled_us": sum(e.time_us for e in ea + eb),
        "kernels": len(ea) + len(eb),
    }
