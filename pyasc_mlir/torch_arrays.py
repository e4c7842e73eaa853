"""CPU ``torch.Tensor`` <-> NumPy array views (imports PyTorch).

Imported by :mod:`pyasc_mlir.interop` only once a ``torch.Tensor`` is in use, so that
``import pyasc_mlir`` never imports PyTorch; :mod:`pyasc_mlir.torch` re-exports
:func:`to_numpy` and :func:`from_numpy`.
"""

from __future__ import annotations

import numpy as np
import torch

from pyasc_mlir.errors import PyAscUsageError, caller_loc
from pyasc_mlir.types import BF16

_DEVICE_HINT = (
    "move it to the CPU with .cpu() first (pyasc-mlir runs the CPU build of the "
    "Ascend C kernel) and move the result back with .to(device)"
)


def check_tensor(t: torch.Tensor, what: str, allow_meta: bool = False) -> None:
    """Refuse a tensor pyasc-mlir cannot run: not on the CPU (``meta`` only with
    ``allow_meta``) or not strided (sparse, nested).

    Raises:
        PyAscUsageError: located at the caller's line, naming ``what`` (e.g. ``"argument 0 of
            f()"``).
    """
    if t.device.type != "cpu" and not (allow_meta and t.device.type == "meta"):
        raise PyAscUsageError(
            f"{what} is a torch tensor on device '{t.device}'; only CPU tensors are supported",
            caller_loc(),
            _DEVICE_HINT,
        )
    if t.layout != torch.strided or t.is_nested:
        raise PyAscUsageError(
            f"{what} is a {'nested' if t.is_nested else t.layout} torch "
            "tensor; only dense (strided) tensors are supported",
            caller_loc(),
            "convert it with .to_dense() first",
        )


def to_numpy(t: torch.Tensor, what: str) -> np.ndarray:
    """A CPU tensor as a NumPy array, sharing its memory where possible.

    Input rule: the tensor must be on the CPU and dense (see :func:`check_tensor`). A tensor
    that requires grad is detached (the result is not part of the autograd graph); a
    non-contiguous one is made contiguous (a copy); a contiguous one is viewed with
    ``Tensor.numpy()`` without a copy (a ``torch.bfloat16`` one as an ``ml_dtypes.bfloat16``
    array on the same memory). The dtype rules of the caller (``@jit``: float16, bfloat16 or
    float32 only; ``CompiledOp``: numeric arrays converted) then apply to the array.

    Raises:
        PyAscUsageError: a tensor :func:`check_tensor` refuses, or a dtype NumPy lacks.
    """
    check_tensor(t, what)
    t = t.detach().resolve_conj().resolve_neg()
    if not t.is_contiguous():
        t = t.contiguous()
    if t.dtype == torch.bfloat16:  # NumPy has no bfloat16: the same bits as ml_dtypes'
        return t.view(torch.uint16).numpy().view(BF16)
    try:
        return t.numpy()
    except (TypeError, RuntimeError) as exc:
        raise PyAscUsageError(
            f"{what} is a torch {t.dtype} tensor, which has no NumPy equivalent ({exc})",
            caller_loc(),
            "convert it with .float() (or .half()) first",
        ) from None


def from_numpy(a: np.ndarray) -> torch.Tensor:
    """A result array as a CPU tensor sharing its memory (read-only arrays are copied, as
    ``torch.from_numpy`` needs a writable one); an ``ml_dtypes.bfloat16`` array becomes a
    ``torch.bfloat16`` tensor on the same memory."""
    a = a if a.flags.writeable else a.copy()
    if a.dtype == BF16:
        return torch.from_numpy(a.view(np.uint16)).view(torch.bfloat16)
    return torch.from_numpy(a)
