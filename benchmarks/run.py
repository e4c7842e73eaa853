"""pyasc-mlir benchmark suite: one command, JSON + Markdown + PNG.

    python benchmarks/run.py            # full run (seed shapes), writes benchmarks/results/
    python benchmarks/run.py --quick    # small shapes, < 2 min, writes benchmarks/results/quick/

Sections (see benchmarks/README.md for what each figure means):
  1. cold compile, stage by stage (frontend, every pass, emit, g++), each in a fresh process
     with a fresh PYASC_CACHE_DIR, and a second process that reuses the cache;
  2. compile time with and without fusion and double buffering (warm process);
  3. CPU-build run time (fused / unfused x double buffering) next to NumPy op-by-op (and
     PyTorch CPU eager when it is installed);
  4. cached call overhead: ``op(*arrays)`` minus the raw ``CpuKernel.run``;
  5. interpreter throughput of the "tile" and "ascendc" stages;
  6. MODELED 910B2 time (pyasc_mlir.cost_model) against the HBM-bandwidth roofline.

Timing rule: medians of repeated calls after warm-up; every ratio is taken between medians of
the same run. Workloads the compiler rejects are reported as "not supported yet" with the
compiler's message.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import pyasc_mlir as pa  # noqa: E402
from benchmarks import cann_table, harness  # noqa: E402
from benchmarks import dynamic as dyn_bench  # noqa: E402
from benchmarks.cold_compile import GxxCounter  # noqa: E402
from benchmarks.common import (  # noqa: E402
    CONFIGS,
    DYNAMIC_WORKLOADS,
    PLATFORM,
    SEED_CLAIM,
    Settings,
    call_args,
    cfg_name,
    error_text,
    log,
    max_err,
    short_reason,
)
from benchmarks.modeled import bench_autotune, bench_modeled, bench_two_kernel_baseline  # noqa: E402
from benchmarks.targets import targets  # noqa: E402
from benchmarks.workloads import WORKLOADS, Workload  # noqa: E402
from pyasc_mlir import cost_model, pipeline  # noqa: E402


# -- 0. what compiles ---------------------------------------------------------------------------
def probe(w: Workload) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "title": w.title,
        "seed_shape": list(w.seed_shape),
        "shape_note": w.shape_note,
    }
    try:
        pipeline.lower(w.fn, w.descs(w.seed_shape), w.fn.__name__, PLATFORM, True)
        entry["supported"] = True
    except Exception as exc:  # noqa: BLE001 - every rejection is reported, none hidden
        text = str(exc)
        entry.update(
            supported=False,
            reason=short_reason(text),
            compiler_message=text,
            exception=type(exc).__name__,
        )
    return entry


# -- 1. cold compile ----------------------------------------------------------------------------
_PYCACHE: dict[str, str] = {}


def cold_process(key: str, cache: str, no_cache: bool = False) -> dict[str, Any]:
    """One compile in a fresh interpreter. Python's bytecode cache is on (in a private
    PYTHONPYCACHEPREFIX), as for an installed package, even where the environment sets
    PYTHONDONTWRITEBYTECODE; the first process (``bench_cold``'s priming run) fills it."""
    env = dict(os.environ, PYASC_CACHE_DIR=cache, **_PYCACHE)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmd = [sys.executable, str(ROOT / "benchmarks" / "cold_compile.py"), key]
    if no_cache:
        cmd.append("--no-cache")
    import subprocess

    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = (time.perf_counter() - t0) * 1e3
    if proc.returncode != 0:
        raise RuntimeError(f"cold compile of {key} failed:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_wall_ms"] = wall
    return out


def seed_pch(src_cache: str, dst_cache: str) -> None:
    """Copy the precompiled runtime header, so a run measures the kernel's own g++ time."""
    src = Path(src_cache) / "cpu" / "pch"
    if src.is_dir():
        shutil.copytree(src, Path(dst_cache) / "cpu" / "pch", symlinks=True)


def bench_cold(ws: list[Workload], s: Settings, tmp: Path) -> dict[str, Any]:
    """Fresh-process compiles. A priming process (empty cache dir, no bytecode cache yet)
    precompiles the runtime header and fills Python's bytecode cache; a second process on the
    same cache dir checks that nothing is rebuilt; then ``cold_runs`` measured processes per
    workload, each with its own empty cache dir (the precompiled header copied in, so g++ is
    the kernel's own build)."""
    _PYCACHE["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    out: dict[str, Any] = {"workloads": {}}
    first_cache = str(tmp / "cold-first")
    w0 = ws[0]
    prime = cold_process(w0.key, first_cache)
    out["first_process"] = prime
    log(
        f"cold compile {w0.key}, first process (no bytecode cache, empty cache dir): lower "
        f"{prime['lower_ms']:.0f} ms, g++ {prime['gxx_compile_ms']:.0f} ms, header "
        f"precompile {prime['pch_ms']:.0f} ms, import {prime['import_ms']:.0f} ms"
    )
    second = cold_process(w0.key, first_cache)
    second["first_run_fingerprint"] = prime.get("fingerprint")
    out["second_process"] = second
    log(
        f"second process ({w0.key}, same cache): cache_hit={second['cache_hit']}, "
        f"g++ runs={second['gxx_compiles']}, header builds={second['pch_builds']}, "
        f"compile {second['compile_wall_ms']:.1f} ms"
    )
    for w in ws if s.cold_all_workloads else ws[:1]:
        runs = []
        for r in range(s.cold_runs):
            cache = str(tmp / f"cold-{w.key}-{r}")
            seed_pch(first_cache, cache)
            runs.append(cold_process(w.key, cache))
            log(
                f"cold compile {w.key} run {r + 1}/{s.cold_runs}: "
                f"lower {runs[-1].get('lower_ms', 0):.0f} ms, "
                f"g++ {runs[-1]['gxx_compile_ms']:.0f} ms, import {runs[-1]['import_ms']:.0f} ms"
            )
        med = {
            "import_ms": float(np.median([r["import_ms"] for r in runs])),
            "stage_ms": {
                st: float(np.median([r["stage_ms"].get(st, 0.0) for r in runs]))
                for st in runs[0]["stage_ms"]
            },
            "emit_ms": float(np.median([r["emit_ms"] for r in runs])),
            "lower_ms": float(np.median([r["lower_ms"] for r in runs])),
            "lower_ms_min": float(min(r["lower_ms"] for r in runs)),
            "gxx_kernel_ms": float(np.median([r["gxx_compile_ms"] for r in runs])),
        }
        med["glue_ms"] = max(0.0, med["lower_ms"] - sum(med["stage_ms"].values()) - med["emit_ms"])
        out["workloads"][w.key] = {"runs": runs, "median": med, "n": len(runs)}
    out["first_use_of_cache_dir"] = {
        "workload": w0.key,
        "pch_ms": prime["pch_ms"],
        "pch_builds": prime["pch_builds"],
    }
    return out


# -- 2. compile variants (warm process) ----------------------------------------------------------
def lower_once(
    w: Workload, shape: tuple[int, ...], fused: bool, db: bool
) -> tuple[dict[str, Any], dict[str, float]]:
    from pyasc_mlir.emit_host import emit_cpu_entry, emit_host_source
    from pyasc_mlir.emitter import emit_kernel_source

    t0 = time.perf_counter()
    stages, _, times = pipeline.lower(w.fn, w.descs(shape), w.fn.__name__, PLATFORM, db, fuse=fused)
    t_low = time.perf_counter() - t0
    module = stages["ascendc"]
    t1 = time.perf_counter()
    emit_kernel_source(module)
    emit_host_source(
        module, [list(d.shape) for d in w.descs(shape) if isinstance(d, pa.TensorDesc)]
    )
    if fused:
        emit_cpu_entry(module)
    else:
        harness.unfused_sources(module)
    t_emit = time.perf_counter() - t1
    ms = {k: v * 1e3 for k, v in times.items()}
    ms["emit"] = t_emit * 1e3
    ms["glue"] = max(0.0, t_low * 1e3 - sum(v * 1e3 for v in times.values()))
    ms["total"] = (t_low + t_emit) * 1e3
    return stages, ms


def bench_compile_variants(w: Workload, s: Settings) -> tuple[dict[str, Any], dict]:
    res: dict[str, Any] = {}
    seed_stages: dict[str, Any] = {}
    for fusion, db in CONFIGS:
        fused = fusion == "fused"
        samples = []
        for _ in range(s.compile_repeats):
            stages, ms = lower_once(w, w.seed_shape, fused, db)
            samples.append(ms)
        seed_stages[(fusion, db)] = stages
        med = {k: float(np.median([m[k] for m in samples])) for k in samples[0]}
        res[cfg_name(fusion, db)] = {
            "median_ms": med,
            "n": len(samples),
            "kernels": len(cost_model.kernels(stages["ascendc"])),
        }
    return res, seed_stages


# -- 3/4. CPU build, baselines, call overhead ---------------------------------------------------
def build_fused(w: Workload, shape: tuple[int, ...], db: bool) -> tuple[Any, dict[str, Any]]:
    counter = GxxCounter(
        {"pch_ms": 0.0, "gxx_compile_ms": 0.0}, {"gxx_compiles": 0, "pch_builds": 0}
    )
    import pyasc_mlir.runtime.cpu as cpu

    saved = cpu.subprocess
    cpu.subprocess = counter
    try:
        op = pa.compile(w.fn, w.descs(shape), double_buffer=db, platform=PLATFORM)
    finally:
        cpu.subprocess = saved
    return op, {
        "gxx_ms": counter._timings["gxx_compile_ms"],
        "driver_gxx_ms": op.info.get("gxx_ms"),
        "lower_ms": op.info.get("lower_ms"),
        "gxx_runs": counter._counts["gxx_compiles"],
        "pch_ms": counter._timings["pch_ms"],
        "block_dim": op.info.get("block_dim"),
        "ub_bytes": op.info.get("ub_bytes"),
        "kernels": op.info.get("kernels"),
        "gm_bytes": op.info.get("gm_bytes"),
        "unfused_gm_bytes": op.info.get("unfused_gm_bytes"),
    }


def build_unfused(
    w: Workload, shape: tuple[int, ...], db: bool
) -> tuple[harness.UnfusedCpu, dict[str, Any], dict[str, Any]]:
    stages, _, _ = pipeline.lower(w.fn, w.descs(shape), w.fn.__name__, PLATFORM, db, fuse=False)
    counter = GxxCounter(
        {"pch_ms": 0.0, "gxx_compile_ms": 0.0}, {"gxx_compiles": 0, "pch_builds": 0}
    )
    import pyasc_mlir.runtime.cpu as cpu

    saved = cpu.subprocess
    cpu.subprocess = counter
    try:
        run = harness.UnfusedCpu(stages, w.fn.__name__, PLATFORM)
    finally:
        cpu.subprocess = saved
    return (
        run,
        stages,
        {
            "gxx_ms": counter._timings["gxx_compile_ms"],
            "build_library_ms": run.gxx_s * 1e3,
            "gxx_runs": counter._counts["gxx_compiles"],
            "pch_ms": counter._timings["pch_ms"],
            "kernels": run.n_kernels,
        },
    )


def raw_runner(op: Any, arrays: tuple[np.ndarray, ...], fresh_outputs: bool = False) -> Any:
    """``CpuKernel.run`` on prepared GM buffers: the kernel's own run, nothing around it.
    ``fresh_outputs``: a new zeroed output array per call, as ``op(*arrays)`` allocates (for
    large outputs the kernel then first-touches fresh pages)."""
    from pyasc_mlir.runtime.cpu import CpuKernel

    kernel = CpuKernel(op.library)
    ins = [np.ascontiguousarray(arrays[i]) for i in op.info.get("kernel_args", range(len(arrays)))]
    outs = [np.zeros(d.shape, d.np_dtype) for d in op.outputs]
    tiling = np.array(list(op.info["tiling"].values()), dtype=np.int64).tobytes()
    gm = [*ins, *outs]
    block_dim = op.info["block_dim"]
    if fresh_outputs:
        return lambda: kernel.run(
            block_dim, [*ins, *(np.zeros(d.shape, d.np_dtype) for d in op.outputs)], tiling
        )
    return lambda: kernel.run(block_dim, gm, tiling)


def torch_module() -> Any:
    try:
        import torch
    except Exception:  # noqa: BLE001 - not installed (or broken): the column says so
        return None
    return torch


def bench_cpu(w: Workload, s: Settings, torch: Any) -> dict[str, Any]:
    shape = w.shape(s.quick)
    rng = np.random.default_rng(0)
    arrays = w.make_inputs(rng, shape)
    ref = w.reference(*arrays)
    res: dict[str, Any] = {
        "shape": list(shape),
        "elements": w.elements(shape),
        "configs": {},
        "builds": {},
    }
    fused_out = None
    ops: dict[bool, Any] = {}
    for fusion, db in s.cpu_configs:
        name = cfg_name(fusion, db)
        if fusion == "unfused" and not s.runs_unfused(w.key):
            continue
        try:
            if fusion == "fused":
                op, build = build_fused(w, shape, db)
                ops[db] = op
                fn = functools.partial(op, *arrays)
            else:
                run, _, build = build_unfused(w, shape, db)
                fn = functools.partial(run, *arrays)
            out = fn()
            out = out[0] if isinstance(out, (list, tuple)) else out
            t = harness.timeit(fn, s.warmup, s.repeats)
            entry = {**t, "max_abs_err_vs_float64_ref": max_err(out, ref)}
            if fused_out is None and fusion == "fused":
                fused_out = out
            elif fused_out is not None:
                entry["max_abs_diff_vs_fused"] = max_err(out, fused_out)
            res["configs"][name] = entry
            res["builds"][name] = build
            log(
                f"cpu {w.key} {name}: {t['median_s'] * 1e3:.2f} ms "
                f"(g++ {build.get('gxx_ms') or 0:.0f} ms, {build.get('gxx_runs')} run(s))"
            )
        except Exception as exc:  # noqa: BLE001
            res["configs"][name] = {"error": error_text(exc)}
            log(f"cpu {w.key} {name}: ERROR {error_text(exc)}")
    # baselines
    base: dict[str, Any] = {}
    for bname, fn in (
        ("numpy op-by-op (native dtype)", lambda: w.numpy_native(*arrays)),
        ("numpy op-by-op (float32 opmath)", lambda: w.numpy_opmath(*arrays)),
    ):
        with np.errstate(all="ignore"):
            out = fn()
            base[bname] = {
                **harness.timeit(fn, s.warmup, s.repeats),
                "max_abs_err_vs_float64_ref": max_err(out, ref),
            }
    if torch is not None:
        try:
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            ts = [torch.from_numpy(np.ascontiguousarray(a)) for a in arrays]
            with torch.inference_mode():
                fn = functools.partial(w.torch_ops, torch, *ts)
                out = fn().numpy()
                base["torch eager CPU (1 thread)"] = {
                    **harness.timeit(fn, s.warmup, s.repeats),
                    "max_abs_err_vs_float64_ref": max_err(out, ref),
                    "torch": torch.__version__,
                }
            torch.set_num_threads(threads)
        except Exception as exc:  # noqa: BLE001
            base["torch eager CPU (1 thread)"] = {"error": error_text(exc)}
    res["baselines"] = base
    fused_db = res["configs"].get(cfg_name("fused", True), {})
    if "median_s" in fused_db:
        res["speedup_vs_baselines"] = {
            k: v["median_s"] / fused_db["median_s"] for k, v in base.items() if "median_s" in v
        }
        unf = res["configs"].get(cfg_name("unfused", True), {})
        if "median_s" in unf:
            res["fusion_speedup_cpu"] = unf["median_s"] / fused_db["median_s"]
    res["_ops"] = ops
    res["_arrays"] = arrays
    return res


def bench_overhead(
    w: Workload,
    s: Settings,
    op: Any,
    arrays: tuple[np.ndarray, ...],
    label: str,
    shape: tuple[int, ...],
) -> dict[str, Any]:
    raw = raw_runner(op, arrays)
    jit_fn = pa.jit(w.fn)
    jargs = call_args(w, shape, arrays)
    jit_fn(*jargs)  # compiles once (a memory-cache hit of the same key)
    fns = {
        "op_call": lambda: op(*arrays),
        "raw_run": raw,
        "raw_run_fresh_outputs": raw_runner(op, arrays, fresh_outputs=True),
        "jit_call": lambda: jit_fn(*jargs),
    }
    big = np.prod(op.inputs[0].shape) > 1 << 20
    rounds = max(s.repeats * 3, 15) if big else s.call_rounds
    t = harness.interleaved(fns, warmup=max(3, s.warmup), rounds=rounds)
    op_us = t["op_call"]["median_s"] * 1e6
    raw_us = t["raw_run"]["median_s"] * 1e6
    jit_us = t["jit_call"]["median_s"] * 1e6
    fresh_us = t["raw_run_fresh_outputs"]["median_s"] * 1e6
    min_overhead_us = (t["op_call"]["min_s"] - t["raw_run"]["min_s"]) * 1e6
    return {
        "label": label,
        "shape": list(op.inputs[0].shape),
        "rounds": rounds,
        "op_call_us": op_us,
        "raw_run_us": raw_us,
        "jit_call_us": jit_us,
        "overhead_min_us": min_overhead_us,
        "raw_run_fresh_outputs_us": fresh_us,
        "overhead_beyond_fresh_outputs_us": op_us - fresh_us,
        "overhead_us": op_us - raw_us,
        "jit_overhead_us": jit_us - raw_us,
        "raw_run_iqr_us": (t["raw_run"]["q3_s"] - t["raw_run"]["q1_s"]) * 1e6,
        "op_call_iqr_us": (t["op_call"]["q3_s"] - t["op_call"]["q1_s"]) * 1e6,
    }


# -- 5. interpreter -----------------------------------------------------------------------------
def bench_interp(w: Workload, s: Settings) -> dict[str, Any]:
    from pyasc_mlir.interpreter.core import run_function

    shape = w.interp_quick_shape if s.quick else w.interp_shape
    arrays = w.make_inputs(np.random.default_rng(1), shape)
    n = w.elements(shape)
    op = pa.compile(w.fn, w.descs(shape), platform=PLATFORM)
    unfused, _, _ = pipeline.lower(w.fn, w.descs(shape), w.fn.__name__, PLATFORM, True, fuse=False)
    tensors = [np.ascontiguousarray(a) for a in arrays]
    res: dict[str, Any] = {"shape": list(shape), "elements": n}
    for fusion in ("fused", "unfused") if s.runs_unfused(w.key) else ("fused",):
        for stage in ("tile", "ascendc"):
            if fusion == "fused":
                fn = functools.partial(op.run_stage, stage, *arrays)
            else:
                fn = functools.partial(run_function, unfused[stage], w.fn.__name__, tensors)
            try:
                t = harness.timeit(fn, s.interp_warmup, s.interp_repeats)
                res[f"{fusion}/{stage}"] = {**t, "elements_per_s": n / t["median_s"]}
                log(f"interp {w.key} {fusion}/{stage}: {n / t['median_s'] / 1e6:.2f} M elem/s")
            except Exception as exc:  # noqa: BLE001
                res[f"{fusion}/{stage}"] = {"error": error_text(exc)}
    return res


# -- main ---------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small shapes, fewer repeats (< 2 min)")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default benchmarks/results, or benchmarks/results/quick with --quick)",
    )
    ap.add_argument("--only", nargs="*", default=None, help="workload keys to run")
    ap.add_argument(
        "--render",
        action="store_true",
        help="only rewrite README.md and chart.png from the folder's results.json",
    )
    args = ap.parse_args(argv)
    s = Settings(args.quick)
    out_dir = args.out or (ROOT / "benchmarks" / "results" / ("quick" if args.quick else ""))
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.render:
        r = json.loads((out_dir / "results.json").read_text())
        r["targets"] = targets(r)
        (out_dir / "results.json").write_text(json.dumps(r, indent=1, default=str))
        write_reports(r, out_dir)
        return 0
    # The main process gets its own fresh cache (pyasc_mlir reads PYASC_CACHE_DIR at each
    # compile), so no figure depends on an earlier run's cache.
    main_cache = tempfile.mkdtemp(prefix="pyasc-bench-main-")
    os.environ["PYASC_CACHE_DIR"] = main_cache
    os.environ.pop("PYASC_CACHE_DISABLE", None)
    t_start = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="pyasc-bench-"))
    load0 = os.getloadavg()
    torch = torch_module()
    r: dict[str, Any] = {
        "meta": {
            "command": "python benchmarks/run.py" + (" --quick" if args.quick else ""),
            "mode": "quick" if args.quick else "full",
            "machine": harness.machine(),
            "settings": s.as_dict(),
            "platform_modeled": PLATFORM,
            "torch": torch.__version__ if torch is not None else None,
            "seed_claim": SEED_CLAIM,
        }
    }
    ws = [w for w in WORKLOADS if args.only is None or w.key in args.only]
    r["workloads"] = {}
    for w in ws:
        r["workloads"][w.key] = probe(w)
        st = r["workloads"][w.key]
        st["exec_shape"] = list(w.shape(s.quick))
        log(
            f"{w.key}: "
            + ("supported" if st["supported"] else f"NOT SUPPORTED YET: {st['reason']}")
        )
    supported = [w for w in ws if r["workloads"][w.key]["supported"]]
    try:
        if supported:
            log("== cold compile (fresh processes)")
            r["cold_compile"] = bench_cold(supported, s, tmp)
            seed_pch(str(tmp / "cold-first"), os.environ["PYASC_CACHE_DIR"])  # kernel g++ only
        r["compile_variants"], r["modeled_npu"], r["cpu_build"] = {}, {}, {}
        r["call_overhead"], r["interpreter"] = {}, {}
        for w in supported:
            log(f"== {w.key}: compile variants + modeled NPU at {list(w.seed_shape)}")
            try:
                r["compile_variants"][w.key], seed_stages = bench_compile_variants(w, s)
                r["modeled_npu"][w.key] = bench_modeled(w, seed_stages)
                r["modeled_npu"][w.key]["autotune"] = bench_autotune(w)
                if w.key == "residual_layernorm":
                    r["modeled_npu"][w.key]["two_kernel_baseline"] = bench_two_kernel_baseline(w)
            except Exception as exc:  # noqa: BLE001
                r["compile_variants"][w.key] = {"error": error_text(exc)}
                traceback.print_exc()
            log(f"== {w.key}: CPU build at {list(w.shape(s.quick))}")
            cpu = bench_cpu(w, s, torch)
            ops, arrays = cpu.pop("_ops"), cpu.pop("_arrays")
            r["cpu_build"][w.key] = cpu
            if True in ops:
                ov = [bench_overhead(w, s, ops[True], arrays, "benchmark shape", w.shape(s.quick))]
                small = (8, w.seed_shape[-1]) if w.key not in ("swiglu_gate", "swiglu") else None
                if small and tuple(small) != tuple(w.shape(s.quick)):
                    sm_op = pa.compile(w.fn, w.descs(small), platform=PLATFORM)
                    sm_arr = w.make_inputs(np.random.default_rng(2), small)
                    ov.insert(0, bench_overhead(w, s, sm_op, sm_arr, "small shape", small))
                r["call_overhead"][w.key] = ov
                for o in ov:
                    log(
                        f"overhead {w.key} {o['shape']}: op {o['op_call_us']:.1f} us, raw "
                        f"{o['raw_run_us']:.1f} us -> {o['overhead_us']:.1f} us; jit "
                        f"{o['jit_overhead_us']:.1f} us"
                    )
            log(f"== {w.key}: interpreter")
            r["interpreter"][w.key] = bench_interp(w, s)
            if w.key in DYNAMIC_WORKLOADS:
                log(f"== {w.key}: @jit(dynamic=True) new-shape and cached call overhead")
                try:
                    r.setdefault("dynamic_shapes", {})[w.key] = dyn_bench.bench_dynamic(
                        w, s, call_args
                    )
                except Exception as exc:  # noqa: BLE001
                    r.setdefault("dynamic_shapes", {})[w.key] = {"error": error_text(exc)}
                    traceback.print_exc()
        log("== against CANN's built-ins (published 910B2 cases; ours MODELED)")
        r["cann_table"] = cann_table.table()
    finally:
        r["targets"] = targets(r)
        r["meta"]["duration_s"] = time.perf_counter() - t_start
        r["meta"]["loadavg_start"] = list(load0)
        r["meta"]["loadavg_end"] = list(os.getloadavg())
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(main_cache, ignore_errors=True)
        (out_dir / "results.json").write_text(json.dumps(r, indent=1, default=str))
        write_reports(r, out_dir)
        log(f"done in {r['meta']['duration_s']:.0f} s -> {out_dir}")
    return 0


def write_reports(r: dict[str, Any], out_dir: Path) -> None:
    from benchmarks import report

    (out_dir / "README.md").write_text(report.markdown(r))
    for problem in cann_table.write(r["cann_table"], out_dir) if "cann_table" in r else []:
        log(problem)
    try:
        report.chart(r, out_dir / "chart.png")
    except Exception as exc:  # noqa: BLE001 - matplotlib missing: JSON + Markdown stand
        log(f"chart not written: {error_text(exc)} (pip install matplotlib)")


if __name__ == "__main__":
    raise SystemExit(main())
