"""The outcome of a fuzz run: counts, rejection reasons, calibration and failures."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pyasc_mlir.fuzzing.program import Program
from pyasc_mlir.fuzzing.verdicts import K_REF, Verdict


@dataclass
class FuzzReport:
    """Outcome of :func:`~pyasc_mlir.fuzzing.run.run_fuzz`: program counts by verdict and
    platform, rejection reasons, the largest error ratio and the failures (program, verdict,
    regression test)."""

    programs: int = 0
    ok: int = 0
    rejected: int = 0
    mismatches: int = 0
    crashes: int = 0
    seconds: float = 0.0
    reject_reasons: Counter = field(default_factory=Counter)
    failures: list[tuple[Program, Verdict, Path | None]] = field(default_factory=list)
    max_ratio: float = 0.0
    max_ratio_program: str = ""
    unchecked_programs: int = 0
    by_platform: Counter = field(default_factory=Counter)

    @property
    def failed(self) -> bool:
        """Any mismatch or crash."""
        return self.mismatches + self.crashes > 0

    def summary(self) -> str:
        """The report as printed at the end of ``pyasc fuzz``."""
        lines = [
            f"{self.programs} programs in {self.seconds:.1f} s "
            f"({self.seconds / max(self.programs, 1):.2f} s/program): "
            f"{self.ok} ok, {self.rejected} rejected, {self.mismatches} mismatches, "
            f"{self.crashes} crashes",
            "platforms: " + ", ".join(f"{k} {n}" for k, n in sorted(self.by_platform.items())),
            f"largest |got - reference| / bound over checked elements: "
            f"{self.max_ratio:.3g} ({self.max_ratio_program or '-'}; threshold "
            f"{K_REF:g}); programs with unchecked "
            f"elements (infinite bound): {self.unchecked_programs}",
        ]
        if self.reject_reasons:
            lines.append("rejected (documented compile limits):")
            for msg, n in self.reject_reasons.most_common():
                lines.append(f"  {n:5d} x {msg}")
        for p, v, path in self.failures:
            lines.append(
                f"FAIL {p.name}: {v.status} at {v.where}: {v.detail.splitlines()[0]}"[:300]
            )
            if path is not None:
                lines.append(f"     regression test: {path}")
        return "\n".join(lines)


_NUM = re.compile(r"\d+")


def reject_reason(msg: str) -> str:
    """A rejection message's first line with its numbers replaced by ``N`` (a reason to
    count), at most 110 characters."""
    return _NUM.sub("N", msg.splitlines()[0])[:110]
