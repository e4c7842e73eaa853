"""An independent float32 NumPy implementation of the all-MiniLM-L6-v2 sentence encoder.

Written from the BERT encoder's definition (no PyTorch needed):

    h = LayerNorm(word[ids] + position[0:S] + token_type[tt])                  # embeddings
    for each of the 6 layers:
        q, k, v = h Wq^T + bq, h Wk^T + bk, h Wv^T + bv      split into 12 heads of 32
        p = softmax(q k^T / sqrt(32) + (1 - mask) * MASK_VALUE)     over the key axis
        a = LayerNorm(merge_heads(p v) Wo^T + bo + h)
        h = LayerNorm(gelu_erf(a W1^T + b1) W2^T + b2 + a)
    e = sum_s(h * mask) / sum_s(mask)                                           # mean pooling
    return e / max(||e||_2, 1e-12)                                              # L2 normalise

LayerNorm uses the biased variance and ``eps`` from the config (1e-12); GELU is the exact erf
form ``0.5 x (1 + erf(x / sqrt(2)))`` (``hidden_act = "gelu"``). Every matmul runs in float32;
GELU's ``erf`` is evaluated in float64 and rounded to float32.
"""

from __future__ import annotations

import math

import numpy as np

from .weights import EncoderParams, LayerParams, Tokens

MASK_VALUE = -10000.0
"""Additive score for padded keys: ``exp`` of it underflows to 0 after the row-max shift, and it
is representable in float16 (PyTorch's BERT uses the dtype's minimum; the softmax is the same)."""

_ERF = np.frompyfunc(math.erf, 1, 1)


def gelu_erf(x: np.ndarray) -> np.ndarray:
    """``0.5 x (1 + erf(x / sqrt(2)))`` elementwise, float32 in and out."""
    e = _ERF(x.astype(np.float64) / math.sqrt(2.0)).astype(np.float64)
    return (0.5 * x.astype(np.float64) * (1.0 + e)).astype(np.float32)


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis (biased variance), float32."""
    mu = x.mean(-1, keepdims=True, dtype=np.float32)
    d = x - mu
    var = (d * d).mean(-1, keepdims=True, dtype=np.float32)
    return (d / np.sqrt(var + np.float32(eps)) * w + b).astype(np.float32)


def embed(params: EncoderParams, tokens: Tokens) -> np.ndarray:
    """``word[ids] + position[0:S] + token_type[tt]``, float32 ``[B, S, hidden]``."""
    s = tokens.shape[1]
    return (
        params.word[tokens.input_ids]
        + params.position[:s][None]
        + params.token_type[tokens.token_type_ids]
    ).astype(np.float32)


def _dense(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (x @ w.T + b).astype(np.float32)


def attention(h: np.ndarray, lp: LayerParams, mask: np.ndarray, heads: int) -> np.ndarray:
    """Multi-head self-attention of one layer, before the residual: ``[B, S, hidden]``."""
    b, s, hid = h.shape
    dh = hid // heads

    def split(x: np.ndarray) -> np.ndarray:  # [B, S, hidden] -> [B, heads, S, dh]
        return x.reshape(b, s, heads, dh).transpose(0, 2, 1, 3)

    q, k, v = (
        split(_dense(h, w, bias))
        for w, bias in ((lp.q_w, lp.q_b), (lp.k_w, lp.k_b), (lp.v_w, lp.v_b))
    )
    additive = ((1.0 - mask.astype(np.float32)) * MASK_VALUE)[:, None, None, :]
    scores = q @ k.transpose(0, 1, 3, 2) * np.float32(1.0 / math.sqrt(dh)) + additive
    scores = scores - scores.max(-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(-1, keepdims=True)
    ctx = (p @ v).transpose(0, 2, 1, 3).reshape(b, s, hid)
    return _dense(ctx, lp.o_w, lp.o_b)


def encoder_layer(
    h: np.ndarray, lp: LayerParams, mask: np.ndarray, heads: int, eps: float
) -> np.ndarray:
    """One BERT layer (post-LayerNorm): attention block, then FFN block."""
    a = layer_norm(attention(h, lp, mask, heads) + h, lp.ln1_w, lp.ln1_b, eps)
    f = _dense(gelu_erf(_dense(a, lp.ffn1_w, lp.ffn1_b)), lp.ffn2_w, lp.ffn2_b)
    return layer_norm(f + a, lp.ln2_w, lp.ln2_b, eps)


def hidden_states(params: EncoderParams, tokens: Tokens) -> np.ndarray:
    """The last layer's token states, float32 ``[B, S, hidden]``."""
    cfg = params.config
    h = layer_norm(embed(params, tokens), params.ln_w, params.ln_b, cfg.eps)
    for lp in params.layers:
        h = encoder_layer(h, lp, tokens.attention_mask, cfg.heads, cfg.eps)
    return h


def mean_pool_normalize(h: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of ``h`` over the real tokens, then L2-normalised: ``[B, hidden]`` float32."""
    m = mask.astype(np.float32)[:, :, None]
    pooled = (h * m).sum(1) / np.maximum(m.sum(1), np.float32(1e-9))
    norm = np.sqrt((pooled * pooled).sum(-1, keepdims=True))
    return (pooled / np.maximum(norm, np.float32(1e-12))).astype(np.float32)


def encode(params: EncoderParams, tokens: Tokens) -> np.ndarray:
    """Sentence embeddings, float32 ``[B, hidden]``, unit L2 norm.

    Args:
        params: float32 weights from :func:`~examples.minilm.weights.load_params`.
        tokens: a batch from :func:`~examples.minilm.weights.tokenize`.
    """
    return mean_pool_normalize(hidden_states(params, tokens), tokens.attention_mask)
