"""The search space of :mod:`pyasc_mlir.autotune` (its module doc describes it): the knobs of
one candidate, a costed candidate, the ``block_dim`` and tile ladders, the Cube grid and the
ranking."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

from pyasc_mlir.platform import COUNT_ALIGN, CUBE_FRACTAL, ceil_div, round_up

LADDER = 5
"""Tile values per (block_dim, buffers): the automatic tile and its halvings."""


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
        work_us: the same without each kernel's floor (``KernelEstimate.work_us``): the tie
            break between candidates whose kernels all sit at the least kernel time.
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
    work_us: float = math.inf
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

    def sort_key(self) -> tuple[float, float, int, int, int, int, int]:
        k = self.knobs
        work = (self.modeled_us, self.work_us)
        return (*work, -k.buffers, -k.block_dim, -k.tile, -k.tile_m, -k.tile_n)


def block_dims(units: int, cores: int) -> list[int]:
    """Candidate core counts (see :mod:`pyasc_mlir.autotune`), largest first."""
    top = min(cores, units)
    balanced = ceil_div(units, ceil_div(units, top))
    vals = {top, balanced, cores * 3 // 4, cores // 2, cores // 4}
    return sorted((v for v in vals if 1 <= v <= top), reverse=True)


def ladder(auto: Candidate) -> list[int]:
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


def cube_grid(shape: Sequence[int], cores: int, mixed: bool) -> list[Knobs]:
    """Cube knobs (see :mod:`pyasc_mlir.autotune`) for a ``[B, M, N]`` output on ``cores``
    cube cores; ``mixed``: block_dim 0 (each pass automatic) is searched too."""
    batch, rows, cols = shape
    tms = [m for m in (16, 32, 64, 128) if m <= round16(rows)]
    tns = sorted({min(n, round16(cols)) for n in (32, 64, 128, 256)})
    grid = []
    for nb in (2, 1):
        for tm in tms:
            for tn in tns:
                units = batch * ceil_div(rows, tm) * ceil_div(cols, tn)
                bds = block_dims(units, cores)
                grid += [Knobs(0, b, nb, tm, tn) for b in ([0, *bds] if mixed else bds)]
    return grid


def round16(x: int) -> int:
    return round_up(x, CUBE_FRACTAL)


def ordered(grid: Iterable[Knobs]) -> list[Knobs]:
    return sorted(
        set(grid), key=lambda k: (-k.buffers, -k.block_dim, -k.tile, -k.tile_m, -k.tile_n)
    )


def rank(cands: list[Candidate]) -> list[Candidate]:
    uniq: dict[Knobs, Candidate] = {}
    for c in cands:
        uniq.setdefault(c.knobs, c)
    return sorted(uniq.values(), key=lambda c: (not c.ok, c.sort_key()))
