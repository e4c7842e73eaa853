"""``asc-flash-attention``: recognise attention at the tensor level and fuse it into one
``asc.flash_attention`` op (``pyasc_mlir.dialects.asc_attention``).

Matched (each intermediate used only inside the chain; the order of ``add``/``mul`` operands
free)::

    s  = asc.matmul q, k {transpose_b = true}        // [*b, Sq, Skv], batch dims equal
    s1 = asc.binary "mul" s, splat(scale)            // optional (scale = 1.0 without)
    s2 = asc.binary "add" s1, broadcast(mask)        // optional additive mask (f32)
    p  = softmax over the last axis, as the frontend spells it:
         e = exp(s2 - broadcast(reduce "max" s2 [last] keepdim))
         p = e / broadcast(reduce "sum" e [last] keepdim)
    pc = asc.cast p                                  // optional (f16 / bf16 operands)
    o  = asc.matmul pc, v                            // [*b, Sq, Dv]

becomes ``o = asc.flash_attention q, k, v [mask M] {scale, block_kv}`` (the mask operand is the
value before its ``asc.broadcast``); the head split/merge transposes around it are left as they
are. ``k``/``v`` may have 1 where ``q`` has a head-group axis (grouped-query attention: ``q
[B, Nkv, G, S, D]``, ``k, v [B, Nkv, 1, S, D]``). Not matched (left unchanged): a broadcast
``q``, a transposed ``v``, a softmax over another axis, any intermediate with a use outside the
chain.

Scope today: the rewrite and the op's reference semantics (the interpreter runs the blocked
online softmax). The one-kernel (Cube + vector MIX) lowering of ``asc.flash_attention`` does
not exist yet, so this pass is in no named pipeline; ``asc-decompose`` refuses the op with a
located error (:func:`refuse_unlowered`, called by ``asc-fuse``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from pyasc_mlir.dialects import asc
from pyasc_mlir.dialects.asc_attention import broadcastable
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of

DEFAULT_BLOCK_KV = 128
"""Key block length of the online softmax (a tiling choice, not a hardware number: the
Cube's 16-element fractal divides it, and a 128 x 128 f32 score block is 64 KiB of UB)."""


def _only_use(v: SSAValue, users: int = 1) -> bool:
    return sum(1 for _ in v.uses) == users


def _owner(v: SSAValue, kind: type[Operation]) -> Operation | None:
    o = v.owner
    return o if isinstance(o, kind) else None


def _rank(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, TensorType)
    return len(t.get_shape())


def _binary(v: SSAValue, kind: str) -> asc.BinaryOp | None:
    o = v.owner
    return o if isinstance(o, asc.BinaryOp) and o.kind.data == kind else None


def _row_reduce(v: SSAValue, kind: str, of: SSAValue) -> bool:
    """``v`` is ``broadcast(reduce kind of [last axis] keepdim)``, used once."""
    b = _owner(v, asc.BroadcastOp)
    if not isinstance(b, asc.BroadcastOp) or not _only_use(v):
        return False
    r = b.input.owner
    return (
        isinstance(r, asc.ReduceOp)
        and _only_use(b.input)
        and r.kind.data == kind
        and r.input == of
        and r.axis_list == (_rank(of) - 1,)
        and bool(r.keepdim.value.data)
    )


def _softmax_input(p: SSAValue) -> SSAValue | None:
    """The input ``s`` if ``p`` is the frontend's softmax of ``s`` over the last axis."""
    div = _binary(p, "div")
    if div is None or not _only_use(p):
        return None
    e = div.lhs
    ex = _owner(e, asc.UnaryOp)
    if not isinstance(ex, asc.UnaryOp) or ex.kind.data != "exp" or not _only_use(e, 2):
        return None
    if not _row_reduce(div.rhs, "sum", e):
        return None
    sub = _binary(ex.input, "sub")
    if sub is None or not _only_use(ex.input):
        return None
    s = sub.lhs
    if not _only_use(s, 2) or not _row_reduce(sub.rhs, "max", s):
        return None
    return s


def _splat(v: SSAValue) -> float | None:
    c = v.owner
    return float(c.value.value.data) if isinstance(c, asc.ConstantOp) else None


def _mask_splits(s: SSAValue) -> list[tuple[SSAValue, SSAValue | None]]:
    """The candidate ``(scores, mask)`` readings of ``s`` (mask = the value before its
    broadcast): both operand orders of ``s = a + b``, then ``(s, None)``; the caller keeps
    the first whose scores are a ``q k^T`` product."""
    out: list[tuple[SSAValue, SSAValue | None]] = []
    add = _binary(s, "add")
    if add is not None:
        for x, m in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
            if _only_use(x):
                b = m.owner
                bare = isinstance(b, asc.BroadcastOp) and _only_use(m)
                out.append((x, b.input if isinstance(b, asc.BroadcastOp) and bare else m))
    out.append((s, None))
    return out


def _split_scale(s: SSAValue) -> tuple[SSAValue, float]:
    """``(product, scale)`` of ``s = product * splat(scale)``; ``(s, 1.0)`` otherwise."""
    mul = _binary(s, "mul")
    if mul is not None:
        for x, c in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
            value = _splat(c)
            if value is not None and _only_use(x) and _only_use(c):
                return x, value
    return s, 1.0


@dataclass(frozen=True)
class _Match:
    q: SSAValue
    k: SSAValue
    v: SSAValue
    mask: SSAValue | None
    scale: float


def match_attention(op: asc.MatmulOp) -> _Match | None:
    """The attention chain ending in ``op`` (the ``P V`` product), or ``None``."""
    if op.trans_a or op.trans_b:
        return None
    p = op.lhs
    cast = _owner(p, asc.CastOp)
    if isinstance(cast, asc.CastOp):
        if not _only_use(p):
            return None
        p = cast.input
    s = _softmax_input(p)
    if s is None:
        return None
    for scaled, mask in _mask_splits(s):
        prod, scale = _split_scale(scaled)
        qk = _owner(prod, asc.MatmulOp)
        if not isinstance(qk, asc.MatmulOp) or qk.trans_a or not qk.trans_b:
            continue
        if _kv_batch_fits(qk.lhs, qk.rhs, op.rhs):
            return _Match(qk.lhs, qk.rhs, op.rhs, mask, scale)
    return None


def _kv_batch_fits(q: SSAValue, k: SSAValue, v: SSAValue) -> bool:
    """One rank; ``k`` and ``v`` share batch dims that broadcast to ``q``'s (equal, or 1 on
    a head-group axis: grouped-query attention)."""
    qs, ks, vs = (tuple(_shape(x)) for x in (q, k, v))
    return len(qs) == len(ks) == len(vs) and ks[:-2] == vs[:-2] and broadcastable(ks[:-2], qs[:-2])


def _shape(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def _erase_dead(producers: list[Operation], rewriter: PatternRewriter) -> None:
    """Erase the ``asc`` ops among ``producers`` left without uses, and, recursively, theirs."""
    for p in producers:
        if p.parent is None or any(r.first_use for r in p.results):
            continue
        if p.name.startswith("asc."):
            below = [o.owner for o in p.operands if isinstance(o.owner, Operation)]
            rewriter.erase(p)
            _erase_dead(below, rewriter)


class FuseAttention(RewritePattern):
    """``matmul(softmax(q k^T * scale + mask), v)`` -> ``asc.flash_attention``."""

    def __init__(self, block_kv: int):
        self.block_kv = block_kv

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: asc.MatmulOp, rewriter: PatternRewriter) -> None:
        m = match_attention(op)
        if m is None:
            return
        fa = asc.FlashAttentionOp(m.q, m.k, m.v, m.mask, m.scale, self.block_kv)
        loc = op.attributes.get(asc.LOC_ATTR)
        if loc is not None:
            fa.attributes[asc.LOC_ATTR] = loc
        producers = [o.owner for o in op.operands if isinstance(o.owner, Operation)]
        rewriter.replace(op, [fa])
        _erase_dead(producers, rewriter)


@dataclass(frozen=True)
class AscFlashAttentionPass(ModulePass):
    """See the module docstring. ``block_kv``: the key block length (>= 1)."""

    name = "asc-flash-attention"
    block_kv: int = DEFAULT_BLOCK_KV

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseAttention(self.block_kv), apply_recursively=False).rewrite_module(
            op
        )


def refuse_unlowered(module: ModuleOp) -> None:
    """Raise a located ``PyAscCompileError`` if ``module`` holds an ``asc.flash_attention``:
    no pass lowers it to a kernel yet, so no pipeline may carry it past ``asc-fuse``."""
    for op in module.walk():
        if isinstance(op, asc.FlashAttentionOp):
            raise PyAscCompileError(
                "asc.flash_attention has no kernel lowering yet (the one-kernel Cube + vector "
                "flash attention is not implemented)",
                loc_of(op),
                "run the pipeline without asc-flash-attention: the unfused attention compiles "
                "(3 kernels)",
            )
