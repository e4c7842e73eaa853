"""Tensor operations for use inside a compiled operator.

These are *markers*: the AST frontend (``pyasc_mlir.frontend.ast_frontend``) recognises calls
to them (by identity, however they were imported: ``pa.exp(x)``, ``from pyasc_mlir import exp``)
and turns them into ``asc`` tensor-level IR. Called directly from Python, outside a compiled
operator, each raises :class:`OutsideOperatorError`.

Semantics (all elementwise ops follow NumPy broadcasting; arithmetic is computed in float32
whatever the input dtypes, "opmath"; a result is float16 when every tensor operand is float16):

- Elementwise unary functions ``exp(x)``, ``log(x)``, ``sigmoid(x)``, ... and binary
  ``maximum(a, b)``, ``minimum(a, b)`` (tensors or Python numbers): one per record of the op
  table (``pyasc_mlir.dialects.opset``) with a ``pyasc_mlir`` spelling, listed in
  :data:`ELEMENTWISE`; each function's docstring says what it computes.
- ``where(cond, a, b)``: ``a`` where the boolean mask ``cond`` holds, else ``b``.
- ``cast(x, dtype)``: convert to ``float16`` (rounds to nearest even) or ``float32``; a mask
  becomes 1.0/0.0.
- ``sum mean max min(x, dim=None, keepdim=False)``, ``var(x, dim=None, keepdim=False,
  unbiased=None)``: reductions over an int dim, a tuple of dims or all dims (``None``);
  ``axis=``/``keepdims=`` are accepted too (see each function).
- PyTorch's spellings (``add``, ``clamp``, ``unsqueeze``, ``softmax``, ``layer_norm``, ...)
  are in :mod:`pyasc_mlir.ops_torch`, re-exported here.

Matrix products and layout (static shapes, checked at compile time):

- ``matmul(a, b, transpose_a=False, transpose_b=False)`` (also ``a @ b``): last two dims
  multiply, leading batch dims broadcast; f16 or f32 operands, f32 accumulation.
- ``transpose(x, dims=None)`` (also ``x.transpose(d0, d1)``, ``x.permute(*dims)``, ``x.T``),
  ``concat(tensors, axis=0)``, indexing ``x[1:5, ..., 3]`` with constant bounds, step 1.
- Shape helpers: ``match_shape(x, pattern)``, ``assert_same_rank(*tensors)``,
  ``assert_compatible(tensors, exclude_dim=None)``.

Also the dtype constants :data:`float16`, :data:`bfloat16` and :data:`float32`.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from pyasc_mlir.dialects import opset
from pyasc_mlir.errors import PyAscUsageError
from pyasc_mlir.ops_torch import *  # noqa: F403
from pyasc_mlir.ops_torch import __all__ as _torch_all

__all__ = [
    "DType",
    "OutsideOperatorError",
    "float16",
    "bfloat16",
    "float32",
    "bool_",
    *opset.elementwise_functions(),
    "where",
    "cast",
    "sum",
    "mean",
    "max",
    "min",
    "var",
    "matmul",
    "transpose",
    "concat",
    "match_shape",
    "assert_same_rank",
    "assert_compatible",
    *_torch_all,
]


class OutsideOperatorError(PyAscUsageError):
    """A ``pyasc_mlir`` tensor function was called outside a compiled operator."""


class DType:
    """A tensor dtype constant (``float16``, ``bfloat16``, ``float32``; ``bool`` for masks).

    Compares equal to the same dtype spelled as a string (``"float16"``, ``"fp16"``), a NumPy
    type or ``np.dtype``; ``np.dtype(pyasc_mlir.float16)`` works.
    """

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype (``ml_dtypes.bfloat16`` for bfloat16)."""
        from pyasc_mlir.types import DTYPES

        return DTYPES.get(self.name) or np.dtype(self.name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return other.name == self.name
        if other is None:
            return False
        from pyasc_mlir.types import dtype_name

        try:
            return dtype_name(other) == self.name
        except TypeError:
            return self.name == "bool" and other in (bool, np.bool_, "bool")

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"pyasc_mlir.{self.name if self.name != 'bool' else 'bool_'}"

    __str__ = __repr__


float16 = DType("float16")
"""Half precision (IEEE binary16)."""
float32 = DType("float32")
"""Single precision (IEEE binary32)."""
bfloat16 = DType("bfloat16")
"""Brain float: 8 exponent bits as float32, 7 mantissa bits (NumPy: ``ml_dtypes.bfloat16``);
computed in float32 inside an operator and rounded once, as float16 is."""
bool_ = DType("bool")
"""The dtype of masks (results of comparisons)."""


def _outside(name: str) -> NoReturn:
    raise OutsideOperatorError(
        f"pyasc_mlir.{name}() can only be used inside an operator compiled by pyasc_mlir "
        "(a @pyasc_mlir.jit function or an Op's forward) or on device tensors (pa.Tensor: "
        "pa.from_numpy(x)); it does not compute on Python or NumPy values. For NumPy arrays "
        "use the numpy function of the same purpose."
    )


def _elementwise_marker(record: opset.OpRecord) -> Callable[..., Any]:
    """The marker ``pyasc_mlir.<record.function>``: a function of ``(x)`` (unary) or ``(a, b)``
    (binary) with the record's docstring, raising :class:`OutsideOperatorError` when called
    (the frontend recognises it by identity)."""
    name = record.function
    assert name is not None
    marker: Callable[..., Any]
    if record.arity == 1:

        def unary(x: Any) -> Any:
            _outside(name)

        marker = unary
    else:

        def binary(a: Any, b: Any) -> Any:
            _outside(name)

        marker = binary
    marker.__name__ = marker.__qualname__ = name
    marker.__doc__ = record.doc
    marker.__module__ = __name__
    return marker


ELEMENTWISE: tuple[str, ...] = tuple(opset.elementwise_functions())
"""The elementwise functions (``exp`` ... ``cos``, ``maximum``, ``minimum``): one marker per
op-table record with a ``pyasc_mlir`` spelling, unary then binary."""
globals().update({n: _elementwise_marker(r) for n, r in opset.elementwise_functions().items()})


def where(cond: Any, a: Any, b: Any) -> Any:
    """``a`` where the mask ``cond`` is true, else ``b``; all three broadcast together, and
    ``a``/``b`` may be Python numbers. ``cond`` may also be a compile-time value (a bool or a
    number, e.g. an operator's ``apply: bool`` parameter): the result is then ``a`` or ``b``
    broadcast to the shape of both, in their common dtype (``torch.where`` with a 0-d
    condition), and the other branch is not computed."""
    _outside("where")


def cast(x: Any, dtype: Any) -> Any:
    """Convert ``x`` to ``dtype`` (``float16`` or ``float32``); a mask gives 1.0 / 0.0."""
    _outside("cast")


def sum(
    x: Any, dim: Any = None, keepdim: bool = False, *, axis: Any = None, keepdims: Any = None
) -> Any:
    """Sum over ``dim`` (an int, a tuple of ints, or ``None`` for all dims). ``axis=`` and
    ``keepdims=`` (NumPy's spellings) are the same as ``dim=`` and ``keepdim=``."""
    _outside("sum")


def mean(
    x: Any, dim: Any = None, keepdim: bool = False, *, axis: Any = None, keepdims: Any = None
) -> Any:
    """Arithmetic mean over ``dim`` (or ``axis``)."""
    _outside("mean")


def max(
    x: Any, dim: Any = None, keepdim: bool = False, *, axis: Any = None, keepdims: Any = None
) -> Any:
    """Maximum over ``dim`` (for the elementwise maximum use :func:`maximum`).

    With the keyword ``dim=`` the result is PyTorch's pair ``(values, indices)``, so
    ``x.max(dim=-1).values``, ``x.max(dim=-1)[0]`` and ``v, _ = x.max(dim=-1)`` work; the
    indices are not computed (using them is a compile error). Positional or ``axis=`` gives the
    values tensor itself (NumPy's ``max``), as does :func:`amax`.
    """
    _outside("max")


def min(
    x: Any, dim: Any = None, keepdim: bool = False, *, axis: Any = None, keepdims: Any = None
) -> Any:
    """Minimum over ``dim`` (for the elementwise minimum use :func:`minimum`); the keyword
    ``dim=`` gives ``(values, indices)`` as :func:`max` does."""
    _outside("min")


def var(
    x: Any,
    dim: Any = None,
    keepdim: bool = False,
    unbiased: Any = None,
    *,
    axis: Any = None,
    keepdims: Any = None,
    correction: Any = None,
    ddof: Any = None,
) -> Any:
    """Variance over ``dim``: divisor ``N - correction``, ``correction`` 0 or 1 (also spelled
    ``unbiased=True/False`` or NumPy's ``ddof=``).

    The default follows the spelling of the dim: PyTorch's ``dim=`` keyword means the
    unbiased variance (``N - 1``, as ``torch.var``); ``axis=`` (NumPy's ``var``), a positional
    dim or none at all means ``N``.
    """
    _outside("var")


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False) -> Any:
    """Matrix product ``a @ b`` on the Cube unit.

    ``a`` is ``[*batch, M, K]`` (``[*batch, K, M]`` with ``transpose_a``), ``b`` is
    ``[*batch, K, N]`` (``[*batch, N, K]`` with ``transpose_b``); batch dims broadcast
    (NumPy rules); the result is ``[*batch, M, N]``. Operands are float16 or float32 (ranks
    >= 2); products accumulate in float32. The result is float16 when both operands are
    float16, else float32.

    Raises (at compile time, located): ranks below 2, K mismatch or non-broadcasting batch dims
    (the message names both shapes), boolean masks as operands.
    """
    _outside("matmul")


