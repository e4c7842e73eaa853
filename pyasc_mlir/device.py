"""Device tensors: ``pa.Tensor``, data in the runtime's device memory, and its factories.

On this machine the device is the CPU build of the emitted Ascend C: its global memory (GM) is
host memory that the compiled kernel reads and writes through a pointer. A :class:`Tensor`
owns such a buffer (64-byte aligned, C-contiguous, of a tensor dtype: ``float16``,
``bfloat16`` or ``float32``) and is passed to a compiled operator without a copy; the
operator's results are the buffers its kernel wrote, returned as ``Tensor``\\s (no copy either).
Moving data in or out is explicit, as between host and NPU memory: :func:`from_numpy` copies
a host array in, :meth:`Tensor.to_numpy` copies it out.

The tensor functions of ``pyasc_mlir`` (``pa.exp``, ``pa.add`` ..., ``pa.matmul``), the tensor
methods (``t.sum(-1)``, ``t.reshape(...)``) and the operators ``+ - * / ** @`` and unary ``-``
run eagerly on ``Tensor``\\s: each call compiles a tiny operator once per (function, argument
structure) and caches it (:mod:`pyasc_mlir.eager`), so a script can chain them outside an
operator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pyasc_mlir.errors import PyAscUsageError, caller_loc, user_facing
from pyasc_mlir.ops import DType
from pyasc_mlir.types import DTYPES, astype, check_shape, dtype_name, is_float_dtype

__all__ = [
    "ALIGN_BYTES",
    "Tensor",
    "aligned_empty",
    "buffer_of",
    "empty",
    "from_numpy",
    "full",
    "has_tensor",
    "ones",
    "randn",
    "zeros",
]

ALIGN_BYTES = 64
"""Alignment of every device buffer (a whole cache line: more than the 32-byte GM data block
the NPU's DMA moves; the CPU runtime's tiling buffers use the same)."""


def aligned_empty(shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """An uninitialised C-contiguous array of ``shape`` and ``dtype`` whose data starts on an
    :data:`ALIGN_BYTES` boundary (``np.empty`` guarantees only 16). Used for device tensors and
    for kernel results (``compiled_op.new_output``)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(n + ALIGN_BYTES, dtype=np.uint8)
    start = (-raw.ctypes.data) % ALIGN_BYTES
    return raw[start : start + n].view(dtype).reshape(tuple(shape))


def _dtype(dtype: object) -> np.dtype:
    """The NumPy dtype of a tensor dtype given in any spelling (``pa.bfloat16``, ``"fp16"``,
    ``np.float32``, ``torch.bfloat16`` ...); raises a located ``PyAscDtypeError``."""
    return DTYPES[dtype_name(dtype)]


