"""PyTorch spellings of the tensor operations, for use inside a compiled operator.

Like :mod:`pyasc_mlir.ops`, these are *markers*: the AST frontend recognises them by identity
and builds ``asc`` IR; called outside a compiled operator each raises
:class:`pyasc_mlir.ops.OutsideOperatorError`. Every function follows the PyTorch function of
the same name (``torch.add``, ``torch.nn.functional.softmax``, ...) on float16/float32
tensors of static shape, computed in float32 ("opmath") and rounded once to the result dtype
(float16 when every tensor operand is float16). Dims are compile-time ints (negative counts
from the end); shapes are checked at compile time, and a wrong one is a located
:class:`pyasc_mlir.PyAscCompileError` naming the shapes.

Composites (``softmax``, ``log_softmax``, ``layer_norm``, ``rms_norm``, ``gelu``, ``silu``)
expand into the op table's kinds (``exp``, ``erf``, ``tanh``, ``sigmoid``, ``rsqrt``, the
``max``/``sum``/``mean`` reductions); ``asc-decompose`` lowers the transcendental and
mean/var composites, and the whole expression fuses into one kernel like a hand-written one.

Also :data:`Tuple` (with ``pa.Tensor``, the device tensor) for annotations:
``def f(xs: pa.Tuple[pa.Tensor, ...], w: pa.Tensor) -> pa.Tensor``. Annotations are
documentation only; the frontend does not read them.
"""

from __future__ import annotations

import typing
from typing import Any, NoReturn

__all__ = [
    "Tuple",
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "neg",
    "clamp",
    "clip",
    "amax",
    "amin",
    "cat",
    "permute",
    "reshape",
    "unsqueeze",
    "squeeze",
    "flatten",
    "chunk",
    "split",
    "zeros_like",
    "ones_like",
    "full_like",
    "softmax",
    "log_softmax",
    "layer_norm",
    "rms_norm",
    "gelu",
    "silu",
    "scaled_dot_product_attention",
]

TORCH_FUNCTIONS: tuple[str, ...] = tuple(n for n in __all__ if n != "Tuple")
"""The marker functions of this module (the frontend's table of spellings reads it)."""


Tuple = typing.Tuple  # noqa: UP006 -- the spelling ``pa.Tuple[pa.Tensor, ...]``
"""``typing.Tuple``, for annotations such as ``xs: pa.Tuple[pa.Tensor, ...]`` (a tuple or list
of tensors passed as one argument). ``pa.Tensor`` is the device tensor (``pyasc_mlir.device``);
the frontend does not read annotations, so it serves as the annotation of a tensor parameter."""


def _outside(name: str) -> NoReturn:
    from pyasc_mlir.ops import OutsideOperatorError

    raise OutsideOperatorError(
        f"pyasc_mlir.{name}() can only be used inside an operator compiled by pyasc_mlir "
        "(a @pyasc_mlir.jit function or an Op's forward); it does not compute on Python or "
        "NumPy values. For NumPy arrays use the numpy function of the same purpose."
    )


# ------------------------------------------------------------------ arithmetic


def add(a: Any, b: Any, alpha: Any = 1) -> Any:
    """``a + alpha * b`` (``torch.add``); tensors or Python numbers, NumPy broadcasting."""
    _outside("add")


def sub(a: Any, b: Any, alpha: Any = 1) -> Any:
    """``a - alpha * b`` (``torch.sub``)."""
    _outside("sub")


def mul(a: Any, b: Any) -> Any:
    """``a * b`` (``torch.mul``)."""
    _outside("mul")


def div(a: Any, b: Any, rounding_mode: Any = None) -> Any:
    """``a / b`` (``torch.div``); ``rounding_mode`` other than ``None`` is a compile error
    (no floor/trunc division on the vector unit here)."""
    _outside("div")


def pow(x: Any, exponent: Any) -> Any:
    """``x ** exponent`` (``torch.pow``) for the constant exponents ``x ** e`` supports
    (1, 2, 3, 0.5, -1, -0.5)."""
    _outside("pow")


def neg(x: Any) -> Any:
    """``-x`` (``torch.neg``): the sign flipped, ``neg(0.0) = -0.0``."""
    _outside("neg")


def clamp(x: Any, min: Any = None, max: Any = None) -> Any:
    """``minimum(maximum(x, min), max)`` (``torch.clamp``); ``min``/``max`` are numbers or
    tensors, at least one given; a NaN in ``x`` stays NaN; ``min > max`` gives ``max``."""
    _outside("clamp")


def clip(x: Any, min: Any = None, max: Any = None) -> Any:
    """Alias of :func:`clamp` (``torch.clip``)."""
    _outside("clip")


def amax(
    x: Any, dim: Any = None, keepdim: bool = False, *, axis: Any = None, keepdims: Any = None
) -> Any:
    """The maximum over ``dim`` (``torch.amax``): an int, a tuple of ints or ``None`` (all)."""
    _outside("amax")


def amin(
    x: Any, dim: Any = None, keepdim: bool = False, *, axis: Any = None, keepdims: Any = None
) -> Any:
    """The minimum over ``dim`` (``torch.amin``)."""
    _outside("amin")


# ------------------------------------------------------------------ layout


def cat(tensors: Any, dim: Any = None, *, axis: Any = None) -> Any:
    """Alias of :func:`pyasc_mlir.concat` (``torch.cat``): join along ``dim`` (default 0)."""
    _outside("cat")


