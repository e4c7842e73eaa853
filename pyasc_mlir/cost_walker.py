"""The IR walk behind :mod:`pyasc_mlir.cost_model` (MODELED): one core's issue cycles and GM
bytes per pipe, the code before the tile loop and each tile iteration (the cost model's module
doc, step 1, says what every op costs).

Tile iterations alike are walked once: an iteration's cost depends only on the integer values
its cost-bearing operands derive from (element counts, copy lengths, loop bounds, Matmul tails;
not the addresses a subview or a scalar read takes), so the walk keys each iteration on those
values (:func:`cost_keys`) and reuses the cost of an earlier iteration with the same key, on
this core or another one.

A tile loop of more than ``2 * EDGE_TILES + PROBE_TILES`` iterations on a core (tensors of
gigabytes) is walked at its two ends and probed at ``PROBE_TILES`` evenly spaced iterations
between them: when every probe has the cost of the last head iteration (the steady state of a
tile loop whose only different iterations are its tails), the middle iterations share that
cost; otherwise the whole loop is walked, as below that size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import Block, Operation, SSAValue

from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects import ascendc_scalar as sc
from pyasc_mlir.dialects import opset
from pyasc_mlir.emitter import tiling_fields
from pyasc_mlir.platform import (
    CUBE_FRACTAL,
    DATA_BLOCK_BYTES,
    VECTOR_REPEAT_BYTES,
    Platform,
    ceil_div,
    cost_constants,
)

VECTOR_ISSUE_CYCLES = 8
"""Assumed fixed cost of issuing one vector instruction (cycles)."""
COPY_ISSUE_CYCLES = 30
"""Assumed fixed cost of one DataCopy/DataCopyPad instruction (cycles)."""
SCALAR_TILE_CYCLES = 200
"""Assumed scalar work per tile iteration: queue handling, address arithmetic (cycles)."""
SCALAR_OP_CYCLES = 4
"""Assumed cost of one scalar read or one inner-loop iteration (cycles)."""
DCACHE_ENTIRE_CYCLES = 500
"""ASSUMED cost of one ``DataCacheCleanAndInvalid`` of the whole data cache (cycles): no published
figure; the API reference only warns that it is slow. One cache line costs
``SCALAR_OP_CYCLES``."""
SYNC_ALL_CYCLES = 2000
"""ASSUMED cost of one hard ``SyncAll()`` on the scalar pipe (cycles; about 1.1 µs at 1.8 GHz).
No published figure was found: ``shared/ASCEND_FACTS.md`` has none, the SyncAll page of the
Ascend C API reference gives only its semantics (hard sync: the hardware's all-core barrier
instruction; soft sync: a software algorithm over per-core 32-byte GM flags), and no GM access
latency is documented either. The figure is an order-of-magnitude assumption: the soft form's
flag exchange, one GM write and one GM read per core, taken as two GM round trips of roughly
1000 cycles each (the hard form is presumably no slower). It stays well below the fitted
5.53 µs least kernel time (``CostConstants.min_kernel_us``, which includes the end-of-kernel
synchronisation). Not fitted; not modeled: the wait for the slowest core (each core is walked
on its own)."""
CUBE_ISSUE_CYCLES = 64
"""Assumed fixed cost of one Matmul Iterate + GetTensorC round (message, L1/L0 loads), cycles."""
MAX_UNROLL = 4096
EDGE_TILES = 64
"""Tile iterations walked at each end of a long tile loop (module doc)."""
PROBE_TILES = 64
"""Iterations probed between the ends of a long tile loop (module doc)."""


@dataclass
class _Iterate:
    """One ``Matmul::Iterate`` (``count`` alike): cube cycles, A/B bytes from GM into L1, the
    bytes of the first L1 chunk (``stepKa`` K slices, loaded before the first product) and
    whether L1 is double buffered (``depthA1 = 2 * stepKa``: the next chunk loads while the
    cube works on the current one)."""

    m: float
    ab_bytes: int
    fill_bytes: int
    overlapped: bool
    count: float = 1.0

    def cycles(self, bytes_per_cycle: float) -> float:
        """Duration on the Cube core at ``bytes_per_cycle`` of A/B stream (module doc)."""
        stream = self.ab_bytes / bytes_per_cycle
        if not self.overlapped:
            return self.m + stream
        fill = self.fill_bytes / bytes_per_cycle
        return fill + max(self.m, stream - fill)


@dataclass
class TileCost:
    """Issue cycles per pipe (``mte2``, ``v``, ``mte3``, ``s``; ``m``: the Cube's), GM bytes
    per copy pipe and into L1 (``cube_bytes``) and the Matmul Iterates of a piece of a kernel
    (a tile iteration, the code before the tile loop), before any bandwidth is applied."""

    mte2: float = 0.0
    v: float = 0.0
    mte3: float = 0.0
    s: float = 0.0
    m: float = 0.0
    mte2_bytes: int = 0
    mte3_bytes: int = 0
    cube_bytes: int = 0
    iterates: list[_Iterate] = field(default_factory=list)

    def add(self, other: TileCost, times: float = 1.0) -> None:
        self.m += other.m * times
        self.cube_bytes += int(other.cube_bytes * times)
        self.iterates.extend(
            _Iterate(i.m, i.ab_bytes, i.fill_bytes, i.overlapped, i.count * times)
            for i in other.iterates
        )
        self.mte2 += other.mte2 * times
        self.v += other.v * times
        self.mte3 += other.mte3 * times
        self.s += other.s * times
        self.mte2_bytes += int(other.mte2_bytes * times)
        self.mte3_bytes += int(other.mte3_bytes * times)


def _elem_bytes(t: object) -> int:
    e = ac.elem(t)  # type: ignore[arg-type]
    from pyasc_mlir.dialects.asc import element_bits

    return max(1, element_bits(e) // 8)


_CUBE_OPS = (
    ac.MatmulObjectOp,
    ac.MatmulSetTailOp,
    ac.MatmulIterateOp,
    ac.MatmulSetTensorAOp,
    ac.MatmulSetTensorBOp,
)


class Walker:
    """Walks one ascendc-level kernel (:meth:`run`, once per core) into :class:`TileCost`
    pieces; keeps the Matmul objects' GM sources (``cube_sources``) and queue depth."""

    def __init__(self, kernel: func.FuncOp, platform: Platform):
        self.kernel = kernel
        self.block_idx = 0
        self.memo: dict[tuple[int, ...], tuple[TileCost, dict[SSAValue, tuple[int, int, int]]]] = {}
        self.keys: dict[Block, list[SSAValue]] = {}
        self.tiling = tiling_fields(kernel)
        self.cube_fp32_rate = cost_constants(platform).cube_fp32_rate
        self.env: dict[SSAValue, int] = {}
        self.buffers = 1
        self.platform = platform
        self.tails: dict[SSAValue, tuple[int, int, int]] = {}
        self.matmul_index: dict[SSAValue, int] = {}
        self.cube_sources: dict[SSAValue, int] = {}

    def _val(self, v: SSAValue) -> int:
        return self.env.get(v, 0)

    def _arith(self, op: Operation) -> bool:
        e = self.env
        if isinstance(op, arith.ConstantOp):
            if isinstance(op.value, IntegerAttr):
                e[op.result] = op.value.value.data
            return True
        binops = {
            arith.AddiOp: lambda a, b: a + b,
            arith.SubiOp: lambda a, b: a - b,
            arith.MuliOp: lambda a, b: a * b,
            arith.DivSIOp: lambda a, b: a // b if b else 0,
            arith.RemSIOp: lambda a, b: a % b if b else 0,
        }
        if type(op) in binops:
            a, b = (self._val(x) for x in op.operands)
            e[op.results[0]] = binops[type(op)](a, b)
            return True
        if isinstance(op, arith.CmpiOp):
            a, b = self._val(op.lhs), self._val(op.rhs)
            pred = op.predicate.value.data
            e[op.result] = int(
                {0: a == b, 1: a != b, 2: a < b, 3: a <= b, 4: a > b, 5: a >= b}.get(pred, a < b)
            )
            return True
        if isinstance(op, arith.SelectOp):
            e[op.result] = self._val(op.lhs) if self._val(op.cond) else self._val(op.rhs)
            return True
        return False

    def _index(self, op: Operation) -> bool:
        """Evaluate ``op`` if it computes an index (arith, a tiling field, ``GetBlockIdx()``)."""
        if isinstance(op, ac.TilingFieldOp):
            self.env[op.result] = self.tiling.get(op.field.data, 0)
        elif isinstance(op, ac.GetBlockIdxOp):
            self.env[op.result] = self.block_idx
        else:
            return self._arith(op)
        return True

    def _vector(
        self, count: int, nbytes: int, extra: float = 0.0, call: str | None = None
    ) -> float:
        """Vector-pipe cycles of one instruction over ``count`` elements of ``nbytes`` each;
        ``call`` (an Ascend C call or ``CMPMODE`` name) takes its op-table cycles per repeat."""
        record = opset.by_call(call) if call is not None else None
        per_repeat = record.repeat_cycles if record is not None else 1
        repeats = math.ceil(count * nbytes / VECTOR_REPEAT_BYTES)
        return repeats * per_repeat + VECTOR_ISSUE_CYCLES + extra

    def _copy_bytes(self, op: ac.DataCopyOp | ac.DataCopyPadOp) -> tuple[str, int]:
        dst_local = isinstance(op.dst.type, ac.LocalTensorType)
        src_local = isinstance(op.src.type, ac.LocalTensorType)
        sz = _elem_bytes(op.dst.type)
        if isinstance(op, ac.DataCopyOp):
            n = self._val(op.count) * sz // DATA_BLOCK_BYTES * DATA_BLOCK_BYTES
        else:
            n = self._val(op.block_count) * self._val(op.block_len)
        if dst_local and src_local:
            return "V", n
        return ("MTE2" if dst_local else "MTE3"), n

    def _op(self, op: Operation, cost: TileCost) -> None:
        if self._index(op):
            return
        if isinstance(op, ac.InitQueueOp):
            self.buffers = max(self.buffers, op.num.value.data)
        elif isinstance(op, ac.DataCopyOp | ac.DataCopyPadOp):
            pipe, n = self._copy_bytes(op)
            if pipe == "V":
                cost.v += n / VECTOR_REPEAT_BYTES + VECTOR_ISSUE_CYCLES
            elif pipe == "MTE2":
                cost.mte2 += COPY_ISSUE_CYCLES
                cost.mte2_bytes += n
            else:
                cost.mte3 += COPY_ISSUE_CYCLES
                cost.mte3_bytes += n
        elif isinstance(op, ac.VecBinaryOp | ac.VecUnaryOp | ac.VecScalarOp):
            cost.v += self._vector(self._val(op.count), _elem_bytes(op.dst.type), call=op.api.data)
        elif isinstance(op, ac.DuplicateOp | ac.SelectOp | ac.CreateVecIndexOp):
            cost.v += self._vector(self._val(op.count), _elem_bytes(op.dst.type))
        elif isinstance(op, ac.CastOp):
            wide = max(_elem_bytes(op.dst.type), _elem_bytes(op.src.type))
            cost.v += self._vector(self._val(op.count), wide)
        elif isinstance(op, ac.CompareOp):
            cost.v += self._vector(self._val(op.count), _elem_bytes(op.lhs.type), call=op.mode.data)
        elif isinstance(op, ac.ReduceOp):
            sz = _elem_bytes(op.src.type)
            cost.v += self._vector(
                self._val(op.count), sz, math.log2(VECTOR_REPEAT_BYTES // sz), call=op.api.data
            )
        elif isinstance(op, ac.WholeReduceOp):  # as many repeats of a count-form Reduce*
            sz = _elem_bytes(op.src.type)
            lanes = VECTOR_REPEAT_BYTES // sz
            call = op.api.data.replace("Whole", "")
            n = self._val(op.repeat) * lanes
            cost.v += self._vector(n, sz, math.log2(lanes), call=call)
        elif isinstance(op, ac.BrcbOp):  # one repeat writes 8 DataBlocks (256 bytes)
            sz = _elem_bytes(op.dst.type)
            cost.v += self._vector(self._val(op.repeat) * VECTOR_REPEAT_BYTES // sz, sz)
        elif isinstance(op, ac.GetValueOp) or op.name.startswith("ascendc.scalar_"):
            cost.s += SCALAR_OP_CYCLES  # GetValue, and the scalar-loop kernels' scalar ops
        elif isinstance(op, ac.SyncAllOp):
            cost.s += SYNC_ALL_CYCLES
        elif isinstance(op, ac.DataCacheCleanOp):
            cost.s += SCALAR_OP_CYCLES if op.index is not None else DCACHE_ENTIRE_CYCLES
        elif isinstance(op, scf.IfOp):
            taken = op.true_region if self._val(op.cond) else op.false_region
            if taken.blocks:  # the branch this core takes (the condition is index arithmetic)
                self._block(taken.block, cost)
        elif isinstance(op, _CUBE_OPS):
            self._cube(op, cost)
        elif isinstance(op, scf.ForOp):
            self._loop(op, cost)

    def _cube(self, op: Operation, cost: TileCost) -> None:
        """Matmul objects: remember their index, tail and GM operands; cost each Iterate
        (module doc)."""
        if isinstance(op, ac.MatmulObjectOp):
            self.matmul_index.setdefault(op.result, len(self.matmul_index))
            return
        if isinstance(op, ac.MatmulSetTailOp):
            self.tails[op.mm] = (self._val(op.m), self._val(op.n), self._val(op.k))
            return
        if isinstance(op, ac.MatmulSetTensorAOp | ac.MatmulSetTensorBOp):
            self._note_source(op.tensor)
            return
        assert isinstance(op, ac.MatmulIterateOp)
        i = self.matmul_index.get(op.mm, 0)
        fields = ("singleCoreM", "singleCoreN", "singleCoreK", "baseN", "baseK", "stepKa")
        t = {f: self.tiling.get(f"mm{i}_{f}", 0) for f in (*fields, "depthA1")}
        m, n, k = self.tails.get(op.mm, (t["singleCoreM"], t["singleCoreN"], t["singleCoreK"]))
        from pyasc_mlir.dialects.asc import element_bits

        sz = element_bits(op.mm.type.element_type) // 8  # type: ignore[attr-defined]
        rate = 1.0 if sz == 2 else self.cube_fp32_rate  # 16-bit types, else modelled as fp32
        fractals = ceil_div(m, CUBE_FRACTAL) * ceil_div(n, CUBE_FRACTAL) * ceil_div(k, CUBE_FRACTAL)
        cycles = fractals / rate + CUBE_ISSUE_CYCLES
        cost.m += cycles
        ab = (m * k + k * n) * sz
        chunk = min(k, max(1, t["stepKa"] * t["baseK"]))
        double = t["depthA1"] >= 2 * t["stepKa"] > 0 and chunk < k
        cost.cube_bytes += ab
        cost.iterates.append(_Iterate(cycles, ab, (m + n) * chunk * sz, double))
        c_bytes = m * t["baseN"] * 4
        cost.mte2_bytes += c_bytes
        if self.platform.arch == "dav-c220":
            cost.mte3_bytes += c_bytes

    def _note_source(self, tensor: SSAValue) -> None:
        """Record the kernel argument (GM tensor) a Matmul operand views and its bytes."""
        v = tensor
        while isinstance(v.owner, ac.SubviewOp):
            v = v.owner.source
        if isinstance(v.owner, ac.GlobalBufferOp):
            t = v.owner.addr.type
            if isinstance(t, MemRefType):
                self.cube_sources[v.owner.addr] = math.prod(t.get_shape()) * _elem_bytes(v.type)

    def _block(self, block: Block, cost: TileCost) -> None:
        for op in block.ops:
            self._op(op, cost)

    def _loop(self, op: scf.ForOp, cost: TileCost) -> None:
        lb, ub, step = self._val(op.lb), self._val(op.ub), max(1, self._val(op.step))
        trips = max(0, ceil_div(ub - lb, step))
        block = op.body.block
        iv = block.args[0]
        if trips > MAX_UNROLL:
            self.env[iv] = lb
            body = TileCost()
            self._block(block, body)
            cost.add(body, trips)
        elif not _memoizable(block):
            for i in range(trips):
                self.env[iv] = lb + i * step
                self._block(block, cost)
        else:
            self._alike(block, [lb + i * step for i in range(trips)], cost)
        cost.s += SCALAR_OP_CYCLES * trips

    def _alike(self, block: Block, ivs: list[int], cost: TileCost) -> None:
        """Add the cost of the loop body ``block`` at each induction value of ``ivs``:
        iterations alike (same :func:`cost_keys` values) cost alike, as tile iterations do,
        so each distinct key is walked once, and a body whose keys are all defined before the
        loop once (a scalar-loop kernel's body, walked per element, was most of the cost of
        compiling one)."""
        if block not in self.keys:
            self.keys[block] = cost_keys(block)
        keys = self.keys[block]
        iv = block.args[0]
        if not ivs:
            return
        if not any(_defined_in(v, block) for v in keys):
            self.env[iv] = ivs[0]
            body = TileCost()
            self._block(block, body)
            cost.add(body, len(ivs))
            return
        seen: dict[tuple[int, ...], TileCost] = {}
        for i in ivs:
            self.env[iv] = i
            for inner in block.ops:
                self._index(inner)
            key = tuple(self._key(v) for v in keys)
            if key not in seen:
                seen[key] = TileCost()
                self._block(block, seen[key])
            cost.add(seen[key])

    def run(self, block_idx: int = 0) -> tuple[TileCost, list[TileCost]]:
        """Cost of the code before the tile loop, and of each tile iteration, on core
        ``block_idx`` (``GetBlockIdx()``). Iterations alike (same :func:`cost_keys` values and
        Matmul tails, on any core this walker walked) share one ``TileCost`` object."""
        self.block_idx, self.env, self.tails = block_idx, {}, {}
        pre = TileCost()
        tiles: list[TileCost] = []
        for op in self.kernel.body.block.ops:
            if isinstance(op, scf.ForOp):
                lb, ub = self._val(op.lb), self._val(op.ub)
                tiles += self._tiles(op.body.block, range(lb, ub, max(1, self._val(op.step))))
            else:
                self._op(op, pre)
        return pre, tiles

    def _tiles(self, body: Block, us: range) -> list[TileCost]:
        """The cost of each tile iteration ``u in us`` of the loop ``body``: every one walked,
        or, for a long loop with a uniform middle, its ends walked and its middle probed
        (module doc)."""
        if len(us) <= 2 * EDGE_TILES + PROBE_TILES:
            return [self._tile(body, u) for u in us]
        head = [self._tile(body, u) for u in us[:EDGE_TILES]]
        middle = us[EDGE_TILES:-EDGE_TILES]
        steady, after = head[-1], dict(self.tails)
        stride = max(1, len(middle) // PROBE_TILES)
        for u in middle[::stride]:
            if self._tile(body, u) is not steady or self.tails != after:
                self.tails = after
                body_tiles = [self._tile(body, u) for u in middle]
                break
        else:
            body_tiles = [steady] * len(middle)
        return head + body_tiles + [self._tile(body, u) for u in us[-EDGE_TILES:]]

    def _key(self, v: SSAValue) -> int:
        """The value of a :func:`cost_keys` value before the iteration runs."""
        if isinstance(v.owner, ac.GetBlockIdxOp):
            return self.block_idx
        if isinstance(v.owner, ac.TilingFieldOp):
            return self.tiling.get(v.owner.field.data, 0)
        return self._val(v)

    def _tile(self, body: Block, u: int) -> TileCost:
        """The cost of tile iteration ``u`` of the loop ``body`` (walked, or an earlier
        iteration's with the same key)."""
        self.env[body.args[0]] = u
        for op in body.ops:
            self._index(op)
        if body not in self.keys:
            self.keys[body] = cost_keys(body)
        tails = tuple(x for mm, t in self.tails.items() for x in (self.matmul_index[mm], *t))
        key = (id(body), *(self._key(v) for v in self.keys[body]), *tails)
        if key not in self.memo:
            c = TileCost(s=SCALAR_TILE_CYCLES)
            self._block(body, c)
            self.memo[key] = (c, dict(self.tails))
        c, after = self.memo[key]
        self.tails = dict(after)
        return c


_ADDRESSES: dict[type[Operation], str] = {
    ac.SubviewOp: "offset",
    ac.GetValueOp: "index",
    sc.ScalarGetOp: "index",
    sc.ScalarSetOp: "index",
}
"""Operands that address memory: they do not change an op's cost."""
_STATEFUL = (*_CUBE_OPS, ac.InitQueueOp)
"""Ops whose walk changes the walker's state beyond index values (Matmul tails and sources,
queue depth): a loop holding one is walked iteration by iteration."""


def _memoizable(body: Block) -> bool:
    """Whether a loop ``body``'s iterations may share the cost of an earlier one with the
    same :func:`cost_keys` values (no op in it changes the walker's state)."""
    return not any(isinstance(op, _STATEFUL) for op in body.walk())


_INDEX_OPS = (ac.TilingFieldOp, ac.GetBlockIdxOp)


def _is_index_op(op: Operation) -> bool:
    return isinstance(op, _INDEX_OPS) or op.dialect_name() == "arith"


def _within(op: Operation, body: Block) -> bool:
    """``op`` sits in ``body`` or in a region of one of its ops, at any depth."""
    blk = op.parent_block()
    while blk is not None and blk is not body:
        parent = blk.parent_op()
        blk = parent.parent_block() if parent is not None else None
    return blk is body


def _defined_in(v: SSAValue, body: Block) -> bool:
    """``v`` is an argument of ``body`` or the result of an op in it (at any depth)."""
    owner = v.owner
    return owner is body if isinstance(owner, Block) else _within(owner, body)


def _nested(op: Operation, body: Block) -> bool:
    """``op`` sits in a region of an op of ``body`` (not in ``body`` itself)."""
    return op.parent_block() is not body and _within(op, body)


def cost_keys(body: Block) -> list[SSAValue]:
    """The values one iteration of the loop ``body`` costs as a function of: the index
    operands of its ops and the conditions of its ``scf.if`` ops (addresses excepted,
    :data:`_ADDRESSES`; index arithmetic only through what it computes), traced back through
    the index arithmetic of nested loops to values defined in ``body`` itself or before it
    (``body``'s loop variable included), or to a tiling field or ``GetBlockIdx()`` in a nested
    loop. A nested loop's variable is not a key: its loop's bounds are."""
    work: list[SSAValue] = []
    for op in body.walk():
        if not _is_index_op(op):
            address = getattr(op, _ADDRESSES.get(type(op), ""), None)
            work += [
                v
                for v in op.operands
                if (isinstance(v.type, IndexType) or isinstance(op, scf.IfOp)) and v is not address
            ]
    seen: set[SSAValue] = set()
    keys: list[SSAValue] = []
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        owner = v.owner
        if isinstance(owner, Block):
            parent = owner.parent_op()
            if owner is body or parent is None or not _within(parent, body):
                keys.append(v)
        elif not _nested(owner, body) or isinstance(owner, _INDEX_OPS):
            keys.append(v)
        else:
            work += owner.operands
    return keys
