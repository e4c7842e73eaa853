"""Operators the benchmarks compile that are not in ``examples/``.

They live in a module file (not a string or a lambda) because the frontend reads an operator's
source with ``inspect.getsource``.
"""

from __future__ import annotations

import pyasc_mlir as pa


def swiglu(x, w_gate, w_up):
    """SwiGLU MLP input side: ``silu(x @ w_gate) * (x @ w_up)`` (needs matmul)."""
    g = x @ w_gate
    return g * pa.sigmoid(g) * (x @ w_up)


def sine(x):
    """Elementwise sine (needs ``pa.sin`` in the frontend)."""
    return pa.sin(x)


def cosine(x):
    """Elementwise cosine (needs ``pa.cos`` in the frontend)."""
    return pa.cos(x)


def residual_add(x, residual):
    """The first kernel of the two-kernel (add, then LayerNorm) baseline."""
    return x + residual


def layernorm(h, weight, bias, eps):
    """The second kernel of the two-kernel (add, then LayerNorm) baseline."""
    mean = h.mean(-1, keepdim=True)
    d = h - mean
    var = (d * d).mean(-1, keepdim=True)
    return d * pa.rsqrt(var + eps) * weight + bias
