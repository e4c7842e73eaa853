"""``asc-autodiff``: reverse-mode differentiation of tensor-level ``asc`` functions.

For each top-level ``func.func @f(x_1, ..., x_n) -> (y_1, ..., y_m)`` of tensor-level IR (what
the frontend builds, before ``asc-fuse``) the pass adds

    func.func @f_backward(x_1, ..., x_n, dy_1, ..., dy_m) -> (dx_1, ..., dx_n)

``dy_j`` is the cotangent of ``y_j`` (its type); ``dx_i`` is the gradient of ``x_i`` (the
type of ``x_i``): ``dx_i = sum_j J_ij^T dy_j``, the vector-Jacobian product.

Before and after (``y = exp(x)``)::

    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { %y = asc.unary "exp" %x ... }
    func.func @f_backward(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> tensor<4xf32> {
      %y = asc.unary "exp" %x ...            // the forward, recomputed
      %dx = asc.binary "mul" %dy, %y ...     // the op table's rule (dialects/opset_grad.py)
      func.return %dx : tensor<4xf32>
    }

Saved values (strategy ``"recompute"``, the default): none. The backward recomputes the forward
inside itself (the recomputed ops fuse with the gradient ops, so no intermediate makes a GM
round trip); the backward function carries ``asc.backward = "recompute"`` and
``asc.backward_of = "f"``. Forward ops no gradient needs are dropped (dead-code elimination).

Semantics: cotangents flow in float32 whatever the primal dtype (f16/bf16 primal values are widened
before a rule reads them) and are summed in float32 where a value has several uses; a
gradient is rounded to its input's dtype once, on return. An input no output depends on gets
a zero gradient. Derivative rules: elementwise and reduction kinds in
``dialects/opset_grad.py`` (tie rules there), structural ops in ``passes/autodiff_rules.py``;
comparisons (masks) carry no gradient, so a value used only through a comparison gets zero.

Options: ``function`` (differentiate only that function; default every function without a
``_backward`` twin), ``replace`` (drop the forward functions: the module then holds only
the backward, which the compile path lowers like any operator) and ``save`` (the alternative
strategy, chosen by the cost model in ``pyasc_mlir/grad_strategy.py``: the backward takes the
forward's reduction results -- per-row statistics -- as extra trailing arguments instead of
recomputing them; ``asc.backward = "save"``, ``asc.backward_saved`` describes them, and
:func:`with_saved_outputs` makes the forward return them).

Errors: :class:`~pyasc_mlir.errors.PyAscCompileError`, located at the op's source line, for an
op without a derivative (``asc.flash_attention``, tile-level ops), and for a ``function``
option naming no function.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, FunctionType, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from pyasc_mlir.dialects import asc, opset_grad
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes import autodiff_rules as rules
from pyasc_mlir.passes import autodiff_softmax as softmax
from pyasc_mlir.passes.autodiff_rules import GradEmitter, shape_of
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.types import np_dtype_of

__all__ = [
    "BACKWARD_ATTR",
    "BACKWARD_OF_ATTR",
    "CHOICE_ATTR",
    "SAVED_ATTR",
    "AscAutodiffPass",
    "backward_entry",
    "backward_name",
    "differentiate",
    "saved_entries",
    "saved_values",
    "with_saved_outputs",
]

BACKWARD_ATTR = "asc.backward"
"""Function attribute: the save/recompute strategy of a backward function (``"recompute"``)."""
BACKWARD_OF_ATTR = "asc.backward_of"
"""Function attribute: the name of the forward function a backward function differentiates."""
SAVED_ATTR = "asc.backward_saved"
"""Function attribute of a ``save`` backward: JSON of :func:`saved_entries` (its trailing
arguments)."""
CHOICE_ATTR = "asc.backward_choice"
"""Function attribute: JSON of why the strategy was chosen (``pyasc_mlir.grad_strategy``)."""


def backward_name(name: str) -> str:
    """The symbol of the backward function of ``@name``."""
    return f"{name}_backward"


class _Sweep:
    """One reverse sweep: the adjoint (float32 cotangent) of every value reached so far."""

    def __init__(self, b: GradEmitter):
        self.b = b
        self.adj: dict[SSAValue, SSAValue] = {}
        self.alias: dict[SSAValue, SSAValue] = {}
        """Recomputed result -> the argument holding its saved value (``save``)."""
        self.softmax: dict[Operation, tuple[SSAValue, tuple[int, ...]]] = {}
        """A saved softmax output's ``div`` -> its input and axes (``save``)."""

    def add(self, v: SSAValue, g: SSAValue) -> None:
        """Accumulate the contribution ``g`` to ``v``'s adjoint (float32)."""
        assert shape_of(g) == shape_of(v), f"cotangent {shape_of(g)} for {shape_of(v)}"
        prev = self.adj.get(v)
        self.adj[v] = g if prev is None else self.b.put(asc.BinaryOp("add", prev, g))

    def visit(self, op: Operation) -> None:
        """Push the adjoint of ``op``'s result to its operands."""
        if not op.results:
            return
        g = self.adj.get(self.alias.get(op.results[0], op.results[0]))
        if g is None:
            return
        if op in self.softmax:
            x, axes = self.softmax[op]
            self.b.at(op.attributes.get(asc.LOC_ATTR))
            y = self.alias[op.results[0]]
            self.add(x, softmax.softmax_grad(self.b, axes, y, g))
            return
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise PyAscCompileError(
                f"asc-autodiff: {op.name} has no derivative rule",
                loc_of(op),
                "write attention as softmax(q @ k.transpose(-1, -2) * scale + mask) @ v to "
                "differentiate it (pa.scaled_dot_product_attention is forward-only)"
                if isinstance(op, asc.FlashAttentionOp)
                else "backward kernels cover the elementwise, reduction, broadcast, cast, select, "
                "matmul and layout ops; compute this part outside the differentiated operator",
            )
        self.b.at(op.attributes.get(asc.LOC_ATTR))
        handler(self, op, g)


