"""``@lang.kernel(precision="mixed")``: a float32 interface around float16 storage.

In a mixed-precision kernel every float32 array argument is copied into a float16 local
array on entry (the read-only value the body sees: a cast at the boundary), every local
array the body allocates as float32 holds float16, and every returned float16 local array is
copied into a float32 array on return. Arithmetic follows the language's rule (elements are
widened to f32 when read, rounded to the array's dtype when stored), so a mixed kernel
computes what the same kernel computes on float16 arrays, with float32 in and out. The
copies are elementwise loop nests that ``asc-raise-loops`` raises to casts, which fuse into
the kernel that reads or writes them.
"""

from __future__ import annotations

import ast

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import SSAValue

from pyasc_mlir.dialects import asc_loop
from pyasc_mlir.errors import PyAscCompileError, SourceLoc
from pyasc_mlir.frontend.lang_exprs import Arr, ExprGen
from pyasc_mlir.types import ir_type

__all__ = ["PRECISIONS", "check_precision", "copy_array"]

PRECISIONS = ("default", "mixed")
"""The ``precision=`` values of ``@lang.kernel``."""


def check_precision(precision: object, loc: SourceLoc | None) -> str:
    """``precision`` when it is one of :data:`PRECISIONS`.

    Raises:
        PyAscCompileError: at ``loc`` (the decorator's line) for anything else."""
    if precision not in PRECISIONS:
        raise PyAscCompileError(
            f"unknown precision {precision!r}",
            loc,
            'use precision="default" (the declared dtypes) or precision="mixed" (float32 '
            "interface, float16 storage inside)",
        )
    return str(precision)


def copy_array(gen: ExprGen, src: Arr, dtype: str, node: ast.AST) -> Arr:
    """A new local array of ``dtype`` holding ``src`` (each element rounded): one loop nest
    ``dst[i, j] = src[i, j]`` appended at ``gen.block``."""
    buf = gen.add(asc_loop.AllocOp(MemRefType(ir_type(dtype), list(src.shape))), node).results[0]
    outer = gen.block
    ivs: list[SSAValue] = []
    loops: list[asc_loop.ForOp] = []
    try:
        for d in src.shape:
            loop = asc_loop.ForOp(0, d, 1)
            gen.add(loop, node)
            loops.append(loop)
            gen.block = loop.body.block
            ivs.append(loop.body.block.args[0])
        v = gen.add(asc_loop.LoadOp(src.value, ivs), node).results[0]
        gen.add(asc_loop.StoreOp(v, buf, ivs), node)
        for loop in reversed(loops):
            gen.block = loop.body.block
            gen.add(asc_loop.YieldOp(), node)
    finally:
        gen.block = outer
    return Arr(buf, src.shape, dtype, True)
