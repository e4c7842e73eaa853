"""The parallel part of ``asc-lower-loops``: a ``@lang.parallel`` nest on ``W`` cores.

Semantics: ``dialects/asc_loop.py`` ("Parallel nests"). The kernel (``blockDim = W``):

- distributed loop over ``0..n``: core ``b`` runs ``[start, end)`` of :func:`asc_loop.share`,
  computed from ``GetBlockIdx()`` (shares of 32 iterations: cores write GM 64 bytes, one cache
  line, apart; documented for ``GlobalTensor::SetValue``);
- a result's alloc: each core writes the fill (or NaN) into its share of the result's elements;
- a store into a result outside distributed loops: core 0 only (``if (GetBlockIdx() == 0)``);
- ``asc_loop.allreduce``: the core writes its partial (and compensation) into its 64-byte slot
  of the GM workspace (``ascendc.workspace``), writes that line out of its data cache
  (``DataCacheCleanAndInvalid``, single line: scalar writes stay in the core's DCache until
  written out, documented), ``SyncAll()`` (the hard form: the kernel
  declares a workspace), then reads the ``W`` slots in core order and combines them with the
  same f32 operations as the interpreter (a compensated add, ``scalar_f32.kahan_step``, of
  each partial and of its negated compensation for ``sum``, the op table's ``max``/``min``
  otherwise), unrolled;
- a local array a distributed loop writes and anything outside that loop accesses (another
  distributed loop, a plain loop, a top-level statement) lives in the GM workspace, shared
  like a result (each core writes only its share: other cores must read it from GM); the
  kernel's other local arrays are each core's own, in UB;
- after GM writes to results (or such shared arrays) by several cores (fills, distributed
  loops, core 0's top-level stores), the next top-level
  statement that touches a result (or an allreduce) is preceded by a clean of the whole data
  cache (``DataCacheCleanAndInvalid``, ``ENTIRE_DATA_CACHE``: the core's writes out, its stale
  lines dropped) and ``SyncAll()``.

Workspace: the shared local arrays first (each 64-byte aligned), then ``2 * W * 64`` bytes
per sum, ``W * 64`` per max/min, one region per allreduce, recorded in the kernel's workspace
attribute (at least 64 bytes when the kernel synchronises).

Errors (located :class:`PyAscCompileError`): a distributed loop that reads an array it
writes at another index than the one it writes (another core's share, written concurrently).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, f32
from xdsl.ir import Block, Operation, Region, SSAValue

from pyasc_mlir.dialects import asc_loop, attrs
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects import ascendc_scalar as sc
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.platform import DCACHE_LINE_BYTES, ceil_div, round_up
from pyasc_mlir.types import np_dtype_of

if TYPE_CHECKING:
    from pyasc_mlir.passes.lower_loops import LoopKernel

__all__ = ["ParallelLowering"]

SLOT_BYTES = DCACHE_LINE_BYTES
"""Bytes of one core's workspace slot: one DCache line, so no two cores write the same line."""
SLOT_FLOATS = SLOT_BYTES // 4
"""f32 elements of one slot."""


