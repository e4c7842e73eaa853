"""The plan of an ``asc-tile`` kernel: which axes are tiled, the mode, the tile size.

The coalesced iteration space (``iteration_space``) is split into *outer* axes, which are
tiled, and at most two *inner* axes ``[M, L]`` held whole in the Unified Buffer (UB); without
reductions the trailing axis may be split into chunks ("chunk mode": one work unit = one chunk
of one row). Every UB tile is stored as ``[rows, M, Ls]`` with ``Ls`` the trailing extent
rounded up to ``LANE_ALIGN`` elements, and holds a multiple of ``COUNT_ALIGN`` elements.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.passes.dynamic_shapes import (
    SPEC_ATTR,
    DynamicShapes,
    analyze_dynamic,
    require_static,
    spec,
)
from pyasc_mlir.passes.ir_builder import IRBuilder
from pyasc_mlir.passes.iteration_space import IterationSpace
from pyasc_mlir.passes.kernel_builder import Layout
from pyasc_mlir.passes.work_split import work_split_fields
from pyasc_mlir.platform import COUNT_ALIGN, LANE_ALIGN, ceil_div, round_up

CHUNK_MIN_L = 2048
"""Without reductions, rows at least this long are split into chunks."""
MAX_DYNAMIC_CHUNK = 16384
"""Largest chunk (elements) of a kernel whose trailing extent is dynamic; the host chooses the
chunk length per call, up to this and the UB capacity."""


@dataclass
class Plan:
    """Static decisions for one kernel."""

    space: IterationSpace
    outer: range
    m_axis: int | None
    l_axis: int
    chunked: bool
    tile: int = 1
    """Rows per tile (rows mode) or elements per chunk (chunk mode)."""
    hoist: bool = True
    nan_guards: bool = True
    """Emit the NaN guards of ``passes/nan_guard.py`` (``False``: bare instructions, for
    measuring their cost)."""
    """Compute loop-invariant values once per kernel (costs UB for their persistent buffers)."""
    passes: int = 0
    """Row passes (``passes/tile_row_passes.py``): chunk loops per row of a row reduced over
    ``L``, one work unit per row; 0: not a row-pass kernel."""
    dyn: DynamicShapes | None = None
    """Dynamic extents (``passes/dynamic_shapes.py``); ``None``: every shape is static."""
    chunk_step: int = COUNT_ALIGN
    """Granularity (elements) of the chunk length in chunk mode: ``COUNT_ALIGN``, or
    ``LANE_ALIGN`` for column chunks of a kernel reduced over ``M`` (each chunk is ``M``
    blocks, so the tile still holds a multiple of ``COUNT_ALIGN`` elements once rounded)."""

    @property
    def L(self) -> int:  # noqa: N802
        return self.space.extents[self.l_axis]

    @property
    def M(self) -> int:  # noqa: N802
        return 1 if self.m_axis is None else self.space.extents[self.m_axis]

    @property
    def rows(self) -> int:
        return math.prod(self.space.extents[a] for a in self.outer)

    @property
    def rows_dynamic(self) -> bool:
        """The number of outer rows is only known at call time."""
        return self.dyn is not None and self.dyn.any_dynamic(self.outer)

    @property
    def l_dynamic(self) -> bool:
        """The trailing extent is only known at call time (chunk mode, elementwise)."""
        return self.dyn is not None and self.dyn.axis_dynamic(self.l_axis)

    def chunking(self, ix: IRBuilder) -> tuple[SSAValue | int, SSAValue | int, SSAValue | int]:
        """``(chunks per row, elements per chunk, L)`` of chunk mode: constants, or tiling
        fields (``chunks``, ``chunk_len``, the L extent) when L is dynamic."""
        if not self.l_dynamic:
            return self.chunks, self.tile, self.L
        return (
            ix.add_value(asc.TilingFieldOp("chunks")),
            ix.add_value(asc.TilingFieldOp("chunk_len")),
            self.extent(ix, [self.l_axis]),
        )

    def extent(self, ix: IRBuilder, axes: Any) -> SSAValue | int:
        """Product of the extents of ``axes``: a constant, or a tiling field when one of them
        is dynamic."""
        axes = list(axes)
        if self.dyn is None or not self.dyn.any_dynamic(axes):
            return math.prod(self.space.extents[a] for a in axes)
        return ix.add_value(asc.TilingFieldOp(self.dyn.product_field(axes)))

    @property
    def l_slot(self) -> int:
        """Elements per UB row slot of a value spanning L."""
        return round_up(self.tile if self.chunked else self.L, LANE_ALIGN)

    @property
    def chunks(self) -> int:
        return ceil_div(self.L, self.tile) if self.chunked else 1

    @property
    def units(self) -> int:
        return self.rows if self.passes else self.rows * self.chunks

    def layout(self, v: SSAValue) -> Layout:
        h = self.space.has[v]
        return Layout(bool(h.intersection(self.outer)), self.m_axis in h, self.l_axis in h)

    def tile_rows(self, lay: Layout) -> int:
        return self.tile if (lay.rows and not self.chunked) else 1

    def elems(self, lay: Layout, rows: int | None = None) -> int:
        r = self.tile_rows(lay) if rows is None else rows
        return round_up(
            r * (self.M if lay.m else 1) * (self.l_slot if lay.l else LANE_ALIGN), COUNT_ALIGN
        )


def plan_kernel(fusion: asc.FusionOp, space: IterationSpace, cores: int) -> Plan:
    """The plan of ``fusion``'s kernel over iteration space ``space``: outer (tiled) axes,
    the inner ``[M, L]`` axes and the mode (chunk mode for elementwise rows when there are
    fewer rows than ``cores`` or rows of at least ``CHUNK_MIN_L`` elements).

    Raises:
        PyAscCompileError: a reduction leaves more than one non-reduced dim inside the
            reduced part (located at the reduction).
    """
    n = space.rank
    red = frozenset().union(*space.reduced.values()) if space.reduced else frozenset()
    p = min(red) if red else n - 1
    if n - p > 2:
        op = next(o for o, r in space.reduced.items() if r and min(r) == p)
        raise PyAscCompileError(
            "this reduction leaves more than one non-reduced dimension inside the reduced "
            "part of the tensor; a single kernel cannot tile it",
            loc_of(op),
            "reduce over trailing dimensions (e.g. axis=-1), or over one axis followed only "
            "by the last one",
        )
    plan = Plan(space, range(p), p if n - p == 2 else None, n - 1, False)
    block = fusion.body.block
    term = block.last_op
    assert isinstance(term, asc.YieldOp)
    outs_span_l = all(plan.l_axis in space.has[v] for v in term.values)
    if plan.l_axis not in red and outs_span_l and (plan.rows < cores or plan.L >= CHUNK_MIN_L):
        plan.chunked = True
    return plan


def column_chunkable(fusion: asc.FusionOp, plan: Plan) -> bool:
    """Whether ``plan``, reduced over ``M`` only, may walk narrow column chunks: one work
    unit = ``M`` blocks of ``plan.tile`` columns (a multiple of ``LANE_ALIGN``) of one outer
    row, for a ``[M, L]`` slab (or a ``COUNT_ALIGN``-wide chunk of it) too large for the
    Unified Buffer. Needs a static ``L`` that is not reduced and results that all span ``L``."""
    if plan.chunk_step != COUNT_ALIGN or plan.passes or plan.m_axis is None or plan.l_dynamic:
        return False
    if any(plan.l_axis in axes for axes in plan.space.reduced.values()):
        return False
    term = fusion.body.block.last_op
    assert isinstance(term, asc.YieldOp)
    return all(plan.l_axis in plan.space.has[v] for v in term.values)


def tiling_values(plan: Plan, cores: int) -> dict[str, int]:
    """The tiling struct of a kernel (all int64): work split and tile sizes."""
    return {
        **work_split_fields(plan.units, cores),
        "tile_units": 1 if plan.chunked else plan.tile,
        "rows": plan.rows,
        "m": plan.M,
        "l": plan.L,
        "chunk_len": plan.tile if plan.chunked else plan.L,
    }


def plan_dynamic(fusion: asc.FusionOp, plan: Plan) -> None:
    """Attach the dynamic-extent map the driver asked for (``passes/dynamic_shapes.py``):
    the inner axes must be static; with a dynamic row count, chunk mode is chosen by the row
    length alone."""
    plan.dyn = analyze_dynamic(fusion, plan.space)
    if plan.dyn is None:
        return
    reduced = frozenset().union(*plan.space.reduced.values())
    term = fusion.body.block.last_op
    assert isinstance(term, asc.YieldOp)
    inner: dict[int, str] = {}
    if plan.l_axis in reduced:
        inner[plan.l_axis] = "it is reduced, and reduced rows are held whole in the Unified Buffer"
    elif not all(plan.l_axis in plan.space.has[v] for v in term.values):
        inner[plan.l_axis] = (
            "it is the trailing dimension and a result does not span it, so "
            "its rows are held whole in the Unified Buffer"
        )
    if plan.m_axis is not None:
        inner[plan.m_axis] = (
            "it lies inside the reduced part of the tensor, which is held "
            "whole in the Unified Buffer"
        )
    require_static(fusion, plan.dyn, inner)
    if plan.l_dynamic:
        plan.chunked = True  # elementwise over a dynamic row length: chunks sized at call time
    elif plan.chunked and plan.rows_dynamic and plan.L < CHUNK_MIN_L:
        plan.chunked = False


def dynamic_tiling_fields(
    plan: Plan, fusion: asc.FusionOp, kernel: func.FuncOp, cores: int
) -> dict[str, int]:
    """The extra tiling fields of a kernel with dynamic extents (at their compiled values) and
    its ``asc.dynamic_tiling`` recipe for the host."""
    assert plan.dyn is not None
    kernel.attributes[SPEC_ATTR] = StringAttr(
        json.dumps(
            spec(
                plan.dyn,
                fusion,
                cores=cores,
                chunked=plan.chunked,
                tile=plan.tile,
                chunks=plan.chunks,
                m_axis=plan.m_axis,
                l_axis=plan.l_axis,
                outer=plan.outer,
            ),
            sort_keys=True,
        )
    )
    values = {
        k: math.prod(plan.space.extents[a] for a in axes) for k, axes in plan.dyn.fields.items()
    }
    if plan.l_dynamic:
        values["chunks"] = plan.chunks
    return values
