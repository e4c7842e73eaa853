"""Sections 1-5 of the benchmark report (:mod:`benchmarks.report`): the MEASURED figures
(cold and warm compile, the CPU build against NumPy, call overhead, interpreter throughput).
Each function takes ``results.json`` as a dict and returns Markdown lines (none when the run
has no such section)."""

from __future__ import annotations

from typing import Any

from benchmarks.report_format import STAGE_COLS, fmt, ms, table, unsupported_rows


def cold_compile(r: dict[str, Any]) -> list[str]:
    """Section 1: cold compile in fresh processes, stage by stage (measured)."""
    cc = r.get("cold_compile")
    if not cc:
        return []
    L: list[str] = []
    L += [
        "## 1. Cold compile, stage by stage (ms)",
        "",
        "Each run is a fresh Python process with a fresh `PYASC_CACHE_DIR` compiling the "
        "workload at its seed shape (`pyasc_mlir.compile`, fused, double-buffered); the "
        "stage times are the driver's `stage_ms`, *emit* is the three emitter functions, "
        "*glue* the rest of the driver's `lower_ms` (context, IR clones). *Python → "
        "Ascend C* = `lower_ms` (g++ excluded). *g++* is the kernel's own build with the "
        "precompiled runtime header already present; the header's precompilation is paid "
        "once per cache dir (below). Import = `import pyasc_mlir`. Python's bytecode "
        "cache is on for these processes (a private `PYTHONPYCACHEPREFIX`), as for an "
        "installed package; the very first process, which also compiles the sources to "
        "bytecode, is listed separately.",
        "",
    ]
    head = [
        "workload",
        *[c for _, c in STAGE_COLS],
        "emit",
        "glue",
        "**Python → Ascend C**",
        "g++",
        "import",
    ]
    rows = []
    for k, c in cc["workloads"].items():
        md = c["median"]
        rows.append(
            [
                r["workloads"][k]["title"],
                *[fmt(md["stage_ms"].get(st)) for st, _ in STAGE_COLS],
                fmt(md["emit_ms"]),
                fmt(md["glue_ms"]),
                f"**{md['lower_ms']:.0f}**",
                fmt(md["gxx_kernel_ms"], "{:.0f}"),
                fmt(md["import_ms"], "{:.0f}"),
            ]
        )
    fp = cc.get("first_process")
    if fp:
        rows.append(
            [
                f"{r['workloads'][fp['workload']]['title']}: very first process "
                "(no bytecode cache, empty cache dir)",
                *[fmt(fp["stage_ms"].get(st)) for st, _ in STAGE_COLS],
                fmt(fp["emit_ms"]),
                "",
                f"{fp['lower_ms']:.0f}",
                fmt(fp["gxx_compile_ms"], "{:.0f}"),
                fmt(fp["import_ms"], "{:.0f}"),
            ]
        )
    rows += unsupported_rows(r, len(head))
    L += table(head, rows)
    fu = cc["first_use_of_cache_dir"]
    sp = cc["second_process"]
    L += [
        f"* First use of an empty cache dir also precompiles `kernel_operator.h`: "
        f"{fu['pch_ms']:.0f} ms ({fu['pch_builds']} build), once per cache dir and "
        "g++ version.",
        f"* Second process, same cache dir, same operator "
        f"({r['workloads'][sp['workload']]['title']}): cache hit = {sp['cache_hit']}, "
        f"g++ runs = {sp['gxx_compiles']}, header builds = {sp['pch_builds']}, "
        f"`compile()` took {sp['compile_wall_ms']:.1f} ms "
        f"(process import {sp['import_ms']:.0f} ms)."
        + (
            " The op cache missed because the compiler's source fingerprint changed "
            "between the two processes (the compiler was being edited during the run); "
            "the g++ library cache, keyed on the emitted code, still hit."
            if not sp["cache_hit"] and sp.get("fingerprint") != sp.get("first_run_fingerprint")
            else ""
        ),
        "",
    ]
    return L


