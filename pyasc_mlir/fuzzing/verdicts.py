"""Verdicts: how a program's stage outputs are judged against the reference and each other.

A stage passes when every output element ``g`` satisfies ``round(r - K e) <= g <= round(r + K
e)`` with ``r`` the float64 reference, ``e`` its error bound (:mod:`pyasc_mlir.fuzzing.evaluator`),
``round`` the rounding to the output dtype and ``K =`` :data:`K_REF` -- so fp16 outputs get
exactly their one rounding plus the scaled fp32 error, and exact cases (max of inputs, copies)
must be exact. Stages are also compared with each other with ``K =`` :data:`K_STAGE` (tile vs
ascendc vs CPU; tensor is compared with the reference only, it does not decompose). An element
whose bound is infinite (an operand of log/rsqrt/division within its error of zero) is not
checked; such elements are counted.
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pyasc_mlir.dialects.opset_numerics import TINY
from pyasc_mlir.fuzzing.evaluator import EV, make_inputs, reference
from pyasc_mlir.fuzzing.program import Program

K_REF = 4.0
"""Safety factor on the error bound when comparing a stage with the reference."""
K_STAGE = 1.0
"""Factor on the error bound when comparing two post-decompose stages with each other."""
STAGES = ("tensor", "tile", "ascendc", "cpu")
"""The checked stages: the interpreter at three levels and the CPU build."""


@dataclass
class Verdict:
    """Outcome of one program: ``status`` is ``ok``, ``rejected``, ``mismatch`` or ``crash``;
    ``where`` the stage (``lower``, ``emit``, ``build``, ``tensor``, ``tile``, ``ascendc``,
    ``cpu``, or a pair such as ``ascendc~cpu``); ``detail`` the message."""

    status: str
    where: str = ""
    detail: str = ""
    seconds: float = 0.0
    unchecked: int = 0
    ratio: float = 0.0
    """Largest |stage - reference| / bound over checked elements (calibration)."""

    @property
    def failed(self) -> bool:
        """A mismatch or a crash (``rejected`` is a documented limit, not a failure)."""
        return self.status in ("mismatch", "crash")

    @property
    def signature(self) -> str:
        """``status:where:exception`` -- failures with one signature are one bug (shrunk
        once)."""
        first = self.detail.splitlines()[0] if self.detail else ""
        exc = first.split(":")[0] if self.status == "crash" else ""
        return f"{self.status}:{self.where}:{exc}"


def exc_text(exc: BaseException) -> str:
    """``Type: message (at file:line)`` of ``exc``, for a verdict's detail."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _fmt(x: float) -> str:
    return f"{x:.9g}"


def compare(got: Any, ref: EV, dtype: str, k: float) -> tuple[str | None, int, float]:
    """Check ``got`` against the reference within ``k`` times its error bound (see the module
    docstring). Returns (first failure description or None, unchecked elements, max ratio)."""
    want = np.dtype(dtype)
    g = np.asarray(got)
    if g.shape != ref.v.shape:
        return f"shape {list(g.shape)}, expected {list(ref.v.shape)}", 0, math.inf
    if g.dtype != want:
        return f"dtype {g.dtype}, expected {want}", 0, math.inf
    e = np.broadcast_to(ref.e, ref.v.shape)
    checked = np.isfinite(e)
    tol = np.where(checked, k * e, 0.0)
    with np.errstate(all="ignore"):
        lo = (ref.v - tol).astype(want).astype(np.float64)
        hi = (ref.v + tol).astype(want).astype(np.float64)
        g64 = g.astype(np.float64)
        ok = ((g64 >= lo) & (g64 <= hi)) | ~checked
        diff = np.abs(g64 - ref.v)
        spacing = np.abs(np.spacing(np.abs(ref.v).astype(want))).astype(np.float64)
        ratio_arr = np.where(
            checked & np.isfinite(diff), np.maximum(diff - spacing, 0) / np.maximum(e, TINY), 0.0
        )
    ratio = float(ratio_arr.max()) if ratio_arr.size else 0.0
    if ok.all():
        return None, int((~checked).sum()), ratio
    bad = np.argwhere(~ok)
    idx = tuple(int(i) for i in bad[0])
    with np.errstate(all="ignore"):
        rounded = float(np.asarray(ref.v[idx]).astype(want))
    return (
        (
            f"{len(bad)} of {g.size} elements outside the bound; first at {idx}: got "
            f"{_fmt(g64[idx])}, expected {_fmt(ref.v[idx])} (rounded {_fmt(rounded)}) +- "
            f"{_fmt(tol[idx])} (bound {_fmt(e[idx])} x {k:g})"
        ),
        int((~checked).sum()),
        ratio,
    )


