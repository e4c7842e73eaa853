"""Row-pass kernels of ``asc-tile``: reductions over rows too long for the Unified Buffer.

When a fusion reduces over its trailing axis ``L`` and even one whole row of its buffers does
not fit UB (e.g. add + RMSNorm returning the sum and the norm at ``L = 16384``: 425,984 bytes),
``asc-tile`` switches to *row passes*: one work unit is one outer row, and the kernel walks the
row in chunks of ``plan.tile`` elements several times ("passes"):

* every value gets a *level*: inputs 0; an op the largest level of its operands, plus one for a
  reduction over ``L`` (its result is a per-row scalar);
* pass ``p`` loops over the chunks of the row, (re)computes from the GM inputs the values
  spanning ``L`` that the reductions of inputs of level ``p`` and the results of level ``p``
  need, folds each chunk's partial reduction into a per-row accumulator (``sum``: add from
  ``-0``; ``max``/``min``: NaN-guarded max/min from ``-inf``/``+inf``) and copies the level-``p``
  results out chunk by chunk;
* between passes, the per-row scalar ops of the next level run once per row (e.g. RMSNorm's
  ``rsqrt(sum * 1/n + eps)``); per-row results are copied out after the last pass.

GM traffic: pass ``p`` re-reads the inputs it needs, so RMSNorm (two passes) reads ``x`` twice and
LayerNorm (mean, then the variance of ``x - mean``, then the normalisation: three passes) three
times; results are written once. The row is never split over cores (rows are the work units).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IndexType, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from pyasc_mlir.dialects import asc, attrs
from pyasc_mlir.passes.ir_builder import IRBuilder
from pyasc_mlir.passes.iteration_space import element_type_of, sliced_only
from pyasc_mlir.passes.kernel_builder import TileBuffer, TileState
from pyasc_mlir.passes.tile import VectorKernelBuilder
from pyasc_mlir.passes.tile_plan import Plan
from pyasc_mlir.passes.work_split import core_range

TILE_LOOP_ATTR = "asc.tile_loop"
"""Marks a nested ``scf.for`` whose body is one tile (copy-in queues are flushed at its top and
freed at its end by ``convert-asc-to-ascendc``), like the kernel's outer loop."""
IDENTITY = {"sum": -0.0, "max": -math.inf, "min": math.inf}
"""Start value of a chunked accumulator: the identity of the reduction (``-0 + x == x`` for every
``x``, ``+0`` included, so a row of ``-0`` sums to ``-0`` as NumPy's does)."""
_NEVER = 1 << 60
FLOATS = (Float16Type, Float32Type, BFloat16Type)


@dataclass
class Schedule:
    """Which pass computes what, for a fusion over ``plan``."""

    level: dict[SSAValue, int] = field(default_factory=dict)
    spans: set[SSAValue] = field(default_factory=set)
    """Values spanning the trailing axis ``L`` (computed chunk by chunk)."""
    reductions: list[asc.ReduceOp] = field(default_factory=list)
    """Reductions over ``L`` (chunked, accumulated per row)."""
    passes: int = 0


def schedule(fusion: asc.FusionOp, plan: Plan) -> Schedule | None:
    """The row-pass schedule of ``fusion``, or ``None`` when row passes cannot compute it: no
    reduction over ``L``, a middle axis ``M``, a non-float or non-vector reduction."""
    if plan.m_axis is not None or plan.dyn is not None:
        return None
    sp, la = plan.space, plan.l_axis
    s = Schedule()
    block = fusion.body.block
    for a in block.args:
        s.level[a] = 0
        if la in sp.has.get(a, frozenset()):  # an input read only through slices: no tile
            s.spans.add(a)
    term = block.last_op
    assert isinstance(term, asc.YieldOp)
    for op in block.ops:
        if op is term:
            break
        lvl = max((s.level.get(x, 0) for x in op.operands), default=0)
        if isinstance(op, asc.ReduceOp) and la in sp.reduced.get(op, frozenset()):
            kind = op.kind.data
            if kind not in IDENTITY or not isinstance(element_type_of(op.result), FLOATS):
                return None
            s.reductions.append(op)
            lvl += 1
        for r in op.results:
            s.level[r] = lvl
            if la in sp.has[r]:
                s.spans.add(r)
    if not s.reductions:
        return None
    roots = [s.level[r.input] for r in s.reductions]
    roots += [s.level[v] for v in term.values if v in s.spans]
    s.passes = 1 + max(roots)
    return s


