"""Interpreter implementations of the ``ascendc`` dialect (numpy, whole tensor per op).

Each op follows the Ascend C API call it prints, with the semantics of ``docs/CPU_RUNTIME.md``
(the clean-room CPU runtime ``kernel_operator.h`` implements the same table; results agree bit
for bit except: ``Exp``/``Ln`` (numpy's float32 functions vs the C library's, within 1 ulp)
and never-written UB (poisoned here; zeroed there except in its memory-check build)). NaN and
signed zeros of ``Max``/``Min``/``Maxs``/``Mins``/``Relu``/``Abs``/``ReduceMax``/``ReduceMin``
agree too (``docs/CPU_RUNTIME.md``, "Special values"; ``dialects/opset_special.py``).

Model:

* Per block (core) the tile interpreter's :class:`~.tile_impls.BlockState` is reused: block
  index and count, tiling values and the UB (``uint8``, poisoned with ``0xFF`` at every block
  start, so never-written f16/f32 memory reads as NaN). On top of it each block has a
  :class:`Pipe`: a ``TPipe``-like sequential allocator. ``InitBuffer`` hands out UB from offset 0
  upward, each buffer rounded up to 32 bytes, bounded by the usable UB (UB minus the 256-byte
  system area minus the 8 KiB default reserve: 188160 bytes for 192 KiB). The pipe is stored in
  ``BlockState.allocs`` under :data:`PIPE_KEY`; ``BlockState.reset`` (run by ``asc.launch`` and
  ``tile_impls.set_block`` at every block start) clears that dict, so the allocator and all
  queues start afresh with each block. (Calling a kernel twice without a block start in
  between keeps allocating after the first call's buffers, like one TPipe.)
* ``LocalTensor<T>`` values are :class:`LocalTensor` (UB byte offset, numpy dtype, element
  count). Masks (``!ascendc.local_tensor<i8>``, printed ``uint8_t``) are ``uint8`` bytes whose
  bit ``i % 8`` (LSB first) of byte ``i // 8`` is element ``i``. Every vector op and copy checks
  that the UB address of each LocalTensor operand is 32-byte aligned and that the access stays
  inside the tensor (tensors are created inside UB, so it also stays inside UB).
* ``GlobalTensor<T>`` values are :class:`GlobalTensor` (flat numpy array, element offset); the
  arrays are the kernel's GM ``memref`` arguments that ``asc.launch`` passes (``i1`` tensors are
  packed ``uint8`` bits, as in the tile interpreter). Accesses beyond the array raise.
* Queues are :class:`Queue`: ``AllocTensor`` goes round-robin over the ``num`` buffers (the next
  one must have been freed), ``EnQue``/``DeQue`` are a FIFO, ``FreeTensor`` releases.
* Index values are xDSL ``IntegerAttr`` (plain ints are accepted); ``GetValue`` returns a
  ``FloatAttr`` of the tensor's element type, as ``arith`` ops expect.

Arithmetic: f32 lanes compute in float32; f16 lanes compute in float32 and round once to f16
(``Rsqrt`` is ``1/sqrt`` in float64, rounded to float32, then to ``T``). ``ReduceSum`` sums in
the documented order of the CPU runtime: 256-byte repeats (zero-padded), a pairwise binary tree
inside each repeat, then the repeat results left to right, every addition rounded to ``T``.
Violations raise :class:`AscendcInterpretationError` with the API name, the op's ``asc.loc``
and the numbers; memory access violations (out of bounds, misaligned UB operands, reads of
uninitialised UB) raise its subclass :class:`AscendcMemoryError`, also a
``pyasc_mlir.checks.MemoryCheckError``.

Memory check (``pyasc_mlir.checks``): ``BlockState.shadow`` (one "defined" bit per UB bit,
cleared at every block start) follows the rule of ``docs/CPU_RUNTIME.md`` ("Memory check"), as
the CPU runtime's ``-DPYASC_MEMCHECK=1`` build: copies into UB and ``Duplicate`` define, vector
ops and ``Cast``/``Compare``/``Select`` propagate lane by lane, UB->UB ``DataCopy`` copies the
shadow; ``DataCopy``/``DataCopyPad`` UB->GM, ``ReduceSum/Max/Min`` (over ``count``) and
``GetValue`` raise "read of uninitialised UB" on undefined data.

The implementations live in one module per concern, combined here into
:class:`AscendcFunctions`: :mod:`.ascendc_state` (errors, dtypes, tensors, queues, pipe),
:mod:`.ascendc_access` (checked views, memory-check shadow), :mod:`.ascendc_math` (per-call
arithmetic, ``Cast``, ``ReduceSum`` order), :mod:`.ascendc_buffers` (setup, queues, scalars),
:mod:`.ascendc_copy` (``DataCopy``/``DataCopyPad``), :mod:`.ascendc_vector` (vector calls,
compare/select, reductions) and :mod:`.ascendc_cube` (``Matmul``).
"""

from __future__ import annotations

from xdsl.interpreter import register_impls

from pyasc_mlir.interpreter.ascendc_buffers import AscendcBufferFunctions
from pyasc_mlir.interpreter.ascendc_copy import AscendcCopyFunctions
from pyasc_mlir.interpreter.ascendc_cube import AscendcCubeFunctions, MatmulObject
from pyasc_mlir.interpreter.ascendc_math import reduce_sum
from pyasc_mlir.interpreter.ascendc_rows import AscendcRowFunctions
from pyasc_mlir.interpreter.ascendc_state import (
    PIPE_KEY,
    AscendcInterpretationError,
    AscendcMemoryError,
    GlobalTensor,
    LocalTensor,
    Pipe,
    Queue,
    TBuf,
    local_dtype,
    pipe_of,
)
from pyasc_mlir.interpreter.ascendc_vector import AscendcVectorFunctions
from pyasc_mlir.platform import ub_usable

__all__ = [
    "PIPE_KEY",
    "AscendcFunctions",
    "AscendcInterpretationError",
    "AscendcMemoryError",
    "GlobalTensor",
    "LocalTensor",
    "MatmulObject",
    "Pipe",
    "Queue",
    "TBuf",
    "local_dtype",
    "pipe_of",
    "reduce_sum",
    "ub_usable",
]


@register_impls
class AscendcFunctions(
    AscendcBufferFunctions,
    AscendcCopyFunctions,
    AscendcVectorFunctions,
    AscendcRowFunctions,
    AscendcCubeFunctions,
):
    """Numpy implementations of every ``ascendc`` op (see the module docstring)."""