class ParallelLowering:
    """The parallel conversions of one :class:`~pyasc_mlir.passes.lower_loops.LoopKernel`."""

    def __init__(self, k: LoopKernel, workers: int):
        self.k, self.workers = k, workers
        self.b = k.add(ac.GetBlockIdxOp()).results[0]
        self.in_dist = False
        # a result several cores wrote with SetValue, not yet separated by SyncAll
        self.pending: SSAValue | None = None
        self.ws_bytes = 0
        self.synced = False
        self.cross = cross_core_arrays(k.nest.body.block)

    @classmethod
    def of(cls, k: LoopKernel) -> ParallelLowering | None:
        """The lowering for ``k``'s nest, ``None`` when it has no distributed loop."""
        w = max(
            (o.num_workers for o in k.nest.body.walk() if isinstance(o, asc_loop.ForOp)),
            default=0,
        )
        return cls(k, w) if w else None

    # -- helpers ----------------------------------------------------------------------------
    def c(self, v: int, dst: Block) -> SSAValue:
        return self.k.index(v, dst)

    def op(self, o: Operation, dst: Block) -> SSAValue:
        return self.k.add(o, dst).results[0]

    def minimum(self, a: SSAValue, b: SSAValue, dst: Block) -> SSAValue:
        less = self.op(arith.CmpiOp(a, b, "slt"), dst)
        return self.op(arith.SelectOp(less, a, b), dst)

    def share(self, n: int, dst: Block) -> tuple[SSAValue, SSAValue]:
        """``[start, end)`` of this core's share of ``0..n`` (:func:`asc_loop.share`)."""
        units = ceil_div(n, asc_loop.SHARE_ALIGN)
        per, rem = divmod(units, self.workers)
        b = self.b
        u0 = self.op(arith.MuliOp(b, self.c(per, dst)), dst)
        u0 = self.op(arith.AddiOp(u0, self.minimum(b, self.c(rem, dst), dst)), dst)
        extra = self.op(arith.CmpiOp(b, self.c(rem, dst), "slt"), dst)
        one = self.op(arith.SelectOp(extra, self.c(1, dst), self.c(0, dst)), dst)
        u1 = self.op(arith.AddiOp(self.op(arith.AddiOp(u0, self.c(per, dst)), dst), one), dst)
        align, top = self.c(asc_loop.SHARE_ALIGN, dst), self.c(n, dst)
        start = self.minimum(self.op(arith.MuliOp(u0, align), dst), top, dst)
        end = self.minimum(self.op(arith.MuliOp(u1, align), dst), top, dst)
        return start, end

    def shared(self, array: SSAValue) -> bool:
        """Whether ``array`` is in GM, shared by the cores: a result, or a local array that
        cores read outside the distributed loop that writes it."""
        a = self.k.arrays.get(array)
        return a is not None and (a.gm_out is not None or array in self.cross)

    def place_shared(self) -> None:
        """A GM workspace view for each cross-core local array (64-byte aligned regions)."""
        for v in self.cross:
            a = self.k.arrays[v]
            elem = a.mem.element_type
            a.tensor = self.op(ac.WorkspaceOp(self.ws_bytes, a.count, elem), self.k.block)
            size = a.count * np_dtype_of(elem).itemsize
            self.ws_bytes += round_up(size, SLOT_BYTES)

    def sync(self, dst: Block) -> None:
        """``SyncAll()``; after multi-core result writes each core first writes its data cache
        out (and invalidates it: no core keeps a stale line of another's share)."""
        if self.pending is not None:
            self.k.add(ac.DataCacheCleanOp(self.pending), dst)
        self.k.add(ac.SyncAllOp(), dst)
        self.pending, self.synced = None, True

    def for_loop(self, lo: SSAValue, hi: SSAValue, dst: Block) -> Block:
        body = Block(arg_types=[IndexType()])
        self.k.add(scf.ForOp(lo, hi, self.c(1, dst), [], Region(body)), dst)
        return body

    # -- conversions ------------------------------------------------------------------------
    def before_top(self, op: Operation, dst: Block) -> None:
        """``SyncAll()`` before a top-level op that touches results after multi-core writes."""
        if self.pending is None:
            return
        touches = any(
            isinstance(o, asc_loop.AllreduceOp)
            or (isinstance(o, asc_loop.LoadOp | asc_loop.StoreOp) and self.shared(o.array))
            for o in op.walk()
        )
        if touches:
            self.sync(dst)

    def convert(self, op: Operation, dst: Block) -> bool:
        """Convert ``op`` when it needs the parallel form; ``False`` otherwise."""
        if isinstance(op, asc_loop.ForOp) and op.num_workers:
            self.distributed(op, dst)
        elif isinstance(op, asc_loop.AllocOp) and self.shared(op.result):
            self.fill(op, dst)
        elif isinstance(op, asc_loop.StoreOp) and self.shared(op.array) and not self.in_dist:
            cond = self.op(arith.CmpiOp(self.b, self.c(0, dst), "eq"), dst)
            then = Block()
            self.k.add(scf.IfOp(cond, [], Region(then), None), dst)
            self.in_dist = True  # converted as a plain store inside the if
            self.k.convert(op, then)
            self.in_dist = False
            self.k.add(scf.YieldOp(), then)
            self.pending = self.k.arrays[op.array].tensor  # other cores read it after a sync
        elif isinstance(op, asc_loop.AllreduceOp):
            self.allreduce(op, dst)
        else:
            return False
        return True

    def distributed(self, op: asc_loop.ForOp, dst: Block) -> None:
        start, end = self.share(op.ub.data, dst)
        body = self.for_loop(start, end, dst)
        self.k.values[op.body.block.args[0]] = body.args[0]
        self.in_dist = True
        self.k.region(op.body.block, body)
        self.in_dist = False
        for o in op.walk():
            if isinstance(o, asc_loop.StoreOp) and self.shared(o.array):
                self.pending = self.k.arrays[o.array].tensor

    def fill(self, op: asc_loop.AllocOp, dst: Block) -> None:
        a = self.k.arrays[op.result]
        assert a.tensor is not None
        start, end = self.share(a.count, dst)
        body = self.for_loop(start, end, dst)
        fill = op.fill_value
        value = self.op(sc.ScalarConstOp(float("nan") if fill is None else fill), body)
        self.k.add(sc.ScalarSetOp(value, a.tensor, body.args[0]), body)
        self.k.add(scf.YieldOp(), body)
        self.pending = a.tensor

    def allreduce(self, op: asc_loop.AllreduceOp, dst: Block) -> None:
        w, v = self.workers, self.k.values
        parts = [op.acc] + ([op.comp] if op.comp is not None else [])
        count = len(parts) * w * SLOT_FLOATS
        ws = self.op(ac.WorkspaceOp(self.ws_bytes, count, f32), dst)
        self.ws_bytes += count * 4
        mine = self.op(arith.MuliOp(self.b, self.c(SLOT_FLOATS, dst)), dst)
        for k, arr in enumerate(parts):
            local = self.k.arrays[arr].tensor
            assert local is not None
            val = self.op(sc.ScalarGetOp(local, self.c(0, dst)), dst)
            at = self.op(arith.AddiOp(mine, self.c(k * w * SLOT_FLOATS, dst)), dst)
            self.k.add(sc.ScalarSetOp(val, ws, at), dst)
            self.k.add(ac.DataCacheCleanOp(ws, at), dst)  # the slot's line, out to GM
        self.sync(dst)
        total = v[op.init]
        if op.comp is None:
            for c in range(w):
                p = self.op(sc.ScalarGetOp(ws, self.c(c * SLOT_FLOATS, dst)), dst)
                total = self.op(sc.ScalarBinaryOp(op.kind.data, total, p), dst)
            v[op.result] = total
            return
        tcomp = self.op(sc.ScalarConstOp(0.0), dst)
        for c in range(w):
            p = self.op(sc.ScalarGetOp(ws, self.c(c * SLOT_FLOATS, dst)), dst)
            q = self.op(sc.ScalarGetOp(ws, self.c((w + c) * SLOT_FLOATS, dst)), dst)
            total, tcomp = self.kahan(total, tcomp, p, dst)
            neg = self.op(sc.ScalarUnaryOp("neg", q), dst)
            total, tcomp = self.kahan(total, tcomp, neg, dst)
        v[op.result] = total

    def kahan(
        self, total: SSAValue, comp: SSAValue, e: SSAValue, dst: Block
    ) -> tuple[SSAValue, SSAValue]:
        """One compensated add (``scalar_f32.kahan_step``, as the interpreter)."""
        step = self.k.add(sc.ScalarKahanOp(total, comp, e), dst)
        return step.results[0], step.results[1]

    def finish(self, kernel: Any) -> None:
        """Record the kernel's GM workspace (at least one slot when it synchronises)."""
        need = max(self.ws_bytes, SLOT_BYTES if self.synced else 0)
        if need:
            kernel.attributes[attrs.WORKSPACE_BYTES_ATTR] = IntegerAttr(need, 64)


