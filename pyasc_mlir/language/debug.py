"""The debugger mode of the kernel language: kernel bodies run as plain Python over NumPy.

``PYASC_DEBUG=1`` (or ``python -m pyasc_mlir.debugger script.py``) makes every call of a
``@lang.kernel`` run its body in Python: the signature's dims are bound as ints, the
``lang.*`` functions compute with NumPy (:mod:`pyasc_mlir.language.builtins`), so ``print``
and ``breakpoint()`` work inside the body. NumPy computes fp16 scalars in fp16, the compiled
kernel in fp32 (rounding once per store): small differences are expected. The results are
returned as the compiled kernel returns them (a scalar as a one-element float32 array, torch
tensors for torch inputs, a returned argument as a copy).
``PYASC_DEBUG=compare`` runs both and warns (:class:`DebugMismatchWarning`) when a result
differs from the compiled one beyond the dtype's tolerance (fp16 1e-2, fp32 1e-4, relative
and absolute). A ``@lang.vectorize`` function runs through ``numpy.vectorize``.
"""

from __future__ import annotations

import inspect
import os
import types
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from pyasc_mlir.interop import same_kind_as, torch_to_numpy

if TYPE_CHECKING:
    from pyasc_mlir.language.kernel import LangKernel

__all__ = ["DebugMismatchWarning", "call", "mode"]

ENV = "PYASC_DEBUG"
"""The environment variable of the debugger mode."""

_TOL = {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-4}


class DebugMismatchWarning(UserWarning):
    """``PYASC_DEBUG=compare``: the Python run and the compiled kernel differ."""


def mode() -> str | None:
    """``"python"`` (``PYASC_DEBUG=1/true/yes/on``), ``"compare"`` or ``None`` (off)."""
    value = os.environ.get(ENV, "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return "python"
    return "compare" if value == "compare" else None


def call(
    kern: LangKernel,
    how: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    compiled: Callable[[], Any],
) -> Any:
    """Run ``kern`` on ``args`` as Python (see the module docstring); ``compiled`` runs the
    compiled kernel (for ``how == "compare"``)."""
    fn = kern.fn
    if kwargs:  # positional, as the signature binds them
        bound = inspect.signature(fn).bind(*args, **kwargs)
        bound.apply_defaults()
        args, kwargs = tuple(bound.arguments.values()), {}
    given = args
    args = tuple(torch_to_numpy(a, f"argument {i}") for i, a in enumerate(args))
    if kern.kind == "vectorize":
        arrays = [np.asarray(a) for a in args if isinstance(a, np.ndarray)]
        dtypes = {a.dtype.name for a in arrays}
        dtype = dtypes.pop() if len(dtypes) == 1 else "float32"
        result: Any = np.asarray(np.vectorize(fn)(*args, **kwargs)).astype(
            arrays[0].dtype if dtype != "float32" else np.float32
        )
    else:
        env = dict(fn.__globals__)
        env.update(kern.dims(args))
        plain = types.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__, fn.__closure__)
        result = _as_compiled(plain(*args, **kwargs), args)
    if how == "compare":
        _compare(fn.__name__, result, compiled())
    return same_kind_as(given, result)


def _as_compiled(result: Any, args: tuple[Any, ...]) -> Any:
    """The Python run's ``result`` as the compiled kernel returns it: a scalar (a
    ``lang.allreduce``, a number) as a one-element float32 array, an array argument returned
    as is as a copy, a tuple of results as a tuple (torch tensors in, torch tensors out: the
    caller converts)."""

    def one(r: Any) -> Any:
        if isinstance(r, np.ndarray) and r.ndim > 0:
            return r.copy() if any(r is a for a in args) else r
        if isinstance(r, int | float | np.number | np.ndarray) and not isinstance(r, bool):
            return np.asarray(r, np.float32).reshape(1)
        return r  # not a result the compiled kernel has: left for the caller to see

    return tuple(one(r) for r in result) if isinstance(result, tuple) else one(result)


def _compare(name: str, got: Any, want: Any) -> None:
    gots = got if isinstance(got, tuple) else (got,)
    wants = want if isinstance(want, tuple) else (want,)
    for i, (g, w) in enumerate(zip(gots, wants, strict=True)):
        w = np.asarray(torch_to_numpy(w, "result"))
        tol = _TOL.get(w.dtype.name, 1e-4)
        g64, w64 = np.asarray(g).astype(np.float64), w.astype(np.float64)
        if g64.shape != w64.shape or not np.allclose(g64, w64, rtol=tol, atol=tol, equal_nan=True):
            diff = np.nanmax(np.abs(g64 - w64)) if g64.shape == w64.shape else "shape"
            warnings.warn(
                f"{name}: result {i} of the Python run differs from the compiled kernel "
                f"(max |difference| {diff})",
                DebugMismatchWarning,
                stacklevel=4,
            )
