"""Explicit tiles and slices in kernel bodies (``lang.local_buffer``, ``lang.load_2d``,
``lang.store_2d``, blocked loops, ``x[a:b]``); a mixin of the kernel-language frontend.

**Blocked nests.** ``for i in lang.range(0, M, BM)`` whose variable starts a slice of a
``load_2d``/``store_2d`` (``a[i:i+BM, k:k+BK]``) is a *blocked loop*: it emits no loop. Its
body is generated once, *de-blocked*: every element loop ``for ii in range(BM)`` that indexes
a buffer axis bound to ``i`` (by the copies) becomes one loop over the whole ``range(0, M)``
(tails included: the last block's slice is shorter, the merged loop simply ends at ``M``), a
buffer loaded from a kernel argument reads the argument at the merged index, a buffer written
in the nest is a local array over the blocked extents, and ``store_2d`` is a copy nest. The
result is an ordinary ``asc_loop`` nest that ``asc-raise-loops`` raises (maps, reductions,
the Cube contraction). The person's blocks go on the function as ``asc.lang_blocks`` (JSON:
``{"vector": {"elems", "loc"}}`` or ``{"cube": {"m", "n", "k", "loc"}}``), which ``asc-tile``
(the vector tile holds ``elems`` elements) and ``asc-lower-cube`` (``baseM x baseN`` output
blocks, ``baseK``) honour.

De-blocking is exact because every write inside blocked loops must run inside a merged loop
of each enclosing blocked loop (checked; else a located error): a write that runs once per
block without using the block (``s[0] += 1`` in the loop) has no de-blocked form.

**Capacity.** The buffers of each scope (``UB``, ``L1``, ``L0A``, ``L0B``, ``L0C``; times 2
when double-buffered) are summed against the platform's capacity when the kernel is built;
an overflow is a located error at the buffer that crosses it, naming every buffer and its
bytes, the total and the capacity.

**Slices.** ``x[0:2]``, ``x[a:b, :]``, ``x[r, :]`` (steps of 1, compile-time bounds) are
arguments of the copies, and whole-slice statements ``c[a:b] = f(x[c:d], ...)`` (NumPy
broadcasting of size-1 axes) become element loops over the target's slice.

Errors (located :class:`PyAscCompileError`): see the messages below.
"""

from __future__ import annotations

import ast
import json
import math
from typing import Any

from xdsl.dialects.builtin import MemRefType, StringAttr
from xdsl.ir import Attribute, Block, SSAValue

from pyasc_mlir.dialects import asc_loop
from pyasc_mlir.frontend.lang_exprs import Arr, Idx, Scal
from pyasc_mlir.frontend.lang_slices import SliceGen
from pyasc_mlir.frontend.lang_tile_types import (
    CUBE_SCOPES,
    ITEM_BYTES,
    TARGET_ATTR,
    Axis,
    Blk,
    Nest,
    SliceRef,
    Tile,
    blocked_names,
    capacity_hint,
    copies,
    slice_items,
)
from pyasc_mlir.language import tiles as lt
from pyasc_mlir.language.types import DType
from pyasc_mlir.passes.tile_hints import BLOCKS_ATTR
from pyasc_mlir.platform import DEFAULT_PLATFORM, get_platform


