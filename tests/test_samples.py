"""The real-sample families of issue 9, run unmodified through ``pyasc cpu-run``.

Each ``tests/samples/*.cpp`` was written here from the public Ascend C documentation in the
style of the public samples (a KernelXxx class with Init/Process/CopyIn/Compute/CopyOut, TPipe,
TQue with BUFFER_NUM 2, a GM_ADDR entry, a tiling struct or constants). Every test runs the CLI
in a subprocess (as a user does) and compares the output file with numpy: bit for bit where the
operation is exact or correctly rounded, to a stated tolerance where the order of a sum
differs from numpy's (LayerNorm, Matmul). The WholeReduceSum+DataCopyPad, ReduceSum/Max/Min,
Compare/Select and DataCopyPad+Adds families live with their conformance suites and run through
``pyasc cpu-run`` in tests/test_samples_conformance.py.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from cpu_run_helpers import SAMPLES, CpuRun

RNG = np.random.default_rng(909)
BF16 = ml_dtypes.bfloat16
SLOW = pytest.mark.slow  # the extra cases of a family (one case per family stays fast)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return CpuRun(tmp_path_factory.mktemp("cache"), tmp_path_factory.mktemp("work"))


def ok(res):
    assert res.code == 0, res.stderr
    return res


def test_add_multicore_double_buffered(run):
    """Constants as the kernel-launch sample has them (8 cores x 8 tiles x 2 buffers), then a
    different split given with -D."""
    x, y = (RNG.standard_normal(8 * 2048).astype(np.float16) for _ in range(2))
    p = run.save(x=x, y=y)
    res = ok(
        run(
            SAMPLES / "add_custom.cpp",
            "--entry",
            "add_custom",
            "--block-dim",
            "8",
            p["x"],
            p["y"],
            "z:float16[16384]",
        )
    )
    np.testing.assert_array_equal(res.output("z"), x + y)
    x, y = (RNG.standard_normal(3 * 4 * 2 * 16).astype(np.float16) for _ in range(2))
    p = run.save(x=x, y=y)
    res = ok(
        run(
            SAMPLES / "add_custom.cpp",
            "--entry",
            "add_custom",
            "--block-dim",
            "3",
            "-D",
            "TOTAL_LENGTH=384",
            "-D",
            "USE_CORE_NUM=3",
            "-D",
            "TILE_NUM=4",
            p["x"],
            p["y"],
            "z:float16[384]",
        )
    )
    np.testing.assert_array_equal(res.output("z"), x + y)


@pytest.mark.parametrize(
    "total,tile,blocks", [(8 * 4 * 100, 96, 4), pytest.param(8 * 7, 16, 1, marks=SLOW)]
)
def test_sub_with_a_short_last_tile(run, total, tile, blocks):
    x, y = (RNG.standard_normal(total).astype(np.float32) for _ in range(2))
    x[:4] = [np.inf, -0.0, np.nan, 1e-40]  # special values pass through Sub as IEEE
    p = run.save(x=x, y=y)
    res = ok(
        run(
            SAMPLES / "sub_custom.cpp",
            "--entry",
            "sub_custom",
            "--block-dim",
            str(blocks),
            p["x"],
            p["y"],
            f"z:float32[{total}]",
            f"u32:{total},{tile}",
        )
    )
    np.testing.assert_array_equal(res.output("z"), x - y)


@pytest.mark.parametrize(
    "total,tile,blocks",
    [
        pytest.param(1, 16, 1, marks=SLOW),
        pytest.param(7, 16, 2, marks=SLOW),
        (33, 8, 4),
        pytest.param(513, 100, 8, marks=SLOW),
        (4097, 1000, 8),
    ],
)
def test_abs_unaligned_datacopypad(run, total, tile, blocks):
    x = RNG.standard_normal(total).astype(np.float16)
    x[: min(total, 3)] = [-0.0, -np.inf, np.nan][: min(total, 3)]
    p = run.save(x=x)
    res = ok(
        run(
            SAMPLES / "abs_unaligned.cpp",
            "--entry",
            "abs_unaligned",
            "--block-dim",
            str(blocks),
            p["x"],
            f"z:float16[{total}]",
            f"u32:{total},{tile}",
            "--memory-check",
        )
    )
    np.testing.assert_array_equal(res.output("z").view(np.uint16), np.abs(x).view(np.uint16))


@pytest.mark.parametrize(
    "total,tile,blocks", [pytest.param(16, 16, 1, marks=SLOW), (2 * 3 * 48, 48, 2)]
)
def test_cast_through_tbuf_with_bf16(run, total, tile, blocks):
    x = RNG.standard_normal(total).astype(BF16)
    y = (RNG.standard_normal(total) * 1e-3).astype(BF16)  # sums that round in bf16
    p = run.save(x=x, y=y)
    res = ok(
        run(
            SAMPLES / "cast_bf16_tbuf.cpp",
            "--entry",
            "add_bf16",
            "--block-dim",
            str(blocks),
            p["x"],
            p["y"],
            f"z:bfloat16[{total}]",
            f"u32:{total},{tile}",
        )
    )
    want = (x.astype(np.float32) + y.astype(np.float32)).astype(BF16)  # round to nearest even
    got = res.output("z")
    assert got.dtype == np.uint16  # the bf16 bit patterns (.npy has no bfloat16)
    np.testing.assert_array_equal(got, want.view(np.uint16))


@pytest.mark.parametrize(
    "dtype,entry", [(np.float16, "leakyrelu_half"), (np.float32, "leakyrelu_float")]
)
def test_leakyrelu(run, dtype, entry):
    total, blocks, tiles, alpha = 4 * 2 * 2 * 64, 4, 2, 0.25
    x = RNG.standard_normal(total).astype(dtype)
    p = run.save(x=x)
    res = ok(
        run(
            SAMPLES / "leakyrelu_custom.cpp",
            "--entry",
            entry,
            "--block-dim",
            str(blocks),
            p["x"],
            f"y:{np.dtype(dtype).name}[{total}]",
            f"u32:{total},{tiles}+f32:{alpha}",
        )
    )
    a = dtype(alpha)
    want = np.where(x >= 0, x, (x.astype(np.float32) * np.float32(a)).astype(dtype))
    np.testing.assert_array_equal(res.output("y"), want)


def _round(x: np.ndarray, mode: str) -> np.ndarray:
    return {
        "RINT": np.rint,
        "FLOOR": np.floor,
        "CEIL": np.ceil,
        "ROUND": lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5),
        "TRUNC": np.trunc,
    }[mode](x.astype(np.float64))


def _to_half(x: np.ndarray, mode: str) -> np.ndarray:
    """float32 -> float16 in a directed mode (values in the normal fp16 range): the nearest
    fp16 stepped one ulp toward the mode's direction where it lies on the wrong side."""
    near = x.astype(np.float16)
    if mode in ("NONE", "RINT"):
        return near
    back = near.astype(np.float32)
    down = np.where(back > x, np.nextafter(near, np.float16(-np.inf)), near)
    up = np.where(back < x, np.nextafter(near, np.float16(np.inf)), near)
    return {"FLOOR": down, "CEIL": up, "TRUNC": np.where(x >= 0, down, up)}[mode]


