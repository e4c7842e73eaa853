"""The person's block sizes (kernel language, ``python/lang_tiles.py``) as tiling constraints.

The kernel-language frontend puts ``asc.lang_blocks`` on the function it builds (JSON):
``{"vector": {"elems": E, "loc": "file:line:col"}}`` (a blocked vector nest whose stored
buffer holds ``E`` elements) or ``{"cube": {"m": BM, "n": BN, "k": BK, "loc": ...}}`` (a
blocked matmul; ``k`` 0 when K is not blocked). ``asc-tile`` makes every vector tile of the
function hold ``E`` elements (:func:`vector_tile`); ``asc-lower-cube`` pins ``tile_m x tile_n``
= ``BM x BN`` and puts ``base_k`` = ``BK`` on the ``asc.mmad`` (:func:`cube_blocks`), so the
Cube's ``baseM/baseN/baseK`` are the person's blocks.
"""

from __future__ import annotations

import json
import math
from typing import Any

from xdsl.dialects import func
from xdsl.ir import Operation

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError, SourceLoc
from pyasc_mlir.passes.tile_plan import Plan
from pyasc_mlir.platform import CUBE_FRACTAL, MAX_BLOCK_COUNT, round_up

__all__ = ["BLOCKS_ATTR", "cube_blocks", "user_blocks", "vector_tile"]

BLOCKS_ATTR = "asc.lang_blocks"
"""Function attribute holding the person's blocks (JSON, see the module docstring)."""


def user_blocks(op: Operation) -> dict[str, Any]:
    """The blocks on the function enclosing ``op`` (``{}``: none)."""
    cur: Operation | None = op
    while cur is not None:
        if isinstance(cur, func.FuncOp) and BLOCKS_ATTR in cur.attributes:
            return json.loads(cur.attributes[BLOCKS_ATTR].data)  # type: ignore[attr-defined]
        cur = cur.parent_op()
    return {}


def _loc(text: str) -> SourceLoc | None:
    return SourceLoc.parse(text)


def vector_tile(fusion: asc.FusionOp, plan: Plan) -> int:
    """The tile of ``plan`` (elements per chunk in chunk mode, else rows) for the person's
    vector block of the function of ``fusion``: the stored buffer's elements, counted in the
    kernel's first result (a block larger than the data: all of it); 0: no block.

    Raises:
        PyAscCompileError: the block is not a multiple of the chunk step (chunk mode), or not
            whole rows of the result (located at the blocked loop)."""
    vec = user_blocks(fusion).get("vector")
    if not vec:
        return 0
    elems = int(vec["elems"])
    if plan.chunked:
        step = plan.chunk_step
        tile = min(elems, round_up(plan.L, step))
        if tile % step:
            raise PyAscCompileError(
                f"a vector block of {elems} elements: this kernel's tiles hold a multiple of "
                f"{step} elements",
                _loc(vec["loc"]),
                f"pick a block of a multiple of {step} elements (e.g. {round_up(elems, step)})",
            )
        return tile
    term = fusion.body.block.last_op
    assert isinstance(term, asc.YieldOp)
    spans = plan.space.has[term.values[0]]
    inner = [a for a in (plan.m_axis, plan.l_axis) if a is not None and a in spans]
    per_row = math.prod(plan.space.extents[a] for a in inner)
    if elems % per_row and elems < per_row * plan.rows:
        raise PyAscCompileError(
            f"a vector block of {elems} elements is not whole rows of {per_row} elements, "
            "the unit this kernel tiles",
            _loc(vec["loc"]),
            f"block whole rows: a multiple of {per_row} elements",
        )
    hi = max(1, min(plan.rows, MAX_BLOCK_COUNT // plan.M))
    return max(1, min(elems // per_row, hi))


def cube_blocks(op: Operation) -> tuple[int, int, int]:
    """``(BM, BN, BK)`` of the person's blocked matmul (0s: none).

    Raises:
        PyAscCompileError: a block that is not a multiple of the Cube fractal (16)."""
    cube = user_blocks(op).get("cube")
    if not cube:
        return 0, 0, 0
    m, n, k = int(cube["m"]), int(cube["n"]), int(cube["k"])
    for name, v in (("BM", m), ("BN", n), ("BK", k)):
        if v % CUBE_FRACTAL:
            raise PyAscCompileError(
                f"the Cube block {name} = {v} is not a multiple of {CUBE_FRACTAL}",
                _loc(cube["loc"]),
                f"Cube blocks (baseM/baseN/baseK) are multiples of {CUBE_FRACTAL}: use "
                f"{round_up(v, CUBE_FRACTAL)}",
            )
    return m, n, k