def compile_variants(r: dict[str, Any]) -> list[str]:
    """Section 2: warm-process compile time with and without fusion / double buffering."""
    cv = r.get("compile_variants")
    if not cv:
        return []
    L: list[str] = []
    L += [
        "## 2. Compile time with and without fusion / double buffering (ms, warm process)",
        "",
        "Python → Ascend C in an already warm process (`pipeline.lower` + emitters), "
        "medians at the seed shape. *unfused* = `asc-fuse{per_op=true}`, one kernel per "
        "tensor op. g++ = the build of the CPU-timing shape's sources in section 3 "
        "(one sample; 0 runs = identical sources already built).",
        "",
    ]
    head = [
        "workload",
        "config",
        "kernels",
        *[c for _, c in STAGE_COLS],
        "emit",
        "Python → Ascend C",
        "g++ (ms, runs)",
    ]
    rows = []
    for k, v in cv.items():
        if "error" in v:
            rows.append(
                [r["workloads"][k]["title"], "error: " + v["error"]] + [""] * (len(head) - 2)
            )
            continue
        builds = r.get("cpu_build", {}).get(k, {}).get("builds", {})
        for cfg, e in v.items():
            md = e["median_ms"]
            b = builds.get(cfg)
            gxx = (
                "not built (--quick)"
                if b is None
                else "0 (library cache hit)"
                if not b.get("gxx_runs")
                else f"{b['gxx_ms']:.0f} ({b['gxx_runs']})"
            )
            rows.append(
                [
                    r["workloads"][k]["title"],
                    cfg,
                    e["kernels"],
                    *[fmt(md.get(st)) for st, _ in STAGE_COLS],
                    fmt(md["emit"]),
                    fmt(md["total"], "{:.0f}"),
                    gxx,
                ]
            )
    rows += unsupported_rows(r, len(head))
    L += table(head, rows)
    return L


def cpu_build(r: dict[str, Any]) -> list[str]:
    """Section 3: the CPU build against NumPy op-by-op (measured)."""
    cb = r.get("cpu_build")
    if not cb:
        return []
    L: list[str] = []
    L += [
        "## 3. CPU build vs NumPy op-by-op (ms, measured)",
        "",
        "The emitted Ascend C built with g++ against the CPU `kernel_operator.h`, run "
        "block by block on one CPU thread (`op(*arrays)`; unfused = every kernel of the "
        "per-op module launched in order with GM intermediates). NumPy op-by-op: the "
        "operator written with NumPy calls on the fp16 arrays (*native*), or upcast to "
        "float32, computed, rounded once (*fp32 opmath*, the kernel's numerics). Speed-up "
        "= baseline median / fused double-buffered median. Max err = max |y − float64 "
        "reference|.",
        "",
    ]
    base_names = sorted({b for v in cb.values() for b in v.get("baselines", {})})
    cfgs = [
        c
        for c in [
            "fused, double-buffered",
            "fused, single-buffered",
            "unfused, double-buffered",
            "unfused, single-buffered",
        ]
    ]
    head = [
        "workload",
        "shape",
        *cfgs,
        *base_names,
        "speed-up vs " + " / ".join(base_names),
        "max err fused / numpy native",
    ]
    rows = []
    for k, v in cb.items():
        cells = []
        for c in cfgs:
            e = v["configs"].get(c)
            cells.append(
                "not run (--quick)"
                if e is None
                else "error: " + e["error"]
                if "error" in e
                else ms(e["median_s"])
            )
        bcells = []
        for b in base_names:
            e = v["baselines"].get(b)
            bcells.append(
                "–" if e is None else "error: " + e["error"] if "error" in e else ms(e["median_s"])
            )
        sp = v.get("speedup_vs_baselines", {})
        fe = v["configs"].get("fused, double-buffered", {})
        ne = v["baselines"].get("numpy op-by-op (native dtype)", {})
        rows.append(
            [
                r["workloads"][k]["title"],
                f"`{v['shape']}`",
                *cells,
                *bcells,
                " / ".join(fmt(sp.get(b), "{:.1f}x") for b in base_names),
                f"{fmt(fe.get('max_abs_err_vs_float64_ref'), '{:.2g}')} / "
                f"{fmt(ne.get('max_abs_err_vs_float64_ref'), '{:.2g}')}",
            ]
        )
    rows += unsupported_rows(r, len(head))
    L += table(head, rows)
    fs = {k: v.get("fusion_speedup_cpu") for k, v in cb.items()}
    if any(fs.values()):
        L += [
            "Fusion's measured CPU-build speed-up (unfused / fused, double-buffered): "
            + ", ".join(f"{r['workloads'][k]['title']} {x:.1f}x" for k, x in fs.items() if x)
            + ".",
            "",
        ]
    if not r["meta"]["torch"]:
        L += [
            "PyTorch is not installed in this environment, so there is no PyTorch "
            "column; `pip install torch` (CPU) adds one (eager, 1 thread).",
            "",
        ]
    return L


