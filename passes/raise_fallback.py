"""The scalar-loop fallback of ``asc-raise-loops`` (issue 11): a top-level loop nest (or a
top-level store) that cannot be raised to tensor ops becomes one ``asc_loop.nest`` op
(``dialects/asc_loop_nest.py``) holding the nest's own ``asc_loop`` ops, and a located
:class:`~pyasc_mlir.errors.PyAscPerformanceWarning` says why it was not raised and what to
write instead.

The nest's operands are the arrays it touches that exist before it: kernel arguments and the
current contents ("state") of the local arrays allocated outside it (a fill is re-created
inside as an ``asc_loop.alloc``; an array never written yet starts as NaN, as the loop IR's
``alloc`` does). Its results are the final contents of the local arrays it writes, which
become their new state, so raised nests after it read them. Top-level scalar values the nest
uses (loads, constants, index arithmetic) are cloned into it. A rank-0 local array (a scalar
variable) is a one-element array inside the nest (as in the raised IR).

Errors (the original reason, located): a nest that reads a local array never written, a
local array allocated inside the nest and used after it, a top-level load of a local array
that is written between the load and the nest that uses it.
"""

from __future__ import annotations

import linecache
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from pyasc_mlir.dialects import asc, asc_loop
from pyasc_mlir.errors import PyAscCompileError, PyAscPerformanceWarning, SourceLoc
from pyasc_mlir.passes.common import loc_of

__all__ = [
    "FAST_HINT",
    "NOT_RAISED",
    "Fallback",
    "fallback_nest",
    "try_raise",
    "warn_fallback",
    "warn_slow",
]

FAST_HINT = (
    "to get a fast vector kernel write the nest as an elementwise map (c[i, j] = f(a[i, j], "
    "...)), a reduction (s[i] += x[i, j], s[i] = lang.maximum(s[i], x[i, j])) or a "
    "contraction (c[i, j] += a[i, k] * b[k, j]) over full ranges range(size), indexing with "
    "loop variables plus or minus constants"
)
"""What a nest must look like to be raised (the hint of the fallback's warning)."""


Fallback = Any
"""The raiser (``raise_loops._Raiser``): ``fop``, ``out`` (the block being built), ``values``
(argument -> its value in ``out``), ``state`` (local array -> ``State``), ``memo``,
``anchor`` and ``emit(op)``."""


def _inside(op: Operation, groups: Sequence[Operation]) -> bool:
    cur: Operation | None = op
    while cur is not None:
        if any(cur is g for g in groups):
            return True
        cur = cur.parent_op()
    return False


def _external_ops(groups: Sequence[Operation]) -> list[Operation]:
    """Top-level ops outside ``groups`` whose results they use (transitively), in order."""
    need: set[Operation] = set()
    stack = [v.owner for g in groups for o in g.walk() for v in o.operands if _outside(v, groups)]
    while stack:
        op = stack.pop()
        assert isinstance(op, Operation)
        if op in need or isinstance(op, asc_loop.AllocOp):
            continue
        need.add(op)
        stack.extend(v.owner for v in op.operands if isinstance(v.owner, Operation))
    block = groups[0].parent_block()
    assert block is not None
    return [o for o in block.ops if o in need]


def _outside(v: SSAValue, groups: Sequence[Operation]) -> bool:
    return isinstance(v.owner, Operation) and not _inside(v.owner, groups)


def _arrays(ops: list[Operation]) -> list[SSAValue]:
    """The arrays (kernel arguments, local arrays) the loads and stores of ``ops`` use."""
    seen: dict[SSAValue, None] = {}
    for top in ops:
        for o in top.walk():
            if isinstance(o, asc_loop.LoadOp | asc_loop.StoreOp):
                seen.setdefault(o.array, None)
    return list(seen)


def _fill_of(value: SSAValue, shape: list[int]) -> float | None:
    """The constant a state tensor is filled with (an ``asc.constant`` of the array's shape)."""
    op = value.owner
    t = value.type
    if (
        isinstance(op, asc.ConstantOp)
        and isinstance(t, TensorType)
        and list(t.get_shape()) == shape
    ):
        return float(op.value.value.data)
    return None


