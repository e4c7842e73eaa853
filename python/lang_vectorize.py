"""``@lang.vectorize``: a scalar function -> an ``asc_loop`` module of an elementwise kernel
over the broadcast shape of its array arguments (NumPy broadcasting, as ``numpy.vectorize``).

The module loops over every axis of the broadcast shape; an argument reads its element with
the loop variables of its own axes (right-aligned), index 0 on its size-1 axes; the function
body is inlined on those elements (numbers are compile-time constants) and its result is
stored. ``asc-raise-loops`` then makes one vector kernel of it.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Block, Region, SSAValue

from pyasc_mlir.dialects import asc, asc_loop
from pyasc_mlir.frontend.lang_exprs import Reg, Scal
from pyasc_mlir.frontend.lang_frontend import LangGen
from pyasc_mlir.frontend.source import parse_function
from pyasc_mlir.types import TensorDesc, dtype_name, ir_type

__all__ = ["build_vectorized_module", "result_dtype"]


def result_dtype(dtypes: Sequence[str]) -> str:
    """The result dtype of a vectorized call: the arrays' dtype when they share one 16-bit
    dtype, else float32."""
    return dtypes[0] if len(set(dtypes)) == 1 else "float32"


def build_vectorized_module(
    fn: types.FunctionType, args: Sequence[object], name: str
) -> tuple[ModuleOp, list[str]]:
    """The module of ``@lang.vectorize`` function ``fn`` for ``args`` (a ``TensorDesc`` per
    array argument, a number per constant one).

    Raises:
        pyasc_mlir.errors.PyAscCompileError: no array argument, shapes that do not
            broadcast, or the body's own errors (as in ``@lang.kernel``; the result must be
            a number)."""
    node, file, delta = parse_function(fn, None)
    gen = LangGen(fn)
    gen.file, gen.delta, gen.globals, gen.dims = file, delta, fn.__globals__, {}
    descs = [a for a in args if isinstance(a, TensorDesc)]
    if not descs:
        raise gen.error(node, "a vectorized function needs an array argument", "pass arrays")
    try:
        shape = tuple(np.broadcast_shapes(*(d.static_shape for d in descs)))
    except ValueError:
        shapes = ", ".join(str(list(d.static_shape)) for d in descs)
        raise gen.error(
            node, f"the arguments' shapes {shapes} do not broadcast", "NumPy broadcasting rules"
        ) from None
    types_in = [TensorType(ir_type(dtype_name(d.dtype)), list(d.static_shape)) for d in descs]
    dtype = result_dtype([dtype_name(d.dtype) for d in descs])
    top = Block(arg_types=types_in)
    gen.block, gen.env = top, {}
    out = gen.add(asc_loop.AllocOp(MemRefType(ir_type(dtype), list(shape))), node).results[0]
    loops = _loops(gen, shape, node)
    ivs: list[SSAValue] = [lp.body.block.args[0] for lp in loops]
    values: list[Any] = []
    it = iter(top.args)
    for a in args:
        if isinstance(a, TensorDesc):
            values.append(_element(gen, next(it), a.static_shape, shape, ivs, node))
        else:
            values.append(a)
    result = gen.call_helper(fn, values, {}, node)
    if isinstance(result, Reg):
        result = gen.read_reg(result, node)
    if not isinstance(result, Scal | int | float) or isinstance(result, bool):
        raise gen.error(
            node, f"a vectorized function returns a number, not {gen.describe(result)}", ""
        )
    gen.add(asc_loop.StoreOp(gen.scalar(result, node), out, ivs), node)
    for loop in reversed(loops):
        gen.block = loop.body.block
        gen.add(asc_loop.YieldOp(), node)
    gen.block = top
    tensor = gen.add(asc_loop.ToTensorOp(out), node).results[0]
    ret = func.ReturnOp(tensor)
    top.add_op(ret)
    fop = func.FuncOp(name, (types_in, [tensor.type]), Region(top))
    for op in (ret, fop):
        op.attributes[asc.LOC_ATTR] = StringAttr(str(gen.loc(node)))
    return ModuleOp([fop]), [dtype]


def _loops(gen: LangGen, shape: tuple[int, ...], node: ast.AST) -> list[asc_loop.ForOp]:
    """One loop per axis, nested; ``gen.block`` is left in the innermost body."""
    loops: list[asc_loop.ForOp] = []
    for extent in shape:
        loop = asc_loop.ForOp(0, extent, 1)
        gen.add(loop, node)
        gen.block = loop.body.block
        loops.append(loop)
    return loops


def _element(
    gen: LangGen,
    arg: SSAValue,
    own: tuple[int, ...],
    shape: tuple[int, ...],
    ivs: list[SSAValue],
    node: ast.AST,
) -> Scal:
    """The element of an argument of shape ``own`` at the loops' position (right-aligned,
    index 0 on its broadcast size-1 axes)."""
    lead = len(ivs) - len(own)
    idx: list[SSAValue] = []
    for axis, d in enumerate(own):
        if d == 1 and shape[lead + axis] != 1:
            c = arith.ConstantOp(IntegerAttr(0, IndexType()))
            idx.append(gen.add(c, node).results[0])
        else:
            idx.append(ivs[lead + axis])
    return Scal(gen.add(asc_loop.LoadOp(arg, idx), node).results[0])
