"""Checks of ``compile``'s arguments, before any lowering: the operator is a function, the
inputs are a list, NumPy scalars are compile-time constants (as Python numbers), the platform
exists and every tensor (argument, then result) fits the platform's device memory.

Every error is a :class:`~pyasc_mlir.errors.PyAscUsageError` located at the user's call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

from pyasc_mlir.errors import PyAscUsageError, caller_loc
from pyasc_mlir.pipeline import top_function
from pyasc_mlir.platform import GIB, PLATFORMS, Platform, get_platform, unknown_platform
from pyasc_mlir.types import TensorDesc, np_dtype_of

__all__ = ["check_call", "check_results", "constant"]

_INPUTS_HINT = (
    "pass a list with one entry per parameter: pa.compile(fn, [pa.TensorDesc(shape, "
    "dtype), ...]) (a TensorDesc per tensor, a value per compile-time parameter)"
)


def constant(value: Any) -> Any:
    """A NumPy scalar (``np.float64(0.5)``, ``np.int64(3)``, ``np.bool_``, also inside a tuple)
    as the Python number it holds: a compile-time constant like a Python float or int, with the
    same cache key. Other values unchanged."""
    if isinstance(value, np.number | np.bool_):
        return value.item()
    if type(value) is tuple:
        return tuple(constant(v) for v in value)
    return value


def _check_function(fn: object) -> str:
    """The operator's name; ``fn`` must be callable and named (a ``def`` function, a bound
    method, a ``@jit`` function, a ``@lang.kernel``)."""
    name = getattr(fn, "__name__", None)
    if not callable(fn) or not isinstance(name, str):
        raise PyAscUsageError(
            f"compile() takes the operator as a function, not {type(fn).__name__} {fn!r}"[:200],
            caller_loc(),
            "define the operator with def and pass the function itself: "
            "pa.compile(my_op, [pa.TensorDesc(shape, dtype)])",
        )
    return name


def _check_inputs(inputs: object) -> list[object]:
    if isinstance(inputs, TensorDesc):
        raise PyAscUsageError(
            "inputs must be a list, got one TensorDesc", caller_loc(), _INPUTS_HINT
        )
    if not isinstance(inputs, list | tuple):
        raise PyAscUsageError(
            f"inputs must be a list, got {type(inputs).__name__}", caller_loc(), _INPUTS_HINT
        )
    return [constant(v) for v in inputs]


def _size_text(nbytes: int) -> str:
    return f"{nbytes / GIB:.4g} GiB ({nbytes} bytes)"


def _check_fits(what: str, shape: Sequence[int | None], dtype: np.dtype, plat: Platform) -> None:
    """``what`` (e.g. ``"argument 0 of f()"``) of ``shape`` and ``dtype`` fits one chip's device
    memory (``None`` dims count as 1: their size is known at call time)."""
    nbytes = math.prod(1 if d is None else d for d in shape) * dtype.itemsize
    if nbytes > plat.hbm_bytes:
        raise PyAscUsageError(
            f"{what} is {list(shape)} {dtype.name}: {_size_text(nbytes)}, more than the "
            f"{plat.hbm_bytes // GIB} GiB of device memory of one {plat.name}",
            caller_loc(),
            "check the shape; a tensor must fit the device memory (Platform.hbm_bytes), so "
            "split larger work into several calls",
        )


def check_call(
    fn: Callable[..., Any], inputs: object, platform: str
) -> tuple[str, list[object], Platform]:
    """``(operator name, inputs, platform)`` for a ``compile`` call, NumPy scalars in ``inputs``
    turned into Python numbers (:func:`constant`).

    Raises:
        PyAscUsageError: located at the caller: ``fn`` is not a function, ``inputs`` is not a
            list (e.g. a bare ``TensorDesc``), the platform is unknown, or a tensor argument is
            larger than the platform's device memory (``Platform.hbm_bytes``).
    """
    name = _check_function(fn)
    args = _check_inputs(inputs)
    if platform is not None and platform not in PLATFORMS:  # None: the default platform
        raise unknown_platform(platform, caller_loc())
    plat = get_platform(platform)
    for i, a in enumerate(args):
        items = list(enumerate(a)) if isinstance(a, tuple) else [(None, a)]
        for j, d in items:
            if isinstance(d, TensorDesc):
                where = f"argument {i}" if j is None else f"argument {i}[{j}]"
                _check_fits(f"{where} of {name}()", d.shape, d.np_dtype, plat)
    return name, args, plat


def check_results(module: ModuleOp, name: str, fn_name: str, plat: Platform) -> None:
    """Every result of the function ``name`` of the tensor-level ``module`` fits the device
    memory (``fn_name``: the operator, for the message).

    Raises:
        PyAscUsageError: located at the caller, naming the result (``result 0 of f()``).
    """
    for k, t in enumerate(top_function(module, name).function_type.outputs.data):
        if isinstance(t, TensorType):
            shape = [None if d < 0 else d for d in t.get_shape()]
            _check_fits(f"result {k} of {fn_name}()", shape, np_dtype_of(t.element_type), plat)
