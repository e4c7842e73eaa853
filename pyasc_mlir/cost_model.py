"""A pipe-level cost model of an Ascend AI core running an ``ascendc``-level kernel (MODELED).

Every figure this module returns is a model estimate, not a measurement on an NPU.

How a kernel is costed (core 0, which holds the largest share of work units):
1. The kernel IR is walked with the tiling values and ``GetBlockIdx() = 0``; index arithmetic is
   evaluated exactly and every loop is iterated (a loop of more than ``MAX_UNROLL`` iterations is
   costed once and multiplied), so tail tiles are costed as they are.
2. Each tile-loop iteration gets a cycle count per pipe:
   * MTE2 (GM -> UB) and MTE3 (UB -> GM): ``bytes / bytes_per_cycle`` plus
     ``COPY_ISSUE_CYCLES`` per copy instruction, where ``bytes_per_cycle`` is the core's share
     (``/ blockDim``) of the chip's effective bandwidth for the kernel's whole GM traffic under
     the L2 model (:func:`gm_seconds`: reads from HBM, writes absorbed by the L2 up to a
     capacity, the rest to HBM), at most ``CostConstants.core_gm_bytes_per_cycle``. The
     constants are CALIBRATED: fitted to published 910B2 device times of built-in kernels
     (``pyasc_mlir.platform.COST_910B2``, ``benchmarks/calibrate.py``,
     ``benchmarks/results/calibration.md``). UB -> UB ``DataCopy`` runs on the vector pipe.
   * V (vector): ``ceil(count * sizeof(T) / 256)`` repeats per instruction — 256 bytes per
     repeat per cycle (ASCEND_FACTS.md; the op table's ``repeat_cycles`` per call, 1 for every
     op) — plus ``VECTOR_ISSUE_CYCLES``; ``Cast`` counts the wider
     type; reductions add ``log2`` of the lanes of one repeat for the in-repeat tree.
   * S (scalar): ``SCALAR_TILE_CYCLES`` per tile iteration plus ``SCALAR_OP_CYCLES`` per
     scalar read (``GetValue``) and per loop iteration inside the tile.
   * M (cube, MODELED): each ``Matmul::Iterate`` of a ``[m, n]`` block over ``k`` costs
     ``ceil(m/16) * ceil(n/16) * ceil(k/16)`` fractal products at one per cycle for fp16
     (16x16x16 MACs per cycle, ASCEND_FACTS.md) and at ``CostConstants.cube_fp32_rate`` per
     cycle for fp32, plus ``CUBE_ISSUE_CYCLES``. Its A block ``m x k`` and B block ``k x n``
     cross the Cube core's own MTE2 (pipe ``MTE2C``, GM -> L1) once per Iterate (no reuse
     across blocks) at :func:`cube_bytes_per_cycle`: the unique bytes of the GM tensors the
     Matmul objects read come from HBM, the re-reads from the L2 when those unique bytes fit
     it, and one core gets its share of the chip's rate, at most
     ``CostConstants.cube_gm_bytes_per_cycle`` (the lower bound the published fp16 GEMM
     implies: ``benchmarks/calibrate_cube.py``). With L1 double buffered (``depthA1 = 2 *
     stepKa``) the Iterate takes the first L1 chunk's load, then ``max(products, rest of the
     stream)``; single buffered, products plus stream. The f32 C block ``m x baseN`` that
     ``GetTensorC`` brings into UB is charged to the vector core's MTE2 bytes; on split-core
     SoCs (dav-c220) the C block also makes a GM round trip through the Matmul workspace,
     charged to MTE3 bytes. The Iterate's cycles join the copy-in stage of the recurrence
     below (the block arrives in UB when the Cube is done: ``GetTensorC`` waits for it).
3. Tiles are combined with a 3-stage pipeline recurrence over B buffers per queue (B = 2 with
   double buffering): ``A_i = max(A_{i-1}, V_{i-B}) + mte2_i + m_i``;
   ``V_i = max(A_i, V_{i-1}, C_{i-B}) + v_i + s_i``; ``C_i = max(V_i, C_{i-1}) + mte3_i``;
   the kernel's work is ``C_last`` (plus the once-per-kernel loads before the loop), but never
   less than all GM bytes of both copy pipes over the core's bandwidth share (MTE2 and MTE3
   share it); its time is that work but at least ``CostConstants.min_kernel_us`` (launch and
   dispatch, overlapped with the work: the smallest published kernels take 5-6 µs).
4. The bandwidth roofline is ``GM bytes / HBM bandwidth``; the bound pipe is the pipe with the
   largest total busy time.

The bandwidth, L2 and least-kernel-time constants are calibrated (above); the issue-overhead
constants below are assumptions (order of magnitude of published Ascend C performance guides),
not fitted: the published cases are memory-bound and do not constrain them. Not modeled: L2
reuse between the kernels of one operator (an intermediate tensor is charged as an HBM read).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects import opset
from pyasc_mlir.dialects.attrs import kernel_platform
from pyasc_mlir.emitter import kernels, tiling_fields
from pyasc_mlir.platform import (
    CUBE_FRACTAL,
    DATA_BLOCK_BYTES,
    VECTOR_REPEAT_BYTES,
    CostConstants,
    Platform,
    ceil_div,
    cost_constants,
    get_platform,
)

VECTOR_ISSUE_CYCLES = 8
"""Assumed fixed cost of issuing one vector instruction (cycles)."""
COPY_ISSUE_CYCLES = 30
"""Assumed fixed cost of one DataCopy/DataCopyPad instruction (cycles)."""
SCALAR_TILE_CYCLES = 200
"""Assumed scalar work per tile iteration: queue handling, address arithmetic (cycles)."""
SCALAR_OP_CYCLES = 4
"""Assumed cost of one scalar read or one inner-loop iteration (cycles)."""
CUBE_ISSUE_CYCLES = 64
"""Assumed fixed cost of one Matmul Iterate + GetTensorC round (message, L1/L0 loads), cycles."""
MAX_UNROLL = 4096
PIPES = ("MTE2", "V", "MTE3", "S", "M", "MTE2C")
"""The modeled pipes: the vector core's MTE2 (GM -> UB), V, MTE3 (UB -> GM), S (scalar), M (the
Cube's fractal products) and MTE2C (the Cube core's MTE2: A and B from GM into L1)."""


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
class _Cost:
    mte2: float = 0.0
    v: float = 0.0
    mte3: float = 0.0
    s: float = 0.0
    m: float = 0.0
    mte2_bytes: int = 0
    mte3_bytes: int = 0
    cube_bytes: int = 0
    iterates: list[_Iterate] = field(default_factory=list)

    def add(self, other: _Cost, times: float = 1.0) -> None:
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


@dataclass
class KernelEstimate:
    """Modeled execution of one kernel (all times MODELED, in µs).

    Attributes:
        name: kernel name. block_dim: cores used. tiles: tile iterations on core 0.
        buffers: copies per queue (2 = double buffered).
        pipe_us: busy time of each pipe on core 0 (MTE2, V, MTE3, S, M = cube).
        time_us: modeled kernel time: the pipeline recurrence on core 0, at least
            ``min_kernel_us``.
        bound: the pipe with the largest busy time.
        gm_bytes: bytes core 0 moves times blockDim (approximately the kernel's GM traffic).
        roofline_us: GM bytes / chip HBM bandwidth.
        min_kernel_us: the least time of any kernel (launch and dispatch, overlapped).
        work_us: the pipeline recurrence alone (``time_us`` without the floor): what
            distinguishes two variants of a kernel that both sit at the floor.
    """

    name: str
    block_dim: int
    tiles: int
    buffers: int
    pipe_us: dict[str, float]
    time_us: float
    bound: str
    gm_bytes: int
    roofline_us: float
    min_kernel_us: float = 0.0
    work_us: float = 0.0
    per_tile: list[dict[str, float]] = field(default_factory=list, repr=False)

    @property
    def roofline_fraction(self) -> float:
        """Roofline time / modeled time (1.0 = at the bandwidth bound)."""
        return self.roofline_us / self.time_us if self.time_us else 0.0


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


class _Walker:
    def __init__(self, kernel: func.FuncOp, platform: Platform):
        self.kernel = kernel
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

    def _op(self, op: Operation, cost: _Cost) -> None:
        if self._arith(op):
            return
        if isinstance(op, ac.TilingFieldOp):
            self.env[op.result] = self.tiling.get(op.field.data, 0)
        elif isinstance(op, ac.GetBlockIdxOp):
            self.env[op.result] = 0
        elif isinstance(op, ac.InitQueueOp):
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
        elif isinstance(op, ac.GetValueOp):
            cost.s += SCALAR_OP_CYCLES
        elif isinstance(op, _CUBE_OPS):
            self._cube(op, cost)
        elif isinstance(op, scf.ForOp):
            self._loop(op, cost)

    def _cube(self, op: Operation, cost: _Cost) -> None:
        """Matmul objects: remember their index, tail and GM operands; cost each Iterate
        (module doc)."""
        if isinstance(op, ac.MatmulObjectOp):
            self.matmul_index[op.result] = len(self.matmul_index)
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

    def _block(self, block: Block, cost: _Cost) -> None:
        for op in block.ops:
            self._op(op, cost)

    def _loop(self, op: scf.ForOp, cost: _Cost) -> None:
        lb, ub, step = self._val(op.lb), self._val(op.ub), max(1, self._val(op.step))
        trips = max(0, ceil_div(ub - lb, step))
        iv = op.body.block.args[0]
        if trips > MAX_UNROLL:
            self.env[iv] = lb
            body = _Cost()
            self._block(op.body.block, body)
            cost.add(body, trips)
        else:
            for i in range(trips):
                self.env[iv] = lb + i * step
                self._block(op.body.block, cost)
        cost.s += SCALAR_OP_CYCLES * trips

    def run(self) -> tuple[_Cost, list[_Cost]]:
        """Cost of the code before the tile loop, and of each tile iteration."""
        pre = _Cost()
        tiles: list[_Cost] = []
        for op in self.kernel.body.block.ops:
            if isinstance(op, scf.ForOp):
                lb, ub = self._val(op.lb), self._val(op.ub)
                step = max(1, self._val(op.step))
                iv = op.body.block.args[0]
                for u in range(lb, ub, step):
                    self.env[iv] = u
                    c = _Cost(s=SCALAR_TILE_CYCLES)
                    self._block(op.body.block, c)
                    tiles.append(c)
            else:
                self._op(op, pre)
        return pre, tiles


def pipeline_cycles(tiles: list[_Cost], buffers: int) -> float:
    """Finish time of the last copy-out under the 3-stage recurrence (see module doc)."""
    a: list[float] = []
    v: list[float] = []
    c: list[float] = []
    for i, t in enumerate(tiles):
        free_in = v[i - buffers] if i >= buffers else 0.0
        free_out = c[i - buffers] if i >= buffers else 0.0
        a.append(max(a[-1] if a else 0.0, free_in) + t.mte2 + t.m)
        v.append(max(a[-1], v[-1] if v else 0.0, free_out) + t.v + t.s)
        c.append(max(v[-1], c[-1] if c else 0.0) + t.mte3)
    return c[-1] if c else 0.0


def gm_seconds(
    read_bytes: float, write_bytes: float, platform: Platform, c: CostConstants
) -> float:
    """Chip-wide time (s) of a kernel's GM traffic under the L2 model: its reads come from HBM
    (the published runs evict L2 first); its writes stay in L2 up to
    ``CostConstants.l2_absorb_bytes`` and spill to HBM beyond that."""
    spill = min(write_bytes, max(0.0, write_bytes - c.l2_absorb_bytes))
    hbm = (read_bytes + spill) / (c.hbm_gbps * 1e9)
    return hbm + (write_bytes - spill) / (c.l2_write_gbps * 1e9)


def core_bytes_per_cycle(
    read_bytes: float, write_bytes: float, block_dim: int, platform: Platform, c: CostConstants
) -> float:
    """GM bytes one core moves per cycle: its share of the chip's effective bandwidth for this
    much traffic (:func:`gm_seconds`), at most ``CostConstants.core_gm_bytes_per_cycle``."""
    total = read_bytes + write_bytes
    if total <= 0:
        return c.core_gm_bytes_per_cycle
    chip = total / gm_seconds(read_bytes, write_bytes, platform, c)
    share = chip / max(1, block_dim) / (platform.clock_mhz * 1e6)
    return min(share, c.core_gm_bytes_per_cycle)


def cube_bytes_per_cycle(
    cube_bytes: float, unique_bytes: float, block_dim: int, platform: Platform, c: CostConstants
) -> float:
    """A/B bytes one Cube core moves from GM into L1 per cycle: its share of the chip's rate
    for ``cube_bytes`` of Matmul reads, of which ``unique_bytes`` (the GM tensors the Matmul
    objects read) come from HBM and the re-reads from the L2 at ``l2_read_gbps`` when the
    unique bytes fit ``l2_absorb_bytes`` (from HBM otherwise); at most
    ``CostConstants.cube_gm_bytes_per_cycle``."""
    if cube_bytes <= 0:
        return c.cube_gm_bytes_per_cycle
    unique = min(cube_bytes, unique_bytes)
    again = cube_bytes - unique
    l2_rate = c.l2_read_gbps if unique <= c.l2_absorb_bytes else c.hbm_gbps
    chip_s = unique / (c.hbm_gbps * 1e9) + again / (l2_rate * 1e9)
    share = cube_bytes / chip_s / max(1, block_dim) / (platform.clock_mhz * 1e6)
    return min(share, c.cube_gm_bytes_per_cycle)


def chip_seconds(
    raw: _Cost, block_dim: int, unique_bytes: float, platform: Platform, c: CostConstants
) -> float:
    """The least time (s) of a kernel's whole GM traffic on the chip (``raw``: core 0's bytes,
    times ``block_dim``): the vector cores' reads and the Cube cores' unique A/B bytes from HBM,
    the Cube re-reads from the L2 (from HBM when the unique bytes do not fit it), the writes
    under :func:`gm_seconds`'s L2 model: the vector and Cube cores share the HBM."""
    cube = raw.cube_bytes * block_dim
    unique = min(cube, unique_bytes)
    again = cube - unique
    fits = unique <= c.l2_absorb_bytes
    reads = raw.mte2_bytes * block_dim + unique + (0 if fits else again)
    base = gm_seconds(reads, raw.mte3_bytes * block_dim, platform, c)
    return base + (again / (c.l2_read_gbps * 1e9) if fits else 0.0)


