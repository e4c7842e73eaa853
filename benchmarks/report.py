"""results.json -> Markdown tables (README.md) and a PNG chart (matplotlib, Agg backend).

Every NPU figure is labelled "modeled": it comes from ``pyasc_mlir.cost_model``, not from a
device. CPU figures are measured on the machine described at the top of the report.
"""

from __future__ import annotations

from typing import Any

from benchmarks import cann_table
from benchmarks.dynamic import report as dynamic_report
from benchmarks.report_chart import chart
from benchmarks.report_format import STAGE_COLS, table
from benchmarks.report_measured import (
    call_overhead,
    cold_compile,
    compile_variants,
    cpu_build,
    interpreter,
)
from benchmarks.report_modeled import modeled_npu, swiglu

__all__ = ["STAGE_COLS", "chart", "markdown"]


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
        "table; a per-kernel minimum time and the L2 with constants fitted to published 910B2 "
        "measurements: benchmarks/results/calibration.md). No Ascend device was used.",
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
    L += table(["figure", "target", "measured", "status"], rows)

    # -- workloads
    L += ["## Workloads", ""]
    rows = []
    for w in r["workloads"].values():
        status = "supported" if w["supported"] else f"**not supported yet**: {w['reason']}"
        rows.append(
            [w["title"], f"`{w['seed_shape']}`", f"`{w['exec_shape']}`", w["shape_note"], status]
        )
    L += table(["workload", "seed shape", "CPU-timing shape", "shape", "status"], rows)
    unsup = [w for w in r["workloads"].values() if not w["supported"]]
    if unsup:
        L += [
            "Workloads the compiler rejects appear in every table below as *not supported "
            "yet*; their figures are not replaced by anything else.",
            "",
        ]
    L += cold_compile(r)
    L += compile_variants(r)
    L += cpu_build(r)
    L += call_overhead(r)
    L += interpreter(r)
    L += modeled_npu(r)
    L += dynamic_report(r)
    L += swiglu(r)
    L += ["![chart](chart.png)", ""]
    if "cann_table" in r:
        L += [cann_table.markdown(r["cann_table"]), "![CANN table](cann_table.png)", ""]
    return "\n".join(L)