def compare_stages(a: Any, b: Any, ref: EV, dtype: str, k: float) -> str | None:
    """Two stages agree within ``k`` times the bound (plus one ulp of the dtype): None, or a
    description of the first disagreement."""
    want = np.dtype(dtype)
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a64.shape != b64.shape:
        return f"shapes {list(a64.shape)} vs {list(b64.shape)}"
    e = np.broadcast_to(ref.e, ref.v.shape)
    checked = np.isfinite(e)
    with np.errstate(all="ignore"):
        mag = np.maximum(np.abs(a64), np.abs(b64))
        sp = np.abs(np.spacing(mag.astype(want))).astype(np.float64)
        same = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))
        ok = same | (np.abs(a64 - b64) <= k * np.where(checked, e, 0) + sp) | ~checked
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    idx = tuple(int(i) for i in bad[0])
    return (
        f"{len(bad)} of {a64.size} elements differ; first at {idx}: {_fmt(a64[idx])} vs "
        f"{_fmt(b64[idx])} (reference {_fmt(ref.v[idx])}, bound {_fmt(e[idx])} x {k:g})"
    )


def _stage_outputs(
    op: Any,
    arrays: Sequence[np.ndarray],
    n_refs: int,
    cpu: list[np.ndarray] | str | None,
    stages: Sequence[str],
) -> dict[str, list[np.ndarray]] | Verdict:
    """Every stage's outputs, or the verdict of the first stage that crashed or returned the
    wrong number of outputs."""
    results: dict[str, list[np.ndarray]] = {}
    for stage in stages:
        if stage == "cpu":
            if isinstance(cpu, str):
                return Verdict("crash", "cpu", cpu)
            assert cpu is not None
            outs = cpu
        else:
            try:
                outs = op.run_stage(stage, *[a.copy() for a in arrays])
            except Exception as exc:  # noqa: BLE001
                return Verdict("crash", stage, exc_text(exc))
        if len(outs) != n_refs:
            return Verdict("mismatch", stage, f"{len(outs)} outputs, expected {n_refs}")
        results[stage] = outs
    return results


def run_checks(
    p: Program,
    op: Any,
    cpu: list[np.ndarray] | str | None,
    stages: Sequence[str] = STAGES,
    k_ref: float = K_REF,
    k_stage: float = K_STAGE,
) -> Verdict:
    """Run ``op`` (a :class:`~pyasc_mlir.driver.CompiledOp` of ``p``) at every interpreter
    stage of ``stages`` on ``p``'s inputs, take ``cpu`` as the CPU build's outputs (or its
    error text), and judge them: each stage against the reference within ``k_ref`` times the
    bound, then consecutive post-decompose stages against each other within ``k_stage``."""
    arrays = make_inputs(p)
    refs = reference(p, arrays)
    results = _stage_outputs(op, arrays, len(refs), cpu, stages)
    if isinstance(results, Verdict):
        return results
    unchecked, ratio = 0, 0.0
    for stage in stages:
        for j, (got, (ref, dt)) in enumerate(zip(results[stage], refs, strict=True)):
            msg, unc, r = compare(got, ref, dt, k_ref)
            unchecked = max(unchecked, unc)
            ratio = max(ratio, r)
            if msg is not None:
                return Verdict(
                    "mismatch", stage, f"{stage} output {j}: {msg}", 0.0, unchecked, ratio
                )
    order = [s for s in ("tile", "ascendc", "cpu") if s in results]
    for s1, s2 in zip(order, order[1:], strict=False):
        for j, (a, b, (ref, dt)) in enumerate(zip(results[s1], results[s2], refs, strict=True)):
            msg = compare_stages(a, b, ref, dt, k_stage)
            if msg is not None:
                return Verdict(
                    "mismatch",
                    f"{s1}~{s2}",
                    f"{s1} vs {s2} output {j}: {msg}",
                    0.0,
                    unchecked,
                    ratio,
                )
    return Verdict("ok", "", "", 0.0, unchecked, ratio)
