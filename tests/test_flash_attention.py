"""``asc-flash-attention`` and ``asc.flash_attention`` (issue 14, section 2): the attention
chain the frontend builds (head split/merge transposes, scale, additive mask, softmax over the
last axis, f16 casts) becomes ONE op with no S x S value left; the op's interpreter semantics
(the blocked online softmax) agree with a float64 NumPy reference at S = 1, 7, 33, 257, 513,
D = 64 / 128, fp16 / fp32, causal and not, and with the unfused module (translation
validation); special values behave as the unfused softmax does.

Tolerances (stated): fp32 rtol = atol = 2e-5 (F32_REDUCTION_TOL would hide a lost block;
the online rescaling adds a few float32 roundings per key block); fp16 rtol = atol = 2e-3
(``P`` is rounded to fp16 before ``P V``, as the Cube takes it, and the result once more).

The one-kernel Cube + vector lowering (``asc-lower-attention``), its CPU build under the strict
MIX model and its cost are tested in ``test_flash_attention_kernel.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType

import pyasc_mlir as pa
from pyasc_mlir import pipeline
from pyasc_mlir.dialects import asc
from pyasc_mlir.interpreter.attention_impls import online_attention
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.passes.flash_attention import AscFlashAttentionPass
from pyasc_mlir.passes.fuse import AscFusePass

TOL = {"float32": 2e-5, "float16": 2e-3}
N_HEADS = 2


def attention(q, k, v):
    s = pa.matmul(q.transpose(1, 2), k.transpose(1, 2), transpose_b=True) * SCALE
    e = pa.exp(s - s.max(-1, keepdim=True))
    return ((e / e.sum(-1, keepdim=True)) @ v.transpose(1, 2)).transpose(1, 2)


def attention_masked(q, k, v, mask):
    s = pa.matmul(q.transpose(1, 2), k.transpose(1, 2), transpose_b=True) * SCALE + mask
    e = pa.exp(s - s.max(-1, keepdim=True))
    return ((e / e.sum(-1, keepdim=True)) @ v.transpose(1, 2)).transpose(1, 2)


SCALE = 0.125  # read by the operators above at compile time


def _module(masked: bool, sq: int, skv: int, d: int, dtype: str) -> tuple[ModuleOp, str]:
    fn = attention_masked if masked else attention
    descs = [
        pa.TensorDesc((1, sq, N_HEADS, d), dtype),
        pa.TensorDesc((1, skv, N_HEADS, d), dtype),
        pa.TensorDesc((1, skv, N_HEADS, d), dtype),
    ]
    if masked:
        descs.append(pa.TensorDesc((sq, skv), dtype))
    module, _ = pipeline.build_module(fn, descs, fn.__name__)
    return module, fn.__name__


def _fused(module: ModuleOp, block_kv: int = 128) -> ModuleOp:
    out = module.clone()
    AscFlashAttentionPass(block_kv=block_kv).apply(pipeline.make_context(), out)
    out.verify()
    return out


def _inputs(sq: int, skv: int, d: int, dtype: str, mask: str | None) -> list[np.ndarray]:
    rng = np.random.default_rng(sq * 1000 + skv * 10 + d)
    xs = [(rng.standard_normal((1, s, N_HEADS, d)) * 1.5).astype(dtype) for s in (sq, skv, skv)]
    if mask == "causal":  # the bottom-right aligned causal mask (Sq <= Skv: decode rows)
        i = np.arange(sq)[:, None] + (skv - sq)
        xs.append(np.where(np.arange(skv)[None, :] > i, -np.inf, 0.0).astype(dtype))
    elif mask == "padding":  # the last third of the keys masked with a large finite value
        xs.append(np.where(np.arange(skv) >= skv - skv // 3, -1e4, 0.0)[None].repeat(sq, 0))
        xs[-1] = xs[-1].astype(dtype)
    return xs


def _reference(xs: list[np.ndarray]) -> np.ndarray:
    """float64 ``softmax(q k^T * SCALE + mask) v`` in the [B, S, N, D] layout."""
    q, k, v = (np.swapaxes(x.astype(np.float64), 1, 2) for x in xs[:3])
    s = q @ np.swapaxes(k, -1, -2) * SCALE
    if len(xs) > 3:
        s = s + xs[3].astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(-1, keepdims=True))
        return np.swapaxes((e / e.sum(-1, keepdims=True)) @ v, 1, 2)


def _values(module: ModuleOp) -> list[tuple[str, tuple[int, ...]]]:
    return [
        (op.name, tuple(r.type.get_shape()))
        for op in module.walk()
        for r in op.results
        if isinstance(r.type, TensorType)
    ]


def _close(actual: np.ndarray, expected: np.ndarray, dtype: str) -> None:
    tol = TOL[dtype]
    np.testing.assert_allclose(
        np.asarray(actual, np.float64), expected, rtol=tol, atol=tol, equal_nan=False
    )


# ------------------------------------------------------------------ recognition


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_chain_becomes_one_op_without_scores(masked: bool, dtype: str) -> None:
    module, _ = _module(masked, 33, 33, 64, dtype)
    fused = _fused(module)
    ops = [o for o in fused.walk() if isinstance(o, asc.FlashAttentionOp)]
    assert len(ops) == 1
    assert ops[0].scale_value == SCALE and ops[0].block_kv.data == 128
    assert (ops[0].mask is not None) == masked
    assert not [o for o in fused.walk() if isinstance(o, asc.MatmulOp | asc.ReduceOp)]
    # no [.., S, S] value is left, except the user's own [S, S] mask (and its f32 cast)
    scores = [v for v in _values(fused) if v[1][-2:] == (33, 33)]
    assert all(shape == (33, 33) for _, shape in scores), scores
    before = [v for v in _values(module) if v[1] == (1, N_HEADS, 33, 33)]
    assert before  # the unfused chain had them: the check above can fail


def test_benchmark_form_is_recognised() -> None:
    """The cann-bench attention operators (``benchmarks/cann_cases.py``) match as written; the
    causal one is ``scaled_dot_product_attention(is_causal=True)``: no mask tensor."""
    from benchmarks.cann_cases import OPERATORS, Case

    for causal in (False, True):
        c = Case("attention", 0, [[1, 7, 2, 16]] * 3, "float16", {"is_causal": causal}, 1, 1, False)
        fn = OPERATORS["attention"](c)
        descs = [pa.TensorDesc((1, 7, 2, 16), "float16")] * 3
        module, _ = pipeline.build_module(fn, descs, fn.__name__)
        fused = _fused(module)
        ops = [o for o in fused.walk() if isinstance(o, asc.FlashAttentionOp)]
        assert len(ops) == 1 and math.isclose(ops[0].scale_value, 0.25)
        assert ops[0].is_causal == causal and ops[0].mask is None


def test_probabilities_used_elsewhere_are_not_fused() -> None:
    def probs_too(q, k, v):
        s = pa.matmul(q, k, transpose_b=True)
        e = pa.exp(s - s.max(-1, keepdim=True))
        p = e / e.sum(-1, keepdim=True)
        return p @ v, p

    descs = [pa.TensorDesc((7, 16), "float32")] * 3
    module, _ = pipeline.build_module(probs_too, descs, "probs_too")
    fused = _fused(module)
    assert not [o for o in fused.walk() if isinstance(o, asc.FlashAttentionOp)]
    assert str(fused) == str(module)


# ------------------------------------------------------------------ values


CASES = [
    (s, d, dtype, mask)
    for s in (1, 7, 33, 257, 513)
    for d in (64, 128)
    for dtype in ("float32", "float16")
    for mask in (None, "causal")
]


@pytest.mark.parametrize(("s", "d", "dtype", "mask"), CASES)
def test_prefill_matches_float64(s: int, d: int, dtype: str, mask: str | None) -> None:
    module, name = _module(mask is not None, s, s, d, dtype)
    xs = _inputs(s, s, d, dtype, mask)
    (out,) = run_function(_fused(module), name, xs)
    assert out.dtype == np.dtype(dtype) and out.shape == (1, s, N_HEADS, d)
    _close(out, _reference(xs), dtype)


@pytest.mark.parametrize("skv", [33, 513, 4097])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_decode_matches_float64(skv: int, dtype: str) -> None:
    """Decode: one query row against a long KV cache (keys in 33 blocks of 128 at 4097)."""
    module, name = _module(True, 1, skv, 128, dtype)
    xs = _inputs(1, skv, 128, dtype, "padding")
    (out,) = run_function(_fused(module), name, xs)
    _close(out, _reference(xs), dtype)


@pytest.mark.parametrize("block_kv", [1, 16, 100, 600])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_translation_validation(block_kv: int, dtype: str) -> None:
    """Interpreter before == after the pass (any block length, tails included)."""
    module, name = _module(True, 33, 513, 64, dtype)
    xs = _inputs(33, 513, 64, dtype, "causal")
    (before,) = run_function(module, name, xs)
    (after,) = run_function(_fused(module, block_kv), name, xs)
    _close(after, np.asarray(before, np.float64), dtype)


# ------------------------------------------------------------------ special values


def _both(xs: list[np.ndarray], block_kv: int = 4) -> tuple[np.ndarray, np.ndarray]:
    module, name = _module(True, xs[0].shape[1], xs[1].shape[1], xs[0].shape[3], "float32")
    (before,) = run_function(module, name, xs)
    (after,) = run_function(_fused(module, block_kv), name, xs)
    return before, after


def test_first_blocks_fully_masked_stay_finite() -> None:
    """A row whose first key blocks are all -inf: no ``-inf - -inf`` NaN leaks into m or l."""
    xs = _inputs(3, 12, 16, "float32", None)
    mask = np.zeros((3, 12), np.float32)
    mask[:, :9] = -np.inf  # blocks 0 and 1 (of 4 keys) fully masked, block 2 partly
    before, after = _both([*xs, mask])
    assert np.isfinite(after).all()
    _close(after, _reference([*xs, mask]), "float32")
    _close(after, before, "float32")


def test_fully_masked_row_is_nan_as_unfused() -> None:
    xs = _inputs(3, 12, 16, "float32", None)
    mask = np.zeros((3, 12), np.float32)
    mask[1] = -np.inf
    before, after = _both([*xs, mask])
    assert np.isnan(before[0, 1]).all() and np.isnan(after[0, 1]).all()
    assert np.isfinite(after[0, [0, 2]]).all()
    _close(after[0, [0, 2]], before[0, [0, 2]], "float32")


def test_nan_and_inf_inputs_propagate_per_row() -> None:
    xs = _inputs(4, 12, 16, "float32", None)
    xs[0][0, 2, 0, 3] = np.nan  # query row 2 of head 0
    xs[1][0, 5, 1, 0] = np.inf  # key 5 of head 1: inf scores -> NaN rows in head 1
    mask = np.zeros((4, 12), np.float32)
    before, after = _both([*xs, mask])
    np.testing.assert_array_equal(np.isnan(after), np.isnan(before))
    assert np.isnan(after[0, 2, 0]).all() and not np.isnan(after[0, [0, 1, 3], 0]).any()
    ok = ~np.isnan(before)
    _close(after[ok], before[ok], "float32")


def test_online_attention_rejects_nothing_silently() -> None:
    """The helper on its own: a mask that does not broadcast is a NumPy error, not a guess."""
    q = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(ValueError):
        online_attention(q, q, q, np.zeros((5,), np.float32), 1.0, 2, np.dtype(np.float32))


# ------------------------------------------------------------------ pipeline


def test_fuse_puts_attention_in_one_fusion() -> None:
    """``asc-fuse`` groups the op with its operand views, its mask's cast and the result's
    cast and head-merge view: one fusion, nothing else (one kernel)."""
    module, _ = _module(True, 7, 33, 16, "float16")
    fused = _fused(module)
    AscFusePass().apply(pipeline.make_context(), fused)
    fusions = [op for op in fused.walk() if isinstance(op, asc.FusionOp)]
    assert len(fusions) == 1
    names = [op.name for op in fusions[0].body.block.ops]
    assert names.count("asc.flash_attention") == 1 and names.count("asc.cast") == 2
    assert names.count("asc.transpose") == 4


def test_in_the_default_pipeline() -> None:
    """compile runs the recognition and the one-kernel lowering (tests in
    ``test_flash_attention_kernel.py``)."""
    from pyasc_mlir.passes.registry import PIPELINES

    for name in ("asc-to-tile", "asc-to-ascendc"):
        p = PIPELINES[name]
        assert p.index("asc-decompose") < p.index("asc-flash-attention") < p.index("asc-fuse")
        assert p.index("asc-fuse") < p.index("asc-lower-attention") < p.index("asc-lower-cube")


# ------------------------------------------------------------------ grouped-query, bf16


def gqa(q, k, v, mask):
    # q [B, S, Nkv, G, D]; k, v [B, S, Nkv, 1, D]: one KV head per group of G query heads
    s = pa.matmul(q.permute(0, 2, 3, 1, 4), k.permute(0, 2, 3, 1, 4), transpose_b=True)
    s = s * SCALE + mask
    e = pa.exp(s - s.max(-1, keepdim=True))
    return (e / e.sum(-1, keepdim=True)) @ v.permute(0, 2, 3, 1, 4)


@pytest.mark.parametrize(("sq", "skv"), [(7, 7), (33, 257), (1, 513)])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_grouped_query_attention(sq: int, skv: int, dtype: str) -> None:
    nkv, g, d = 2, 3, 64
    descs = [
        pa.TensorDesc((1, sq, nkv, g, d), dtype),
        pa.TensorDesc((1, skv, nkv, 1, d), dtype),
        pa.TensorDesc((1, skv, nkv, 1, d), dtype),
        pa.TensorDesc((sq, skv), dtype),
    ]
    module, _ = pipeline.build_module(gqa, descs, "gqa")
    fused = _fused(module)
    (op,) = [o for o in fused.walk() if isinstance(o, asc.FlashAttentionOp)]
    assert tuple(op.k.type.get_shape()) == (1, nkv, 1, skv, d)  # KV heads not repeated
    rng = np.random.default_rng(sq + skv)
    q = rng.standard_normal((1, sq, nkv, g, d)).astype(dtype)
    k, v = (rng.standard_normal((1, skv, nkv, 1, d)).astype(dtype) for _ in range(2))
    i = np.arange(sq)[:, None] + (skv - sq)
    mask = np.where(np.arange(skv)[None, :] > i, -np.inf, 0.0).astype(dtype)
    (out,) = run_function(fused, "gqa", [q, k, v, mask])
    qh, kh, vh = (np.transpose(x.astype(np.float64), (0, 2, 3, 1, 4)) for x in (q, k, v))
    s = qh @ np.swapaxes(kh, -1, -2) * SCALE + mask.astype(np.float64)
    e = np.exp(s - s.max(-1, keepdims=True))
    _close(out, (e / e.sum(-1, keepdims=True)) @ vh, dtype)


@pytest.mark.parametrize("s", [7, 257])
def test_bfloat16(s: int) -> None:
    from pyasc_mlir.types import BF16, astype

    module, name = _module(True, s, s, 64, "bfloat16")
    fused = _fused(module)
    assert [o for o in fused.walk() if isinstance(o, asc.FlashAttentionOp)]
    xs32 = _inputs(s, s, 64, "float32", "causal")
    xs = [astype(x, BF16) for x in xs32]
    (out,) = run_function(fused, name, xs)
    ref = _reference([astype(x, np.dtype(np.float32)) for x in xs])
    # bf16 keeps 8 significand bits: P and the result each round once (2^-8 relative)
    np.testing.assert_allclose(astype(out, np.dtype(np.float32)), ref, rtol=1e-2, atol=1e-2)


def computed_mask_first(q, k, v, keep):
    s = (1.0 - keep) * -10000.0 + pa.matmul(q, k, transpose_b=True) * SCALE
    e = pa.exp(s - s.max(-1, keepdim=True))
    return (e / e.sum(-1, keepdim=True)) @ v


def test_computed_mask_on_the_left() -> None:
    """A mask computed by binary ops (MiniLM's ``(1 - mask) * MASK_VALUE``), added on the
    left: the scores are told apart from the mask by their ``q k^T`` product."""
    descs = [pa.TensorDesc((2, 9, 16), "float32")] * 3 + [pa.TensorDesc((2, 1, 9), "float32")]
    module, _ = pipeline.build_module(computed_mask_first, descs, "computed_mask_first")
    fused = _fused(module, block_kv=4)
    (op,) = [o for o in fused.walk() if isinstance(o, asc.FlashAttentionOp)]
    assert op.mask is not None and op.scale_value == SCALE
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((2, 9, 16)).astype(np.float32) for _ in range(3)]
    keep = (rng.random((2, 1, 9)) > 0.3).astype(np.float32)
    (before,) = run_function(module, "computed_mask_first", [*xs, keep])
    (after,) = run_function(fused, "computed_mask_first", [*xs, keep])
    q, k, v = (x.astype(np.float64) for x in xs)
    s = (1.0 - keep) * -10000.0 + q @ np.swapaxes(k, -1, -2) * SCALE
    e = np.exp(s - s.max(-1, keepdims=True))
    _close(after, (e / e.sum(-1, keepdims=True)) @ v, "float32")
    _close(after, np.asarray(before, np.float64), "float32")
