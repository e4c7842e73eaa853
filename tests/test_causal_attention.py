"""``pa.scaled_dot_product_attention`` and the causal one-kernel flash attention (issue 14:
"causal masking skips fully masked blocks"; ``passes/attention_causal.py``).

Checked against a float64 NumPy reference on the CPU build (memory check on: UB bounds, the
strict MIX model, the race detector) and the ascendc-level interpreter: causal and not, S = 1,
7, 33, 257 with Sq == Skv and Sq != Skv (torch's top-left aligned ``is_causal``: key ``j`` is
masked out of row ``i`` where ``j > i``), D = 64, fp16 / fp32, ONE kernel; the torch spelling
against ``torch.nn.functional.scaled_dot_product_attention`` (boolean and float masks, grouped
query heads); the located errors; and that the cost model does not count the skipped blocks.

Tolerances (stated, as ``test_flash_attention_kernel.py``): fp32 rtol = atol = 2e-5, fp16
rtol = atol = 2e-3 (``P`` rounded to fp16 before ``P V``, the result once more).
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import numpy as np
import pytest
import torch

import pyasc_mlir as pa
from pyasc_mlir import cost_model, pipeline
from pyasc_mlir.emitter import kernels
from pyasc_mlir.platform import get_platform
from tests.test_flash_attention_kernel import TOL, assert_executors

HEADS = 2
THIS_FILE = str(Path(__file__).resolve())


def causal(q, k, v):
    return pa.scaled_dot_product_attention(q, k, v, is_causal=True)


def plain(q, k, v):
    return pa.scaled_dot_product_attention(q, k, v)


def causal_scaled(q, k, v):
    return pa.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3)


def masked(q, k, v, m):
    return pa.scaled_dot_product_attention(q, k, v, attn_mask=m)


def masked_bool(q, k, v, m):
    return pa.scaled_dot_product_attention(q, k, v, attn_mask=m > 0)  # True: the key takes part


def grouped(q, k, v):
    return pa.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


def with_dropout(q, k, v):
    return pa.scaled_dot_product_attention(q, k, v, dropout_p=0.1)


def causal_and_mask(q, k, v):
    return pa.scaled_dot_product_attention(q, k, v, k[..., 0], is_causal=True)


def short_value(q, k, v):
    return pa.scaled_dot_product_attention(q, k, v[..., :3, :])


def _inputs(sq: int, skv: int, d: int, dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(sq * 1000 + skv)
    return [(rng.standard_normal((1, HEADS, s, d)) * 1.5).astype(dtype) for s in (sq, skv, skv)]


def _reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, is_causal: bool) -> np.ndarray:
    """float64 ``softmax(q k^T / sqrt(D) + mask) v``, mask ``-inf`` where col > row."""
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    s = q64 @ np.swapaxes(k64, -1, -2) / math.sqrt(q.shape[-1])
    if is_causal:
        sq, skv = s.shape[-2:]
        s = np.where(np.arange(skv)[None] > np.arange(sq)[:, None], -np.inf, s)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v64


def _check(
    sq: int, skv: int, dtype: str, is_causal: bool, memcheck: bool = True, cores: int = 0
) -> None:
    """``cores``: pin the cube cores (0 = automatic); 1 runs every work unit on one core."""
    xs = _inputs(sq, skv, 64, dtype)
    fn = causal if is_causal else plain
    descs = [pa.TensorDesc(x.shape, dtype) for x in xs]
    op = pa.compile(fn, inputs=descs, tiling={"block_dim": cores} if cores else None)
    assert op.info["kernels"] == 1
    assert_executors(op, xs, _reference(*xs, is_causal), TOL[dtype], memcheck)


def test_causal_one_kernel_matches_float64() -> None:
    _check(33, 33, "float16", True)


def test_causal_units_sharing_a_core() -> None:
    """One core runs both heads' query blocks (the per-kernel buffers and the diagonal tile
    are reused across units; the result tile is a queue buffer per unit)."""
    _check(33, 33, "float32", True, cores=1)


@pytest.mark.parametrize(
    ("sq", "dtype", "cores"), [(257, "float16", 3), (160, "float32", 1)], ids=["3 cores", "1 core"]
)
def test_units_dealt_by_cost(sq: int, dtype: str, cores: int) -> None:
    """Several query blocks per head (64-row blocks: 257 rows in 5, the last of 1 row; 160 in
    3, the last of 32), dealt to the cores by cost in snake rounds (``dealt_unit``): 10 units
    on 3 cores (rounds 0 and 2 in order, 1 reversed, core 0 also takes the partial round 3),
    6 units on 1 core."""
    _check(sq, sq, dtype, True, cores=cores)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sq", "skv"),
    [
        (1, 1),
        (7, 7),
        (33, 33),
        (257, 257),
        (7, 257),
        (7, 33),
        (257, 7),
        (257, 33),
        (33, 1),
        (1, 33),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_grid(sq: int, skv: int, dtype: str) -> None:
    """The causal kernel on tails, Sq == Skv and not (the non-causal kernel's grid, runtime
    masks included, is tests/test_flash_attention_kernel.py's ``test_prefill_grid``)."""
    _check(sq, skv, dtype, True, memcheck=sq * skv <= 257 * 33)


# ------------------------------------------------------------------ the torch spelling


def _torch(xs: list[np.ndarray], **kw: object) -> np.ndarray:
    ts = [torch.from_numpy(x.astype(np.float64)) for x in xs[:3]]
    if len(xs) > 3:
        m = xs[3]
        kw["attn_mask"] = torch.from_numpy(m if m.dtype == bool else m.astype(np.float64))
    return torch.nn.functional.scaled_dot_product_attention(*ts, **kw).numpy()


def _interp(fn: object, *xs: np.ndarray) -> np.ndarray:
    descs = [pa.TensorDesc(x.shape, x.dtype.name) for x in xs]
    return np.asarray(pa.compile(fn, inputs=descs)(*xs, backend="interp"))


def test_against_torch_causal_and_scale() -> None:
    xs = _inputs(20, 45, 64, "float32")
    out = _interp(causal_scaled, *xs)
    np.testing.assert_allclose(out, _torch(xs, is_causal=True, scale=0.3), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_against_torch_masks(kind: str) -> None:
    xs = _inputs(9, 40, 64, "float32")
    rng = np.random.default_rng(5)
    m = rng.standard_normal((9, 40)).astype(np.float32)
    m[:, 0] = 1.0  # no fully masked row (torch and the softmax give NaN there)
    out = _interp(masked_bool if kind == "bool" else masked, *xs, m)
    np.testing.assert_allclose(
        out, _torch([*xs, m > 0 if kind == "bool" else m]), rtol=2e-5, atol=2e-5
    )


def test_against_torch_grouped_query_heads_fp16() -> None:
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 4, 17, 64)).astype(np.float16)
    k, v = (rng.standard_normal((1, 2, 17, 64)).astype(np.float16) for _ in range(2))
    out = _interp(grouped, q, k, v)
    assert out.dtype == np.float16
    ref = _torch([q, k, v], is_causal=True, enable_gqa=True)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2e-3, atol=2e-3)


