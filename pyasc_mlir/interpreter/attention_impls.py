"""Interpreter implementation of ``asc.flash_attention``: the blocked online softmax the op
defines (``pyasc_mlir.dialects.asc_attention``), whole blocks per NumPy call.

Per key block of ``block_kv`` columns (all query rows and batch dims at once): scores in
float32 (``float32`` matmul of the operands, times ``scale``, plus the mask block), running max
``m``, running sum ``l`` and accumulator ``O`` in float32; ``P`` rounded to the operands' dtype
before ``P V_blk`` (float32 products and accumulation). Exponentials in float32 NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from pyasc_mlir.dialects import asc
from pyasc_mlir.types import astype, np_dtype_of

__all__ = ["AscAttentionFunctions", "online_attention"]


def online_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None,
    scale: float,
    block_kv: int,
    p_dtype: np.dtype,
    causal: bool = False,
) -> np.ndarray:
    """``softmax(q k^T * scale + mask) v`` by the online softmax over key blocks.

    Args:
        q, k, v: ``[*b, Sq, D]``, ``[*b, Skv, D]``, ``[*b, Skv, Dv]`` (any float dtype; used
            as float32).
        mask: additive, broadcastable to ``[*b, Sq, Skv]``, or ``None``.
        scale: the score scale; block_kv: the key block length (>= 1).
        p_dtype: the dtype ``P`` is rounded to before ``P V`` (the operands' dtype).
        causal: mask key ``j`` out of row ``i`` where ``j > i`` (top-left aligned, as
            ``torch.nn.functional.scaled_dot_product_attention(is_causal=True)``).

    Returns:
        ``[*b, Sq, Dv]`` float32. A row whose scores are all ``-inf`` is NaN (``0 / 0``).
    """
    q32, k32, v32 = (astype(np.asarray(x), np.dtype(np.float32)) for x in (q, k, v))
    skv = k32.shape[-2]
    full = (*q32.shape[:-1], skv)
    if causal:
        mask = np.where(np.arange(skv)[None] > np.arange(full[-2])[:, None], -np.inf, 0.0)
    m32 = None if mask is None else np.broadcast_to(np.asarray(mask, np.float32), full)
    rows = (*q32.shape[:-1], 1)
    m_run = np.full(rows, -np.inf, np.float32)
    l_run = np.zeros(rows, np.float32)
    o = np.zeros((*q32.shape[:-1], v32.shape[-1]), np.float32)
    scale32 = np.float32(scale)
    with np.errstate(all="ignore"):
        for j in range(0, skv, block_kv):
            kb, vb = k32[..., j : j + block_kv, :], v32[..., j : j + block_kv, :]
            s = np.matmul(q32, np.swapaxes(kb, -1, -2)) * scale32
            if m32 is not None:
                s = s + m32[..., j : j + block_kv]
            m_new = np.maximum(m_run, s.max(axis=-1, keepdims=True))
            m_safe = np.where(m_new == -np.inf, np.float32(0), m_new)
            p = np.exp(s - m_safe)
            alpha = np.exp(m_run - m_safe)
            l_run = l_run * alpha + p.sum(axis=-1, keepdims=True, dtype=np.float32)
            pr = astype(astype(p, p_dtype), np.dtype(np.float32))
            o = o * alpha + np.matmul(pr, vb)
            m_run = m_new
        return (o / l_run).astype(np.float32)


@register_impls
class AscAttentionFunctions(InterpreterFunctions):
    """Tensor-level ``asc.flash_attention``."""

    @impl(asc.FlashAttentionOp)
    def run_flash_attention(
        self, interpreter: Interpreter, op: asc.FlashAttentionOp, args: PythonValues
    ) -> PythonValues:
        q, k, v = args[:3]
        mask: Any = args[3] if len(args) > 3 else None
        qt = op.q.type
        assert isinstance(qt, TensorType)
        out = online_attention(
            q,
            k,
            v,
            mask,
            op.scale_value,
            op.block_kv.data,
            np_dtype_of(qt.element_type),
            op.is_causal,
        )
        return (out,)
