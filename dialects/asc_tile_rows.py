"""Tile-level ``asc`` row ops on UB tiles laid out ``[rows, M, Ls]``: ``asc.vreduce`` (a
reduction over the last or the middle axis of each row) and ``asc.vbroadcast`` (a row vector
or per-row scalars spread over a tile). ``pyasc_mlir.dialects.asc`` re-exports them."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    AnyFloat,
    BoolAttr,
    IndexType,
    MemRefType,
    StringAttr,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects.asc_attrs import (
    VECTOR_REDUCE_KINDS,
    check_kind,
    ub_buffer,
)
from pyasc_mlir.dialects.bounds import (
    check_not_negative,
)


@irdl_op_definition
class VReduceOp(IRDLOperation):
    """Reduce a ``[rows, m, ls]`` tile (``src``, valid length ``length`` <= ``ls`` per row)
    with ``kind`` (sum | max | min).

    ``axis = "last"``: ``dst[(r*m + j) * 16] = reduce(src[(r*m + j)*ls : ... + length])``
    (one ``ReduceSum/Max/Min`` per row; results 16 elements apart, one DataBlock for fp16,
    two for fp32). ``axis = "mid"``: ``dst[r*ls + k] = reduce_j src[(r*m + j)*ls + k]`` for
    k < ls (``Add``/``Max``/``Min`` of whole rows). ``work`` is scratch for ``ReduceSum``."""

    name = "asc.vreduce"
    kind = prop_def(StringAttr)
    axis = prop_def(StringAttr)
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    work = operand_def(MemRefType)
    rows = operand_def(IndexType)
    m = operand_def(IndexType)
    length = operand_def(IndexType)
    ls = operand_def(IndexType)
    assembly_format = (
        "$kind $axis $dst `,` $src `,` $work `rows` $rows `m` $m `len` $length "
        "`ls` $ls attr-dict `:` type($dst) `,` type($src) `,` type($work)"
    )

    def __init__(
        self,
        kind: str,
        axis: str,
        dst: SSAValue,
        src: SSAValue,
        work: SSAValue,
        sizes: Sequence[SSAValue],
    ):
        super().__init__(
            operands=[dst, src, work, *sizes],
            properties={"kind": StringAttr(kind), "axis": StringAttr(axis)},
        )

    def verify_(self) -> None:
        check_kind(self, self.kind.data, VECTOR_REDUCE_KINDS, "reduce kind")
        check_kind(self, self.axis.data, ("last", "mid"), "reduce axis")
        for v in (self.dst, self.src, self.work):
            if not isinstance(ub_buffer(self, v, "operand").element_type, AnyFloat):
                raise VerifyException(f"{self.name}: operands must be float buffers")
        known = check_not_negative(self, rows=self.rows, m=self.m, len=self.length, ls=self.ls)
        length, ls = known.get("len"), known.get("ls")
        if length is not None and ls is not None and length > ls:
            raise VerifyException(f"{self.name}: len {length} exceeds the row stride ls {ls}")


@irdl_op_definition
class VBroadcastOp(IRDLOperation):
    """Expand a tile: ``dst`` is ``[rows, m, ls]``; ``src`` is the same with size-1 dims
    where ``src_rows``/``src_m``/``src_l`` are false (a missing trailing dim is stored as 16
    elements, value at index 0). Lowers to UB->UB ``DataCopy`` (rows, m) and ``Duplicate``
    (lanes); per-row scalars with a ``work`` buffer (scratch of ``round_up(rows, 8)``
    elements; ``m = 1``, ``rows <= 255``, ``ls`` a constant number of DataBlocks, ``dst``
    holding ``round_up(rows, 8)`` rows) to ``WholeReduceMax`` + ``Brcb`` over all rows."""

    name = "asc.vbroadcast"
    irdl_options = (ParsePropInAttrDict(),)
    src_rows = prop_def(BoolAttr)
    src_m = prop_def(BoolAttr)
    src_l = prop_def(BoolAttr)
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    rows = operand_def(IndexType)
    m = operand_def(IndexType)
    ls = operand_def(IndexType)
    work = opt_operand_def(MemRefType)
    assembly_format = (
        "$dst `,` $src `rows` $rows `m` $m `ls` $ls (`work` $work^)? attr-dict `:` type($dst) "
        "`,` type($src) (`,` type($work)^)?"
    )

    def __init__(
        self,
        dst: SSAValue,
        src: SSAValue,
        sizes: Sequence[SSAValue],
        has: Sequence[bool],
        work: SSAValue | None = None,
    ):
        super().__init__(
            operands=[dst, src, *sizes, [] if work is None else [work]],
            properties={
                "src_rows": BoolAttr.from_bool(has[0]),
                "src_m": BoolAttr.from_bool(has[1]),
                "src_l": BoolAttr.from_bool(has[2]),
            },
        )

    @property
    def src_has(self) -> tuple[bool, bool, bool]:
        return (
            bool(self.src_rows.value.data),
            bool(self.src_m.value.data),
            bool(self.src_l.value.data),
        )

    def verify_(self) -> None:
        d = ub_buffer(self, self.dst, "destination")
        s = ub_buffer(self, self.src, "source")
        w = s if self.work is None else ub_buffer(self, self.work, "work")
        if not d.element_type == s.element_type == w.element_type:
            raise VerifyException(f"{self.name}: dtypes differ")
        known = check_not_negative(self, rows=self.rows, m=self.m, ls=self.ls)
        if len(known) == 3:
            total = known["rows"] * known["m"] * known["ls"]
            size = d.get_shape()[0]
            if total > size:
                raise VerifyException(
                    f"{self.name}: the destination tile rows {known['rows']} x "
                    f"m {known['m']} x ls {known['ls']} = {total} elements "
                    f"exceeds the {size} elements of the destination buffer"
                )
