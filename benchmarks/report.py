"""results.json -> Markdown tables (README.md) and a PNG chart (matplotlib, Agg backend).

Every NPU figure is labelled "modeled": it comes from ``pyasc_mlir.cost_model``, not from a
device. CPU figures are measured on the machine described at the top of the report.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from benchmarks.dynamic import report as dynamic_report

STAGE_COLS = [
    ("frontend", "frontend"),
    ("asc-decompose", "decompose"),
    ("asc-fuse", "fuse"),
    ("asc-lower-layout", "lower-layout"),
    ("asc-lower-cube", "lower-cube"),
    ("asc-tile", "tile"),
    ("asc-double-buffer", "double-buffer"),
    ("asc-buffer-alloc", "buffer-alloc"),
    ("convert-asc-to-ascendc", "to-ascendc"),
]


def _f(x: Any, fmt: str = "{:.1f}") -> str:
    if x is None:
        return "–"
    try:
        return fmt.format(x)
    except (ValueError, TypeError):
        return str(x)


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out + [""]


def _ms(sec: float | None) -> str:
    return "–" if sec is None else (f"{sec * 1e3:.2f}" if sec < 1 else f"{sec * 1e3:.0f}")


def markdown(r: dict[str, Any]) -> str:
    meta = r["meta"]
    m = meta["machine"]
    L: list[str] = ["# pyasc-mlir benchmark results", ""]
    L += [
        f"Command: `{meta['command']}` ({meta['mode']} run, {meta.get('duration_s', 0):.0f} s"
        f" wall). Date: {m['date_utc']}.",
        "",
    ]
    L += [
        "**Machine (CPU figures are measured here):** "
        f"{m['cpu']}, {m['cpus_available']} CPUs available, {m['memory']} RAM, {m['os']}; "
        f"Python {m['python']}, NumPy {m['numpy']}, xDSL {m['xdsl']}, {m['gxx']}; "
        f"pyasc-mlir {m['pyasc_mlir']} at git {m.get('git', '?')}; PyTorch: "
        f"{meta['torch'] or 'not installed'}. Load average at start / end: "
        f"{', '.join(f'{x:.1f}' for x in meta.get('loadavg_start', []))} / "
        f"{', '.join(f'{x:.1f}' for x in meta.get('loadavg_end', []))}.",
        "",
    ]
    L += [
        "**NPU figures are MODELED**, not measured: `pyasc_mlir.cost_model` for the "
        f"{meta['platform_modeled']} (pipe-level model, HBM bandwidth from the platform "
        "table; kernel launch overhead is not modeled). No Ascend device was used.",
        "",
    ]
    s = meta["settings"]
    L += [
        f"Timing: median of {s['repeats']} calls after {s['warmup']} warm-up calls "
        f"(compile variants: {s['compile_repeats']} repeats; cold compiles: "
        f"{s['cold_runs']} fresh processes per workload; call overhead: interleaved rounds). "
        "Ratios are between medians of this run.",
        "",
    ]

    # -- targets
    L += ["## Targets (reported, not asserted)", ""]
    rows = []
    for t in r.get("targets", []):
        met = {True: "met", False: "**not met**", None: "–"}[t["met"]]
        if t["met"] is None and t["note"].startswith("inconclusive"):
            met = "inconclusive"
            t = {**t, "note": t["note"][len("inconclusive: ") :]}
        rows.append(
            [t["name"], t["target"], t["measured"], met + (f" ({t['note']})" if t["note"] else "")]
        )
    L += _table(["figure", "target", "measured", "status"], rows)

    # -- workloads
    L += ["## Workloads", ""]
    rows = []
    for w in r["workloads"].values():
        status = "supported" if w["supported"] else f"**not supported yet**: {w['reason']}"
        rows.append(
            [w["title"], f"`{w['seed_shape']}`", f"`{w['exec_shape']}`", w["shape_note"], status]
        )
    L += _table(["workload", "seed shape", "CPU-timing shape", "shape", "status"], rows)
    unsup = [w for w in r["workloads"].values() if not w["supported"]]
    if unsup:
        L += [
            "Workloads the compiler rejects appear in every table below as *not supported "
            "yet*; their figures are not replaced by anything else.",
            "",
        ]

    def unsupported_rows(ncols: int) -> list[list[str]]:
        return [
            [w["title"], "not supported yet: " + w["reason"]] + [""] * (ncols - 2) for w in unsup
        ]

    # -- cold compile
    cc = r.get("cold_compile")
    if cc:
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
                    *[_f(md["stage_ms"].get(st)) for st, _ in STAGE_COLS],
                    _f(md["emit_ms"]),
                    _f(md["glue_ms"]),
                    f"**{md['lower_ms']:.0f}**",
                    _f(md["gxx_kernel_ms"], "{:.0f}"),
                    _f(md["import_ms"], "{:.0f}"),
                ]
            )
        fp = cc.get("first_process")
        if fp:
            rows.append(
                [
                    f"{r['workloads'][fp['workload']]['title']}: very first process "
                    "(no bytecode cache, empty cache dir)",
                    *[_f(fp["stage_ms"].get(st)) for st, _ in STAGE_COLS],
                    _f(fp["emit_ms"]),
                    "",
                    f"{fp['lower_ms']:.0f}",
                    _f(fp["gxx_compile_ms"], "{:.0f}"),
                    _f(fp["import_ms"], "{:.0f}"),
                ]
            )
        rows += unsupported_rows(len(head))
        L += _table(head, rows)
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

    # -- compile variants
    cv = r.get("compile_variants")
    if cv:
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
                        *[_f(md.get(st)) for st, _ in STAGE_COLS],
                        _f(md["emit"]),
                        _f(md["total"], "{:.0f}"),
                        gxx,
                    ]
                )
        rows += unsupported_rows(len(head))
        L += _table(head, rows)

    # -- CPU build
    cb = r.get("cpu_build")
    if cb:
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
                    else _ms(e["median_s"])
                )
            bcells = []
            for b in base_names:
                e = v["baselines"].get(b)
                bcells.append(
                    "–"
                    if e is None
                    else "error: " + e["error"]
                    if "error" in e
                    else _ms(e["median_s"])
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
                    " / ".join(_f(sp.get(b), "{:.1f}x") for b in base_names),
                    f"{_f(fe.get('max_abs_err_vs_float64_ref'), '{:.2g}')} / "
                    f"{_f(ne.get('max_abs_err_vs_float64_ref'), '{:.2g}')}",
                ]
            )
        rows += unsupported_rows(len(head))
        L += _table(head, rows)
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

    # -- overhead
    co = r.get("call_overhead")
    if co:
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
                        _f(o["op_call_us"]),
                        _f(o["raw_run_us"]),
                        f"**{o['overhead_us']:.1f}**",
                        _f(o.get("overhead_min_us")),
                        _f(o["raw_run_fresh_outputs_us"]),
                        _f(o["overhead_beyond_fresh_outputs_us"]),
                        _f(o["jit_call_us"]),
                        _f(o["jit_overhead_us"]),
                        _f(o["raw_run_iqr_us"]),
                        o["rounds"],
                    ]
                )
        L += _table(head, rows)

    # -- interpreter
    it = r.get("interpreter")
    if it:
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
                    else _f(e.get("elements_per_s", 0) / 1e3, "{:.1f}")
                )
            rows.append([r["workloads"][k]["title"], f"`{v['shape']}`", *cells])
        rows += unsupported_rows(len(head))
        L += _table(head, rows)

    # -- modeled NPU
    mn = r.get("modeled_npu")
    if mn:
        L += [
            f"## 6. MODELED {meta['platform_modeled']} NPU time vs the GM-bandwidth roofline "
            "(µs, modeled)",
            "",
            "All times in this section are **modeled** by `pyasc_mlir.cost_model`, not "
            "measured. Roofline = (each input read once + each output written once) / HBM "
            "bandwidth; % of roofline = roofline / modeled time. *same kernel, buffers=1* = "
            "the double-buffered kernel modeled with one buffer per queue; *as compiled* "
            "single-buffered = compiled with `double_buffer=False` (its tiles may be larger)."
            " Unfused = one kernel per op (sum over kernels; launch gaps not modeled).",
            "",
        ]
        head = [
            "workload",
            "shape",
            "roofline (modeled)",
            "config",
            "kernels",
            "modeled time",
            "% of roofline",
            "bound pipe",
            "GM bytes moved",
        ]
        rows = []
        for k, v in mn.items():
            first = True
            for cfg, e in v["configs"].items():
                rows.append(
                    [
                        r["workloads"][k]["title"] if first else "",
                        f"`{v['shape']}`" if first else "",
                        _f(v["ideal_roofline_us"], "{:.2f}") if first else "",
                        cfg,
                        e["kernels"],
                        _f(e["modeled_us"], "{:.2f}"),
                        _f(e["pct_of_ideal_roofline"], "{:.1f}%")
                        + (" ¹" if e["pct_of_ideal_roofline"] > 100 else ""),
                        e["bound_pipe"],
                        f"{e['gm_bytes_moved']:,}",
                    ]
                )
                first = False
            two = v.get("two_kernel_baseline")
            if two:
                rows.append(
                    [
                        "",
                        "",
                        "",
                        "add + LayerNorm as 2 kernels, double-buffered",
                        two["kernels"],
                        _f(two["modeled_us"]),
                        _f(100 * v["ideal_roofline_us"] / two["modeled_us"], "{:.1f}%"),
                        "",
                        "",
                    ]
                )
        rows += unsupported_rows(len(head))
        L += _table(head, rows)
        rows = []
        for k, v in mn.items():
            two = v.get("two_kernel_baseline")
            f = v["configs"]["fused, double-buffered (as compiled)"]["modeled_us"]
            rows.append(
                [
                    r["workloads"][k]["title"],
                    f"{v['fusion_speedup_modeled']:.1f}x",
                    f"{two['modeled_us'] / f:.2f}x" if two else "–",
                    f"{v['double_buffer_speedup_modeled']:.2f}x",
                ]
            )
        L += ["Speed-ups (modeled):", ""]
        L += _table(
            [
                "workload",
                "fusion (one kernel per op → fused)",
                "fusion (add + LayerNorm → fused)",
                "double buffering (buffers=1 → 2)",
            ],
            rows,
        )
        c = meta["seed_claim"]
        L += [
            f"The seed's claim, for comparison: {c['text']} = "
            f"{c['unfused_us'] / c['fused_us']:.2f}x (a device figure; ours are modeled).",
            "",
        ]
        L += [
            "¹ Above 100%: a cost-model artifact, not a real speed. The model charges MTE2 "
            "(GM→UB) and MTE3 (UB→GM) each at the core's full share of HBM bandwidth and "
            "overlaps them, so a kernel whose reads and writes are both large can be "
            "modeled faster than the chip's bandwidth allows. A modeled time below the "
            "roofline means the real kernel is at best at the roofline.",
            "",
        ]
        L += _gm_bytes(r) + _autotune(r)
    L += dynamic_report(r)
    L += _swiglu(r)
    L += ["![chart](chart.png)", ""]
    return "\n".join(L)


def _gm_bytes(r: dict[str, Any]) -> list[str]:
    """GM bytes of the compiled (fused) op against one kernel per op, from ``op.info``."""
    rows = []
    for k, v in r.get("cpu_build", {}).items():
        b = v.get("builds", {}).get("fused, double-buffered", {})
        if b.get("gm_bytes") is None:
            continue
        u = b.get("unfused_gm_bytes")
        rows.append(
            [
                r["workloads"][k]["title"],
                f"`{v['shape']}`",
                b.get("kernels", "–"),
                f"{b['gm_bytes']:,}",
                "–" if u is None else f"{u:,}",
                "–" if not u else f"{u / b['gm_bytes']:.2f}x",
            ]
        )
    if not rows:
        return []
    return [
        'GM bytes of the compiled operator at the CPU-timing shape (`op.info["gm_bytes"]`'
        ' fused, `op.info["unfused_gm_bytes"]` one kernel per op; the compiler\'s own '
        "count of each kernel's GM reads + writes):",
        "",
        *_table(
            [
                "workload",
                "shape",
                "kernels (fused)",
                "GM bytes fused",
                "GM bytes op-by-op",
                "op-by-op / fused",
            ],
            rows,
        ),
    ]


def _autotune(r: dict[str, Any]) -> list[str]:
    """Autotuned vs automatic tile / blockDim / buffers at the seed shape (modeled)."""
    rows = []
    for k, v in r.get("modeled_npu", {}).items():
        a = v.get("autotune")
        if not a:
            continue
        title = r["workloads"][k]["title"]
        if "error" in a:
            rows.append([title, f"`{v['shape']}`", "not tuned: " + a["error"], "", "", "", "", ""])
            continue
        rows.append(
            [
                title,
                f"`{v['shape']}`",
                f"`{a['default']}`",
                _f(a["default_modeled_us"], "{:.2f}"),
                f"`{a['tuned']}`",
                _f(a["tuned_modeled_us"], "{:.2f}"),
                f"{a['speedup_modeled']:.2f}x",
                f"{a['candidates']} candidates, {a['search_s']:.1f} s, {a['workers']} worker(s)",
            ]
        )
    if not rows:
        return []
    return [
        "### Autotuning (modeled)",
        "",
        "`pyasc_mlir.autotune.tune` at the seed shape (a fresh search, cache off): the "
        "compiler's automatic tile / blockDim / buffers against the cost model's best "
        "candidate. Both times are MODELED (910B2 cost model), not measured.",
        "",
        *_table(
            [
                "workload",
                "shape",
                "automatic",
                "automatic (µs, modeled)",
                "tuned",
                "tuned (µs, modeled)",
                "tuned speed-up (modeled)",
                "search",
            ],
            rows,
        ),
    ]


def _swiglu(r: dict[str, Any]) -> list[str]:
    """Section 8: the SwiGLU Cube kernel's figures gathered in one place."""
    k = "swiglu"
    w = r.get("workloads", {}).get(k)
    if not w or not w.get("supported"):
        return []
    L = [
        "## 8. SwiGLU [4, 512] x [512, 2048] fp16: one Cube kernel",
        "",
        "`g = x @ w + bg; y = g * pa.sigmoid(g) * (x @ v + bu)` compiles to one kernel: two "
        "`Matmul` objects on the cube, bias adds and the SiLU gate on the vector unit as the "
        "matmul epilogue. The figures below are repeated from the sections above.",
        "",
    ]
    rows: list[list[Any]] = []
    cold = r.get("cold_compile", {}).get("workloads", {}).get(k)
    if cold:
        md = cold["median"]
        rows.append(
            [
                "cold compile Python → Ascend C (fresh process, g++ excluded)",
                f"{md['lower_ms']:.0f} ms (min {md['lower_ms_min']:.0f}); of which "
                f"asc-lower-cube {md['stage_ms'].get('asc-lower-cube', 0):.1f} ms; g++ "
                f"{md['gxx_kernel_ms']:.0f} ms",
                "measured",
            ]
        )
    cv = r.get("compile_variants", {}).get(k, {})
    for cfg in ("fused, double-buffered", "unfused, double-buffered"):
        e = cv.get(cfg)
        if e and "median_ms" in e:
            rows.append(
                [
                    f"warm compile, {cfg}",
                    f"{e['median_ms']['total']:.0f} ms, {e['kernels']} kernel(s)",
                    "measured",
                ]
            )
    cpu = r.get("cpu_build", {}).get(k, {})
    for cfg, e in cpu.get("configs", {}).items():
        rows.append(
            [
                f"CPU build, {cfg}",
                "error: " + e["error"]
                if "error" in e
                else f"{_ms(e['median_s'])} ms (max err {e['max_abs_err_vs_float64_ref']:.2g})",
                "measured",
            ]
        )
    for b, e in cpu.get("baselines", {}).items():
        sp = cpu.get("speedup_vs_baselines", {}).get(b)
        rows.append(
            [
                b,
                "error: " + e["error"]
                if "error" in e
                else f"{_ms(e['median_s'])} ms (max err {e['max_abs_err_vs_float64_ref']:.2g})"
                + (f"; fused CPU build is {sp:.2f}x this" if sp else ""),
                "measured",
            ]
        )
    b = cpu.get("builds", {}).get("fused, double-buffered", {})
    if b.get("gm_bytes") is not None:
        rows.append(
            [
                "GM bytes fused / op-by-op (`op.info`)",
                f"{b['gm_bytes']:,} / {b['unfused_gm_bytes']:,}",
                "compiler count",
            ]
        )
    mod = r.get("modeled_npu", {}).get(k)
    if mod:
        rows.append(
            [
                "GM-bandwidth roofline (inputs once + output once)",
                f"{mod['ideal_roofline_us']:.2f} µs ({mod['ideal_gm_bytes']:,} bytes)",
                "modeled",
            ]
        )
        if "cube_roofline_us" in mod:
            rows.append(
                [
                    "cube compute roofline (2·M·K·N MACs at 16×16×16 per cycle per cube core)",
                    f"{mod['cube_roofline_us']:.3f} µs",
                    "modeled",
                ]
            )
        for cfg, e in mod["configs"].items():
            pipes = ", ".join(f"{p} {u:.2f}" for p, u in e["pipe_busy_us"].items())
            rows.append(
                [
                    f"NPU time, {cfg}",
                    f"{e['modeled_us']:.2f} µs = {e['pct_of_ideal_roofline']:.1f}% of "
                    f"roofline; {e['kernels']} kernel(s); bound {e['bound_pipe']}; pipe "
                    f"busy µs: {pipes}; GM bytes moved {e['gm_bytes_moved']:,}",
                    "modeled",
                ]
            )
        rows.append(
            ["fusion speed-up (per-op → fused)", f"{mod['fusion_speedup_modeled']:.2f}x", "modeled"]
        )
        a = mod.get("autotune", {})
        if "error" in a:
            rows.append(["autotune", "not applicable: " + a["error"], ""])
    L += _table(["figure", "value", "kind"], rows)
    L += [
        "The cost model charges each `Matmul::Iterate` its cube cycles (pipe M) and its A, B "
        "and fp32 C blocks as MTE2 bytes (no reuse across blocks, and on the split-core 910B2 "
        "a GM round trip of C through the Matmul workspace), so its GM bytes exceed the "
        "compiler's `gm_bytes`. At M = 4 the kernel is weight-bandwidth bound: the two "
        "[512, 2048] fp16 weights are 4 MiB, the cube's arithmetic is far below the "
        "bandwidth time.",
        "",
    ]
    return L


