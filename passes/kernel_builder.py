"""The kernel builder ``asc-tile`` and ``asc-lower-cube`` share: fusion body -> tile-level kernel.

A kernel is a ``func.func`` (marked ``asc.kernel``) whose arguments are GM buffers: a prologue
(this core's work range, once-loaded inputs and hoisted loop-invariants), one ``scf.for`` over
the core's work units, and in it one *tile*: copy-ins, vector ops on UB buffers, copy-outs.
Every UB value has a :class:`Layout` (which of the tile dims ``[rows, M, L]`` it spans); the
plan (:class:`TilePlan`) turns a layout into a buffer size (elements, a multiple of
``COUNT_ALIGN``). See ``docs/DESIGN.md`` and the modules ``tile`` and ``lower_cube``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from pyasc_mlir.dialects import asc, attrs
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.passes.ir_builder import Index, IRBuilder
from pyasc_mlir.platform import DATA_BLOCK_BITS, LANE_ALIGN, round_up


@dataclass(frozen=True)
class Layout:
    """Which of the tile dims ``[rows, M, L]`` a UB value spans."""

    rows: bool
    m: bool
    l: bool  # noqa: E741


class TilePlan(Protocol):
    """What the kernel builder reads from a plan (``tile.Plan``, ``cube_plan.CubePlan``)."""

    tile: int
    """Rows per tile (or elements per chunk in chunk mode)."""
    hoist: bool
    """Compute loop-invariant values once per kernel."""
    chunked: bool
    """One work unit is one chunk of one row."""

    @property
    def M(self) -> int:  # noqa: N802
        """Extent of the middle UB axis (1 if none)."""
        ...

    @property
    def l_slot(self) -> int:
        """Elements per UB row slot of a value spanning ``L``."""
        ...

    def layout(self, v: SSAValue) -> Layout:
        """The tile layout of fusion value ``v``."""
        ...

    def elems(self, lay: Layout, rows: int | None = None) -> int:
        """Elements of a UB buffer holding a ``lay`` value (``rows`` rows, default a tile's)."""
        ...


@dataclass
class TileBuffer:
    """A UB buffer holding a value of the fusion body: its ``ref`` (the alloc's result, or an
    alias), its layout and its ``asc.alloc`` (``None`` for aliases of other buffers)."""

    ref: SSAValue
    layout: Layout
    alloc: asc.AllocOp | None


@dataclass
class TileState:
    """Per-tile state while lowering the fusion body."""

    ix: IRBuilder
    n: Index
    """Rows in this tile (rows mode) or 1."""
    first: SSAValue | int
    """First outer row of the tile."""
    c0: Index = 0
    """First element of the chunk (chunk mode) or column of the block (Cube kernels)."""
    clen: Index = 0
    """Elements in the chunk, or columns in the block."""
    bufs: dict[SSAValue, TileBuffer] = field(default_factory=dict)
    counts: dict[Layout, SSAValue] = field(default_factory=dict)


class KernelBuilder:
    """Builds the tile-level kernel ``func.func`` of one fusion for a :class:`TilePlan`.

    This base class lowers the fusion body's vector ops (elementwise, casts, compares,
    selects, broadcasts and reshapes, loop-invariant hoisting, in-place reuse of dying scratch
    buffers) and assembles the kernel (:meth:`finish`). A subclass says how tiles are shaped
    and addressed: :meth:`count`, :meth:`sizes`, :meth:`load`, :meth:`store`,
    :meth:`reduce`, :meth:`is_const_input` and the kernel entry (``build``), which ends with
    :meth:`finish` (``asc-tile``: ``tile.VectorKernelBuilder``; ``asc-lower-cube``:
    ``lower_cube.CubeKernelBuilder``)."""

    def __init__(self, fusion: asc.FusionOp, plan: TilePlan, name: str):
        self.fusion = fusion
        self.plan = plan
        self.name = name
        self.allocs: list[tuple[asc.AllocOp, Layout]] = []
        self.last_use: dict[SSAValue, int] = {}
        self.position = 0
        self.pre: TileState | None = None
        self.hoisted: dict[SSAValue, TileBuffer] = {}
        self.invariant: set[SSAValue] = set()
        self.role = "tmp"
        self.block = fusion.body.block
        self.loc = fusion.attributes.get(asc.LOC_ATTR)
        from pyasc_mlir.passes.nan_guard import NanGuards  # imports this module

        self.guards = NanGuards(self) if getattr(plan, "nan_guards", True) else None

    # -- helpers -------------------------------------------------------------------------
    def alloc(self, t: TileState, role: str, lay: Layout, dtype: Attribute) -> TileBuffer:
        """A new UB buffer of ``t`` for a ``lay`` value of ``dtype`` (``role``: ``in``,
        ``out``, ``tmp``, ``const``; scratch becomes ``const`` while hoisting)."""
        elems = self.plan.elems(lay)
        if asc.element_bits(dtype) == 1:
            elems = round_up(elems, DATA_BLOCK_BITS)  # masks: whole DataBlocks of bits
        op = asc.AllocOp("const" if role == "tmp" and self.role == "const" else role, elems, dtype)
        t.ix.add(op)
        self.allocs.append((op, lay))
        return TileBuffer(op.result, lay, op)

    def copy(
        self,
        ix: IRBuilder,
        cls: type[asc.CopyInOp | asc.CopyOutOp],
        gm: SSAValue,
        ub: SSAValue,
        args: list[Index],
    ) -> None:
        """A GM<->UB block copy ``cls`` between ``gm`` and ``ub``; ``args``: GM offset, UB
        offset, block count, block length, GM gap, UB row stride (elements)."""
        vals = [ix.value(a) for a in args]
        src, dst = (gm, ub) if cls is asc.CopyInOp else (ub, gm)
        ix.add(cls(src, dst, vals))

    # -- what a subclass provides -----------------------------------------------------------
    def count(self, t: TileState, lay: Layout) -> SSAValue:
        """Elements a vector op on a ``lay`` value of tile ``t`` processes."""
        raise NotImplementedError

    def sizes(self, t: TileState, lay: Layout) -> list[SSAValue]:
        """``[rows, M, row slot]`` of a ``lay`` value of tile ``t`` (broadcast/reduce sizes)."""
        raise NotImplementedError

    def is_const_input(self, v: SSAValue) -> bool:
        """Kernel input ``v`` is the same for every tile (loaded once per kernel)."""
        raise NotImplementedError

    def load(self, t: TileState, arg: SSAValue, gm: SSAValue, role: str) -> TileBuffer:
        """Copy kernel input ``arg`` (GM buffer ``gm``) into a new ``role`` buffer of ``t``."""
        raise NotImplementedError

    def store(self, t: TileState, v: SSAValue, gm: SSAValue, used: set[SSAValue]) -> None:
        """Copy result ``v`` of tile ``t`` out to GM buffer ``gm`` (see :meth:`out_buffer`)."""
        raise NotImplementedError

    def reduce(self, t: TileState, op: asc.ReduceOp) -> None:
        """Lower reduction ``op`` into tile ``t``."""
        raise NotImplementedError

    def out_buffer(self, t: TileState, v: SSAValue, lay: Layout, used: set[SSAValue]) -> TileBuffer:
        """The copy-out buffer of result ``v``: its own scratch buffer turned into a copy-out
        queue buffer, or (an input, a constant, or a buffer already copied out) a copy of it."""
        buf = self.operand(t, v)  # a returned constant (``zeros_like``) is materialised here
        if buf.alloc is not None and buf.alloc.role.data == "tmp" and buf.ref not in used:
            buf.alloc.role = StringAttr("out")
        else:
            t_ = v.type
            assert isinstance(t_, TensorType)
            out = self.alloc(t, "out", lay, t_.element_type)
            t.ix.add(asc.VCopyOp(out.ref, buf.ref, self.count(t, lay)))
            buf = out
        used.add(buf.ref)
        return buf

    # -- compute ---------------------------------------------------------------------------
    def operand(self, t: TileState, v: SSAValue) -> TileBuffer:
        """The buffer holding ``v`` in ``t`` (a constant is materialised on first use)."""
        if v not in t.bufs:
            owner = v.owner
            assert isinstance(owner, asc.ConstantOp), f"no buffer for {v}"
            lay = self.plan.layout(v)
            buf = self.alloc(t, "tmp", lay, owner.result.type.element_type)
            t.ix.add(asc.VDupOp(buf.ref, owner.value.value.data, self.count(t, lay)))
            t.bufs[v] = buf
        return t.bufs[v]

    def result(self, t: TileState, v: SSAValue) -> TileBuffer:
        """A buffer for op result ``v``: a dying operand's (in place) or a new scratch one."""
        t_ = v.type
        assert isinstance(t_, TensorType)
        buf = self._reusable(t, v) or self.alloc(t, "tmp", self.plan.layout(v), t_.element_type)
        t.bufs[v] = buf
        return buf

    def _reusable(self, t: TileState, v: SSAValue) -> TileBuffer | None:
        """An operand's scratch buffer that dies at this op and has ``v``'s layout and dtype:
        elementwise vector ops may write in place, which keeps the UB peak (and so the tile
        size) from growing with the number of ops."""
        op = v.owner
        if not isinstance(op, asc.BinaryOp | asc.UnaryOp | asc.SelectOp):
            return None
        lay = self.plan.layout(v)
        for x in op.operands:
            b = t.bufs.get(x)
            if (
                b is None
                or b.alloc is None
                or b.alloc.role.data != "tmp"
                or b.layout != lay
                or b.alloc.result.type != self._alloc_type(lay, v)
            ):
                continue
            owners = [y for y, bb in t.bufs.items() if bb.ref is b.ref]
            if all(self.last_use.get(y, -1) <= self.position for y in owners):
                return b
        return None

    def _alloc_type(self, lay: Layout, v: SSAValue) -> Attribute:
        t_ = v.type
        assert isinstance(t_, TensorType)
        return asc.buffer_type(self.plan.elems(lay), t_.element_type, "ub")

    def _binary(self, t: TileState, op: asc.BinaryOp) -> None:
        kind = op.kind.data
        a, b = op.lhs, op.rhs
        const = {"add": "adds", "mul": "muls", "max": "maxs", "min": "mins", "sub": "adds"}
        guard = self.guards is not None and kind in ("max", "min") and self.guards.applies(op)
        for x, y, ok in ((a, b, kind in const), (b, a, kind in ("add", "mul", "max", "min"))):
            if ok and isinstance(y.owner, asc.ConstantOp) and y not in t.bufs:
                value = y.owner.value.value.data
                if guard and (value != value or value == 0):
                    break  # NaN or +-0: the guarded tensor-tensor form (nan_guard.binary)
                src = self.operand(t, x)
                dst = self.result(t, op.result)
                if guard:
                    assert self.guards is not None
                    self.guards.scalar(t, kind, dst, src, value)
                    return
                scalar = -value if kind == "sub" else value
                t.ix.add(
                    asc.VScalarOp(const[kind], dst.ref, src.ref, scalar, self.count(t, dst.layout))
                )
                return
        la, lb = self.operand(t, a), self.operand(t, b)
        dst = self.result(t, op.result)
        if guard:
            assert self.guards is not None
            self.guards.binary(t, kind, dst, la, lb)
            return
        t.ix.add(asc.VBinaryOp(kind, dst.ref, la.ref, lb.ref, self.count(t, dst.layout)))

    def _unary(self, t: TileState, op: asc.UnaryOp) -> None:
        src = self.operand(t, op.input)
        dst = self.result(t, op.result)
        n = self.count(t, dst.layout)
        if op.kind.data == "neg":
            t.ix.add(asc.VScalarOp("muls", dst.ref, src.ref, -1.0, n))
        elif op.kind.data == "relu" and self.guards is not None and self.guards.applies(op):
            self.guards.relu(t, dst, src)
        else:
            t.ix.add(asc.VUnaryOp(op.kind.data, dst.ref, src.ref, n))

    def _alias_or_expand(self, t: TileState, op: asc.BroadcastOp | asc.ReshapeOp) -> None:
        src = self.operand(t, op.input)
        lay = self.plan.layout(op.result)
        if lay == src.layout:
            t.bufs[op.result] = src
            return
        s = src.layout
        if (
            self.pre is not None
            and self.plan.hoist
            and not self.plan.chunked
            and lay.rows
            and not s.rows
            and src.alloc is not None
            and src.alloc.role.data == "const"
        ):
            # Loop-invariant: expand a once-loaded input (e.g. LayerNorm's weight) to a whole
            # tile once per kernel instead of once per tile.
            if op.result not in self.hoisted:
                pre = self.pre
                buf = self.alloc(pre, "const", lay, src.alloc.result.type.element_type)
                sizes = [
                    pre.ix.c(self.plan.tile),
                    pre.ix.c(self.plan.M if lay.m else 1),
                    pre.ix.c(self.plan.l_slot if lay.l else LANE_ALIGN),
                ]
                pre.ix.add(asc.VBroadcastOp(buf.ref, src.ref, sizes, (s.rows, s.m, s.l)))
                self.hoisted[op.result] = buf
            t.bufs[op.result] = self.hoisted[op.result]
            return
        dst = self.result(t, op.result)
        t.ix.add(asc.VBroadcastOp(dst.ref, src.ref, self.sizes(t, lay), (s.rows, s.m, s.l)))

    HOISTABLE = (
        asc.BinaryOp,
        asc.UnaryOp,
        asc.CastOp,
        asc.CompareOp,
        asc.SelectOp,
        asc.ReshapeOp,
        asc.BroadcastOp,
    )

    def _hoistable(self, op: Operation) -> bool:
        """Loop-invariant: computed only from once-loaded inputs and constants, and spanning
        no tiled dimension, so its value is the same for every tile."""
        if (
            self.pre is None
            or not self.plan.hoist
            or self.plan.chunked
            or not isinstance(op, self.HOISTABLE)
        ):
            return False
        if self.plan.layout(op.results[0]).rows:
            return False
        return all(x in self.invariant or isinstance(x.owner, asc.ConstantOp) for x in op.operands)

    def _op(self, t: TileState, op: Operation) -> None:
        """Lower one tensor op; the tile ops it becomes carry its source location."""
        loc = op.attributes.get(asc.LOC_ATTR, self.loc)
        saved = (t.ix.loc, self.pre.ix.loc if self.pre is not None else None)
        t.ix.loc = loc
        if self.pre is not None:
            self.pre.ix.loc = loc
        try:
            self.lower_op(t, op)
        finally:
            t.ix.loc = saved[0]
            if self.pre is not None:
                self.pre.ix.loc = saved[1]

    def lower_op(self, t: TileState, op: Operation) -> None:
        """Lower one body op into ``t``, or once per kernel when it is loop-invariant."""
        if isinstance(op, asc.ConstantOp):
            return  # materialised on first use (or folded into a scalar op)
        if self._hoistable(op):
            assert self.pre is not None
            self.role = "const"
            self.lower(self.pre, op)
            self.role = "tmp"
            for r in op.results:
                t.bufs[r] = self.pre.bufs[r]
                self.invariant.add(r)
            return
        self.lower(t, op)

    def lower(self, t: TileState, op: Operation) -> None:
        """Lower one (not hoisted) body op into ``t``.

        Raises:
            PyAscCompileError: an op no vector kernel can compute (located at the op).
        """
        ix = t.ix
        if isinstance(op, asc.BinaryOp):
            self._binary(t, op)
        elif isinstance(op, asc.UnaryOp):
            self._unary(t, op)
        elif isinstance(op, asc.BroadcastOp | asc.ReshapeOp):
            self._alias_or_expand(t, op)
        elif isinstance(op, asc.ReduceOp):
            self.reduce(t, op)
        elif isinstance(op, asc.CastOp):
            src = self.operand(t, op.input)
            dst = self.result(t, op.result)
            rt = op.result.type
            assert isinstance(rt, TensorType)
            mode = "none" if asc.element_bits(rt.element_type) == 32 else "rint"
            ix.add(asc.VCastOp(dst.ref, src.ref, self.count(t, dst.layout), mode))
        elif isinstance(op, asc.CompareOp):
            a, b = self.operand(t, op.lhs), self.operand(t, op.rhs)
            dst = self.result(t, op.result)
            ix.add(
                asc.VCompareOp(op.predicate.data, dst.ref, a.ref, b.ref, self.count(t, dst.layout))
            )
        elif isinstance(op, asc.SelectOp):
            c = self.operand(t, op.cond)
            a, b = self.operand(t, op.true_value), self.operand(t, op.false_value)
            dst = self.result(t, op.result)
            ix.add(asc.VSelectOp(dst.ref, c.ref, a.ref, b.ref, self.count(t, dst.layout)))
        else:
            raise PyAscCompileError(
                f"{op.name} cannot be lowered to a vector kernel",
                loc_of(op),
                "this op is not supported in this release",
            )

    # -- kernel ----------------------------------------------------------------------------
    def kernel_io(self) -> tuple[list[SSAValue], list[SSAValue]]:
        """The fusion's inputs (its body's block arguments) and its yielded results, in order:
        the kernel's GM arguments are these inputs followed by these results."""
        term = self.block.last_op
        assert isinstance(term, asc.YieldOp)
        return list(self.block.args), list(term.values)

    def finish(
        self,
        t: TileState,
        outs: list[SSAValue],
        entry: Block,
        nargs: int,
        bounds: tuple[SSAValue, SSAValue, SSAValue],
        body: Block,
    ) -> func.FuncOp:
        """Lower the fusion body into tile ``t``, copy the results out, close the loop over
        work units ``bounds`` and wrap ``entry`` into the kernel ``func.func``."""
        body_ops = [op for op in self.block.ops if not isinstance(op, asc.YieldOp)]
        self.last_use = {}
        for i, op in enumerate(body_ops):
            for x in op.operands:
                self.last_use[x] = i
        for x in outs:
            self.last_use[x] = len(body_ops)  # results stay live until copy-out
        for i, op in enumerate(body_ops):
            self.position = i
            self._op(t, op)
        used: set[SSAValue] = set()
        for v, gm in zip(outs, entry.args[nargs:], strict=True):
            self.store(t, v, gm, used)
        t.ix.add(scf.YieldOp())
        ix = IRBuilder(entry, self.loc)
        ix.add(scf.ForOp(*bounds, [], body))
        ix.add(func.ReturnOp())
        gm_types = [a.type for a in entry.args]
        kernel = func.FuncOp(self.name, (gm_types, []), Region(entry))
        attrs.mark_kernel(kernel)
        if self.loc is not None:
            kernel.attributes[asc.LOC_ATTR] = self.loc
        return kernel
