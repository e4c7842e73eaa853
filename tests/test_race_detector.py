"""The pipe-synchronisation race detector of the CPU runtime (``pyasc_cpu/race.h``).

``tests/conformance/race_sync.cpp`` computes ``y = 2 * x`` (two tiles per block) as Ascend C
samples do, once correctly synchronised and once with one synchronisation left out in one
block, for each hazard kind (RAW, WAR, WAW) between the MTE2, V, MTE3 and S pipes: through TQue
misuse and through a missing WaitFlag. In memory-check builds every broken case must be
reported naming both APIs, both pipes, the UB byte, the block and both source lines; every
correct case must run clean and match numpy. Without memory check (or with
``-DPYASC_RACE_CHECK=0``) nothing is reported: the CPU runs the pipes in program order.
"""

from __future__ import annotations

import re
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cpu_run_helpers import shared_pch_cache

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import examples  # noqa: E402
import pyasc_mlir as pa  # noqa: E402
from pyasc_mlir.platform import get_platform  # noqa: E402
from pyasc_mlir.runtime.cpu import (  # noqa: E402
    CpuKernel,
    KernelError,
    KernelMemoryError,
    build_library,
)

PLATFORM = get_platform("910B2")
HERE = Path(__file__).resolve().parent / "conformance"
KERNELS = ("race_queue_kernel", "race_flag_kernel")
ENTRY_CPP = "\n".join(
    ['#include "kernel_operator.h"']
    + [f'extern "C" void {k}(GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR);' for k in KERNELS]
    + [f"PYASC_CPU_ENTRY_NAMED({k})" for k in KERNELS]
    + ["PYASC_CPU_LAST_ERROR()", ""]
)
N = 72  # floats per tile: 288 bytes, not a whole 256-byte repeat
BLOCKS = 3
LOC = "race_sync.py"


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    cache = shared_pch_cache(tmp_path_factory.mktemp("pyasc_cache"))
    sources = {"race_sync.cpp": (HERE / "race_sync.cpp").read_text(), "zz_entry.cpp": ENTRY_CPP}
    return {
        "plain": build_library(sources, PLATFORM, cache_dir=cache),
        "memcheck": build_library(sources, PLATFORM, cache_dir=cache, memcheck=True),
        "memcheck_no_race": build_library(
            sources, PLATFORM, cache_dir=cache, memcheck=True, extra_flags=["-DPYASC_RACE_CHECK=0"]
        ),
    }


def run(libs: dict[str, Path], name: str, op: int, bad_block: int, build: str = "memcheck"):
    rng = np.random.default_rng(op)
    x = rng.uniform(-4, 4, BLOCKS * 2 * N).astype(np.float32)
    y = np.full_like(x, np.nan)
    k = CpuKernel(libs[build], entry=f"pyasc_run_block_{name}")
    k.run(BLOCKS, [x, y], struct.pack("<3i", op, N, bad_block))
    return x, y


def reference(op: int, x: np.ndarray) -> np.ndarray:
    tiles = x.reshape(-1, N).copy()
    if op == 16:
        tiles[:, 0] = 5.0
    if op == 18:
        return np.repeat(tiles.sum(axis=1, dtype=np.float64), N).astype(np.float32)
    if op == 24:
        tiles[:] = 1.0
    return (tiles * 2).ravel()


# (kernel, op): the correct cases.
CORRECT = [
    ("race_queue_kernel", 0),
    ("race_flag_kernel", 10),
    ("race_flag_kernel", 15),
    ("race_flag_kernel", 16),
    ("race_flag_kernel", 18),
    ("race_flag_kernel", 23),
    ("race_flag_kernel", 24),
]


@pytest.mark.parametrize(("name", "op"), CORRECT)
@pytest.mark.parametrize("build", ["plain", "memcheck"])
def test_synchronised_kernels_run_clean_and_match_numpy(libs, name, op, build) -> None:
    x, y = run(libs, name, op, bad_block=-1, build=build)
    np.testing.assert_allclose(y, reference(op, x), rtol=1e-5, atol=1e-4)


