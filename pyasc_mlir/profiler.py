"""Per-kernel profiles: modeled NPU time (``cost_model``) next to the measured CPU-build time.

``with pyasc_mlir.profiler() as prof:`` records every compiled operator called inside the block;
``prof.report()`` gives one row per operator. Modeled figures are labelled "modeled".
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pyasc_mlir.cost_model import KernelEstimate, estimate

_ACTIVE: list[Profile] = []


@dataclass
class ProfileRow:
    """One operator: its modeled kernels and measured CPU-build call times (µs)."""

    name: str
    estimates: list[KernelEstimate]
    ub_bytes: int
    cpu_us: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        e = self.estimates[0]
        cpu = sorted(self.cpu_us)
        return {
            "name": self.name,
            "block_dim": e.block_dim,
            "modeled_us": round(sum(k.time_us for k in self.estimates), 3),
            "modeled_bound_pipe": e.bound,
            "modeled_pipe_us": {k: round(v, 3) for k, v in e.pipe_us.items()},
            "roofline_us": round(sum(k.roofline_us for k in self.estimates), 3),
            "gm_bytes": sum(k.gm_bytes for k in self.estimates),
            "ub_peak_bytes": self.ub_bytes,
            "cpu_build_us_median": cpu[len(cpu) // 2] if cpu else None,
            "calls": len(cpu),
        }


@dataclass
class Profile:
    """Rows by operator name, filled while the context is active."""

    rows: dict[str, ProfileRow] = field(default_factory=dict)

    def record(self, op: Any, seconds: float) -> None:
        key = f"{op.name}:{op.info.get('key', '')}"
        if key not in self.rows:
            self.rows[key] = ProfileRow(
                op.name, estimate(op.stages()["ascendc"], op.info["platform"]), op.info["ub_bytes"]
            )
        self.rows[key].cpu_us.append(seconds * 1e6)

    def report(self) -> list[dict[str, Any]]:
        return [r.as_dict() for r in self.rows.values()]

    def table(self) -> str:
        """A plain-text table; every NPU time is modeled, CPU times are measured."""
        head = (
            f"{'kernel':24} {'blockDim':>8} {'modeled us':>11} {'bound':>6} "
            f"{'roofline us':>12} {'GM bytes':>12} {'UB peak':>8} {'CPU build us':>13}"
        )
        lines = [head, "-" * len(head)]
        for r in self.report():
            cpu = r["cpu_build_us_median"]
            lines.append(
                f"{r['name']:24} {r['block_dim']:>8} {r['modeled_us']:>11.2f} "
                f"{r['modeled_bound_pipe']:>6} {r['roofline_us']:>12.2f} "
                f"{r['gm_bytes']:>12,} {r['ub_peak_bytes']:>8,} "
                f"{(f'{cpu:.0f}' if cpu is not None else '-'):>13}"
            )
        lines.append(
            "modeled = pyasc_mlir.cost_model estimate for the op's platform "
            "(not measured on an NPU); CPU build = measured median."
        )
        return "\n".join(lines)


@contextmanager
def profiler() -> Iterator[Profile]:
    """Record every compiled-operator call (CPU build) made inside the ``with`` block."""
    prof = Profile()
    _ACTIVE.append(prof)
    try:
        yield prof
    finally:
        _ACTIVE.remove(prof)


def notify(op: Any, start: float) -> None:
    """Called by ``CompiledOp`` after a CPU-build run that began at ``start``."""
    if _ACTIVE:
        elapsed = time.perf_counter() - start
        for prof in _ACTIVE:
            prof.record(op, elapsed)
