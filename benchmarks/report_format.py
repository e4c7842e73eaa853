"""Formatting helpers of the benchmark report (:mod:`benchmarks.report`): table cells,
Markdown tables, the compile stages shown as columns, and the rows of unsupported workloads."""

from __future__ import annotations

from typing import Any

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


def fmt(x: Any, spec: str = "{:.1f}") -> str:
    """One table cell: ``x`` formatted with ``spec``; "–" for a missing figure, ``str(x)``
    when ``spec`` does not apply to it."""
    if x is None:
        return "–"
    try:
        return spec.format(x)
    except (ValueError, TypeError):
        return str(x)


def table(head: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table (then a blank line) of header ``head`` and ``rows``."""
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out + [""]


def ms(sec: float | None) -> str:
    """Seconds as milliseconds: two decimals below 1 s, none above; "–" if missing."""
    return "–" if sec is None else (f"{sec * 1e3:.2f}" if sec < 1 else f"{sec * 1e3:.0f}")


def unsupported_rows(r: dict[str, Any], ncols: int) -> list[list[str]]:
    """One row of ``ncols`` cells per workload the compiler rejects, with its reason."""
    unsup = [w for w in r["workloads"].values() if not w["supported"]]
    return [[w["title"], "not supported yet: " + w["reason"]] + [""] * (ncols - 2) for w in unsup]