# (kernel, op, kind, current API + pipe, earlier API + pipe, current line, earlier line, sync)
BROKEN = [
    (
        "race_queue_kernel",
        1,
        "RAW",
        "Muls",
        "PIPE_V",
        "DataCopy(GM->UB)",
        "PIPE_MTE2",
        42,
        41,
        "MTE2_V> (or EnQue/DeQue of a TQue<TPosition::VECIN>)",
    ),
    (
        "race_queue_kernel",
        2,
        "RAW",
        "DataCopy(UB->GM)",
        "PIPE_MTE3",
        "Muls",
        "PIPE_V",
        43,
        42,
        "V_MTE3> (or EnQue/DeQue of a TQue<TPosition::VECOUT>)",
    ),
    (
        "race_queue_kernel",
        3,
        "WAR",
        "DataCopy(GM->UB)",
        "PIPE_MTE2",
        "Muls",
        "PIPE_V",
        41,
        42,
        "V_MTE2> (or FreeTensor/AllocTensor of a TQue<TPosition::VECIN>)",
    ),
    (
        "race_queue_kernel",
        4,
        "WAW",
        "DataCopy(GM->UB)",
        "PIPE_MTE2",
        "Duplicate",
        "PIPE_V",
        41,
        40,
        "V_MTE2>",
    ),
    (
        "race_queue_kernel",
        5,
        "WAR",
        "Muls",
        "PIPE_V",
        "DataCopy(UB->GM)",
        "PIPE_MTE3",
        42,
        43,
        "MTE3_V> (or FreeTensor/AllocTensor of a TQue<TPosition::VECOUT>)",
    ),
    (
        "race_flag_kernel",
        11,
        "RAW",
        "Muls",
        "PIPE_V",
        "DataCopy(GM->UB)",
        "PIPE_MTE2",
        55,
        51,
        "MTE2_V>",
    ),
    (
        "race_flag_kernel",
        12,
        "RAW",
        "DataCopy(UB->GM)",
        "PIPE_MTE3",
        "Muls",
        "PIPE_V",
        56,
        55,
        "V_MTE3>",
    ),
    (
        "race_flag_kernel",
        13,
        "WAR",
        "DataCopy(GM->UB)",
        "PIPE_MTE2",
        "Muls",
        "PIPE_V",
        51,
        55,
        "V_MTE2>",
    ),
    (
        "race_flag_kernel",
        14,
        "WAR",
        "Muls",
        "PIPE_V",
        "DataCopy(UB->GM)",
        "PIPE_MTE3",
        55,
        56,
        "MTE3_V>",
    ),
    (
        "race_flag_kernel",
        17,
        "RAW",
        "Muls",
        "PIPE_V",
        "LocalTensor::SetValue",
        "PIPE_S",
        55,
        54,
        "S_V>",
    ),
    (
        "race_flag_kernel",
        19,
        "RAW",
        "LocalTensor::GetValue",
        "PIPE_S",
        "ReduceSum",
        "PIPE_V",
        58,
        57,
        "V_S>",
    ),
    (
        "race_flag_kernel",
        20,
        "RAW",
        "LocalTensor::GetValue",
        "PIPE_S",
        "DataCopy(GM->UB)",
        "PIPE_MTE2",
        52,
        51,
        "MTE2_S>",
    ),
    (
        "race_flag_kernel",
        21,
        "WAW",
        "Duplicate",
        "PIPE_V",
        "DataCopy(GM->UB)",
        "PIPE_MTE2",
        53,
        51,
        "MTE2_V>",
    ),
]


@pytest.mark.parametrize("case", BROKEN, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_missing_synchronisation_is_reported(libs, case) -> None:
    name, op, kind, api, pipe, prev_api, prev_pipe, line, prev_line, sync = case
    bad = 1
    with pytest.raises(KernelMemoryError) as info:
        run(libs, name, op, bad_block=bad)
    msg = str(info.value)
    assert f"block {bad}" in msg and f"in block {bad}:" in msg, msg
    assert f"{api}: data race ({kind}," in msg, msg
    writes = kind != "RAW"
    assert f"{api} {'writes' if writes else 'reads'} it on {pipe}" in msg, msg
    prev_writes = kind != "WAR"
    assert f"but {prev_api} {'wrote' if prev_writes else 'read'} it" in msg, msg
    assert f"on {prev_pipe} at {LOC}:{prev_line}:5 with no synchronisation" in msg, msg
    assert msg.rstrip().endswith(f"between that call and this call at {LOC}:{line}:5"), msg
    assert info.value.op == api and info.value.loc is not None
    assert (Path(info.value.loc.file).name, info.value.loc.line) == (LOC, line)
    assert f"SetFlag/WaitFlag<HardEvent::{sync}" in msg, msg
    # The byte named is inside the LocalTensor the current API accesses.
    byte = int(msg.split("on UB byte ")[1].split(" ")[0])
    off = int(msg.split("(offset ")[1].split(" ")[0])
    base = int(msg.split("LocalTensor at UB offset ")[1].split(")")[0])
    assert byte == base + off and 0 <= off < N * 4


@pytest.mark.parametrize("build", ["plain", "memcheck_no_race"])
@pytest.mark.parametrize("case", BROKEN, ids=lambda c: f"{c[0]}-{c[1]}")
def test_without_the_detector_the_broken_kernels_run(libs, case, build) -> None:
    """The CPU runs the pipes in program order: the broken kernels compute y = 2 * x (or the
    documented variant) there; only the detector sees the missing synchronisation."""
    name, op = case[0], case[1]
    x, y = run(libs, name, op, bad_block=1, build=build)
    ref = reference({17: 16, 19: 18, 20: 23, 21: 24}.get(op, 0), x)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-4)


