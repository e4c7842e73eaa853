"""Issue 14's table: for each published 910B2 case of the ops LLM layers need (RMSNorm,
softmax, SwiGLU, GELU, attention prefill and decode, GEMM), the built-in's published time, OUR
kernel's MODELED time (``pyasc_mlir.cost_model``, calibrated constants), their ratio, our kernel
count and bound pipe. A case our compiler cannot build is listed as such (a failure).

    python benchmarks/cann_table.py   # writes benchmarks/results/cann_table.{json,md,png}

``python benchmarks/run.py`` writes the same table and chart into its results folder (and its
README.md): :func:`write`.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.cann_cases import PLATFORM, Case, load_cases, walks  # noqa: E402
from pyasc_mlir import cost_model  # noqa: E402
from pyasc_mlir.errors import PyAscError  # noqa: E402
from pyasc_mlir.platform import get_platform  # noqa: E402

TABLE_OPS = ("rms_norm", "softmax", "swi_glu", "gelu", "attention", "gemm")
RESULTS = ROOT / "benchmarks" / "results"


def row(c: Case) -> dict[str, Any]:
    """One table row (modeled times MODELED)."""
    out: dict[str, Any] = {
        "op": c.op,
        "case": c.label,
        "published_us": c.published_us,
        "published_is": "upper bound" if c.upper_bound else "measured",
    }
    try:
        ws = walks(c)
    except PyAscError as exc:
        out["not_compiled"] = str(exc).splitlines()[0].replace(f"{ROOT}/", "")
        return out
    plat = get_platform(PLATFORM)
    es = [cost_model.time_walk(w, plat) for w in ws]
    t = sum(e.time_us for e in es)
    pipes = {p: sum(e.pipe_us[p] for e in es) for p in cost_model.PIPES}
    out.update(
        modeled_us=round(t, 2),
        ratio=round(t / c.published_us, 3),
        kernels=len(es),
        bound=max(pipes, key=lambda p: pipes[p]),
    )
    return out


def table(cases: list[Case] | None = None) -> dict[str, Any]:
    """Every measured (or upper-bound) case of :data:`TABLE_OPS`; lower-bound rows are left
    out (a ratio against a lower bound says nothing). Geometric mean and worst ratio over the
    compiled rows; failures counted."""
    rows = [row(c) for c in cases or load_cases() if c.op in TABLE_OPS and not c.lower_bound]
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    return {
        "platform": PLATFORM,
        "label": "modeled times are MODELED; published times are 910B2 measurements",
        "rows": rows,
        "geomean_ratio": math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None,
        "worst_ratio": max(ratios) if ratios else None,
        "not_compiled": sum(1 for r in rows if "not_compiled" in r),
    }


def markdown(t: dict[str, Any]) -> str:
    lines = [
        "## Against CANN's built-ins (910B2; ours MODELED, theirs published)",
        "",
        f"Geometric mean of modeled / built-in: {t['geomean_ratio']:.2f}; worst "
        f"{t['worst_ratio']:.2f}; cases that do not compile: {t['not_compiled']}.",
        "",
        "| op | case | built-in µs | ours µs (MODELED) | ratio | kernels | bound |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in t["rows"]:
        pub = f"{r['published_us']:g}" + (
            " (upper bound)" if r["published_is"] != "measured" else ""
        )
        if "ratio" in r:
            lines.append(
                f"| {r['op']} | {r['case']} | {pub} | {r['modeled_us']:.1f} | {r['ratio']:.2f} "
                f"| {r['kernels']} | {r['bound']} |"
            )
        else:
            lines.append(
                f"| {r['op']} | {r['case']} | {pub} | not compiled: {r['not_compiled'][:60]} "
                "| | | |"
            )
    return "\n".join(lines) + "\n"


def chart(t: dict[str, Any], path: Path) -> None:
    """A PNG of the table: one bar per case, modeled / built-in on a log axis (below 1 = ours
    modeled faster), coloured by op, with the 1.0 and 1.1 lines of issue 14's acceptance; cases
    that do not compile are marked with a red cross at 1.0. Needs matplotlib (``.[bench]``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = t["rows"]
    ops = list(dict.fromkeys(r["op"] for r in rows))
    cmap = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(max(10.0, 0.16 * len(rows)), 5.5))
    for i, r in enumerate(rows):
        if "ratio" in r:
            ax.bar(i, r["ratio"], color=cmap(ops.index(r["op"]) % 10))
        else:
            ax.plot(i, 1.0, "x", color="red", ms=8)
    for op in ops:
        ax.bar(0, 0, color=cmap(ops.index(op) % 10), label=op)  # legend entries
    ax.axhline(1.0, color="black", lw=1)
    ax.axhline(1.1, color="red", ls="--", lw=1, label="1.1x")
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)), [r["case"].split(" ")[0] for r in rows], rotation=90)
    ax.tick_params(axis="x", labelsize=6)
    ax.set_ylabel("MODELED ours / published built-in")
    ax.set_title(
        f"pyasc-mlir vs CANN built-ins on {t['platform']} (ours MODELED; geomean "
        f"{t['geomean_ratio']:.2f}, worst {t['worst_ratio']:.2f}, not compiled "
        f"{t['not_compiled']})"
    )
    ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(t: dict[str, Any], out_dir: Path) -> list[str]:
    """Write ``cann_table.{json,md,png}`` into ``out_dir``; the problems met (the chart is
    skipped without matplotlib, with that reason)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "cann_table.json").write_text(json.dumps(t, indent=1) + "\n")
    (out_dir / "cann_table.md").write_text(markdown(t))
    try:
        chart(t, out_dir / "cann_table.png")
    except ImportError as exc:
        return [f"cann_table.png not written: {exc} (pip install -e '.[bench]')"]
    return []


def main() -> int:
    t = table()
    for problem in write(t, RESULTS):
        print(problem)
    print(markdown(t).splitlines()[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
