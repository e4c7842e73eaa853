"""The semantics layer, part 2: data movement (reshape, transpose, concat, slicing), matmul,
tensor attributes and the shape-check helpers, with their shape checks.

Data movement keeps the value's IR element type (f16 stays f16, so half the bytes move); a
boolean mask moves as 1.0/0.0 in f32 and is compared back to a mask afterwards. A transpose
of the last two dims feeding a matmul becomes the matmul's transpose flag.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue

from pyasc_mlir import ops
from pyasc_mlir.dialects import asc
from pyasc_mlir.frontend.hints import MASK_HINT, MATCH_HINT, RANK_HINT, RESHAPE_HINT
from pyasc_mlir.frontend.names import METHODS
from pyasc_mlir.frontend.semantic import Semantic
from pyasc_mlir.frontend.spellings import name_hint
from pyasc_mlir.frontend.values import (
    SymbolicTensor,
    TensorMethod,
    contains_tensor,
    is_int,
    shapes_text,
)
from pyasc_mlir.types import HALF_DTYPES

__all__ = ["LayoutSemantic"]


def _element_type(v: SSAValue) -> Attribute:
    """The element type of a tensor value (the frontend's values are tensors)."""
    assert isinstance(v.type, TensorType), v.type
    return v.type.element_type


class LayoutSemantic(Semantic):
    """The whole semantics layer: :class:`~pyasc_mlir.frontend.semantic.Semantic` plus data
    movement, matmul, tensor attributes and shape checks."""

    def tensor_attribute(self, obj: SymbolicTensor, node: ast.Attribute) -> Any:
        """``obj.<attr>``: ``shape`` and ``ndim`` (compile-time values), ``dtype`` (a
        :class:`pyasc_mlir.ops.DType`), ``T`` (2-D transpose) or a tensor method."""
        if node.attr == "shape":
            self.note_shape_read(node)
            return obj.shape
        if node.attr == "ndim":
            return obj.ndim
        if node.attr == "dtype":
            return {"float16": ops.float16, "bfloat16": ops.bfloat16, "float32": ops.float32}.get(
                obj.dtype, ops.bool_
            )
        if node.attr == "T":
            if obj.ndim != 2:
                self.error(
                    f".T needs a 2-D tensor, got shape {list(obj.shape)}",
                    node,
                    "use x.transpose(d0, d1) or x.permute(*dims) for other ranks",
                )
            return self.transpose(obj, (1, 0), node)
        if node.attr in METHODS:
            return TensorMethod(obj, node.attr)
        close = name_hint(node.attr, ["shape", "ndim", "dtype", "T", *METHODS], "method")
        self.error(
            f"a tensor has no attribute '{node.attr}'",
            node,
            close
            if not close.startswith("supported")
            else "tensor attributes: shape, ndim, dtype, T; methods: " + ", ".join(METHODS),
        )

    def reshape(self, x: SymbolicTensor, shape: Sequence[Any], node: ast.AST) -> Any:
        """``x.reshape(*shape)``: ints, at most one -1 (inferred); the same tensor when the
        shape does not change."""
        if contains_tensor(shape) or not all(
            isinstance(d, int | np.integer) and not isinstance(d, bool) for d in shape
        ):
            self.error(
                f"reshape() needs a shape of compile-time ints, got {list(shape)!r}",
                node,
                RESHAPE_HINT,
            )
        dims = [int(d) for d in shape]
        total = math.prod(x.shape)
        if dims.count(-1) > 1 or any(d < -1 or d == 0 for d in dims):
            self.error(f"invalid shape {dims} for reshape()", node, RESHAPE_HINT)
        if -1 in dims:
            known = math.prod(d for d in dims if d != -1)
            if total % known:
                self.error(
                    f"cannot reshape {list(x.shape)} to {dims}",
                    node,
                    f"the new shape must hold {total} elements; {RESHAPE_HINT}",
                )
            dims[dims.index(-1)] = total // known
        if math.prod(dims) != total:
            self.error(
                f"cannot reshape {list(x.shape)} ({total} elements) to {dims}",
                node,
                f"the new shape must hold {total} elements; {RESHAPE_HINT}",
            )
        if tuple(dims) == x.shape:
            return x
        r = self.emit(asc.ReshapeOp(x.value, dims), node).results[0]
        return SymbolicTensor(r, x.dtype, dims)

    # ------------------------------------------------------------------ layout

    def layout_value(self, x: SymbolicTensor, node: ast.AST) -> SSAValue:
        """The IR value a data-movement op moves: the value itself (f16 stays f16, so half the
        bytes move), or a mask as 1.0/0.0 in f32 (masks are bit-packed on chip)."""
        return self.mask_as_f32(x, x.shape, node) if x.dtype == "bool" else x.value

    def layout_result(self, r: SSAValue, dtype: str, node: ast.AST) -> SymbolicTensor:
        """The result ``r`` of a data-movement op as a tensor of logical ``dtype`` (a mask
        is compared back from 1.0/0.0)."""
        t = r.type
        assert isinstance(t, TensorType)
        shape = tuple(t.get_shape())
        if dtype == "bool":
            zero = self.constant(0.0, shape, node)
            r = self.emit(asc.CompareOp("ne", r, zero), node).results[0]
        return SymbolicTensor(r, dtype, shape)

    def transpose(self, x: Any, dims: Any, node: ast.AST) -> SymbolicTensor:
        """``x`` with its dims permuted by ``dims`` (negative dims count from the end); the
        same tensor for the identity permutation."""
        x = self.need_tensor(x, "transpose()", node)
        if not isinstance(dims, tuple | list) or not all(is_int(d) for d in dims):
            self.error(
                f"transpose dims must be a tuple of compile-time ints, got {dims!r}",
                node,
                "pass a permutation of the dims such as (1, 0), or swap two with x.transpose(0, 1)",
            )
        if len(dims) != x.ndim:
            self.error(
                f"permutation {list(dims)} has {len(dims)} dims but the tensor has shape "
                f"{list(x.shape)}",
                node,
                f"give all {x.ndim} dims in their new order",
            )
        perm = [self.norm_axis(d, x, node) for d in dims]
        if sorted(perm) != list(range(x.ndim)):
            self.error(
                f"{list(dims)} is not a permutation of the dims of a tensor of shape "
                f"{list(x.shape)}",
                node,
                "each dim must appear exactly once",
            )
        if perm == sorted(perm):
            return x
        r = self.emit(asc.TransposeOp(self.layout_value(x, node), perm), node).results[0]
        return self.layout_result(r, x.dtype, node)

    def concat(self, tensors: Any, axis: Any, node: ast.AST) -> SymbolicTensor:
        """``concat(tensors, axis)``: tensors of one rank, equal except along ``axis``."""
        if (
            not isinstance(tensors, tuple | list)
            or not tensors
            or not all(isinstance(t, SymbolicTensor) for t in tensors)
        ):
            self.error(
                f"concat() takes a non-empty list or tuple of tensors, got {tensors!r}",
                node,
                "e.g. pyasc_mlir.concat([a, b], axis=0)",
            )
        ts: list[SymbolicTensor] = list(tensors)
        first = ts[0]
        if any(t.ndim != first.ndim for t in ts):
            self.error(
                f"concat() needs tensors of one rank, got shapes {shapes_text(ts)}",
                node,
                "reshape the tensors to one rank first, e.g. x.reshape(1, n)",
            )
        if first.ndim == 0:
            self.error("concat() of 0-d tensors", node, "reshape them to [1] first")
        k = self.norm_axis(axis, first, node)
        for t in ts[1:]:
            bad = [i for i in range(first.ndim) if i != k and t.shape[i] != first.shape[i]]
            if bad:
                self.error(
                    f"concat() along axis {k}: shapes {shapes_text(ts)} differ in dim {bad[0]}",
                    node,
                    "all dims except the concat axis must be equal",
                )
        masks = [t.dtype == "bool" for t in ts]
        if any(masks) and not all(masks):
            self.error("concat() of boolean masks with number tensors", node, MASK_HINT)
        if len(ts) == 1:
            return first
        values = [self.layout_value(t, node) for t in ts]
        if len({_element_type(v) for v in values}) > 1:
            values = [self.convert(v, "float32", node) for v in values]
        r = self.emit(asc.ConcatOp(values, k), node).results[0]
        return self.layout_result(r, "bool" if masks[0] else self.promote(ts), node)

    def index(self, x: SymbolicTensor, index: Any, node: ast.AST) -> SymbolicTensor:
        """``x[index]``: constant ints, slices with step 1, ``...`` and ``None``."""
        offsets: list[int] = []
        sizes: list[int] = []
        out_shape: list[int] = []
        dim = 0
        for it in self.index_items(x, index, node):
            if it is None:
                out_shape.append(1)
                continue
            if isinstance(it, slice):
                start, n = self.slice_bounds(x, dim, it, node)
                offsets.append(start)
                sizes.append(n)
                out_shape.append(n)
            else:
                offsets.append(self.index_offset(x, dim, int(it), node))
                sizes.append(1)
            dim += 1
        r: SymbolicTensor = x
        if tuple(sizes) != x.shape:
            v = self.emit(asc.SliceOp(self.layout_value(x, node), offsets, sizes), node).results[0]
            r = self.layout_result(v, x.dtype, node)
        if tuple(out_shape) != r.shape:
            v = self.emit(asc.ReshapeOp(r.value, out_shape), node).results[0]
            r = SymbolicTensor(v, x.dtype, out_shape)
        return r

    def index_items(self, x: SymbolicTensor, index: Any, node: ast.AST) -> list[Any]:
        """The items of ``index`` checked and completed: one int or slice per dim of ``x``
        (``...`` and missing trailing dims become ``slice(None)``), plus the ``None`` s."""
        items = list(index) if isinstance(index, tuple) else [index]
        for it in items:
            if not (is_int(it) or isinstance(it, slice) or it is Ellipsis or it is None):
                self.error(
                    f"unsupported index {it!r} for a tensor",
                    node,
                    "index with compile-time ints, slices with step 1, ... and None",
                )
        if items.count(Ellipsis) > 1:
            self.error(
                "an index can only have a single ellipsis ('...')",
                node,
                "use '...' once, e.g. x[..., 0]",
            )
        used = sum(1 for it in items if it is not None and it is not Ellipsis)
        if used > x.ndim:
            self.error(
                f"too many indices ({used}) for a tensor of shape {list(x.shape)}",
                node,
                f"use at most {x.ndim} indices, one per dim",
            )
        if Ellipsis in items:
            at = items.index(Ellipsis)
            items[at : at + 1] = [slice(None)] * (x.ndim - used)
        else:
            items += [slice(None)] * (x.ndim - used)
        return items

    def slice_bounds(
        self, x: SymbolicTensor, dim: int, it: slice, node: ast.AST
    ) -> tuple[int, int]:
        """``(start, size)`` of the slice ``it`` of dim ``dim`` of ``x`` (non-empty, step 1)."""
        d = x.shape[dim]
        for part in (it.start, it.stop):
            if part is not None and not is_int(part):
                self.error(
                    f"slice bounds must be compile-time ints, got {it!r}",
                    node,
                    "use int constants or values read from x.shape",
                )
        if it.step is not None and it.step != 1:
            self.error(
                f"slice step {it.step!r} in dim {dim} is not supported",
                node,
                "only step 1 is supported",
            )
        start, stop, _ = it.indices(d)
        n = max(0, stop - start)
        if n == 0:
            self.error(
                f"the slice {it.start}:{it.stop} of dim {dim} (size {d}) of "
                f"shape {list(x.shape)} is empty",
                node,
                "empty tensors cannot be computed on",
            )
        return start, n

    def index_offset(self, x: SymbolicTensor, dim: int, i: int, node: ast.AST) -> int:
        """The offset in dim ``dim`` of ``x`` of the int index ``i`` (negative from the end)."""
        d = x.shape[dim]
        if not -d <= i < d:
            self.error(
                f"index {i} is out of range for dim {dim} (size {d}) of shape {list(x.shape)}",
                node,
                f"valid indices: {-d}..{d - 1}",
            )
        return i % d

    def matmul(
        self, a: Any, b: Any, transpose_a: Any, transpose_b: Any, node: ast.AST
    ) -> SymbolicTensor:
        """``a @ b`` over the last two dims (batch dims broadcast), optionally transposing
        either operand; both f16 operands give float16, else float32."""
        ta, tb, shape = self.matmul_shape(a, b, transpose_a, transpose_b, node)
        va, ta = self.fold_transpose(a.value, ta)
        vb, tb = self.fold_transpose(b.value, tb)
        if _element_type(va) != _element_type(vb):
            # The Cube reads one dtype. Both operands f16 for the user (one computed in f32):
            # round it to f16, as an f16 model on the NPU does (accumulation stays f32), so
            # the f16 one is read in place. Otherwise f32 (an f32 input is never rounded).
            want = a.dtype if a.dtype == b.dtype and a.dtype in HALF_DTYPES else "float32"
            va, vb = self.convert(va, want, node), self.convert(vb, want, node)
        r = self.emit(asc.MatmulOp(va, vb, ta, tb), node).results[0]
        return SymbolicTensor(r, self.promote([a, b]), shape)

    def matmul_shape(
        self, a: Any, b: Any, transpose_a: Any, transpose_b: Any, node: ast.AST
    ) -> tuple[bool, bool, tuple[int, ...]]:
        """The transpose flags and the result shape of ``matmul(a, b, ...)``, after checking
        the operands (tensors of rank >= 2, not masks, K matching, batch dims broadcasting)."""
        for v, side in ((a, "left"), (b, "right")):
            if not isinstance(v, SymbolicTensor):
                self.error(
                    f"the {side} operand of matmul is {type(v).__name__} {v!r}, not a tensor",
                    node,
                    "both operands of @ and pyasc_mlir.matmul must be tensors of rank >= "
                    "2; scale by a number with *",
                )
            if v.dtype == "bool":
                self.error("a boolean mask cannot be a matmul operand", node, MASK_HINT)
        for flag in (transpose_a, transpose_b):
            if not isinstance(flag, bool | np.bool_):
                self.error(
                    f"transpose_a/transpose_b must be compile-time bools, got {flag!r}",
                    node,
                    "pass transpose_a and transpose_b as True or False constants",
                )
        ta, tb = bool(transpose_a), bool(transpose_b)
        if a.ndim < 2 or b.ndim < 2:
            self.error(
                f"matmul needs operands of rank >= 2, got shapes {list(a.shape)} and "
                f"{list(b.shape)}",
                node,
                "reshape a vector to [1, K] (left) or [K, 1] (right) first",
            )
        shape = asc.matmul_shape(a.shape, b.shape, ta, tb)
        if shape is None:
            ka = a.shape[-2] if ta else a.shape[-1]
            kb = b.shape[-1] if tb else b.shape[-2]
            flags = "".join(
                f", {n}=True" for n, f in (("transpose_a", ta), ("transpose_b", tb)) if f
            )
            what = (
                f"K differs ({ka} vs {kb})"
                if ka != kb
                else f"batch dims {list(a.shape[:-2])} and {list(b.shape[:-2])} do not broadcast"
            )
            self.error(
                f"matmul shapes {list(a.shape)} and {list(b.shape)} do not multiply{flags}: {what}",
                node,
                "a is [..., M, K] and b is [..., K, N]; use transpose_a/transpose_b or "
                "x.transpose(-1, -2) to match K",
            )
        return ta, tb, shape

    @staticmethod
    def fold_transpose(v: SSAValue, flag: bool) -> tuple[SSAValue, bool]:
        """``x.transpose(-1, -2)`` feeding a matmul becomes its transpose flag (no data
        movement); the transpose is erased at the end when nothing else uses it."""
        owner = v.owner
        if isinstance(owner, asc.TransposeOp):
            perm = owner.permutation
            n = len(perm)
            if perm == (*range(n - 2), n - 1, n - 2):
                return owner.input, not flag
        return v, flag

    def erase_dead_layout_ops(self) -> None:
        """Erase the ``asc`` ops whose results nothing uses (transposes folded into a
        matmul's flags, the branch a compile-time ``where`` did not pick, values computed and
        never used), last first so chains go too. Every tensor-level ``asc`` op is pure."""
        for op in reversed(list(self.ctx.block.ops)):
            if op.name.startswith("asc.") and op.results and not any(r.uses for r in op.results):
                self.ctx.block.erase_op(op)

    def shape_helper(self, name: str, a: Mapping[str, Any], node: ast.AST) -> Any:
        """``pyasc_mlir.<name>(**a)`` for the shape-check helpers (:data:`SHAPE_HELPERS`):
        ``match_shape`` returns the shape; the asserts return None."""
        if name == "match_shape":
            return self.match_shape(a["x"], a["pattern"], node)
        if name == "assert_same_rank":
            return self.assert_same_rank(a["tensors"], node)
        return self.assert_compatible(a["tensors"], a["exclude_dim"], node)

    def match_shape(self, x: Any, pattern: Any, node: ast.AST) -> tuple[int, ...]:
        """The shape of ``x``, checked against ``pattern`` (ints fix a dim, None any size)."""
        self.note_shape_read(node)
        x = self.need_tensor(x, "match_shape()", node)
        if not isinstance(pattern, tuple | list) or not all(
            p is None or is_int(p) for p in pattern
        ):
            self.error(
                f"match_shape() pattern must be a tuple of ints and None, got {pattern!r}",
                node,
                "pass a tuple such as (None, 64): an int fixes a dim, None accepts any size",
            )
        want = (
            "("
            + ", ".join("None" if p is None else str(int(p)) for p in pattern)
            + (",)" if len(pattern) == 1 else ")")
        )
        if len(pattern) != x.ndim:
            self.error(
                f"shape {list(x.shape)} does not match {want}: rank {x.ndim}, "
                f"expected {len(pattern)}",
                node,
                MATCH_HINT,
            )
        for i, (d, p) in enumerate(zip(x.shape, pattern, strict=True)):
            if p is not None and d != p:
                self.error(
                    f"shape {list(x.shape)} does not match {want}: dim {i} is {d}, expected {p}",
                    node,
                    MATCH_HINT,
                )
        return x.shape

    def assert_same_rank(self, tensors: Any, node: ast.AST) -> None:
        """Check that ``tensors`` (varargs, or one tuple or list) have one rank."""
        if len(tensors) == 1 and isinstance(tensors[0], tuple | list):
            tensors = tensors[0]
        ts = [self.need_tensor(t, "assert_same_rank()", node) for t in tensors]
        if len({t.ndim for t in ts}) > 1:
            self.error(f"tensors of different ranks: shapes {shapes_text(ts)}", node, RANK_HINT)

    def assert_compatible(self, tensors: Any, exclude_dim: Any, node: ast.AST) -> None:
        """Check that ``tensors`` (a tuple or list) have one rank and equal sizes in every dim
        except ``exclude_dim``."""
        if not isinstance(tensors, tuple | list):
            self.error(
                f"assert_compatible() takes a list or tuple of tensors, got {tensors!r}",
                node,
                "pass a list or tuple of tensors, e.g. pyasc_mlir.assert_compatible([a, b])",
            )
        ts = [self.need_tensor(t, "assert_compatible()", node) for t in tensors]
        if not ts:
            return None
        if len({t.ndim for t in ts}) > 1:
            self.error(f"tensors of different ranks: shapes {shapes_text(ts)}", node, RANK_HINT)
        ex = exclude_dim
        k = None if ex is None else self.norm_axis(ex, ts[0], node)
        for i in range(ts[0].ndim):
            if i != k and len({t.shape[i] for t in ts}) > 1:
                where = "" if k is None else f" (exclude_dim={ex})"
                self.error(
                    f"shapes {shapes_text(ts)} differ in dim {i}{where}",
                    node,
                    "the tensors must have equal sizes in every dim (except exclude_dim); "
                    "check the shapes the operator is called with",
                )
        return None
