"""NumPy/PyTorch interop of the call path: ``torch.Tensor`` arguments in, tensors out.

PyTorch is never imported here: a value can only be a ``torch.Tensor`` once ``torch`` is in
``sys.modules``, and the conversions (:mod:`pyasc_mlir.torch_arrays`, which imports PyTorch)
are imported only then.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np


def _torch_tensor_type() -> type | None:
    """``torch.Tensor`` when PyTorch is imported (no object can be a tensor before that)."""
    return getattr(sys.modules.get("torch"), "Tensor", None)


def uses_torch(values: Sequence[Any]) -> bool:
    """Whether any of ``values`` (or an item of a tuple/list value) is a ``torch.Tensor``."""
    tensor = _torch_tensor_type()
    return tensor is not None and any(
        isinstance(x, tensor) for v in values for x in (v if isinstance(v, tuple | list) else (v,))
    )


def _arrays() -> ModuleType:
    """:mod:`pyasc_mlir.torch_arrays`, imported on first use: it imports PyTorch, which
    ``import pyasc_mlir`` must not."""
    from pyasc_mlir import torch_arrays

    return torch_arrays


def torch_to_numpy(value: Any, what: str) -> Any:
    """A ``torch.Tensor`` as a NumPy array (:func:`pyasc_mlir.torch_arrays.to_numpy`: CPU only, no
    copy when contiguous, detached); any other value unchanged. ``what`` names the argument
    in errors.

    Raises:
        PyAscUsageError: a tensor not on the CPU, sparse, bfloat16, or without a NumPy dtype.
    """
    tensor = _torch_tensor_type()
    if tensor is None or not isinstance(value, tensor):
        return value
    return _arrays().to_numpy(value, what)


def same_kind_as(inputs: Sequence[Any], result: Any) -> Any:
    """``result`` (an array, or a tuple/list of arrays) as ``torch.Tensor``s sharing its memory
    when any of ``inputs`` is a ``torch.Tensor``, else unchanged (NumPy in, NumPy out)."""
    if not uses_torch(inputs):
        return result
    from_numpy = _arrays().from_numpy
    if isinstance(result, np.ndarray):
        return from_numpy(result)
    return type(result)(from_numpy(r) for r in result)
