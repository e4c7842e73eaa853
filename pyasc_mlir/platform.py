"""Ascend platform table: the only place hardware numbers live.

Source: Huawei's public Ascend documentation and platform configuration files as summarised in
``shared/ASCEND_FACTS.md`` (CANN 8.x). Sizes are in bytes, clocks in MHz.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyasc_mlir.errors import PyAscUsageError, SourceLoc

KIB = 1024
"""Bytes in a KiB."""
GIB = 1024 * 1024 * KIB
"""Bytes in a GiB."""

# --- SoC-independent facts (shared/ASCEND_FACTS.md, "Platforms" and "API semantics") ---------

DATA_BLOCK_BYTES = 32
"""A DataBlock: the unit of UB addressing and of ``DataCopy`` lengths (bytes)."""
DATA_BLOCK_BITS = DATA_BLOCK_BYTES * 8
"""Bits in one DataBlock: a ``Compare`` bit mask fills whole DataBlocks, so mask buffers hold a
multiple of this many elements (one bit each)."""
DCACHE_LINE_BYTES = 64
"""A scalar data-cache line: ``GlobalTensor::SetValue``/``GetValue`` go through each core's
DCache, which writes GM back by 64-byte lines (Ascend C API reference, ``SetValue``), so GM
addresses that different cores write with scalars must be at least a line apart."""
VECTOR_REPEAT_BYTES = 256
"""Bytes one vector instruction repeat processes (128 fp16 or 64 fp32 lanes)."""
MAX_REPEAT_TIMES = 255
"""Largest ``repeatTime`` of one mask/repeat-form vector instruction (Ascend C API reference)."""
MAX_REPEAT_STRIDE = 255
"""Largest repeat stride (in DataBlocks) of a mask/repeat-form vector instruction, e.g.
``Duplicate``'s ``dstRepeatStride`` (uint8 field; Ascend C API reference)."""
MAX_BLOCK_STRIDE = 65535
"""Largest block stride (in DataBlocks) of a mask/repeat-form vector instruction, e.g.
``Duplicate``'s ``dstBlockStride`` (uint16 field; Ascend C API reference)."""
EVENT_ID_NUM = 8
"""Hardware event ids per pipe pair: ``SetFlag``/``WaitFlag`` take ``EVENT_ID0`` ..
``EVENT_ID7`` (Ascend C API reference, SetFlag/WaitFlag)."""
MAX_BLOCK_COUNT = 4095
"""Largest ``blockCount`` of one ``DataCopy``/``DataCopyPad`` (``DataCopyParams``,
``DataCopyExtParams``; Ascend C API reference)."""
UB_ALIGN_BYTES = DATA_BLOCK_BYTES
"""Alignment of Unified Buffer tensors (bytes): one DataBlock."""
L1_ALIGN_BYTES = DATA_BLOCK_BYTES
"""Alignment of L1 buffers (bytes)."""
L0A_ALIGN_BYTES = 512
"""Alignment of L0A buffers (bytes): one 16x16 fp16 fractal."""
L0B_ALIGN_BYTES = 512
"""Alignment of L0B buffers (bytes): one 16x16 fp16 fractal."""
L0C_ALIGN_BYTES = 64
"""Alignment of L0C buffers (bytes)."""
CUBE_FRACTAL = 16
"""Cube fractal edge (elements): the Cube multiplies 16x16x16 fp16 per cycle, so Matmul base
blocks (``baseM``, ``baseN``, ``baseK``) are multiples of 16."""
ND_STRIDE_MAX = 65535
"""Documented range ``[1, 65535]`` of the ``TCubeTiling`` ND row-stride fields (``Ka``, ``N``;
``M``, ``Kb`` transposed; Ascend C API reference, "TCubeTiling structure")."""
MAX_MATMUL_OBJECTS = 4
"""``REGIST_MATMUL_OBJ``: at most four Matmul objects per kernel (Ascend C API reference)."""
LIB_API_WORKSPACE_BYTES = 16 * 1024 * 1024
"""The system workspace the host allocates for a kernel that uses the Matmul API: what
``GetLibApiWorkSpaceSize()`` reports (host API reference: "the size of the system workspace",
no number given; 16 MiB is the system workspace the public Ascend C Matmul kernel-launch
samples allocate for the Atlas A2). The kernel passes it on with ``SetSysWorkspace``."""
UB_SYSTEM_RESERVED_BYTES = 256
"""UB bytes the system keeps for itself (the kernel never sees them). The UB a kernel can use
is the UB minus this area (shared/ASCEND_FACTS.md, "Platforms": "Usable UB for a kernel: 192
KiB minus 256 B"), taken as what ``GetCoreMemSize(CoreMemType::UB)`` (host tiling API,
PlatformAscendC; the page gives no number) reports: 196352 B on a 910B."""
UB_DEFAULT_RESERVED_BYTES = 8 * KIB
"""UB bytes the compiler keeps free on top of the system area when it plans its buffers (a
margin: no public document makes the hardware refuse them, so the CPU runtime does not)."""
MAX_QUE_BUFFERS = 64
"""Most queue buffers of one kernel: the ``num`` of every ``TPipe::InitBuffer(que, num, len)``
together (Ascend C API reference, InitBuffer: "一个kernel中所有的buffer num之和不能超过64")."""
MAX_PAD_BLOCK_LEN_BYTES = (1 << 21) - 1
"""Largest ``blockLen`` (bytes) of a ``DataCopyPad`` with ``DataCopyExtParams``: the burst
length of the padded GM<->UB move is a 21-bit field, range ``[0, 2^21 - 1]`` (CCE intrinsic
reference, "搬运并补padding", ``lenBurst``)."""

