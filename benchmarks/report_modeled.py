"""Sections 6-8 of the benchmark report (:mod:`benchmarks.report`): the MODELED NPU figures
(``pyasc_mlir.cost_model``, not a device), GM bytes, autotuning and the SwiGLU summary. Each
function takes ``results.json`` as a dict and returns Markdown lines (none when the run has no
such section)."""

from __future__ import annotations

from typing import Any

from benchmarks.report_format import fmt, ms, table, unsupported_rows


def modeled_npu(r: dict[str, Any]) -> list[str]:
    """Section 6 (and its GM-bytes and autotuning tables): modeled NPU time vs the roofline."""
    meta = r["meta"]
    mn = r.get("modeled_npu")
    if not mn:
        return []
    L: list[str] = []
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
                    fmt(v["ideal_roofline_us"], "{:.2f}") if first else "",
                    cfg,
                    e["kernels"],
                    fmt(e["modeled_us"], "{:.2f}"),
                    fmt(e["pct_of_ideal_roofline"], "{:.1f}%")
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
                    fmt(two["modeled_us"]),
                    fmt(100 * v["ideal_roofline_us"] / two["modeled_us"], "{:.1f}%"),
                    "",
                    "",
                ]
            )
    rows += unsupported_rows(r, len(head))
    L += table(head, rows)
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
    L += table(
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
    L += gm_bytes(r) + autotune(r)
    return L


def gm_bytes(r: dict[str, Any]) -> list[str]:
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
        *table(
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


def autotune(r: dict[str, Any]) -> list[str]:
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
                fmt(a["default_modeled_us"], "{:.2f}"),
                f"`{a['tuned']}`",
                fmt(a["tuned_modeled_us"], "{:.2f}"),
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
        *table(
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


def swiglu(r: dict[str, Any]) -> list[str]:
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
                else f"{ms(e['median_s'])} ms (max err {e['max_abs_err_vs_float64_ref']:.2g})",
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
                else f"{ms(e['median_s'])} ms (max err {e['max_abs_err_vs_float64_ref']:.2g})"
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
    L += table(["figure", "value", "kind"], rows)
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