class Tensor:
    """A tensor in device memory (see the module docstring).

    Attributes:
        shape: the dims (a tuple of ints).
        dtype: ``pa.float16``, ``pa.bfloat16`` or ``pa.float32`` (a :class:`~pyasc_mlir.ops.DType`).

    Made by :func:`from_numpy`, :func:`zeros`, :func:`ones`, :func:`empty`, :func:`full`,
    :func:`randn`, or returned by a compiled operator called with ``Tensor`` arguments.
    ``np.asarray(t)`` views the device buffer (no copy); :meth:`to_numpy` copies it out.
    """

    __slots__ = ("_data",)

    def __init__(self, data: np.ndarray):
        """Adopt ``data`` (C-contiguous, a tensor dtype) as the device buffer, without a copy.
        Users make tensors with the factory functions, not with this constructor."""
        if not isinstance(data, np.ndarray) or not data.flags.c_contiguous:
            raise PyAscUsageError(
                f"pa.Tensor() adopts a C-contiguous NumPy array, not {type(data).__name__}",
                caller_loc(),
                "make tensors with pa.from_numpy(array), pa.zeros(shape) ...",
            )
        dtype_name(data.dtype)  # a tensor dtype, else a located PyAscDtypeError
        self._data = data

    # -- description ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The dims."""
        return tuple(self._data.shape)

    @property
    def dtype(self) -> DType:
        """The element dtype (``pa.float16``, ``pa.bfloat16`` or ``pa.float32``)."""
        return DType(dtype_name(self._data.dtype))

    @property
    def ndim(self) -> int:
        """The number of dims."""
        return self._data.ndim

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(self._data.size)

    @property
    def nbytes(self) -> int:
        """Bytes of device memory the elements take (2 per float16/bfloat16, 4 per float32)."""
        return int(self._data.nbytes)

    def data_ptr(self) -> int:
        """The device address of the first element (a kernel argument points there)."""
        return int(self._data.ctypes.data)

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d pa.Tensor")
        return int(self._data.shape[0])

    def __repr__(self) -> str:
        values = np.array2string(astype(self._data, np.dtype(np.float32)), separator=", ")
        return f"pa.Tensor({values}, dtype={self.dtype})"

    # -- moving data -----------------------------------------------------------------------
    def to_numpy(self) -> np.ndarray:
        """A host copy of the elements: an array of this shape and dtype (``ml_dtypes.bfloat16``
        for bfloat16), independent of the device buffer."""
        return self._data.copy()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """The device buffer as an array (no copy, unless ``dtype`` differs or ``copy``)."""
        out = self._data if dtype is None else astype(self._data, np.dtype(dtype))
        return out.copy() if copy and out is self._data else out

    # -- eager tensor operations -------------------------------------------------------------
    def __getattr__(self, name: str) -> Callable[..., Any]:
        """A tensor method of the frontend (``t.sum(-1)``, ``t.reshape(2, 8)``, ``t.exp()`` ...)
        bound to this tensor, run eagerly."""
        from pyasc_mlir import eager

        if name.startswith("_") or name not in eager.tensor_methods():
            raise AttributeError(f"'pa.Tensor' object has no attribute {name!r}")
        return eager.bound_method(self, name)

    @property
    def T(self) -> Tensor:  # noqa: N802  (the tensor spelling)
        """The transpose of a 2-D tensor (eager)."""
        return _op("{0}.T", self)

    def __add__(self, other: Any) -> Tensor:
        return _op("{0} + {1}", self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _op("{1} + {0}", self, other)

    def __sub__(self, other: Any) -> Tensor:
        return _op("{0} - {1}", self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _op("{1} - {0}", self, other)

    def __mul__(self, other: Any) -> Tensor:
        return _op("{0} * {1}", self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _op("{1} * {0}", self, other)

    def __truediv__(self, other: Any) -> Tensor:
        return _op("{0} / {1}", self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _op("{1} / {0}", self, other)

    def __pow__(self, other: Any) -> Tensor:
        return _op("{0} ** {1}", self, other)

    def __matmul__(self, other: Any) -> Tensor:
        return _op("{0} @ {1}", self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _op("{1} @ {0}", self, other)

    def __neg__(self) -> Tensor:
        return _op("-{0}", self)

    @user_facing
    def __lt__(self, other: Any) -> Any:
        raise _not_eager("a comparison (<, <=, >, >=)", "the mask would be a result")

    __le__ = __gt__ = __ge__ = __lt__

    @user_facing
    def __getitem__(self, index: Any) -> Any:
        raise _not_eager("indexing or slicing", "index inside the operator")

    __hash__ = object.__hash__


def _not_eager(what: str, why: str) -> PyAscUsageError:
    return PyAscUsageError(
        f"{what} of a device tensor is not supported outside an operator ({why}; operators "
        "return numeric tensors only)",
        caller_loc(),
        "write the expression inside a @pyasc_mlir.jit operator, e.g. "
        "pa.where(x > 0, x, 0.0), and call it on the device tensors; or use t.to_numpy()",
    )


def _op(template: str, *operands: Any) -> Any:
    """Run the expression ``template`` (``{0}``, ``{1}``: the operands) eagerly."""
    from pyasc_mlir import eager

    return eager.run_expression(template, operands)


def buffer_of(t: Tensor) -> np.ndarray:
    """The device buffer of ``t`` (the array a kernel reads and writes; no copy)."""
    return t._data


def has_tensor(values: Any) -> bool:
    """Whether a :class:`Tensor` is among ``values`` (a sequence; tuple/list items and dict
    values are searched one level deep)."""
    for v in values:
        if isinstance(v, Tensor):
            return True
        if isinstance(v, tuple | list) and any(isinstance(x, Tensor) for x in v):
            return True
    return False


# --------------------------------------------------------------------------- factories


def _shape(size: tuple[Any, ...]) -> tuple[int, ...]:
    """``zeros(2, 3)`` and ``zeros((2, 3))`` alike; dims checked (located errors)."""
    shape = size[0] if len(size) == 1 and isinstance(size[0], Sequence) else size
    dims = check_shape(shape)
    if any(d is None for d in dims):
        raise PyAscUsageError(
            f"a device tensor has concrete dims, not {list(dims)}",
            caller_loc(),
            "give every dim as an int",
        )
    return tuple(int(d) for d in dims if d is not None)


@user_facing
def empty(*size: Any, dtype: object = "float16") -> Tensor:
    """A device tensor of ``size`` (``empty(2, 3)`` or ``empty((2, 3))``) and ``dtype``
    (default float16, as on the NPU), uninitialised.

    Raises:
        PyAscUsageError: a dim that is not an int >= 0; ``PyAscDtypeError``: a dtype other
            than float16, bfloat16 or float32."""
    return Tensor(aligned_empty(_shape(size), _dtype(dtype)))


@user_facing
def full(size: Any, fill_value: float, dtype: object = "float16") -> Tensor:
    """A device tensor of shape ``size`` (a tuple) filled with ``fill_value`` rounded once to
    ``dtype`` (default float16; NaN and infinities kept). Raises as :func:`empty`."""
    out = aligned_empty(_shape((size,)), _dtype(dtype))
    out[...] = astype(np.full((), fill_value, dtype=np.float64), out.dtype)
    return Tensor(out)


@user_facing
def zeros(*size: Any, dtype: object = "float16") -> Tensor:
    """A device tensor of zeros (``+0.0``); ``size`` and ``dtype`` as :func:`empty`."""
    out = aligned_empty(_shape(size), _dtype(dtype))
    out.view(np.uint8)[...] = 0
    return Tensor(out)


@user_facing
def ones(*size: Any, dtype: object = "float16") -> Tensor:
    """A device tensor of ones; ``size`` and ``dtype`` as :func:`empty`."""
    out = aligned_empty(_shape(size), _dtype(dtype))
    out[...] = astype(np.ones((), np.float32), out.dtype)
    return Tensor(out)


@user_facing
def randn(*size: Any, dtype: object = "float16", seed: int | None = None) -> Tensor:
    """A device tensor of standard normal samples (NumPy's ``default_rng(seed)``, drawn in
    float32 and rounded once to ``dtype``); ``seed=None`` draws fresh entropy. ``size`` and
    ``dtype`` as :func:`empty`."""
    shape = _shape(size)
    out = aligned_empty(shape, _dtype(dtype))
    sample = np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
    out[...] = astype(sample, out.dtype)
    return Tensor(out)


@user_facing
def from_numpy(array: Any, dtype: object = None) -> Tensor:
    """Copy a host array (NumPy, ``ml_dtypes.bfloat16`` or a CPU ``torch.Tensor``) into a new
    device tensor of its shape.

    ``dtype``: the device dtype; default the array's own, which must then be float16, bfloat16
    or float32. With ``dtype``, float and integer arrays are converted (rounded once to
    nearest even; a finite value beyond the dtype's range is refused, as it would become inf).

    Raises:
        PyAscUsageError: a bool/complex/object array, a float64 or integer array without
            ``dtype``, or an out-of-range value (located at the caller; hints name ``dtype=``).
    """
    from pyasc_mlir.interop import torch_to_numpy

    host = np.asarray(torch_to_numpy(array, "the array given to pa.from_numpy()"))
    if dtype is None and host.dtype.name not in DTYPES:
        raise PyAscUsageError(
            f"pa.from_numpy() of a {host.dtype} array: device tensors are float16, bfloat16 "
            "or float32",
            caller_loc(),
            "say which one, e.g. pa.from_numpy(x, dtype=pa.float32)",
        )
    want = host.dtype if dtype is None else _dtype(dtype)
    out = aligned_empty(host.shape, want)
    if host.dtype == want:  # a plain copy: nothing to round or check
        out[...] = host
        return Tensor(out)
    if host.dtype.kind not in "fiu" and not is_float_dtype(host.dtype):
        raise PyAscUsageError(
            f"pa.from_numpy() of a {host.dtype} array: only float and integer arrays convert",
            caller_loc(),
            "convert it first, e.g. x.astype(np.float32)",
        )
    with np.errstate(all="ignore"):
        conv = astype(host, want)
    bad = ~np.isfinite(astype(conv, np.dtype(np.float32))) & np.isfinite(
        astype(host, np.dtype(np.float64))
    )
    if bad.any():
        idx = [int(k) for k in np.argwhere(bad)[0]]
        raise PyAscUsageError(
            f"pa.from_numpy(): value {host[tuple(idx)].item()!r} at index {idx} is outside the "
            f"{want.name} range; converting it would give inf",
            caller_loc(),
            "scale the input, or use dtype=pa.float32",
        )
    out[...] = conv
    return Tensor(out)
