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

This module rebuilds each kernel (buffers, queues, copies, loops, matmuls: the ops whose
lowering depends on the kernel's state) and copies the compute ops; ``ascendc_patterns`` then
rewrites each copied compute op in place, one ``RewritePattern`` per op.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from pyasc_mlir import cube_tiling as ct
from pyasc_mlir.dialects import asc, attrs
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.ascendc_patterns import AscendcBuilder, const_value, rewrite_compute_ops
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.platform import DATA_BLOCK_BYTES, UB_ALIGN_BYTES, get_platform, round_up


def _ub_bytes(n: int) -> int:
    """``n`` bytes rounded up to whole UB-aligned blocks."""
    return round_up(n, UB_ALIGN_BYTES)


def _offset(a: asc.AllocOp) -> int:
    """``a``'s UB offset (bytes), set by ``asc-buffer-alloc`` (checked in ``_prologue``)."""
    assert a.offset is not None
    return a.offset.value.data


def _ub_elem(t: Attribute) -> Attribute:
    """Element type a UB buffer has in Ascend C (masks are ``uint8_t`` bytes)."""
    assert isinstance(t, MemRefType)
    e = t.element_type
    return IntegerType(8) if isinstance(e, IntegerType) and e.width.data == 1 else e


def _tbuf_position(calc: list[asc.AllocOp]) -> str:
    """``VECIN`` when GM data (``copy_in``) or a Matmul result (``mmad``) lands in one of the
    scratch buffers ``calc`` (the documented paths: GM -> VECIN, GetTensorC -> VECIN), else
    ``VECCALC``."""
    for a in calc:
        for use in a.result.uses:
            op = use.operation
            if (isinstance(op, asc.CopyInOp) and op.dest is a.result) or (
                isinstance(op, asc.MmadOp) and op.dst is a.result
            ):
                return "VECIN"
    return "VECCALC"


def _is_vecin_queue(st: _State, alloc: asc.AllocOp) -> bool:
    """Whether ``alloc``'s queue is a ``TPosition::VECIN`` one."""
    init = st.queues[alloc].owner
    return isinstance(init, ac.InitQueueOp) and init.position.data == "VECIN"


@dataclass
class _State:
    kernel: func.FuncOp
    vmap: dict[SSAValue, SSAValue] = field(default_factory=dict)
    queues: dict[asc.AllocOp, SSAValue] = field(default_factory=dict)
    gm: dict[SSAValue, SSAValue] = field(default_factory=dict)
    tbuf: SSAValue | None = None
    calc_base: int = 0
    matmuls: dict[asc.MmadOp, SSAValue] = field(default_factory=dict)


class _Converter:
    def __init__(self, kernel: func.FuncOp):
        self.k = kernel
        self.st = _State(kernel)
        self.pending_enque: list[asc.AllocOp] = []
        self.dequeued: list[list[tuple[SSAValue, SSAValue]]] = []

    # -- setup -----------------------------------------------------------------------------
    def _prologue(self, out: AscendcBuilder, entry: Block) -> None:
        st = self.st
        for old, new in zip(self.k.body.block.args, entry.args, strict=True):
            st.gm[old] = out.add_value(ac.GlobalBufferOp(new))
        allocs = [o for o in self.k.walk() if isinstance(o, asc.AllocOp)]
        if any(a.offset is None for a in allocs):
            raise PyAscCompileError(
                "convert-asc-to-ascendc needs UB offsets",
                loc_of(self.k),
                "run asc-buffer-alloc first",
            )
        self._matmuls(out)
        for a in sorted(allocs, key=_offset):
            if a.role.data in ("in", "out"):
                # C of a Matmul lands in VECIN (documented), even when it goes straight out
                in_pos = a.role.data == "in" or _tbuf_position([a]) == "VECIN"
                pos = "VECIN" if in_pos else "VECOUT"
                st.queues[a] = out.add_value(
                    ac.InitQueueOp(pos, a.buffers.value.data, _ub_bytes(ct.dst_reserve_bytes(a)))
                )
        calc = [a for a in allocs if a.role.data in ("tmp", "const")]
        if calc:
            st.calc_base = min(_offset(a) for a in calc)
            top = max(_offset(a) + _ub_bytes(ct.dst_reserve_bytes(a)) for a in calc)
            st.tbuf = out.add_value(ac.InitTBufOp(top - st.calc_base, _tbuf_position(calc)))

    def _matmuls(self, out: AscendcBuilder) -> None:
        """One Matmul object + TCubeTiling per ``asc.mmad``, registered together; their
        tiling values join the kernel's tiling struct."""
        ops = ct.mmad_ops(self.k)
        if not ops:
            return
        if len(ops) > ct.MAX_MATMUL_OBJECTS:
            raise PyAscCompileError(
                f"kernel {self.k.sym_name.data} has {len(ops)} asc.mmad ops; Ascend C allows "
                f"at most {ct.MAX_MATMUL_OBJECTS} Matmul objects per kernel",
                loc_of(ops[0]),
                "split the operator into several kernels",
            )
        plat = get_platform(attrs.kernel_platform(self.k))
        fields: dict[str, int] = {}
        pairs: list[SSAValue] = []
        for i, op in enumerate(ops):
            blk = ct.static_block(op)
            for name, value in ct.cube_tiling(blk, plat, op).items():
                fields[ct.field_name(i, name)] = value
            a_t = op.a.type
            assert isinstance(a_t, MemRefType)
            mm = out.add_value(ac.MatmulObjectOp(a_t.element_type, op.trans_a, op.trans_b))
            tiling = out.add_value(ac.CubeTilingOp(f"mm{i}"))
            self.st.matmuls[op] = mm
            pairs += [mm, tiling]
        # A Matmul kernel runs on the Cube and the vector cores 1:1 (GetBlockIdx() < blockDim on
        # both sides, as the work split assumes) and hands the Matmul API its system workspace.
        out.add(ac.KernelTypeOp("MIX_AIC_1_1"))
        out.add(ac.SetSysWorkspaceOp())
        out.add(ac.RegistMatmulOp(pairs))
        attrs.add_tiling_fields(self.k, fields)

    def _mmad(self, out: AscendcBuilder, op: asc.MmadOp) -> None:
        m = self._m
        mm = self.st.matmuls[op]
        out.add(ac.MatmulSetTensorAOp(mm, out.view(self.st.gm[op.a], m(op.a_offset)), op.trans_a))
        out.add(ac.MatmulSetTensorBOp(mm, out.view(self.st.gm[op.b], m(op.b_offset)), op.trans_b))
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

    def _alloc(self, out: AscendcBuilder, op: asc.AllocOp) -> None:
        dtype = _ub_elem(op.result.type)
        if op in self.st.queues:
            self.st.vmap[op.result] = out.add_value(ac.AllocTensorOp(self.st.queues[op], dtype))
            return
        assert self.st.tbuf is not None and op.offset is not None
        nbytes = 1 if isinstance(dtype, IntegerType) else asc.element_bits(dtype) // 8
        rel = op.offset.value.data - self.st.calc_base
        self.st.vmap[op.result] = out.add_value(ac.TBufGetOp(self.st.tbuf, rel // nbytes, dtype))

    @staticmethod
    def _elem_bytes(v: SSAValue) -> int:
        t = v.type
        assert isinstance(t, MemRefType)  # a GM buffer: asc.copy_in/copy_out's constraint
        return asc.element_bits(t.element_type) // 8

    def _copy(self, out: AscendcBuilder, op: asc.CopyInOp | asc.CopyOutOp) -> None:
        inbound = isinstance(op, asc.CopyInOp)
        gm_val = op.source if inbound else op.dest
        ub_val = op.dest if inbound else op.source
        alloc = ub_val.owner
        assert isinstance(alloc, asc.AllocOp)
        sz = self._elem_bytes(gm_val)
        m = self._m
        ub = m(ub_val)
        # A VECIN queue's EnQue/DeQue order MTE2 before V only, a TBuf orders nothing: copying
        # out what the vector unit wrote there needs V_MTE3, and the next writes wait for MTE3
        # (MTE3_V).
        sync_out = not inbound and (alloc not in self.st.queues or _is_vecin_queue(self.st, alloc))
        if not inbound and alloc in self.st.queues:
            q = self.st.queues[alloc]
            out.add(ac.EnQueOp(q, ub))
            ub = out.add_value(ac.DeQueOp(q, _ub_elem(alloc.result.type)))
        if sync_out:
            out.add(ac.SyncOp("V_MTE3"))
        whole_ub = ub
        ub = out.view(ub, m(op.ub_offset))
        gm = out.view(self.st.gm[gm_val], m(op.gm_offset))
        length, gap, stride = (const_value(v) for v in (op.length, op.gm_gap, op.ub_stride))
        contiguous = (
            length is not None
            and gap == 0
            and stride == length
            and (length * sz) % DATA_BLOCK_BYTES == 0
        )
        if contiguous:
            n = out.muli(m(op.count), m(op.length))
            out.add(ac.DataCopyOp(*((ub, gm) if inbound else (gm, ub)), n))
        else:
            blen = out.muli(m(op.length), sz)
            gm_stride = out.muli(m(op.gm_gap), sz)
            slot_blocks = out.divi(out.muli(m(op.ub_stride), sz), DATA_BLOCK_BYTES)
            used_blocks = out.divi(out.addi(blen, DATA_BLOCK_BYTES - 1), DATA_BLOCK_BYTES)
            ub_gap = out.subi(slot_blocks, used_blocks)
            params = (
                [m(op.count), blen, gm_stride, ub_gap]
                if inbound
                else [m(op.count), blen, ub_gap, gm_stride]
            )
            out.add(ac.DataCopyPadOp(*((ub, gm) if inbound else (gm, ub)), params))
        if inbound and alloc in self.st.queues:
            if alloc not in self.pending_enque:
                self.pending_enque.append(alloc)
        elif inbound:
            out.add(ac.SyncOp("MTE2_V"))
        else:
            if sync_out:
                out.add(ac.SyncOp("MTE3_V"))
            if alloc in self.st.queues:
                out.add(ac.FreeTensorOp(self.st.queues[alloc], whole_ub))

    def _flush_enque(self, out: AscendcBuilder) -> None:
        for alloc in self.pending_enque:
            q = self.st.queues[alloc]
            out.add(ac.EnQueOp(q, self._m(alloc.result)))
            t = out.add_value(ac.DeQueOp(q, _ub_elem(alloc.result.type)))
            self.st.vmap[alloc.result] = t
            if self.dequeued:
                self.dequeued[-1].append((q, t))
        self.pending_enque.clear()

    def _op(self, out: AscendcBuilder, op: Operation, top_of_tile: bool) -> None:
        """Translate one op; the ascendc ops it becomes carry its own source location."""
        self._op_at(out.at(op.attributes.get(asc.LOC_ATTR)), op, top_of_tile)

    def _op_at(self, out: AscendcBuilder, op: Operation, top_of_tile: bool) -> None:
        if isinstance(op, asc.AllocOp):
            self._alloc(out, op)
        elif isinstance(op, asc.CopyInOp | asc.CopyOutOp):
            self._copy(out, op)
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
        else:  # index arithmetic, and compute ops for ascendc_patterns
            new = op.clone(value_mapper=dict(self.st.vmap))
            out.add(new)
            for old_r, new_r in zip(op.results, new.results, strict=True):
                self.st.vmap[old_r] = new_r
        if top_of_tile and self.pending_enque and not isinstance(op, asc.AllocOp):
            self._flush_enque(out)

    def _for(self, out: AscendcBuilder, op: scf.ForOp, top_of_tile: bool) -> None:
        body = Block(arg_types=[IndexType()])
        self.st.vmap[op.body.block.args[0]] = body.args[0]
        inner = AscendcBuilder(body, out.loc, fold=False)
        is_tile_loop = (
            not top_of_tile and op.parent is self.k.body.block
        ) or "asc.tile_loop" in op.attributes  # a row pass's chunk loop (tile_row_passes)
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
        out = AscendcBuilder(entry, self.k.attributes.get(asc.LOC_ATTR), fold=False)
        self._prologue(out, entry)
        for op in old_entry.ops:
            self._op(out, op, False)
        new = func.FuncOp(self.k.sym_name.data, self.k.function_type, Region(entry))
        new.attributes.update(self.k.attributes)
        rewrite_compute_ops(new)
        return new


def convert_kernel(kernel: func.FuncOp) -> func.FuncOp:
    """The ``ascendc``-level version of one tile-level kernel."""
    return _Converter(kernel).convert()


@dataclass(frozen=True)
class ConvertAscToAscendcPass(ModulePass):
    """Lower every tile-level kernel (``func.func`` with ``asc.kernel``) to ``ascendc`` ops."""

    name = "convert-asc-to-ascendc"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in attrs.module_kernels(op):
            new = convert_kernel(kernel)
            op.body.block.insert_op_before(new, kernel)
            kernel.detach()
            kernel.erase()
