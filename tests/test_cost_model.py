"""The NPU cost model (modeled figures): byte accounting, pipeline overlap, roofline."""

from __future__ import annotations

import pytest
from helpers import softmax

import pyasc_mlir as pa
from pyasc_mlir.cost_model import VECTOR_ISSUE_CYCLES, estimate, pipeline_cycles
from pyasc_mlir.cost_walker import TileCost
from pyasc_mlir.pipeline import lower
from pyasc_mlir.platform import get_platform


def add(x, y):
    return x + y


def _module(fn, shapes, dtype="float32", double_buffer=True):
    stages, _, _ = lower(
        fn, [pa.TensorDesc(s, dtype) for s in shapes], fn.__name__, "910B2", double_buffer
    )
    return stages["ascendc"]


def test_gm_bytes_and_roofline_of_an_even_split():
    # 192 rows of 128 fp32 over 48 cores: 4 rows each; two inputs read, one output written.
    (e,) = estimate(_module(add, [(192, 128), (192, 128)]))
    assert e.block_dim == 48
    assert e.gm_bytes == 3 * 192 * 128 * 4
    plat = get_platform("910B2")
    assert e.roofline_us == pytest.approx(e.gm_bytes / (plat.hbm_gbps * 1e9) * 1e6)
    assert e.time_us >= e.roofline_us  # the model never beats the bandwidth bound


def test_vector_cycles_follow_256_byte_repeats():
    (e,) = estimate(_module(add, [(48, 64), (48, 64)]))  # one 64-lane fp32 row per core
    # Add of 128 elements (count rounded to 128) = 512 B = 2 repeats + issue overhead.
    assert e.pipe_us["V"] * get_platform("910B2").clock_mhz == pytest.approx(
        2 + VECTOR_ISSUE_CYCLES
    )


def test_double_buffering_overlaps_pipes():
    on = estimate(_module(softmax, [(8192, 1024)], "float16", True))[0]
    off = estimate(_module(softmax, [(8192, 1024)], "float16", False))[0]
    assert on.buffers == 2 and off.buffers == 1
    assert on.time_us < off.time_us
    # Same kernel costed with one buffer per queue: the recurrence serialises the pipes.
    serial = estimate(_module(softmax, [(8192, 1024)], "float16", True), buffers=1)[0]
    assert serial.time_us > on.time_us
    assert on.bound in ("MTE2", "V", "MTE3", "S")


def test_pipeline_recurrence():
    tiles = [TileCost(mte2=10, v=5, mte3=2) for _ in range(4)]
    # One buffer per queue: copy-in of tile i+1 waits for compute of tile i (its buffer), but
    # copy-out of tile i (another queue) overlaps it.
    assert pipeline_cycles(tiles, 1) == 4 * (10 + 5) + 2
    # Two buffers: copy-in bound, 4 x 10 then the last compute and copy-out.
    assert pipeline_cycles(tiles, 2) == 4 * 10 + 5 + 2
    assert pipeline_cycles([], 2) == 0


def test_profiler_labels_modeled_figures():
    import numpy as np

    op = pa.compile(add, [pa.TensorDesc((7, 33), "float32")] * 2)
    x = np.ones((7, 33), np.float32)
    with pa.profiler() as prof:
        op(x, x)
        op(x, x)
    (row,) = prof.report()
    assert row["calls"] == 2 and row["modeled_us"] > 0 and row["cpu_build_us_median"] > 0
    assert "modeled" in prof.table()


def test_pyasc_profile_command(tmp_path, capsys):
    from pyasc_mlir.tools.cli import main

    src = tmp_path / "ops.py"
    src.write_text("import pyasc_mlir as pa\n\n\ndef scale(x, k):\n    return x * k\n")
    assert (
        main(
            [
                "profile",
                f"{src}::scale",
                "--shape",
                "64,256",
                "--const",
                "3.0",
                "--repeats",
                "2",
                "--json",
            ]
        )
        == 0
    )
    import json

    (row,) = json.loads(capsys.readouterr().out)
    assert row["name"] == "scale" and row["calls"] == 2 and row["modeled_us"] > 0
    assert row["gm_bytes"] >= 2 * 64 * 256 * 2