def plan_row_passes(fusion: asc.FusionOp, plan: Plan) -> bool:
    """Switch ``plan`` to row passes (chunked rows, ``plan.passes`` chunk loops per row) if
    :func:`schedule` can compute ``fusion`` that way; ``False`` (plan unchanged) otherwise."""
    sched = schedule(fusion, plan)
    if sched is None:
        return False
    plan.chunked, plan.passes, plan.hoist = True, sched.passes, False
    return True


class RowPassKernelBuilder(VectorKernelBuilder):
    """Builds a row-pass kernel (module docstring): the core's rows, each walked in
    ``sched.passes`` chunk loops."""

    def __init__(self, fusion: asc.FusionOp, plan: Plan, name: str):
        super().__init__(fusion, plan, name)
        sched = schedule(fusion, plan)
        assert sched is not None and plan.chunked
        self.sched = sched
        self.accs: dict[asc.ReduceOp, TileBuffer] = {}
        self.body_ops = [o for o in self.block.ops if not isinstance(o, asc.YieldOp)]

    # -- reductions ----------------------------------------------------------------------------
    def reduce(self, t: TileState, op: asc.ReduceOp) -> None:
        """A reduction over ``L``: this chunk's partial result folded into the row's
        accumulator; other reductions as in ``VectorKernelBuilder``."""
        acc = self.accs.get(op)
        if acc is None:
            super().reduce(t, op)
            return
        ix, plan = t.ix, self.plan
        src = self.operand(t, op.input)
        dtype = element_type_of(op.result)
        part = self.alloc(t, "tmp", acc.layout, dtype)
        work = self.alloc(t, "tmp", src.layout, dtype)
        sizes = [ix.c(1), ix.c(1), ix.value(t.clen), ix.c(plan.l_slot)]
        self._vreduce(t, op, "last", part, src, work.ref, sizes)
        kind = {"sum": "add", "max": "max", "min": "min"}[op.kind.data]
        if kind != "add" and self.guards is not None and self.guards.applies(op):
            self.guards.binary(t, kind, acc, acc, part)
        else:
            n = self.count(t, acc.layout)
            ix.add(asc.VBinaryOp(kind, acc.ref, acc.ref, part.ref, n))

    # -- schedule ------------------------------------------------------------------------------
    def _needed(self, roots: list[SSAValue]) -> tuple[set[Operation], set[SSAValue]]:
        """Ops spanning ``L`` (and the inputs) a chunk must compute to have ``roots``."""
        ops: set[Operation] = set()
        seen: set[SSAValue] = set()
        stack = list(roots)
        while stack:
            v = stack.pop()
            if v in seen or v not in self.sched.spans:
                continue
            seen.add(v)
            if isinstance(v, BlockArgument):
                continue
            owner = v.owner
            assert isinstance(owner, Operation)
            ops.add(owner)
            stack.extend(owner.operands)
        return ops, seen

    def _row_ops(self, row: TileState, level: int) -> None:
        """The per-row scalar ops of ``level``, once per row."""
        s = self.sched
        for i, op in enumerate(self.body_ops):
            if op in s.reductions or any(r in s.spans for r in op.results):
                continue
            if all(s.level[r] == level for r in op.results):
                self.position = i
                self._op(row, op)

    def _pass(
        self,
        row: TileState,
        p: int,
        gm_in: Mapping[SSAValue, SSAValue],
        outs: Sequence[tuple[SSAValue, SSAValue]],
    ) -> None:
        """Chunk loop ``p`` of one row: accumulators, loads, chunk ops, level-``p`` stores."""
        s, plan, rx = self.sched, self.plan, row.ix
        reds = [r for r in s.reductions if s.level[r.input] == p]
        mine = [(v, gm) for v, gm in outs if v in s.spans and s.level[v] == p]
        self.accs = {}
        for r in reds:
            acc = self.alloc(row, "tmp", plan.layout(r.result), element_type_of(r.result))
            rx.add(asc.VDupOp(acc.ref, IDENTITY[r.kind.data], self.count(row, acc.layout)))
            self.accs[r] = acc
        ops, values = self._needed([r.input for r in reds] + [v for v, _ in mine])
        ops.update(reds)
        body = Block(arg_types=[IndexType()])
        cx = IRBuilder(body, self.loc)
        c0 = body.args[0]
        clen = cx.mini(plan.tile, cx.subi(plan.L, c0))
        t = TileState(cx, 1, row.first, c0, clen)
        t.bufs.update(row.bufs)
        for a, gm in gm_in.items():
            if a in values and a not in t.bufs:
                t.bufs[a] = self.load(t, a, gm, "in")
        for i, op in enumerate(self.body_ops):
            if op in ops:
                self.position = i
                self._op(t, op)
        used: set[SSAValue] = set()
        for v, gm in mine:
            self.store(t, v, gm, used)
        cx.add(scf.YieldOp())
        loop = scf.ForOp(rx.c(0), rx.c(plan.L), rx.c(plan.tile), [], body)
        loop.attributes[TILE_LOOP_ATTR] = StringAttr(f"pass {p}")
        rx.add(loop)
        for r, acc in self.accs.items():
            row.bufs[r.result] = acc
        self.accs = {}

    def _set_last_use(self, outs: list[SSAValue]) -> None:
        """Last uses for in-place reuse; per-row values are never reused (later chunk loops
        read them after ops that come later in the body)."""
        self.last_use = {}
        for i, op in enumerate(self.body_ops):
            for x in op.operands:
                self.last_use[x] = i
        for x in outs:
            self.last_use[x] = len(self.body_ops)
        for v in self.sched.level:
            if v not in self.sched.spans:
                self.last_use[v] = _NEVER

    # -- kernel --------------------------------------------------------------------------------
    def build(self) -> func.FuncOp:
        """The kernel: core range, once-loaded inputs, then per row the passes."""
        args, outs = self.kernel_io()
        gm_types = [
            asc.buffer_type(self._gm_elems(i, v), element_type_of(v), "gm")
            for i, v in enumerate([*args, *outs])
        ]
        entry = Block(arg_types=gm_types)
        gm_in = dict(zip(args, entry.args[: len(args)], strict=True))
        out_pairs = list(zip(outs, entry.args[len(args) :], strict=True))
        # a slice of an input is loaded from the input's buffer (a GM view); an input read
        # only through slices is never loaded itself
        gm_in.update({v: gm_in[view.source] for v, view in self.plan.space.views.items()})
        for hidden in sliced_only(self.fusion):
            del gm_in[hidden]
        ix = IRBuilder(entry, self.loc)
        start, end, step = core_range(ix)
        self.pre = TileState(ix, 1, ix.c(0))
        body = Block(arg_types=[IndexType()])
        row = TileState(IRBuilder(body, self.loc), 1, body.args[0])
        for a in gm_in:
            if self.is_const_input(a):
                row.bufs[a] = self.load(self.pre, a, gm_in[a], "const")
                self.invariant.add(a)
        self._set_last_use(outs)
        for a in gm_in:
            if a not in row.bufs and a not in self.sched.spans:
                row.bufs[a] = self.load(row, a, gm_in[a], "in")
        self._row_ops(row, 0)
        for p in range(self.sched.passes):
            self._pass(row, p, gm_in, out_pairs)
            self._row_ops(row, p + 1)
        used: set[SSAValue] = set()
        for v, gm in out_pairs:
            if v not in self.sched.spans:
                self.store(row, v, gm, used)
        row.ix.add(scf.YieldOp())
        ix.add(scf.ForOp(start, end, step, [], body))
        ix.add(func.ReturnOp())
        kernel = func.FuncOp(self.name, (gm_types, []), Region(entry))
        attrs.mark_kernel(kernel)
        if self.loc is not None:
            kernel.attributes[asc.LOC_ATTR] = self.loc
        return kernel
