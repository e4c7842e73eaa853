"""The semantics layer, part 3: PyTorch's spellings (:mod:`pyasc_mlir.ops_torch`).

Shape ops (``unsqueeze``, ``squeeze``, ``flatten``, ``expand``, ``chunk``, ``split``) are
reshapes, broadcasts and slices of part 2; constants (``zeros_like`` ...) are splat
``asc.constant`` s; the composites (``softmax``, ``layer_norm``, ``rms_norm``, ``gelu``,
``silu``) expand into the op table's kinds (the transcendental ones, ``mean`` and ``var`` are
composites ``asc-decompose`` lowers), so they fuse with their neighbours into one kernel.
``where`` with a compile-time condition picks a branch at compile time.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from pyasc_mlir.frontend.hints import MATCH_HINT
from pyasc_mlir.frontend.semantic_layout import LayoutSemantic
from pyasc_mlir.frontend.values import (
    ShapeMatch,
    SymbolicTensor,
    contains_tensor,
    is_int,
    is_number,
)
from pyasc_mlir.platform import ceil_div

__all__ = ["TorchSemantic"]

INV_SQRT2 = 1.0 / math.sqrt(2.0)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
GELU_TANH_COEFF = 0.044715
"""The tanh approximation of GELU (Hendrycks & Gimpel 2016, eq. in section 2; as
``torch.nn.functional.gelu(approximate="tanh")``)."""


class TorchSemantic(LayoutSemantic):
    """The semantics layer with PyTorch's shape ops, constants and composites."""

    # ------------------------------------------------------------------ shape ops

    def dim_arg(self, dim: Any, x: SymbolicTensor, node: ast.AST, extra: int = 0) -> int:
        """``dim`` (a compile-time int; negative counts from the end) as an index into a rank
        ``x.ndim + extra`` (``extra=1`` for the insertion point of ``unsqueeze``)."""
        rank = x.ndim + extra
        if not is_int(dim):
            self.error(
                f"a dim must be a compile-time int, got {dim!r}",
                node,
                "pass the dim as an int constant, e.g. dim=-1",
            )
        if not -rank <= int(dim) < rank:
            self.error(
                f"dim {dim} is out of range for a tensor of shape {list(x.shape)}",
                node,
                f"valid dims: {-rank}..{rank - 1}" if rank else "a 0-d tensor has no dims",
            )
        return int(dim) % rank

    def unsqueeze(self, x: Any, dim: Any, node: ast.AST) -> Any:
        """``x`` with a size-1 dim inserted at ``dim``."""
        x = self.need_tensor(x, "unsqueeze()", node)
        k = self.dim_arg(dim, x, node, extra=1)
        return self.reshape(x, [*x.shape[:k], 1, *x.shape[k:]], node)

    def squeeze(self, x: Any, dim: Any, node: ast.AST) -> Any:
        """``x`` without its size-1 dims (all, or those of ``dim``, an int or a tuple)."""
        x = self.need_tensor(x, "squeeze()", node)
        if dim is None:
            dims = set(range(x.ndim))
        elif isinstance(dim, tuple | list):
            dims = {self.dim_arg(d, x, node) for d in dim}
        else:
            dims = {self.dim_arg(dim, x, node)}
        shape = [d for i, d in enumerate(x.shape) if not (i in dims and d == 1)]
        return self.reshape(x, shape, node)

    def flatten(self, x: Any, start: Any, end: Any, node: ast.AST) -> Any:
        """``x`` with dims ``start..end`` (inclusive) merged."""
        x = self.need_tensor(x, "flatten()", node)
        if x.ndim == 0:
            return self.reshape(x, [1], node)
        s, e = self.dim_arg(start, x, node), self.dim_arg(end, x, node)
        if s > e:
            self.error(
                f"flatten(): start_dim {start} comes after end_dim {end} for shape {list(x.shape)}",
                node,
                "start_dim must not come after end_dim",
            )
        merged = math.prod(x.shape[s : e + 1])
        return self.reshape(x, [*x.shape[:s], merged, *x.shape[e + 1 :]], node)

    def expand(self, x: Any, sizes: Sequence[Any], node: ast.AST) -> Any:
        """``x`` broadcast to ``sizes`` (``-1`` keeps a dim; new dims lead; only size-1 dims
        grow), as ``torch.Tensor.expand``."""
        x = self.need_tensor(x, "expand()", node)
        if not sizes or not all(is_int(d) for d in sizes):
            self.error(
                f"expand() needs the new sizes as compile-time ints, got {list(sizes)!r}",
                node,
                "e.g. x.expand(4, -1) (-1 keeps a dim) or x.expand_as(y)",
            )
        lead = len(sizes) - x.ndim
        if lead < 0:
            self.error(
                f"expand() to {list(sizes)} has fewer dims than the tensor's shape {list(x.shape)}",
                node,
                "give one size per dim (new dims go first)",
            )
        shape: list[int] = []
        for i, want in enumerate(int(d) for d in sizes):
            have = x.shape[i - lead] if i >= lead else None
            if want == -1 and have is not None:
                want = have
            if want < 1 or (have is not None and have not in (1, want)):
                self.error(
                    f"cannot expand shape {list(x.shape)} to {list(sizes)}: dim {i}",
                    node,
                    "only size-1 dims grow; -1 keeps a dim (not allowed for a new dim)",
                )
            shape.append(want)
        if tuple(shape) == x.shape:
            return x
        return SymbolicTensor(self.broadcast(x.value, tuple(shape), node), x.dtype, shape)

    def pieces(self, x: Any, sizes: list[int], dim: int, node: ast.AST) -> tuple[Any, ...]:
        """The slices of ``x`` along ``dim`` of the given ``sizes`` (in order)."""
        out: list[Any] = []
        start = 0
        for n in sizes:
            items = (slice(None),) * dim + (slice(start, start + n),)
            out.append(self.index(x, items, node))
            start += n
        return tuple(out)

    def chunk(self, x: Any, chunks: Any, dim: Any, node: ast.AST) -> tuple[Any, ...]:
        """``torch.chunk``: pieces of ``ceil(n / chunks)`` elements (the last smaller)."""
        x = self.need_tensor(x, "chunk()", node)
        if not is_int(chunks) or int(chunks) < 1:
            self.error(
                f"chunk() needs a positive compile-time int of chunks, got {chunks!r}",
                node,
                "e.g. a, b = x.chunk(2, dim=-1)",
            )
        k = self.dim_arg(dim, x, node)
        n = x.shape[k]
        size = ceil_div(n, int(chunks))
        return self.pieces(x, [min(size, n - s) for s in range(0, n, size)], k, node)

    def split(self, x: Any, sizes: Any, dim: Any, node: ast.AST) -> tuple[Any, ...]:
        """``torch.split``: pieces of ``sizes`` elements (an int: the last may be smaller;
        a list: exactly those, summing to the dim)."""
        x = self.need_tensor(x, "split()", node)
        k = self.dim_arg(dim, x, node)
        n = x.shape[k]
        if is_int(sizes) and int(sizes) > 0:
            step = int(sizes)
            return self.pieces(x, [min(step, n - s) for s in range(0, n, step)], k, node)
        if (
            isinstance(sizes, tuple | list)
            and sizes
            and all(is_int(s) and int(s) > 0 for s in sizes)
        ):
            if sum(int(s) for s in sizes) != n:
                self.error(
                    f"split() sizes {list(sizes)} sum to {sum(sizes)}, but dim {k} of shape "
                    f"{list(x.shape)} has {n} elements",
                    node,
                    "the sizes must add up to the dim's size",
                )
            return self.pieces(x, [int(s) for s in sizes], k, node)
        self.error(
            f"split() needs a positive int or a list of positive ints, got {sizes!r}",
            node,
            "e.g. x.split(64, dim=-1) or x.split([32, 96], dim=-1)",
        )

    # ------------------------------------------------------------------ values

    def like(self, x: Any, value: Any, dtype: Any, what: str, node: ast.AST) -> SymbolicTensor:
        """``zeros_like``/``ones_like``/``full_like``: ``value`` in ``x``'s shape and dtype."""
        x = self.need_tensor(x, f"{what}()", node)
        if not is_number(value) or contains_tensor(value):
            self.error(
                f"{what}() needs a compile-time number as the fill value, got {value!r}",
                node,
                "for a value computed from tensors use pyasc_mlir.where or arithmetic",
            )
        if dtype is None:
            if x.dtype == "bool":
                self.error(f"{what}() of a boolean mask", node, "pass dtype=pyasc_mlir.float32")
            name = x.dtype
        else:
            name = self.dtype_of(dtype, node)
        return SymbolicTensor(self.constant(float(value), x.shape, node), name, x.shape)

    def to(self, x: SymbolicTensor, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        """``x.to(dtype)``, ``x.to(dtype=...)`` or ``x.to(other)`` (``other``'s dtype)."""
        extra = set(kwargs) - {"dtype", "copy", "non_blocking"}
        target = kwargs.get("dtype", args[0] if len(args) == 1 else None)
        if (
            extra
            or len(args) > 1
            or target is None
            or isinstance(target, str)
            and target
            in (
                "cpu",
                "npu",
                "cuda",
            )
        ):
            self.error(
                f"x.to() takes a dtype here, got {args!r} {kwargs!r}",
                node,
                "an operator's tensors live on the device already; use x.to(pyasc_mlir.float16), "
                "x.half() or x.float()",
            )
        if isinstance(target, SymbolicTensor):
            target = target.dtype
        return self.cast(x, target, node)

    def clamp(self, x: Any, lo: Any, hi: Any, node: ast.AST) -> Any:
        """``minimum(maximum(x, lo), hi)``; a bound of ``None`` is skipped."""
        if lo is None and hi is None:
            self.error(
                "clamp() needs at least one of min and max",
                node,
                "e.g. pyasc_mlir.clamp(x, min=0.0, max=6.0)",
            )
        if lo is not None:
            x = self.binary("max", x, lo, node, "clamp()")
        if hi is not None:
            x = self.binary("min", x, hi, node, "clamp()")
        return x

    def select(self, cond: Any, a: Any, b: Any, node: ast.AST) -> Any:
        """``where(cond, a, b)``; a compile-time ``cond`` (a bool or a number) picks ``a`` or
        ``b`` now, broadcast to the shape of both in their common dtype."""
        if isinstance(cond, SymbolicTensor) or contains_tensor(cond):
            return super().select(cond, a, b, node)
        if not is_number(cond):
            self.error(
                f"the condition of where() must be a boolean mask (e.g. x > 0) or a "
                f"compile-time bool, not {cond!r}",
                node,
                "compare tensors to get a mask, or pass a True/False constant",
            )
        for v in (a, b):
            self.check_arith(v, node, "where()")
        if not (isinstance(a, SymbolicTensor) or isinstance(b, SymbolicTensor)):
            return a if cond else b
        shape = self.result_shape([a, b], node)
        chosen = a if cond else b
        dtype = self.promote([a, b])
        if not isinstance(chosen, SymbolicTensor):
            return SymbolicTensor(self.constant(float(chosen), shape, node), dtype, shape)
        return SymbolicTensor(self.broadcast(chosen.value, shape, node), dtype, shape)

    # ------------------------------------------------------------------ composites

    def softmax(self, x: Any, dim: Any, log: bool, node: ast.AST) -> Any:
        """Softmax (``log=False``) or log-softmax along ``dim``, max-subtracted."""
        x = self.need_tensor(x, "log_softmax()" if log else "softmax()", node)
        shifted = self.binary("sub", x, self.reduce("max", x, dim, True, 0, node), node)
        e = self.unary("exp", shifted, node)
        total = self.reduce("sum", e, dim, True, 0, node)
        if log:
            return self.binary("sub", shifted, self.unary("log", total, node), node)
        return self.binary("div", e, total, node)

    def norm_dims(self, x: Any, normalized_shape: Any, what: str, node: ast.AST) -> tuple[int, ...]:
        """The trailing dims ``normalized_shape`` (an int or a tuple) names, checked."""
        x = self.need_tensor(x, f"{what}()", node)
        ns = (normalized_shape,) if is_int(normalized_shape) else normalized_shape
        if not isinstance(ns, tuple | list) or not ns or not all(is_int(d) for d in ns):
            self.error(
                f"{what}() normalized_shape must be an int or a tuple of ints, got "
                f"{normalized_shape!r}",
                node,
                "e.g. x.shape[-1:] or (hidden,)",
            )
        k = len(ns)
        if k > x.ndim or tuple(int(d) for d in ns) != x.shape[x.ndim - k :]:
            self.error(
                f"{what}() normalized_shape {list(ns)} is not the trailing shape of "
                f"{list(x.shape)}",
                node,
                "normalized_shape names the last dims of x, e.g. x.shape[-1:]",
            )
        return tuple(range(x.ndim - k, x.ndim))

    def affine(self, y: Any, weight: Any, bias: Any, dims: tuple[int, ...], node: ast.AST) -> Any:
        """``y * weight + bias`` (each optional) with shapes checked against ``dims``."""
        want = tuple(y.shape[d] for d in dims)
        for name, p in (("weight", weight), ("bias", bias)):
            if p is None:
                continue
            t = self.need_tensor(p, f"the {name} of a norm", node)
            if t.shape != want:
                self.error(
                    f"{name} has shape {list(t.shape)}, expected normalized_shape {list(want)}",
                    node,
                    MATCH_HINT,
                )
            y = self.binary("mul" if name == "weight" else "add", y, t, node)
        return y

    def layer_norm(
        self, x: Any, shape: Any, weight: Any, bias: Any, eps: Any, node: ast.AST
    ) -> Any:
        """``(x - mean) * rsqrt(mean((x - mean)**2) + eps) * weight + bias``."""
        dims = self.norm_dims(x, shape, "layer_norm", node)
        eps = self.eps_value(eps, x, node)
        d = self.binary("sub", x, self.reduce("mean", x, dims, True, 0, node), node)
        var = self.reduce("mean", self.binary("mul", d, d, node), dims, True, 0, node)
        y = self.binary(
            "mul", d, self.unary("rsqrt", self.binary("add", var, eps, node), node), node
        )
        return self.affine(y, weight, bias, dims, node)

    def rms_norm(self, x: Any, shape: Any, weight: Any, eps: Any, node: ast.AST) -> Any:
        """``x * rsqrt(mean(x**2) + eps) * weight``."""
        dims = self.norm_dims(x, shape, "rms_norm", node)
        eps = self.eps_value(eps, x, node)
        ms = self.reduce("mean", self.binary("mul", x, x, node), dims, True, 0, node)
        y = self.binary(
            "mul", x, self.unary("rsqrt", self.binary("add", ms, eps, node), node), node
        )
        return self.affine(y, weight, None, dims, node)

    def eps_value(self, eps: Any, x: SymbolicTensor, node: ast.AST) -> float:
        """``eps`` as a float; ``None`` is ``finfo(x.dtype).eps`` (PyTorch's rms_norm)."""
        if eps is None:
            return float(ml_dtypes.finfo(np.dtype(x.dtype)).eps)
        if not is_number(eps) or isinstance(eps, bool):
            self.error(f"eps must be a compile-time number, got {eps!r}", node, "e.g. eps=1e-5")
        return float(eps)

    def gelu(self, x: Any, approximate: Any, node: ast.AST) -> Any:
        """GELU, exact (``0.5 x (1 + erf(x / sqrt 2))``: the composite ``asc.unary "gelu"``)
        or tanh-approximated; the tanh form
        as ``x / (1 + exp(-2 u))``, ``u = sqrt(2/pi) x (1 + 0.044715 x^2)`` (the identity
        ``(1 + tanh u) / 2 = 1 / (1 + exp(-2u))``): 8 vector ops instead of ``tanh``'s
        two-branch decomposition, and no cancellation in ``1 + tanh u`` for ``x << 0``."""
        x = self.need_tensor(x, "gelu()", node)
        if approximate == "tanh":
            q = self.binary("mul", self.binary("mul", x, x, node), GELU_TANH_COEFF, node)
            u = self.binary("mul", x, self.binary("add", q, 1.0, node), node)
            e = self.unary("exp", self.binary("mul", u, -2.0 * SQRT_2_OVER_PI, node), node)
            return self.binary("div", x, self.binary("add", e, 1.0, node), node)
        if approximate == "none":  # one branch, see opset_numerics.decompose_gelu
            return self.unary("gelu", x, node)
        self.error(
            f"gelu() approximate must be 'none' or 'tanh', got {approximate!r}",
            node,
            "approximate='none' (erf, BERT) or approximate='tanh' (GPT-2)",
        )

    def silu(self, x: Any, node: ast.AST) -> Any:
        """``x * sigmoid(x)``."""
        x = self.need_tensor(x, "silu()", node)
        return self.binary("mul", x, self.unary("sigmoid", x, node), node)

    # ------------------------------------------------------------------ shape checks

    def match_dims(self, x: Any, other: Any, dim: Any, node: ast.AST) -> ShapeMatch:
        """``match_shape(x, other, dim=...)``: ``other`` is ``x``'s shape without ``dim`` (or
        with size 1 there); without ``dim``, the same shape."""
        self.note_shape_read(node)
        x = self.need_tensor(x, "match_shape()", node)
        other = self.need_tensor(other, "match_shape()", node)
        k = None if dim is None else self.dim_arg(dim, x, node)
        if k is None:
            ok = other.shape == x.shape
            want = f"{list(x.shape)}"
        else:
            without = x.shape[:k] + x.shape[k + 1 :]
            keep = x.shape[:k] + (1,) + x.shape[k + 1 :]
            ok = other.shape in (without, keep)
            want = f"{list(without)} or {list(keep)} (x's shape without dim {k})"
        if not ok:
            self.error(
                f"match_shape(): shape {list(other.shape)} does not match x's shape "
                f"{list(x.shape)}: expected {want}",
                node,
                MATCH_HINT,
            )
        return ShapeMatch(x.shape, k, other.shape)
