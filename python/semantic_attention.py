"""``pyasc_mlir.scaled_dot_product_attention`` (``torch.nn.functional``'s spelling): the
frontend builds ``asc.flash_attention`` (``pyasc_mlir.dialects.asc_attention``) directly, with
``causal`` for ``is_causal=True``, then casts the f32 result to the query's dtype.

Checked here, each a located ``PyAscCompileError``: ``dropout_p != 0`` (no random numbers in
a kernel), ``is_causal`` with ``attn_mask`` (torch rejects it too), operands that are not
three float tensors of one dtype and one rank >= 2 forming attention, a mask that does not
broadcast to the scores ``[*b, L, S]``, non-constant flags or scale.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from typing import Any

from xdsl.ir import SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.dialects.asc_attention import broadcastable
from pyasc_mlir.frontend.semantic_torch import TorchSemantic
from pyasc_mlir.frontend.values import SymbolicTensor, is_number
from pyasc_mlir.passes.flash_attention import DEFAULT_BLOCK_KV

__all__ = ["scaled_dot_product_attention"]

WHAT = "scaled_dot_product_attention()"


def _flag(sem: TorchSemantic, a: Mapping[str, Any], name: str, node: ast.AST) -> bool:
    v = a[name]
    if not isinstance(v, bool):
        sem.error(f"{WHAT}: {name} must be a compile-time bool, got {v!r}", node, f"{name}=True")
    return v


def _operands(
    sem: TorchSemantic, a: Mapping[str, Any], gqa: bool, node: ast.AST
) -> tuple[SymbolicTensor, SymbolicTensor, SymbolicTensor]:
    q, k, v = (sem.need_tensor(a[n], WHAT, node) for n in ("query", "key", "value"))
    if len({q.dtype, k.dtype, v.dtype}) != 1 or q.dtype == "bool":
        sem.error(
            f"{WHAT}: query, key and value must share one float dtype, got "
            f"{q.dtype}, {k.dtype}, {v.dtype}",
            node,
            "cast them to one dtype first, e.g. k.half()",
        )
    if not _forms_attention(q.shape, k.shape, v.shape, gqa):
        sem.error(
            f"{WHAT}: shapes query {list(q.shape)}, key {list(k.shape)}, value "
            f"{list(v.shape)} do not form attention",
            node,
            "query [*b, L, E], key [*b, S, E], value [*b, S, Ev] of one rank (enable_gqa=True: "
            "key/value with Hq / Hkv times fewer heads on dim -3)",
        )
    return q, k, v


def _forms_attention(
    qs: tuple[int, ...], ks: tuple[int, ...], vs: tuple[int, ...], gqa: bool
) -> bool:
    if not (len(qs) >= 2 and len(qs) == len(ks) == len(vs)):
        return False
    if qs[-1] != ks[-1] or ks[:-1] != vs[:-1]:
        return False
    if broadcastable(ks[:-2], qs[:-2]):
        return True
    grouped = gqa and len(qs) >= 3 and qs[-3] % ks[-3] == 0
    return grouped and broadcastable(ks[:-3], qs[:-3])


def _group(
    sem: TorchSemantic, q: SymbolicTensor, k: SymbolicTensor, v: SymbolicTensor, node: ast.AST
) -> tuple[SymbolicTensor, SymbolicTensor, SymbolicTensor, int]:
    """Grouped-query heads as a broadcast axis: ``q [*b, Hkv, G, L, E]``, ``k, v [*b, Hkv,
    1, S, E]`` (query head ``h`` reads KV head ``h // G``, as torch's ``enable_gqa``)."""
    hq, hkv = q.shape[-3], k.shape[-3]
    if hq == hkv:
        return q, k, v, 0
    g = hq // hkv
    q = sem.reshape(q, [*q.shape[:-3], hkv, g, *q.shape[-2:]], node)
    k = sem.reshape(k, [*k.shape[:-3], hkv, 1, *k.shape[-2:]], node)
    v = sem.reshape(v, [*v.shape[:-3], hkv, 1, *v.shape[-2:]], node)
    return q, k, v, g


def _mask(sem: TorchSemantic, m: Any, scores: tuple[int, ...], node: ast.AST) -> Any:
    """The additive f32 mask (a boolean one as ``0`` / ``-inf``), unbroadcast."""
    if m is None:
        return None
    m = sem.need_tensor(m, f"{WHAT} attn_mask", node)
    if not broadcastable(m.shape, scores):
        sem.error(
            f"{WHAT}: attn_mask of shape {list(m.shape)} does not broadcast to the scores "
            f"{list(scores)}",
            node,
            "attn_mask is [L, S] or [*b, L, S] (size-1 dims broadcast)",
        )
    if m.dtype == "bool":
        m = sem.select(m, 0.0, -math.inf, node)
    return sem.convert(m.value, "float32", node)


def scaled_dot_product_attention(
    sem: TorchSemantic, a: Mapping[str, Any], node: ast.AST
) -> SymbolicTensor:
    """See the module docstring and ``pyasc_mlir.ops_torch.scaled_dot_product_attention``."""
    causal, gqa = _flag(sem, a, "is_causal", node), _flag(sem, a, "enable_gqa", node)
    p = a["dropout_p"]
    if not is_number(p) or float(p) != 0.0:
        sem.error(
            f"{WHAT}: dropout_p={p!r} is not supported (no random numbers in a kernel)",
            node,
            "pass dropout_p=0.0 (inference); apply dropout outside the operator",
        )
    if causal and a["attn_mask"] is not None:
        sem.error(
            f"{WHAT}: is_causal=True with an attn_mask",
            node,
            "pass one of them (as torch): fold the causal mask into attn_mask, or drop attn_mask",
        )
    q, k, v = _operands(sem, a, gqa, node)
    scale = a["scale"]
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    if not is_number(scale) or isinstance(scale, bool):
        sem.error(
            f"{WHAT}: scale must be a compile-time number, got {scale!r}", node, "scale=0.125"
        )
    out_shape = (*q.shape[:-1], v.shape[-1])
    scores = (*q.shape[:-1], k.shape[-2])
    mask = _mask(sem, a["attn_mask"], scores, node)
    q, k, v = (
        SymbolicTensor(sem.convert(t.value, t.dtype, node), t.dtype, t.shape) for t in (q, k, v)
    )
    q, k, v, g = _group(sem, q, k, v, node) if gqa and q.ndim >= 3 else (q, k, v, 0)
    if g and mask is not None:
        full = sem.broadcast(mask, scores, node)
        mask = sem.emit(asc.ReshapeOp(full, (*q.shape[:-1], k.shape[-2])), node).results[0]
    fa = asc.FlashAttentionOp(
        q.value, k.value, v.value, mask, float(scale), DEFAULT_BLOCK_KV, causal
    )
    r: SSAValue = sem.emit(fa, node).results[0]
    if g:
        r = sem.emit(asc.ReshapeOp(r, out_shape), node).results[0]
    dtype = q.dtype
    if dtype != "float32":
        r = sem.convert(r, dtype, node)
    return SymbolicTensor(r, dtype, out_shape)