def _unary(s: _Sweep, op: asc.UnaryOp, g: SSAValue) -> None:
    rule = opset_grad.rule_for("unary", op.kind.data)
    _check_rule(op, rule, op.kind.data)
    s.add(op.input, rule(s.b, s.b.wide(op.input), s.b.wide(op.result), g))  # type: ignore[misc]


def _binary(s: _Sweep, op: asc.BinaryOp, g: SSAValue) -> None:
    rule = opset_grad.rule_for("binary", op.kind.data)
    _check_rule(op, rule, op.kind.data)
    b = s.b
    d1, d2 = rule(b, b.wide(op.lhs), b.wide(op.rhs), b.wide(op.result), g)  # type: ignore[misc]
    s.add(op.lhs, d1)
    s.add(op.rhs, d2)


def _reduce(s: _Sweep, op: asc.ReduceOp, g: SSAValue) -> None:
    _check_torch_pick(op)
    rule = opset_grad.rule_for("reduce", op.kind.data)
    _check_rule(op, rule, op.kind.data)
    b = s.b
    b.reduction = op
    try:
        y = b.wide(s.alias.get(op.result, op.result))
        dx = rule(b, rules.reduce_info(op), b.wide(op.input), y, g)  # type: ignore[misc]
    finally:
        b.reduction = None
    s.add(op.input, dx)


def _check_torch_pick(op: asc.ReduceOp) -> None:
    """Refuse a max/min of PyTorch's ``(values, indices)`` spelling (``asc.TORCH_PICK_ATTR``):
    PyTorch's gradient goes to the returned index only, amax's is shared among ties."""
    spelling = op.attributes.get(asc.TORCH_PICK_ATTR)
    if not isinstance(spelling, StringAttr):
        return
    kind = op.kind.data
    raise PyAscCompileError(
        f"asc-autodiff: the gradient of {spelling.data} is not supported: PyTorch sends it to "
        f"the one index it returns, but pyasc_mlir has no argmax (ties would get a different "
        f"gradient)",
        loc_of(op),
        f"write x.a{kind}(dim) (or pyasc_mlir.a{kind}(x, dim)): torch.a{kind}'s rule, the "
        "gradient shared evenly among tied elements; equal to PyTorch's without ties",
    )


def _check_rule(op: Operation, rule: object, kind: str) -> None:
    if rule is None:
        raise PyAscCompileError(
            f"asc-autodiff: {op.name} {kind!r} is not differentiable "
            f"({opset_grad.NOT_DIFFERENTIABLE.get(kind, 'no rule in dialects/opset_grad.py')})",
            loc_of(op),
            "keep this op out of the differentiated operator",
        )


def _select(s: _Sweep, op: asc.SelectOp, g: SSAValue) -> None:
    zero = s.b.zeros(shape_of(g))
    s.add(op.true_value, s.b.put(asc.SelectOp(op.cond, g, zero)))
    s.add(op.false_value, s.b.put(asc.SelectOp(op.cond, zero, g)))


