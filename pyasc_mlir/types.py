"""Tensor descriptions and dtypes of the Python surface."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType
from xdsl.ir import Attribute

from pyasc_mlir.errors import PyAscDtypeError, PyAscUsageError, caller_loc

_DTYPE_HINT = "tensors are float16, bfloat16 or float32 (integers are not supported yet)"

BF16 = np.dtype(ml_dtypes.bfloat16)
"""NumPy's spelling of bfloat16 (``ml_dtypes.bfloat16``: 1 sign, 8 exponent, 7 mantissa bits)."""

DTYPES: dict[str, np.dtype] = {
    "float16": np.dtype(np.float16),
    "bfloat16": BF16,
    "float32": np.dtype(np.float32),
}
"""Supported tensor dtypes (names as NumPy and ml_dtypes spell them)."""

HALF_DTYPES = ("float16", "bfloat16")
"""The 16-bit storage dtypes: computed in float32 inside an operator and rounded once."""


def dtype_name(dtype: object) -> str:
    """Normalise ``"float16"``/``"fp16"``/``np.float16``/``np.dtype``/``torch.float16`` to
    ``"float16"`` etc. (``"bf16"``, ``ml_dtypes.bfloat16``, ``torch.bfloat16``: ``"bfloat16"``).

    Raises:
        TypeError: an unsupported dtype; the message lists the supported ones.
    """
    aliases = {
        "fp16": "float16",
        "half": "float16",
        "f16": "float16",
        "bf16": "bfloat16",
        "fp32": "float32",
        "float": "float32",
        "f32": "float32",
    }
    if isinstance(dtype, str):
        name = aliases.get(dtype, dtype)
    elif type(dtype).__module__ == "torch":  # torch.float16 / torch.bfloat16 / torch.float32
        name = str(dtype).removeprefix("torch.")
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
    """The xDSL element type of a dtype name (``float16`` -> ``f16``, ``bfloat16`` -> ``bf16``)."""
    types = {"float16": Float16Type(), "bfloat16": BFloat16Type(), "float32": Float32Type()}
    return types[name] if name in types else {"bool": IntegerType(1)}[name]


def np_dtype_of(t: Attribute) -> np.dtype:
    """The NumPy dtype of an xDSL element type."""
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
    if isinstance(t, BFloat16Type):
        return BF16
    if isinstance(t, Float32Type):
        return np.dtype(np.float32)
    if isinstance(t, IntegerType) and t.width.data == 1:
        return np.dtype(np.bool_)
    raise TypeError(f"no NumPy dtype for {t}")


def is_float_dtype(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is a floating-point dtype (NumPy's kind ``f``, or bfloat16, whose
    NumPy kind is ``V``)."""
    return dtype.kind == "f" or dtype == BF16


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 ``x`` rounded to bfloat16, to nearest with ties to even (subnormals kept,
    overflow to infinity), a NaN staying a quiet NaN with its sign and top payload bits: bit
    for bit what the CPU runtime's ``bfloat16_t`` does (``pyasc_cpu/bf16.h``;
    ``ml_dtypes``' own cast differs on NaN payloads).

    Shapes: any; returns an array of ``x``'s shape and dtype :data:`BF16`."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = ((u + np.uint32(0x7FFF) + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    quiet = ((u >> 16) | 0x0040).astype(np.uint16)
    return np.where(nan, quiet, rounded).view(BF16)


def bf16_to_f32(x: np.ndarray) -> np.ndarray:
    """bfloat16 ``x`` widened to float32 exactly (its 16 bits become the top half, NaN
    payloads kept), as the CPU runtime reads a ``bfloat16_t``. Shapes: any."""
    u = np.ascontiguousarray(x, dtype=BF16).view(np.uint16).astype(np.uint32)
    return (u << 16).view(np.float32)


def astype(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x.astype(dtype)`` (round to nearest even), with bfloat16 on either side converted bit
    for bit as the CPU runtime does (:func:`f32_to_bf16`, :func:`bf16_to_f32`; to bfloat16
    through float32). Returns ``x`` itself when it already has ``dtype``."""
    x = np.asarray(x)
    if x.dtype == dtype:
        return x
    if dtype == BF16:
        with np.errstate(all="ignore"):
            return f32_to_bf16(x if x.dtype == np.float32 else _to_f32_odd(x))
    if x.dtype == BF16:
        return bf16_to_f32(x).astype(dtype, copy=False)
    return x.astype(dtype)


def _to_f32_odd(x: np.ndarray) -> np.ndarray:
    """``x`` (float16/64 or integers) to float32 rounded to odd: an inexact result gets its
    last bit set, so rounding it again to the 8-bit bfloat16 significand rounds once."""
    wide = x.astype(np.float64)
    y = wide.astype(np.float32)
    inexact = (y.astype(np.float64) != wide) & np.isfinite(y)
    toward = np.nextafter(y, np.where(wide > y, np.float32(np.inf), np.float32(-np.inf)))
    even = (y.view(np.uint32) & 1) == 0
    return np.where(inexact & even, toward, y).astype(np.float32)


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
    """A tensor argument or result: ``shape`` (elements per dim) and ``dtype`` (``"float16"``,
    ``"bfloat16"`` or ``"float32"``).

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
