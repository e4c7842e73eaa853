"""``asc_loop.nest``: a loop nest of the kernel language that ``asc-raise-loops`` could not
raise, kept as scalar loops (the scalar-loop fallback, issue 11).

It sits at the tensor level between the raised ops: its operands are tensors (the kernel
arguments and the current contents of the local arrays the nest reads or partly writes), its
results the final contents of the arrays it writes. The single-block region holds the nest's
original ``asc_loop`` ops; its block arguments are ``memref``s of the operands' shapes and
dtypes (the arrays, mutable, initialised with the operands' values), and arrays the nest
starts from scratch are ``asc_loop.alloc`` ops inside the region (a fill, or NaN). The
terminator ``asc_loop.nest_yield`` names the arrays whose final contents are the results, in
order. ``asc-lower-loops`` turns the op into one single-core kernel that runs the loops on
the scalar unit (``passes/lower_loops.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsTerminator
from xdsl.utils.exceptions import VerifyException

__all__ = ["NestOp", "NestYieldOp"]


@irdl_op_definition
class NestYieldOp(IRDLOperation):
    """Terminator of ``asc_loop.nest``: the arrays whose final contents are its results."""

    name = "asc_loop.nest_yield"
    arrays = var_operand_def(MemRefType)
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(NestOp)))
    assembly_format = "($arrays^ `:` type($arrays))? attr-dict"

    def __init__(self, arrays: Sequence[SSAValue]):
        super().__init__(operands=[list(arrays)])


@irdl_op_definition
class NestOp(IRDLOperation):
    """A loop nest run as scalar loops: ``inputs`` (tensors) -> ``outputs`` (tensors), the
    region's block arguments the inputs as arrays (see the module docstring)."""

    name = "asc_loop.nest"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def()
    assembly_format = "`(` $inputs `)` $body attr-dict `:` functional-type($inputs, $outputs)"

    def __init__(self, inputs: Sequence[SSAValue], result_types: Sequence[Attribute]):
        arg_types = []
        for v in inputs:
            t = v.type
            assert isinstance(t, TensorType)
            arg_types.append(MemRefType(t.element_type, t.get_shape()))
        super().__init__(
            operands=[list(inputs)],
            result_types=[list(result_types)],
            regions=[Region(Block(arg_types=arg_types))],
        )

    def verify_(self) -> None:
        block = self.body.block
        if len(block.args) != len(self.inputs):
            raise VerifyException(f"{self.name}: one block argument per input")
        for a, v in zip(block.args, self.inputs, strict=True):
            t, m = v.type, a.type
            assert isinstance(t, TensorType)
            if not isinstance(m, MemRefType) or (
                m.element_type != t.element_type or m.get_shape() != t.get_shape()
            ):
                raise VerifyException(f"{self.name}: block argument {m} does not match {t}")
        term = block.last_op
        if not isinstance(term, NestYieldOp):
            raise VerifyException(f"{self.name}: the region must end with asc_loop.nest_yield")
        if len(term.arrays) != len(self.outputs):
            raise VerifyException(f"{self.name}: one yielded array per result")
        for y, r in zip(term.arrays, self.outputs, strict=True):
            m, t = y.type, r.type
            assert isinstance(m, MemRefType) and isinstance(t, TensorType)
            if m.element_type != t.element_type or m.get_shape() != t.get_shape():
                raise VerifyException(f"{self.name}: yielded {m} does not match result {t}")
