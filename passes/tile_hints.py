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
from typing import Any

from xdsl.dialects import func
from xdsl.ir import Operation

from pyasc_mlir.errors import PyAscCompileError, SourceLoc
from pyasc_mlir.platform import CUBE_FRACTAL, round_up

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


def vector_tile(
    op: Operation, chunked: bool, step: int, length: int, per_row: int, rows: int, hi: int
) -> int:
    """The tile (elements per chunk of ``length``-element rows when ``chunked``, else rows
    of ``per_row`` elements out of ``rows``, at most ``hi``) for the person's vector block of
    the function of ``op`` (a block larger than the data: all of it); 0: no block.

    Raises:
        PyAscCompileError: the block is not a multiple of ``step`` elements (chunks), or not
            whole rows (located at the blocked loop)."""
    vec = user_blocks(op).get("vector")
    if not vec:
        return 0
    elems = int(vec["elems"])
    if chunked:
        tile = min(elems, round_up(length, step))
        if tile % step:
            raise PyAscCompileError(
                f"a vector block of {elems} elements: this kernel's tiles hold a multiple of "
                f"{step} elements",
                _loc(vec["loc"]),
                f"pick a block of a multiple of {step} elements (e.g. {round_up(elems, step)})",
            )
        return tile
    if elems % per_row and elems < per_row * rows:
        raise PyAscCompileError(
            f"a vector block of {elems} elements is not whole rows of {per_row} elements, "
            "the unit this kernel tiles",
            _loc(vec["loc"]),
            f"block whole rows: a multiple of {per_row} elements",
        )
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
