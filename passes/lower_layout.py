"""``asc-lower-layout``: data-movement kernels for ``asc.transpose``, ``asc.concat`` and
``asc.slice``.

``asc-fuse`` puts each transpose/concat (and each slice no vector kernel reads in place, see
``iteration_space.GmView``) in its own one-op ``asc.fusion``; this pass (run before
``asc-lower-cube`` and ``asc-tile``) lowers each such fusion to a tile-level kernel (a
``func.func`` with ``asc.kernel``) and an ``asc.launch``, using only the existing GM <-> UB block
copies (``asc.copy_in``/``asc.copy_out``) and ``asc.vcopy``, so the converter, emitter and CPU
header need nothing new.

Every op is a list of *parts*; a part copies a box ``P`` of one input to the output at
``dst_off``: output element ``dst_off + q`` (for ``q`` in ``P``) is input element
``src_base + sum_d q_d * src_stride_d``. Slice: one part, ``src_base`` at the offsets.
Transpose: one part, ``src_stride_d`` = the input stride of dim ``perm[d]``. Concat: one part
per input, ``dst_off`` = the running sum along the axis.

A part's work units are (output row, chunk of the last dim) pairs; all parts' units form one
range split over ``blockDim`` cores as ``asc-tile`` splits rows (core ``b`` takes
``units_per_core + (b < units_rem)`` consecutive units); each part runs a loop over its share.
One unit: ``copy_in`` GM -> UB, ``vcopy`` to the copy-out buffer, ``copy_out`` UB -> GM.

* Last dim kept (slices, concats, permutations of the leading dims): the chunk is contiguous in
  GM on both sides, one block of ``clen`` elements each way.
* Last dim moved (e.g. a 2-D transpose): the chunk's elements are ``src_stride_last`` apart in
  the input, so they are gathered element by element: ``copy_in`` of ``clen`` one-element blocks
  (GM gap ``stride - 1``) into 16-element UB slots (every UB block starts on a 32-byte
  DataBlock), and ``copy_out`` of ``clen`` one-element blocks to consecutive GM elements. Cost:
  one DMA block per element each way and 16x the UB per element, so chunks are at most
  ``MAX_BLOCK_COUNT`` elements; a tiled in-UB transpose would move whole DataBlocks instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import (
    IndexType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.passes import ModulePass

from pyasc_mlir.dialects import asc, attrs
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import install_kernel, kernel_name, loc_of
from pyasc_mlir.passes.ir_builder import IRBuilder
from pyasc_mlir.passes.iteration_space import element_type_of, shape_of
from pyasc_mlir.passes.views import LAYOUT_OPS, row_major_strides
from pyasc_mlir.passes.work_split import core_range, work_split_fields
from pyasc_mlir.platform import (
    COUNT_ALIGN,
    DEFAULT_PLATFORM,
    LANE_ALIGN,
    MAX_BLOCK_COUNT,
    ceil_div,
    get_platform,
    round_up,
)


@dataclass
class Part:
    """Copy box ``box`` of input ``src`` (a fusion block argument) into the output at
    ``dst_off``; see the module docstring. ``chunk``: elements of the last dim per unit."""

    src: SSAValue
    box: tuple[int, ...]
    dst_off: tuple[int, ...]
    src_base: int
    src_strides: tuple[int, ...]
    chunk: int = 1

    @property
    def rows(self) -> int:
        return math.prod(self.box[:-1])

    @property
    def length(self) -> int:
        return self.box[-1]

    @property
    def gather(self) -> bool:
        """The last dim is not contiguous in the input: element-granular copies."""
        return self.src_strides[-1] != 1

    @property
    def slot(self) -> int:
        """UB elements per copied element (16 when gathering, else 1)."""
        return LANE_ALIGN if self.gather else 1

    @property
    def chunks(self) -> int:
        return ceil_div(self.length, self.chunk)

    @property
    def units(self) -> int:
        return self.rows * self.chunks

    def buffer_elems(self) -> int:
        return round_up(self.chunk * self.slot, COUNT_ALIGN)


def parts_of(op: asc.TransposeOp | asc.ConcatOp | asc.SliceOp) -> list[Part]:
    """The parts of a data-movement op (operands are the fusion's block arguments)."""
    if isinstance(op, asc.SliceOp):
        shape = shape_of(op.input)
        st = row_major_strides(shape)
        base = sum(o * s for o, s in zip(op.starts, st, strict=True))
        return [Part(op.input, op.extents, (0,) * len(shape), base, tuple(st))]
    if isinstance(op, asc.TransposeOp):
        st = row_major_strides(shape_of(op.input))
        return [
            Part(
                op.input,
                shape_of(op.result),
                (0,) * len(st),
                0,
                tuple(st[p] for p in op.permutation),
            )
        ]
    parts: list[Part] = []
    at = 0
    for v in op.inputs:
        shape = shape_of(v)
        off = [0] * len(shape)
        off[op.dim] = at
        at += shape[op.dim]
        parts.append(Part(v, shape, tuple(off), 0, tuple(row_major_strides(shape))))
    return parts


def _choose_chunks(parts: list[Part], bits: int, usable: int, buffers: int) -> None:
    """Largest chunk per part so every part's copy-in and copy-out buffers (``buffers`` copies
    each, all live at once as ``asc-buffer-alloc`` counts queue buffers) fit ``usable`` bytes."""
    per_part = usable // max(1, len(parts))
    for p in parts:
        elems = per_part * 8 // (bits * 2 * buffers) // COUNT_ALIGN * COUNT_ALIGN
        cap = elems // p.slot
        cap = min(cap, MAX_BLOCK_COUNT) if p.gather else cap // LANE_ALIGN * LANE_ALIGN
        if cap < 1:
            raise PyAscCompileError("a data-movement kernel does not fit in UB", None)
        p.chunk = min(p.length, cap)


class _LayoutKernel:
    """Builds the tile-level kernel of one data-movement fusion."""

    def __init__(
        self,
        fusion: asc.FusionOp,
        op: asc.TransposeOp | asc.ConcatOp | asc.SliceOp,
        parts: list[Part],
        name: str,
    ):
        self.fusion = fusion
        self.op = op
        self.parts = parts
        self.name = name
        self.loc = fusion.attributes.get(asc.LOC_ATTR)

    def _unit(
        self, ix: IRBuilder, p: Part, v: SSAValue, src: SSAValue, dst: SSAValue, dtype: Attribute
    ) -> None:
        """Copy unit ``v`` (row-major over (row, chunk)) of part ``p``."""
        out_strides = row_major_strides(shape_of(self.op.result))
        row = ix.divi(v, p.chunks)
        c0 = ix.muli(ix.remi(v, p.chunks), p.chunk)
        clen = ix.mini(p.chunk, ix.subi(p.length, c0))
        src_off: SSAValue | int = ix.addi(p.src_base, ix.muli(c0, p.src_strides[-1]))
        n = len(p.box)
        dst_off: SSAValue | int = ix.addi(
            sum(o * s for o, s in zip(p.dst_off, out_strides, strict=True)), c0
        )
        inner = 1
        for d in range(n - 2, -1, -1):
            q = ix.remi(ix.divi(row, inner), p.box[d]) if d > 0 else ix.divi(row, inner)
            src_off = ix.addi(src_off, ix.muli(q, p.src_strides[d]))
            dst_off = ix.addi(dst_off, ix.muli(q, out_strides[d]))
            inner *= p.box[d]
        elems = p.buffer_elems()
        inb = asc.AllocOp("in", elems, dtype)
        outb = asc.AllocOp("out", elems, dtype)
        ix.add(inb)
        ix.add(outb)
        if p.gather:
            cin = [src_off, 0, clen, 1, p.src_strides[-1] - 1, LANE_ALIGN]
            cout = [dst_off, 0, clen, 1, 0, LANE_ALIGN]
        else:
            cin = [src_off, 0, 1, clen, 0, elems]
            cout = [dst_off, 0, 1, clen, 0, elems]
        ix.add(asc.CopyInOp(src, inb.result, [ix.value(a) for a in cin]))
        ix.add(asc.VCopyOp(outb.result, inb.result, ix.count(clen, p.slot)))
        ix.add(asc.CopyOutOp(outb.result, dst, [ix.value(a) for a in cout]))

    def build(self) -> func.FuncOp:
        args = list(self.fusion.body.block.args)
        result = self.op.results[0]
        gm_types = [
            asc.buffer_type(math.prod(shape_of(v)) or 1, element_type_of(v), "gm")
            for v in [*args, result]
        ]
        entry = Block(arg_types=gm_types)
        gm_of: dict[SSAValue, SSAValue] = dict(zip(args, entry.args, strict=False))
        out_gm = entry.args[-1]
        ix = IRBuilder(entry, self.loc)
        start, end, _ = core_range(ix, tile_units=False)
        dtype = element_type_of(result)
        base = 0
        for p in self.parts:
            lo = ix.subi(ix.maxi(start, base), base)
            hi = ix.subi(ix.mini(end, base + p.units), base)
            hi = ix.maxi(hi, lo)
            body = Block(arg_types=[IndexType()])
            bx = IRBuilder(body, self.loc)
            self._unit(bx, p, body.args[0], gm_of[p.src], out_gm, dtype)
            bx.add(scf.YieldOp())
            ix.add(scf.ForOp(lo, hi, ix.c(1), [], body))
            base += p.units
        ix.add(func.ReturnOp())
        kernel = func.FuncOp(self.name, (gm_types, []), Region(entry))
        attrs.mark_kernel(kernel)
        if self.loc is not None:
            kernel.attributes[asc.LOC_ATTR] = self.loc
        return kernel


def layout_op_of(fusion: asc.FusionOp) -> asc.TransposeOp | asc.ConcatOp | asc.SliceOp | None:
    """The data-movement op of a fusion made of it (and optionally a reshape of its result,
    which changes no bytes) that yields its result, else ``None``."""
    ops = [o for o in fusion.body.block.ops if not isinstance(o, asc.YieldOp)]
    term = fusion.body.block.last_op
    if not ops or not isinstance(ops[0], LAYOUT_OPS) or not isinstance(term, asc.YieldOp):
        return None
    last = ops[-1]
    if len(ops) == 2 and not (isinstance(last, asc.ReshapeOp) and last.input == ops[0].results[0]):
        return None
    return ops[0] if len(ops) <= 2 and list(term.values) == [last.results[0]] else None


def tiling_values(parts: list[Part], cores: int) -> dict[str, int]:
    """The tiling struct (int64 fields): the unit split over cores (same fields as
    ``asc-tile``'s, so the host code and tools read it alike)."""
    first = parts[0]
    return {
        **work_split_fields(sum(p.units for p in parts), cores),
        "tile_units": 1,
        "rows": sum(p.rows for p in parts),
        "m": 1,
        "l": first.length,
        "chunk_len": first.chunk,
    }


@dataclass(frozen=True)
class AscLowerLayoutPass(ModulePass):
    """Lower every one-op ``asc.fusion`` of ``asc.transpose``/``asc.concat``/``asc.slice`` to a
    data-movement kernel and an ``asc.launch`` (see the module docstring). Options:
    ``platform`` (table name), ``buffers`` (copies of each copy buffer assumed when sizing
    chunks; 2 = double buffering)."""

    name = "asc-lower-layout"
    platform: str = DEFAULT_PLATFORM
    buffers: int = 2

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plat = get_platform(self.platform)
        for fusion in [o for o in op.walk() if isinstance(o, asc.FusionOp)]:
            lop = layout_op_of(fusion)
            if lop is None:
                continue
            rt = lop.results[0].type
            assert isinstance(rt, TensorType)
            bits = asc.element_bits(rt.element_type)
            if bits not in (16, 32):
                raise PyAscCompileError(
                    f"{lop.name} of {rt}: data-movement kernels move f16, bf16 or f32 values",
                    loc_of(lop),
                    "masks are moved as 1.0/0.0 by the frontend",
                )
            parts = [p for p in parts_of(lop) if p.units > 0]
            _choose_chunks(parts, bits, plat.ub_usable_bytes, self.buffers)
            name = kernel_name(op, fusion)
            kernel = _LayoutKernel(fusion, lop, parts, name).build()
            values = tiling_values(parts, plat.vector_cores)
            install_kernel(op, fusion, kernel, values, plat.name)
