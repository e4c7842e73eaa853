"""Tensor descriptions and dtypes of the Python surface."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import Float16Type, Float32Type, IntegerType
from xdsl.ir import Attribute

from pyasc_mlir.errors import PyAscDtypeError, PyAscUsageError, caller_loc

_DTYPE_HINT = "tensors are float16 or float32 (bfloat16 and integers are not supported yet)"

DTYPES: dict[str, np.dtype] = {"float16": np.dtype(np.float16), "float32": np.dtype(np.float32)}
"""Supported tensor dtypes (names as NumPy spells them)."""


def dtype_name(dtype: object) -> str:
    """Normalise ``"float16"``/``"fp16"``/``np.float16``/``np.dtype`` to ``"float16"`` etc.

    Raises:
        TypeError: an unsupported dtype; the message lists the supported ones.
    """
    aliases = {
        "fp16": "float16",
        "half": "float16",
        "f16": "float16",
        "fp32": "float32",
        "float": "float32",
        "f32": "float32",
    }
    if isinstance(dtype, str):
        name = aliases.get(dtype, dtype)
    else:
        try:
            # np.dtype accepts more than its stubs' overloads name; TypeError is caught below
            name = np.dtype(dtype).name  # type: ignore[call-overload]
        except TypeError:
            raise PyAscDtypeError(
                f"unsupported dtype {dtype!r}", caller_loc(), _DTYPE_HINT
            ) from None
    if name not in DTYPES:
        raise PyAscDtypeError(f"unsupported dtype {dtype!r}", caller_loc(), _DTYPE_HINT)
    return name


def ir_type(name: str) -> Attribute:
    """The xDSL element type of a dtype name (``float16`` -> ``f16``)."""
    return {"float16": Float16Type(), "float32": Float32Type(), "bool": IntegerType(1)}[name]


def np_dtype_of(t: Attribute) -> np.dtype:
    """The NumPy dtype of an xDSL element type."""
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
    if isinstance(t, Float32Type):
        return np.dtype(np.float32)
    if isinstance(t, IntegerType) and t.width.data == 1:
        return np.dtype(np.bool_)
    raise TypeError(f"no NumPy dtype for {t}")


INT64_MAX = 2**63 - 1
"""The largest dim (and element count) a tensor type can hold (``i64`` in the IR)."""

_SHAPE_HINT = 'give the shape as a tuple of ints, e.g. TensorDesc((8, 1024), "float16")'


def _shape_error(message: str) -> PyAscUsageError:
    return PyAscUsageError(message, caller_loc(), _SHAPE_HINT + " (None for a dynamic dim)")


def check_shape(shape: object) -> tuple[int | None, ...]:
    """``shape`` as a tuple of Python ints (``None`` kept: a dynamic dim).

    A dim is an ``int`` or a NumPy integer, ``>= 0`` and at most :data:`INT64_MAX`; a ``bool``
    (also ``np.bool_``), float or string is refused rather than converted (``8.7`` is not 8).

    Raises:
        PyAscUsageError: located at the caller's line: ``shape`` is not a sequence (a bare
            int: write ``(8,)``), or a dim is not an int or is out of range.
    """
    if isinstance(shape, int | np.integer) or not isinstance(shape, Sequence | np.ndarray):
        raise _shape_error(
            f"a shape is a tuple of dims, not {type(shape).__name__} "
            f"{shape!r}" + (f"; write ({shape},)" if isinstance(shape, int | np.integer) else "")
        )
    dims: list[int | None] = []
    for i, d in enumerate(shape):
        if d is None:
            dims.append(None)
            continue
        if isinstance(d, bool | np.bool_) or not isinstance(d, int | np.integer):
            raise _shape_error(
                f"dim {i} of shape {tuple(shape)!r} is {d!r}, a {type(d).__name__}; dims are ints"
            )
        if not 0 <= d <= INT64_MAX:
            raise _shape_error(
                f"dim {i} of shape {tuple(shape)!r} is {d}; dims are >= 0 and < 2**63"
            )
        dims.append(int(d))
    return tuple(dims)


@dataclass(frozen=True)
class TensorDesc:
    """A tensor argument or result: ``shape`` (elements per dim) and ``dtype`` (``"float16"``
    or ``"float32"``).

    A dim given as ``None`` is dynamic: ``compile`` builds one kernel for every size of it and
    computes the tiling on the host at call time. Only dims of the leading, tiled part of the
    operator may be dynamic (not a reduced dim, nor the trailing dim of an operator that
    reduces); others raise a located ``PyAscCompileError`` at compile time. Dynamic dims that
    meet in one operation must be equal at call time (they do not broadcast). See
    ``docs/DESIGN.md`` ("Dynamic shapes").

    Dims are ints (Python or NumPy), ``>= 0``; ``compile`` refuses a tensor larger than the
    platform's device memory (``Platform.hbm_bytes``).

    Raises:
        PyAscUsageError: a dim that is not an int (``8.7``, ``"8"``, ``True``) or is negative
            (see :func:`check_shape`).
        PyAscDtypeError: an unsupported dtype."""

    shape: tuple[int | None, ...]
    dtype: str = "float16"

    def __init__(self, shape: Sequence[int | None], dtype: object = "float16"):
        object.__setattr__(self, "shape", check_shape(shape))
        object.__setattr__(self, "dtype", dtype_name(dtype))

    @property
    def static_shape(self) -> tuple[int, ...]:
        """``shape`` of a tensor without dynamic dims.

        Raises:
            ValueError: a dim is dynamic (``None``)."""
        dims = tuple(d for d in self.shape if d is not None)
        if len(dims) != len(self.shape):
            raise ValueError(
                f"shape {list(self.shape)} has dynamic (None) dims; a static shape is needed here"
            )
        return dims

    @property
    def np_dtype(self) -> np.dtype:
        return DTYPES[self.dtype]

    @staticmethod
    def of(array: np.ndarray) -> TensorDesc:
        """The description of a NumPy array."""
        return TensorDesc(array.shape, array.dtype)
