"""Causal masking for the one-kernel flash attention (``asc-lower-attention``): the key blocks
entirely right of the diagonal are never computed, and the diagonal block is masked in UB.

``asc.flash_attention {causal}`` masks key ``j`` out of query row ``i`` where ``j > i`` (top-left
aligned, torch's ``is_causal``). For a query block of rows ``[m0, m0 + n)`` (``n <= bq <= bk``)
the keys split in two ranges:

* ``[0, min(m0, Skv))``: visible to every row of the block; the usual key loop in blocks of
  ``bk`` (the last one a tail), no mask: ``ceil(min(m0, Skv) / bk)`` trips, a bound computed per
  query block;
* ``[m0, m0 + kl)``, ``kl = min(n, Skv - m0)`` (nothing when ``m0 >= Skv``): ONE diagonal block,
  where key ``m0 + c`` is masked out of row ``m0 + r`` iff ``c > r``, whatever ``m0``: the same
  ``[bq, bk]`` additive tile (``0`` / ``-inf``) for every query block.

Keys from ``m0 + n`` on are masked for every row of the block: skipped. The diagonal tile is
built once per core, before the loop over work units, from two ``asc.vindex`` (``CreateVecIndex``)
ramps: ``D[r, c] = c - r`` (column ramp broadcast over the rows minus the row ramp broadcast over
the columns), then ``min((D - 0.5) * -inf, 0)``: exactly ``-inf`` where ``c > r``, ``0`` elsewhere
(``D - 0.5`` is never 0), kept in f16; the diagonal block casts it to f32 and adds it to the
scores (two vector ops). Every causal row keeps key ``m0 + 0 <= m0 + r``, so no row is empty.
Balance: query block ``i`` runs about ``i * bq / bk + 1`` key blocks, so the units are not
split over the cores in order (the first cores would get the cheap first blocks of a head):
they are ranked by cost and dealt to the cores in snake rounds (:func:`dealt_unit`), which
gives every core about the same number of key blocks, each core's units in decreasing cost
(neighbouring units alike: they overlap in the copy/vector/copy-out pipeline as in-order units
do). For a causal kernel the per-unit buffers are allocated once, after the
mask, in the kernel's entry block (so the mask's scratch shares their bytes).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float16Type, Float32Type
from xdsl.ir import Attribute, SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.passes.ir_builder import Index, IRBuilder
from pyasc_mlir.platform import LANE_ALIGN

__all__ = ["dealt_unit", "diagonal_mask", "key_ranges"]

Alloc = Callable[[IRBuilder, int, Attribute], SSAValue]


def diagonal_mask(ix: IRBuilder, alloc: Alloc, bq: int, lk: int) -> SSAValue:
    """Build (with ``ix``) the ``[bq, lk]`` tile ``-inf where c > r else 0`` in an f16 buffer
    of ``alloc`` (both values exact in f16; half the UB of f32, which lets a 64 x 128 block
    fit); ``lk`` is the row stride (the key block length, a multiple of 16). The f32 scratch
    buffers are dead afterwards (allocated first: ``asc-buffer-alloc`` reuses their bytes)."""
    f32 = Float32Type()
    mask = alloc(ix, bq * lk, Float16Type())
    rows = alloc(ix, bq * LANE_ALIGN, f32)
    cols = alloc(ix, lk, f32)
    d = alloc(ix, bq * lk, f32)
    r_tile = alloc(ix, bq * lk, f32)
    n = ix.c(bq * lk)
    ix.add(asc.VIndexOp(rows, 0.0, ix.c(bq * LANE_ALIGN)))
    # slot r holds 16 r + j; index 0 of a slot (what a row broadcast reads) becomes r, exactly
    ix.add(asc.VScalarOp("muls", rows, rows, 1.0 / LANE_ALIGN, ix.c(bq * LANE_ALIGN)))
    ix.add(asc.VIndexOp(cols, 0.0, ix.c(lk)))
    sizes = [ix.c(bq), ix.c(1), ix.c(lk)]
    ix.add(asc.VBroadcastOp(d, cols, sizes, (False, False, True)))
    ix.add(asc.VBroadcastOp(r_tile, rows, sizes, (True, False, False)))
    ix.add(asc.VBinaryOp("sub", d, d, r_tile, n))
    ix.add(asc.VScalarOp("adds", d, d, -0.5, n))
    ix.add(asc.VScalarOp("muls", d, d, float("-inf"), n))
    ix.add(asc.VScalarOp("mins", d, d, 0.0, n))
    ix.add(asc.VCastOp(mask, d, n, "rint"))
    return mask


def key_ranges(
    ix: IRBuilder, m0: Index, rows: Index, skv: int, bk: int
) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
    """``(full_extent, full_trips, diag_trips, diag_len)`` of the query block at ``m0`` with
    ``rows`` rows: the unmasked keys ``[0, full_extent)`` in ``full_trips`` blocks of ``bk``,
    and ``diag_trips`` (0 or 1) diagonal blocks of ``diag_len`` keys at ``m0``."""
    extent = ix.mini(m0, skv)
    trips = ix.divi(ix.addi(extent, bk - 1), bk)
    left = ix.subi(skv, m0)
    diag_trips = ix.mini(1, ix.maxi(0, left))
    diag_len = ix.mini(rows, left)
    return extent, trips, diag_trips, diag_len


def dealt_unit(
    ix: IRBuilder, i: SSAValue, bid: SSAValue, heads: int, n: int
) -> tuple[SSAValue, SSAValue]:
    """``(head, query block)`` of the ``i``-th work unit of core ``bid`` (built with ``ix``)
    when the ``heads * n`` units, ranked by cost (``q``: block ``n - 1 - q // heads`` of head
    ``q % heads``, the longest key range first), are dealt to the cores in rounds: round ``i``
    ranks ``i * blockDim + c``, core ``bid`` taking column ``c = bid`` in even rounds and
    ``blockDim - 1 - bid`` in odd ones (a snake), except the last, partial round
    ``i = units_per_core`` (taken by the cores ``< units_rem``, as ``work_split`` counts them),
    in order. Reads the tiling fields ``block_dim`` and ``units_per_core``."""
    bd = ix.add_value(asc.TilingFieldOp("block_dim"))
    per = ix.add_value(asc.TilingFieldOp("units_per_core"))
    full = ix.add_value(arith.CmpiOp(i, per, "slt"))
    rev = ix.add_value(arith.SelectOp(full, ix.remi(i, 2), ix.c(0)))
    col = ix.addi(bid, ix.muli(rev, ix.subi(ix.subi(bd, 1), ix.muli(bid, 2))))
    q = ix.addi(ix.muli(i, bd), col)
    return ix.remi(q, heads), ix.subi(n - 1, ix.divi(q, heads))
