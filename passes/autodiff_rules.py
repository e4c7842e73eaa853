"""Reverse-mode rules of the structural tensor-level ``asc`` ops, and the IR builder every
rule of ``asc-autodiff`` uses (:class:`GradEmitter`; the op table's rules are in
``dialects/opset_grad.py``).

Rules here (``g``: the float32 cotangent of the op's result):

* ``asc.broadcast``: ``g`` summed over the broadcast dims back to the input's shape.
* ``asc.cast``: ``g`` passes through (cotangents are float32 throughout; the gradient is cast
  to the input's dtype once, when the backward function returns it).
* ``asc.select``: ``select(c, g, 0)`` / ``select(c, 0, g)``; the condition gets none.
* ``asc.reshape``: ``g`` reshaped back; ``asc.transpose``: ``g`` transposed by the inverse
  permutation; ``asc.concat``: ``g`` sliced per input; ``asc.slice``: ``g`` padded with
  zeros (concatenations) to the input's shape.
* ``asc.matmul`` ``C = op(A) @ op(B)``: ``dA = g @ op(B)^T`` and ``dB = op(A)^T @ g`` written
  with the transpose flags (no data movement), then summed over broadcast batch dims; in the
  operands' dtype (f16: ``g`` rounded to f16, float32 accumulation; :func:`matmul_grads`);
  a 2-D ``B`` under a batched ``A`` gets one matmul over all rows (:func:`_folded_weight_grad`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.dialects.opset_grad import ReduceInfo
from pyasc_mlir.passes.ir_builder import IRBuilder


def shape_of(v: SSAValue) -> tuple[int, ...]:
    """The static shape of a tensor value."""
    t = v.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def f32(shape: Sequence[int]) -> TensorType:
    """``tensor<shape x f32>``."""
    return TensorType(Float32Type(), list(shape))


class GradEmitter(IRBuilder):
    """Appends the backward function's ops to ``block``: the
    :class:`pyasc_mlir.dialects.opset_grad.GradBuilder` of the rules, plus the structural
    helpers. Every f16 primal value a rule reads is widened to f32 once (:meth:`wide`)."""

    def __init__(self, block: Block, loc: Attribute | None = None):
        super().__init__(block, loc)
        self.widened: dict[SSAValue, SSAValue] = {}
        self.reduction: asc.ReduceOp | None = None
        self.ones: dict[tuple[int, ...], SSAValue] = {}

    def at(self, loc: Attribute | None) -> GradEmitter:
        """This emitter with location ``loc`` (shares the widening cache)."""
        self.loc = loc
        return self

    def put(self, op: Operation) -> SSAValue:
        """Append ``op``; its result."""
        return self.add_value(op)

    def wide(self, v: SSAValue) -> SSAValue:
        """``v`` as float32 (an f16/bf16 value is cast once; f32 and i1 values unchanged)."""
        t = v.type
        if not (
            isinstance(t, TensorType) and isinstance(t.element_type, Float16Type | BFloat16Type)
        ):
            return v
        if v not in self.widened:
            self.widened[v] = self.put(asc.CastOp(v, Float32Type()))
        return self.widened[v]

    # the opset_grad.GradBuilder protocol
    def const(self, value: float, like: SSAValue) -> SSAValue:
        return self.put(asc.ConstantOp(value, f32(shape_of(like))))

    def unary(self, kind: str, x: SSAValue) -> SSAValue:
        return self.put(asc.UnaryOp(kind, self.wide(x)))

    def binary(self, kind: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.put(asc.BinaryOp(kind, self.wide(a), self.wide(b)))

    def binary_const(self, kind: str, a: SSAValue, value: float) -> SSAValue:
        return self.binary(kind, a, self.const(value, a))

    def compare(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.put(asc.CompareOp(predicate, self.wide(a), self.wide(b)))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.put(asc.SelectOp(cond, self.wide(a), self.wide(b)))

    def expand(self, v: SSAValue) -> SSAValue:
        op = self.reduction
        assert op is not None, "expand() outside a reduce rule"
        shape = shape_of(op.input)
        kept = tuple(1 if i in op.axis_list else d for i, d in enumerate(shape))
        if shape_of(v) != kept:
            v = self.put(asc.ReshapeOp(v, kept))
        return v if kept == shape else self.put(asc.BroadcastOp(v, shape))

    def reduce_sum(self, x: SSAValue) -> SSAValue:
        op = self.reduction
        assert op is not None, "reduce_sum() outside a reduce rule"
        return self.put(asc.ReduceOp("sum", self.wide(x), op.axis_list, op.keeps_dims))

    # structural helpers
    def zeros(self, shape: Sequence[int]) -> SSAValue:
        return self.put(asc.ConstantOp(0.0, f32(shape)))

    def sum_to(self, g: SSAValue, shape: Sequence[int]) -> SSAValue:
        """``g`` summed over the dims NumPy broadcasting added or stretched to ``shape``."""
        gs = shape_of(g)
        lead = len(gs) - len(shape)
        axes = [i for i in range(len(gs)) if i < lead or (shape[i - lead] == 1 and gs[i] != 1)]
        if axes and axes == list(range(len(axes))) and len(axes) < len(gs):
            g = self.column_sum(g, len(axes))
        elif axes:
            g = self.put(asc.ReduceOp("sum", g, axes, True))
        if shape_of(g) != tuple(shape):
            g = self.put(asc.ReshapeOp(g, shape))
        return g

    def column_sum(self, g: SSAValue, lead: int) -> SSAValue:
        """``g`` summed over its ``lead`` leading dims as ``g.reshape(R, C)^T @ ones(R, 1)`` on
        the Cube: the weight/bias gradients' reduction over any number of rows, with float32
        accumulation in a fixed order (deterministic across cores; a vector kernel would have
        to hold every row in UB). The ``ones`` column spans the rows, so it is made by the
        vector kernel that produces ``g``: in the shape of ``g``'s leading dims (``[B, S, 1]``
        for a ``[B, S, H]`` ``g``, so it shares that kernel's iteration space), read by the
        Cube as ``[B*S, 1]`` in place."""
        gs = shape_of(g)
        rows, cols = math.prod(gs[:lead]), math.prod(gs[lead:])
        flat = g if len(gs) == 2 and lead == 1 else self.put(asc.ReshapeOp(g, (rows, cols)))
        key = tuple(gs[:lead])
        if key not in self.ones:  # one ones column per leading shape (one GM copy)
            ones = self.put(asc.ConstantOp(1.0, f32((*key, 1))))
            self.ones[key] = ones if lead == 1 else self.put(asc.ReshapeOp(ones, (rows, 1)))
        ones = self.ones[key]
        total = self.put(asc.MatmulOp(flat, ones, transpose_a=True))
        return self.put(asc.ReshapeOp(total, (1,) * lead + tuple(gs[lead:])))


def reduce_info(op: asc.ReduceOp) -> ReduceInfo:
    """The :class:`ReduceInfo` of a reduction."""
    shape = shape_of(op.input)
    count = 1
    for a in op.axis_list:
        count *= shape[a]
    corr = op.correction.data if op.correction is not None else 0
    return ReduceInfo(op.axis_list, op.keeps_dims, count, corr)


def matmul_grads(b: GradEmitter, op: asc.MatmulOp, g: SSAValue) -> tuple[SSAValue, SSAValue]:
    """``(dA, dB)`` of ``C = op(A) @ op(B)`` in the operands' stored layouts.

    Precision: the gradient matmuls run on the Cube in the forward's operand dtype with
    float32 accumulation, as the forward does. For f16 operands the float32 cotangent ``g``
    is rounded to f16 once (relative error <= 2^-11 per element, overflow above 65504: scale
    the loss as for any f16 training) and ``A``/``B`` are read as stored (f16), so ``dA``,
    ``dB`` carry the forward's f16-GEMM error (~2^-11 sqrt(K) relative), not an f32 GEMM's."""
    x, w = op.lhs, op.rhs
    lhs_t = x.type
    assert isinstance(lhs_t, TensorType)
    if lhs_t.element_type != Float32Type():  # f16 operands: round g once, f32 accumulation
        g = b.put(asc.CastOp(g, lhs_t.element_type))
    ta, tb = op.trans_a, op.trans_b
    if ta:
        da = b.put(asc.MatmulOp(w, g, transpose_a=tb, transpose_b=True))  # op(B) g^T
    else:
        da = b.put(asc.MatmulOp(g, w, transpose_a=False, transpose_b=not tb))  # g op(B)^T
    if not ta and len(shape_of(w)) == 2 < len(shape_of(x)):
        db = _folded_weight_grad(b, x, g, tb)
    elif tb:
        db = b.put(asc.MatmulOp(g, x, transpose_a=True, transpose_b=ta))  # g^T op(A)
    else:
        db = b.put(asc.MatmulOp(x, g, transpose_a=not ta, transpose_b=False))  # op(A)^T g
    return b.sum_to(da, shape_of(op.lhs)), b.sum_to(db, shape_of(op.rhs))


def _folded_weight_grad(b: GradEmitter, x: SSAValue, g: SSAValue, tb: bool) -> SSAValue:
    """``dB`` of ``x [..., M, K] @ op(B)`` with a 2-D ``B`` (a linear layer on ``[B, S, K]``):
    the batch dims fold into the rows, ONE matmul ``x.reshape(R, K)^T @ g.reshape(R, N)``
    (``R`` = all rows; ``B^T``'s layout when ``tb``), the reshapes read in place, instead of
    ``[batch, K, N]`` products summed over the batch afterwards."""
    xs, gs = shape_of(x), shape_of(g)
    rows = math.prod(xs[:-1])
    xf = b.put(asc.ReshapeOp(x, (rows, xs[-1])))
    gf = b.put(asc.ReshapeOp(g, (rows, gs[-1])))
    if tb:
        return b.put(asc.MatmulOp(gf, xf, transpose_a=True, transpose_b=False))  # [N, K]
    return b.put(asc.MatmulOp(xf, gf, transpose_a=True, transpose_b=False))  # [K, N]


def slice_grad(b: GradEmitter, op: asc.SliceOp, g: SSAValue) -> SSAValue:
    """``g`` padded with zeros to the sliced input's shape, one axis at a time."""
    full = shape_of(op.input)
    for axis, (start, size) in enumerate(zip(op.starts, op.extents, strict=True)):
        cur = list(shape_of(g))
        pieces = []
        if start > 0:
            pieces.append(b.zeros([*cur[:axis], start, *cur[axis + 1 :]]))
        pieces.append(g)
        if start + size < full[axis]:
            after = full[axis] - start - size
            pieces.append(b.zeros([*cur[:axis], after, *cur[axis + 1 :]]))
        if len(pieces) > 1:
            g = b.put(asc.ConcatOp(pieces, axis))
    return g


def concat_grads(b: GradEmitter, op: asc.ConcatOp, g: SSAValue) -> list[SSAValue]:
    """``g`` cut back into one slice per concatenated input."""
    axis, start, out = op.dim, 0, []
    gs = shape_of(g)
    for v in op.inputs:
        s = shape_of(v)
        offsets = [start if i == axis else 0 for i in range(len(gs))]
        out.append(b.put(asc.SliceOp(g, offsets, s)))
        start += s[axis]
    return out


def transpose_grad(b: GradEmitter, op: asc.TransposeOp, g: SSAValue) -> SSAValue:
    """``g`` transposed by the inverse permutation."""
    perm = op.permutation
    inverse = [perm.index(i) for i in range(len(perm))]
    return b.put(asc.TransposeOp(g, inverse))
