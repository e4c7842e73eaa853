"""Ascend platform table: the only place hardware numbers live.

Source: Huawei's public Ascend documentation and platform configuration files as summarised in
``shared/ASCEND_FACTS.md`` (CANN 8.x). Sizes are in bytes, clocks in MHz.
"""

from __future__ import annotations

from dataclasses import dataclass

KIB = 1024
DATA_BLOCK_BYTES = 32
"""A DataBlock: the unit of UB addressing and of ``DataCopy`` lengths (bytes)."""
VECTOR_REPEAT_BYTES = 256
"""Bytes one vector instruction repeat processes (128 fp16 or 64 fp32 lanes)."""
UB_SYSTEM_RESERVED_BYTES = 256
UB_DEFAULT_RESERVED_BYTES = 8 * KIB


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

    @property
    def ub_usable_bytes(self) -> int:
        """UB a kernel may allocate: UB minus 256 B system area minus the 8 KiB default reserve."""
        return self.ub_bytes - UB_SYSTEM_RESERVED_BYTES - UB_DEFAULT_RESERVED_BYTES


def _b910(name: str, cube: int, vec: int, clock: int, l2_mb: int, hbm: float) -> Platform:
    return Platform(name, "dav-c220", cube, vec, clock, 192 * KIB, 512 * KIB, 64 * KIB,
                    64 * KIB, 128 * KIB, l2_mb * 1024 * KIB, hbm)


PLATFORMS: dict[str, Platform] = {
    "910B1": _b910("910B1", 24, 48, 1850, 192, 1600.0),
    "910B2": _b910("910B2", 24, 48, 1800, 192, 1600.0),
    "910B3": _b910("910B3", 20, 40, 1800, 192, 1600.0),
    "910B4": _b910("910B4", 20, 40, 1500, 96, 800.0),
    "310P3": Platform("310P3", "dav-m200", 8, 8, 1060, 256 * KIB, 1024 * KIB, 64 * KIB,
                      64 * KIB, 256 * KIB, 16 * 1024 * KIB, 200.0),
}
DEFAULT_PLATFORM = "910B2"


def get_platform(name: str | None = None) -> Platform:
    """Look up a platform by name (default ``910B2``).

    Raises:
        ValueError: unknown name; the message lists the known ones.
    """
    key = name or DEFAULT_PLATFORM
    if key not in PLATFORMS:
        raise ValueError(f"unknown Ascend platform {key!r}; known: {', '.join(PLATFORMS)}")
    return PLATFORMS[key]