def _matmul(s: _Sweep, op: asc.MatmulOp, g: SSAValue) -> None:
    da, db = rules.matmul_grads(s.b, op, g)
    s.add(op.lhs, da)
    s.add(op.rhs, db)


def _concat(s: _Sweep, op: asc.ConcatOp, g: SSAValue) -> None:
    for v, d in zip(op.inputs, rules.concat_grads(s.b, op, g), strict=True):
        s.add(v, d)


_Handler = Callable[[_Sweep, Operation, SSAValue], None]
_HANDLERS: dict[type[Operation], _Handler] = {
    asc.ConstantOp: lambda s, op, g: None,
    asc.CompareOp: lambda s, op, g: None,
    asc.UnaryOp: _unary,  # type: ignore[dict-item]
    asc.BinaryOp: _binary,  # type: ignore[dict-item]
    asc.ReduceOp: _reduce,  # type: ignore[dict-item]
    asc.SelectOp: _select,  # type: ignore[dict-item]
    asc.CastOp: lambda s, op, g: s.add(op.operands[0], g),
    asc.BroadcastOp: lambda s, op, g: s.add(
        op.operands[0], s.b.sum_to(g, shape_of(op.operands[0]))
    ),
    asc.ReshapeOp: lambda s, op, g: s.add(
        op.operands[0], s.b.put(asc.ReshapeOp(g, shape_of(op.operands[0])))
    ),
    asc.TransposeOp: lambda s, op, g: s.add(
        op.operands[0],
        rules.transpose_grad(s.b, op, g),  # type: ignore[arg-type]
    ),
    asc.SliceOp: lambda s, op, g: s.add(
        op.operands[0],
        rules.slice_grad(s.b, op, g),  # type: ignore[arg-type]
    ),
    asc.ConcatOp: _concat,  # type: ignore[dict-item]
    asc.MatmulOp: _matmul,  # type: ignore[dict-item]
}


def _eliminate_dead(block: Block) -> None:
    """Erase the ops (all pure) whose results nothing uses, last first."""
    for op in reversed(list(block.ops)):
        if isinstance(op, func.ReturnOp):
            continue
        if all(not r.uses for r in op.results):
            op.detach()
            op.erase()


def _schedule(block: Block) -> None:
    """Reorder ``block`` (a topological order, stable): every op that is ready runs before any
    ready ``asc.matmul``, so the vector work gathers in one kernel and the Cube reductions
    after it share one Cube kernel (``asc-fuse`` groups in program order). Constants,
    broadcasts and the casts of arguments (f16/bf16 inputs widened to f32) are placed just before
    their first user instead (a splat, the ``ones`` column or a broadcast bias then joins
    the kernel that reads it rather than the first kernel, which would write it to GM; a
    bias and an attention mask of different shapes there would make that kernel's outputs
    span different iteration spaces)."""
    consts = [op for op in block.ops if isinstance(op, asc.ConstantOp)]
    ops = [op for op in block.ops if not isinstance(op, func.ReturnOp | asc.ConstantOp)]
    index = {op: i for i, op in enumerate(ops)}
    waiting = {op: {o.owner for o in op.operands if o.owner in index} for op in ops}
    users: dict[Operation, list[Operation]] = {op: [] for op in ops}
    for op, deps in waiting.items():
        for d in deps:
            users[d].append(op)
    ready = [op for op in ops if not waiting[op]]
    order: list[Operation] = []
    while ready:
        op = min(ready, key=lambda o: (isinstance(o, asc.MatmulOp), index[o]))
        ready.remove(op)
        order.append(op)
        for u in users[op]:
            waiting[u].discard(op)
            if not waiting[u]:
                ready.append(u)
    ret = block.last_op
    for op in [*consts, *order]:
        op.detach()
        block.insert_op_before(op, ret)  # type: ignore[arg-type]
    for op in reversed([o for o in block.ops if _sinks(o)]):
        pos = {o: i for i, o in enumerate(block.ops)}
        first = min((u.operation for u in op.results[0].uses), key=pos.__getitem__, default=ret)
        op.detach()
        block.insert_op_before(op, first)  # type: ignore[arg-type]


def _sinks(op: Operation) -> bool:
    """``op`` is placed just before its first user by :func:`_schedule`."""
    if isinstance(op, asc.CastOp):
        return isinstance(op.operands[0], BlockArgument)
    return isinstance(op, asc.ConstantOp | asc.BroadcastOp)


