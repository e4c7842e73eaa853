"""all-MiniLM-L6-v2 computed by pyasc kernels: every tensor computation after the embedding
lookup runs in operators compiled by pyasc-mlir (the CPU build of the emitted Ascend C, or the
interpreter).

The host does only what is not arithmetic: the embedding-table gathers (``word[ids]``,
``token_type[tt]``, the first ``S`` rows of the position table), stacking each layer's Q/K/V
weights once at load time (``[3, 1, H, H]``), and views: Q, K, V are ``qkv[0]``, ``qkv[1]``,
``qkv[2]`` of the projection's ``[3, B, S, H]`` result, and the attention mask is viewed as
``[B, 1, 1, S]`` / ``[B, S, 1]``. The head split (``[B, S, H]`` -> ``[B, heads, S, D]``) and
the head merge are reshapes/transposes that the Cube kernels fold into their GM addressing, so
no data-movement kernel runs. Per forward pass the operators below run:

    operator              computes                                          kernel     calls
    embed_layernorm       LayerNorm(word + position + token_type)           vector       1
    qkv_projection        x [Wq; Wk; Wv]^T + [bq; bk; bv]                   cube+epi     6
    attention_probs       softmax(q k^T / sqrt(D) + (1 - mask) * MASK_VALUE)  cube+epi   6
                          (keys <= 256: each block holds whole rows, so the row max/sum
                          run in the matmul's epilogue)
    attention_context     p v per head, heads merged to [B, S, H]           cube+epi     6
    dense_residual        x W^T + b + residual (attention out, FFN down)    cube+epi    12
    layernorm             LayerNorm over the hidden axis                    vector      12
    dense_gelu            gelu_erf(x W^T + b) (FFN up)                      cube+epi     6
    mean_pool_normalize   masked mean over tokens, then L2 normalisation    vector       1

Activations are float32, float16 or bfloat16 (``dtype``); with float16 (bfloat16) the weights
are float16 (bfloat16) too and every kernel computes in float32 (matmuls accumulate in float32
on the Cube), rounding once to the 16-bit dtype on output. :attr:`PyAscMiniLM.stats` records,
per operator, the compiled kernels, fused op count and GM bytes from the compiled op's ``info``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

import pyasc_mlir as pa

from .reference import MASK_VALUE
from .weights import EncoderParams, Tokens

INV_SQRT2 = 1.0 / math.sqrt(2.0)

# --------------------------------------------------------------------------- operators
# Plain functions over tensors; `[B, S, H]` activations, `[out, in]` (PyTorch) weights.


def embed_layernorm(word, position, token_type, weight, bias, eps):
    """LayerNorm(word + position + token_type): word/token_type ``[B, S, H]``, position
    ``[S, H]`` (broadcast over B), weight/bias ``[H]``."""
    x = word + position + token_type
    d = x - x.mean(-1, keepdim=True)
    return d * pa.rsqrt((d * d).mean(-1, keepdim=True) + eps) * weight + bias


def layernorm(x, weight, bias, eps):
    """LayerNorm over the last axis (biased variance): x ``[..., H]``, weight/bias ``[H]``."""
    d = x - x.mean(-1, keepdim=True)
    return d * pa.rsqrt((d * d).mean(-1, keepdim=True) + eps) * weight + bias


def qkv_projection(x, w, b):
    """Q, K and V in one batched matmul: x ``[B, S, H]``, w ``[3, 1, H, H]`` (the ``[out, in]``
    Q, K, V weights stacked), b ``[3, 1, 1, H]`` -> ``[3, B, S, H]`` (``[0]`` = Q, ``[1]`` = K,
    ``[2]`` = V, each a contiguous ``[B, S, H]``)."""
    pa.match_shape(w, (3, 1, x.shape[-1], x.shape[-1]))
    return pa.matmul(x, w, transpose_b=True) + b


def _split_heads(x, heads):
    """``[B, S, H]`` -> ``[B, heads, S, H / heads]``; a Cube kernel reads it in place."""
    b, s, h = pa.match_shape(x, (None, None, None))
    return x.reshape(b, s, heads, h // heads).transpose(1, 2)


def attention_scores(q, k, mask, heads, scale):
    """``q k^T * scale + (1 - mask) * MASK_VALUE`` per head: q, k ``[B, S, H]``, mask
    ``[B, 1, 1, S]`` (1.0 token, 0.0 padding) -> ``[B, heads, S, S]``."""
    pa.assert_compatible([q, k], exclude_dim=1)
    scores = pa.matmul(_split_heads(q, heads), _split_heads(k, heads), transpose_b=True)
    return scores * scale + (1.0 - mask) * MASK_VALUE


def softmax(x):
    """Softmax over the last axis (row maximum subtracted first)."""
    e = pa.exp(x - x.max(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def attention_probs(q, k, mask, heads, scale):
    """``softmax(q k^T * scale + (1 - mask) * MASK_VALUE)`` per head -> ``[B, heads, S, S]``:
    one Cube kernel (the softmax is its epilogue) for sequences of at most 256 tokens."""
    return softmax(attention_scores(q, k, mask, heads, scale))


def attention_context(probs, v, heads):
    """``probs @ v`` per head with the heads merged again: probs ``[B, heads, S, S]``, v
    ``[B, S, H]`` -> ``[B, S, H]``."""
    b, s, h = pa.match_shape(v, (None, None, None))
    # One kernel: the head merge is the matmul's output addressing (asc-fuse rounds a float16
    # result in the epilogue, before the merge).
    return (probs @ _split_heads(v, heads)).transpose(1, 2).reshape(b, s, h)


def dense_residual(x, w, b, residual):
    """``x @ w^T + b + residual``: x ``[B, S, K]``, w ``[N, K]``, b ``[N]``, residual
    ``[B, S, N]``."""
    return pa.matmul(x, w, transpose_b=True) + b + residual


def dense_gelu(x, w, b):
    """``gelu(x @ w^T + b)`` with the exact erf GELU ``0.5 h (1 + erf(h / sqrt(2)))``."""
    h = pa.matmul(x, w, transpose_b=True) + b
    return 0.5 * h * (1.0 + pa.erf(h * INV_SQRT2))


def mean_pool_normalize(h, mask):
    """Masked mean over tokens, then L2 normalisation: h ``[B, S, H]``, mask ``[B, S, 1]``
    -> ``[B, H]`` with ``e / max(||e||, 1e-12)``."""
    pooled = (h * mask).sum(1) / pa.maximum(mask.sum(1), 1e-9)
    return pooled * pa.rsqrt(pa.maximum((pooled * pooled).sum(-1, keepdim=True), 1e-24))


OPERATORS: dict[str, Any] = {
    fn.__name__: pa.jit(fn)
    for fn in (
        embed_layernorm,
        qkv_projection,
        attention_probs,
        attention_context,
        dense_residual,
        layernorm,
        dense_gelu,
        mean_pool_normalize,
    )
}
"""The compiled operators by name (``@pa.jit`` wrappers of the functions above)."""


# --------------------------------------------------------------------------- the model


@dataclass
class KernelStat:
    """What one operator compiled to, and how often it ran in the recorded passes.

    Attributes:
        role: where the model uses it (``o_proj`` and ``ffn_down`` are both
        ``dense_residual``). operator: the operator's name. kernels: kernels per call.
        fused_ops: tensor-level ops fused into them. gm_bytes: GM bytes per call (each kernel's
        inputs read once, outputs written once). unfused_gm_bytes: the same with one kernel
        per op. calls: calls recorded.
    """

    role: str
    operator: str
    kernels: int
    fused_ops: int
    gm_bytes: int
    unfused_gm_bytes: int
    calls: int = 0


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray
    qkv_b: np.ndarray
    o_w: np.ndarray
    o_b: np.ndarray
    ln1_w: np.ndarray
    ln1_b: np.ndarray
    ffn1_w: np.ndarray
    ffn1_b: np.ndarray
    ffn2_w: np.ndarray
    ffn2_b: np.ndarray
    ln2_w: np.ndarray
    ln2_b: np.ndarray


class PyAscMiniLM:
    """The encoder with every post-lookup tensor computation in pyasc kernels.

    Args:
        params: float32 weights (:func:`~examples.minilm.weights.load_params`).
        dtype: activation and weight dtype, ``"float32"``, ``"float16"`` or ``"bfloat16"``
            (``ml_dtypes.bfloat16`` arrays; accumulation is float32 either way).
        backend: ``"cpu"`` (CPU build of the emitted Ascend C) or ``"interp"`` (interpreter).

    Raises:
        ValueError: an unknown dtype or backend.
    """

    def __init__(self, params: EncoderParams, dtype: str = "float32", backend: str = "cpu"):
        if dtype not in ("float32", "float16", "bfloat16"):
            raise ValueError(f"dtype must be 'float32', 'float16' or 'bfloat16', got {dtype!r}")
        if backend not in ("cpu", "interp"):
            raise ValueError(f"backend must be 'cpu' or 'interp', got {backend!r}")
        self.dtype = pa.TensorDesc((), dtype).np_dtype  # ml_dtypes.bfloat16 for bfloat16
        self.backend = backend
        self.config = params.config
        p = params.astype(self.dtype)
        self.word, self.position, self.token_type = p.word, p.position, p.token_type
        self.ln_w, self.ln_b = p.ln_w, p.ln_b
        hid = self.config.hidden
        self.layers = tuple(
            _Layer(
                qkv_w=np.stack([lp.q_w, lp.k_w, lp.v_w]).reshape(3, 1, hid, hid),
                qkv_b=np.stack([lp.q_b, lp.k_b, lp.v_b]).reshape(3, 1, 1, hid),
                o_w=lp.o_w,
                o_b=lp.o_b,
                ln1_w=lp.ln1_w,
                ln1_b=lp.ln1_b,
                ffn1_w=lp.ffn1_w,
                ffn1_b=lp.ffn1_b,
                ffn2_w=lp.ffn2_w,
                ffn2_b=lp.ffn2_b,
                ln2_w=lp.ln2_w,
                ln2_b=lp.ln2_b,
            )
            for lp in p.layers
        )
        self.stats: dict[str, KernelStat] = {}

    def _run(self, role: str, name: str, *args: Any) -> np.ndarray:
        """Compile (cached) and run operator ``name``, recording its statistics under
        ``role`` (one operator can serve several roles, e.g. ``dense_residual``)."""
        op = OPERATORS[name].compile(*args)
        info = op.info
        stat = self.stats.get(role)
        if stat is None:
            stat = self.stats[role] = KernelStat(
                role,
                name,
                info["kernels"],
                info["fused_ops"],
                info["gm_bytes"],
                info["unfused_gm_bytes"],
            )
        stat.calls += 1
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        return op(*arrays, backend=self.backend)

    def embed(self, tokens: Tokens) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The host-side gathers: ``(word[ids], position[0:S], token_type[tt])``."""
        s = tokens.shape[1]
        if s > self.position.shape[0]:
            raise ValueError(
                f"sequence length {s} exceeds the {self.position.shape[0]} position embeddings"
            )
        return (
            self.word[tokens.input_ids],
            np.ascontiguousarray(self.position[:s]),
            self.token_type[tokens.token_type_ids],
        )

    def layer(self, h: np.ndarray, lw: _Layer, mask4: np.ndarray) -> np.ndarray:
        """One encoder layer on ``h`` ``[B, S, H]``; mask4 ``[B, 1, 1, S]``."""
        cfg = self.config
        qkv = self._run("qkv_proj", "qkv_projection", h, lw.qkv_w, lw.qkv_b)
        probs = self._run(
            "attn_probs",
            "attention_probs",
            qkv[0],
            qkv[1],
            mask4,
            cfg.heads,
            1.0 / math.sqrt(cfg.head_dim),
        )
        ctx = self._run("context", "attention_context", probs, qkv[2], cfg.heads)
        a = self._run("o_proj", "dense_residual", ctx, lw.o_w, lw.o_b, h)
        a = self._run("attn_layernorm", "layernorm", a, lw.ln1_w, lw.ln1_b, cfg.eps)
        f = self._run("ffn_up", "dense_gelu", a, lw.ffn1_w, lw.ffn1_b)
        f = self._run("ffn_down", "dense_residual", f, lw.ffn2_w, lw.ffn2_b, a)
        return self._run("ffn_layernorm", "layernorm", f, lw.ln2_w, lw.ln2_b, cfg.eps)

    def encode(self, tokens: Tokens) -> np.ndarray:
        """Sentence embeddings ``[B, H]`` (unit L2 norm) in the model's dtype.

        Raises:
            ValueError: the batch is longer than the position table.
        """
        b, s = tokens.shape
        mask = tokens.attention_mask.astype(self.dtype)
        word, position, token_type = self.embed(tokens)
        h = self._run(
            "embed_layernorm",
            "embed_layernorm",
            word,
            position,
            token_type,
            self.ln_w,
            self.ln_b,
            self.config.eps,
        )
        mask4 = mask.reshape(b, 1, 1, s)
        for lw in self.layers:
            h = self.layer(h, lw, mask4)
        return self._run("pool_normalize", "mean_pool_normalize", h, mask.reshape(b, s, 1))

    def kernel_table(self) -> str:
        """One line per role: kernels, fused ops, GM bytes per call (each kernel's inputs read
        once, outputs written once, from the compiled op's ``info``), calls; then totals."""
        head = (
            f"{'role':15} {'operator':20} {'kernels':>7} {'fused ops':>9} "
            f"{'GM bytes/call':>14} {'unfused GM':>12} {'calls':>6}"
        )
        lines = [head, "-" * len(head)]
        for st in self.stats.values():
            lines.append(
                f"{st.role:15} {st.operator:20} {st.kernels:>7} {st.fused_ops:>9} "
                f"{st.gm_bytes:>14,} {st.unfused_gm_bytes:>12,} {st.calls:>6}"
            )
        launches = sum(st.kernels * st.calls for st in self.stats.values())
        gm = sum(st.gm_bytes * st.calls for st in self.stats.values())
        unfused = sum(st.unfused_gm_bytes * st.calls for st in self.stats.values())
        lines.append(
            f"per pass: {launches} kernel launches, {gm:,} GM bytes "
            f"({unfused:,} with one kernel per op)"
        )
        return "\n".join(lines)
