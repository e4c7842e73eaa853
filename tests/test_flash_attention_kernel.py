"""The one-kernel flash attention (issue 14, section 2; ``passes/lower_attention.py``):
``softmax(q k^T * scale + mask) v`` written by a user compiles to ONE MIX (Cube + vector)
kernel whose GM buffers hold no ``Sq x Skv`` matrix, and its CPU build (memory check on: the
strict MIX model, UB bounds and the race detector) and the ascendc-level interpreter agree with
a float64 NumPy reference.

Tolerances (stated): fp32 rtol = atol = 2e-5 (the online rescaling adds a few float32 roundings
per key block); fp16 rtol = atol = 2e-3 and bf16 1.6e-2 (``P`` is rounded to the operands'
dtype before ``P V``, as the Cube takes it, and the result once more). The interpreter and the
CPU build agree with each other within :data:`EXECUTORS_AGREE` (their float32 bits are not
claimed equal).

Shapes: S = 1, 7, 33, 257, 513 (tails of the 16-row query and 16..128-key blocks), D = 64 and
128, fp16 and fp32, with and without a causal mask; the decode form (Sq = 1 against a long
KV); grouped-query attention; bf16. The full grid is ``@pytest.mark.slow``.
"""

from __future__ import annotations

import numpy as np
import pytest

import pyasc_mlir as pa
from tests.test_flash_attention import N_HEADS, _inputs, _reference, attention, attention_masked

TOL = {"float32": 2e-5, "float16": 2e-3}
EXECUTORS_AGREE = {"float32": 1e-5, "float16": 1e-3}
"""CPU build vs interpreter: f16 results within one unit in the last place (2**-10
relative); f32 within 1e-5 (their f32 dot products and exponentials round differently in
the last bits, a few roundings per key block)."""


def _compiled(sq: int, skv: int, d: int, dtype: str, mask: str | None):  # type: ignore[no-untyped-def]
    xs = _inputs(sq, skv, d, dtype, mask)
    fn = attention if mask is None else attention_masked
    descs = [pa.TensorDesc(x.shape, x.dtype.name) for x in xs]
    return pa.compile(fn, inputs=descs), xs


def _no_scores_in_gm(info: dict, sq: int, skv: int) -> None:  # type: ignore[type-arg]
    """One launch whose results are the output and the P workspace (``block_dim x bq x bk``
    elements, independent of the sequence lengths); at these sizes it is smaller than the
    scores would be."""
    assert info["kernels"] == 1 and len(info["launches"]) == 1
    launch = info["launches"][0]
    out, ws = launch["results"]
    assert out["shape"] == info["outputs"][0]["shape"]
    t = launch["tiling"]
    assert ws["shape"] == [launch["block_dim"] * t["tile_m"] * t["block_kv"]]
    assert ws["shape"][0] < N_HEADS * sq * skv


def _check(sq: int, skv: int, d: int, dtype: str, mask: str | None, memcheck: bool) -> None:
    op, xs = _compiled(sq, skv, d, dtype, mask)
    info = op.info
    assert info["kernels"] == 1
    if sq * skv >= 4096:  # smaller scores than one 16 x 16 block per core: not comparable
        _no_scores_in_gm(info, sq, skv)
    cpu, interp = assert_executors(op, xs, _reference(xs), TOL[dtype], memcheck)
    agree = EXECUTORS_AGREE[dtype]
    np.testing.assert_allclose(cpu, interp, rtol=agree, atol=agree)


