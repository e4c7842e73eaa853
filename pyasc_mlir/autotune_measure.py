"""Running the candidates of :mod:`pyasc_mlir.autotune`: the process pool that lowers and costs
them (with its progress bar) and the CPU-build timing of the best ones."""

from __future__ import annotations

import multiprocessing
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from pyasc_mlir.autotune_space import Candidate, Knobs
from pyasc_mlir.cache import cache_enabled
from pyasc_mlir.driver import compile
from pyasc_mlir.errors import PyAscError
from pyasc_mlir.types import TensorDesc

MAX_WORKERS = 8
PROGRESS_MIN = 16
"""Searches with at least this many candidates show a progress bar (on a terminal)."""
REPEATS = 5
"""Timed CPU-build runs per measured candidate (after one warm-up); the median is reported."""


class Pool:
    """A fork process pool (or in-process evaluation for one worker) with a progress bar."""

    def __init__(self, workers: int, progress: bool):
        self.workers = workers
        self.progress = progress
        self.pool: ProcessPoolExecutor | None = None
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            self.pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
        else:
            self.workers = 1

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], what: str) -> list[Any]:
        it: Iterable[Any] = self.pool.map(fn, items) if self.pool is not None else map(fn, items)
        if self.progress and len(items) >= PROGRESS_MIN:
            from tqdm import tqdm

            it = tqdm(it, total=len(items), desc=what, unit="cand", file=sys.stderr, leave=False)
        return list(it)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()


def measure_candidates(
    fn: Callable[..., Any],
    inputs: list[object],
    name: str,
    platform: str,
    top: list[Candidate],
    pool: Pool,
    build: Callable[[Knobs | None], str | None],
) -> None:
    """CPU-build time of ``top`` (median of ``REPEATS``); outputs checked against the automatic
    kernel's. Builds run in the pool (into the disk cache; ``build`` compiles the search's
    operator with the given knobs, ``None`` = automatic), timing in this process."""
    if cache_enabled():
        pool.map(build, [None, *(c.knobs for c in top)], "build")
    rng = np.random.default_rng(0)
    descs = [
        d
        for x in inputs
        for d in (x if isinstance(x, tuple) else (x,))
        if isinstance(d, TensorDesc)
    ]  # variadic tensor tuples flattened
    arrays = [rng.standard_normal(d.static_shape).astype(d.np_dtype) for d in descs]
    ref = compile(fn, inputs, platform=platform, name=name).run_cpu(*arrays)
    for c in top:
        try:
            op = compile(fn, inputs, platform=platform, name=name, tiling=c.knobs.pin)
        except PyAscError as exc:
            c.error = exc.message
            continue
        outs = op.run_cpu(*arrays)
        for o, r in zip(outs, ref, strict=True):
            tol = 1e-2 if o.dtype.itemsize == 2 else 1e-5  # float16, bfloat16
            if not np.allclose(
                o.astype(np.float32), r.astype(np.float32), rtol=tol, atol=tol, equal_nan=True
            ):
                c.error = "CPU-build output differs from the automatic kernel's"
        times = []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            op.run_cpu(*arrays)
            times.append(time.perf_counter() - t0)
        c.measured_us = float(np.median(times)) * 1e6
