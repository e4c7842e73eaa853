"""``asc-fuse`` helpers that rewrite or regroup before and after ``_groups``
(``passes/fuse.py``): casts hoisted over views and concats so they run in the kernel that
computes their operand, and vector groups of unrelated shapes split into kernels."""

from __future__ import annotations

import math

from xdsl.ir import Attribute, Block, Operation, SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.passes.iteration_space import element_type_of, shape_of
from pyasc_mlir.passes.views import VIEW_OPS


def _cast_after_def(block: Block, v: SSAValue, dtype: Attribute, like: Operation) -> SSAValue:
    """A new ``cast(v)`` to ``dtype`` placed right after ``v``'s definition (before ``like``
    when ``v`` is an argument), so it joins the kernel that computes ``v``; it carries
    ``like``'s location."""
    cast = asc.CastOp(v, dtype)
    if asc.LOC_ATTR in like.attributes:
        cast.attributes[asc.LOC_ATTR] = like.attributes[asc.LOC_ATTR]
    owner = v.owner
    if isinstance(owner, Operation) and owner.parent is block:
        block.insert_op_after(cast, owner)
    else:
        block.insert_op_before(cast, like)
    return cast.result


def hoist_casts_over_views(block: Block) -> None:
    """Rewrite ``cast(view(x))`` as ``view(cast(x))`` for reshapes/transposes and
    ``cast(concat(a, b))`` as ``concat(cast(a), cast(b))`` (elementwise casts commute with
    them): the cast is placed right after ``x``'s (``a``'s) definition, so it runs in the
    kernel that computes it (e.g. a matmul's epilogue rounds to f16 before its result is
    written through a head-merge view, RoPE's halves are rounded before their concat) and the
    view or concat moves the narrower dtype."""
    changed = True
    while changed:
        changed = False
        for op in list(block.ops):
            src = op.operands[0].owner if isinstance(op, asc.CastOp) else None
            if not isinstance(src, (*VIEW_OPS, asc.ConcatOp)) or src.parent is not block:
                continue
            dtype = element_type_of(op.results[0])
            parts = [_cast_after_def(block, v, dtype, src) for v in src.operands]
            new_src: Operation = (
                asc.TransposeOp(parts[0], src.permutation)
                if isinstance(src, asc.TransposeOp)
                else asc.ReshapeOp(parts[0], shape_of(src.results[0]))
                if isinstance(src, asc.ReshapeOp)
                else asc.ConcatOp(parts, src.dim)
            )
            if asc.LOC_ATTR in op.attributes:
                new_src.attributes[asc.LOC_ATTR] = op.attributes[asc.LOC_ATTR]
            block.insert_op_before(new_src, op)
            op.results[0].replace_all_uses_with(new_src.results[0])
            op.detach()
            op.erase()
            if not src.results[0].uses:
                src.detach()
                src.erase()
            changed = True


def _broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """NumPy broadcasting: trailing-aligned dims are equal or one of them is 1."""
    return all(x == y or 1 in (x, y) for x, y in zip(reversed(a), reversed(b), strict=False))


def _computations(group: list[Operation]) -> dict[Operation, list[Operation]]:
    """``group``'s independent computations (root op -> its ops, in order): ops are linked by
    a value computed in the group or an input they both read whole (not through a slice)."""
    parent = {op: op for op in group}

    def find(op: Operation) -> Operation:
        while parent[op] is not op:
            parent[op] = parent[parent[op]]
            op = parent[op]
        return op

    users: dict[SSAValue, Operation] = {}
    for op in group:
        for v in op.operands:
            if isinstance(v.owner, Operation) and v.owner in parent:
                parent[find(op)] = find(v.owner)
            elif not isinstance(op, asc.SliceOp):  # a shared input's dims are one axis
                if v in users:
                    parent[find(op)] = find(users[v])
                users.setdefault(v, op)
    comps: dict[Operation, list[Operation]] = {}
    for op in group:
        comps.setdefault(find(op), []).append(op)
    return comps


def split_unrelated_shapes(groups: list[list[Operation]]) -> None:
    """A vector group whose ops form independent computations (no value of the group links
    them; a slice of an input is a GM view, which links nothing) of shapes that do not
    broadcast (``return q * 2, q[..., :32] + 1`` on ``[33, 64]``: rows of 64 and of 32) has no
    common iteration space: it becomes one vector kernel per set of such computations whose
    shapes broadcast, in program order (they read only inputs of the group, so any order is
    correct). Groups with a matmul, attention or data-movement op are left as they are."""
    for i in range(len(groups) - 1, -1, -1):
        group = groups[i]
        if len(group) < 2 or any(
            isinstance(o, (asc.MatmulOp, asc.FlashAttentionOp, asc.TransposeOp, asc.ConcatOp))
            for o in group
        ):
            continue
        comps = _computations(group)
        if len(comps) < 2:
            continue
        # A computation's frame: the shape of its largest value (a rank-reducing reduction's
        # input, not its result).
        frames = {
            root: max(
                (shape_of(r) for o in ops for r in o.results),
                key=lambda s: (math.prod(s), len(s)),
            )
            for root, ops in comps.items()
        }
        sets: list[list[Operation]] = []  # component roots that share a kernel
        for root in comps:
            for members in sets:
                if all(_broadcastable(frames[root], frames[m]) for m in members):
                    members.append(root)
                    break
            else:
                sets.append([root])
        if len(sets) < 2:
            continue
        kernel_of = {op: k for k, roots in enumerate(sets) for r in roots for op in comps[r]}
        groups[i : i + 1] = [[op for op in group if kernel_of[op] == k] for k in range(len(sets))]