def _softmaxes(fwd: func.FuncOp) -> dict[SSAValue, softmax.Softmax]:
    """The forward's results that are a decomposed softmax (``passes/autodiff_softmax.py``)."""
    ret = fwd.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    found = {v: softmax.match(v) for v in ret.operands}
    return {v: m for v, m in found.items() if m is not None}


def saved_values(fwd: func.FuncOp) -> list[SSAValue]:
    """What the ``save`` strategy stores from the forward: every reduction's result (the
    per-row statistics: means, variances, maxima, sums) in program order, except those of a
    softmax that is a result of the forward; then those softmax outputs (already results)."""
    soft = _softmaxes(fwd)
    inner = {op for m in soft.values() for op in m.ops}
    rows = [
        op.result for op in fwd.body.block.ops if isinstance(op, asc.ReduceOp) and op not in inner
    ]
    return [*rows, *soft]


def saved_entries(fwd: func.FuncOp) -> list[dict[str, Any]]:
    """Descriptions of :func:`saved_values`: ``name`` (the Python variable or ``saved<i>``),
    ``kind`` (the reduction, or ``softmax``), ``shape``, ``dtype``, ``bytes`` (the extra GM
    bytes the forward writes for it: 0 for an output) and, for a softmax output, ``output``
    (its result index: the saved value is that result)."""
    ret = fwd.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    results = list(ret.operands)
    entries = []
    for i, v in enumerate(saved_values(fwd)):
        assert isinstance(v.type, TensorType)
        dtype = str(np_dtype_of(v.type.element_type))
        entry: dict[str, Any] = {
            "name": v.name_hint or f"saved{i}",
            "kind": v.owner.kind.data if isinstance(v.owner, asc.ReduceOp) else "softmax",
            "shape": list(v.type.get_shape()),
            "dtype": dtype,
            "bytes": v.type.element_count() * np.dtype(dtype).itemsize,
        }
        if v in results:
            entry.update(bytes=0, output=results.index(v))
        entries.append(entry)
    return entries


def with_saved_outputs(fwd: func.FuncOp) -> list[dict[str, Any]]:
    """Make ``fwd`` also return its :func:`saved_values` that are not already results (after
    its own results, in program order: the ``save`` strategy's forward); the
    :func:`saved_entries` of all."""
    entries = saved_entries(fwd)
    ret = fwd.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    kept = [v for v in saved_values(fwd) if v not in list(ret.operands)]
    ret.operands = [*ret.operands, *kept]
    outs = [*fwd.function_type.outputs.data, *(v.type for v in kept)]
    fwd.function_type = FunctionType.from_lists(fwd.function_type.inputs.data, outs)
    return entries


def differentiate(fwd: func.FuncOp, save: bool = False) -> func.FuncOp:
    """The backward function of ``fwd`` (see the module docstring). ``save``: the variant that
    reads the forward's :func:`saved_values` from extra trailing arguments instead of
    recomputing them (for the cost model's comparison; strategy ``"save"``).

    Raises:
        PyAscCompileError: an op without a derivative rule (located)."""
    ins = list(fwd.function_type.inputs.data)
    outs = list(fwd.function_type.outputs.data)
    kept = saved_values(fwd) if save else []
    block = Block(arg_types=[*ins, *outs, *(v.type for v in kept)])
    stored = dict(zip(kept, block.args[len(ins) + len(outs) :], strict=True))
    mapping: dict[SSAValue, SSAValue] = dict(zip(fwd.args, block.args[: len(ins)], strict=True))
    for a, new in mapping.items():
        new.name_hint = a.name_hint
    for j, ct in enumerate(block.args[len(ins) : len(ins) + len(outs)]):
        ct.name_hint = f"d_out{j}"
    for i, (v, arg) in enumerate(stored.items()):
        arg.name_hint = f"saved_{v.name_hint or i}"
    cloned: list[Operation] = []
    aliases: dict[SSAValue, SSAValue] = {}
    results: list[SSAValue] = []
    for op in fwd.body.block.ops:
        if isinstance(op, func.ReturnOp):
            results = [mapping[v] for v in op.operands]
            continue
        new = op.clone(value_mapper=mapping)
        block.add_op(new)
        cloned.append(new)
        if op.results and op.results[0] in stored:  # read from GM instead
            aliases[new.results[0]] = stored[op.results[0]]
            mapping[op.results[0]] = stored[op.results[0]]
    b = GradEmitter(block, fwd.attributes.get(asc.LOC_ATTR))
    sweep = _Sweep(b)
    sweep.alias = aliases
    if save:
        sweep.softmax = {
            _clone_of(cloned, aliases, stored[v]): (mapping[m.x], m.axes)
            for v, m in _softmaxes(fwd).items()
        }
    for r, dy in zip(results, block.args[len(ins) : len(ins) + len(outs)], strict=True):
        sweep.add(r, b.wide(dy))
    for op in reversed(cloned):
        sweep.visit(op)
    b.at(fwd.attributes.get(asc.LOC_ATTR))
    grads = [_gradient(b, sweep, a) for a in block.args[: len(ins)]]
    b.add(func.ReturnOp(*grads))
    _eliminate_dead(block)
    _schedule(block)
    bwd = func.FuncOp(backward_name(fwd.sym_name.data), (block.arg_types, ins), Region(block))
    for key, attr in fwd.attributes.items():
        if key not in ("sym_name", "function_type"):
            bwd.attributes[key] = attr
    bwd.attributes[BACKWARD_ATTR] = StringAttr("save" if save else "recompute")
    bwd.attributes[BACKWARD_OF_ATTR] = StringAttr(fwd.sym_name.data)
    if save:
        bwd.attributes[SAVED_ATTR] = StringAttr(json.dumps(saved_entries(fwd)))
    return bwd


