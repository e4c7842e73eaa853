"""Autotuning of tile size, blockDim and double-buffer depth (``@jit(autotune=True)``,
``pyasc tune``).

Unit of tuning: the operator as a whole. One set of knobs ``{"tile", "block_dim", "buffers"}``
(vector kernels of ``asc-tile``) plus ``{"tile_m", "tile_n"}`` (Cube kernels of
``asc-lower-cube``: matmul + epilogue) is applied to every kernel of the operator (with fusion
on, an operator of elementwise ops, broadcasts and reductions is one kernel); the objective is
the sum of the kernels' MODELED times. The mode and units shown are the first vector kernel's
(``cube`` and the first Cube kernel's units when there is none). A candidate that some kernel
of the operator cannot take (its tile does not fit that kernel's UB) is ranked last with its
error.

Vector search space, built from the automatic kernel (``tiling=None``, ``U`` work units, ``C``
vector cores of the platform):

* ``buffers`` in {2, 1} (double or single buffering of the copy-in/copy-out queues);
* ``block_dim`` in {C, ceil(U / ceil(U / C)), 3C/4, C/2, C/4}, each at most ``U`` — the second
  is the fewest cores with the same largest per-core share as ``C``;
* ``tile``: for each (block_dim, buffers) the automatic tile ``T`` (the largest that fits UB,
  at most one core's share), then the mode's step (1 row, or 128 elements per chunk) times the
  powers of two below ``T``, largest first, ``LADDER`` values at most.

Cube search space (``[B, M, N]`` output of the first Cube kernel, ``C`` cube cores):
``tile_m`` in {16, 32, 64, 128} (at most ``M`` rounded up to 16), ``tile_n`` in {32, 64, 128,
256} (each at most ``N`` rounded up to 16), and for each block the ``block_dim`` ladder above
built from its ``U = B * ceil(M / tile_m) * ceil(N / tile_n)`` units and ``C``; ``buffers`` in
{2, 1}. The cost model charges every block its A panel and B panel (no reuse across blocks),
so small blocks pay re-reads and Iterate overheads, large ones leave cores idle.

An operator with both kinds of kernel shares ``block_dim`` (pinned for both passes, at most
the cube cores; 0 = each pass's automatic cores, also searched) and ``buffers``. Both knob
sets are tuned: the vector grid (cube blocks automatic) and the Cube grid (vector tile
automatic) are searched separately, then for each (block_dim, buffers) the best vector tile
and the best Cube block are lowered together; the kernels are lowered independently, so the
combination's time is the sum of the two parts.

Every ranked candidate is lowered with its knobs pinned, so pinning the winner reproduces its
kernel exactly. Candidates are lowered and costed (``pyasc_mlir.cost_model``) in a process pool
(fork; ``workers`` defaults to ``min(os.cpu_count(), MAX_WORKERS)``) with a progress bar
(``tqdm``) on searches of at least ``PROGRESS_MIN`` candidates when stderr is a terminal.

Ranking is by modeled NPU time (ties: more buffers, more cores, larger tile). ``measure=K``
builds the best ``K`` on the CPU and times them (median of ``REPEATS`` runs on random inputs);
their outputs must match the automatic kernel's, and one that does not is flagged and never
wins. The CPU-build time is shown for information only: the CPU build does not model the NPU's
pipes, so the winner stays the modeled minimum.

The winner is cached per signature in ``<PYASC_CACHE_DIR>/tune/<key>.json`` (key built like
the compile cache's: compiler sources, operator source, argument descriptions, platform), so a
second call, in this process or another, runs no search. ``PYASC_CACHE_DISABLE=1`` searches
every time.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pyasc_mlir.cache import atomic_write, cache_dir, cache_enabled, cache_key
from pyasc_mlir.cost_model import estimate
from pyasc_mlir.driver import compile
from pyasc_mlir.emitter import kernels, tiling_fields
from pyasc_mlir.errors import PyAscError, PyAscUsageError, caller_loc
from pyasc_mlir.pipeline import lower
from pyasc_mlir.platform import (
    COUNT_ALIGN,
    CUBE_FRACTAL,
    DEFAULT_PLATFORM,
    ceil_div,
    get_platform,
    round_up,
)
from pyasc_mlir.types import TensorDesc

LADDER = 5
"""Tile values per (block_dim, buffers): the automatic tile and its halvings."""
MAX_WORKERS = 8
PROGRESS_MIN = 16
"""Searches with at least this many candidates show a progress bar (on a terminal)."""
REPEATS = 5
"""Timed CPU-build runs per measured candidate (after one warm-up); the median is reported."""
SEARCH_VERSION = 2
"""Part of the winner's cache key: bump when the search space or ranking changes."""
_MEMORY: dict[str, TuneResult] = {}


