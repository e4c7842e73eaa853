"""The benchmark report's PNG chart (matplotlib, Agg backend): cold compile by stage, the CPU
build against NumPy, modeled NPU time against the roofline, interpreter throughput.

NPU bars are MODELED (``pyasc_mlir.cost_model``); the others are measured.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from benchmarks.report_format import STAGE_COLS


def wrap(title: str) -> str:
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
    names = [wrap(r["workloads"][k]["title"]) for k in cc]
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
        [f"{wrap(r['workloads'][k]['title'])}\n{cb[k]['shape']}" for k in keys], fontsize=7
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
        [f"{wrap(r['workloads'][k]['title'])}\n{mn[k]['shape']}" for k in keys], fontsize=7
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
        [f"{wrap(r['workloads'][k]['title'])}\n{it[k]['shape']}" for k in keys], fontsize=7
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
