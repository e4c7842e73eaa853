"""The ``asc_loop`` dialect: the loop level that the kernel language (``pyasc_mlir.language``)
emits, before ``asc-raise-loops`` turns its loop nests into tensor-level ``asc`` ops.

Memory semantics, element by element:

- ``asc_loop.alloc`` makes a local array ``memref<shape x f16|f32>`` (``fill``: every element
  set to that number; none: uninitialised). A rank-0 ``memref<f32>`` is a scalar variable that
  changes inside a loop (``acc += a[i, k] * b[k, j]``).
- ``asc_loop.for`` runs its body for ``i = lb, lb + step, ... < ub`` (static bounds, or
  ``< min(ub, bound)`` with an index operand ``bound``; the body's block argument is
  ``i : index``); ``asc_loop.yield`` ends the body.
- ``asc_loop.load %src[%i, %j]`` reads one element of a ``tensor`` (a kernel argument) or of a
  local ``memref`` and widens it to ``f32``; ``asc_loop.store %v, %dst[%i, %j]`` rounds the
  ``f32`` value to the array's dtype (round to nearest even) and writes it. Indices are loop
  variables or ``arith.constant : index`` values.
- Scalar arithmetic is on ``f32``: ``asc_loop.const``, ``asc_loop.unary``/``asc_loop.binary``
  with the op table's kinds (``dialects/opset.py``: the same semantics as ``asc.unary``/
  ``asc.binary`` on one element), ``asc_loop.round`` (``lang.cast`` to a dtype: round to it,
  then widen back to f32).
- ``asc_loop.to_tensor`` gives the final contents of a local array as a ``tensor`` (what the
  kernel returns).

Parallel nests (``@lang.parallel(num_workers=W)``): the kernel runs on ``W`` workers (cores),
every statement on every worker (SPMD), except that a distributed loop runs, on worker ``b``,
only the iterations of ``b``'s share (:func:`share`: contiguous, DataBlock-aligned). Its
*reduction variables* are the rank-0 arrays it writes that exist before it: each worker starts
them from their value at loop entry and ends with its own *partial*.
``asc_loop.allreduce`` combines the partials of the last distributed loop that wrote its
operands, in worker order, starting from ``init``: ``sum`` with a compensated (Kahan) add of
each partial and of the negated compensation (its ``comp`` operand;
``scalar_f32.kahan_step``), ``max``/``min`` with the op table's ``max``/``min``.
Sequentially (the interpreter) a distributed loop runs the shares
one worker after another, resetting the reduction variables between them; the kernel
(``asc-lower-loops``) runs them on ``W`` cores with a GM workspace and ``SyncAll``.

This is the same numeric model as the tensor frontend (fp16 operands are computed in fp32 and
rounded once when stored).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    Float32Type,
    FloatAttr,
    IndexType,
    IntAttr,
    MemRefType,
    StringAttr,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import HasParent, IsTerminator
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects.asc_loop_nest import NestOp, NestYieldOp
from pyasc_mlir.dialects.scalar_f32 import BinaryBase, ConstBase, KahanBase, RoundBase, UnaryBase
from pyasc_mlir.platform import DCACHE_LINE_BYTES, ceil_div

__all__ = [
    "AllocOp",
    "AllreduceOp",
    "AscLoop",
    "BinaryOp",
    "ConstOp",
    "ForOp",
    "KahanOp",
    "LoadOp",
    "NestOp",
    "NestYieldOp",
    "RoundOp",
    "StoreOp",
    "ToTensorOp",
    "UnaryOp",
    "YieldOp",
    "share",
]

SHARE_ALIGN = DCACHE_LINE_BYTES // 2
"""Iterations per unit of a distributed loop's shares: 32 elements of fp16 are one DCache line
(:data:`~pyasc_mlir.platform.DCACHE_LINE_BYTES`; two of fp32), so no two cores write the same
line of a result with scalar stores."""


def share(n: int, workers: int, b: int, align: int = SHARE_ALIGN) -> tuple[int, int]:
    """``[start, end)`` of worker ``b``'s iterations of a distributed loop over ``0..n``: the
    ``ceil(n / align)`` units split as the work split does (``units // workers`` each, the
    first ``units % workers`` one more), clipped to ``n``; shares may be empty."""
    units = ceil_div(n, align)
    per, rem = divmod(units, workers)
    u0 = b * per + min(b, rem)
    u1 = u0 + per + (1 if b < rem else 0)
    return min(u0 * align, n), min(u1 * align, n)


def _check_indices(op: IRDLOperation, array: Attribute, indices: Sequence[SSAValue]) -> None:
    if not isinstance(array, TensorType | MemRefType):
        raise VerifyException(f"{op.name}: the array must be a tensor or a memref, got {array}")
    if len(indices) != array.get_num_dims():
        raise VerifyException(
            f"{op.name}: {len(indices)} indices for a rank-{array.get_num_dims()} array"
        )
    for v in indices:
        if not isinstance(v.type, IndexType):
            raise VerifyException(f"{op.name}: indices must be of type index, got {v.type}")


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A local array (``lang.empty/zeros/ones/full``); ``fill``: its initial value."""

    name = "asc_loop.alloc"
    fill = opt_prop_def(FloatAttr)
    result = result_def(MemRefType)
    assembly_format = "(`fill` $fill^)? attr-dict `:` type($result)"

    def __init__(self, result_type: MemRefType, fill: float | None = None):
        props = {} if fill is None else {"fill": FloatAttr(float(fill), 64)}
        super().__init__(properties=props, result_types=[result_type])

    @property
    def fill_value(self) -> float | None:
        return None if self.fill is None else float(self.fill.value.data)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of ``asc_loop.for``."""

    name = "asc_loop.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(ForOp)))
    assembly_format = "attr-dict"


@irdl_op_definition
class ForOp(IRDLOperation):
    """``for i in range(lb, ub, step)`` with static bounds (``step`` > 0); the body block has
    one argument, the loop variable ``i : index``. With ``bound`` (an index value, e.g. an
    outer loop variable: a triangular loop ``range(i + 1)``) the loop stops before
    ``min(ub, bound)``; ``ub`` is then the largest value ``bound`` takes."""

    name = "asc_loop.for"
    lb = prop_def(IntAttr)
    ub = prop_def(IntAttr)
    step = prop_def(IntAttr)
    workers = opt_prop_def(IntAttr)
    bound = opt_operand_def(IndexType)
    body = region_def("single_block")
    assembly_format = (
        "$lb `to` $ub (`bound` $bound^)? `step` $step (`workers` $workers^)? $body attr-dict"
    )

    def __init__(
        self, lb: int, ub: int, step: int, bound: SSAValue | None = None, workers: int = 0
    ):
        block = Block(arg_types=[IndexType()])
        props = {"lb": IntAttr(lb), "ub": IntAttr(ub), "step": IntAttr(step)}
        if workers:
            props["workers"] = IntAttr(workers)
        super().__init__(
            operands=[[bound] if bound is not None else []],
            properties=props,
            regions=[Region(block)],
        )

    @property
    def num_workers(self) -> int:
        """``W`` of a distributed loop, 0 for an ordinary one."""
        return 0 if self.workers is None else self.workers.data

    @property
    def bounds(self) -> tuple[int, int, int]:
        return self.lb.data, self.ub.data, self.step.data

    @property
    def trip_count(self) -> int:
        lb, ub, step = self.bounds
        return len(range(lb, ub, step))

    def verify_(self) -> None:
        if self.step.data <= 0:
            raise VerifyException(f"{self.name}: step must be positive, got {self.step.data}")
        args = self.body.block.args
        if len(args) != 1 or not isinstance(args[0].type, IndexType):
            raise VerifyException(f"{self.name}: the body takes one index argument")
        if self.workers is not None:
            if self.workers.data < 1 or self.bound is not None or self.bounds[::2] != (0, 1):
                raise VerifyException(
                    f"{self.name}: a distributed loop runs 0 to ub step 1 on workers >= 1"
                )


@irdl_op_definition
class LoadOp(IRDLOperation):
    """One element of a tensor or local array, widened to f32."""

    name = "asc_loop.load"
    array = operand_def()
    indices = var_operand_def(IndexType)
    result = result_def(Float32Type)
    traits = traits_def()
    assembly_format = "$array `[` $indices `]` attr-dict `:` type($array)"

    def __init__(self, array: SSAValue, indices: Sequence[SSAValue]):
        super().__init__(operands=[array, list(indices)], result_types=[f32])

    def verify_(self) -> None:
        _check_indices(self, self.array.type, self.indices)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write an f32 value into one element of a local array (rounded to its dtype)."""

    name = "asc_loop.store"
    value = operand_def(Float32Type)
    array = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    assembly_format = "$value `,` $array `[` $indices `]` attr-dict `:` type($array)"

    def __init__(self, value: SSAValue, array: SSAValue, indices: Sequence[SSAValue]):
        super().__init__(operands=[value, array, list(indices)])

    def verify_(self) -> None:
        _check_indices(self, self.array.type, self.indices)


