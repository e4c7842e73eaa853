"""UB budget of a kernel being sized: bytes as a function of the tile size.

``asc-tile`` and ``asc-lower-cube`` build a *probe* kernel with the smallest tile, then ask
this budget how many UB bytes each candidate tile size needs, counting buffers exactly as
``asc-buffer-alloc`` will lay them out: copy-in/copy-out queue buffers ``buffers`` times,
once-loaded (``const``) buffers once, scratch (``tmp``) buffers packed by lifetime.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyasc_mlir.dialects import asc
from pyasc_mlir.passes.buffer_alloc import live_ranges, pack
from pyasc_mlir.passes.kernel_builder import Layout, TilePlan
from pyasc_mlir.platform import DATA_BLOCK_BITS, UB_ALIGN_BYTES, round_up


def alloc_bytes(op: asc.AllocOp, lay: Layout, plan: TilePlan, tile: int) -> int:
    """UB bytes of buffer ``op`` (layout ``lay``) when ``plan``'s tile size is ``tile``:
    masks fill whole DataBlocks of bits, every buffer whole DataBlocks of bytes."""
    saved, plan.tile = plan.tile, tile
    t = op.result.type
    bits = asc.element_bits(t.element_type)
    elems = plan.elems(lay)
    plan.tile = saved
    if bits == 1:
        elems = round_up(elems, DATA_BLOCK_BITS)
    return round_up(elems * bits // 8, UB_ALIGN_BYTES)


@dataclass
class UbBudget:
    """UB bytes of a probe kernel as a function of the tile size, with the same layout rules
    as ``asc-buffer-alloc`` (queues x buffers, once-loaded buffers, shared scratch arena)."""

    allocs: list[tuple[asc.AllocOp, Layout]]
    plan: TilePlan
    buffers: int
    """Copies of each copy-in/copy-out buffer (2 = double buffering)."""

    def __post_init__(self) -> None:
        self.tmps = [a for a, _ in self.allocs if a.role.data == "tmp"]
        self.ranges = live_ranges(self.tmps)

    def total(self, tile: int) -> int:
        """UB bytes the kernel needs with tile size ``tile``."""
        fixed = 0
        sizes: dict[asc.AllocOp, int] = {}
        for op, lay in self.allocs:
            n = alloc_bytes(op, lay, self.plan, tile)
            if op.role.data in ("in", "out"):
                fixed += n * self.buffers
            elif op.role.data == "const":
                fixed += n
            else:
                sizes[op] = n
        return fixed + pack(sizes, self.ranges)[1]

    def describe(self, tile: int) -> str:
        """The buffers and their sizes at tile size ``tile``, for error messages."""
        parts = []
        for op, lay in self.allocs:
            k = self.buffers if op.role.data in ("in", "out") else 1
            parts.append(f"{op.role.data} {k}x{alloc_bytes(op, lay, self.plan, tile)} B")
        return ", ".join(parts) + "; tmp buffers whose lifetimes do not overlap share space"