def permute(x: Any, dims: Any) -> Any:
    """``x`` with its dims in the order ``dims`` (``torch.permute``)."""
    _outside("permute")


def reshape(x: Any, shape: Any) -> Any:
    """``x`` with the shape ``shape`` (``torch.reshape``; at most one -1, inferred)."""
    _outside("reshape")


def unsqueeze(x: Any, dim: Any) -> Any:
    """``x`` with a dim of size 1 inserted at ``dim`` (``-x.ndim - 1 <= dim <= x.ndim``)."""
    _outside("unsqueeze")


def squeeze(x: Any, dim: Any = None) -> Any:
    """``x`` without its dims of size 1 (``dim=None``), or without ``dim`` (an int or a tuple)
    where that dim has size 1 (a dim of another size is kept, as in PyTorch)."""
    _outside("squeeze")


def flatten(x: Any, start_dim: Any = 0, end_dim: Any = -1) -> Any:
    """``x`` with dims ``start_dim..end_dim`` merged into one (``torch.flatten``)."""
    _outside("flatten")


def chunk(x: Any, chunks: Any, dim: Any = 0) -> Any:
    """A tuple of ``ceil(n / ceil(n / chunks))`` slices of ``dim`` (size ``n``), each of
    ``ceil(n / chunks)`` elements but the last (``torch.chunk``)."""
    _outside("chunk")


def split(x: Any, split_size_or_sections: Any, dim: Any = 0) -> Any:
    """A tuple of slices of ``dim`` (``torch.split``): of ``split_size_or_sections`` elements
    each (an int; the last may be smaller), or of the listed sizes (summing to the dim)."""
    _outside("split")


# ------------------------------------------------------------------ constants


def zeros_like(x: Any, dtype: Any = None) -> Any:
    """A tensor of 0.0 with ``x``'s shape and dtype (or ``dtype``)."""
    _outside("zeros_like")


def ones_like(x: Any, dtype: Any = None) -> Any:
    """A tensor of 1.0 with ``x``'s shape and dtype (or ``dtype``)."""
    _outside("ones_like")


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Any:
    """A tensor of ``fill_value`` (a compile-time number) with ``x``'s shape and dtype."""
    _outside("full_like")


# ------------------------------------------------------------------ composites


def softmax(x: Any, dim: Any = -1) -> Any:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim`` (``torch.softmax``, max-subtracted,
    so no overflow); one fused kernel."""
    _outside("softmax")


def log_softmax(x: Any, dim: Any = -1) -> Any:
    """``(x - max) - log(sum(exp(x - max)))`` along ``dim`` (``torch.log_softmax``)."""
    _outside("log_softmax")


def layer_norm(
    x: Any, normalized_shape: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5
) -> Any:
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the trailing dims
    ``normalized_shape`` (an int or a tuple; ``torch.nn.functional.layer_norm``): population
    variance of ``x - mean`` (two passes); ``weight``/``bias`` of shape ``normalized_shape``
    or ``None``."""
    _outside("layer_norm")


def rms_norm(x: Any, normalized_shape: Any, weight: Any = None, eps: Any = None) -> Any:
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing dims ``normalized_shape``
    (``torch.nn.functional.rms_norm``); ``eps=None`` is ``finfo(x.dtype).eps`` (9.77e-4 for
    float16, 1.19e-7 for float32), as in PyTorch."""
    _outside("rms_norm")


def gelu(x: Any, approximate: str = "none") -> Any:
    """GELU (``torch.nn.functional.gelu``): ``approximate="none"`` is
    ``0.5 * x * (1 + erf(x / sqrt(2)))``, ``"tanh"`` is
    ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))`` (Hendrycks & Gimpel 2016),
    any shape, float16/bfloat16/float32 (computed in float32). Evaluated as ``x Phi(x)`` in one
    branch and as ``x / (1 + exp(-2u))``; accuracy in docs/DESIGN.md, Numerics (fp16
    correctly rounded; fp32 within 11 / 47 ulp for ``x >= -5``). Raises
    :class:`pyasc_mlir.PyAscCompileError` for another ``approximate``."""
    _outside("gelu")


def silu(x: Any) -> Any:
    """``x * sigmoid(x)`` (``torch.nn.functional.silu``, also called swish)."""
    _outside("silu")


def scaled_dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: Any = None,
    enable_gqa: bool = False,
) -> Any:
    """``softmax(query @ key^T * scale + mask) @ value``
    (``torch.nn.functional.scaled_dot_product_attention``), ONE fused Cube + vector kernel.

    Shapes: ``query [*b, L, E]``, ``key [*b, S, E]``, ``value [*b, S, Ev]`` (one rank >= 2,
    one float dtype; ``enable_gqa=True``: ``key``/``value`` may have ``Hq / Hkv`` times fewer
    heads on dim -3, each serving consecutive query heads); result ``[*b, L, Ev]`` in
    ``query``'s dtype (computed in float32). ``scale`` defaults to ``1 / sqrt(E)``.
    ``attn_mask``: boolean (True = the key takes part) or float (added to the scores),
    broadcastable to ``[*b, L, S]``. ``is_causal=True``: key ``j`` is masked out of query row
    ``i`` where ``j > i`` (top-left aligned, also for ``L != S``), and the kernel skips the key
    blocks entirely right of the diagonal.

    Raises (located ``PyAscCompileError``): ``dropout_p != 0``; ``is_causal`` with an
    ``attn_mask`` (as torch); shapes that do not form attention."""
    _outside("scaled_dot_product_attention")
