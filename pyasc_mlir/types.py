"""Tensor descriptions and dtypes of the Python surface."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import Float16Type, Float32Type, IntegerType
from xdsl.ir import Attribute

from pyasc_mlir.errors import PyAscDtypeError, caller_loc

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


@dataclass(frozen=True)
class TensorDesc:
    """A tensor argument or result: ``shape`` (elements per dim) and ``dtype`` (``"float16"``
    or ``"float32"``).

    A dim given as ``None`` is dynamic: ``compile`` builds one kernel for every size of it and
    computes the tiling on the host at call time. Only dims of the leading, tiled part of the
    operator may be dynamic (not a reduced dim, nor the trailing dim of an operator that
    reduces); others raise a located ``PyAscCompileError`` at compile time. Dynamic dims that
    meet in one operation must be equal at call time (they do not broadcast). See
    ``docs/DESIGN.md`` ("Dynamic shapes")."""

    shape: tuple[int | None, ...]
    dtype: str = "float16"

    def __init__(self, shape: Sequence[int | None], dtype: object = "float16"):
        object.__setattr__(self, "shape", tuple(None if d is None else int(d) for d in shape))
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
