"""NumPy/PyTorch/device-tensor interop of the call path: ``torch.Tensor`` and ``pa.Tensor``
arguments in, the same kind out.

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

from pyasc_mlir.device import Tensor, buffer_of, has_tensor
from pyasc_mlir.errors import PyAscUsageError, caller_loc


def _torch_tensor_type() -> type | None:
    """``torch.Tensor`` when PyTorch is imported (no object can be a tensor before that)."""
    return getattr(sys.modules.get("torch"), "Tensor", None)


def uses_tensors(values: Sequence[Any]) -> bool:
    """Whether any of ``values`` (or an item of a tuple/list value) is a ``torch.Tensor`` or a
    device tensor (``pa.Tensor``): the call path then converts arguments and results."""
    return has_tensor(values) or uses_torch(values)


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


_GRAD_HINT = (
    "pass x.detach() (no gradient flows back through the operator), call it under "
    "torch.no_grad() / torch.inference_mode(), or compute this step with a "
    "differentiable torch operator where the gradient is needed"
)


def torch_to_numpy(value: Any, what: str) -> Any:
    """A ``torch.Tensor`` as a NumPy array (:func:`pyasc_mlir.torch_arrays.to_numpy`: CPU only, no
    copy when contiguous), a device tensor (``pa.Tensor``) as its device buffer (no copy); any
    other value unchanged. ``what`` names the argument and the
    operator in errors (``"argument 1 of f()"``).

    A pyasc operator has no backward, so a tensor that requires grad while grad mode is on
    (``torch.is_grad_enabled()``) is refused: detaching it silently would leave the gradients
    upstream of it ``None``. Under ``torch.no_grad()``/``torch.inference_mode()`` (and inside a
    ``torch.library`` kernel, where autograd is handled above) it is read as it is.

    Raises:
        PyAscUsageError: a tensor not on the CPU, sparse, without a NumPy dtype, or
            that requires grad in grad mode (located at the caller; hint: ``.detach()``).
    """
    if isinstance(value, Tensor):
        return buffer_of(value)
    tensor = _torch_tensor_type()
    if tensor is None or not isinstance(value, tensor):
        return value
    if getattr(value, "requires_grad", False) and sys.modules["torch"].is_grad_enabled():
        raise PyAscUsageError(
            f"{what} is a torch tensor that requires grad, but the pyasc operator has no "
            "backward: its results would carry no gradient and the gradients upstream of "
            "this tensor would stay None",
            caller_loc(),
            _GRAD_HINT,
        )
    return _arrays().to_numpy(value, what)


def same_kind_as(inputs: Sequence[Any], result: Any) -> Any:
    """``result`` (an array, or a tuple/list of arrays) as device tensors (``pa.Tensor``, on the
    same buffers) when any of ``inputs`` is one, else as ``torch.Tensor``s sharing its memory
    when any of ``inputs`` is a ``torch.Tensor``, else unchanged (NumPy in, NumPy out)."""
    if has_tensor(inputs):
        if isinstance(result, np.ndarray):
            return Tensor(result)
        return type(result)(Tensor(r) for r in result)
    if not uses_torch(inputs):
        return result
    from_numpy = _arrays().from_numpy
    if isinstance(result, np.ndarray):
        return from_numpy(result)
    return type(result)(from_numpy(r) for r in result)
