"""A pipe-level cost model of an Ascend AI core running an ``ascendc``-level kernel (MODELED).

Every figure this module returns is a model estimate, not a measurement on an NPU.

How a kernel is costed (each core, and the kernel at its slowest core):
1. The kernel IR is walked with the tiling values once per core ``b < blockDim``
   (``GetBlockIdx() = b``); index arithmetic is evaluated exactly and every loop is iterated (a
   loop of more than ``MAX_UNROLL`` iterations is costed once and multiplied), so tail tiles
   are costed as they are (tile iterations alike are walked once: ``pyasc_mlir.cost_walker``).
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
     scalar read (``GetValue``), scalar-unit op and loop iteration inside the tile; a
     cross-core ``SyncAll()`` costs ``SYNC_ALL_CYCLES`` (an ASSUMPTION: no published figure,
     see ``pyasc_mlir.cost_walker``). An ``scf.if`` costs the branch the core takes; the
     GM workspace view (``ascendc.workspace``) costs nothing by itself.
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
5. Steps 2-4 run for each distinct per-core work; the kernel's time is its slowest core's
   (units split unevenly, or units of unequal work such as causal attention's query blocks).
   Every core is charged as if all ``blockDim`` cores moved as many bytes as it does (its
   bandwidth share, the chip-traffic floor), so a kernel whose cores all do the same work is
   modeled exactly as before.

The bandwidth, L2 and least-kernel-time constants are calibrated (above); the issue-overhead
constants below are assumptions (order of magnitude of published Ascend C performance guides),
not fitted: the published cases are memory-bound and do not constrain them. Not modeled: L2
reuse between the kernels of one operator (an intermediate tensor is charged as an HBM read).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from pyasc_mlir.cost_walker import COPY_ISSUE_CYCLES as COPY_ISSUE_CYCLES
from pyasc_mlir.cost_walker import CUBE_ISSUE_CYCLES as CUBE_ISSUE_CYCLES
from pyasc_mlir.cost_walker import MAX_UNROLL as MAX_UNROLL
from pyasc_mlir.cost_walker import SCALAR_OP_CYCLES as SCALAR_OP_CYCLES
from pyasc_mlir.cost_walker import SCALAR_TILE_CYCLES as SCALAR_TILE_CYCLES
from pyasc_mlir.cost_walker import SYNC_ALL_CYCLES as SYNC_ALL_CYCLES
from pyasc_mlir.cost_walker import VECTOR_ISSUE_CYCLES as VECTOR_ISSUE_CYCLES
from pyasc_mlir.cost_walker import TileCost, Walker
from pyasc_mlir.dialects.attrs import kernel_platform
from pyasc_mlir.emitter import kernels
from pyasc_mlir.platform import (
    CostConstants,
    Platform,
    cost_constants,
    get_platform,
)

PIPES = ("MTE2", "V", "MTE3", "S", "M", "MTE2C")
"""The modeled pipes: the vector core's MTE2 (GM -> UB), V, MTE3 (UB -> GM), S (scalar), M (the
Cube's fractal products) and MTE2C (the Cube core's MTE2: A and B from GM into L1)."""


@dataclass
class KernelEstimate:
    """Modeled execution of one kernel (all times MODELED, in µs).

    Attributes:
        name: kernel name. block_dim: cores used. tiles: tile iterations on the slowest core.
        buffers: copies per queue (2 = double buffered).
        pipe_us: busy time of each pipe on the slowest core (MTE2, V, MTE3, S, M = cube).
        time_us: modeled kernel time: the pipeline recurrence on the slowest core, at least
            ``min_kernel_us``.
        bound: the pipe with the largest busy time.
        gm_bytes: bytes the slowest core moves times blockDim (at most a little above the
            kernel's GM traffic).
        roofline_us: GM bytes / chip HBM bandwidth.
        min_kernel_us: the least time of any kernel (launch and dispatch, overlapped).
        work_us: the pipeline recurrence alone (``time_us`` without the floor): what
            distinguishes two variants of a kernel that both sit at the floor.
        core: the slowest core's block index (the first of those alike).
        cores_us: ``(fastest, slowest)`` core's modeled time (µs; equal when all cores do the
            same work).
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
    core: int = 0
    cores_us: tuple[float, float] = (0.0, 0.0)
    per_tile: list[dict[str, float]] = field(default_factory=list, repr=False)

    @property
    def roofline_fraction(self) -> float:
        """Roofline time / modeled time (1.0 = at the bandwidth bound)."""
        return self.roofline_us / self.time_us if self.time_us else 0.0