# ------------------------------------------------------------------ located errors


@pytest.mark.parametrize(
    ("fn", "words"),
    [
        (with_dropout, "dropout_p=0.1 is not supported"),
        (causal_and_mask, "is_causal=True with an attn_mask"),
        (short_value, "do not form attention"),
    ],
)
def test_located_errors(fn: object, words: str) -> None:
    xs = _inputs(8, 8, 16, "float32")
    with pytest.raises(pa.PyAscCompileError) as info:
        pa.compile(fn, inputs=[pa.TensorDesc(x.shape, "float32") for x in xs])
    err = info.value
    line = inspect.getsourcelines(fn)[1] + 1  # type: ignore[arg-type]
    assert words in str(err) and err.hint, str(err)
    assert err.loc is not None and err.loc.file == THIS_FILE and err.loc.line == line


# ------------------------------------------------------------------ cost


def _modeled(fn: object, s: int) -> dict[str, float]:
    descs = [pa.TensorDesc((1, 8, s, 64), "float16")] * 3
    stages, _, _ = pipeline.lower(fn, descs, "attn", "910B2", True)  # type: ignore[arg-type]
    plat = get_platform("910B2")
    (kernel,) = kernels(stages["ascendc"])
    e = cost_model.time_walk(cost_model.walk_kernel(kernel, plat), plat)
    return {"time": e.time_us, **e.pipe_us}


def test_skipped_blocks_are_not_counted() -> None:
    """S = 1024, 64-row query blocks and 128-key blocks: a causal query block at m0 runs
    ceil(m0 / 128) + 1 key blocks instead of 8, about 4.75 of 8 on average, the diagonal one
    of 64 keys; the Cube work (pipe M) and the time drop accordingly (MODELED)."""
    full, tri = _modeled(plain, 1024), _modeled(causal, 1024)
    assert tri["M"] < 0.6 * full["M"], (tri, full)
    assert tri["time"] < 0.75 * full["time"], (tri, full)


def test_differentiating_the_fused_op_is_a_located_error_with_the_explicit_form_as_hint():
    """``pa.scaled_dot_product_attention`` is forward-only: its backward names the call and
    points to the explicit softmax form, which differentiates."""

    def att(q, k, v):
        return pa.scaled_dot_product_attention(q, k, v, is_causal=True)

    q = np.random.default_rng(0).standard_normal((1, 2, 7, 16)).astype(np.float32)
    with pytest.raises(pa.PyAscCompileError) as info:
        pa.vjp(att)(q, q, q, q)
    text = str(info.value)
    assert "has no derivative rule" in text and "test_causal_attention.py:" in text
    assert "softmax(q @ k.transpose(-1, -2) * scale + mask) @ v" in text