def call_overhead(r: dict[str, Any]) -> list[str]:
    """Section 4: the cached call overhead of ``op(*arrays)`` and ``@pa.jit`` (measured)."""
    co = r.get("call_overhead")
    if not co:
        return []
    L: list[str] = []
    L += [
        "## 4. Cached call overhead (µs, measured)",
        "",
        "*op call* = `op(*arrays)` on a compiled operator (argument checks, output "
        "allocation, tiling bytes, the run); *raw run* = `CpuKernel.run` on prepared "
        "buffers (the kernel's own run); overhead = median op call − median raw run, "
        "timed in alternation (*min − min*: the same with the fastest calls, less "
        "sensitive to a loaded machine). *raw run, fresh outputs* = the raw run into newly "
        "allocated zeroed outputs, as `op()` does: for large outputs most of the "
        "overhead is the kernel first-touching those fresh pages, not Python. *jit "
        "call* = a `@pa.jit` function called with arrays (argument checks, signature "
        "lookup, op call).",
        "",
    ]
    head = [
        "workload",
        "shape",
        "op call",
        "raw run",
        "**overhead**",
        "overhead (min − min)",
        "raw run, fresh outputs",
        "overhead beyond fresh outputs",
        "jit call",
        "jit overhead",
        "raw-run IQR",
        "rounds",
    ]
    rows = []
    for k, lst in co.items():
        for o in lst:
            rows.append(
                [
                    r["workloads"][k]["title"],
                    f"`{o['shape']}`",
                    fmt(o["op_call_us"]),
                    fmt(o["raw_run_us"]),
                    f"**{o['overhead_us']:.1f}**",
                    fmt(o.get("overhead_min_us")),
                    fmt(o["raw_run_fresh_outputs_us"]),
                    fmt(o["overhead_beyond_fresh_outputs_us"]),
                    fmt(o["jit_call_us"]),
                    fmt(o["jit_overhead_us"]),
                    fmt(o["raw_run_iqr_us"]),
                    o["rounds"],
                ]
            )
    L += table(head, rows)
    return L


def interpreter(r: dict[str, Any]) -> list[str]:
    """Section 5: interpreter throughput by stage (measured)."""
    it = r.get("interpreter")
    if not it:
        return []
    L: list[str] = []
    L += [
        "## 5. Interpreter throughput (k elements/s, measured)",
        "",
        "`op.run_stage(stage, ...)` (fused) or the interpreter on the unfused module; "
        "elements = elements of the first input.",
        "",
    ]
    head = [
        "workload",
        "shape",
        "fused tile",
        "fused ascendc",
        "unfused tile",
        "unfused ascendc",
    ]
    rows = []
    for k, v in it.items():
        cells = []
        for c in ("fused/tile", "fused/ascendc", "unfused/tile", "unfused/ascendc"):
            e = v.get(c)
            cells.append(
                "not run (--quick)"
                if e is None
                else "error: " + e["error"]
                if "error" in e
                else fmt(e.get("elements_per_s", 0) / 1e3, "{:.1f}")
            )
        rows.append([r["workloads"][k]["title"], f"`{v['shape']}`", *cells])
    rows += unsupported_rows(r, len(head))
    L += table(head, rows)
    return L