@dataclass(frozen=True)
class Knobs:
    """One point of the search space. ``tile``: rows per tile, or elements per chunk in chunk
    mode (vector kernels; 0 = automatic); ``block_dim``: cores (0 = automatic); ``buffers``: 1
    or 2; ``tile_m``/``tile_n``: output-block rows/columns of Cube kernels (multiples of 16;
    0 = automatic)."""

    tile: int
    block_dim: int
    buffers: int
    tile_m: int = 0
    tile_n: int = 0

    @property
    def pin(self) -> dict[str, int]:
        """The ``tiling=`` dict of ``pyasc_mlir.compile`` / ``@jit`` for these knobs (block_dim
        and buffers always; the tile sizes where set)."""
        return {k: v for k, v in asdict(self).items() if v or k in ("block_dim", "buffers")}

    def text(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.pin.items())


@dataclass
class Candidate:
    """A lowered and costed candidate (times MODELED unless named ``measured``).

    Attributes:
        knobs: the pinned knobs it was lowered with (pinning them reproduces the kernel).
        modeled_us: sum over kernels of the cost model's time, µs (MODELED).
        vector_us, cube_us: the vector kernels' and the Cube kernels' parts of it.
        bound: bound pipe of the slowest kernel (MTE2, V, MTE3, S, M).
        mode: "rows" or "chunk" (what ``tile`` counts) of the first vector kernel, "+cube"
            appended when there are Cube kernels; "cube" when there is no vector kernel.
        units: work units of the first vector kernel (else of the first Cube kernel).
        cube_shape: ``[B, M, N]`` output of the first Cube kernel (empty if none).
        measured_us: median CPU-build time, µs (only for measured candidates).
        error: why the candidate could not be built, or why its output was wrong.
    """

    knobs: Knobs
    modeled_us: float = math.inf
    bound: str = ""
    mode: str = ""
    units: int = 0
    measured_us: float | None = None
    error: str | None = None
    vector_us: float = 0.0
    cube_us: float = 0.0
    cube_shape: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    def sort_key(self) -> tuple[float, int, int, int, int, int]:
        k = self.knobs
        return (self.modeled_us, -k.buffers, -k.block_dim, -k.tile, -k.tile_m, -k.tile_n)


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


# -- candidate evaluation (runs in the worker processes) ---------------------------------------
_JOB: tuple[Callable[..., Any], list[object], str, str] | None = None
"""(fn, inputs, name, platform) of the running search; fork-inherited by the workers, so the
operator need not be picklable (closures, @jit-wrapped and CLI-loaded functions work)."""


def _evaluate(knobs: Knobs) -> Candidate:
    """``_cost``, with a compile error recorded on the candidate instead of raised."""
    try:
        return _cost(knobs)
    except PyAscError as exc:
        return Candidate(knobs, error=exc.message)


def _cost(knobs: Knobs) -> Candidate:
    """Lower the job's operator with ``knobs`` pinned and cost it (MODELED)."""
    assert _JOB is not None
    fn, inputs, name, platform = _JOB
    stages, _, _ = lower(
        fn,
        inputs,
        name,
        platform,
        knobs.buffers == 2,
        tile=knobs.tile,
        block_dim=knobs.block_dim,
        tile_m=knobs.tile_m,
        tile_n=knobs.tile_n,
    )
    module = stages["ascendc"]
    ests = estimate(module, platform)
    fields = [tiling_fields(k) for k in kernels(module)]
    vector = [
        (f, e)
        for f, e in zip(fields, ests, strict=True)
        if {"tile_units", "chunk_len", "l"} <= f.keys()
    ]  # asc-tile's kernels
    cube = [
        (f, e) for f, e in zip(fields, ests, strict=True) if {"tile_m", "tile_n"} <= f.keys()
    ]  # asc-lower-cube's kernels
    if not vector and not cube:
        raise PyAscUsageError(
            f"autotune: {name} has neither a vector kernel nor a Cube kernel (nothing to tune)"
        )
    slowest = max(ests, key=lambda e: e.time_us)
    tile, mode, units = 0, "cube", 0
    if vector:
        first = vector[0][0]
        chunk = first["tile_units"] == 1 and first["chunk_len"] < first["l"]
        tile = first["chunk_len"] if chunk else first["tile_units"]
        mode, units = ("chunk" if chunk else "rows") + ("+cube" if cube else ""), first["units"]
    eff = knobs
    if (vector and not knobs.tile) or (cube and not (knobs.tile_m and knobs.tile_n)):
        # automatic somewhere: record the values the passes chose, so the pin reproduces them
        only = vector or cube
        bd = knobs.block_dim if vector and cube else only[0][0]["block_dim"]
        tm, tn = (cube[0][0]["tile_m"], cube[0][0]["tile_n"]) if cube else (0, 0)
        if tm % CUBE_FRACTAL or tn % CUBE_FRACTAL:  # automatic halving can leave 24 or 12 rows: not
            tm, tn, bd = knobs.tile_m, knobs.tile_n, knobs.block_dim  # pinnable, keep 0
        eff = Knobs(tile, bd, max(e.buffers for e in ests), tm, tn)
    shape = [cube[0][0]["batch"], cube[0][0]["m"], cube[0][0]["n"]] if cube else []
    return Candidate(
        eff,
        modeled_us=sum(e.time_us for e in ests),
        bound=slowest.bound,
        mode=mode,
        units=units or (cube[0][0]["units"] if cube else 0),
        vector_us=sum(e.time_us for _, e in vector),
        cube_us=sum(e.time_us for _, e in cube),
        cube_shape=shape,
    )


