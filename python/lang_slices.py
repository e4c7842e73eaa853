"""Slices in kernel bodies (``x[0:2]``, ``x[a:b, :]``, ``x[r, :]``, ``i:i+B`` of a blocked
loop): arguments of ``lang.load_2d``/``lang.store_2d`` and whole-slice statements
``c[a:b] = f(x[c:d], ...)``, which become element loops over the target's slice (NumPy
broadcasting of size-1 axes); a mixin of the kernel-language frontend (the tile part,
``python/lang_tiles.py``, subclasses it).

Errors (located): a step other than 1, bounds that are not compile-time ints, an empty
slice, sizes that do not broadcast, a write into a kernel argument."""

from __future__ import annotations

import ast
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import SSAValue

from pyasc_mlir.dialects import asc_loop
from pyasc_mlir.frontend.lang_exprs import Arr, Idx, Scal
from pyasc_mlir.frontend.lang_tile_types import (
    Axis,
    Blk,
    Nest,
    SliceRef,
    Tile,
    has_slice,
    slice_items,
)

__all__ = ["SliceGen"]


class SliceGen:
    """Slices and whole-slice statements (mixed into ``LangGen``)."""

    slice_ctx: list[Idx] | None = None
    nest: Nest | None = None
    merged_of: dict[SSAValue, Blk]

    # the buffer side (``python/lang_tiles.py``)
    def tile_read(self, t: Tile, idx: list[Any], node: ast.AST) -> Scal:
        raise NotImplementedError

    def tile_write(self, t: Tile, idx: list[Any], value: Any, node: ast.AST) -> None:
        raise NotImplementedError

    def tile_extents(self, t: Tile, node: ast.AST) -> list[tuple[int, Blk | None]]:
        raise NotImplementedError

    def check_covered(self, node: ast.AST) -> None:
        raise NotImplementedError

    # -- index helpers -------------------------------------------------------------------
    def const_index(self, k: int, node: ast.AST) -> SSAValue:
        op = arith.ConstantOp(IntegerAttr(k, IndexType()))
        return self.add(op, node).results[0]  # type: ignore[attr-defined]

    def offset(self, i: Idx, c: int, node: ast.AST) -> SSAValue:
        if c == 0:
            return i.value
        op = arith.AddiOp(i.value, self.const_index(c, node))
        return self.add(op, node).results[0]  # type: ignore[attr-defined]

    def ref_index(self, ref: SliceRef, ivs: list[Idx], node: ast.AST) -> list[SSAValue]:
        """The element of ``ref.base`` at position ``ivs`` of its sliced axes (merged loop
        variables on blocked axes: global indices)."""
        it = iter(ivs)
        out = []
        for ax in ref.axes:
            if ax.kind == "point":
                out.append(ax.start)
            elif ax.kind == "blk":
                out.append(next(it).value)
            else:
                out.append(self.offset(next(it), ax.start, node))
        return out

    def loops(self, extents: list[tuple[int, Blk | None]], node: ast.AST, body: Any) -> None:
        """Emit a loop nest over ``extents`` (merged loops for blocked ones) around
        ``body(ivs)``."""
        g: Any = self

        def rec(k: int, ivs: list[Idx]) -> None:
            if k == len(extents):
                body(ivs)
                return
            ext, blk = extents[k]
            loop = asc_loop.ForOp(0, ext, 1)
            g.add(loop, node)
            outer, g.block = g.block, loop.body.block
            iv = loop.body.block.args[0]
            if blk is not None:
                self.merged_of[iv] = blk
                assert self.nest is not None
                self.nest.merged.append(blk)
            try:
                rec(k + 1, [*ivs, Idx(iv, 0, ext)])
                g.add(asc_loop.YieldOp(), node)
            finally:
                g.block = outer
                if blk is not None and self.nest is not None:
                    self.nest.merged.pop()

        rec(0, [])

    # -- subscripts ------------------------------------------------------------------------
    def subscript_hook(self, base: Any, node: ast.Subscript) -> Any:
        if isinstance(base, Tile) or (isinstance(base, Arr) and has_slice(node)):
            return self.sub_expr(base, node)
        return None

    def sub_expr(self, base: Any, node: ast.Subscript) -> Any:
        """``base[...]`` for a buffer or with slices: an element (Scal), or a SliceRef."""
        g: Any = self
        if not has_slice(node):
            items = slice_items(node)
            return self.tile_read(base, [g.expr(e) for e in items], node)
        ref = self.parse_slice(base, node)
        if self.slice_ctx is None:
            return ref
        return self.ctx_read(ref, node)

    def parse_slice(self, base: Any, node: ast.Subscript) -> SliceRef:
        g: Any = self
        shape = base.shape
        items = slice_items(node)
        if len(items) > len(shape):
            raise g.error(node, f"{len(items)} indices for an array of rank {len(shape)}", "")
        items += [ast.Slice(None, None, None)] * (len(shape) - len(items))
        axes = []
        for it, d in zip(items, shape, strict=True):
            if not isinstance(it, ast.Slice):
                if isinstance(base, Tile):
                    raise g.error(node, "index a buffer with slices of every axis", "buf[:, :]")
                axes.append(Axis("point", g.index(g.expr(it), d, it), 1))
                continue
            step = g.expr(it.step) if it.step is not None else 1
            if step != 1:
                raise g.error(it, f"slices step by 1, not {step!r}", "write a:b")
            lo = g.expr(it.lower) if it.lower is not None else 0
            if isinstance(lo, Blk):
                axes.append(Axis("blk", lo, self.block_size(lo, it)))
                continue
            hi = g.expr(it.upper) if it.upper is not None else d
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi)):
                raise g.error(
                    it,
                    "slice bounds must be compile-time ints (or i:i+B with i a blocked loop "
                    "variable)",
                    "x[0:2], x[a:b] with a, b compile-time; blocked: for i in lang.range(0, "
                    "N, B): lang.load_2d(x[i:i+B], buf)",
                )
            r = range(d)[lo:hi]
            if len(r) == 0:
                raise g.error(it, f"the slice {lo}:{hi} of an axis of {d} is empty", "")
            axes.append(Axis("range", r.start, len(r)))
        return SliceRef(base, tuple(axes), node)

    def block_size(self, blk: Blk, it: ast.Slice) -> int:
        up = it.upper
        ok = (
            isinstance(up, ast.BinOp)
            and isinstance(up.op, ast.Add)
            and isinstance(up.left, ast.Name)
            and up.left.id == blk.name
        )
        size = self.expr(up.right) if ok else None  # type: ignore[attr-defined,union-attr]
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise self.error(  # type: ignore[attr-defined]
                it,
                f"a slice starting at the blocked variable {blk.name!r} must be "
                f"{blk.name}:{blk.name}+B (B a compile-time int)",
                f"write {blk.name}:{blk.name}+{blk.step}",
            )
        return size

    def ctx_read(self, ref: SliceRef, node: ast.AST) -> Scal:
        """A slice read inside a whole-slice statement: the element at the statement's loop
        variables (aligned at the trailing axes, size-1 axes broadcast)."""
        g: Any = self
        ctx = self.slice_ctx or []
        rs = ref.ranges
        if len(rs) > len(ctx):
            raise g.error(node, "this slice has more axes than the statement's target", "")
        ivs: list[Any] = []
        for ax, iv in zip(rs, ctx[len(ctx) - len(rs) :], strict=True):
            if ax.size == 1 and iv.hi != 1:
                ivs.append(None)
            elif isinstance(ref.base, Tile) or ax.size == iv.hi:
                ivs.append(iv)
            else:
                raise g.error(
                    node,
                    f"a slice of {ax.size} elements against a target of {iv.hi}",
                    "slices in one statement must have the same sizes (or size 1)",
                )
        if isinstance(ref.base, Tile):
            whole = all(
                ax.start == 0 and ax.size == d for ax, d in zip(rs, ref.base.shape, strict=True)
            )
            if not whole or len(rs) != len(ctx):
                raise g.error(
                    node, "a buffer is read whole in a slice statement: buf[:]", "buf[:, :]"
                )
            return self.tile_read(ref.base, ivs, node)
        it = iter(ivs)
        gidx = []
        for ax in ref.axes:
            if ax.kind == "point":
                gidx.append(ax.start)
                continue
            iv = next(it)
            k = ax.start
            gidx.append(self.const_index(k, node) if iv is None else self.offset(iv, k, node))
        return Scal(g.add(asc_loop.LoadOp(ref.base.value, gidx), node).results[0])

    def slice_assign(self, node: ast.Assign | ast.AugAssign) -> bool:
        """``c[a:b, ...] = expr`` (or ``+=``): element loops over the target's slice; True
        when handled."""
        g: Any = self
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        t = targets[0]
        if len(targets) != 1 or not isinstance(t, ast.Subscript) or not has_slice(t):
            return False
        base = g.expr(t.value)
        if not isinstance(base, Arr | Tile):
            raise g.error(t, f"cannot slice {g.describe(base)}", "")
        if isinstance(base, Arr) and not base.local:
            raise g.error(t, "kernel arguments are read-only", "write into a local array")
        if self.slice_ctx is not None:
            raise g.error(node, "a whole-slice statement inside another one", "")
        ref = self.parse_slice(base, t)
        rhs: ast.expr = node.value
        if isinstance(node, ast.AugAssign):
            load = ast.Subscript(value=t.value, slice=t.slice, ctx=ast.Load())
            rhs = ast.BinOp(left=load, op=node.op, right=node.value)
            ast.copy_location(load, t)
            ast.copy_location(rhs, node)
        exts: list[tuple[int, Blk | None]]
        if isinstance(base, Tile):
            if any(
                ax.start != 0 or ax.size != d for ax, d in zip(ref.axes, base.shape, strict=True)
            ):
                raise g.error(t, "a buffer is written whole: buf[:] = ...", "buf[:, :] = ...")
            exts = self.tile_extents(base, t)
        else:
            exts = [(ax.size, None) for ax in ref.ranges]

        def body(ivs: list[Idx]) -> None:
            self.slice_ctx = ivs
            try:
                value = g.expr(rhs)
            finally:
                self.slice_ctx = None
            if isinstance(base, Tile):
                self.tile_write(base, ivs, value, node)
                return
            self.check_covered(node)
            gidx = self.ref_index(ref, ivs, node)
            g.add(asc_loop.StoreOp(g.scalar(value, node), base.value, gidx), node)

        self.loops(exts, node, body)
        return True
