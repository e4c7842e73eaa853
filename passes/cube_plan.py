"""The plan of an ``asc-lower-cube`` kernel: output blocks and the work split.

The fusion's output space is ``[*batch, M, N]``, cut into output blocks of ``tile_m x
tile_n``; one work unit is one block of one batch entry. UB tiles are ``[tile_m, Ls]`` with
``Ls = round_up(tile_n, LANE_ALIGN)`` (the ``asc-tile`` conventions, no middle axis).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.ir import SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.passes.iteration_space import shape_of
from pyasc_mlir.passes.kernel_builder import Layout
from pyasc_mlir.passes.work_split import work_split_fields
from pyasc_mlir.platform import COUNT_ALIGN, CUBE_FRACTAL, LANE_ALIGN, ceil_div, round_up

TILE_M_MAX = 256
"""Largest output-block height (rows); a multiple of 16 (the cube's 16x16 fractal). The f32
block must also fit L0C (``tile_m * tile_n * 4 <= l0c_bytes``)."""
TILE_N_MAX = 256
"""Largest output-block width (columns); a multiple of 16."""
TILE_N_MIN = 32
"""Narrowest block the parallelism heuristic shrinks to."""
TILE_M_MIN = CUBE_FRACTAL
"""Block heights are multiples of 16 (baseM): GetTensorC fills baseM rows of UB."""
ACC_BYTES = 4
"""Bytes per element of an output block in L0C: the Cube accumulates in f32."""


def block_align(key: str) -> int:
    """What pinned ``key`` (``"tile_m"`` or ``"tile_n"``) must be a multiple of: the Cube
    fractal (the Matmul API's baseM) for heights, the UB row slot for widths (both 16)."""
    return CUBE_FRACTAL if key == "tile_m" else LANE_ALIGN


@dataclass
class CubePlan:
    """Static decisions for one Cube kernel (duck-types ``tile.Plan`` for the vector helpers:
    tile layout ``[rows, M=1, Ls]``, rows = block rows)."""

    out_shape: tuple[int, ...]
    tile: int = TILE_M_MAX
    """Rows per block (``tile_m``)."""
    tile_n: int = TILE_N_MAX
    hoist: bool = False
    chunked: bool = False
    M: int = 1  # noqa: N815 - the middle UB axis of asc-tile's layout; none here

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.out_shape[:-2]

    @property
    def batch(self) -> int:
        return math.prod(self.batch_shape)

    @property
    def rows(self) -> int:
        """``M`` of the matmul (rows of the output)."""
        return self.out_shape[-2]

    @property
    def cols(self) -> int:
        """``N`` of the matmul."""
        return self.out_shape[-1]

    @property
    def l_slot(self) -> int:
        return round_up(self.tile_n, LANE_ALIGN)

    @property
    def m_tiles(self) -> int:
        return ceil_div(self.rows, self.tile)

    @property
    def n_tiles(self) -> int:
        return ceil_div(self.cols, self.tile_n)

    @property
    def units(self) -> int:
        return self.batch * self.m_tiles * self.n_tiles

    def spans(self, v: SSAValue) -> tuple[frozenset[int], bool, bool]:
        """Batch axes, ``M`` and ``N`` that ``v`` varies along (right-aligned shapes)."""
        out = self.out_shape
        s = (1,) * (len(out) - len(shape_of(v))) + shape_of(v)
        batch = frozenset(i for i in range(len(out) - 2) if s[i] == out[i] != 1)
        return batch, s[-2] == out[-2] != 1, s[-1] == out[-1] != 1

    def layout(self, v: SSAValue) -> Layout:
        _, m, n = self.spans(v)
        return Layout(m, False, n)

    def tile_rows(self, lay: Layout) -> int:
        return self.tile if lay.rows else 1

    def elems(self, lay: Layout, rows: int | None = None) -> int:
        r = self.tile_rows(lay) if rows is None else rows
        return round_up(r * (self.l_slot if lay.l else LANE_ALIGN), COUNT_ALIGN)


def block_units(plan: CubePlan, m: int, n: int) -> int:
    """Work units of ``m x n`` output blocks over ``plan``'s output."""
    return plan.batch * ceil_div(plan.rows, m) * ceil_div(plan.cols, n)


def stream_elems(plan: CubePlan, m: int, n: int, cores: int) -> int:
    """Rows of A plus columns of B (each spanning the whole ``K``) that the busiest of
    ``cores`` Cube cores streams from GM into L1 with ``m x n`` blocks: its
    ``ceil(units / cores)`` blocks, each clipped to the output. The quantity the block choice
    minimises (the A/B traffic of a block is ``(m + n) * K`` elements; one ``Iterate`` per
    block, no L1 reuse across blocks)."""
    per_core = ceil_div(block_units(plan, m, n), max(1, cores))
    return per_core * (min(m, plan.rows) + min(n, plan.cols))


def block_candidates(
    plan: CubePlan, l0c_bytes: int, cores: int, pin_m: int = 0, pin_n: int = 0
) -> list[tuple[int, int]]:
    """``(tile_m, tile_n)`` candidates, best first: multiples of 16 up to
    :data:`TILE_M_MAX` x :data:`TILE_N_MAX` (and the output rounded up to 16) whose f32 block
    fits ``l0c_bytes``; ordered by the least :func:`stream_elems`, then the larger block, then
    the wider one. A pinned size (non-zero) is the only value of its dimension."""
    m_cap = min(TILE_M_MAX, round_up(plan.rows, CUBE_FRACTAL))
    n_cap = min(TILE_N_MAX, round_up(plan.cols, LANE_ALIGN))
    ms = [pin_m] if pin_m else range(CUBE_FRACTAL, m_cap + 1, CUBE_FRACTAL)
    ns = [pin_n] if pin_n else range(LANE_ALIGN, n_cap + 1, LANE_ALIGN)
    pairs = [(m, n) for m in ms for n in ns if pin_m or pin_n or m * n * ACC_BYTES <= l0c_bytes]
    return sorted(pairs, key=lambda p: (stream_elems(plan, p[0], p[1], cores), -p[0] * p[1], -p[1]))


def tiling_values(plan: CubePlan, cores: int, k: int) -> dict[str, int]:
    """The tiling struct of a Cube kernel (all int64): work split and block sizes."""
    return {
        **work_split_fields(plan.units, cores),
        "tile_units": 1,
        "batch": plan.batch,
        "m": plan.rows,
        "n": plan.cols,
        "k": k,
        "tile_m": plan.tile,
        "tile_n": plan.tile_n,
    }


def whole_rows(fusion: asc.FusionOp, plan: CubePlan) -> int:
    """The block width an epilogue's row reduction (over ``N``) needs: ``N`` rounded up to 16
    (one column block); 0 when the epilogue has none. ``asc-fuse`` only admits such
    reductions for ``N <= TILE_N_MAX``."""
    if not any(isinstance(o, asc.ReduceOp) for o in fusion.body.block.ops):
        return 0
    return round_up(plan.cols, LANE_ALIGN)
