"""bfloat16 end to end (issue 13, item 4).

``pa.bfloat16`` (NumPy: ``ml_dtypes.bfloat16``; torch: ``torch.bfloat16``) is a storage dtype
like float16: every operator computes in float32 inside and rounds once to bfloat16 on output,
on the vector and the Cube path. Checked against NumPy (float32 on the bf16-rounded inputs,
rounded once; rtol = atol = 8e-3, ``helpers.tolerance``) on shapes with tails, and the CPU build
against the interpreter at every stage (tensor, tile, ascendc) bit for bit, special values
(NaN payloads, +-inf, +-0, subnormals, overflow, ties) included.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import BF16_TOL, assert_close, layernorm_ref, softmax_ref, tagged_line

import pyasc_mlir as pa
from pyasc_mlir.cost_model import estimate
from pyasc_mlir.types import BF16, TensorDesc, astype, bf16_to_f32, dtype_name, f32_to_bf16

TAILS = (1, 7, 33, 513, 4097)
STAGES = ("tensor", "tile", "ascendc")


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint16 if a.dtype.itemsize == 2 else np.uint32)


def f32(a: np.ndarray) -> np.ndarray:
    return astype(a, np.dtype(np.float32))


def rand_bf16(shape: tuple[int, ...], seed: int, scale: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return astype(rng.standard_normal(shape).astype(np.float32) * np.float32(scale), BF16)


def run_everywhere(op: pa.CompiledOp, *arrays: np.ndarray) -> np.ndarray:
    """The CPU build's result, after checking the interpreter at every stage: the tile and
    ascendc levels (which model the vector unit) give its bits exactly; the tensor level (exact
    transcendentals rounded once, no model of the vector unit's NaN signs: as for float16 and
    float32) the same NaNs and values within one bfloat16 ulp."""
    cpu = op(*arrays)
    for stage in STAGES:
        (got,) = op.run_stage(stage, *arrays)
        assert got.dtype == cpu.dtype, stage
        if stage != "tensor":
            np.testing.assert_array_equal(bits(got), bits(cpu), err_msg=f"{stage} vs CPU build")
            continue
        nan = np.isnan(f32(cpu))
        np.testing.assert_array_equal(np.isnan(f32(got)), nan, err_msg="tensor-level NaNs")
        g, c = f32(got)[~nan].astype(np.float64), f32(cpu)[~nan].astype(np.float64)
        np.testing.assert_array_equal(np.isinf(g), np.isinf(c))
        fin = np.isfinite(c)
        ulp = np.maximum(np.abs(c[fin]) * 2.0**-7, 2.0**-133)
        assert np.all(np.abs(g[fin] - c[fin]) <= ulp), "tensor level vs CPU build: > 1 ulp"
    return cpu


# --------------------------------------------------------------------------- the dtype


def test_bfloat16_spellings() -> None:
    for spelling in ("bfloat16", "bf16", ml_dtypes.bfloat16, BF16, pa.bfloat16):
        assert dtype_name(spelling) == "bfloat16", spelling
    assert np.dtype(pa.bfloat16) == BF16 and pa.bfloat16 == "bf16" and pa.bfloat16 != pa.float16
    assert TensorDesc((2, 3), "bf16").np_dtype == BF16
    with pytest.raises(pa.PyAscUsageError, match="float16, bfloat16 or float32"):
        TensorDesc((2,), "int8")


def test_torch_bfloat16_spelling() -> None:
    torch = pytest.importorskip("torch")  # the [torch] extra; not part of [dev]
    assert dtype_name(torch.bfloat16) == "bfloat16"


def test_rounding_matches_ml_dtypes_and_keeps_nan_payload_bits() -> None:
    rng = np.random.default_rng(0)
    with np.errstate(over="ignore"):  # some samples overflow float32 to inf: kept as specials
        x = (rng.standard_normal(100_000) * np.exp2(rng.integers(-140, 128, 100_000))).astype(
            np.float32
        )
    ties = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 2**-133 * 3], np.float32)
    x = np.concatenate([x, ties, [0.0, -0.0, np.inf, -np.inf, 3.4e38, -3.4e38, 1e-45]])
    with np.errstate(all="ignore"):
        want = x.astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(bits(f32_to_bf16(x)), bits(want))
    nans = np.array([0x7F800001, 0xFFA00001, 0x7FC0FFFF, 0x7FFFFFFF], np.uint32).view(np.float32)
    # the CPU header's rule (bf16.h): top 16 bits, quiet bit set, sign and payload top kept
    assert [hex(b) for b in bits(f32_to_bf16(nans))] == ["0x7fc0", "0xffe0", "0x7fc0", "0x7fff"]
    np.testing.assert_array_equal(
        bits(bf16_to_f32(f32_to_bf16(nans))) >> 16, [0x7FC0, 0xFFE0, 0x7FC0, 0x7FFF]
    )
    # float64 -> bfloat16 rounds once (round to odd through float32), not twice
    just_above_tie = np.array([1 + 2**-8 + 2**-40], np.float64)
    assert bits(astype(just_above_tie, BF16))[0] == 0x3F81


# --------------------------------------------------------------------------- vector path


def elementwise(x, y):
    return pa.sigmoid(x) * y - pa.exp(-(x * x)) / (pa.abs(y) + 1.0) + pa.maximum(x, y)


def elementwise_ref(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = f32(x), f32(y)
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x)) * y - np.exp(-(x * x)) / (np.abs(y) + 1) + np.maximum(x, y)


@pytest.mark.parametrize("n", [7, pytest.param(4097, marks=pytest.mark.slow)])
def test_elementwise_matches_numpy_and_every_stage(n: int) -> None:
    x, y = rand_bf16((3, n), 1), rand_bf16((n,), 2)
    op = pa.compile(elementwise, [TensorDesc(x.shape, "bfloat16"), TensorDesc(y.shape, "bf16")])
    out = run_everywhere(op, x, y)
    assert out.dtype == BF16 and out.shape == (3, n)
    assert_close(out, elementwise_ref(x, y), BF16)
    assert "bfloat16_t" in (op.directory / "kernel.cpp").read_text()


def reductions(x):
    return (
        x.sum(-1, keepdim=True)
        + x.max(-1, keepdim=True)
        - x.min(-1, keepdim=True)
        + x.var(-1, keepdim=True) * x.mean(-1, keepdim=True)
    )


@pytest.mark.slow
@pytest.mark.parametrize("n", TAILS)
def test_reductions_with_tails(n: int) -> None:
    x = rand_bf16((5, n), n)
    op = pa.compile(reductions, [TensorDesc(x.shape, "bfloat16")])
    out = run_everywhere(op, x)
    xf = f32(x).astype(np.float64)
    ref = (
        xf.sum(-1, keepdims=True)
        + xf.max(-1, keepdims=True)
        - xf.min(-1, keepdims=True)
        + xf.var(-1, keepdims=True) * xf.mean(-1, keepdims=True)
    )
    assert_close(out, ref, BF16, rtol=BF16_TOL, atol=BF16_TOL * max(1.0, np.sqrt(n) / 4))


def residual_layernorm(x, r, w, b):
    h = x + r
    d = h - h.mean(-1, keepdim=True)
    return d * pa.rsqrt((d * d).mean(-1, keepdim=True) + 1e-5) * w + b


def rmsnorm(x, w):
    return x * pa.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w


def softmax(x):
    e = pa.exp(x - x.max(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


@pytest.mark.parametrize("n", [33, pytest.param(513, marks=pytest.mark.slow)])
def test_residual_layernorm_rmsnorm_softmax(n: int) -> None:
    x, r = rand_bf16((7, n), 3), rand_bf16((7, n), 4)
    w, b = rand_bf16((n,), 5), rand_bf16((n,), 6)
    descs = [TensorDesc(a.shape, "bfloat16") for a in (x, r, w, b)]
    ln = run_everywhere(pa.compile(residual_layernorm, descs), x, r, w, b)
    assert_close(ln, layernorm_ref(f32(x) + f32(r), f32(w), f32(b)), BF16)
    rms = run_everywhere(pa.compile(rmsnorm, [descs[0], descs[2]]), x, w)
    xf = f32(x)
    assert_close(rms, xf / np.sqrt((xf * xf).mean(-1, keepdims=True) + 1e-6) * f32(w), BF16)
    sm = run_everywhere(pa.compile(softmax, [descs[0]]), x)
    assert_close(sm, softmax_ref(xf), BF16)


# --------------------------------------------------------------------------- Cube path


def swiglu(x, w, v, bg, bu):
    g = x @ w + bg
    return g * pa.sigmoid(g) * (x @ v + bu)


def matmul(a, b):
    return a @ b


@pytest.mark.parametrize(
    ("m", "k", "n"), [(33, 64, 40), pytest.param(7, 513, 33, marks=pytest.mark.slow)]
)
def test_matmul_and_swiglu_on_the_cube(m: int, k: int, n: int) -> None:
    x = rand_bf16((m, k), 7)
    w, v = rand_bf16((k, n), 8, 1 / np.sqrt(k)), rand_bf16((k, n), 9, 1 / np.sqrt(k))
    bg, bu = rand_bf16((n,), 10), rand_bf16((n,), 11)
    mm = pa.compile(matmul, [TensorDesc(x.shape, "bfloat16"), TensorDesc(w.shape, "bfloat16")])
    assert mm.info["kernels"] == 1
    out = run_everywhere(mm, x, w)
    assert out.dtype == BF16
    assert_close(out, f32(x).astype(np.float64) @ f32(w).astype(np.float64), BF16)
    op = pa.compile(swiglu, [TensorDesc(a.shape, "bfloat16") for a in (x, w, v, bg, bu)])
    out = run_everywhere(op, x, w, v, bg, bu)
    g = f32(x) @ f32(w) + f32(bg)
    assert_close(out, g / (1 + np.exp(-g)) * (f32(x) @ f32(v) + f32(bu)), BF16)


# --------------------------------------------------------------------------- special values


def specials_f32() -> np.ndarray:
    tiny = np.float32(2.0**-133)  # the smallest bf16 subnormal
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, tiny, -tiny, tiny * 3, 2.0**-126]
    vals += [3.3895e38, 3.40e38, -3.40e38, 1 + 2**-8, 1 + 3 * 2**-8, 65504.0, 1e-40, -1e-41]
    payload = np.array([0x7F800001, 0xFFA00001, 0x7FC0FFFF], np.uint32).view(np.float32)
    return np.concatenate([np.array(vals, np.float32), payload])


def round_to_bf16(x):
    return pa.cast(x, pa.bfloat16)


def passthrough(x, y):
    return pa.maximum(x, y) * 1.0 + -y * 0.5


def test_special_values_bit_for_bit() -> None:
    x = specials_f32()
    op = pa.compile(round_to_bf16, [TensorDesc(x.shape, "float32")])
    out = run_everywhere(op, x)  # the CPU header's Cast(CAST_RINT) and the interpreter agree
    np.testing.assert_array_equal(bits(out), bits(f32_to_bf16(x)))
    xb = f32_to_bf16(x)
    yb = f32_to_bf16(x[::-1].copy())
    op = pa.compile(passthrough, [TensorDesc(xb.shape, "bfloat16")] * 2)
    out = run_everywhere(op, xb, yb)
    with np.errstate(all="ignore"):
        ref = f32_to_bf16(
            np.maximum(f32(xb), f32(yb)) * np.float32(1.0) + -f32(yb) * np.float32(0.5)
        )
    np.testing.assert_array_equal(np.isnan(f32(out)), np.isnan(f32(ref)))
    finite = ~np.isnan(f32(ref))
    np.testing.assert_array_equal(bits(out)[finite], bits(ref)[finite])  # +-0, +-inf, subnormals


# --------------------------------------------------------------------------- dtype rules


def mixed(a, b, c):
    return a + b, a * c, pa.cast(a + c, pa.bfloat16)


def test_mixed_dtypes_promote_to_float32() -> None:
    a, b = rand_bf16((7,), 12), np.linspace(-1, 1, 7).astype(np.float16)
    c = np.linspace(0, 3, 7).astype(np.float32)
    op = pa.compile(mixed, [TensorDesc((7,), d) for d in ("bfloat16", "float16", "float32")])
    ab, ac, cast = op(a, b, c)
    assert (ab.dtype, ac.dtype, cast.dtype) == (np.float32, np.float32, BF16)
    np.testing.assert_array_equal(ab, f32(a) + b.astype(np.float32))  # f16 -> f32 -> bf16: exact
    np.testing.assert_array_equal(bits(cast), bits(f32_to_bf16(f32(a) + c)))


def test_compiled_op_converts_inputs_and_refuses_overflow() -> None:
    op = pa.compile(rmsnorm, [TensorDesc((7,), "bfloat16"), TensorDesc((7,), "bfloat16")])
    x = np.linspace(-3, 3, 7)
    got = op(x, np.ones(7, np.float32))  # float64 and float32 converted, rounded once
    np.testing.assert_array_equal(bits(got), bits(op(astype(x, BF16), astype(np.ones(7), BF16))))
    with pytest.raises(pa.PyAscUsageError) as info:
        op(np.full(7, 1e39), np.ones(7, np.float32))  # ERR overflow
    assert info.value.loc is not None and info.value.loc.line == tagged_line(__file__, "overflow")
    assert "outside the bfloat16 range" in str(info.value)


def test_cost_model_counts_two_bytes() -> None:
    shape = (64, 1024)
    gm = {}
    for dtype in ("bfloat16", "float16", "float32"):
        op = pa.compile(rmsnorm, [TensorDesc(shape, dtype), TensorDesc(shape[-1:], dtype)])
        gm[dtype] = (op.info["gm_bytes"], estimate(op.stages()["ascendc"])[0].gm_bytes)
    assert gm["bfloat16"] == gm["float16"]
    assert (
        gm["bfloat16"][0] == 2 * (2 * 64 * 1024 + 1024)
        and gm["float32"][0] == 2 * gm["bfloat16"][0]
    )


def test_torch_bfloat16_in_and_out_without_copies() -> None:
    torch = pytest.importorskip("torch")
    x = torch.randn(7, 33, dtype=torch.bfloat16)
    w = torch.randn(33, dtype=torch.bfloat16)
    op = pa.compile(rmsnorm, [TensorDesc((7, 33), "bfloat16"), TensorDesc((33,), "bfloat16")])
    y = op(x, w)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.bfloat16
    ref = op(x.view(torch.uint16).numpy().view(BF16), w.view(torch.uint16).numpy().view(BF16))
    np.testing.assert_array_equal(y.view(torch.uint16).numpy(), bits(ref))
    from pyasc_mlir.torch import from_numpy, to_numpy

    view = to_numpy(x, "x")
    assert view.dtype == BF16 and view.ctypes.data == x.data_ptr()  # the same memory
    back = from_numpy(view)
    assert back.dtype == torch.bfloat16 and back.data_ptr() == x.data_ptr()


def exp_only(x):
    return pa.exp(x)


def test_numeric_check_sees_bfloat16_overflow() -> None:
    op = pa.compile(exp_only, [TensorDesc((40,), "bfloat16")])
    x = astype(np.full(40, 100.0, np.float32), BF16)  # exp(100) = 2.7e43 > 3.39e38
    pa.enable_numeric_check(True)
    try:
        with pytest.raises(pa.NumericCheckError, match="holds Inf at element 0"):
            op(x)
    finally:
        pa.enable_numeric_check(False)
    assert np.isinf(f32(op(x))).all()


def test_dynamic_rows_in_bfloat16() -> None:
    f = pa.jit(softmax, dynamic=True)
    for rows in (3, 9, 17):
        x = rand_bf16((rows, 40), rows)
        assert_close(f(x), softmax_ref(f32(x)), BF16)
    assert f.compilations == 1