def _check_loads(ext: list[Operation], groups: list[Operation], why: PyAscCompileError) -> None:
    """A cloned top-level load of a local array (cloned in program order) must see the
    contents the original saw: no store outside ``groups`` between it and the next group."""
    block = groups[0].parent_block()
    assert block is not None
    order = list(block.ops)
    for ld in ext:
        if not isinstance(ld, asc_loop.LoadOp) or not isinstance(ld.array.type, MemRefType):
            continue
        for between in order[order.index(ld) + 1 :]:
            if any(between is g for g in groups):
                break
            if any(isinstance(o, asc_loop.StoreOp) and o.array == ld.array for o in between.walk()):
                raise why


def fallback_nest(r: Fallback, groups: list[Operation], why: PyAscCompileError) -> Operation:
    """Emit ``groups`` (consecutive top-level ``asc_loop.for``/``asc_loop.store`` ops that
    could not be raised; ``why`` the raiser's error for the last) as one ``asc_loop.nest``
    into ``r.out``, update the states of the arrays they write, and return the nest.

    Raises:
        PyAscCompileError: ``why``, for the cases the module docstring lists."""
    ext = _external_ops(groups)
    _check_loads(ext, groups, why)
    arrays = _arrays([*ext, *groups])
    written = {o.array for g in groups for o in g.walk() if isinstance(o, asc_loop.StoreOp)}
    for a in arrays:  # an array allocated inside the nest must not be used after it
        if isinstance(a.owner, asc_loop.AllocOp) and _inside(a.owner, groups):
            if any(not _inside(u.operation, groups) for u in a.uses):
                raise why
    outer = [a for a in arrays if not (isinstance(a.owner, Operation) and _inside(a.owner, groups))]
    inputs: list[SSAValue] = []
    start: dict[SSAValue, int | float | None] = {}  # array -> operand number, fill or NaN
    for a in outer:
        st = None if isinstance(a.type, TensorType) else r.state[a]
        if st is not None and st.value is None and a not in written:
            raise why  # read, never written
        if st is not None and st.value is None:
            start[a] = None
        elif st is not None and st.value is not None and _fill_of(st.value, _shape(a)) is not None:
            start[a] = _fill_of(st.value, _shape(a))
        else:
            start[a] = len(inputs)
            inputs.append(r.values[a] if st is None else st.value)
    results = [a for a in outer if a in written]
    nest = asc_loop.NestOp(inputs, [TensorType(_elem(a), _shape(a)) for a in results])
    body = nest.body.block
    mapping: dict[SSAValue, SSAValue] = {}
    for a in outer:
        where = start[a]
        if isinstance(where, int):
            mapping[a] = body.args[where]
            continue
        alloc = asc_loop.AllocOp(MemRefType(_elem(a), _shape(a)), where)
        body.add_op(alloc)
        mapping[a] = alloc.result
    block = groups[0].parent_block()
    assert block is not None
    for o in [o for o in block.ops if o in ext or _inside(o, groups)]:  # program order
        body.add_op(o.clone(value_mapper=mapping))
    _rank0_to_rank1(body, {mapping[a] for a in outer if _rank(a) == 0})
    body.add_op(asc_loop.NestYieldOp([mapping[a] for a in results]))
    _copy_locs(nest, groups[0])
    r.anchor = groups[0]  # emit() copies the anchor's location
    r.emit(nest)
    for a, v in zip(results, nest.outputs, strict=True):
        r.state[a].value, r.state[a].zero = v, False
    return nest


def _rank(a: SSAValue) -> int:
    t = a.type
    assert isinstance(t, TensorType | MemRefType)
    return t.get_num_dims()


def _shape(a: SSAValue) -> list[int]:
    t = a.type
    assert isinstance(t, TensorType | MemRefType)
    return list(t.get_shape()) or [1]  # a scalar variable: one element


def _elem(a: SSAValue) -> Attribute:
    t = a.type
    assert isinstance(t, TensorType | MemRefType)
    return t.element_type


def _rank0_to_rank1(body: Block, arrays: set[SSAValue]) -> None:
    """Index the one-element arrays that stand for scalar variables with ``[0]``."""
    zero: SSAValue | None = None
    for o in list(body.walk()):
        if (
            isinstance(o, asc_loop.LoadOp | asc_loop.StoreOp)
            and o.array in arrays
            and not list(o.indices)
        ):
            if zero is None:
                c = arith.ConstantOp(IntegerAttr(0, IndexType()))
                body.insert_op_before(c, body.first_op) if body.first_op else body.add_op(c)
                zero = c.result
            new: Operation
            if isinstance(o, asc_loop.LoadOp):
                new = asc_loop.LoadOp(o.array, [zero])
            else:
                new = asc_loop.StoreOp(o.value, o.array, [zero])
            new.attributes.update(o.attributes)
            parent = o.parent_block()
            assert parent is not None
            parent.insert_op_before(new, o)
            if isinstance(o, asc_loop.LoadOp):
                o.result.replace_all_uses_with(new.results[0])
            parent.erase_op(o)