def pipeline_cycles(tiles: list[TileCost], buffers: int) -> float:
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
    raw: TileCost, block_dim: int, unique_bytes: float, platform: Platform, c: CostConstants
) -> float:
    """The least time (s) of a kernel's whole GM traffic on the chip (``raw``: one core.s bytes,
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


def _with_bandwidth(c: TileCost, bytes_per_cycle: float, cube_bpc: float) -> TileCost:
    """``c`` with its copy bytes turned into MTE2/MTE3 cycles and its Iterates into the Cube
    stage's cycles (``m``: products and the A/B stream, overlapped as L1 allows)."""
    return TileCost(
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
class CoreWork:
    """What some cores do, before any bandwidth is applied: the code before the tile loop
    (``pre``) and each tile iteration, in issue cycles and GM bytes; ``cores``: the block
    indices (``GetBlockIdx()``) that do exactly this."""

    cores: list[int]
    pre: TileCost
    tiles: list[TileCost]


@dataclass
class KernelWalk:
    """What a kernel does on each of its cores (:func:`walk_kernel`): ``works``, one entry per
    distinct per-core work; ``pre`` and ``tiles`` are the first entry's (core 0's)."""

    name: str
    block_dim: int
    buffers: int
    works: list[CoreWork]
    cube_unique_bytes: int = 0
    """Bytes of the GM tensors the kernel's Matmul objects read (each counted once)."""

    @property
    def pre(self) -> TileCost:
        """Core 0's code before the tile loop."""
        return self.works[0].pre

    @property
    def tiles(self) -> list[TileCost]:
        """Core 0's tile iterations."""
        return self.works[0].tiles


def walk_kernel(kernel: func.FuncOp, platform: Platform) -> KernelWalk:
    """Walk one ascendc-level kernel for each of its ``block_dim`` cores (module doc, step 1);
    cores with the same work (the same costs, tile by tile) share one :class:`CoreWork`."""
    w = Walker(kernel, platform)
    works: dict[tuple[object, ...], CoreWork] = {}
    for b in range(max(1, w.tiling.get("block_dim", 1))):
        pre, tiles = w.run(b)
        key = (repr(pre), *map(id, tiles))
        works.setdefault(key, CoreWork([], pre, tiles)).cores.append(b)
    unique = sum(w.cube_sources.values())
    return KernelWalk(
        kernel.sym_name.data, w.tiling["block_dim"], w.buffers, list(works.values()), unique
    )


def time_walk(
    walk: KernelWalk,
    platform: Platform,
    buffers: int | None = None,
    constants: CostConstants | None = None,
) -> KernelEstimate:
    """The modeled time of a walked kernel under ``constants`` (default: the platform's
    calibrated :func:`~pyasc_mlir.platform.cost_constants`): its slowest core's
    (:attr:`KernelEstimate.core`, module doc step 5)."""
    es = [_time_core(walk, w, platform, buffers, constants) for w in walk.works]
    slow = max(es, key=lambda e: e.time_us)
    slow.cores_us = (min(e.time_us for e in es), slow.time_us)
    return slow


def _time_core(
    walk: KernelWalk,
    work: CoreWork,
    platform: Platform,
    buffers: int | None,
    constants: CostConstants | None,
) -> KernelEstimate:
    """The modeled time of ``work`` (the cores that do it, module doc steps 2-4)."""
    c = constants or cost_constants(platform)
    nbuf = buffers if buffers is not None else walk.buffers
    block_dim = walk.block_dim
    raw = TileCost()
    raw.add(work.pre)
    for t in work.tiles:
        raw.add(t)
    bpc = core_bytes_per_cycle(
        raw.mte2_bytes * block_dim, raw.mte3_bytes * block_dim, block_dim, platform, c
    )
    cbpc = cube_bytes_per_cycle(
        raw.cube_bytes * block_dim, walk.cube_unique_bytes, block_dim, platform, c
    )
    pre = _with_bandwidth(work.pre, bpc, cbpc)
    tiles = [_with_bandwidth(t, bpc, cbpc) for t in work.tiles]
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
        core=work.cores[0],
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
