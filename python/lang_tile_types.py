"""Values of the kernel language's explicit tiles and slices (``python/lang_tiles.py``,
``python/lang_slices.py``): blocked loop variables, slices, local buffers, and the AST
scans that find a blocked nest's copies."""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any

from pyasc_mlir.frontend.lang_exprs import Arr

__all__ = [
    "CUBE_SCOPES",
    "ITEM_BYTES",
    "TARGET_ATTR",
    "Axis",
    "Blk",
    "Nest",
    "SliceRef",
    "Tile",
    "blocked_names",
    "capacity_hint",
    "copies",
    "has_slice",
    "is_copy",
    "slice_items",
]

TARGET_ATTR = "__pyasc_lang_target__"
"""Set on a kernel's function by ``@lang.kernel``: ``(platform, double_buffer)``."""
ITEM_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4}
CUBE_SCOPES = ("L1", "L0A", "L0B", "L0C")


@dataclass(eq=False)
class Blk:
    """A blocked loop variable ``for name in lang.range(0, hi, step)``."""

    name: str
    hi: int
    step: int
    node: ast.AST

    def describe(self) -> str:
        n = self.name
        return f"the blocked loop variable {n!r} (it only starts slices: {n}:{n}+B)"


@dataclass(frozen=True)
class Axis:
    """One axis of a slice: ``blk`` (starts at a blocked variable; ``start`` the Blk),
    ``range`` (``start`` an int), ``point`` (``start`` an index SSA value, size 1)."""

    kind: str
    start: Any
    size: int


@dataclass(eq=False)
class Tile:
    """A local buffer. ``bind``: per axis the blocked variable it is bound to (by the copies)
    or ``None``; contents: ``view`` (a slice of a read-only argument, after ``load_2d``) or
    ``mem`` (its own local array over the blocked extents)."""

    shape: tuple[int, ...]
    dtype: str
    scope: str
    node: ast.AST
    name: str | None = None
    bind: tuple[str | None, ...] = ()
    view: SliceRef | None = None
    mem: Arr | None = None
    state: str | None = None

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * ITEM_BYTES[self.dtype]

    def describe(self) -> str:
        return f"the local buffer {self.name or ''} {list(self.shape)}".replace("  ", " ")


@dataclass(frozen=True)
class SliceRef:
    """``base[axes]``: a slice of an array or a buffer."""

    base: Arr | Tile
    axes: tuple[Axis, ...]
    node: ast.AST

    def describe(self) -> str:
        sizes = [a.size for a in self.ranges]
        return (
            f"a slice {sizes} (slices are read inside a whole-slice statement, "
            "y[a:b] = x[c:d] + ..., or copied with lang.load_2d/store_2d)"
        )

    @property
    def ranges(self) -> list[Axis]:
        return [a for a in self.axes if a.kind != "point"]


@dataclass
class Nest:
    """The outermost blocked loop being generated."""

    tile_axes: dict[str, tuple[str | None, ...]]
    node: ast.AST
    active: list[Blk] = field(default_factory=list)
    merged: list[Blk] = field(default_factory=list)
    seen: list[Blk] = field(default_factory=list)


def is_copy(call: ast.AST) -> str | None:
    if isinstance(call, ast.Call):
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name in ("load_2d", "store_2d"):
            return name
    return None


def copies(body: list[ast.stmt]) -> list[tuple[ast.Call, ast.expr, ast.expr]]:
    """``(call, slice expr, buffer expr)`` of every load_2d/store_2d in ``body``."""
    out = []
    for n in ast.walk(ast.Module(body=body, type_ignores=[])):
        kind = is_copy(n)
        if kind and isinstance(n, ast.Call) and len(n.args) == 2:
            sl, buf = (n.args[0], n.args[1]) if kind == "load_2d" else (n.args[1], n.args[0])
            out.append((n, sl, buf))
    return out


def slice_items(sub: ast.Subscript) -> list[ast.expr]:
    return list(sub.slice.elts) if isinstance(sub.slice, ast.Tuple) else [sub.slice]


def blocked_names(body: list[ast.stmt], target: str | None = None) -> set[str]:
    """Names that start a slice in a copy of ``body``."""
    names = set()
    for _, sl, _ in copies(body):
        if isinstance(sl, ast.Subscript):
            for it in slice_items(sl):
                if isinstance(it, ast.Slice) and isinstance(it.lower, ast.Name):
                    names.add(it.lower.id)
    return names if target is None else names & {target}


def has_slice(node: ast.Subscript) -> bool:
    return any(isinstance(e, ast.Slice) for e in slice_items(node))


def _row_bytes(t: Tile) -> int:
    """``t``'s bytes with each blocked axis (bound to a blocked loop variable) at 1."""
    bind = t.bind or (None,) * len(t.shape)
    return (
        math.prod(1 if b else d for d, b in zip(t.shape, bind, strict=True)) * ITEM_BYTES[t.dtype]
    )


def capacity_hint(mine: list[Tile], cap: int, double_buffer: bool) -> str:
    """The hint for buffers ``mine`` of one scope that exceed its ``cap`` bytes: a smaller
    block when one along the blocked axes fits, else the dims that are not blocked (and must
    shrink: one row of the buffers alone is too big), and the double buffering."""
    factor = 2 if double_buffer else 1
    db = ", or @lang.kernel(double_buffer=False)" if double_buffer else ""
    least = sum(_row_bytes(t) for t in mine)
    if least * factor <= cap:
        return "use a smaller block (e.g. half of it)" + db
    dims = []
    for t in mine:
        bind = t.bind or (None,) * len(t.shape)
        free = [
            f"axis {a} ({d} elements)"
            for a, (d, b) in enumerate(zip(t.shape, bind, strict=True))
            if not b
        ]
        if free:
            dims.append(f"{t.name or '?'} {list(t.shape)}: {', '.join(free)}")
    if least <= cap:  # fits single-buffered: one block row each
        return (
            f"even a block of 1 along the blocked axes needs {least * factor} bytes double-"
            f"buffered: use @lang.kernel(double_buffer=False), or shrink the dims that are not "
            f"blocked ({'; '.join(dims)})"
        )
    return (
        f"no smaller block fits: with 1 element along the blocked axes the buffers still need "
        f"{least * factor} bytes{' (x2: double-buffered)' if double_buffer else ''}, so the "
        f"dims that are not blocked must shrink: {'; '.join(dims) or 'every axis'}; block them "
        "too (a lang.range(0, N, BN) loop over that axis, buffers of BN elements there)"
    )