def _copy_locs(nest: Operation, group: Operation) -> None:
    if asc.LOC_ATTR in group.attributes:
        nest.attributes[asc.LOC_ATTR] = group.attributes[asc.LOC_ATTR]


def warn_fallback(group: Operation, why: PyAscCompileError) -> None:
    """The located :class:`PyAscPerformanceWarning` of a nest that runs as scalar loops:
    ``file:line:col: warning: ...``, the source line with a caret, the reason (``why``, with
    its own location when it is another line) and :data:`FAST_HINT`."""
    loc = loc_of(group) or why.loc
    reason = why.message.split(": ", 1)[-1]
    if why.loc is not None and loc is not None and why.loc != loc:
        reason += f" (at {why.loc})"
    head = (
        "this loop nest cannot be raised to vector ops, so it runs as scalar loops on one "
        f"core (GetValue/SetValue, slow): {reason}"
    )
    warn_slow(loc, head, FAST_HINT)


def warn_slow(loc: SourceLoc | None, head: str, hint: str) -> None:
    """Warn (:class:`PyAscPerformanceWarning`) ``file:line:col: warning: <head>``, the source
    line with a caret and ``hint: <hint>``."""
    lines = [f"{loc}: warning: {head}" if loc is not None else f"warning: {head}"]
    if loc is not None:
        src = linecache.getline(loc.file, loc.line).rstrip("\n")
        if src:
            lines += [f"    {src}", "    " + " " * loc.col + "^"]
    lines.append(f"hint: {hint}")
    text = "\n".join(lines)
    if loc is None:
        warnings.warn(text, PyAscPerformanceWarning, stacklevel=3)
    else:
        warnings.warn_explicit(text, PyAscPerformanceWarning, loc.file, loc.line)


def try_raise(r: Fallback, op: Operation, raise_op: Callable[[], None]) -> None:
    """Run ``raise_op`` (the raiser on top-level ``op``); when it cannot raise the nest, undo
    what it emitted and changed, and fall back (:func:`fallback_nest`).

    Raises:
        PyAscCompileError: what :func:`fallback_nest` cannot fall back for."""
    mark = r.out.last_op
    saved = {a: (st.value, st.zero) for a, st in r.state.items()}
    memo = dict(getattr(r, "memo", {}))
    try:
        raise_op()
    except PyAscCompileError as exc:
        if not exc.message.startswith(NOT_RAISED):
            raise
        while r.out.last_op is not mark:
            last = r.out.last_op
            assert last is not None
            r.out.erase_op(last, safe_erase=False)
        for a in [a for a in r.state if a not in saved]:
            del r.state[a]
        for a, (value, zero) in saved.items():
            r.state[a].value, r.state[a].zero = value, zero
        if hasattr(r, "memo"):
            r.memo.clear()
            r.memo.update(memo)
        if not isinstance(op, asc_loop.LoadOp):  # a top-level load: cloned into its users
            _fall_back(r, op, exc)


@dataclass
class _Pending:
    """The last fallback nest: its top-level ops and the array states before it."""

    groups: list[Operation]
    saved: dict[SSAValue, tuple[SSAValue | None, bool]]
    nest: Operation


def _fall_back(r: Fallback, op: Operation, why: PyAscCompileError) -> None:
    """``op`` as scalar loops: merged into the previous fallback nest when nothing was emitted
    since (one kernel for ``y[0] = x[0]`` and the scan after it), else a nest of its own."""
    pending: _Pending | None = getattr(r, "fallback_pending", None)
    saved = {a: (st.value, st.zero) for a, st in r.state.items()}
    groups = [op]
    if pending is not None and r.out.last_op is pending.nest:
        r.out.erase_op(pending.nest, safe_erase=False)
        for a, (value, zero) in pending.saved.items():
            r.state[a].value, r.state[a].zero = value, zero
        saved, groups = pending.saved, [*pending.groups, op]
    nest = fallback_nest(r, groups, why)
    warn_fallback(op, why)
    r.fallback_pending = _Pending(groups, saved, nest)


NOT_RAISED = "this loop nest cannot be raised to vector ops"
"""The start of the raiser's messages for a nest that is not raisable (``raise_loops._fail``)."""
