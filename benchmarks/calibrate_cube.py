"""What the published fp16 GEMM time implies for the Cube side of the cost model (910B2).

    python benchmarks/calibrate_cube.py   # prints the bounds and writes
                                          # benchmarks/results/calibration_cube.md

The publication's GEMM (``gemm#1`` of ``benchmarks/data/cann_bench_910b2.json``: 4096^3 fp16,
about 437 µs) is HOST-timed, so it is an UPPER bound on the device time, and every rate derived
from it is a LOWER bound. No kernel of ours enters the derivation; its assumptions are:

* the built-in computes the product in output blocks whose f32 accumulator fits L0C
  (``bm * bn * 4 <= l0c_bytes``, ``bm``, ``bn`` multiples of 16), and each block streams its
  A rows and B columns over the whole ``K`` from GM into L1 (a 4096-long fp16 strip of even 16
  rows is 128 KiB; L1 cannot keep the strips of several blocks, so nothing is reused across
  blocks);
* the blocks are spread over all Cube cores and the busiest core moves at least the average.

Then the least chip traffic over all such blockings (edge blocks clipped), divided by the Cube
cores, over the published time, is the least per-core A/B rate consistent with the
publication (``cube_gm_bytes_per_cycle``), and the least traffic minus the unique bytes (read
once from HBM at the fitted ``hbm_gbps``), over what remains of the time, is the least L2 read
rate (``l2_read_gbps`` must be at least that).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.cann_cases import PLATFORM, Case, load_cases  # noqa: E402
from pyasc_mlir.platform import (  # noqa: E402
    COST_910B2,
    CUBE_FRACTAL,
    Platform,
    ceil_div,
    get_platform,
)

RESULTS = ROOT / "benchmarks" / "results"
ACC_BYTES = 4
"""f32 accumulation in L0C."""
MAX_EDGE = 256
"""Largest block edge considered (elements): past it the other edge is under 32."""


def gemm_case() -> Case:
    """The published fp16 GEMM (an upper bound: host-timed)."""
    (c,) = [c for c in load_cases() if c.op == "gemm" and c.dtype == "float16"]
    assert c.upper_bound
    return c


def block_traffic(m: int, n: int, k: int, bm: int, bn: int, itemsize: int) -> int:
    """Chip A/B bytes of ``bm x bn`` output blocks over an ``m x n x k`` product: every block
    row streams A's rows once per block column and vice versa (edge blocks clipped), so
    ``(ceil(n / bn) * m + ceil(m / bm) * n) * k * itemsize``."""
    return (ceil_div(n, bn) * m + ceil_div(m, bm) * n) * k * itemsize


def least_traffic(m: int, n: int, k: int, itemsize: int, plat: Platform) -> tuple[int, int, int]:
    """``(bytes, bm, bn)``: the least :func:`block_traffic` over blocks that fit L0C."""
    edges = range(CUBE_FRACTAL, MAX_EDGE + 1, CUBE_FRACTAL)
    return min(
        (block_traffic(m, n, k, bm, bn, itemsize), bm, bn)
        for bm in edges
        for bn in edges
        if bm * bn * ACC_BYTES <= plat.l0c_bytes
    )


def bounds(c: Case | None = None) -> dict[str, float]:
    """The lower bounds the published GEMM implies (module doc)."""
    c = c or gemm_case()
    plat = get_platform(PLATFORM)
    (m, k), (_, n) = c.shapes
    traffic, bm, bn = least_traffic(m, n, k, 2, plat)
    unique = (m * k + k * n) * 2
    seconds = c.published_us * 1e-6
    per_core = traffic / plat.cube_cores
    hbm_s = unique / (COST_910B2.hbm_gbps * 1e9)
    return {
        "published_us": c.published_us,
        "block_m": bm,
        "block_n": bn,
        "least_traffic_bytes": traffic,
        "unique_bytes": unique,
        "cube_gm_bytes_per_cycle": per_core / (seconds * plat.clock_mhz * 1e6),
        "l2_read_gbps": (traffic - unique) / (seconds - hbm_s) / 1e9,
    }


def markdown(b: dict[str, float]) -> str:
    k = COST_910B2
    return "\n".join(
        [
            "# Cube side of the cost model: what the published GEMM implies (910B2)",
            "",
            f"fp16 GEMM 4096^3, published {b['published_us']:g} µs HOST-timed: an upper bound "
            "on device time, so the rates below are LOWER bounds (assumptions: "
            "benchmarks/calibrate_cube.py).",
            "",
            f"- least A/B traffic of L0C-sized blocks: {b['least_traffic_bytes'] / 1e9:.3f} GB "
            f"({int(b['block_m'])} x {int(b['block_n'])} blocks), unique "
            f"{b['unique_bytes'] / 1e6:.1f} MB",
            f"- per Cube core A/B rate >= {b['cube_gm_bytes_per_cycle']:.1f} B/cycle; "
            f"committed `cube_gm_bytes_per_cycle` = {k.cube_gm_bytes_per_cycle:g}",
            f"- L2 read rate >= {b['l2_read_gbps']:.0f} GB/s; committed `l2_read_gbps` = "
            f"{k.l2_read_gbps:g} (assumed equal to the fitted `l2_write_gbps`)",
            "",
        ]
    )


def main() -> int:
    b = bounds()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "calibration_cube.md").write_text(markdown(b))
    print(markdown(b))
    return 0


if __name__ == "__main__":
    sys.exit(main())
