"""Shared settings and small helpers of the benchmark suite (``benchmarks/run.py``)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import pyasc_mlir as pa
from benchmarks.workloads import Workload
from pyasc_mlir.platform import DEFAULT_PLATFORM

PLATFORM = DEFAULT_PLATFORM
SEED_CLAIM = {
    "unfused_us": 380.0,
    "fused_us": 210.0,
    "text": "residual+LayerNorm on an accelerator: 380 us unfused -> 210 us fused",
}
DYNAMIC_WORKLOADS = ("residual_layernorm", "softmax", "sine")
"""Workloads timed with ``@jit(dynamic=True)`` (section 7)."""
CONFIGS = [("fused", True), ("fused", False), ("unfused", True), ("unfused", False)]
STAGES = [
    "frontend",
    "asc-decompose",
    "asc-fuse",
    "asc-tile",
    "asc-double-buffer",
    "asc-buffer-alloc",
    "convert-asc-to-ascendc",
]


def cfg_name(fusion: str, db: bool) -> str:
    return f"{fusion}, {'double-buffered' if db else 'single-buffered'}"


class Settings:
    def __init__(self, quick: bool):
        self.quick = quick
        self.warmup = 1 if quick else 2
        self.repeats = 3 if quick else 7
        self.compile_repeats = 2 if quick else 5
        self.cold_runs = 1 if quick else 5
        # --quick: measured fresh-process compiles for the first workload only
        self.cold_all_workloads = not quick
        self.call_rounds = 100 if quick else 400
        self.interp_warmup = 0 if quick else 1
        self.interp_repeats = 1 if quick else 3
        # --quick skips the single-buffered CPU builds (identical arithmetic; only the tile size
        # differs) and runs the unfused CPU build and interpreter only for residual+LayerNorm,
        # to stay under two minutes; everything is modeled in both modes.
        self.cpu_configs = [c for c in CONFIGS if c[1]] if quick else CONFIGS
        self.unfused_only = {"residual_layernorm"} if quick else None

    def runs_unfused(self, key: str) -> bool:
        return self.unfused_only is None or key in self.unfused_only

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if k not in ("cpu_configs", "unfused_only")} | {
            "cpu_configs": [cfg_name(*c) for c in self.cpu_configs],
            "unfused_cpu_and_interp_for": sorted(self.unfused_only) if self.unfused_only else "all",
        }


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()


def short_reason(text: str) -> str:
    """The compiler's message without the source excerpt: 'error: ...; hint: ...'."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    err = next((ln for ln in lines if "error:" in ln), lines[0] if lines else text)
    err = err[err.index("error:") :] if "error:" in err else err
    hint = next((ln for ln in lines if ln.startswith("hint:")), "")
    return f"{err}; {hint}" if hint else err


def call_args(w: Workload, shape: tuple[int, ...], arrays: tuple[np.ndarray, ...]) -> list[Any]:
    """The positional arguments of the Python operator: arrays where the descs have tensors,
    the compile-time constants elsewhere."""
    it = iter(arrays)
    return [next(it) if isinstance(d, pa.TensorDesc) else d for d in w.descs(shape)]


def max_err(a: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(ref, np.float64))))