def test_wait_flag_without_set_flag_is_an_error(libs) -> None:
    with pytest.raises(KernelError, match=r"WaitFlag<HardEvent::MTE3_V>\(3\): no SetFlag") as e:
        run(libs, "race_flag_kernel", 22, bad_block=2)
    assert "pending in block 2" in str(e.value) and "wait forever" in str(e.value)
    run(libs, "race_flag_kernel", 22, bad_block=2, build="plain")  # not checked without it


# --------------------------------------------------------------------------- emitted kernels


# Configurations of examples.E2E_CONFIGS (compiled once for the end-to-end tests too).
EXAMPLE_RUNS = [
    ("gelu_erf", "float16", (4, 7)),  # elementwise
    ("silu_mul", "float16", (2, 4097)),  # elementwise, long rows in chunks
    ("softmax", "float16", (100, 33)),  # row reductions, several rows per tile, V_S + GetValue
    ("residual_layernorm", "float32", (5, 513)),
]


def _compile_example(name: str, dtype: str, shape: tuple[int, ...], **kw: Any) -> Any:
    case = examples.get_case(name)
    arrays = case.make_inputs(np.random.default_rng(3), dtype, shape)
    op = pa.compile(
        case.kernel, case.args([pa.TensorDesc(a.shape, str(a.dtype)) for a in arrays]), **kw
    )
    return case, arrays, op


@pytest.mark.parametrize("config", EXAMPLE_RUNS, ids=lambda c: f"{c[0]}-{c[1]}")
def test_emitted_example_kernels_run_clean_under_memory_check(config) -> None:
    case, arrays, op = _compile_example(*config)
    with pa.enable_memory_check():
        got = op.run_cpu(*arrays)[0]
    assert op._cpu_memcheck.so_path != Path(op.info["library"])  # the memory-check build ran
    tol = case.tolerance(config[1])
    ref = case.reference(*arrays)
    assert examples.within_tolerance(got, ref, tol), examples.excess_error(got, ref, tol)


def swiglu(x, w, bg, v, bu):
    g = pa.matmul(x, w) + bg
    return g * pa.sigmoid(g) * (pa.matmul(x, v) + bu)


def test_emitted_matmul_mix_kernel_runs_clean_under_memory_check() -> None:
    """Two Cube matmuls (GetTensorC into VECIN) and the vector epilogue in one MIX kernel."""
    shapes = [(33, 100), (100, 17), (17,), (100, 17), (17,)]
    rng = np.random.default_rng(5)
    arrays = [rng.uniform(-1, 1, s).astype(np.float16) for s in shapes]
    op = pa.compile(swiglu, [pa.TensorDesc(s, "float16") for s in shapes])
    assert op.info["kernel_type"] == "MIX_AIC_1_1"
    with pa.enable_memory_check():
        got = op.run_cpu(*arrays)[0]
    assert op._cpu_memcheck.so_path != Path(op.info["library"])
    x, w, bg, v, bu = (a.astype(np.float64) for a in arrays)
    g = x @ w + bg
    np.testing.assert_allclose(got, g / (1 + np.exp(-g)) * (x @ v + bu), rtol=2e-2, atol=2e-2)


@pytest.fixture
def forget_edited_ops():
    """The tests below edit an operator's kernel.cpp in its output_dir; the in-memory compile
    cache would hand that operator to later compiles of the same key, so it is cleared."""
    yield
    pa.clear_memory_cache()


# A synchronisation taken out of the emitted softmax: (pattern, replacement, API, earlier API).
REMOVED = {
    "V_S": (
        r"SetFlag<HardEvent::V_S>\((ev\d+)\); WaitFlag<HardEvent::V_S>\(\1\);",
        "",
        "LocalTensor::GetValue: data race (RAW",
        "but ReduceMax wrote it",
    ),
    "EnQue/DeQue": (
        r"(\w+)\.EnQue\((\w+)\);\s*LocalTensor<(\w+)> (\w+) = \1\.DeQue<\3>\(\);",
        r"LocalTensor<\3> \4 = \2;",
        "Cast: data race (RAW",
        "but DataCopyPad(GM->UB) wrote it",
    ),
}


