"""Shrinking a failing fuzz program by replaying the Hypothesis run that generated it.

The replay is told the failure's verdict (its :attr:`~pyasc_mlir.fuzzing.verdicts.Verdict.
signature`), so Hypothesis sees the failure on the replayed example and shrinks it on its own;
each new candidate is compiled and checked on the failing stage only.
"""

from __future__ import annotations

import contextlib
import time

from pyasc_mlir.fuzzing.program import Program
from pyasc_mlir.fuzzing.runner import check_programs, lower_only
from pyasc_mlir.fuzzing.seeds import Spec, hypothesis_settings
from pyasc_mlir.fuzzing.strategies import programs
from pyasc_mlir.fuzzing.verdicts import STAGES, Verdict


def stages_for(where: str) -> tuple[str, ...]:
    """The stages a failure at ``where`` concerns (none: lowering or emission only)."""
    if "~" in where:
        return tuple(where.split("~"))
    if where in STAGES:
        return (where,)
    if where == "build":
        return ("cpu",)
    return ()


class _Found(Exception):
    """Raised inside the replay on a program failing with the signature being shrunk."""


def shrink(
    spec: Spec, signature: str, known: dict[str, Verdict], budget_s: float = 120.0
) -> tuple[Program, Verdict] | None:
    """Replay the Hypothesis run that generated ``spec``'s program with its known verdict, so
    Hypothesis sees the failure (``signature``) and shrinks it; new candidates are compiled
    and checked on the stages the failure concerns until ``budget_s`` runs out. Returns the
    minimal failing program and its verdict (None if the replay does not fail)."""
    from hypothesis import given
    from hypothesis import seed as hseed

    where = signature.split(":")[1]
    stages = stages_for(where)
    cache = dict(known)
    best: list[tuple[Program, Verdict]] = []
    started: list[float] = []

    @hypothesis_settings(shrink=True)
    @hseed(spec.hseed)
    @given(programs(spec.platform, spec.max_ops))
    def body(p: Program) -> None:
        v = cache.get(p.key)
        if v is None:
            if not started or time.monotonic() - started[0] > budget_s:
                v = Verdict("ok")  # before the replayed failure, or out of time
            else:
                v = check_programs([p], stages)[0] if stages else lower_only(p)
            cache[p.key] = v
        if v.failed and v.signature == signature:
            if not started:
                started.append(time.monotonic())
            best[:] = [(p, v)]
            raise _Found

    with contextlib.suppress(Exception):  # _Found, or e.g. Hypothesis reporting flakiness
        body()
    return best[0] if best else None