def _clone_of(
    cloned: list[Operation], aliases: dict[SSAValue, SSAValue], arg: SSAValue
) -> Operation:
    """The cloned op whose result reads the saved argument ``arg``."""
    return next(op for op in cloned if op.results and aliases.get(op.results[0]) is arg)


def backward_entry(fn: func.FuncOp) -> dict[str, object]:
    """``op.info["backward"]`` of a compiled backward function: ``strategy`` (``"recompute"``:
    the forward is recomputed inside the fused backward kernels; ``"save"``: it reads the
    forward's statistics), ``saved`` (those values, :func:`saved_entries`; ``[]`` for
    recompute), ``saved_bytes``, ``forward`` (the differentiated function's name) and, when
    the strategy was chosen by ``pyasc_mlir.grad_strategy``, ``requested``, ``reason`` and
    ``modeled`` (both strategies' MODELED µs)."""
    strategy = fn.attributes.get(BACKWARD_ATTR)
    of = fn.attributes.get(BACKWARD_OF_ATTR)
    saved = fn.attributes.get(SAVED_ATTR)
    choice = fn.attributes.get(CHOICE_ATTR)
    entries = json.loads(saved.data) if isinstance(saved, StringAttr) else []
    return {
        "strategy": strategy.data if isinstance(strategy, StringAttr) else None,
        "saved": entries,
        "saved_bytes": sum(int(e["bytes"]) for e in entries),
        "forward": of.data if isinstance(of, StringAttr) else None,
        **(json.loads(choice.data) if isinstance(choice, StringAttr) else {}),
    }


def _gradient(b: GradEmitter, sweep: _Sweep, arg: SSAValue) -> SSAValue:
    """``arg``'s gradient in ``arg``'s type (zero when no output depends on it)."""
    t = arg.type
    assert isinstance(t, TensorType)
    g = sweep.adj.get(arg)
    if g is None:
        g = b.zeros(shape_of(arg))
    if t.element_type != Float32Type():
        g = b.put(asc.CastOp(g, t.element_type))
    return g


@dataclass(frozen=True)
class AscAutodiffPass(ModulePass):
    """Add ``@f_backward`` for the module's functions (see the module docstring)."""

    name = "asc-autodiff"
    function: str = ""
    replace: bool = False
    save: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        funcs = [f for f in op.body.block.ops if isinstance(f, func.FuncOp)]
        names = {f.sym_name.data for f in funcs}
        todo = [
            f
            for f in funcs
            if (f.sym_name.data == self.function if self.function else True)
            and BACKWARD_OF_ATTR not in f.attributes
            and backward_name(f.sym_name.data) not in names
        ]
        if self.function and not todo:
            raise PyAscCompileError(
                f"asc-autodiff: no function @{self.function} to differentiate "
                f"(the module has {sorted(names)})",
                None,
                "name a function of the module with function=...",
            )
        for f in todo:
            bwd = differentiate(f, self.save)
            op.body.block.insert_op_after(bwd, f)
            if self.replace:
                f.detach()
                f.erase()