def transpose(x: Any, dim0: Any = None, dim1: Any = None, *, dims: Any = None) -> Any:
    """Permute the dims of ``x``: ``transpose(x, d0, d1)`` swaps two dims (``torch.transpose``);
    ``transpose(x, perm)`` or ``dims=perm`` gives ``result.shape[i] = x.shape[perm[i]]``
    (``np.transpose``); no dims reverses them. ``x.transpose(d0, d1)`` swaps two dims (torch
    semantics), ``x.permute(*dims)`` permutes, ``x.T`` transposes a 2-D tensor.

    Raises (at compile time, located): ``dims`` not a permutation of ``0..x.ndim-1``.
    """
    _outside("transpose")


def concat(tensors: Any, dim: Any = None, *, axis: Any = None) -> Any:
    """Join a list or tuple of tensors along ``dim`` or ``axis`` (default 0; ``np.concatenate``,
    ``torch.cat``): same rank, equal dims except that one. The result is float16 when every
    input is float16, else float32.

    Raises (at compile time, located): an empty list, rank or dim mismatches (the message names
    the shapes), an axis out of range.
    """
    _outside("concat")


def match_shape(x: Any, pattern: Any, dim: Any = None) -> Any:
    """Check ``x.shape`` at compile time and return its dims.

    * ``match_shape(x, pattern)``: ``pattern`` is a tuple of ints and ``None`` (``None`` = any
      size); returns the tuple of ``x``'s dims, so ``B, S, H = match_shape(x, (None, None,
      384))`` works.
    * ``match_shape(x, other, dim=d)`` with a tensor ``other``: ``other`` must have ``x``'s
      shape without dim ``d`` (rank ``x.ndim - 1``, e.g. a ``[B, S]`` mask of an ``[B, S, H]``
      ``x`` with ``dim=-1``) or with size 1 there (same rank). Without ``dim`` the shapes must
      be equal. Returns a :class:`pyasc_mlir.frontend.values.ShapeMatch`: a tuple of ``x``'s
      dims (``B, S, H = m``, ``m[0]``) that can also be indexed by name: ``m["target_dim"]``
      (``d`` as a non-negative int, ``None`` without ``dim``), ``m["target_size"]``
      (``x.shape[d]``), ``m["shape"]`` (``x``'s shape) and ``m["other_shape"]``; the same
      names are attributes (``m.target_dim``). ``other.unsqueeze(m["target_dim"])`` then
      broadcasts against ``x``.

    Raises (at compile time, located): a rank or dim mismatch, naming the shapes (and the
    pattern).
    """
    _outside("match_shape")


