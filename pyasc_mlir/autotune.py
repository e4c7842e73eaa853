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

This module runs the search (:func:`tune`, the worker functions); the search space and the
ranking are :mod:`pyasc_mlir.autotune_space`, the pool and the CPU-build timing
:mod:`pyasc_mlir.autotune_measure`, the result and its cache entry
:mod:`pyasc_mlir.autotune_result`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from pyasc_mlir.autotune_measure import (
    MAX_WORKERS,
    PROGRESS_MIN,
    REPEATS,
    Pool,
    measure_candidates,
)
from pyasc_mlir.autotune_result import (
    SEARCH_VERSION,
    TuneResult,
    cache_path,
    load_result,
    signature,
)
from pyasc_mlir.autotune_space import (
    LADDER,
    Candidate,
    Knobs,
    block_dims,
    cube_grid,
    ladder,
    ordered,
    rank,
)
from pyasc_mlir.cache import atomic_write, cache_enabled
from pyasc_mlir.cost_model import estimate
from pyasc_mlir.driver import compile
from pyasc_mlir.emitter import kernels, tiling_fields
from pyasc_mlir.errors import PyAscError, PyAscUsageError, caller_loc
from pyasc_mlir.pipeline import lower
from pyasc_mlir.platform import CUBE_FRACTAL, DEFAULT_PLATFORM, get_platform

__all__ = [
    "LADDER",
    "MAX_WORKERS",
    "PROGRESS_MIN",
    "REPEATS",
    "SEARCH_VERSION",
    "Candidate",
    "Knobs",
    "TuneResult",
    "tune",
]

_MEMORY: dict[str, TuneResult] = {}


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
        work_us=sum(e.work_us for e in ests),
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
def _search(default: Candidate, plat: Any, pool: Pool) -> list[Candidate]:
    """Lower and cost the search space of ``default``'s operator (module doc), ranked."""
    has_vector, has_cube = not default.mode.startswith("cube"), bool(default.cube_shape)
    mixed = has_vector and has_cube
    cands: list[Candidate] = []
    if has_vector:
        bds = block_dims(default.units, plat.vector_cores)
        if mixed:  # one block_dim for both passes: at most the cube cores, or 0 (automatic)
            bds = [0, *(b for b in bds if b <= plat.cube_cores)]
        autos = pool.map(
            _evaluate, [Knobs(0, b, nb) for nb in (2, 1) for b in bds], "automatic tiles"
        )
        grid = [
            Knobs(t, a.knobs.block_dim, a.knobs.buffers) for a in autos if a.ok for t in ladder(a)
        ]
        cands += pool.map(_evaluate, ordered(grid), "candidates")
    if has_cube:
        cands += pool.map(
            _evaluate,
            ordered(cube_grid(default.cube_shape, plat.cube_cores, mixed)),
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
        cands += pool.map(_evaluate, ordered(combos), "combined candidates")
    return rank(cands)


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
    key, path = cache_path(fn, inputs, name, platform, measure)
    if cache and cache_enabled():
        hit = _MEMORY.get(key) or load_result(path)
        if hit is not None:
            _MEMORY[key] = hit
            return hit
    t0 = time.perf_counter()
    _JOB = (fn, inputs, name, platform)
    try:
        default = _cost(Knobs(0, 0, 2))  # a located PyAscCompileError if nothing compiles
        n = workers or min(os.cpu_count() or 1, MAX_WORKERS)
        pool = Pool(n, sys.stderr.isatty() if progress is None else progress)
        try:
            cands = _search(default, plat, pool)
            if measure:
                measure_candidates(
                    fn, inputs, name, platform, [c for c in cands if c.ok][:measure], pool, _build
                )
                cands = rank(cands)
        finally:
            pool.close()
    finally:
        _JOB = None
    res = TuneResult(
        name,
        signature(inputs),
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