@pytest.mark.parametrize("removed", sorted(REMOVED))
def test_a_synchronisation_removed_from_an_emitted_kernel_is_caught(
    removed, tmp_path, forget_edited_ops
) -> None:
    pattern, repl, head, prev = REMOVED[removed]
    case, arrays, op = _compile_example("softmax", "float16", (100, 33), output_dir=tmp_path)
    path = tmp_path / "kernel.cpp"
    src, n = re.subn(pattern, repl, path.read_text(), count=1)
    assert n == 1
    path.write_text(src)
    with pa.enable_memory_check(), pytest.raises(pa.MemoryCheckError) as info:
        op.run_cpu(*arrays)
    msg = str(info.value)
    assert head in msg and prev in msg and "in block 0:" in msg, msg
    assert info.value.loc is not None and Path(info.value.loc.file).name == "softmax.py", msg
    assert "examples/softmax.py:" in msg.split("with no synchronisation")[0], msg


def linear_bias(x, w, b):
    return pa.matmul(x, w) + b


def test_emitted_matmul_result_copied_out_of_a_vecin_queue_is_synchronised(
    tmp_path, forget_edited_ops
) -> None:
    """C lands in a VECIN queue (GetTensorC -> VECIN), the bias Add runs in place and the
    result goes straight out: the queue's EnQue/DeQue order MTE2 before V only, so the emitted
    kernel adds V_MTE3 before the copy out and MTE3_V after it (MiniLM's fp32 projections);
    without the V_MTE3 the detector reports the race."""
    shapes = [(33, 100), (100, 17), (17,)]
    rng = np.random.default_rng(7)
    arrays = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    descs = [pa.TensorDesc(s, "float32") for s in shapes]
    op = pa.compile(linear_bias, descs, output_dir=tmp_path / "ok")
    broken = pa.compile(linear_bias, descs, output_dir=tmp_path / "broken")
    path = tmp_path / "broken" / "kernel.cpp"
    src = path.read_text()
    assert "TQue<TPosition::VECIN" in src and "SetFlag<HardEvent::V_MTE3>" in src
    assert src.index("SetFlag<HardEvent::V_MTE3>") < src.rindex("DataCopyPad(t")
    with pa.enable_memory_check():
        got = op.run_cpu(*arrays)[0]
    x, w, b = (a.astype(np.float64) for a in arrays)
    np.testing.assert_allclose(got, x @ w + b, rtol=1e-4, atol=1e-4)
    src, n = re.subn(
        r"SetFlag<HardEvent::V_MTE3>\((ev\d+)\); WaitFlag<HardEvent::V_MTE3>\(\1\);", "", src
    )
    assert n == 1
    path.write_text(src)
    with pa.enable_memory_check(), pytest.raises(pa.MemoryCheckError) as info:
        broken.run_cpu(*arrays)
    msg = str(info.value)
    assert "DataCopyPad(UB->GM): data race (RAW" in msg and "but Add wrote it" in msg, msg


def test_a_tile_kernel_copying_out_of_a_tbuf_is_synchronised_when_lowered() -> None:
    """``convert-asc-to-ascendc`` orders a copy out of a TBuf ("tmp" alloc) after the vector
    op that wrote it (V_MTE3) and the next writes after the copy (MTE3_V): the lowered tile
    kernel of tests/test_checks.py runs clean with the detector on and squares its input."""
    from test_checks import tile_kernel
    from xdsl.parser import Parser

    from pyasc_mlir.emit_host import emit_cpu_entry
    from pyasc_mlir.emitter import emit_kernel_source
    from pyasc_mlir.passes.registry import PASSES
    from pyasc_mlir.pipeline import make_context

    ctx = make_context()
    module = Parser(ctx, tile_kernel(length=64, out=64)).parse_module()
    PASSES["convert-asc-to-ascendc"]()().apply(ctx, module)
    src = emit_kernel_source(module)
    assert src.index("SetFlag<HardEvent::V_MTE3>") < src.index("DataCopy(gm")
    sources = {"kernel.cpp": src, "cpu_entry.cpp": emit_cpu_entry(module)}
    x = np.arange(64, dtype=np.float32) - 3
    y = np.zeros(64, np.float32)
    CpuKernel(build_library(sources, PLATFORM, memcheck=True)).run(1, [x, y], struct.pack("<q", 1))
    np.testing.assert_array_equal(y, x * x)
    broken = {**sources, "kernel.cpp": re.sub(r"WaitFlag<HardEvent::V_MTE3>\(ev\d+\);", "", src)}
    with pytest.raises(KernelMemoryError, match=r"DataCopy\(UB->GM\): data race \(RAW"):
        CpuKernel(build_library(broken, PLATFORM, memcheck=True)).run(
            1, [x, np.zeros(64, np.float32)], struct.pack("<q", 1)
        )