@irdl_op_definition
class ConstOp(ConstBase):
    """A scalar f32 constant."""

    name = "asc_loop.const"


@irdl_op_definition
class UnaryOp(UnaryBase):
    """A scalar unary op of a kind of the op table (``exp``, ``tanh``, ``erf``, ...)."""

    name = "asc_loop.unary"


@irdl_op_definition
class BinaryOp(BinaryBase):
    """A scalar binary op ``add sub mul div max min``."""

    name = "asc_loop.binary"


@irdl_op_definition
class KahanOp(KahanBase):
    """One compensated add (``scalar_f32.kahan_step``): a sum in a distributed loop."""

    name = "asc_loop.kahan"


@irdl_op_definition
class RoundOp(RoundBase):
    """``lang.cast(x, dtype)`` on a scalar: round to ``dtype`` (nearest even), widen back."""

    name = "asc_loop.round"


@irdl_op_definition
class AllreduceOp(IRDLOperation):
    """``lang.allreduce(acc, op=kind)``: the partials of the rank-0 array ``acc`` (and of its
    compensation ``comp``, ``sum`` only) combined over the workers, from ``init`` (see
    "Parallel nests" in the module docstring); the same f32 value on every worker."""

    name = "asc_loop.allreduce"
    kind = prop_def(StringAttr)
    init = operand_def(Float32Type)
    acc = operand_def(MemRefType)
    comp = opt_operand_def(MemRefType)
    result = result_def(Float32Type)
    assembly_format = (
        "$kind $init `,` $acc (`comp` $comp^)? attr-dict `:` type($acc) (`,` type($comp)^)?"
    )

    def __init__(self, kind: str, init: SSAValue, acc: SSAValue, comp: SSAValue | None = None):
        super().__init__(
            operands=[init, acc, [comp] if comp is not None else []],
            properties={"kind": StringAttr(kind)},
            result_types=[f32],
        )

    def verify_(self) -> None:
        if self.kind.data not in ("sum", "max", "min"):
            raise VerifyException(f"{self.name}: kind must be sum, max or min")
        if (self.comp is not None) != (self.kind.data == "sum"):
            raise VerifyException(f"{self.name}: a sum has a compensation operand, max/min none")
        for v in (self.acc, self.comp):
            t = None if v is None else v.type
            if t is not None and (
                not isinstance(t, MemRefType) or t.get_shape() or t.element_type != f32
            ):
                raise VerifyException(f"{self.name}: operands are memref<f32> scalars")


@irdl_op_definition
class ToTensorOp(IRDLOperation):
    """The final contents of a local array as a tensor of the same shape and dtype."""

    name = "asc_loop.to_tensor"
    array = operand_def(MemRefType)
    result = result_def(TensorType)
    assembly_format = "$array attr-dict `:` type($array) `->` type($result)"

    def __init__(self, array: SSAValue):
        t = array.type
        assert isinstance(t, MemRefType)
        super().__init__(operands=[array], result_types=[TensorType(t.element_type, t.get_shape())])


AscLoop = Dialect(
    "asc_loop",
    [
        AllocOp,
        AllreduceOp,
        ForOp,
        YieldOp,
        LoadOp,
        StoreOp,
        ConstOp,
        UnaryOp,
        BinaryOp,
        KahanOp,
        RoundOp,
        ToTensorOp,
        NestOp,
        NestYieldOp,
    ],
)
"""The loop-level dialect of the kernel language."""
