"""GELU, in its two common forms.

* exact (erf) form:  ``gelu(x) = 0.5 * x * (1 + erf(x / sqrt(2)))``
* tanh approximation: ``gelu(x) = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))``

BERT/MiniLM use the erf form (``hidden_act = "gelu"``); GPT-2 uses the tanh form.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import pyasc_mlir as pa

from ._common import f64, round_to

INV_SQRT2 = 1.0 / math.sqrt(2.0)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
TANH_COEFF = 0.044715

CONSTS: dict[str, Any] = {}
SHAPES = [(4, 1536), (2, 3, 64), (1, 1), (5, 7), (3, 33), (2, 513)]
REDUCTION = False


def gelu_erf(x):
    return 0.5 * x * (1.0 + pa.erf(x * INV_SQRT2))


def gelu_tanh(x):
    inner = SQRT_2_OVER_PI * (x + TANH_COEFF * x * x * x)
    return 0.5 * x * (1.0 + pa.tanh(inner))


_erf64 = np.frompyfunc(math.erf, 1, 1)


def reference(x: np.ndarray) -> np.ndarray:
    """Exact GELU (``math.erf`` in float64), rounded to ``x``'s dtype."""
    (xs,) = f64(x)
    phi = 0.5 * (1.0 + _erf64(xs / math.sqrt(2.0)).astype(np.float64))
    return round_to(xs * phi, x.dtype)


def reference_tanh(x: np.ndarray) -> np.ndarray:
    """tanh-approximated GELU in float64, rounded to ``x``'s dtype."""
    (xs,) = f64(x)
    t = np.tanh(math.sqrt(2.0 / math.pi) * (xs + 0.044715 * xs**3))
    return round_to(0.5 * xs * (1.0 + t), x.dtype)


KERNEL = gelu_erf
VARIANTS = {
    "gelu_erf": {"kernel": gelu_erf, "reference": reference},
    "gelu_tanh": {"kernel": gelu_tanh, "reference": reference_tanh},
}
"""Case name -> the kernel and reference of that form."""


def make_inputs(
    rng: np.random.Generator, dtype: Any, shape: tuple[int, ...] = (4, 1536), **consts: Any
) -> tuple[np.ndarray, ...]:
    """``(x,)``: pre-activations spread over [-6, 6] (both tails of GELU)."""
    return (round_to(rng.uniform(-6.0, 6.0, size=shape), dtype),)
