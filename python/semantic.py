"""The semantics layer, part 1: what elementwise tensor operations, casts and reductions MEAN.

dtype semantics ("opmath", as PyTorch's fused kernels): every tensor has a *logical* dtype
(``float16``/``float32``; comparisons give ``bool`` masks), but arithmetic is always computed
in f32 IR: an f16 value is ``asc.cast`` to f32 once (cached) before its first arithmetic use.
A result is ``float16`` when every tensor operand is ``float16`` (Python numbers do not
promote); values are rounded to their logical dtype only by an explicit
``cast(x, float16)`` and when returned. Operands broadcast as in NumPy (explicit
``asc.broadcast``, cached per value and shape). Boolean masks are ``i1`` tensors; mask logic
goes through 1.0/0.0 in f32.

:class:`Semantic` builds the ``asc`` ops (through the shared
:class:`~pyasc_mlir.frontend.context.FrontendContext`) and raises the errors for wrong
operands; on compile-time operands it computes the Python value instead.
:mod:`pyasc_mlir.frontend.semantic_layout` adds data movement and matmul.
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from pyasc_mlir import ops
from pyasc_mlir.dialects import asc
from pyasc_mlir.frontend.context import Component, FrontendContext
from pyasc_mlir.frontend.hints import MASK_HINT, PY_HINT
from pyasc_mlir.frontend.names import PY_UNARY
from pyasc_mlir.frontend.values import (
    MinMax,
    SymbolicTensor,
    contains_tensor,
    is_int,
    is_number,
)
from pyasc_mlir.types import DTYPES, HALF_DTYPES, dtype_name, ir_type

__all__ = ["Semantic"]

_PY_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
    "max": builtins.max,
    "min": builtins.min,
}
"""The ``asc.binary`` kinds on compile-time numbers (``pa.add(1.0, 2.0)``, ``maximum(2, 3)``)."""


class Semantic(Component):
    """Elementwise ops, masks, casts and reductions on symbolic tensors and numbers."""

    def __init__(self, ctx: FrontendContext) -> None:
        super().__init__(ctx)
        self._casts: dict[tuple[SSAValue, str], SSAValue] = {}
        self._bcasts: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}

    def pyop(self, fn: Callable[..., Any], args: Sequence[Any], node: ast.AST) -> Any:
        """Apply a Python operator to compile-time values."""
        try:
            return fn(*args)
        except Exception as exc:
            self.error(f"{type(exc).__name__}: {exc}", node, PY_HINT)

    # ------------------------------------------------------------------ IR helpers

    def convert(self, v: SSAValue, dtype: str, node: ast.AST) -> SSAValue:
        """``v`` with element type ``dtype`` (an ``asc.cast``, cached per value)."""
        t = v.type
        assert isinstance(t, TensorType)
        want = ir_type(dtype)
        if t.element_type == want:
            return v
        if dtype in HALF_DTYPES and asc.element_bits(t.element_type) == 16:
            v = self.convert(v, "float32", node)  # f16 <-> bf16: no Cast pair, via f32 (exact)
        key = (v, dtype)
        if key not in self._casts:
            self._casts[key] = self.emit(asc.CastOp(v, want), node).results[0]
        return self._casts[key]

    def broadcast(self, v: SSAValue, shape: tuple[int, ...], node: ast.AST) -> SSAValue:
        """``v`` broadcast to ``shape`` (an ``asc.broadcast``, cached per value and shape)."""
        t = v.type
        assert isinstance(t, TensorType)
        if tuple(t.get_shape()) == shape:
            return v
        key = (v, shape)
        if key not in self._bcasts:
            self._bcasts[key] = self.emit(asc.BroadcastOp(v, shape), node).results[0]
        return self._bcasts[key]

    def constant(self, value: float, shape: tuple[int, ...], node: ast.AST) -> SSAValue:
        """An f32 ``asc.constant`` tensor of ``shape`` filled with ``value``."""
        return self.emit(
            asc.ConstantOp(float(value), TensorType(ir_type("float32"), shape)), node
        ).results[0]

    def f32_operand(self, v: Any, shape: tuple[int, ...], node: ast.AST) -> SSAValue:
        """A number or non-mask tensor as an f32 value of ``shape``."""
        if isinstance(v, SymbolicTensor):
            return self.broadcast(self.convert(v.value, "float32", node), shape, node)
        return self.constant(float(v), shape, node)

    def result_shape(self, values: Sequence[Any], node: ast.AST) -> tuple[int, ...]:
        """The NumPy broadcast of the shapes of the tensors among ``values``
        (``()`` when there is none)."""
        shape: tuple[int, ...] | None = None
        for v in values:
            if not isinstance(v, SymbolicTensor):
                continue
            if shape is None:
                shape = v.shape
                continue
            new = asc.broadcast_shapes(shape, v.shape)
            if new is None:
                self.error(
                    f"cannot broadcast shapes {list(shape)} and {list(v.shape)}",
                    node,
                    "NumPy broadcasting: trailing dimensions must be equal or 1",
                )
            shape = new
        return () if shape is None else shape

    @staticmethod
    def promote(values: Sequence[Any]) -> str:
        """float16 (bfloat16) if every (non-mask) tensor operand is float16 (bfloat16), else
        float32."""
        dts = {v.dtype for v in values if isinstance(v, SymbolicTensor) and v.dtype != "bool"}
        return dts.pop() if len(dts) == 1 and dts <= set(HALF_DTYPES) else "float32"

    def check_arith(self, v: Any, node: ast.AST, what: str) -> None:
        """Reject ``v`` as an arithmetic operand (``what`` names the operation) unless it
        is a non-mask tensor or a real number."""
        if isinstance(v, SymbolicTensor):
            if v.dtype == "bool":
                self.error(f"a boolean mask cannot be used in arithmetic ({what})", node, MASK_HINT)
            return
        if isinstance(v, MinMax):
            self.error(
                f"x.max(dim=) / x.min(dim=) gives (values, indices), not a tensor, for {what}",
                node,
                "as in PyTorch: use x.max(dim=d).values, or pyasc_mlir.amax(x, d) / x.max(d)",
            )
        if not is_number(v) or isinstance(v, complex):
            self.error(
                f"unsupported operand of type {type(v).__name__} for {what} with a tensor",
                node,
                "operands are tensors or Python numbers",
            )

    def need_tensor(self, x: Any, what: str, node: ast.AST) -> SymbolicTensor:
        """``x``, which must be a tensor (``what`` names the function needing it)."""
        if not isinstance(x, SymbolicTensor):
            self.error(
                f"{what} needs a tensor, got {type(x).__name__} {x!r}",
                node,
                "pass a tensor (an argument of the operator or a value computed from one)",
            )
        return x

    def norm_axis(self, axis: Any, x: SymbolicTensor, node: ast.AST) -> int:
        """``axis`` (negative counts from the end) as an index into ``x.shape``."""
        if not is_int(axis):
            self.error(
                f"a dim must be a compile-time int, got {axis!r}",
                node,
                "pass the dim as an int constant, e.g. -1",
            )
        rank = x.ndim
        if not -rank <= int(axis) < rank:
            self.error(
                f"dim {axis} is out of range for a tensor of shape {list(x.shape)}",
                node,
                f"valid dims: {-rank}..{rank - 1}" if rank else None,
            )
        return int(axis) % rank

    # ------------------------------------------------------------------ elementwise

    def binary(self, kind: str, a: Any, b: Any, node: ast.AST, what: str | None = None) -> Any:
        """``asc.binary`` ``kind`` (``add``, ``sub``, ``mul``, ``div``, ``max``, ``min``) of two
        operands; the Python value when neither is a tensor. ``what`` names the operator in
        errors (``'+'``); default: the function (``maximum()``)."""
        if what:
            what = f"'{what}'"
        else:
            what = {"max": "maximum()", "min": "minimum()"}.get(kind, f"{kind}()")
        if not (isinstance(a, SymbolicTensor) or isinstance(b, SymbolicTensor)):
            for v in (a, b):
                self.check_arith(v, node, what)
            return self.pyop(_PY_BINARY[kind], [a, b], node)
        for v in (a, b):
            self.check_arith(v, node, what)
        shape = self.result_shape([a, b], node)
        lhs = self.f32_operand(a, shape, node)
        rhs = self.f32_operand(b, shape, node)
        r = self.emit(asc.BinaryOp(kind, lhs, rhs), node).results[0]
        return SymbolicTensor(r, self.promote([a, b]), shape)

    def unary(self, kind: str, x: Any, node: ast.AST) -> Any:
        """``asc.unary`` ``kind`` (``exp``, ``neg``, ``sqrt``, ...) of ``x``, keeping its dtype;
        the Python value for a number."""
        if not isinstance(x, SymbolicTensor):
            self.check_arith(x, node, f"{kind}()")
            if kind == "neg":
                return -x
            try:
                return PY_UNARY[kind](float(x))
            except (ValueError, OverflowError, ZeroDivisionError) as exc:
                self.error(
                    f"{kind}({x!r}) at compile time: {exc}",
                    node,
                    "the constant is outside the function's domain; check the value",
                )
        self.check_arith(x, node, f"{kind}()" if kind != "neg" else "'-'")
        r = self.emit(asc.UnaryOp(kind, self.convert(x.value, "float32", node)), node)
        return SymbolicTensor(r.results[0], x.dtype, x.shape)

    def power(self, base: Any, exponent: Any, node: ast.AST) -> Any:
        """``base ** exponent`` for a constant exponent: 1, 2 and 3 as products, 0.5, -1 and
        -0.5 as ``sqrt``, ``reciprocal`` and ``rsqrt``."""
        if isinstance(exponent, SymbolicTensor):
            self.error(
                "a tensor exponent is not supported",
                node,
                "use pyasc_mlir.exp(y * pyasc_mlir.log(x)) for x ** y with x > 0",
            )
        if not isinstance(base, SymbolicTensor):
            return self.pyop(operator.pow, [base, exponent], node)
        self.check_arith(base, node, "'**'")
        if not is_number(exponent):
            self.error(
                f"unsupported exponent of type {type(exponent).__name__}",
                node,
                "use a number exponent, e.g. x ** 2 or x ** 0.5",
            )
        e = float(exponent)
        if e == 1:
            return base
        if e in (2, 3):
            sq = self.binary("mul", base, base, node, "**")
            return sq if e == 2 else self.binary("mul", sq, base, node, "**")
        kinds = {0.5: "sqrt", -1: "reciprocal", -0.5: "rsqrt"}
        if e in kinds:
            return self.unary(kinds[e], base, node)
        self.error(
            f"unsupported exponent {exponent!r} for a tensor",
            node,
            "supported constant exponents: 2, 3, 0.5, -1, -0.5 (and 1); write other integer "
            "powers as products (x**4 = (x * x) * (x * x)); for x > 0 only, "
            "pyasc_mlir.exp(e * pyasc_mlir.log(x)) (NaN for negative x)",
        )

    def compare(self, predicate: str, a: Any, b: Any, node: ast.AST) -> SymbolicTensor:
        """``a <predicate> b`` (``lt``, ``gt``, ``le``, ``ge``, ``eq``, ``ne``) with at least
        one tensor operand: a boolean mask of the broadcast shape."""
        for v in (a, b):
            if isinstance(v, SymbolicTensor) and v.dtype == "bool":
                self.error(
                    "boolean masks cannot be compared",
                    node,
                    "combine masks with & | ^ ~, or use pyasc_mlir.where",
                )
            self.check_arith(v, node, "a comparison")
        shape = self.result_shape([a, b], node)
        lhs = self.f32_operand(a, shape, node)
        rhs = self.f32_operand(b, shape, node)
        r = self.emit(asc.CompareOp(predicate, lhs, rhs), node).results[0]
        return SymbolicTensor(r, "bool", shape)

    def mask_as_f32(self, m: SymbolicTensor, shape: tuple[int, ...], node: ast.AST) -> SSAValue:
        """A mask broadcast to ``shape`` as f32 1.0/0.0 (an ``asc.select``)."""
        cond = self.broadcast(m.value, shape, node)
        one = self.constant(1.0, shape, node)
        zero = self.constant(0.0, shape, node)
        return self.emit(asc.SelectOp(cond, one, zero), node).results[0]

    def mask_logic(self, sym: str, a: Any, b: Any, node: ast.AST) -> Any:
        """``a & b``, ``a | b`` or ``a ^ b`` (``sym``) of two boolean masks."""
        for v in (a, b):
            if not (isinstance(v, SymbolicTensor) and v.dtype == "bool"):
                self.error(
                    f"operator '{sym}' needs two boolean masks",
                    node,
                    "masks come from comparisons such as x > 0",
                )
        shape = self.result_shape([a, b], node)
        fa = self.mask_as_f32(a, shape, node)
        fb = self.mask_as_f32(b, shape, node)
        kind, pred = {"&": ("min", "gt"), "|": ("max", "gt"), "^": ("sub", "ne")}[sym]
        combined = self.emit(asc.BinaryOp(kind, fa, fb), node).results[0]
        zero = self.constant(0.0, shape, node)
        r = self.emit(asc.CompareOp(pred, combined, zero), node).results[0]
        return SymbolicTensor(r, "bool", shape)

    def mask_not(self, m: SymbolicTensor, node: ast.AST) -> SymbolicTensor:
        """``~m`` of a boolean mask."""
        f = self.mask_as_f32(m, m.shape, node)
        zero = self.constant(0.0, m.shape, node)
        r = self.emit(asc.CompareOp("eq", f, zero), node).results[0]
        return SymbolicTensor(r, "bool", m.shape)

    def select(self, cond: Any, a: Any, b: Any, node: ast.AST) -> Any:
        """``where(cond, a, b)``: ``cond`` a boolean mask, ``a``/``b`` tensors or numbers."""
        if not (isinstance(cond, SymbolicTensor) and cond.dtype == "bool"):
            self.error(
                f"the condition of where() must be a boolean mask (e.g. x > 0), not {cond!r}",
                node,
                "for a compile-time condition use 'a if c else b'",
            )
        for v in (a, b):
            self.check_arith(v, node, "where()")
        shape = self.result_shape([cond, a, b], node)
        c = self.broadcast(cond.value, shape, node)
        lhs = self.f32_operand(a, shape, node)
        rhs = self.f32_operand(b, shape, node)
        r = self.emit(asc.SelectOp(c, lhs, rhs), node).results[0]
        return SymbolicTensor(r, self.promote([a, b]), shape)

    def cast(self, x: Any, dtype: Any, node: ast.AST) -> Any:
        """``cast(x, dtype)`` to float16 or float32: rounds to f16 (an ``asc.cast``) or relabels
        the logical dtype; a mask becomes 1.0/0.0."""
        name = self.dtype_of(dtype, node)
        if not isinstance(x, SymbolicTensor):
            self.check_arith(x, node, "cast()")
            return float(DTYPES[name].type(x))
        if x.dtype == "bool":
            return SymbolicTensor(self.mask_as_f32(x, x.shape, node), name, x.shape)
        if name in HALF_DTYPES:
            return SymbolicTensor(self.convert(x.value, name, node), name, x.shape)
        return SymbolicTensor(x.value, name, x.shape)

    def dtype_of(self, dtype: Any, node: ast.AST) -> str:
        """The name of ``dtype`` (a ``pyasc_mlir`` dtype, a NumPy dtype or a string):
        ``"float16"`` or ``"float32"``, else a located error."""
        if isinstance(dtype, ops.DType):
            name = dtype.name
        else:
            try:
                name = dtype_name(dtype)
            except TypeError:
                name = "unsupported"
        if name not in DTYPES:
            self.error(
                f"unsupported dtype {dtype!r}",
                node,
                "use pyasc_mlir.float16, pyasc_mlir.bfloat16 or pyasc_mlir.float32",
            )
        return name

    def reduce(
        self, kind: str, x: Any, axis: Any, keepdim: Any, correction: int, node: ast.AST
    ) -> Any:
        """``kind`` (``sum``, ``mean``, ``max``, ``min``, ``var``) of ``x`` over ``axis`` (an int, a
        tuple of ints or None = every dim); ``correction`` is var's Bessel correction (0 or 1)."""
        if not isinstance(x, SymbolicTensor):
            self.error(
                f"{kind}() reduces a tensor, not {type(x).__name__}",
                node,
                "for Python numbers use the builtins" if kind != "var" else None,
            )
        self.check_arith(x, node, f"{kind}()")
        if contains_tensor(keepdim) or contains_tensor(axis):
            self.error(
                f"axis and keepdim of {kind}() must be compile-time values",
                node,
                "pass axis as an int or a tuple of ints and keepdim as True or False",
            )
        norm = self.reduce_axes(x, axis, node)
        if not norm:
            if kind != "var":
                return x
            value = 0.0 if correction == 0 else math.nan
            return SymbolicTensor(self.constant(value, x.shape, node), x.dtype, x.shape)
        op = asc.ReduceOp(
            kind, self.convert(x.value, "float32", node), sorted(norm), bool(keepdim), correction
        )
        r = self.emit(op, node).results[0]
        t = r.type
        assert isinstance(t, TensorType)
        return SymbolicTensor(r, x.dtype, tuple(t.get_shape()))

    def reduce_axes(self, x: SymbolicTensor, axis: Any, node: ast.AST) -> list[int]:
        """The dims of ``x`` named by ``axis`` (an int, a tuple or list of ints, or None = every
        dim), each in ``0..rank-1`` and named once, in the order given."""
        rank = x.ndim
        if axis is None:
            axes = list(range(rank))
        elif isinstance(axis, int | np.integer) and not isinstance(axis, bool):
            axes = [int(axis)]
        elif isinstance(axis, tuple | list) and all(
            isinstance(a, int | np.integer) and not isinstance(a, bool) for a in axis
        ):
            axes = [int(a) for a in axis]
        else:
            self.error(
                f"axis must be an int, a tuple of ints or None, got {axis!r}",
                node,
                "pass axis=-1, axis=(0, 1) or axis=None (every dim)",
            )
        norm: list[int] = []
        for a in axes:
            if not -rank <= a < rank:
                self.error(
                    f"axis {a} is out of range for a tensor of rank {rank} (shape {list(x.shape)})",
                    node,
                    f"valid axes: {-rank}..{rank - 1}" if rank else "a 0-d tensor has no axes",
                )
            a = a % rank
            if a in norm:
                self.error(f"axis {a} is repeated in axis={axis!r}", node, "name each dim once")
            norm.append(a)
        return norm
