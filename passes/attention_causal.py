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
For a causal kernel the per-unit buffers are allocated once, after the mask, in the kernel's
entry block (so the mask's scratch shares their bytes).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import Float16Type, Float32Type
from xdsl.ir import Attribute, SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.passes.ir_builder import Index, IRBuilder
from pyasc_mlir.platform import LANE_ALIGN

__all__ = ["diagonal_mask", "key_ranges"]

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