def _with_bandwidth(c: _Cost, bytes_per_cycle: float, cube_bpc: float) -> _Cost:
    """``c`` with its copy bytes turned into MTE2/MTE3 cycles and its Iterates into the Cube
    stage's cycles (``m``: products and the A/B stream, overlapped as L1 allows)."""
    return _Cost(
        c.mte2 + c.mte2_bytes / bytes_per_cycle,
        c.v,
        c.mte3 + c.mte3_bytes / bytes_per_cycle,
        c.s,
        sum(i.cycles(cube_bpc) * i.count for i in c.iterates),
        c.mte2_bytes,
        c.mte3_bytes,
        c.cube_bytes,
    )


@dataclass
class KernelWalk:
    """What a kernel does on core 0, before any bandwidth is applied: the code before the tile
    loop (``pre``) and each tile iteration, in issue cycles and GM bytes (:func:`walk_kernel`)."""

    name: str
    block_dim: int
    buffers: int
    pre: _Cost
    tiles: list[_Cost]
    cube_unique_bytes: int = 0
    """Bytes of the GM tensors the kernel's Matmul objects read (each counted once)."""


def walk_kernel(kernel: func.FuncOp, platform: Platform) -> KernelWalk:
    """Walk one ascendc-level kernel for core 0 (module doc, step 1)."""
    w = _Walker(kernel, platform)
    pre, tiles = w.run()
    unique = sum(w.cube_sources.values())
    return KernelWalk(kernel.sym_name.data, w.tiling["block_dim"], w.buffers, pre, tiles, unique)