# --- Layout units the compiler derives from those facts ---------------------------------------

LANE_ALIGN = DATA_BLOCK_BYTES // 2
"""Elements per UB row slot (16): one DataBlock of fp16, so every row starts on a DataBlock for
fp16 (32 B) and fp32 (64 B) alike."""
COUNT_ALIGN = VECTOR_REPEAT_BYTES // 2
"""Vector op counts and UB buffer sizes are multiples of this many elements (128): one whole
fp16 repeat, two fp32 repeats."""


def cube_k0(itemsize: int) -> int:
    """Elements along ``K`` in one Cube fractal row for an element of ``itemsize`` bytes: one
    DataBlock (16 for fp16, 8 for fp32; Ascend C docs, NZ format ``C0``)."""
    return DATA_BLOCK_BYTES // itemsize


def ub_usable(ub_bytes: int) -> int:
    """UB a kernel may allocate out of ``ub_bytes`` (bytes): UB minus the 256 B system area
    minus the 8 KiB default reserve (shared/ASCEND_FACTS.md, "Platforms")."""
    return ub_bytes - UB_SYSTEM_RESERVED_BYTES - UB_DEFAULT_RESERVED_BYTES


def ceil_div(x: int, m: int) -> int:
    """``ceil(x / m)`` for integers, ``m > 0``."""
    return -(-x // m)


def round_up(x: int, m: int) -> int:
    """``x`` rounded up to a multiple of ``m`` (``m > 0``)."""
    return ceil_div(x, m) * m


@dataclass(frozen=True)
class Platform:
    """One Ascend SoC.

    Attributes:
        name: SoC name, e.g. ``"910B2"``.
        arch: core architecture (``dav-c220`` = split AIC/AIV, ``dav-m200`` = coupled).
        cube_cores: AI Cube cores (AIC).
        vector_cores: AI Vector cores (AIV); the bound for ``blockDim`` of vector kernels.
        clock_mhz: core clock in MHz.
        ub_bytes: Unified Buffer per vector core, bytes.
        l1_bytes, l0a_bytes, l0b_bytes, l0c_bytes: cube-side buffers, bytes.
        l2_bytes: L2 cache, bytes.
        hbm_gbps: whole-chip HBM bandwidth, GB/s (approximate, public figure).
        hbm_bytes: device memory (global memory, GM) of one chip, bytes: the bound on one
            tensor (see :data:`HBM_SOURCES`).
    """

    name: str
    arch: str
    cube_cores: int
    vector_cores: int
    clock_mhz: int
    ub_bytes: int
    l1_bytes: int
    l0a_bytes: int
    l0b_bytes: int
    l0c_bytes: int
    l2_bytes: int
    hbm_gbps: float
    hbm_bytes: int

    @property
    def ub_usable_bytes(self) -> int:
        """UB a kernel may allocate (bytes): :func:`ub_usable` of :attr:`ub_bytes`."""
        return ub_usable(self.ub_bytes)

    @property
    def ub_kernel_bytes(self) -> int:
        """UB available to a kernel on the hardware (bytes): :attr:`ub_bytes` minus the system
        area, what ``GetCoreMemSize(CoreMemType::UB)`` reports. The CPU runtime refuses UB
        allocations only beyond this (``-DPYASC_UB_USABLE``); the compiler plans within the
        smaller :attr:`ub_usable_bytes`."""
        return self.ub_bytes - UB_SYSTEM_RESERVED_BYTES


@dataclass(frozen=True)
class CostConstants:
    """The constants of the cost model (``pyasc_mlir.cost_model``; every time it gives is
    MODELED). One set for all operators.

    Attributes:
        min_kernel_us: the least device time of any kernel (µs): launch, block dispatch and
            the end-of-kernel synchronisation, overlapped with the kernel's own work (a kernel
            takes ``max(min_kernel_us, its modeled work)``).
        hbm_gbps: sustained chip bandwidth of GM traffic that reaches HBM (GB/s).
        l2_write_gbps: chip rate of GM writes the L2 absorbs (GB/s).
        l2_absorb_bytes: how much of a kernel's output the L2 absorbs (write-back) before
            writes spill to HBM (bytes). Reads always come from HBM: the published runs evict
            L2 before each run.
        core_gm_bytes_per_cycle: most GM bytes one core's copy pipes move per cycle, so a
            kernel on few cores does not get the chip's bandwidth.
        cube_fp32_rate: fp32 Cube throughput relative to fp16 (fractals per cycle).
        cube_gm_bytes_per_cycle: most GM bytes one Cube core's MTE2 moves into L1 per cycle
            (A and B of ``Matmul::Iterate``).
        l2_read_gbps: chip rate of GM reads the L2 serves: re-reads of data a kernel has
            already read, when its unique input bytes fit ``l2_absorb_bytes`` (GB/s).
        source: where the numbers come from.
    """

    min_kernel_us: float
    hbm_gbps: float
    l2_write_gbps: float
    l2_absorb_bytes: float
    core_gm_bytes_per_cycle: float
    cube_fp32_rate: float
    cube_gm_bytes_per_cycle: float
    l2_read_gbps: float
    source: str


COST_910B2 = CostConstants(
    min_kernel_us=5.53,
    hbm_gbps=1151.0,
    l2_write_gbps=5217.0,
    l2_absorb_bytes=137.8e6,
    core_gm_bytes_per_cycle=32.0,
    cube_fp32_rate=0.27,
    cube_gm_bytes_per_cycle=85.3,
    l2_read_gbps=5217.0,
    source=(
        "min_kernel_us, hbm_gbps, l2_write_gbps, l2_absorb_bytes: least-squares fit "
        "(benchmarks/calibrate.py) to the published 910B2 device times of the built-in "
        "Sigmoid and Maximum kernels of hicann/cann-bench (tasks/metadata/910b2.json; cases "
        "in benchmarks/data/cann_bench_910b2.json; fit and validation errors in "
        "benchmarks/results/calibration.md); core_gm_bytes_per_cycle: one 32-byte DataBlock "
        "per cycle per core (an assumption: 48 AIV x 32 B x 1.8 GHz = 2.76 TB/s, above what "
        "any published elementwise case reaches); cube_fp32_rate: fp32 GEMM at about 0.27x "
        "the fp16 rate on the 910B2 (the measured figure quoted in issue 14); "
        "cube_gm_bytes_per_cycle: the LOWER BOUND the published fp16 GEMM 4096^3 (437 µs "
        "host-timed on a 910B2, so an upper bound on device time) implies, rounded down: output "
        "blocks whose f32 accumulator fits L0C, each streaming its A rows and B columns over "
        "the whole K, move at least 1.611 GB (128x256 blocks), 1/24 of it per Cube core at "
        "least, in at most 437 µs at 1.8 GHz: >= 85.3 B/cycle (benchmarks/calibrate_cube.py, "
        "benchmarks/results/calibration_cube.md); l2_read_gbps: an ASSUMPTION, the fitted "
        "l2_write_gbps (the only L2 rate the data measures); the same GEMM needs at least "
        "4.08 TB/s of L2 reads (benchmarks/calibrate_cube.py)"
    ),
)
"""The calibrated constants (Ascend 910B2)."""


def cost_constants(platform: Platform) -> CostConstants:
    """The cost-model constants of ``platform``: the 910B2 fit, its bandwidths scaled by the
    platform's HBM bandwidth and its L2 absorption by the L2 size, relative to the 910B2's (an
    ASSUMPTION for the SoCs no published measurement covers: 910B1/B3/B4, 310P3)."""
    ref = PLATFORMS["910B2"].hbm_gbps
    if platform.name == "910B2":
        return COST_910B2
    scale = platform.hbm_gbps / ref
    return CostConstants(
        COST_910B2.min_kernel_us,
        COST_910B2.hbm_gbps * scale,
        COST_910B2.l2_write_gbps * scale,
        COST_910B2.l2_absorb_bytes * platform.l2_bytes / PLATFORMS["910B2"].l2_bytes,
        COST_910B2.core_gm_bytes_per_cycle,
        COST_910B2.cube_fp32_rate,
        COST_910B2.cube_gm_bytes_per_cycle,
        COST_910B2.l2_read_gbps * scale,
        f"910B2 fit scaled by HBM bandwidth {platform.hbm_gbps:g}/{ref:g} GB/s (assumption)",
    )


HBM_SOURCES = {
    "910B": "64 GB HBM2e per Ascend 910B chip (Gitee AI compute docs, 'Ascend 910B', "
    "https://ai.gitee.com/docs/compute/clusters_gpu/ascend_gpu); some 910B4 boards "
    "carry 32 GB, and the bound keeps the larger configuration",
    "310P3": "48 GB LPDDR4X per Ascend 310P chip in its largest public configuration, the "
    "Atlas 300I Duo card (2 chips, 96 GB, about 204 GB/s per chip; elektronikpraxis.de "
    "and Gamers Nexus teardown, 2025); the Atlas 300I Pro carries 24 GB",
}
"""Where each ``hbm_bytes`` figure comes from. The figure bounds the size of ONE tensor
(``compile`` refuses a larger one), so where boards of one SoC differ it is the largest."""


def _b910(name: str, cube: int, vec: int, clock: int, l2_mb: int, hbm: float) -> Platform:
    return Platform(
        name,
        "dav-c220",
        cube,
        vec,
        clock,
        192 * KIB,
        512 * KIB,
        64 * KIB,
        64 * KIB,
        128 * KIB,
        l2_mb * 1024 * KIB,
        hbm,
        64 * GIB,
    )


PLATFORMS: dict[str, Platform] = {
    "910B1": _b910("910B1", 24, 48, 1850, 192, 1600.0),
    "910B2": _b910("910B2", 24, 48, 1800, 192, 1600.0),
    "910B3": _b910("910B3", 20, 40, 1800, 192, 1600.0),
    "910B4": _b910("910B4", 20, 40, 1500, 96, 800.0),
    "310P3": Platform(
        "310P3",
        "dav-m200",
        8,
        8,
        1060,
        256 * KIB,
        1024 * KIB,
        64 * KIB,
        64 * KIB,
        256 * KIB,
        16 * 1024 * KIB,
        200.0,
        48 * GIB,
    ),
}
DEFAULT_PLATFORM = "910B2"
"""The platform used when none is named (``@jit``, ``compile``, pass options, interpreters)."""


def get_platform(name: str | None = None) -> Platform:
    """Look up a platform by name (default :data:`DEFAULT_PLATFORM`, ``910B2``).

    Raises:
        PyAscUsageError: (a ``ValueError``) unknown name; the message lists the known ones.
            Not located: the public API locates it at the user's call (``compile``), the
            tools report it as theirs.
    """
    key = name or DEFAULT_PLATFORM
    if key not in PLATFORMS:
        raise unknown_platform(key, None)
    return PLATFORMS[key]


def unknown_platform(name: str, loc: SourceLoc | None) -> PyAscUsageError:
    """The error for an unknown platform ``name`` (at ``loc``), listing the known ones."""
    return PyAscUsageError(
        f"unknown Ascend platform {name!r}; known: {', '.join(PLATFORMS)}",
        loc,
        f"name one of {', '.join(PLATFORMS)} (default {DEFAULT_PLATFORM})",
    )


def header_defines(platform: Platform) -> list[str]:
    """The g++ ``-D`` flags that give the CPU ``kernel_operator.h`` its hardware numbers.

    The header holds no hardware number of its own (docs/CPU_RUNTIME.md): sizes in bytes of the
    platform's UB (whole and usable) and cube-side buffers, then the DataBlock, the vector
    repeat, the Cube fractal edge, the ``TCubeTiling`` ND stride limit, the mask/repeat-form
    limits (repeat count, repeat and block strides), the number of event ids, the copy and
    queue limits (``blockCount``, the ``DataCopyPad`` ``blockLen``, queue buffers per kernel)
    and the vector core count (a cross-core ``SyncAll`` refuses a launch with more blocks).
    ``PYASC_UB_USABLE`` is :attr:`Platform.ub_kernel_bytes` (what ``GetCoreMemSize(UB)``
    reports), not the compiler's planning budget.
    """
    return [
        f"-DPYASC_UB_BYTES={platform.ub_bytes}",
        f"-DPYASC_UB_USABLE={platform.ub_kernel_bytes}",
        f"-DPYASC_L1_BYTES={platform.l1_bytes}",
        f"-DPYASC_L0A_BYTES={platform.l0a_bytes}",
        f"-DPYASC_L0B_BYTES={platform.l0b_bytes}",
        f"-DPYASC_L0C_BYTES={platform.l0c_bytes}",
        f"-DPYASC_DATA_BLOCK_BYTES={DATA_BLOCK_BYTES}",
        f"-DPYASC_REPEAT_BYTES={VECTOR_REPEAT_BYTES}",
        f"-DPYASC_CUBE_FRACTAL={CUBE_FRACTAL}",
        f"-DPYASC_ND_STRIDE_MAX={ND_STRIDE_MAX}",
        f"-DPYASC_MAX_REPEAT={MAX_REPEAT_TIMES}",
        f"-DPYASC_MAX_REPEAT_STRIDE={MAX_REPEAT_STRIDE}",
        f"-DPYASC_MAX_BLOCK_STRIDE={MAX_BLOCK_STRIDE}",
        f"-DPYASC_EVENT_ID_NUM={EVENT_ID_NUM}",
        f"-DPYASC_MAX_BLOCK_COUNT={MAX_BLOCK_COUNT}",
        f"-DPYASC_MAX_PAD_BLOCK_LEN={MAX_PAD_BLOCK_LEN_BYTES}",
        f"-DPYASC_MAX_QUE_BUFFERS={MAX_QUE_BUFFERS}",
        f"-DPYASC_AIV_CORES={platform.vector_cores}",
    ]