MODES = ["NONE", "RINT", "FLOOR", "CEIL", "ROUND", "TRUNC", "ODD"]


@pytest.mark.parametrize(
    "mode", ["RINT", "FLOOR", *(pytest.param(m, marks=SLOW) for m in ("CEIL", "ROUND", "TRUNC"))]
)
def test_cast_float_to_int32_round_modes(run, mode):
    n, blocks = 32, 2
    x = np.concatenate([np.arange(-4, 4, 0.5), RNG.uniform(-1000, 1000, 2 * n - 16)])
    x = x.astype(np.float32)
    p = run.save(x=x)
    res = ok(
        run(
            SAMPLES / "cast_round.cpp",
            "--entry",
            "cast_f32_s32",
            "--block-dim",
            str(blocks),
            p["x"],
            f"z:int32[{2 * n}]",
            f"u32:{n},{MODES.index(mode)}",
        )
    )
    np.testing.assert_array_equal(res.output("z"), _round(x, mode).astype(np.int32))


@pytest.mark.parametrize(
    "mode", ["NONE", "CEIL", *(pytest.param(m, marks=SLOW) for m in ("RINT", "FLOOR", "TRUNC"))]
)
def test_cast_float_to_half_round_modes(run, mode):
    n = 48
    x = RNG.uniform(-100, 100, n).astype(np.float32)
    x[:4] = [1 + 2**-11, -(1 + 2**-11), 1 + 3 * 2**-11, 2.0]  # fp16 ties and an exact value
    p = run.save(x=x)
    res = ok(
        run(
            SAMPLES / "cast_round.cpp",
            "--entry",
            "cast_f32_f16",
            "--block-dim",
            "1",
            p["x"],
            f"z:float16[{n}]",
            f"u32:{n},{MODES.index(mode)}",
        )
    )
    np.testing.assert_array_equal(res.output("z"), _to_half(x, mode))


