"""Tensors in GM seen through reshapes and transposes (strided views), and the op groups.

A Cube kernel reads matmul operands and writes results in place through chains of
:data:`VIEW_OPS`: :func:`operand_view` and :func:`result_view` compose them into strides of
the kernel argument's row-major buffer. :data:`LAYOUT_OPS` are the data-movement ops
``asc-fuse`` gives kernels of their own (``asc-lower-layout``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.passes.iteration_space import shape_of

VIEW_OPS = (asc.ReshapeOp, asc.TransposeOp)
"""Ops that only re-index a tensor: a Cube kernel folds them into the GM addressing of matmul
operands and results."""
LAYOUT_OPS = (asc.TransposeOp, asc.ConcatOp, asc.SliceOp)
"""Data-movement ops: a fusion made of one of them is lowered by ``asc-lower-layout``. A slice
of a vector kernel's input is instead read in place by that kernel (``asc-fuse``,
``iteration_space.GmView``); a slice stays a kernel of its own only when returned as is, when
its rows are not contiguous runs of its input, or in the ``per_op`` baseline."""


def row_major_strides(shape: tuple[int, ...]) -> list[int]:
    """Row-major element strides of a tensor of ``shape``."""
    out, step = [], 1
    for d in reversed(shape):
        out.append(step)
        step *= d
    return out[::-1]


def reshape_strides(
    shape: tuple[int, ...], strides: tuple[int, ...], new_shape: tuple[int, ...]
) -> tuple[int, ...] | None:
    """Strides that view a strided tensor of ``shape`` as ``new_shape`` (row-major element
    order kept), or ``None`` when dims to merge are not evenly strided. Size-1 dims get
    stride 1 (never used)."""
    old = [(d, st) for d, st in zip(shape, strides, strict=True) if d != 1]
    res = [1] * len(new_shape)
    cur_size, cur_stride = 1, 1
    for ni in reversed(range(len(new_shape))):
        d = new_shape[ni]
        if d == 1:
            continue
        if cur_size == 1:
            if not old:
                return None
            cur_size, cur_stride = old.pop()
        res[ni] = cur_stride
        if cur_size % d == 0:
            cur_size, cur_stride = cur_size // d, cur_stride * d
            continue
        if d % cur_size:
            return None
        need, expect = d // cur_size, cur_stride * cur_size
        cur_size = 1
        while need > 1:
            if not old or old[-1][1] != expect:
                return None
            od, ost = old.pop()
            if need % od == 0:
                need, expect = need // od, ost * od
            elif od % need == 0:
                cur_size, cur_stride, need = od // need, ost * need, 1
            else:
                return None
    return tuple(res) if cur_size == 1 and not old else None


@dataclass(frozen=True)
class View:
    """A tensor in GM seen through reshapes/transposes: element ``idx`` lives at
    ``sum(idx[i] * strides[i])`` of ``root``'s buffer."""

    root: SSAValue
    shape: tuple[int, ...]
    strides: tuple[int, ...]


def operand_view(v: SSAValue) -> View:
    """Follow reshapes/transposes from a matmul operand back to a kernel argument.

    Raises:
        PyAscCompileError: a reshape merges dims that are not evenly strided.
    """
    chain: list[Operation] = []
    while isinstance(v.owner, VIEW_OPS):
        chain.append(v.owner)
        v = v.owner.operands[0]
    shape = shape_of(v)
    strides = tuple(row_major_strides(shape))
    for op in reversed(chain):
        if isinstance(op, asc.TransposeOp):
            perm = op.permutation
            shape = tuple(shape[p] for p in perm)
            strides = tuple(strides[p] for p in perm)
        else:
            new = shape_of(op.results[0])
            got = reshape_strides(shape, strides, new)
            if got is None:
                raise PyAscCompileError(
                    f"cannot read {list(shape)} as {list(new)} in place for the matmul",
                    loc_of(op),
                    "make the tensor contiguous first (a separate operator)",
                )
            shape, strides = new, got
    return View(v, shape, strides)


def readable_in_place(v: SSAValue) -> bool:
    """The Cube can read matmul operand ``v`` (reshapes/transposes of a kernel argument) in
    place: the views compose to strides and one of the two matrix dims is contiguous."""
    try:
        view = operand_view(v)
    except PyAscCompileError:
        return False
    *_, d_row, d_col = view.shape
    *_, s_row, s_col = view.strides
    return 1 in (d_row, d_col, s_row, s_col)


def result_view(w: SSAValue) -> tuple[SSAValue, tuple[int, ...]]:
    """For a kernel result ``w`` computed by reshapes/transposes of an output-space value
    ``v``: ``v`` and the stride of each of ``v``'s axes in ``w``'s (row-major) buffer.

    Raises:
        PyAscCompileError: a reshape cannot be undone as a strided view.
    """
    shape = shape_of(w)
    strides = tuple(row_major_strides(shape))
    while isinstance(w.owner, VIEW_OPS):
        op = w.owner
        src = op.operands[0]
        if isinstance(op, asc.TransposeOp):
            perm = op.permutation
            inv_shape, inv_strides = [0] * len(perm), [0] * len(perm)
            for i, p in enumerate(perm):
                inv_shape[p], inv_strides[p] = shape[i], strides[i]
            shape, strides = tuple(inv_shape), tuple(inv_strides)
        else:
            got = reshape_strides(shape, strides, shape_of(src))
            if got is None:
                raise PyAscCompileError(
                    f"cannot write {list(shape_of(src))} as {list(shape)} in place",
                    loc_of(op),
                    "reshape in a separate operator",
                )
            shape, strides = shape_of(src), got
        w = src
    return w, strides