def assert_same_rank(*tensors: Any) -> Any:
    """Check at compile time that every tensor has the same rank; returns ``None``.

    Raises (at compile time, located): ranks differ (the message names every shape).
    """
    _outside("assert_same_rank")


def assert_compatible(tensors: Any, exclude_dim: Any = None) -> Any:
    """Check at compile time that a list or tuple of tensors has one rank and equal dims except
    ``exclude_dim`` (an int, negative counts from the end; ``None``: all dims); returns
    ``None``. ``assert_compatible(xs, exclude_dim=k)`` is what ``concat(xs, axis=k)`` needs.

    Raises (at compile time, located): a rank or dim mismatch (the message names the shapes).
    """
    _outside("assert_compatible")


def _eager_marker(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a marker) that runs eagerly when a device tensor (``pa.Tensor``) is among its
    arguments (:func:`pyasc_mlir.eager.call_function`) and raises
    :class:`OutsideOperatorError` otherwise, as before. The frontend knows the wrapper (it is
    the module attribute), so identity checks still hold."""

    @functools.wraps(fn)
    def marker(*args: Any, **kwargs: Any) -> Any:
        from pyasc_mlir.device import has_tensor

        if has_tensor(args) or has_tensor(kwargs.values()):
            from pyasc_mlir.eager import call_function

            return call_function(fn.__name__, args, kwargs)
        return fn(*args, **kwargs)

    return marker


def _is_marker(value: Any) -> bool:
    return isinstance(value, types.FunctionType) and "_outside" in value.__code__.co_names


# Every marker defined above (elementwise, reductions, layout, shape helpers and any added
# later) becomes eager on device tensors.
globals().update({n: _eager_marker(globals()[n]) for n in __all__ if _is_marker(globals()[n])})
