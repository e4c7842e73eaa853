"""A LLaMA-style decoder layer, written from its math with PyTorch spellings:

    h = RMSNorm(x) W_ln1
    q, k, v = h W_q^T, h W_k^T, h W_v^T             heads split, RoPE on q and k
    x = x + causal_gqa_attention(q, k, v) W_o^T      16 query heads share 4 KV heads
    h = RMSNorm(x) W_ln2
    y = x + (silu(h W_gate^T) * (h W_up^T)) W_down^T

Weights are PyTorch ``nn.Linear`` ``[out, in]`` arrays; ``cos``/``sin`` are the rotary tables
``[S, D]`` (HF's ``position_embeddings``: ``cat(freqs, freqs)`` with ``theta = 10000``).

Two spellings of the rotary embedding (``VARIANTS``):

* ``rotate_half``: ``x * cos + rotate_half(x) * sin`` on the ``[B, S, heads, D]`` projection
  (Meta's and HF's math; HF applies it after the transpose, the same elements). The compiler
  does not fuse a slice of a matmul's result into its epilogue nor a concat into the kernel
  that computes its parts, so RoPE is two vector kernels per tensor (the halves'
  arithmetic; the concat) after the projection.
* ``folded``: ``rotate_half(h W^T) = h rotate_half_rows(W)^T`` per head, so with the rotated
  weight prepared once on the host (a sign flip and a row permutation: exact) RoPE is
  ``(h W^T) * cos + (h W_rot^T) * sin`` in the projection's epilogue: one Cube kernel per
  projection, at the price of a second matmul (W_q and W_k are read twice).

Everything else fuses as the README says: RMSNorm is one vector kernel (rows of 2048 do not fit
a Cube block, so it is not an epilogue); K and V share a Cube kernel (two matmuls of one
output shape); attention is ONE flash-attention kernel (causal, grouped-query: no mask tensor,
no ``S x S`` scores in GM); ``o_proj + residual``, ``silu(gate) * up`` and
``down_proj + residual`` are one Cube kernel each.

``python -m examples.llama_decoder [--seq S] [--dtype float16|float32|both] [--small]`` prints
per variant and dtype the kernels of the layer (name, type, blockDim, results, modeled µs), GM
bytes against the ideal, the modeled NPU time, the max error against a float64 NumPy reference
and the CPU-build seconds.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import pyasc_mlir as pa

from ._common import f64, round_to

# --------------------------------------------------------------------------- the layer


def rms_norm(x, weight, eps):
    """LlamaRMSNorm: ``x / sqrt(mean(x^2) + eps) * weight`` (computed in float32)."""
    return x * pa.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotate_half(x):
    """``[x1, x2] -> [-x2, x1]`` over the last dim (HF's ``rotate_half``)."""
    d = x.shape[-1] // 2
    return pa.cat([-x[..., d:], x[..., :d]], dim=-1)


def apply_rope(x, cos, sin):
    """``x * cos + rotate_half(x) * sin``: x ``[B, S, heads, D]``, cos/sin ``[S, D]`` whose
    halves are equal, written on the halves: ``[x1 c - x2 s, x2 c + x1 s]``."""
    d = x.shape[-1] // 2
    c, s = cos[:, None, :d], sin[:, None, :d]
    x1, x2 = x[..., :d], x[..., d:]
    return pa.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


def swiglu_mlp(h, w_gate, w_up, w_down):
    """``(silu(h W_gate^T) * (h W_up^T)) W_down^T``."""
    return (pa.silu(h @ w_gate.T) * (h @ w_up.T)) @ w_down.T


def attention_out(q, k, v, w_o, n_heads):
    """Causal grouped-query attention over ``[B, heads, S, D]`` q and ``[B, kv_heads, S, D]``
    k/v, heads merged again, then ``W_o``."""
    b, _, s, d = q.shape
    a = pa.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    return a.transpose(1, 2).reshape(b, s, n_heads * d) @ w_o.T


def llama_decoder(x, ln1, wq, wk, wv, wo, ln2, w_gate, w_up, w_down, cos, sin, n_heads, n_kv, eps):
    """The layer with RoPE as ``x * cos + rotate_half(x) * sin`` on the split heads."""
    b, s, _ = x.shape
    d = cos.shape[-1]
    h = rms_norm(x, ln1, eps)
    q = (h @ wq.T).view(b, s, n_heads, d)
    k = (h @ wk.T).view(b, s, n_kv, d)
    v = (h @ wv.T).view(b, s, n_kv, d).transpose(1, 2)
    q = apply_rope(q, cos, sin).transpose(1, 2)
    k = apply_rope(k, cos, sin).transpose(1, 2)
    x = x + attention_out(q, k, v, wo, n_heads)
    return x + swiglu_mlp(rms_norm(x, ln2, eps), w_gate, w_up, w_down)


def llama_decoder_folded(
    x, ln1, wq, wq_rot, wk, wk_rot, wv, wo, ln2, w_gate, w_up, w_down, cos_q, sin_q, cos_k, sin_k,
    n_heads, n_kv, eps,
):  # fmt: skip
    """The layer with ``rotate_half`` folded into the weights (``wq_rot = rotate_rows(wq)``)
    and ``cos``/``sin`` tiled over the heads (``cos_q`` ``[S, heads * D]``, ``cos_k``
    ``[S, kv_heads * D]``): RoPE is the projections' epilogue."""
    b, s, _ = x.shape
    d = wq.shape[0] // n_heads
    h = rms_norm(x, ln1, eps)
    q = (h @ wq.T) * cos_q + (h @ wq_rot.T) * sin_q
    k = (h @ wk.T) * cos_k + (h @ wk_rot.T) * sin_k
    v = h @ wv.T
    q, k, v = (t.view(b, s, -1, d).transpose(1, 2) for t in (q, k, v))
    x = x + attention_out(q, k, v, wo, n_heads)
    return x + swiglu_mlp(rms_norm(x, ln2, eps), w_gate, w_up, w_down)


# --------------------------------------------------------------------------- sizes and inputs


@dataclass(frozen=True)
class Config:
    """Layer sizes (TinyLlama-1.1B's by default: hidden 2048, 32 x 64 heads there; the issue's
    16 x 128 here) and the sequence."""

    hidden: int = 2048
    heads: int = 16
    kv_heads: int = 4
    head_dim: int = 128
    ffn: int = 5632
    seq: int = 64
    batch: int = 1
    eps: float = 1e-5
    theta: float = 10000.0


SMALL = Config(hidden=256, heads=4, kv_heads=2, head_dim=64, ffn=512, seq=33)
"""The test's size: a 33-token sequence (a tail of every 16-row block)."""


def rope_tables(cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    """float64 ``cos``/``sin`` ``[S, D]`` of positions ``0..S-1`` (HF's default RoPE)."""
    inv = cfg.theta ** (-np.arange(0, cfg.head_dim, 2, dtype=np.float64) / cfg.head_dim)
    freqs = np.arange(cfg.seq, dtype=np.float64)[:, None] * inv[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb), np.sin(emb)


def rotate_rows(w: np.ndarray, heads: int) -> np.ndarray:
    """``W_rot`` with ``x W_rot^T == rotate_half(x W^T)`` per head: in each head's ``D`` output
    rows, ``[w1; w2] -> [-w2; w1]`` (exact)."""
    out, inp = w.shape
    wh = w.reshape(heads, out // heads, inp)
    d = wh.shape[1] // 2
    return np.ascontiguousarray(np.concatenate([-wh[:, d:], wh[:, :d]], axis=1).reshape(out, inp))


def make_params(cfg: Config, dtype: Any, seed: int = 0) -> dict[str, np.ndarray]:
    """Random weights (``N(0, 1/in)`` so activations stay O(1); norm weights around 1) and the
    input ``x ~ N(0, 1)``, rounded to ``dtype``; ``cos``/``sin`` rounded too (as HF casts them
    to the activations' dtype)."""
    rng = np.random.default_rng(seed)
    h, f, qd, kd = cfg.hidden, cfg.ffn, cfg.heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim

    def lin(out: int, inp: int) -> np.ndarray:
        return round_to(rng.standard_normal((out, inp)) / math.sqrt(inp), dtype)

    cos, sin = rope_tables(cfg)
    return {
        "x": round_to(rng.standard_normal((cfg.batch, cfg.seq, h)), dtype),
        "ln1": round_to(1.0 + 0.1 * rng.standard_normal(h), dtype),
        "wq": lin(qd, h),
        "wk": lin(kd, h),
        "wv": lin(kd, h),
        "wo": lin(h, qd),
        "ln2": round_to(1.0 + 0.1 * rng.standard_normal(h), dtype),
        "w_gate": lin(f, h),
        "w_up": lin(f, h),
        "w_down": lin(h, f),
        "cos": round_to(cos, dtype),
        "sin": round_to(sin, dtype),
    }


def arguments(variant: str, p: dict[str, np.ndarray], cfg: Config) -> list[Any]:
    """The operator's arguments (arrays, then ``n_heads, n_kv, eps``) for ``variant``."""
    consts = [cfg.heads, cfg.kv_heads, cfg.eps]
    common = ["wo", "ln2", "w_gate", "w_up", "w_down"]
    if variant == "rotate_half":
        names = ["x", "ln1", "wq", "wk", "wv", *common, "cos", "sin"]
        return [p[n] for n in names] + consts
    tables = [np.ascontiguousarray(np.tile(p[t], (1, n))) for n in (cfg.heads, cfg.kv_heads)
              for t in ("cos", "sin")]  # fmt: skip
    wq_rot, wk_rot = rotate_rows(p["wq"], cfg.heads), rotate_rows(p["wk"], cfg.kv_heads)
    head = [p["x"], p["ln1"], p["wq"], wq_rot, p["wk"], wk_rot, p["wv"]]
    return head + [p[n] for n in common] + tables + consts


VARIANTS: dict[str, Any] = {"rotate_half": llama_decoder, "folded": llama_decoder_folded}

# --------------------------------------------------------------------------- reference


def reference(p: dict[str, np.ndarray], cfg: Config) -> np.ndarray:
    """The layer in float64 NumPy from the (rounded) inputs, no intermediate rounding."""
    names = ("x", "ln1", "wq", "wk", "wv", "wo", "ln2", "w_gate", "w_up", "w_down", "cos", "sin")
    x, ln1, wq, wk, wv, wo, ln2, wg, wu, wd, cos, sin = f64(*(p[n] for n in names))
    b, s, _ = x.shape
    d, g = cfg.head_dim, cfg.heads // cfg.kv_heads

    def norm(t: np.ndarray, w: np.ndarray) -> np.ndarray:
        return t / np.sqrt((t * t).mean(-1, keepdims=True) + cfg.eps) * w

    def heads(t: np.ndarray) -> np.ndarray:  # [B, S, n*D] -> [B, n, S, D]
        return t.reshape(b, s, -1, d).transpose(0, 2, 1, 3)

    def rope(t: np.ndarray) -> np.ndarray:
        rot = np.concatenate([-t[..., d // 2 :], t[..., : d // 2]], axis=-1)
        return t * cos + rot * sin

    h = norm(x, ln1)
    q, k, v = rope(heads(h @ wq.T)), rope(heads(h @ wk.T)), heads(h @ wv.T)
    k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)  # query head i reads KV head i // g
    sc = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)
    sc = np.where(np.triu(np.ones((s, s), bool), 1), -np.inf, sc)
    e = np.exp(sc - sc.max(-1, keepdims=True))
    a = ((e / e.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(b, s, -1)
    x = x + a @ wo.T
    h = norm(x, ln2)
    gate = h @ wg.T
    return x + (gate / (1.0 + np.exp(-gate)) * (h @ wu.T)) @ wd.T


TOL = {"float16": 2e-2, "float32": 1e-4}
"""rtol = atol against the float64 reference. float32: every kernel computes in float32
(matmuls accumulate in float32 over K up to 5632); measured max |err| 8.1e-6 at the full size
(2.5e-6 at the test's), 1e-4 leaves room for the K-long sums. float16: the values that cross
a kernel boundary are rounded to float16 (half an ulp: 2^-11 = 4.9e-4 relative) about ten
times in the layer (h, q, k, v, P before P V, the attention output, the SwiGLU product, the
result) and each rounding error is carried through a K-long matmul of O(1) weights; measured
max |err| 2.5e-3 at the full size and at the test's (outputs of magnitude up to ~5): 2e-2 is
about 8x above it."""

# --------------------------------------------------------------------------- the run


@dataclass
class Kernel:
    """One launch of the layer's host function."""

    name: str
    kernel_type: str
    block_dim: int
    results: list[str]
    modeled_us: float


@dataclass
class Result:
    """One compiled and run layer (``gm_bytes``: what its kernels read and write;
    ``ideal_bytes``: the layer's own arrays (x, the weights of the math, cos, sin) read once
    and its output written once; ``modeled_us``: the cost model's NPU time, MODELED, not
    measured; ``seconds``: one run of the CPU build, compile excluded)."""

    variant: str
    dtype: str
    kernels: list[Kernel]
    gm_bytes: int
    ideal_bytes: int
    modeled_us: float
    max_err: float
    excess: float
    ok: bool
    seconds: float
    compile_seconds: float
    out: np.ndarray = field(repr=False)


def _role(launch: dict[str, Any]) -> str:
    kt = str(launch.get("kernel_type", "")).removeprefix("KERNEL_TYPE_")
    tiling = launch.get("tiling", {})
    if "block_kv" in tiling:
        return "attention"
    if "mm0_M" in tiling:
        return "cube" + ("x2" if "mm1_M" in tiling else "") + ("x3" if "mm2_M" in tiling else "")
    return "vector" if kt == "AIV_ONLY" else kt


def run(variant: str, dtype: str, cfg: Config = Config(), seed: int = 0) -> Result:
    """Compile ``variant`` for ``cfg`` in ``dtype``, run it once on the CPU build, compare it
    with :func:`reference`."""
    from . import excess_error, max_abs_error

    p = make_params(cfg, dtype, seed)
    args = arguments(variant, p, cfg)
    fn = pa.jit(VARIANTS[variant])
    t0 = time.perf_counter()
    op = fn.compile(*args)
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    got = np.asarray(op(*[a for a in args if isinstance(a, np.ndarray)]))
    seconds = time.perf_counter() - t0
    ref = reference(p, cfg)
    info = op.info
    per = info["modeled_us"]["kernels"]
    kernels = [
        Kernel(
            launch["kernel"],
            _role(launch),
            int(launch["block_dim"]),
            [f"{r['dtype']}{r['shape']}" for r in launch["results"]],
            float(per.get(launch["kernel"], 0.0)),
        )
        for launch in info["launches"]
    ]
    ideal = sum(a.nbytes for a in p.values()) + got.nbytes
    excess = excess_error(got, round_to(ref, got.dtype), TOL[dtype])
    return Result(
        variant,
        dtype,
        kernels,
        int(info["gm_bytes"]),
        ideal,
        float(info["modeled_us"]["total"]),
        max_abs_error(got, ref),
        excess,
        excess <= TOL[dtype],
        seconds,
        compile_s,
        got,
    )


def report(r: Result) -> str:
    """The result as text."""
    lines = [
        f"{r.variant} / {r.dtype}: {len(r.kernels)} kernels per layer"
        f"  (GM {r.gm_bytes / 1e6:.2f} MB vs ideal {r.ideal_bytes / 1e6:.2f} MB ="
        f" {r.gm_bytes / r.ideal_bytes:.2f}x; modeled {r.modeled_us:.1f} us (MODELED, 910B2);"
        f" max |err| {r.max_err:.2e} vs float64, tol {TOL[r.dtype]:g}"
        f" {'ok' if r.ok else 'OUTSIDE'}; CPU build {r.seconds:.1f} s,"
        f" compile {r.compile_seconds:.1f} s)"
    ]
    for k in r.kernels:
        lines.append(
            f"    {k.name:26s} {k.kernel_type:10s} blockDim {k.block_dim:3d}"
            f"  {k.modeled_us:8.2f} us(modeled)  -> {', '.join(k.results)}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:  # pragma: no cover - printing only
    """``python -m examples.llama_decoder``: exit status 1 when a run is outside tolerance."""
    ap = argparse.ArgumentParser(prog="python -m examples.llama_decoder")
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--dtype", choices=["float16", "float32", "both"], default="both")
    ap.add_argument("--variant", choices=[*VARIANTS, "both"], default="both")
    ap.add_argument("--small", action="store_true", help="the test's sizes (hidden 256)")
    ns = ap.parse_args(sys.argv[1:] if argv is None else argv)
    base = SMALL if ns.small else Config()
    cfg = Config(**{**base.__dict__, "seq": ns.seq if not ns.small else base.seq})
    print(
        f"LLaMA decoder layer: hidden {cfg.hidden}, {cfg.heads} query heads x {cfg.head_dim},"
        f" {cfg.kv_heads} KV heads, FFN {cfg.ffn}, batch {cfg.batch}, seq {cfg.seq}"
    )
    ok = True
    for variant in VARIANTS if ns.variant == "both" else [ns.variant]:
        for dtype in ["float16", "float32"] if ns.dtype == "both" else [ns.dtype]:
            r = run(variant, dtype, cfg)
            ok &= r.ok
            print(report(r), flush=True)
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":  # pragma: no cover
    main()
