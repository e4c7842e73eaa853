"""``convert-asc-to-ascendc``: lower tile-level kernels to the ``ascendc`` dialect.

* copy-in/copy-out buffers become ``TQue``s (``InitBuffer(que, buffers, bytes)``, VECIN/VECOUT)
  used in the canonical order ``AllocTensor`` -> ``DataCopy`` -> ``EnQue`` -> ``DeQue`` ->
  compute -> ``FreeTensor``; scratch and once-loaded buffers are slices of one
  ``TBuf<VECCALC>`` at the offsets ``asc-buffer-alloc`` chose (``TPipe`` hands out buffers
  sequentially, so the offsets coincide).
* GM<->UB copies become ``DataCopy`` when the data is contiguous and 32-byte aligned, else
  ``DataCopyPad`` (GM strides in bytes, UB strides in 32-byte blocks).
* Row reductions become one ``ReduceSum/Max/Min`` per row; reductions over the middle axis and
  broadcasts become loops of UB->UB ``DataCopy``, ``Add/Max/Min`` and ``GetValue`` +
  ``Duplicate`` (after a V->S sync).
* Every ``asc.mmad`` gets its own high-level ``Matmul`` object (at most 4 per kernel): a
  ``TCubeTiling`` filled from the kernel's tiling struct (fields ``mm<i>_<F>``, values from
  ``pyasc_mlir.cube_tiling``, added to the kernel's ``asc.tiling``), declared and registered
  with ``REGIST_MATMUL_OBJ`` before the first ``InitBuffer``; the op itself becomes
  ``SetTensorA(gmA[a_offset], transA)``, ``SetTensorB(gmB[b_offset], transB)``,
  ``SetTail(m, n, k)``, ``Iterate()``, ``GetTensorC(ub)``; ``End()`` runs once per object
  before the kernel returns. A destination in a VECIN queue is enqueued like a copy-in; one in
  the compute ``TBuf`` is followed by an MTE2->V sync.
Requires ``asc-buffer-alloc`` to have run (every ``asc.alloc`` has an offset).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DictionaryAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from pyasc_mlir import cube_tiling as ct
from pyasc_mlir.dialects import asc
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.platform import get_platform


def _ub_elem(t: Attribute) -> Attribute:
    """Element type a UB buffer has in Ascend C (masks are ``uint8_t`` bytes)."""
    assert isinstance(t, MemRefType)
    e = t.element_type
    return IntegerType(8) if isinstance(e, IntegerType) and e.width.data == 1 else e


def _aligned(n: int) -> int:
    return (n + 31) // 32 * 32


def _const_value(v: SSAValue) -> int | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


@dataclass
class _State:
    kernel: func.FuncOp
    vmap: dict[SSAValue, SSAValue] = field(default_factory=dict)
    queues: dict[asc.AllocOp, SSAValue] = field(default_factory=dict)
    gm: dict[SSAValue, SSAValue] = field(default_factory=dict)
    tbuf: SSAValue | None = None
    calc_base: int = 0
    matmuls: dict[asc.MmadOp, SSAValue] = field(default_factory=dict)


class _Out:
    """Appends new ops to a block."""

    def __init__(self, block: Block, loc: Attribute | None):
        self.block = block
        self.loc = loc

    def add(self, op: Operation) -> SSAValue | None:
        if self.loc is not None:
            op.attributes[asc.LOC_ATTR] = self.loc
        self.block.add_op(op)
        return op.results[0] if op.results else None

    def c(self, value: int) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def arith(self, cls: type[Operation], a: SSAValue | int, b: SSAValue | int) -> SSAValue:
        a = self.c(a) if isinstance(a, int) else a
        b = self.c(b) if isinstance(b, int) else b
        return self.add(cls(a, b))  # type: ignore[call-arg]

    def view(self, t: SSAValue, offset: SSAValue | int) -> SSAValue:
        if isinstance(offset, int):
            if offset == 0:
                return t
            offset = self.c(offset)
        elif _const_value(offset) == 0:
            return t
        return self.add(ac.SubviewOp(t, offset))

    def loop(self, upper: SSAValue, body_fn, lower: int = 0) -> None:  # noqa: ANN001
        body = Block(arg_types=[IndexType()])
        inner = _Out(body, self.loc)
        body_fn(inner, body.args[0])
        inner.add(scf.YieldOp())
        self.add(scf.ForOp(self.c(lower), upper, self.c(1), [], body))


class _Converter:
    def __init__(self, kernel: func.FuncOp):
        self.k = kernel
        self.st = _State(kernel)
        self.pending_enque: list[asc.AllocOp] = []
        self.dequeued: list[list[tuple[SSAValue, SSAValue]]] = []

    # -- setup -----------------------------------------------------------------------------
    def _prologue(self, out: _Out, entry: Block) -> None:
        st = self.st
        for old, new in zip(self.k.body.block.args, entry.args, strict=True):
            st.gm[old] = out.add(ac.GlobalBufferOp(new))
        allocs = [o for o in self.k.walk() if isinstance(o, asc.AllocOp)]
        if any(a.offset is None for a in allocs):
            raise PyAscCompileError("convert-asc-to-ascendc needs UB offsets",
                                    loc_of(self.k), "run asc-buffer-alloc first")
        self._matmuls(out)
        for a in sorted(allocs, key=lambda a: a.offset.value.data):  # type: ignore[union-attr]
            if a.role.data in ("in", "out"):
                pos = "VECIN" if a.role.data == "in" else "VECOUT"
                st.queues[a] = out.add(ac.InitQueueOp(pos, a.buffers.value.data,
                                                      _aligned(ct.dst_reserve_bytes(a))))
        calc = [a for a in allocs if a.role.data in ("tmp", "const")]
        if calc:
            st.calc_base = min(a.offset.value.data for a in calc)  # type: ignore[union-attr]
            top = max(a.offset.value.data + _aligned(ct.dst_reserve_bytes(a))  # type: ignore
                      for a in calc)
            st.tbuf = out.add(ac.InitTBufOp(top - st.calc_base))

    def _matmuls(self, out: _Out) -> None:
        """One Matmul object + TCubeTiling per ``asc.mmad``, registered together; their
        tiling values join the kernel's tiling struct."""
        ops = ct.mmad_ops(self.k)
        if not ops:
            return
        if len(ops) > ct.MAX_MATMUL_OBJECTS:
            raise PyAscCompileError(
                f"kernel {self.k.sym_name.data} has {len(ops)} asc.mmad ops; Ascend C allows "
                f"at most {ct.MAX_MATMUL_OBJECTS} Matmul objects per kernel", loc_of(ops[0]),
                "split the operator into several kernels")
        plat_attr = self.k.attributes.get("asc.platform")
        plat = get_platform(plat_attr.data if isinstance(plat_attr, StringAttr) else None)
        tiling_attr = self.k.attributes.get("asc.tiling")
        fields = dict(tiling_attr.data) if isinstance(tiling_attr, DictionaryAttr) else {}
        pairs: list[SSAValue] = []
        for i, op in enumerate(ops):
            blk = ct.static_block(op)
            for name, value in ct.cube_tiling(blk, plat, op).items():
                fields[ct.field_name(i, name)] = IntegerAttr(value, i64)
            a_t = op.a.type
            assert isinstance(a_t, MemRefType)
            mm = out.add(ac.MatmulObjectOp(a_t.element_type, op.trans_a, op.trans_b))
            tiling = out.add(ac.CubeTilingOp(f"mm{i}"))
            self.st.matmuls[op] = mm
            pairs += [mm, tiling]
        out.add(ac.RegistMatmulOp(pairs))
        self.k.attributes["asc.tiling"] = DictionaryAttr(fields)

    def _mmad(self, out: _Out, op: asc.MmadOp) -> None:
        m = self._m
        mm = self.st.matmuls[op]
        out.add(ac.MatmulSetTensorAOp(mm, out.view(self.st.gm[op.a], m(op.a_offset)),
                                      op.trans_a))
        out.add(ac.MatmulSetTensorBOp(mm, out.view(self.st.gm[op.b], m(op.b_offset)),
                                      op.trans_b))
        out.add(ac.MatmulSetTailOp(mm, m(op.m), m(op.n), m(op.k)))
        out.add(ac.MatmulIterateOp(mm))
        out.add(ac.MatmulGetTensorCOp(mm, m(op.dst)))
        alloc = op.dst.owner
        assert isinstance(alloc, asc.AllocOp)
        if alloc.role.data == "in":
            if alloc not in self.pending_enque:
                self.pending_enque.append(alloc)
        elif alloc not in self.st.queues:
            out.add(ac.SyncOp("MTE2_V"))

    # -- ops -------------------------------------------------------------------------------
    def _m(self, v: SSAValue) -> SSAValue:
        return self.st.vmap.get(v, v)

    def _alloc(self, out: _Out, op: asc.AllocOp) -> None:
        dtype = _ub_elem(op.result.type)
        if op in self.st.queues:
            self.st.vmap[op.result] = out.add(ac.AllocTensorOp(self.st.queues[op], dtype))
            return
        assert self.st.tbuf is not None and op.offset is not None
        nbytes = 1 if isinstance(dtype, IntegerType) else (
            2 if isinstance(dtype, Float16Type) else 4)
        rel = op.offset.value.data - self.st.calc_base
        self.st.vmap[op.result] = out.add(ac.TBufGetOp(self.st.tbuf, rel // nbytes, dtype))

    @staticmethod
    def _elem_bytes(v: SSAValue) -> int:
        return asc.element_bits(v.type.element_type) // 8  # type: ignore[attr-defined]

    def _copy(self, out: _Out, op: asc.CopyInOp | asc.CopyOutOp) -> None:
        inbound = isinstance(op, asc.CopyInOp)
        gm_val = op.source if inbound else op.dest
        ub_val = op.dest if inbound else op.source
        alloc = ub_val.owner
        assert isinstance(alloc, asc.AllocOp)
        sz = self._elem_bytes(gm_val)
        m = self._m
        ub = m(ub_val)
        if not inbound and alloc in self.st.queues:
            q = self.st.queues[alloc]
            out.add(ac.EnQueOp(q, ub))
            ub = out.add(ac.DeQueOp(q, _ub_elem(alloc.result.type)))
        whole_ub = ub
        ub = out.view(ub, m(op.ub_offset))
        gm = out.view(self.st.gm[gm_val], m(op.gm_offset))
        length, gap, stride = (_const_value(v) for v in (op.length, op.gm_gap, op.ub_stride))
        contiguous = (length is not None and gap == 0 and stride == length
                      and (length * sz) % 32 == 0)
        if contiguous:
            n = out.arith(arith.MuliOp, m(op.count), m(op.length))
            out.add(ac.DataCopyOp(*((ub, gm) if inbound else (gm, ub)), n))
        else:
            blen = out.arith(arith.MuliOp, m(op.length), sz)
            gm_stride = out.arith(arith.MuliOp, m(op.gm_gap), sz)
            slot_blocks = out.arith(arith.DivSIOp, out.arith(arith.MuliOp, m(op.ub_stride), sz),
                                    32)
            used_blocks = out.arith(arith.DivSIOp, out.arith(arith.AddiOp, blen, 31), 32)
            ub_gap = out.arith(arith.SubiOp, slot_blocks, used_blocks)
            params = [m(op.count), blen, gm_stride, ub_gap] if inbound else [
                m(op.count), blen, ub_gap, gm_stride]
            out.add(ac.DataCopyPadOp(*((ub, gm) if inbound else (gm, ub)), params))
        if inbound and alloc in self.st.queues:
            if alloc not in self.pending_enque:
                self.pending_enque.append(alloc)
        elif inbound:
            out.add(ac.SyncOp("MTE2_V"))
        elif alloc in self.st.queues:
            out.add(ac.FreeTensorOp(self.st.queues[alloc], whole_ub))

    def _flush_enque(self, out: _Out) -> None:
        for alloc in self.pending_enque:
            q = self.st.queues[alloc]
            out.add(ac.EnQueOp(q, self._m(alloc.result)))
            t = out.add(ac.DeQueOp(q, _ub_elem(alloc.result.type)))
            self.st.vmap[alloc.result] = t
            if self.dequeued:
                self.dequeued[-1].append((q, t))
        self.pending_enque.clear()

    def _vreduce(self, out: _Out, op: asc.VReduceOp) -> None:
        m = self._m
        dst, src, work = m(op.dst), m(op.src), m(op.work)
        kind = op.kind.data
        if op.axis.data == "last":
            total = out.arith(arith.MuliOp, m(op.rows), m(op.m))

            def row(o: _Out, i: SSAValue) -> None:
                d = o.view(dst, o.arith(arith.MuliOp, i, 16))
                s = o.view(src, o.arith(arith.MuliOp, i, m(op.ls)))
                o.add(ac.ReduceOp(ac.REDUCE[kind], d, s, work, m(op.length)))
            out.loop(total, row)
            return
        api = {"sum": "Add", "max": "Max", "min": "Min"}[kind]

        def outer(o: _Out, r: SSAValue) -> None:
            d = o.view(dst, o.arith(arith.MuliOp, r, m(op.ls)))
            base = o.arith(arith.MuliOp, r, m(op.m))
            o.add(ac.DataCopyOp(d, o.view(src, o.arith(arith.MuliOp, base, m(op.ls))),
                                m(op.ls)))

            def inner(o2: _Out, j: SSAValue) -> None:
                idx = o2.arith(arith.AddiOp, base, j)
                s = o2.view(src, o2.arith(arith.MuliOp, idx, m(op.ls)))
                o2.add(ac.VecBinaryOp(api, d, d, s, m(op.ls)))
            o.loop(m(op.m), inner, lower=1)
        out.loop(m(op.rows), outer)

    def _vbroadcast(self, out: _Out, op: asc.VBroadcastOp) -> None:
        m = self._m
        dst, src = m(op.dst), m(op.src)
        has_rows, has_m, has_l = op.src_has
        total = out.arith(arith.MuliOp, m(op.rows), m(op.m))
        if not has_l:
            out.add(ac.SyncOp("V_S"))

        def row(o: _Out, i: SSAValue) -> None:
            r = o.arith(arith.DivSIOp, i, m(op.m))
            j = o.arith(arith.RemSIOp, i, m(op.m))
            si: SSAValue | int = 0
            if has_rows:
                si = o.arith(arith.MuliOp, r, m(op.m)) if has_m else r
            if has_m:
                si = o.arith(arith.AddiOp, si, j)
            d = o.view(dst, o.arith(arith.MuliOp, i, m(op.ls)))
            if has_l:
                s = o.view(src, o.arith(arith.MuliOp, si, m(op.ls)))
                o.add(ac.DataCopyOp(d, s, m(op.ls)))
            else:
                idx = o.arith(arith.MuliOp, si, 16) if not isinstance(si, int) else o.c(si * 16)
                v = o.add(ac.GetValueOp(src, idx))
                o.add(ac.DuplicateOp(d, v, m(op.ls)))
        out.loop(total, row)

    def _vector(self, out: _Out, op: Operation) -> bool:
        m = self._m
        if isinstance(op, asc.VBinaryOp):
            out.add(ac.VecBinaryOp(ac.VEC_BINARY[op.kind.data], m(op.dst), m(op.lhs),
                                   m(op.rhs), m(op.count)))
        elif isinstance(op, asc.VUnaryOp):
            out.add(ac.VecUnaryOp(ac.VEC_UNARY[op.kind.data], m(op.dst), m(op.src),
                                  m(op.count)))
        elif isinstance(op, asc.VScalarOp):
            out.add(ac.VecScalarOp(ac.VEC_SCALAR[op.kind.data], m(op.dst), m(op.src),
                                   op.scalar.value.data, m(op.count)))
        elif isinstance(op, asc.VDupOp):
            dtype = _ub_elem(op.dst.type)
            assert isinstance(dtype, Float16Type | Float32Type)
            v = out.add(arith.ConstantOp(FloatAttr(op.value.value.data, dtype)))
            out.add(ac.DuplicateOp(m(op.dst), v, m(op.count)))
        elif isinstance(op, asc.VCopyOp):
            out.add(ac.DataCopyOp(m(op.dst), m(op.src), m(op.count)))
        elif isinstance(op, asc.VCastOp):
            out.add(ac.CastOp(ac.ROUND[op.round.data], m(op.dst), m(op.src), m(op.count)))
        elif isinstance(op, asc.VCompareOp):
            out.add(ac.CompareOp(ac.CMP[op.predicate.data], m(op.mask), m(op.lhs), m(op.rhs),
                                 m(op.count)))
        elif isinstance(op, asc.VSelectOp):
            out.add(ac.SelectOp(m(op.dst), m(op.mask), m(op.lhs), m(op.rhs), m(op.count)))
        elif isinstance(op, asc.VReduceOp):
            self._vreduce(out, op)
        elif isinstance(op, asc.VBroadcastOp):
            self._vbroadcast(out, op)
        else:
            return False
        return True

    def _op(self, out: _Out, op: Operation, top_of_tile: bool) -> None:
        """Translate one op; the ascendc ops it becomes carry its own source location."""
        loc = op.attributes.get(asc.LOC_ATTR)
        here = _Out(out.block, loc) if loc is not None and loc != out.loc else out
        self._op_at(here, op, top_of_tile)

    def _op_at(self, out: _Out, op: Operation, top_of_tile: bool) -> None:
        if isinstance(op, asc.AllocOp):
            self._alloc(out, op)
        elif isinstance(op, asc.CopyInOp | asc.CopyOutOp):
            self._copy(out, op)
        elif isinstance(op, asc.BlockIdxOp):
            self.st.vmap[op.result] = out.add(ac.GetBlockIdxOp())
        elif isinstance(op, asc.TilingFieldOp):
            self.st.vmap[op.result] = out.add(ac.TilingFieldOp(op.field.data))
        elif isinstance(op, scf.ForOp):
            self._for(out, op, top_of_tile)
        elif isinstance(op, scf.YieldOp):
            out.add(scf.YieldOp())
        elif isinstance(op, asc.MmadOp):
            self._mmad(out, op)
        elif isinstance(op, func.ReturnOp):
            for mm in self.st.matmuls.values():
                out.add(ac.MatmulEndOp(mm))
            out.add(func.ReturnOp())
        elif not self._vector(out, op):
            new = op.clone(value_mapper=dict(self.st.vmap))
            out.add(new)
            for old_r, new_r in zip(op.results, new.results, strict=True):
                self.st.vmap[old_r] = new_r
        if top_of_tile and self.pending_enque and not isinstance(op, asc.AllocOp):
            self._flush_enque(out)

    def _for(self, out: _Out, op: scf.ForOp, top_of_tile: bool) -> None:
        body = Block(arg_types=[IndexType()])
        self.st.vmap[op.body.block.args[0]] = body.args[0]
        inner = _Out(body, out.loc)
        is_tile_loop = not top_of_tile and op.parent is self.k.body.block
        if is_tile_loop:
            self.dequeued.append([])
        for o in op.body.block.ops:
            if is_tile_loop and isinstance(o, scf.YieldOp):
                for q, t in self.dequeued[-1]:
                    inner.add(ac.FreeTensorOp(q, t))
            self._op(inner, o, is_tile_loop)
        if is_tile_loop:
            self.dequeued.pop()
        m = self._m
        out.add(scf.ForOp(m(op.lb), m(op.ub), m(op.step), [], body))

    def convert(self) -> func.FuncOp:
        old_entry = self.k.body.block
        entry = Block(arg_types=[a.type for a in old_entry.args])
        out = _Out(entry, self.k.attributes.get(asc.LOC_ATTR))
        self._prologue(out, entry)
        for op in old_entry.ops:
            self._op(out, op, False)
        new = func.FuncOp(self.k.sym_name.data, self.k.function_type, Region(entry))
        new.attributes.update(self.k.attributes)
        return new


def convert_kernel(kernel: func.FuncOp) -> func.FuncOp:
    """The ``ascendc``-level version of one tile-level kernel."""
    return _Converter(kernel).convert()


@dataclass(frozen=True)
class ConvertAscToAscendcPass(ModulePass):
    """Lower every tile-level kernel (``func.func`` with ``asc.kernel``) to ``ascendc`` ops."""

    name = "convert-asc-to-ascendc"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.body.block.ops
                       if isinstance(k, func.FuncOp) and "asc.kernel" in k.attributes]:
            new = convert_kernel(kernel)
            op.body.block.insert_op_before(new, kernel)
            kernel.detach()
            kernel.erase()