def time_walk(
    walk: KernelWalk,
    platform: Platform,
    buffers: int | None = None,
    constants: CostConstants | None = None,
) -> KernelEstimate:
    """The modeled time of a walked kernel under ``constants`` (default: the platform's
    calibrated :func:`~pyasc_mlir.platform.cost_constants`)."""
    c = constants or cost_constants(platform)
    nbuf = buffers if buffers is not None else walk.buffers
    block_dim = walk.block_dim
    raw = _Cost()
    raw.add(walk.pre)
    for t in walk.tiles:
        raw.add(t)
    bpc = core_bytes_per_cycle(
        raw.mte2_bytes * block_dim, raw.mte3_bytes * block_dim, block_dim, platform, c
    )
    cbpc = cube_bytes_per_cycle(
        raw.cube_bytes * block_dim, walk.cube_unique_bytes, block_dim, platform, c
    )
    pre = _with_bandwidth(walk.pre, bpc, cbpc)
    tiles = [_with_bandwidth(t, bpc, cbpc) for t in walk.tiles]
    total = _with_bandwidth(raw, bpc, cbpc)
    # MTE2 and MTE3 share the core's GM bandwidth: the kernel cannot finish before all of its
    # bytes have crossed it, however the pipes overlap.
    shared_gm = (total.mte2_bytes + total.mte3_bytes) / bpc
    # the vector and Cube cores share the chip's HBM: all of their traffic together
    chip = chip_seconds(raw, block_dim, walk.cube_unique_bytes, platform, c) * platform.clock_mhz
    cycles = max(
        pre.mte2 + pre.m + pre.v + pre.s + pipeline_cycles(tiles, nbuf), shared_gm, chip * 1e6
    )
    to_us = 1.0 / platform.clock_mhz
    busy = {
        "MTE2": total.mte2,
        "V": total.v,
        "MTE3": total.mte3,
        "S": total.s,
        "M": raw.m,
        "MTE2C": raw.cube_bytes / cbpc,
    }
    gm = (total.mte2_bytes + total.mte3_bytes + total.cube_bytes) * block_dim
    return KernelEstimate(
        name=walk.name,
        block_dim=block_dim,
        tiles=len(tiles),
        buffers=nbuf,
        pipe_us={k: x * to_us for k, x in busy.items()},
        time_us=max(c.min_kernel_us, cycles * to_us),
        bound=max(busy, key=lambda k: busy[k]),
        gm_bytes=gm,
        roofline_us=gm / (platform.hbm_gbps * 1e9) * 1e6,
        min_kernel_us=c.min_kernel_us,
        work_us=cycles * to_us,
        per_tile=[
            {"MTE2": t.mte2, "V": t.v, "MTE3": t.mte3, "S": t.s, "M": t.m} for t in tiles[:4]
        ],
    )


def estimate_kernel(
    kernel: func.FuncOp, platform: Platform, buffers: int | None = None
) -> KernelEstimate:
    """Model one ascendc-level kernel. ``buffers`` overrides the queue depth (1 or 2) to model
    the same kernel without or with double buffering."""
    return time_walk(walk_kernel(kernel, platform), platform, buffers)


def estimate(
    module: ModuleOp, platform: str | Platform | None = None, buffers: int | None = None
) -> list[KernelEstimate]:
    """Model every kernel of an ascendc-level module (MODELED times)."""
    plat = platform if isinstance(platform, Platform) else None
    out = []
    for k in kernels(module):
        if plat is None:
            plat = get_platform(
                kernel_platform(k) or (platform if isinstance(platform, str) else None)
            )
        out.append(estimate_kernel(k, plat, buffers))
    return out
