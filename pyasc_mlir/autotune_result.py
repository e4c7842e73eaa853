"""The outcome of an :mod:`pyasc_mlir.autotune` search and its cache entry
(``<PYASC_CACHE_DIR>/tune/<key>.json``): the ranked candidates, the summary and table printed
for them, their JSON form, the cache key and the reading of an entry."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pyasc_mlir.autotune_space import Candidate, Knobs
from pyasc_mlir.cache import cache_dir, cache_key
from pyasc_mlir.errors import PyAscUsageError
from pyasc_mlir.types import TensorDesc

SEARCH_VERSION = 2
"""Part of the winner's cache key: bump when the search space or ranking changes."""


@dataclass
class TuneResult:
    """Outcome of a search (or of its cache entry).

    Attributes:
        name: operator name. signature: argument descriptions. platform: SoC name.
        candidates: ranked, best first (failed ones last).
        default: the automatic kernel (``tiling=None``), for comparison.
        from_cache: True when no search ran. search_s: wall time of the search.
    """

    name: str
    signature: str
    platform: str
    candidates: list[Candidate]
    default: Candidate
    from_cache: bool = False
    search_s: float = 0.0
    workers: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def winner(self) -> Candidate:
        ok = [c for c in self.candidates if c.ok]
        if not ok:
            raise PyAscUsageError(
                f"autotune: no candidate of {self.name} could be built "
                f"(first error: {self.candidates[0].error})"
            )
        return ok[0]

    def hint(self) -> str:
        """How to pin the winner, as code."""
        pin = json.dumps(self.winner.knobs.pin)
        return f"pin it with @pa.jit(tiling={pin}) or pyasc_mlir.compile(..., tiling={pin})"

    def summary(self) -> str:
        w, d = self.winner, self.default
        gain = d.modeled_us / w.modeled_us if w.modeled_us else 1.0
        src = (
            "cached winner"
            if self.from_cache
            else (
                f"{len(self.candidates)} candidates in {self.search_s:.1f} s, {self.workers} "
                "workers"
            )
        )
        return (
            f"autotune {self.name}({self.signature}) on {self.platform} ({src}): "
            f"{w.knobs.text()} -> {w.modeled_us:.2f} us MODELED (automatic: "
            f"{d.modeled_us:.2f} us, "
            f"{gain:.2f}x)\n  {self.hint()}"
        )

    def table(self, limit: int | None = None) -> str:
        """Ranked candidates: modeled µs, bound pipe, knobs, measured CPU-build µs (tile_m and
        tile_n columns for operators with Cube kernels; a 0 knob is automatic)."""
        cube = bool(self.default.cube_shape)
        vec = not self.default.mode.startswith("cube")
        mw = max(5, *(len(c.mode) for c in self.candidates)) if self.candidates else 5
        head = (
            f"{'rank':>4}  {'modeled us':>10}  {'bound':<5}  {'mode':<{mw}}  "
            + (f"{'tile':>6}  " if vec else "")
            + (f"{'tile_m':>6}  {'tile_n':>6}  " if cube else "")
            + f"{'block_dim':>9}  {'buffers':>7}  {'CPU-build us':>12}  note"
        )
        lines = [head, "-" * len(head)]
        rows = self.candidates if limit is None else self.candidates[:limit]
        for i, c in enumerate(rows, 1):
            k = c.knobs
            note = []
            if c is self.winner:
                note.append("winner")
            if k == self.default.knobs:
                note.append("automatic")
            if c.error:
                note.append(f"error: {c.error.splitlines()[0][:60]}")
            meas = f"{c.measured_us:.1f}" if c.measured_us is not None else "-"
            mod = f"{c.modeled_us:.2f}" if c.ok or c.modeled_us < math.inf else "-"
            lines.append(
                f"{i:>4}  {mod:>10}  {c.bound:<5}  {c.mode:<{mw}}  "
                + (f"{k.tile:>6}  " if vec else "")
                + (f"{k.tile_m:>6}  {k.tile_n:>6}  " if cube else "")
                + f"{k.block_dim:>9}  {k.buffers:>7}  {meas:>12}  {', '.join(note)}"
            )
        if limit is not None and len(self.candidates) > limit:
            lines.append(f"... {len(self.candidates) - limit} more")
        lines.append(
            "modeled us: pyasc_mlir.cost_model (MODELED NPU time, not measured); "
            "CPU-build us: measured on this machine (information only)"
        )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        def cand(c: Candidate) -> dict[str, Any]:
            d = asdict(c)
            d["modeled_us"] = None if math.isinf(c.modeled_us) else c.modeled_us
            return d

        return {
            "name": self.name,
            "signature": self.signature,
            "platform": self.platform,
            "candidates": [cand(c) for c in self.candidates],
            "default": cand(self.default),
            "search_s": self.search_s,
            "workers": self.workers,
            "search_version": SEARCH_VERSION,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> TuneResult:
        def cand(x: dict[str, Any]) -> Candidate:
            x = dict(x)
            x["knobs"] = Knobs(**x["knobs"])
            x["modeled_us"] = math.inf if x["modeled_us"] is None else x["modeled_us"]
            return Candidate(**x)

        return TuneResult(
            d["name"],
            d["signature"],
            d["platform"],
            [cand(c) for c in d["candidates"]],
            cand(d["default"]),
            from_cache=True,
            search_s=d["search_s"],
            workers=d["workers"],
        )


def signature(inputs: Sequence[object]) -> str:
    return ", ".join(
        f"{list(d.shape)} {d.dtype}" if isinstance(d, TensorDesc) else repr(d) for d in inputs
    )


def cache_path(
    fn: Callable[..., Any], inputs: Sequence[object], name: str, platform: str, measure: int
) -> tuple[str, Path]:
    key = cache_key(
        fn,
        inputs,
        {"platform": platform, "name": name, "measure": measure, "autotune": SEARCH_VERSION},
    )
    return key, cache_dir() / "tune" / f"{key}.json"


def load_result(path: Path) -> TuneResult | None:
    try:
        return TuneResult.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or unreadable: search again (and rewrite it)