def assert_executors(
    op: pa.CompiledOp, xs: list[np.ndarray], ref: np.ndarray, tol: float, memcheck: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Run ``op`` on the interpreter and on the CPU build (memory check ``memcheck``), assert
    both within ``rtol = atol = tol`` of ``ref``; returns (cpu, interp) as float64."""
    interp = np.asarray(op(*xs, backend="interp"), np.float64)
    np.testing.assert_allclose(interp, ref, rtol=tol, atol=tol)
    pa.enable_memory_check(memcheck)
    try:
        cpu = np.asarray(op(*xs, backend="cpu"), np.float64)
    finally:
        pa.enable_memory_check(None)
    np.testing.assert_allclose(cpu, ref, rtol=tol, atol=tol)
    return cpu, interp


# ------------------------------------------------------------------ prefill


@pytest.mark.parametrize(
    ("s", "d", "dtype", "mask"),
    [
        (7, 64, "float32", None),
        (33, 128, "float16", "causal"),
        (257, 64, "float16", None),
        (1, 64, "float32", "causal"),
    ],
)
def test_prefill_one_kernel_matches_float64(s: int, d: int, dtype: str, mask: str | None) -> None:
    _check(s, s, d, dtype, mask, memcheck=True)


@pytest.mark.slow
@pytest.mark.parametrize("s", [1, 7, 33, 257, 513])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("mask", [None, "causal"])
def test_prefill_grid(s: int, d: int, dtype: str, mask: str | None) -> None:
    _check(s, s, d, dtype, mask, memcheck=s <= 257)


def test_padding_mask_with_finite_values() -> None:
    """A mask that is not -inf (the last third of the keys at -1e4): several key blocks."""
    _check(33, 300, 64, "float32", "padding", memcheck=True)


# ------------------------------------------------------------------ decode


@pytest.mark.parametrize(("skv", "dtype"), [(513, "float16"), (300, "float32")])
def test_decode_one_query_row_long_kv(skv: int, dtype: str) -> None:
    _check(1, skv, 128, dtype, "causal", memcheck=True)


# ------------------------------------------------------------------ structure


def test_kernel_is_mix_with_two_matmuls_and_a_small_workspace() -> None:
    op, _ = _compiled(513, 513, 64, "float16", "causal")
    info = op.info
    _no_scores_in_gm(info, 513, 513)
    launch = info["launches"][0]
    assert launch["kernel_type"] == "MIX_AIC_1_1"
    assert launch["workspace_bytes"] > 0  # the Matmul API's system workspace
    ws = launch["results"][-1]  # the P workspace: cores x bq x bk f16
    tiling = launch["tiling"]
    assert ws["dtype"] == "float16"
    assert ws["shape"] == [launch["block_dim"] * tiling["tile_m"] * tiling["block_kv"]]
    src = (op.directory / "kernel.cpp").read_text()
    assert src.count("REGIST_MATMUL_OBJ") == 1 and "Matmul<" in src
    assert src.count(".Iterate()") == 2  # S = Q K^T and P V, inside the key-block loop
    # P written by MTE3 before the Cube reads it; the mask block's copy-in waits for the
    # vector unit's last read of its TBuf (no queue orders it inside the key loop)
    assert "HardEvent::MTE3_MTE2" in src and "HardEvent::V_MTE2" in src


def test_modeled_time_counts_the_key_loop() -> None:
    """The cost model walks the key-block loop: a 4x longer KV costs more than 2x (the Cube
    products and the streamed K/V bytes grow with it), and no S x S traffic is charged."""
    short, _ = _compiled(256, 256, 64, "float16", None)
    long, _ = _compiled(256, 1024, 64, "float16", None)
    t_short = short.info["modeled_us"]["total"]
    t_long = long.info["modeled_us"]["total"]
    assert t_long > 2 * t_short > 0
    scores_bytes = N_HEADS * 256 * 1024 * 4
    assert long.info["gm_bytes"] < scores_bytes


# ------------------------------------------------------------------ grouped-query, bf16


def gqa(q, k, v, mask):  # type: ignore[no-untyped-def]
    # q [B, S, Nkv, G, D]; k, v [B, S, Nkv, 1, D]: one KV head per group of G query heads
    s = pa.matmul(q.permute(0, 2, 3, 1, 4), k.permute(0, 2, 3, 1, 4), transpose_b=True)
    s = s * 0.125 + mask
    e = pa.exp(s - s.max(-1, keepdim=True))
    return (e / e.sum(-1, keepdim=True)) @ v.permute(0, 2, 3, 1, 4)


@pytest.mark.parametrize(
    ("sq", "skv", "dtype"), [(33, 33, "float16"), (1, 257, "float32"), (1, 513, "float16")]
)
def test_grouped_query_attention_one_kernel(sq: int, skv: int, dtype: str) -> None:
    rng = np.random.default_rng(sq + skv)
    q = rng.standard_normal((1, sq, 2, 3, 64)).astype(dtype)
    k, v = (rng.standard_normal((1, skv, 2, 1, 64)).astype(dtype) for _ in range(2))
    i = np.arange(sq)[:, None] + (skv - sq)
    mask = np.where(np.arange(skv)[None, :] > i, -np.inf, 0.0).astype(dtype)
    op = pa.compile(gqa, inputs=[pa.TensorDesc(x.shape, dtype) for x in (q, k, v, mask)])
    assert op.info["kernels"] == 1
    tiling = op.info["launches"][0]["tiling"]
    if sq == 1:  # decode: the 3 query heads of a group are the rows of ONE unit per KV head,
        assert (tiling["m"], tiling["units"]) == (3, 2)  # each K/V block is read once
    else:
        assert (tiling["m"], tiling["units"]) == (sq, 2 * 3 * -(-sq // tiling["tile_m"]))
    f = lambda t: np.asarray(t, np.float64).transpose(0, 2, 3, 1, 4)  # noqa: E731
    s = f(q) @ np.swapaxes(f(k), -1, -2) * 0.125 + mask.astype(np.float64)
    e = np.exp(s - s.max(-1, keepdims=True))
    ref = (e / e.sum(-1, keepdims=True)) @ f(v)
    tol = TOL[dtype]
    for backend in ("interp", "cpu"):
        got = np.asarray(op(q, k, v, mask, backend=backend), np.float64)
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("s", [7, 257])
def test_bfloat16_one_kernel(s: int) -> None:
    """bf16 operands (8 significand bits): P and the result each round once, so 1.6e-2
    (2**-6) absolute and relative."""
    from pyasc_mlir.types import BF16, astype

    xs = [astype(x, BF16) for x in _inputs(s, s, 64, "float32", "causal")]
    op = pa.compile(attention_masked, inputs=[pa.TensorDesc(x.shape, "bfloat16") for x in xs])
    assert op.info["kernels"] == 1
    ref = _reference([astype(x, np.dtype(np.float32)) for x in xs])
    for backend in ("interp", "cpu"):
        got = astype(np.asarray(op(*xs, backend=backend)), np.dtype(np.float32))
        np.testing.assert_allclose(got, ref, rtol=1.6e-2, atol=1.6e-2)


# ------------------------------------------------------------------ special values


def _unfused(xs: list[np.ndarray]) -> np.ndarray:
    """The unfused module (3 ops chains, no asc-flash-attention) in the tensor interpreter."""
    from pyasc_mlir import pipeline
    from pyasc_mlir.interpreter.core import run_function

    descs = [pa.TensorDesc(x.shape, x.dtype.name) for x in xs]
    module, _ = pipeline.build_module(attention_masked, descs, "attention_masked")
    (out,) = run_function(module, "attention_masked", xs)
    return np.asarray(out, np.float64)


def _both_executors(xs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    op = pa.compile(attention_masked, inputs=[pa.TensorDesc(x.shape, x.dtype.name) for x in xs])
    assert op.info["kernels"] == 1
    interp = np.asarray(op(*xs, backend="interp"), np.float64)
    with pa.enable_memory_check():
        cpu = np.asarray(op(*xs, backend="cpu"), np.float64)
    return interp, cpu


def test_masked_blocks_rows_and_special_inputs() -> None:
    """Key blocks of 16: the first two fully masked for every row (no ``-inf - -inf`` NaN in
    m or l), a row masked entirely (NaN, as the unfused softmax), a NaN query element (its
    row NaN) and an infinite key (a NaN row where its score is +inf): the kernel's NaN
    pattern is the unfused module's on both executors, the other values match it."""
    xs = _inputs(4, 40, 16, "float32", None)
    mask = np.zeros((4, 40), np.float32)
    mask[:, :33] = -np.inf
    mask[3] = -np.inf
    xs[0][0, 2, 0, 3] = np.nan  # query row 2 of head 0
    xs[1][0, 35, 1, 0] = np.inf  # key 35 of head 1 (not masked): inf scores in head 1
    xs.append(mask)
    before = _unfused(xs)
    for got in _both_executors(xs):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(before))
        assert np.isnan(got[0, 3]).all() and np.isnan(got[0, 2, 0]).all()
        assert np.isfinite(got[0, [0, 1], 0]).all()
        ok = ~np.isnan(before)
        np.testing.assert_allclose(got[ok], before[ok], rtol=2e-5, atol=2e-5)


