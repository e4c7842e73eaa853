"""Grouped-query decode for the one-kernel flash attention (``asc-lower-attention``): fold the
query-head group axis into the query rows, so that each K/V block is read ONCE per group.

Decode attention with grouped-query heads is ``q [*b, G, 1, D]`` against ``k, v [*b, 1, Skv,
D]`` (one KV head per group of ``G`` query heads, ``Sq = 1``). As written, every query head is
a work unit of one row, and each reads the whole KV cache: ``G`` reads of every K/V block.
Rewritten (inside the fusion, before the kernel is built) as ``q' [*b, G, D]`` against ``k', v'
[*b, Skv, D]`` (reshapes, read in place through the existing views), the ``G`` heads are the
``G`` rows of one query block: one ``Q K^T`` and one ``P V`` per K/V block for the whole group.
The result ``[*b, G, Dv]`` and the elementwise epilogue on it (casts, unary ops) are rebuilt
on the folded shape and reshaped back to ``[*b, G, 1, Dv]`` before the result views.

Folded only when it is exact: ``Sq = 1``, ``G > 1``, K and V with 1 on the group axis, a mask
(if any) of at most two dims (``[1, Skv]``: the same for every head), every view still
readable in place, an epilogue chain of single-use unary ops and casts, and no causal mask
(its rows are query positions).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.passes.iteration_space import shape_of
from pyasc_mlir.passes.views import VIEW_OPS, readable_in_place

__all__ = ["fold_group_rows"]


def _foldable(fa: asc.FlashAttentionOp, mask: SSAValue | None) -> bool:
    qs, ks = shape_of(fa.q), shape_of(fa.k)
    if fa.is_causal:  # causal rows are query positions, not heads
        return False
    if len(qs) < 3 or qs[-2] != 1 or qs[-3] <= 1 or ks[-3] != 1:
        return False
    return mask is None or len(shape_of(mask)) <= 2


def _epilogue(fa: asc.FlashAttentionOp) -> list[Operation] | None:
    """The single-use chain of casts / unary ops on ``fa``'s result up to the first view (or
    the yield); ``None`` when anything else uses a value of it."""
    chain: list[Operation] = []
    v: SSAValue = fa.result
    while True:
        uses = list(v.uses)
        if len(uses) != 1:
            return None
        user = uses[0].operation
        if isinstance(user, (*VIEW_OPS, asc.YieldOp)):
            return chain
        if not isinstance(user, asc.CastOp | asc.UnaryOp):
            return None
        chain.append(user)
        v = user.results[0]


def _reshape(v: SSAValue, shape: tuple[int, ...], before: Operation) -> SSAValue:
    op = asc.ReshapeOp(v, shape)
    if asc.LOC_ATTR in before.attributes:
        op.attributes[asc.LOC_ATTR] = before.attributes[asc.LOC_ATTR]
    block = before.parent
    assert block is not None
    block.insert_op_before(op, before)
    return op.result


def _clone_on(op: Operation, src: SSAValue, before: Operation) -> Operation:
    """``op`` (a cast or unary op) applied to ``src`` instead, inserted before ``before``."""
    new = (
        asc.CastOp(src, op.results[0].type.element_type)  # type: ignore[attr-defined]
        if isinstance(op, asc.CastOp)
        else asc.UnaryOp(op.kind.data, src)  # type: ignore[attr-defined]
    )
    new.attributes.update({k: v for k, v in op.attributes.items() if k == asc.LOC_ATTR})
    block = before.parent
    assert block is not None
    block.insert_op_before(new, before)
    return new


def fold_group_rows(fa: asc.FlashAttentionOp, mask: SSAValue | None) -> asc.FlashAttentionOp | None:
    """Rewrite ``fa`` (in its fusion body) as the folded decode attention; returns the new op,
    or ``None`` (nothing changed) when the fold would not be exact (module docstring).
    ``mask``: the mask's GM value (``lower_attention.mask_source``)."""
    if not _foldable(fa, mask):
        return None
    chain = _epilogue(fa)
    if chain is None:
        return None
    qs, ks, vs = shape_of(fa.q), shape_of(fa.k), shape_of(fa.v)
    q = _reshape(fa.q, (*qs[:-2], qs[-1]), fa)
    k = _reshape(fa.k, (*ks[:-3], ks[-2], ks[-1]), fa)
    v = _reshape(fa.v, (*vs[:-3], vs[-2], vs[-1]), fa)
    new_ops = [x.owner for x in (q, k, v)]
    if not all(readable_in_place(x) for x in (q, k, v)):
        for o in reversed(new_ops):
            assert isinstance(o, Operation)
            o.detach()
            o.erase()
        return None
    new = asc.FlashAttentionOp(q, k, v, fa.mask, fa.scale_value, fa.block_kv.data)
    new.attributes.update(fa.attributes)
    block = fa.parent
    assert block is not None
    block.insert_op_before(new, fa)
    last: Operation = fa
    val: SSAValue = new.result
    for op in chain:
        val = _clone_on(op, val, fa).results[0]
        last = op
    out = _reshape(val, shape_of(last.results[0]), fa)
    last.results[0].replace_all_uses_with(out)
    for op in [*reversed(chain), fa]:
        op.detach()
        op.erase()
    return new
