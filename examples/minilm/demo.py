"""The MiniLM part of the demo: sentence embeddings from pyasc kernels next to the reference.

``python -m examples.minilm.demo [float32|float16 ...]`` prints, per dtype, the cosine
similarity of each sentence's embedding to the reference embedding, the sentence-by-sentence
cosine-similarity matrix from pyasc kernels and from the reference, and the per-kernel table.
The reference is sentence-transformers (PyTorch, CPU) when installed, else the NumPy one.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from . import reference, torch_reference
from .model import PyAscMiniLM
from .weights import SENTENCES, load_params, tokenize


def reference_embeddings(sentences: tuple[str, ...] | list[str]) -> tuple[np.ndarray, str]:
    """``(embeddings [B, 384] float32, which reference)``."""
    ok, _ = torch_reference.available()
    if ok:
        return torch_reference.encode(sentences), "sentence-transformers (PyTorch, CPU)"
    return reference.encode(load_params(), tokenize(sentences)), "NumPy float32 reference"


def _matrix(e: np.ndarray) -> np.ndarray:
    e = e.astype(np.float64)
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    return e @ e.T


def _format_matrix(m: np.ndarray) -> str:
    head = "      " + " ".join(f"{j:>6}" for j in range(m.shape[1]))
    rows = [f"{i:>4}  " + " ".join(f"{v:6.3f}" for v in row) for i, row in enumerate(m)]
    return "\n".join([head, *rows])


THRESHOLDS = {"float32": 0.9999, "float16": 0.999, "bfloat16": 0.999}
"""Smallest acceptable per-sentence cosine similarity to the reference, per activation dtype."""


def report(
    sentences: tuple[str, ...] | list[str] = SENTENCES,
    dtypes: tuple[str, ...] = ("float32", "float16"),
) -> str:
    """The demo text for ``sentences`` computed with each activation dtype in ``dtypes``."""
    return report_with_status(sentences, dtypes)[0]


def report_with_status(
    sentences: tuple[str, ...] | list[str] = SENTENCES,
    dtypes: tuple[str, ...] = ("float32", "float16"),
) -> tuple[str, bool]:
    """``(report text, every sentence's cosine >= THRESHOLDS[dtype])``."""
    ok = True
    tokens = tokenize(sentences)
    ref, which = reference_embeddings(sentences)
    lines = [
        f"all-MiniLM-L6-v2: {len(sentences)} sentences, batch {tokens.shape} "
        f"(tokens per sentence {tokens.attention_mask.sum(1).tolist()}); reference: {which}"
    ]
    lines += [f"  [{i}] {s}" for i, s in enumerate(sentences)]
    lines += ["", "reference cosine-similarity matrix:", _format_matrix(_matrix(ref))]
    for dtype in dtypes:
        model = PyAscMiniLM(load_params(), dtype)
        t0 = time.perf_counter()
        e = model.encode(tokens)
        seconds = time.perf_counter() - t0
        ee = e.astype(np.float64)
        cos = (ee * ref).sum(1) / np.linalg.norm(ee, axis=1) / np.linalg.norm(ref, axis=1)
        diff = np.abs(_matrix(e) - _matrix(ref)).max()
        ok = ok and bool(cos.min() >= THRESHOLDS.get(dtype, 0.999))
        lines += [
            "",
            f"pyasc kernels, {dtype} activations ({seconds:.1f} s, CPU build, "
            "compile included unless cached):",
            "cosine similarity to the reference per sentence: "
            + " ".join(f"{c:.6f}" for c in cos)
            + f"  (min {cos.min():.8f}, largest 1 - cos {1.0 - cos.min():.1e})",
            f"cosine-similarity matrix (max abs difference to the reference's {diff:.2e}):",
            _format_matrix(_matrix(e)),
            "",
            model.kernel_table(),
        ]
    return "\n".join(lines), ok


if __name__ == "__main__":  # pragma: no cover
    print(report(dtypes=tuple(sys.argv[1:]) or ("float32", "float16")))
