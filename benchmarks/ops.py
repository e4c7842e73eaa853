"""Operators the benchmarks compile that are not in ``examples/``.

They live in a module file (not a string or a lambda) because the frontend reads an operator's
source with ``inspect.getsource``.
"""

from __future__ import annotations

import pyasc_mlir as pa


def swiglu(x, w, bg, v, bu):
    """SwiGLU MLP input side with biases: ``silu(x @ w + bg) * (x @ v + bu)``.

    x [M, K], w and v [K, N], bg and bu [N]; one Cube kernel (two matmuls, the epilogue
    fused)."""
    g = x @ w + bg
    return g * pa.sigmoid(g) * (x @ v + bu)


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