def test_users_spelling_with_jit_and_softmax_is_one_kernel() -> None:
    """``pa.softmax(q @ k.transpose(-1, -2) * scale + mask, -1) @ v`` on ``[B, N, S, D]``."""

    @pa.jit
    def attn(q, k, v, mask):  # type: ignore[no-untyped-def]
        return pa.softmax(q @ k.transpose(-1, -2) * 0.125 + mask, -1) @ v

    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 4, 37, 64)).astype(np.float16) for _ in range(3))
    mask = np.triu(np.full((37, 37), -np.inf, np.float32), 1).astype(np.float16)
    out = attn(q, k, v, mask)
    assert attn.compile(q, k, v, mask).info["kernels"] == 1
    f = lambda t: t.astype(np.float64)  # noqa: E731
    s = f(q) @ np.swapaxes(f(k), -1, -2) * 0.125 + f(mask)
    e = np.exp(s - s.max(-1, keepdims=True))
    ref = (e / e.sum(-1, keepdims=True)) @ f(v)
    np.testing.assert_allclose(f(out), ref, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [
        ((1, 300), "float32"),
        ((33, 1), "float16"),
        ((1, N_HEADS, 1, 300), "float32"),
        ((1, 1), "float16"),
    ],
)
def test_broadcast_masks(shape: tuple[int, ...], dtype: str) -> None:
    """Masks broadcast along the query rows, the keys or the batch dims (padding masks,
    per-head masks) are copied in as stored and expanded in UB."""
    xs = _inputs(33, 300, 64, dtype, None)
    rng = np.random.default_rng(len(shape))
    mask = np.where(rng.random(shape) < 0.3, -1e4, rng.standard_normal(shape)).astype(dtype)
    xs.append(mask)
    op = pa.compile(attention_masked, inputs=[pa.TensorDesc(x.shape, dtype) for x in xs])
    assert op.info["kernels"] == 1
    ref = _reference(xs)
    for backend in ("interp", "cpu"):
        got = np.asarray(op(*xs, backend=backend), np.float64)
        np.testing.assert_allclose(got, ref, rtol=TOL[dtype], atol=TOL[dtype])
