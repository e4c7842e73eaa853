"""``asc-double-buffer``: rotate two copies of every copy-in/copy-out buffer.

With two buffers per queue, MTE2 (GM->UB copy-in) fills tile i+1 while the vector unit (V)
computes tile i and MTE3 (UB->GM copy-out) drains tile i-1 (Ascend C ``TPipe::InitBuffer(que,
2, len)``). Buffers loaded once per kernel (``const``) and scratch (``tmp``) are not rotated.
A kernel that ``asc-tile`` could only fit single-buffered (``asc.max_buffers = 1``) keeps one
copy. Run it before ``asc-buffer-alloc``, which must see the final buffer counts to prove capacity.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass

from pyasc_mlir.dialects import asc, attrs


@dataclass(frozen=True)
class AscDoubleBufferPass(ModulePass):
    """Set ``buffers`` of copy-in/copy-out allocs to the buffer count: option ``stages``
    (default 2), or 1 if ``enable`` is false; at most a kernel's ``asc.max_buffers``."""

    name = "asc-double-buffer"
    enable: bool = True
    stages: int = 2
    """The buffer count (copies of each copy-in/copy-out buffer); the option keeps its name."""

    @property
    def buffers(self) -> int:
        """Copies of each copy-in/copy-out buffer asked for (before a kernel's limit)."""
        return self.stages if self.enable else 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.walk():
            if not attrs.is_kernel(kernel):
                continue
            buffers = self.buffers
            limit = attrs.kernel_max_buffers(kernel)
            if limit is not None and limit < buffers:
                buffers = limit  # asc-tile found that only this many fit UB
            for alloc in kernel.walk():
                if isinstance(alloc, asc.AllocOp) and alloc.role.data in ("in", "out"):
                    alloc.buffers = IntegerAttr(buffers, 64)