class TileGen(SliceGen):
    """The tile and slice part of ``LangGen`` (mixed in; uses its ``expr``/``add``/...)."""

    nest: Nest | None = None
    slice_ctx: list[Idx] | None = None

    def tiles_init(self, top: Block) -> None:
        self.top_block = top
        self.tiles: list[Tile] = []
        self.merged_of: dict[SSAValue, Blk] = {}
        self.blocks: dict[str, Any] = {}
        self.nest = None
        self.slice_ctx = None

    # -- calls --------------------------------------------------------------------------
    def tile_call(self, kind: str, args: list[Any], kw: dict[str, Any], node: ast.Call) -> Any:
        g: Any = self
        if kind in ("local_buffer", "global_buffer"):
            names = ["shape", "dtype", "scope"]
            got = dict(zip(names, args, strict=False)) | kw
            shape = got.get("shape")
            shape = (shape,) if isinstance(shape, int) else shape
            dt = got.get("dtype", lt.float32)
            if not isinstance(dt, DType) or dt.name not in ITEM_BYTES:
                raise g.error(node, f"{dt!r} is not a buffer dtype", "use lang.float16/float32")
            if kind == "global_buffer":
                return g.alloc("empty", [shape, dt], {}, node)
            scope = got.get("scope", "UB")
            if scope not in lt.SCOPES:
                raise g.error(node, f"scope {scope!r} is not a buffer scope", f"one of {lt.SCOPES}")
            if not isinstance(shape, tuple) or not shape or not all(_positive(d) for d in shape):
                raise g.error(node, f"a buffer's shape must be positive ints, got {shape!r}", "")
            t = Tile(tuple(shape), dt.name, scope, node)
            self.tiles.append(t)
            return t
        if len(args) != 2 or kw:
            raise g.error(node, f"lang.{kind} takes (src, dst)", f"lang.{kind}(src, dst)")
        if kind == "load_2d":
            return self.load_2d(args[0], args[1], node)
        return self.store_2d(args[0], args[1], node)

    def _buffer(self, t: Any, node: ast.AST, what: str) -> Tile:
        if not isinstance(t, Tile):
            raise self.error(  # type: ignore[attr-defined]
                node,
                f"the {what} of this copy must be a lang.local_buffer, not {self.describe(t)}",  # type: ignore[attr-defined]
                "buf = lang.local_buffer((BM, BK), lang.float16)",
            )
        return t

    def _ref(self, r: Any, node: ast.AST) -> SliceRef:
        if isinstance(r, Arr):
            axes = tuple(Axis("range", 0, d) for d in r.shape)
            return SliceRef(r, axes, node)
        if not isinstance(r, SliceRef) or not isinstance(r.base, Arr):
            raise self.error(  # type: ignore[attr-defined]
                node,
                f"a copy moves a slice of a global array, not {self.describe(r)}",  # type: ignore[attr-defined]
                "lang.load_2d(a[i:i+BM, k:k+BK], buf)",
            )
        return r

    def _match(self, t: Tile, ref: SliceRef, node: ast.AST) -> None:
        rs = ref.ranges
        if len(rs) != len(t.shape):
            raise self.error(  # type: ignore[attr-defined]
                node,
                f"the slice has {len(rs)} sliced axes, the buffer {len(t.shape)}",
                "slice as many axes as the buffer has",
            )
        bind = t.bind or (None,) * len(t.shape)
        for a, (ax, d, b) in enumerate(zip(rs, t.shape, bind, strict=True)):
            name = ax.start.name if ax.kind == "blk" else None
            if name != b:
                raise self.error(  # type: ignore[attr-defined]
                    node,
                    f"axis {a} of buffer {t.name!r} is bound to {b!r} elsewhere, here to {name!r}",
                    "copy each buffer with the same blocked loop variables",
                )
            if ax.size != d:
                raise self.error(  # type: ignore[attr-defined]
                    node,
                    f"axis {a} of the slice has {ax.size} elements, buffer {t.name!r} has {d}",
                    "slice exactly a buffer's extent (a tail block is handled for you)",
                )
            if ax.kind == "blk" and ax.start.step != d:
                raise self.error(  # type: ignore[attr-defined]
                    node,
                    f"the blocked loop {name!r} steps by {ax.start.step}, the buffer holds {d}",
                    "step the blocked loop by the buffer's extent",
                )

    def load_2d(self, src: Any, dst: Any, node: ast.Call) -> None:
        t, ref = self._buffer(dst, node, "destination"), self._ref(src, node)
        self._match(t, ref, node)
        if _arr(ref).local:
            self.copy_nest(t, ref, node, into_tile=True)
            return
        t.view, t.state = ref, "view"

    def store_2d(self, src: Any, dst: Any, node: ast.Call) -> None:
        t, ref = self._buffer(src, node, "source"), self._ref(dst, node)
        if not _arr(ref).local:
            raise self.error(  # type: ignore[attr-defined]
                node,
                "kernel arguments are read-only",
                "store into a lang.global_buffer / lang.empty array and return it",
            )
        self._match(t, ref, node)
        self.copy_nest(t, ref, node, into_tile=False)
        self.record_hint(t, node)

    def copy_nest(self, t: Tile, ref: SliceRef, node: ast.AST, into_tile: bool) -> None:
        def body(ivs: list[Idx]) -> None:
            gidx = self.ref_index(ref, ivs, node)
            if into_tile:
                v = Scal(self.add(asc_loop.LoadOp(_arr(ref).value, gidx), node).results[0])  # type: ignore[attr-defined]
                self.tile_write(t, ivs, v, node)
            else:
                self.check_covered(node)
                v = self.tile_read(t, ivs, node)
                self.add(asc_loop.StoreOp(v.value, _arr(ref).value, gidx), node)  # type: ignore[attr-defined]

        self.loops(self.tile_extents(t, node), node, body)

    def tile_extents(self, t: Tile, node: ast.AST) -> list[tuple[int, Blk | None]]:
        """Per axis the loop extent over the buffer (a bound axis: its blocked loop's whole
        range) and the blocked loop."""
        out: list[tuple[int, Blk | None]] = []
        for d, b in zip(t.shape, t.bind or (None,) * len(t.shape), strict=True):
            if b is None:
                out.append((d, None))
                continue
            blk = self.active_blk(b, node)
            out.append((blk.hi, blk))
        return out

    def active_blk(self, name: str, node: ast.AST) -> Blk:
        nest = self.nest
        for blk in nest.active if nest else []:
            if blk.name == name:
                return blk
        raise self.error(  # type: ignore[attr-defined]
            node,
            f"this buffer axis is bound to the blocked loop {name!r}, which does not enclose it",
            f"use the buffer inside `for {name} in lang.range(...)`",
        )

    # -- buffer elements -----------------------------------------------------------------
    def tile_indices(self, t: Tile, idx: list[Any], node: ast.AST) -> list[SSAValue]:
        if len(idx) != len(t.shape):
            raise self.error(  # type: ignore[attr-defined]
                node, f"{len(idx)} indices for a buffer of rank {len(t.shape)}", ""
            )
        out = []
        for v, d, b in zip(idx, t.shape, t.bind or (None,) * len(t.shape), strict=True):
            if b is None:
                out.append(self.index(v, d, node))  # type: ignore[attr-defined]
                continue
            blk = self.merged_of.get(v.value) if isinstance(v, Idx) else None
            if blk is None or blk.name != b:
                raise self.error(  # type: ignore[attr-defined]
                    node,
                    f"this buffer axis is bound to the blocked loop {b!r}: index it with a "
                    f"loop over range({t.shape[len(out)]}) inside that loop",
                    f"for ii in range({t.shape[len(out)]}): buf[ii, ...]",
                )
            out.append(v.value)
        return out

    def tile_read(self, t: Tile, idx: list[Any], node: ast.AST) -> Scal:
        ix = self.tile_indices(t, idx, node)
        g: Any = self
        if t.state == "mem" and t.mem is not None:
            return Scal(g.add(asc_loop.LoadOp(t.mem.value, ix), node).results[0])
        if t.state == "view" and t.view is not None:
            ivs = [Idx(v, 0, 0) for v in ix]
            gidx = self.ref_index(t.view, ivs, node)
            return Scal(g.add(asc_loop.LoadOp(_arr(t.view).value, gidx), node).results[0])
        raise g.error(node, f"buffer {t.name!r} is read before it is loaded or written", "")

    def tile_write(self, t: Tile, idx: list[Any], value: Any, node: ast.AST) -> None:
        self.check_covered(node)
        ix = self.tile_indices(t, idx, node)
        g: Any = self
        if t.mem is None:
            shape = [e for e, _ in self.tile_extents(t, node)]
            op = asc_loop.AllocOp(MemRefType(_ir(t.dtype), shape))
            from pyasc_mlir.dialects import asc

            op.attributes[asc.LOC_ATTR] = StringAttr(str(g.loc(t.node)))
            top = self.top_block  # outside every loop: a whole array over the extents
            if top.first_op is not None:
                top.insert_op_before(op, top.first_op)
            else:
                top.add_op(op)
            t.mem = Arr(op.results[0], tuple(shape), t.dtype, True)
        if t.state == "view":
            raise g.error(
                node,
                f"buffer {t.name!r} holds a load_2d'ed slice; writing into it is not supported",
                "compute into another local_buffer",
            )
        t.state = "mem"
        g.add(asc_loop.StoreOp(g.scalar(value, node), t.mem.value, ix), node)

    def check_covered(self, node: ast.AST) -> None:
        nest = self.nest
        if nest is None:
            return
        for blk in nest.active:
            if not any(m is blk for m in nest.merged):
                raise self.error(  # type: ignore[attr-defined]
                    node,
                    f"this write runs once per block of the blocked loop {blk.name!r} but uses "
                    "none of its blocks",
                    f"write inside a loop over a buffer axis bound to {blk.name!r}, or move it "
                    "out of the blocked loop",
                )

    # -- statements ----------------------------------------------------------------------
    def tile_store(self, arr: Any, target: ast.Subscript, value: Any) -> bool:
        """An element write ``buf[ii, jj] = value``; True when handled."""
        if isinstance(arr, Tile):
            idx = [self.expr(e) for e in slice_items(target)]  # type: ignore[attr-defined]
            self.tile_write(arr, idx, value, target)
            return True
        if self.nest is not None:
            raise self.error(  # type: ignore[attr-defined]
                target,
                "inside a blocked loop, write local buffers and lang.store_2d them",
                "buf[ii, jj] = ...; then lang.store_2d(buf, c[i:i+BM, j:j+BN])",
            )
        return False

    def tile_for(self, node: ast.For) -> bool:
        """A blocked loop, or an element loop merged with one; True when handled."""
        g: Any = self
        if not isinstance(node.target, ast.Name):
            return False
        name = node.target.id
        if blocked_names(node.body, name):
            self.blocked_for(node, name)
            return True
        if self.nest is None:
            return False
        tie = self.tie_of(node, name)
        if tie is None:
            return False
        blk = self.active_blk(tie, node)
        it = g.expr(node.iter)
        if it != range(blk.step):
            raise g.error(
                node.iter,
                f"{name!r} indexes a buffer axis bound to the blocked loop {blk.name!r}, so it "
                f"must run over range({blk.step}), not {it!r}",
                f"for {name} in range({blk.step})",
            )

        def body(ivs: list[Idx]) -> None:
            old = g.env.get(name)
            g.env[name] = ivs[0]
            try:
                g.stmts(node.body)
            finally:
                g.env.pop(name, None)
                if old is not None:
                    g.env[name] = old

        self.loops([(blk.hi, blk)], node, body)
        return True

    def tie_of(self, node: ast.For, name: str) -> str | None:
        """The blocked variable of the buffer axes ``name`` indexes in the loop body."""
        assert self.nest is not None
        ties: set[str | None] = set()
        for n in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
                axes = self.nest.tile_axes.get(n.value.id)
                if axes is None or not isinstance(self.env.get(n.value.id), Tile):  # type: ignore[attr-defined]
                    continue
                for e, b in zip(slice_items(n), axes, strict=False):
                    if isinstance(e, ast.Name) and e.id == name:
                        ties.add(b)
        bound = {t for t in ties if t is not None}
        if len(bound) > 1 or (bound and None in ties):
            raise self.error(  # type: ignore[attr-defined]
                node,
                f"{name!r} indexes buffer axes of different blocked loops "
                f"({', '.join(sorted(map(str, ties)))})",
                "use one loop variable per blocked axis",
            )
        return next(iter(bound), None)

    def blocked_for(self, node: ast.For, name: str) -> None:
        g: Any = self
        it = g.expr(node.iter)
        if not isinstance(it, range) or it.start != 0 or node.orelse:
            raise g.error(
                node.iter,
                f"a blocked loop runs over lang.range(0, N, B), not {it!r}",
                f"for {name} in lang.range(0, N, B)",
            )
        blk = Blk(name, it.stop, it.step, node)
        outer = self.nest
        if outer is None:
            self.nest = Nest(self.tile_axes(node), node)
            for tname, axes in self.nest.tile_axes.items():
                t = g.env.get(tname)
                if isinstance(t, Tile):
                    t.bind = axes
        nest = self.nest
        assert nest is not None
        old = g.env.get(name)
        g.env[name] = blk
        nest.active.append(blk)
        nest.seen.append(blk)
        try:
            g.stmts(node.body)
        finally:
            nest.active.pop()
            g.env.pop(name, None)
            if old is not None:
                g.env[name] = old
            if outer is None:
                self.nest = None

    def tile_axes(self, node: ast.For) -> dict[str, tuple[str | None, ...]]:
        """Per buffer name of the nest: the blocked variable of each of its axes."""
        g: Any = self
        names = blocked_names([node])
        out: dict[str, tuple[str | None, ...]] = {}
        for call, sl, buf in copies([node]):
            if not isinstance(buf, ast.Name) or not isinstance(sl, ast.Subscript):
                continue
            axes = tuple(
                it.lower.id
                if isinstance(it, ast.Slice)
                and isinstance(it.lower, ast.Name)
                and it.lower.id in names
                else None
                for it in slice_items(sl)
                if isinstance(it, ast.Slice)
            )
            t = g.env.get(buf.id)
            if isinstance(t, Tile):
                axes = axes + (None,) * (len(t.shape) - len(axes))
            if out.setdefault(buf.id, axes) != axes:
                raise g.error(
                    call,
                    f"buffer {buf.id!r} is copied with other blocked axes {axes} than "
                    f"{out[buf.id]} elsewhere",
                    "copy each buffer with the same blocked loop variables",
                )
        return out

    # -- hints and capacity --------------------------------------------------------------
    def record_hint(self, t: Tile, node: ast.AST) -> None:
        nest = self.nest
        if nest is None:
            return
        g: Any = self
        where = str(g.loc(nest.node))
        bound = {b for b in t.bind if b is not None}
        others = [b for b in nest.seen if b.name not in bound]
        cube = t.scope == "L0C" or any(x.scope in CUBE_SCOPES for x in self.tiles) or bool(others)
        if cube and len(t.shape) == 2:
            k = others[0].step if others else 0
            self.blocks = {"cube": {"m": t.shape[0], "n": t.shape[1], "k": k, "loc": where}}
        elif not self.blocks:
            self.blocks = {"vector": {"elems": math.prod(t.shape), "loc": where}}

    def tile_attrs(self) -> dict[str, Attribute]:
        """The function attributes of the kernel's tiles, after the capacity proof.

        Raises:
            PyAscCompileError: the buffers of a scope exceed its capacity (at the buffer
                that crosses it)."""
        self.check_capacity()
        return {BLOCKS_ATTR: StringAttr(json.dumps(self.blocks))} if self.blocks else {}

    def check_capacity(self) -> None:
        plat_name, db = getattr(self.fn, TARGET_ATTR, (DEFAULT_PLATFORM, True))  # type: ignore[attr-defined]
        plat = get_platform(plat_name)
        cap = {
            "UB": plat.ub_usable_bytes,
            "L1": plat.l1_bytes,
            "L0A": plat.l0a_bytes,
            "L0B": plat.l0b_bytes,
            "L0C": plat.l0c_bytes,
        }
        factor = 2 if db else 1
        for scope in lt.SCOPES:
            mine = [t for t in self.tiles if t.scope == scope]
            total = 0
            for t in mine:
                total += t.nbytes * factor
                if total <= cap[scope]:
                    continue
                full = sum(x.nbytes * factor for x in mine)
                parts = ", ".join(
                    f"{x.name or '?'} {list(x.shape)} {x.dtype} = {x.nbytes * factor} B"
                    for x in mine
                )
                raise self.error(  # type: ignore[attr-defined]
                    t.node,
                    f"the local buffers in {scope} need {full} bytes"
                    + (" (x2: double-buffered)" if db else "")
                    + f": {parts}; total {full} > capacity {cap[scope]} bytes of {scope} "
                    f"on {plat.name} (buffer {t.name!r} crosses it)",
                    capacity_hint(mine, cap[scope], db),
                )


def _ir(dtype: str) -> Attribute:
    from pyasc_mlir.types import ir_type

    return ir_type(dtype)


def _arr(ref: SliceRef) -> Arr:
    """The array a copy's slice is of (``_ref`` admits arrays only)."""
    assert isinstance(ref.base, Arr)
    return ref.base


def _positive(d: Any) -> bool:
    return isinstance(d, int) and not isinstance(d, bool) and d > 0
