"""Issue 14's table (``benchmarks/cann_table.py``, also written by ``benchmarks/run.py``): the
rows carry the published time, our MODELED time (the cost model's walks of the compiled
kernels), their ratio and the bound pipe; lower-bound rows are left out; a case that does not
compile is a row that says so; ``write`` produces the JSON, the Markdown and the chart."""

from __future__ import annotations

import importlib.util
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks import cann_table
from benchmarks.cann_cases import PLATFORM, load_cases, walks
from pyasc_mlir import cost_model
from pyasc_mlir.platform import get_platform


def _cases(*labels: str):
    by = {f"{c.op}#{c.case}": c for c in load_cases()}
    return [by[k] for k in labels]


def test_rows_are_the_cost_models_times_against_the_published_ones():
    cases = _cases("rms_norm#1", "gelu#1", "softmax#2")
    t = cann_table.table(cases)
    assert [r["case"] for r in t["rows"]] == [c.label for c in cases]
    plat = get_platform(PLATFORM)
    for c, r in zip(cases, t["rows"], strict=True):
        es = [cost_model.time_walk(w, plat) for w in walks(c)]
        assert r["modeled_us"] == pytest.approx(sum(e.time_us for e in es), abs=0.01)
        assert r["published_us"] == c.published_us and r["published_is"] == "measured"
        assert r["ratio"] == pytest.approx(r["modeled_us"] / c.published_us, abs=1e-3)
        assert r["kernels"] == 1 and r["bound"] in cost_model.PIPES
    ratios = [r["ratio"] for r in t["rows"]]
    assert t["geomean_ratio"] == pytest.approx(math.prod(ratios) ** (1 / 3))
    assert t["worst_ratio"] == max(ratios) and t["not_compiled"] == 0


def test_lower_bound_rows_are_left_out_and_failures_are_rows():
    lower = next(c for c in load_cases() if c.lower_bound and c.op in cann_table.TABLE_OPS)
    bad = replace(_cases("rms_norm#1")[0], shapes=[[4, 8], [9]])  # weight of the wrong width
    t = cann_table.table([lower, bad])
    assert len(t["rows"]) == 1 and t["not_compiled"] == 1
    assert "not_compiled" in t["rows"][0] and t["geomean_ratio"] is None
    assert "not compiled:" in cann_table.markdown({**t, "geomean_ratio": 1.0, "worst_ratio": 1.0})


def test_write_produces_json_markdown_and_chart(tmp_path: Path):
    """The chart needs the bench extra (matplotlib); without it ``write`` says so."""
    t = cann_table.table(_cases("rms_norm#1", "gelu#1"))
    problems = cann_table.write(t, tmp_path)
    assert json.loads((tmp_path / "cann_table.json").read_text())["rows"] == t["rows"]
    md = (tmp_path / "cann_table.md").read_text()
    assert "| rms_norm | rms_norm#1 " in md and "MODELED" in md
    if importlib.util.find_spec("matplotlib") is None:
        assert len(problems) == 1 and "pip install" in problems[0]
        assert not (tmp_path / "cann_table.png").exists()
        return
    assert problems == []
    png = (tmp_path / "cann_table.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
