"""Dispatch of PyTorch's spellings: the ``pyasc_mlir.ops_torch`` functions, the tensor
methods without a function of their own (``x.view``, ``x.float()``, ``x.size()``), and the
``dim=``/``axis=``, ``keepdim=``/``keepdims=`` keyword pairs of the reductions and layout ops.

:class:`TorchCalls` turns the bound arguments of a call into
:class:`~pyasc_mlir.frontend.semantic_torch.TorchSemantic` calls.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from typing import Any

from xdsl.dialects.builtin import StringAttr

from pyasc_mlir.dialects import asc
from pyasc_mlir.frontend.context import Component, FrontendContext
from pyasc_mlir.frontend.semantic_attention import scaled_dot_product_attention
from pyasc_mlir.frontend.semantic_torch import TorchSemantic
from pyasc_mlir.frontend.values import (
    MinMax,
    NotComputedIndices,
    SymbolicTensor,
    contains_tensor,
    is_int,
)

__all__ = ["TorchCalls"]


def _dims(args: list[Any]) -> Any:
    """``x.f(d0, d1)`` or ``x.f((d0, d1))``: a lone tuple or list argument, else the args."""
    return args[0] if len(args) == 1 and isinstance(args[0], tuple | list) else list(args)


class TorchCalls(Component):
    """PyTorch's spellings for the dispatcher."""

    def __init__(self, ctx: FrontendContext, sem: TorchSemantic) -> None:
        super().__init__(ctx)
        self.sem = sem

    def pick(self, a: Mapping[str, Any], name: str, alias: str, default: Any, node: ast.AST) -> Any:
        """The value of keyword ``name`` or its other spelling ``alias`` (both default to
        ``None`` in the marker); both given is an error."""
        v, w = a.get(name), a.get(alias)
        if v is not None and w is not None:
            self.error(
                f"both {name}= and {alias}= given",
                node,
                f"{name}= and {alias}= are two spellings of one argument; pass one",
            )
        if v is None:
            v = w
        return default if v is None else v

    def reduction(
        self, name: str, a: Mapping[str, Any], kwargs: Mapping[str, Any], node: ast.AST
    ) -> Any:
        """``sum``/``mean``/``max``/``min``/``var``/``amax``/``amin`` with either spelling."""
        dim = self.pick(a, "dim", "axis", None, node)
        keepdim = a.get("keepdim") or False
        if a.get("keepdims") is not None:
            if keepdim is not False:
                self.error(
                    "both keepdim= and keepdims= given",
                    node,
                    "keepdim= and keepdims= are two spellings of one argument; pass one",
                )
            keepdim = a["keepdims"]
        if contains_tensor(keepdim) or not isinstance(keepdim, bool | int):
            self.error(
                f"keepdim must be a compile-time bool, got {keepdim!r}",
                node,
                "pass keepdim=True or keepdim=False",
            )
        kind = {"amax": "max", "amin": "min"}.get(name, name)
        correction = self.correction(a, "dim" in kwargs, node) if name == "var" else 0
        r = self.sem.reduce(kind, a["x"], dim, keepdim, correction, node)
        if name in ("max", "min") and "dim" in kwargs:
            owner = r.value.owner if isinstance(r, SymbolicTensor) else None
            if isinstance(owner, asc.ReduceOp):
                owner.attributes[asc.TORCH_PICK_ATTR] = StringAttr(f"x.{name}(dim=).values")
            return MinMax(r, NotComputedIndices())
        return r

    def correction(self, a: Mapping[str, Any], torch_dim: bool, node: ast.AST) -> int:
        """var's divisor correction from ``unbiased``, ``correction`` or ``ddof`` (one of
        them); by default 1 for the ``dim=`` keyword (torch.var), else 0 (NumPy)."""
        given = {k: a[k] for k in ("unbiased", "correction", "ddof") if a.get(k) is not None}
        if len(given) > 1:
            self.error(
                f"var(): {' and '.join(k + '=' for k in given)} given",
                node,
                "unbiased=, correction= and ddof= say the same thing; pass one",
            )
        if not given:
            return 1 if torch_dim else 0
        ((key, v),) = given.items()
        if key == "unbiased" and isinstance(v, bool):
            return int(v)
        if key != "unbiased" and is_int(v) and int(v) in (0, 1):
            return int(v)
        self.error(
            f"var(): {key}={v!r} is not supported",
            node,
            "pass unbiased=True/False, or correction= (ddof=) 0 or 1, as constants",
        )

    def transpose(self, a: Mapping[str, Any], node: ast.AST) -> Any:
        """``transpose(x, d0, d1)`` (swap), ``transpose(x, perm)`` / ``dims=perm``, or
        ``transpose(x)`` (reverse)."""
        x = self.sem.need_tensor(a["x"], "transpose()", node)
        d0, d1, dims = a["dim0"], a["dim1"], a["dims"]
        if dims is None and isinstance(d0, tuple | list) and d1 is None:
            dims = d0
        elif d0 is not None or d1 is not None:
            if dims is not None or not (is_int(d0) and is_int(d1)):
                self.error(
                    f"transpose(x, dim0, dim1) swaps two dims given as compile-time ints, "
                    f"got {d0!r}, {d1!r}",
                    node,
                    "pass two ints, or a full permutation as transpose(x, (1, 0)) / permute",
                )
            perm = list(range(x.ndim))
            i, j = self.sem.norm_axis(d0, x, node), self.sem.norm_axis(d1, x, node)
            perm[i], perm[j] = perm[j], perm[i]
            dims = perm
        if dims is None:
            dims = tuple(reversed(range(x.ndim)))
        return self.sem.transpose(x, dims, node)

    def call(self, name: str, a: Mapping[str, Any], node: ast.AST) -> Any:
        """``pyasc_mlir.<name>(**a)`` for an ``ops_torch`` function."""
        s = self.sem
        if name in ("add", "sub"):
            b = a["b"] if a["alpha"] == 1 else s.binary("mul", a["b"], a["alpha"], node)
            return s.binary(name, a["a"], b, node)
        if name in ("mul", "div"):
            if name == "div" and a["rounding_mode"] is not None:
                self.error(
                    f"div(rounding_mode={a['rounding_mode']!r}) is not supported",
                    node,
                    "only true division (rounding_mode=None) is supported",
                )
            return s.binary(name, a["a"], a["b"], node)
        if name == "pow":
            return s.power(a["x"], a["exponent"], node)
        if name == "neg":
            return s.unary("neg", a["x"], node)
        if name in ("clamp", "clip"):
            return s.clamp(a["x"], a["min"], a["max"], node)
        if name in ("amax", "amin"):
            return self.reduction(name, a, {}, node)
        if name == "cat":
            return s.concat(a["tensors"], self.pick(a, "dim", "axis", 0, node), node)
        if name in ("zeros_like", "ones_like", "full_like"):
            fill = {"zeros_like": 0.0, "ones_like": 1.0}.get(name, a.get("fill_value"))
            return s.like(a["x"], fill, a["dtype"], name, node)
        return self.layout(name, a, node)

    def layout(self, name: str, a: Mapping[str, Any], node: ast.AST) -> Any:
        """The shape functions and composites of ``ops_torch``."""
        s = self.sem
        if name == "permute":
            return s.transpose(a["x"], a["dims"], node)
        if name == "reshape":
            x = s.need_tensor(a["x"], "reshape()", node)
            shape = a["shape"]
            return s.reshape(x, list(shape) if isinstance(shape, tuple | list) else [shape], node)
        if name == "unsqueeze":
            return s.unsqueeze(a["x"], a["dim"], node)
        if name == "squeeze":
            return s.squeeze(a["x"], a["dim"], node)
        if name == "flatten":
            return s.flatten(a["x"], a["start_dim"], a["end_dim"], node)
        if name == "chunk":
            return s.chunk(a["x"], a["chunks"], a["dim"], node)
        if name == "split":
            return s.split(a["x"], a["split_size_or_sections"], a["dim"], node)
        if name in ("softmax", "log_softmax"):
            return s.softmax(a["x"], a["dim"], name == "log_softmax", node)
        if name == "layer_norm":
            return s.layer_norm(
                a["x"], a["normalized_shape"], a["weight"], a["bias"], a["eps"], node
            )
        if name == "rms_norm":
            return s.rms_norm(a["x"], a["normalized_shape"], a["weight"], a["eps"], node)
        if name == "gelu":
            return s.gelu(a["x"], a["approximate"], node)
        if name == "scaled_dot_product_attention":
            return scaled_dot_product_attention(s, a, node)
        assert name == "silu", name
        return s.silu(a["x"], node)

    def method(
        self, name: str, x: SymbolicTensor, args: list[Any], kwargs: dict[str, Any], node: ast.AST
    ) -> Any:
        """``x.<name>(...)`` for the methods without a function (``TORCH_METHODS``)."""
        s = self.sem
        if name in ("float", "half"):
            self.no_arguments(name, args, kwargs, node)
            return s.cast(x, "float32" if name == "float" else "float16", node)
        if name == "to":
            return s.to(x, args, kwargs, node)
        if name in ("dim", "numel"):
            self.no_arguments(name, args, kwargs, node)
            if name == "dim":
                return x.ndim
            self.note_shape_read(node)
            return math.prod(x.shape)
        if name == "size":
            return self.size(x, args, kwargs, node)
        if name in ("expand_as", "view_as"):
            if kwargs or len(args) != 1 or not isinstance(args[0], SymbolicTensor):
                self.error(f"x.{name}(other) takes one tensor", node, f"e.g. x.{name}(y)")
            shape = list(args[0].shape)
            return s.expand(x, shape, node) if name == "expand_as" else s.reshape(x, shape, node)
        if kwargs:
            self.error(
                f"x.{name}() takes the sizes only, got keywords {sorted(kwargs)}",
                node,
                f"call x.{name}(d0, d1, ...) or x.{name}((d0, d1, ...))",
            )
        if name == "expand":
            return s.expand(x, _dims(args), node)
        assert name == "view", name
        return s.reshape(x, _dims(args), node)

    def size(
        self, x: SymbolicTensor, args: list[Any], kwargs: dict[str, Any], node: ast.AST
    ) -> Any:
        """``x.size()`` (the shape) or ``x.size(d)`` / ``x.size(dim=d)`` (one dim)."""
        self.note_shape_read(node)
        d = kwargs.get("dim", args[0] if args else None)
        if len(args) + len(kwargs) > 1 or set(kwargs) - {"dim"}:
            self.error("x.size() takes at most one dim", node, "x.size() or x.size(-1)")
        if d is None:
            return x.shape
        return x.shape[self.sem.norm_axis(d, x, node)]

    def no_arguments(
        self, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST
    ) -> None:
        """Reject arguments to ``x.<name>()``."""
        if args or kwargs:
            self.error(f"x.{name}() takes no arguments", node, f"call x.{name}()")
