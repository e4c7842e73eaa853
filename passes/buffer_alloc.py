"""``asc-buffer-alloc``: give every UB buffer a byte offset and prove the kernel fits UB.

Layout of a kernel's UB, from offset 0 (mirroring ``TPipe``'s sequential ``InitBuffer``):
1. one queue region per copy-in/copy-out buffer (``buffers`` copies each);
2. ``const`` buffers, live for the whole kernel;
3. the compute arena (one ``TBuf<VECCALC>``) holding every ``tmp`` buffer; two buffers share
   space when their live ranges (alloc to last use, in program order within the tile loop) do
   not overlap (first fit, largest first).
The total must not exceed the platform's usable UB (``Platform.ub_usable_bytes``: 192 KiB minus
256 B minus the 8 KiB default reserve on 910B); otherwise compilation fails naming the buffers.
Cube kernels: a buffer an ``asc.mmad`` writes is given at least ``baseM * ls`` f32 elements
(``GetTensorC`` writes whole ``baseM x baseN`` blocks, ``pyasc_mlir.cube_tiling``), and on
coupled-core platforms the Matmul library's ``transLength`` bytes come first (offset 0).
Sets kernel attributes ``asc.ub_bytes`` (total), ``asc.calc_base`` and ``asc.calc_bytes``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from pyasc_mlir.cube_tiling import dst_reserve_bytes, ub_reserve_bytes
from pyasc_mlir.dialects import asc, attrs
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.platform import UB_ALIGN_BYTES, Platform, get_platform, round_up


def _aligned(n: int) -> int:
    return round_up(n, UB_ALIGN_BYTES)


def _ancestor_in(op: Operation, block: Block) -> Operation | None:
    while op.parent is not None and op.parent is not block:
        parent = op.parent_op()
        if parent is None:
            return None
        op = parent
    return op if op.parent is block else None


def live_ranges(allocs: list[asc.AllocOp]) -> dict[asc.AllocOp, tuple[int, int]]:
    ranges: dict[asc.AllocOp, tuple[int, int]] = {}
    for a in allocs:
        block = a.parent
        assert block is not None
        index = {op: i for i, op in enumerate(block.ops)}
        start = index[a]
        end = start
        for use in a.result.uses:
            anc = _ancestor_in(use.operation, block)
            if anc is not None:
                end = max(end, index[anc])
        ranges[a] = (start, end)
    return ranges


def pack(
    sizes: dict[asc.AllocOp, int], ranges: dict[asc.AllocOp, tuple[int, int]]
) -> tuple[dict[asc.AllocOp, int], int]:
    """First-fit interval packing: offsets (bytes) and the arena size."""
    placed: list[tuple[int, int, tuple[int, int], asc.AllocOp]] = []
    offsets: dict[asc.AllocOp, int] = {}
    for a in sorted(sizes, key=lambda x: (-sizes[x], ranges[x])):
        lo, hi = ranges[a]
        busy = sorted(
            (off, off + sz)
            for off, sz, (s, e), b in placed
            if b.parent is not a.parent or not (e < lo or hi < s)
        )
        off = 0
        for s, e in busy:
            if off + sizes[a] <= s:
                break
            off = max(off, e)
        offsets[a] = off
        placed.append((off, sizes[a], (lo, hi), a))
    top = max((off + sz for off, sz, _, _ in placed), default=0)
    return offsets, top


def allocate_kernel(kernel: func.FuncOp, usable: int, plat: Platform | None = None) -> int:
    """Assign offsets in one kernel; returns total UB bytes. ``plat`` (default: the default
    platform) decides the Matmul library's UB share on coupled-core SoCs.

    Raises:
        PyAscCompileError: the buffers do not fit in ``usable`` bytes.
    """
    allocs = [o for o in kernel.walk() if isinstance(o, asc.AllocOp)]
    offset = ub_reserve_bytes(kernel, plat or get_platform())
    lines = [f"Matmul library {offset} B"] if offset else []
    for role in ("in", "out", "const"):
        for a in allocs:
            if a.role.data == role:
                a.offset = IntegerAttr(offset, 64)
                one = _aligned(dst_reserve_bytes(a))
                lines.append(f"{role} buffer {a.buffers.value.data} x {one} B")
                offset += one * a.buffers.value.data
    tmps = [a for a in allocs if a.role.data == "tmp"]
    offsets, arena = pack({a: _aligned(dst_reserve_bytes(a)) for a in tmps}, live_ranges(tmps))
    for a in tmps:
        a.offset = IntegerAttr(offset + offsets[a], 64)
    total = offset + arena
    if total > usable:
        raise PyAscCompileError(
            f"kernel {kernel.sym_name.data} needs {total} bytes of UB but {usable} are usable "
            f"({'; '.join(lines)}; compute arena {arena} B for {len(tmps)} scratch buffers)",
            loc_of(kernel),
            "use a smaller tile (asc-tile) or disable double buffering",
        )
    attrs.set_ub_layout(kernel, offset, arena, total)
    return total


@dataclass(frozen=True)
class AscBufferAllocPass(ModulePass):
    """Assign UB offsets (sharing space between buffers whose lifetimes do not overlap) and
    prove each kernel fits the platform's usable UB. Option ``platform`` overrides the kernel's
    ``asc.platform`` attribute."""

    name = "asc-buffer-alloc"
    platform: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.walk():
            if attrs.is_kernel(kernel):
                assert isinstance(kernel, func.FuncOp)
                plat = get_platform(self.platform or attrs.kernel_platform(kernel) or None)
                allocate_kernel(kernel, plat.ub_usable_bytes, plat)