def test_cast_pair_mode_the_a2_refuses_is_an_error_at_the_call(run):
    x = np.ones(16, np.float32)
    p = run.save(x=x)
    res = run(
        SAMPLES / "cast_round.cpp",
        "--entry",
        "cast_f32_s32",
        "--block-dim",
        "1",
        p["x"],
        "z:int32[16]",
        "u32:16,0",
    )
    assert res.code == 1
    assert "block 0 of 1" in res.stderr and "Cast: float -> int32_t" in res.stderr
    assert f"{SAMPLES / 'cast_round.cpp'}:" in res.stderr
    assert "AscendC::Cast(zLocal, xLocal, mode_, n_);" in res.stderr  # the source line
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize(
    "rows,cols,blocks", [pytest.param(1, 8, 1, marks=SLOW), (7, 40, 3), (33, 64, 8)]
)
def test_layernorm_basic_api(run, rows, cols, blocks):
    x = (RNG.standard_normal((rows, cols)) * 3 + 1).astype(np.float32)
    gamma = RNG.uniform(0.5, 1.5, cols).astype(np.float32)
    beta = RNG.standard_normal(cols).astype(np.float32)
    eps = 1e-5
    p = run.save(x=x, gamma=gamma, beta=beta)
    res = ok(
        run(
            SAMPLES / "layernorm_custom.cpp",
            "--entry",
            "layernorm_custom",
            "--block-dim",
            str(blocks),
            p["x"],
            p["gamma"],
            p["beta"],
            f"z:float32[{rows},{cols}]",
            f"u32:{rows},{cols}+f32:{eps}",
            "--memory-check",
        )
    )
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
    want = (x64 - mean) / np.sqrt(var + eps) * gamma + beta
    # fp32 with sums in a different order than float64: a few ulp of the row scale
    np.testing.assert_allclose(res.output("z"), want, rtol=1e-5, atol=1e-5)


BM, BN, BK = 32, 32, 16


def _tcube(m, n, k, single_m, bias):
    fields = dict(
        usedCoreNum=1,
        M=m,
        N=n,
        Ka=k,
        Kb=k,
        singleCoreM=single_m,
        singleCoreN=n,
        singleCoreK=k,
        baseM=BM,
        baseN=BN,
        baseK=BK,
        depthA1=2,
        depthB1=2,
        stepM=1,
        stepN=1,
        stepKa=1,
        stepKb=1,
        dbL0A=1,
        dbL0B=1,
        dbL0C=1,
        isBias=int(bias),
    )
    return "tcube:" + ",".join(f"{k_}={v}" for k_, v in fields.items())


def _matmul_ref(a, b, bias):
    """float32 sums of float products in k order (the Matmul model's order)."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for p in range(a.shape[1]):
        acc += np.outer(a[:, p].astype(np.float32), b[p].astype(np.float32))
    return acc + (bias if bias is not None else 0)


@pytest.mark.parametrize(
    "m,n,k,blocks,bias", [(33, 40, 24, 2, True), pytest.param(64, 16, 16, 1, False, marks=SLOW)]
)
def test_matmul_c_in_gm(run, m, n, k, blocks, bias):
    a = RNG.uniform(-1, 1, (m, k)).astype(np.float16)
    b = RNG.uniform(-1, 1, (k, n)).astype(np.float16)
    bv = RNG.standard_normal(n).astype(np.float32)
    p = run.save(a=a, b=b, bias=bv)
    single = -(-m // (2 * blocks))  # MIX 1:2: 2 * blockDim vector blocks
    res = ok(
        run(
            SAMPLES / "matmul_custom.cpp",
            "--entry",
            "matmul_custom",
            "--block-dim",
            str(blocks),
            p["a"],
            p["b"],
            p["bias"],
            f"c:float32[{m},{n}]",
            "ws:16M",
            _tcube(m, n, k, single, bias),
        )
    )
    np.testing.assert_allclose(
        res.output("c"), _matmul_ref(a, b, bv if bias else None), rtol=1e-6, atol=1e-6
    )


def test_matmul_without_workspace_writes_nothing(run):
    """The sample returns when GetSysWorkSpacePtr() is null (a null workspace argument)."""
    a, b = np.ones((16, 16), np.float16), np.ones((16, 16), np.float16)
    p = run.save(a=a, b=b, bias=np.zeros(16, np.float32))
    res = ok(
        run(
            SAMPLES / "matmul_custom.cpp",
            "--entry",
            "matmul_custom",
            "--block-dim",
            "1",
            p["a"],
            p["b"],
            p["bias"],
            "c:float32[16,16]",
            "null",
            _tcube(16, 16, 16, 8, False),
        )
    )
    np.testing.assert_array_equal(res.output("c"), np.zeros((16, 16), np.float32))


@pytest.mark.parametrize("m,n,k,blocks", [(40, 50, 32, 2), pytest.param(7, 33, 16, 1, marks=SLOW)])
def test_matmul_leakyrelu(run, m, n, k, blocks):
    a = RNG.uniform(-1, 1, (m, k)).astype(np.float16)
    b = RNG.uniform(-1, 1, (k, n)).astype(np.float16)
    bv = RNG.standard_normal(n).astype(np.float32)
    p = run.save(a=a, b=b, bias=bv)
    alpha = 0.125
    res = ok(
        run(
            SAMPLES / "matmul_leakyrelu.cpp",
            "--entry",
            "matmul_leakyrelu_custom",
            "--block-dim",
            str(blocks),
            "-D",
            f"ALPHA={alpha}f",
            p["a"],
            p["b"],
            p["bias"],
            f"c:float32[{m},{n}]",
            "ws:16M",
            _tcube(m, n, k, -(-m // blocks), True),
            "--memory-check",
        )
    )
    mm = _matmul_ref(a, b, bv)
    want = np.where(mm >= 0, mm, mm * np.float32(alpha))
    np.testing.assert_allclose(res.output("c"), want, rtol=1e-6, atol=1e-6)
