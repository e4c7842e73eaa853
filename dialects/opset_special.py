"""Special-value semantics of max/min/relu and the max/min reductions, in NumPy (one
definition for every interpreter level; the CPU ``kernel_operator.h`` implements the same).

The table (docs/CPU_RUNTIME.md, "Special values"):

* ``maximum(a, b)`` / ``minimum(a, b)`` (and ``Maxs``/``Mins`` with a scalar): NaN when either
  operand is NaN (PyTorch); ``-0 < +0`` (IEEE 754-2019 ``maximum``/``minimum``), so
  ``maximum(-0, +0) = +0`` and ``minimum(-0, +0) = -0`` in either operand order. PyTorch CPU
  agrees on NaN; its sign of a ``+-0`` tie depends on the tensor size (measured with torch
  2.13: the first operand up to 8 elements, the second at 16, a mix at 33 and 513), so the
  order-free IEEE rule is used: the only one a tree reduction reproduces in every order.
* ``relu(x)``: ``+0`` where ``x < 0``, else ``x`` -- NaN stays NaN, ``relu(-0) = -0``
  (PyTorch CPU ``torch.relu``, every size).
* ``abs(x)``: the sign bit cleared (``numpy.abs``; ``abs(-0) = +0``).
* ``max``/``min`` reductions: the elementwise rule folded over the axis (the result does not
  depend on the order): NaN if any element is NaN; a zero maximum is ``+0`` if any element is
  ``+0``, a zero minimum ``-0`` if any element is ``-0``.

Every function works in the dtype it is given (float16/32/64) and takes ``out=`` like a ufunc.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["maximum", "minimum", "reduce_max", "reduce_min", "relu"]

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(_UINT[x.dtype.itemsize])


def _store(r: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    if out is None:
        return r
    out[...] = r
    return out


def _extreme(a: Any, b: Any, is_max: bool, out: np.ndarray | None) -> np.ndarray:
    a = np.asarray(a)
    b = np.asarray(b).astype(a.dtype, copy=False)
    a, b = np.broadcast_arrays(a, b)
    with np.errstate(invalid="ignore"):
        r = np.maximum(a, b) if is_max else np.minimum(a, b)  # NaN propagates
        tie = a == b
    if tie.any():  # +-0 ties: max keeps a sign only if both have it, min if either has
        both = _bits(a) & _bits(b) if is_max else _bits(a) | _bits(b)
        r = np.where(tie, both.view(a.dtype).reshape(a.shape), r)
    return _store(r, out)


def maximum(a: Any, b: Any, out: np.ndarray | None = None) -> np.ndarray:
    """IEEE 754-2019 ``maximum`` of ``a`` and ``b`` (broadcast; ``b`` converted to ``a``'s
    dtype): NaN wins, ``+0 > -0``."""
    return _extreme(a, b, True, out)


def minimum(a: Any, b: Any, out: np.ndarray | None = None) -> np.ndarray:
    """IEEE 754-2019 ``minimum`` of ``a`` and ``b``: NaN wins, ``-0 < +0``."""
    return _extreme(a, b, False, out)


def relu(x: Any, out: np.ndarray | None = None) -> np.ndarray:
    """``+0`` where ``x < 0``, else ``x`` (NaN and ``-0`` pass through)."""
    x = np.asarray(x)
    with np.errstate(invalid="ignore"):
        r = np.where(x < 0, np.zeros((), x.dtype), x)
    return _store(r, out)


def _reduce(x: Any, is_max: bool, axis: Any, keepdims: bool) -> Any:
    x = np.asarray(x)
    with np.errstate(invalid="ignore"):
        r = (np.max if is_max else np.min)(x, axis=axis, keepdims=keepdims)
        zero = x == 0
    signed = np.signbit(x)
    # a zero max is +0 iff some element is +0; a zero min is -0 iff some element is -0
    keep_plus = np.any(zero & ~signed, axis=axis, keepdims=keepdims)
    keep_minus = np.any(zero & signed, axis=axis, keepdims=keepdims)
    z = np.zeros((), x.dtype)
    fixed = np.where(keep_plus, z, -z) if is_max else np.where(keep_minus, -z, z)
    r = np.where(np.asarray(r) == 0, fixed, r)
    return r if r.ndim else x.dtype.type(r)


def reduce_max(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Maximum over ``axis`` by :func:`maximum` (NaN if any; ``+0`` beats ``-0``)."""
    return _reduce(x, True, axis, keepdims)


def reduce_min(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Minimum over ``axis`` by :func:`minimum` (NaN if any; ``-0`` beats ``+0``)."""
    return _reduce(x, False, axis, keepdims)