def _wrap(title: str) -> str:
    """A workload title broken into short lines for the chart's x axis."""
    return textwrap.fill(title, 14)


def chart(r: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(15, 10))
    title = (
        f"pyasc-mlir benchmarks ({r['meta']['mode']} run, "
        f"{r['meta']['machine']['date_utc']}; NPU times MODELED for "
        f"{r['meta']['platform_modeled']})"
    )
    fig.suptitle(title, fontsize=12)

    # (a) cold compile stacked by stage
    ax = axes[0][0]
    cc = r.get("cold_compile", {}).get("workloads", {})
    names = [_wrap(r["workloads"][k]["title"]) for k in cc]
    bottom = [0.0] * len(cc)
    parts = [(st, lab) for st, lab in STAGE_COLS] + [("emit", "emit"), ("glue", "glue")]
    cmap = plt.get_cmap("tab20")
    for i, (st, lab) in enumerate(parts):
        vals = []
        for c in cc.values():
            md = c["median"]
            vals.append(
                md["stage_ms"].get(st, 0.0) if st in md["stage_ms"] else md.get(f"{st}_ms", 0.0)
            )
        ax.bar(names, vals, bottom=bottom, label=lab, color=cmap(i % 20))
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.axhline(250, color="red", ls="--", lw=1, label="250 ms target")
    ax.set_ylim(0, max([*bottom, 250]) * 1.45)
    ax.set_ylabel("ms (median, fresh process)")
    ax.set_title("Cold compile Python → Ascend C by stage (g++ excluded)")
    ax.legend(fontsize=7, ncol=3, loc="upper right")
    ax.tick_params(axis="x", labelsize=8)

    # (b) CPU build vs baselines
    ax = axes[0][1]
    cb = r.get("cpu_build", {})
    series: dict[str, list[float]] = {}
    keys = list(cb)
    labels = ["fused, double-buffered", "unfused, double-buffered"]
    for lab in labels:
        series[f"CPU build {lab}"] = [
            cb[k]["configs"].get(lab, {}).get("median_s", 0) * 1e3 for k in keys
        ]
    for b in sorted({b for v in cb.values() for b in v.get("baselines", {})}):
        series[b] = [cb[k]["baselines"].get(b, {}).get("median_s", 0) * 1e3 for k in keys]
    width = 0.8 / max(1, len(series))
    for i, (lab, vals) in enumerate(series.items()):
        ax.bar([x + i * width for x in range(len(keys))], vals, width, label=lab)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(keys))])
    ax.set_xticklabels(
        [f"{_wrap(r['workloads'][k]['title'])}\n{cb[k]['shape']}" for k in keys], fontsize=7
    )
    ax.set_yscale("log")
    top = max([v for vals in series.values() for v in vals if v > 0] or [1])
    ax.set_ylim(top=top * 40)
    ax.set_ylabel("ms (median, measured, log)")
    ax.set_title("CPU run time: CPU build vs NumPy op-by-op")
    ax.legend(fontsize=7, ncol=2, loc="upper right")

    # (c) modeled NPU time vs roofline
    ax = axes[1][0]
    mn = r.get("modeled_npu", {})
    keys = list(mn)
    cfgs = [
        "fused, double-buffered (as compiled)",
        "fused, single-buffered (same kernel, buffers=1)",
        "unfused, double-buffered (as compiled)",
    ]
    width = 0.8 / (len(cfgs) + 1)
    for i, cfg in enumerate(cfgs):
        ax.bar(
            [x + i * width for x in range(len(keys))],
            [mn[k]["configs"][cfg]["modeled_us"] for k in keys],
            width,
            label=cfg,
        )
    ax.bar(
        [x + len(cfgs) * width for x in range(len(keys))],
        [mn[k]["ideal_roofline_us"] for k in keys],
        width,
        label="GM-bandwidth roofline",
        color="black",
    )
    if "residual_layernorm" in mn:
        x0 = keys.index("residual_layernorm")
        ax.scatter(
            [x0 + 2 * width, x0],
            [380, 210],
            marker="x",
            color="red",
            zorder=5,
            label="seed claim: unfused 380 / fused 210 µs (device)",
        )
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(keys))])
    ax.set_xticklabels(
        [f"{_wrap(r['workloads'][k]['title'])}\n{mn[k]['shape']}" for k in keys], fontsize=7
    )
    ax.set_yscale("log")
    ax.set_ylim(
        top=max([mn[k]["configs"][c]["modeled_us"] for k in keys for c in cfgs] + [380]) * 40
    )
    ax.set_ylabel("µs (MODELED)")
    ax.set_title(f"MODELED {r['meta']['platform_modeled']} time vs roofline")
    ax.legend(fontsize=7, ncol=2, loc="upper right")

    # (d) overhead + interpreter
    ax = axes[1][1]
    it = r.get("interpreter", {})
    keys = list(it)
    stages = ["fused/tile", "fused/ascendc", "unfused/tile", "unfused/ascendc"]
    width = 0.8 / len(stages)
    for i, st in enumerate(stages):
        ax.bar(
            [x + i * width for x in range(len(keys))],
            [it[k].get(st, {}).get("elements_per_s", 0) / 1e3 for k in keys],
            width,
            label=st,
        )
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(keys))])
    ax.set_xticklabels(
        [f"{_wrap(r['workloads'][k]['title'])}\n{it[k]['shape']}" for k in keys], fontsize=7
    )
    ax.set_ylabel("k elements/s (measured, log)")
    ax.set_yscale("log")
    top = max(
        [it[k].get(st, {}).get("elements_per_s", 0) / 1e3 for k in keys for st in stages] or [1]
    )
    ax.set_ylim(top=max(top, 1e-3) * 40)
    ax.set_title("Interpreter throughput by stage")
    ax.legend(fontsize=7, ncol=2, loc="upper right")
    unsup = [w["title"] for w in r["workloads"].values() if not w["supported"]]
    if unsup:
        fig.text(0.01, 0.005, "not supported yet (no bars): " + "; ".join(unsup), fontsize=8)
    fig.tight_layout(rect=(0, 0.02, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