def _inside(op: Operation, loop: Operation) -> bool:
    p = op.parent_op()
    while p is not None and p is not loop:
        p = p.parent_op()
    return p is loop


def cross_core_arrays(body: Block) -> set[SSAValue]:
    """The local arrays (``asc_loop.alloc``, rank >= 1) a distributed loop writes and some op
    outside that loop accesses: each core writes only its share, so they must be shared.

    Raises:
        PyAscCompileError: a distributed loop reads an array it writes at an index it does not
            write it at (located at the read)."""
    cross: set[SSAValue] = set()
    term = body.last_op
    results = set(term.arrays) if isinstance(term, asc_loop.NestYieldOp) else set()
    access = [o for o in body.walk() if isinstance(o, asc_loop.LoadOp | asc_loop.StoreOp)]
    for loop in body.walk():
        if not (isinstance(loop, asc_loop.ForOp) and loop.num_workers):
            continue
        inner = [o for o in access if _inside(o, loop)]
        written: dict[SSAValue, set[tuple[SSAValue, ...]]] = {}
        for o in inner:
            if isinstance(o, asc_loop.StoreOp):
                written.setdefault(o.array, set()).add(tuple(o.indices))
        for o in inner:
            if isinstance(o, asc_loop.LoadOp) and o.array in written:
                if tuple(o.indices) not in written[o.array]:
                    raise PyAscCompileError(
                        "this distributed loop reads an element of an array it writes at "
                        "another index: each core writes only its share, so the element may "
                        "be another core's, not yet written",
                        loc_of(o),
                        "read it at the index the loop writes (y[i] after y[i] = ...), or "
                        "write it in one distributed loop and read it in the next (a SyncAll "
                        "separates them)",
                    )
        local = {
            a
            for a in written
            if isinstance(a.owner, asc_loop.AllocOp)
            and a not in results
            and isinstance(a.type, MemRefType)
            and a.type.get_shape()
        }
        cross |= {o.array for o in access if o.array in local and not _inside(o, loop)}
    return cross