def _build(knobs: Knobs | None) -> str | None:
    """Compile (CPU build included) into the disk cache; the error text if it fails."""
    assert _JOB is not None
    fn, inputs, name, platform = _JOB
    try:
        compile(
            fn, inputs, platform=platform, name=name, tiling=None if knobs is None else knobs.pin
        )
    except PyAscError as exc:
        return exc.message
    return None


# -- the search ----------------------------------------------------------------------------------
def _block_dims(units: int, cores: int) -> list[int]:
    """Candidate core counts (see module doc), largest first."""
    top = min(cores, units)
    balanced = ceil_div(units, ceil_div(units, top))
    vals = {top, balanced, cores * 3 // 4, cores // 2, cores // 4}
    return sorted((v for v in vals if 1 <= v <= top), reverse=True)


def _ladder(auto: Candidate) -> list[int]:
    """The automatic tile, then the mode's step times the powers of two below it, largest
    first (``LADDER`` values at most)."""
    step = COUNT_ALIGN if auto.mode.startswith("chunk") else 1
    top = auto.knobs.tile
    out = [top]
    p = 1 << max(0, (top // step).bit_length() - 1)
    while p >= 1 and len(out) < LADDER:
        if p * step < top:
            out.append(p * step)
        p //= 2
    return out


class _Pool:
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


def _signature(inputs: Sequence[object]) -> str:
    return ", ".join(
        f"{list(d.shape)} {d.dtype}" if isinstance(d, TensorDesc) else repr(d) for d in inputs
    )


def _cache_path(
    fn: Callable[..., Any], inputs: Sequence[object], name: str, platform: str, measure: int
) -> tuple[str, Path]:
    key = cache_key(
        fn,
        inputs,
        {"platform": platform, "name": name, "measure": measure, "autotune": SEARCH_VERSION},
    )
    return key, cache_dir() / "tune" / f"{key}.json"


def _load(path: Path) -> TuneResult | None:
    try:
        return TuneResult.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or unreadable: search again (and rewrite it)


def _measure(
    fn: Callable[..., Any],
    inputs: list[object],
    name: str,
    platform: str,
    top: list[Candidate],
    pool: _Pool,
) -> None:
    """CPU-build time of ``top`` (median of ``REPEATS``); outputs checked against the automatic
    kernel's. Builds run in the pool (into the disk cache), timing in this process."""
    if cache_enabled():
        pool.map(_build, [None, *(c.knobs for c in top)], "build")
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
            tol = 1e-2 if o.dtype == np.float16 else 1e-5
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


def _cube_grid(shape: Sequence[int], cores: int, mixed: bool) -> list[Knobs]:
    """Cube knobs (see module doc) for a ``[B, M, N]`` output on ``cores`` cube cores;
    ``mixed``: block_dim 0 (each pass automatic) is searched too."""
    batch, rows, cols = shape
    tms = [m for m in (16, 32, 64, 128) if m <= _round16(rows)]
    tns = sorted({min(n, _round16(cols)) for n in (32, 64, 128, 256)})
    grid = []
    for nb in (2, 1):
        for tm in tms:
            for tn in tns:
                units = batch * ceil_div(rows, tm) * ceil_div(cols, tn)
                bds = _block_dims(units, cores)
                grid += [Knobs(0, b, nb, tm, tn) for b in ([0, *bds] if mixed else bds)]
    return grid


def _round16(x: int) -> int:
    return round_up(x, CUBE_FRACTAL)


def _ordered(grid: Iterable[Knobs]) -> list[Knobs]:
    return sorted(
        set(grid), key=lambda k: (-k.buffers, -k.block_dim, -k.tile, -k.tile_m, -k.tile_n)
    )


def _search(default: Candidate, plat: Any, pool: _Pool) -> list[Candidate]:
    """Lower and cost the search space of ``default``'s operator (module doc), ranked."""
    has_vector, has_cube = not default.mode.startswith("cube"), bool(default.cube_shape)
    mixed = has_vector and has_cube
    cands: list[Candidate] = []
    if has_vector:
        bds = _block_dims(default.units, plat.vector_cores)
        if mixed:  # one block_dim for both passes: at most the cube cores, or 0 (automatic)
            bds = [0, *(b for b in bds if b <= plat.cube_cores)]
        autos = pool.map(
            _evaluate, [Knobs(0, b, nb) for nb in (2, 1) for b in bds], "automatic tiles"
        )
        grid = [
            Knobs(t, a.knobs.block_dim, a.knobs.buffers) for a in autos if a.ok for t in _ladder(a)
        ]
        cands += pool.map(_evaluate, _ordered(grid), "candidates")
    if has_cube:
        cands += pool.map(
            _evaluate,
            _ordered(_cube_grid(default.cube_shape, plat.cube_cores, mixed)),
            "cube candidates",
        )
    if mixed:
        combos = []
        for nb, bd in {(c.knobs.buffers, c.knobs.block_dim) for c in cands if c.ok}:
            same = [c for c in cands if c.ok and (c.knobs.buffers, c.knobs.block_dim) == (nb, bd)]
            vec = min((c for c in same if c.knobs.tile), key=lambda c: c.vector_us, default=None)
            cub = min((c for c in same if c.knobs.tile_m), key=lambda c: c.cube_us, default=None)
            if vec is not None and cub is not None:
                combos.append(Knobs(vec.knobs.tile, bd, nb, cub.knobs.tile_m, cub.knobs.tile_n))
        cands += pool.map(_evaluate, _ordered(combos), "combined candidates")
    return _rank(cands)


def _rank(cands: list[Candidate]) -> list[Candidate]:
    uniq: dict[Knobs, Candidate] = {}
    for c in cands:
        uniq.setdefault(c.knobs, c)
    return sorted(uniq.values(), key=lambda c: (not c.ok, c.sort_key()))


def tune(
    fn: Callable[..., Any],
    inputs: Sequence[object],
    platform: str = DEFAULT_PLATFORM,
    name: str | None = None,
    measure: int = 0,
    workers: int | None = None,
    progress: bool | None = None,
    cache: bool = True,
    verbose: bool = False,
) -> TuneResult:
    """Search tile, blockDim and buffers for ``fn`` at ``inputs`` (see the module doc).

    Args:
        fn, inputs: as for ``pyasc_mlir.compile`` (``TensorDesc`` per tensor parameter, then
            compile-time constants); static shapes only.
        platform: SoC from ``pyasc_mlir.platform.PLATFORMS``.
        measure: time the best ``measure`` candidates on the CPU build (0 = model only).
        workers: processes lowering candidates (default ``min(os.cpu_count(), 8)``).
        progress: progress bar on long searches (default: when stderr is a terminal).
        cache: read a cached winner (``False`` searches again; the result is still written).
        verbose: print the summary and pin hint to stderr after a search.

    Returns:
        A ``TuneResult``; ``.winner.knobs.pin`` is the ``tiling=`` dict of the winner.

    Raises:
        PyAscUsageError: unknown platform, bad ``measure``/``workers``, or no candidate builds.
        PyAscCompileError: the operator does not compile even with the automatic knobs.
    """
    global _JOB
    name = name or fn.__name__
    try:
        plat = get_platform(platform)
    except ValueError as exc:
        raise PyAscUsageError(str(exc), caller_loc()) from None
    if measure < 0 or (workers is not None and workers < 1):
        raise PyAscUsageError(
            f"measure={measure} and workers={workers} must be >= 0 and >= 1",
            caller_loc(),
            "measure=0 ranks by the cost model only",
        )
    inputs = list(inputs)
    key, path = _cache_path(fn, inputs, name, platform, measure)
    if cache and cache_enabled():
        hit = _MEMORY.get(key) or _load(path)
        if hit is not None:
            _MEMORY[key] = hit
            return hit
    t0 = time.perf_counter()
    _JOB = (fn, inputs, name, platform)
    try:
        default = _cost(Knobs(0, 0, 2))  # a located PyAscCompileError if nothing compiles
        n = workers or min(os.cpu_count() or 1, MAX_WORKERS)
        pool = _Pool(n, sys.stderr.isatty() if progress is None else progress)
        try:
            cands = _search(default, plat, pool)
            if measure:
                _measure(fn, inputs, name, platform, [c for c in cands if c.ok][:measure], pool)
                cands = _rank(cands)
        finally:
            pool.close()
    finally:
        _JOB = None
    res = TuneResult(
        name,
        _signature(inputs),
        plat.name,
        cands,
        default,
        search_s=time.perf_counter() - t0,
        workers=pool.workers,
    )
    res.winner  # noqa: B018 - raises when nothing could be built
    if cache_enabled():
        atomic_write(path, json.dumps(res.to_json(), indent=1))
        _MEMORY[key] = res
    if verbose:
        print(res.summary(), file=sys.stderr)
    return res
