"""``asc-lower-loops``: lower every ``asc_loop.nest`` (a loop nest ``asc-raise-loops`` could
not raise, see ``passes/raise_fallback.py``) to one single-core (``block_dim`` 1) kernel that
runs the nest as scalar loops, and replace the op by an ``asc.launch`` of it.

The kernel (``ascendc`` level, so no later pass touches it): its parameters are the nest's
inputs, then its outputs (GM). Every array of the nest (inputs, the arrays it allocates,
outputs) is placed in UB when it fits in the UB budget (smallest first; 32-byte aligned
places in one ``TBuf``), else it stays in GM:

1. copy-in: a UB array with an initial value gets it with one ``DataCopyPad`` GM->UB (exact
   byte count, any tail); then ``MTE2_S`` (the scalar unit reads what MTE2 wrote);
2. the nest: ``scf.for`` loops; ``asc_loop.load``/``store`` become ``ascendc.scalar_get``/
   ``scalar_set`` (``GetValue``/``SetValue`` on the ``LocalTensor``, or on the
   ``GlobalTensor`` of a GM array) at the row-major element index; the scalar math becomes
   ``ascendc.scalar_*``; an ``asc_loop.alloc`` becomes a scalar loop writing its fill (or NaN)
   at its place; an output in GM starts as a scalar copy of its input (or its fill);
3. ``S_MTE3``, then copy-out: one ``DataCopyPad`` UB->GM per output held in UB.

Correct for every size (GM arrays need no UB), one core, about one scalar instruction per
element access: slow, which the warning of ``asc-raise-loops`` says.

A parallel nest (``@lang.parallel``: distributed loops with ``workers = W``, see
``dialects/asc_loop.py``, "Parallel nests") becomes one kernel on ``blockDim = W`` cores
(``passes/lower_parallel.py``): its inputs and results stay in GM, so do its own arrays that
a distributed loop writes and other code reads (in the GM workspace), the others are each
core's in UB; a distributed loop runs the core's share (``GetBlockIdx()``); a result's fill
is written share by share; a store to a result outside distributed loops is core 0's; an
``asc_loop.allreduce`` writes the core's partials to its slot of the GM workspace, then
``SyncAll()``, then every core combines all slots in core order. A ``SyncAll()`` also
separates GM writes of different cores from later accesses of the same results.

Errors: an array the nest allocates that does not fit the UB budget (located
``PyAscCompileError``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from pyasc_mlir.dialects import asc, asc_loop, attrs
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects import ascendc_scalar as sc
from pyasc_mlir.dialects.asc_attrs import ScopeAttr
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.passes.lower_parallel import ParallelLowering
from pyasc_mlir.platform import DATA_BLOCK_BYTES, DEFAULT_PLATFORM, get_platform, round_up
from pyasc_mlir.types import np_dtype_of

__all__ = ["AscLowerLoopsPass"]


@dataclass
class _Array:
    """One array of the nest: its region value, shape, element type, and where it lives."""

    value: SSAValue
    mem: MemRefType
    gm_in: int | None = None  # kernel parameter holding its initial value
    gm_out: int | None = None  # kernel parameter it is returned in
    ub_offset: int | None = None  # byte offset in the TBuf (None: in GM)
    tensor: SSAValue | None = None  # its LocalTensor / GlobalTensor in the kernel

    @property
    def count(self) -> int:
        return math.prod(self.mem.get_shape())

    @property
    def nbytes(self) -> int:
        return self.count * np_dtype_of(self.mem.element_type).itemsize


class LoopKernel:
    """Builds the kernel of one ``asc_loop.nest``."""

    def __init__(self, nest: asc_loop.NestOp, name: str, budget: int):
        self.nest, self.budget = nest, budget
        self.loc = nest.attributes.get(asc.LOC_ATTR)
        body = nest.body.block
        term = body.last_op
        assert isinstance(term, asc_loop.NestYieldOp)
        self.arrays: dict[SSAValue, _Array] = {}
        for i, a in enumerate(body.args):
            assert isinstance(a.type, MemRefType)
            self.arrays[a] = _Array(a, a.type, gm_in=i)
        for o in body.walk():
            if isinstance(o, asc_loop.AllocOp):
                assert isinstance(o.result.type, MemRefType)
                self.arrays[o.result] = _Array(o.result, o.result.type)
        n_in = len(body.args)
        for k, out in enumerate(term.arrays):
            self.arrays[out].gm_out = n_in + k
        gm_types = [_gm(v.type) for v in nest.inputs] + [_gm(r.type) for r in nest.outputs]
        self.kernel = func.FuncOp(name, (gm_types, []))
        self.block = self.kernel.body.block
        self.values: dict[SSAValue, SSAValue] = {}
        self.at: Attribute | None = None  # the location of the nest op being converted
        self.par = ParallelLowering.of(self)

    # -- building ---------------------------------------------------------------------------
    def add(self, op: Operation, block: Block | None = None) -> Operation:
        loc = self.at if self.at is not None else self.loc
        if loc is not None and asc.LOC_ATTR not in op.attributes:
            op.attributes[asc.LOC_ATTR] = loc
        (block or self.block).add_op(op)
        return op

    def index(self, k: int, block: Block | None = None) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(k, IndexType())), block).results[0]

    def build(self) -> func.FuncOp:
        self.place()
        gms = [self.add(ac.GlobalBufferOp(a)).results[0] for a in self.block.args]
        ub_bytes = max(
            ((a.ub_offset or 0) + round_up(a.nbytes, DATA_BLOCK_BYTES) for a in self.ub()),
            default=0,
        )
        buf = self.add(ac.InitTBufOp(ub_bytes, "VECIN")).results[0] if ub_bytes else None
        for a in self.arrays.values():
            if a.ub_offset is not None:
                assert buf is not None
                size = np_dtype_of(a.mem.element_type).itemsize
                a.tensor = self.add(
                    ac.TBufGetOp(buf, a.ub_offset // size, a.mem.element_type)
                ).results[0]
            elif a.gm_out is not None:
                a.tensor = gms[a.gm_out]
            elif a.gm_in is not None:
                a.tensor = gms[a.gm_in]
        if self.par is not None:
            self.par.place_shared()
        copied_in = False
        for a in self.ub():
            if a.gm_in is not None:
                assert a.tensor is not None
                self.copy(a.tensor, gms[a.gm_in], a.nbytes)
                copied_in = True
        if copied_in:
            self.add(ac.SyncOp("MTE2_S"))
        for a in self.arrays.values():  # a GM output starts as a copy of its input
            if a.ub_offset is None and a.gm_out is not None and a.gm_in is not None:
                self.scalar_copy(gms[a.gm_in], gms[a.gm_out], a.count)
        self.region(self.nest.body.block, self.block)
        outs = [a for a in self.ub() if a.gm_out is not None]
        if outs:
            self.add(ac.SyncOp("S_MTE3"))
        for a in outs:
            assert a.gm_out is not None and a.tensor is not None
            self.copy(gms[a.gm_out], a.tensor, a.nbytes)
        if self.par is not None:
            self.par.finish(self.kernel)
        self.add(func.ReturnOp())
        self.kernel.attributes[attrs.UB_BYTES_ATTR] = IntegerAttr(ub_bytes, 64)
        self.kernel.attributes[attrs.CALC_BASE_ATTR] = IntegerAttr(ub_bytes, 64)
        self.kernel.attributes[attrs.CALC_BYTES_ATTR] = IntegerAttr(0, 64)
        return self.kernel

    def ub(self) -> list[_Array]:
        return [a for a in self.arrays.values() if a.ub_offset is not None]

    def place(self) -> None:
        """UB for the smallest arrays while the budget lasts; the arrays the nest allocates
        itself (no GM copy) must fit."""
        used = 0
        for a in sorted(self.arrays.values(), key=lambda a: a.nbytes):
            if self.par is not None and (
                a.gm_in is not None or a.gm_out is not None or a.value in self.par.cross
            ):
                continue  # a parallel kernel's inputs, results and cross-core arrays: GM
            size = round_up(a.nbytes, DATA_BLOCK_BYTES)
            if used + size <= self.budget:
                a.ub_offset, used = used, used + size
            elif a.gm_in is None and a.gm_out is None:
                raise PyAscCompileError(
                    f"a local array of {a.nbytes} bytes inside a loop nest that runs as scalar "
                    f"loops does not fit the UB budget ({self.budget - used} bytes left)",
                    loc_of(a.value.owner) if isinstance(a.value.owner, Operation) else None,
                    "allocate the array outside the loop nest (then it may live in GM)",
                )

    def copy(self, dst: SSAValue, src: SSAValue, nbytes: int) -> None:
        """One ``DataCopyPad`` of ``nbytes`` (one block: exact length, any tail)."""
        params = [self.index(1), self.index(nbytes), self.index(0), self.index(0)]
        self.add(ac.DataCopyPadOp(dst, src, params))

    def loop(
        self, lb: int, ub: int, step: int, block: Block, bound: SSAValue | None = None
    ) -> tuple[scf.ForOp, Block]:
        """``for i in range(lb, min(ub, bound), step)`` appended to ``block``."""
        lo, hi, st = self.index(lb, block), self.index(ub, block), self.index(step, block)
        if bound is not None:  # min(ub, bound): a triangular loop
            less = self.add(arith.CmpiOp(bound, hi, "slt"), block).results[0]
            hi = self.add(arith.SelectOp(less, bound, hi), block).results[0]
        body = Block(arg_types=[IndexType()])
        loop = scf.ForOp(lo, hi, st, [], Region(body))
        self.add(loop, block)
        return loop, body

    def scalar_copy(self, src: SSAValue, dst: SSAValue, count: int) -> None:
        _, body = self.loop(0, count, 1, self.block)
        i = body.args[0]
        v = self.add(sc.ScalarGetOp(src, i), body).results[0]
        self.add(sc.ScalarSetOp(v, dst, i), body)
        self.add(scf.YieldOp(), body)

    def fill(self, a: _Array, value: float, block: Block) -> None:
        assert a.tensor is not None
        _, body = self.loop(0, a.count, 1, block)
        c = self.add(sc.ScalarConstOp(value), body).results[0]
        self.add(sc.ScalarSetOp(c, a.tensor, body.args[0]), body)
        self.add(scf.YieldOp(), body)

    # -- the nest ---------------------------------------------------------------------------
    def region(self, src: Block, dst: Block) -> None:
        for op in src.ops:
            if self.par is not None and src is self.nest.body.block:
                self.par.before_top(op, dst)
            self.convert(op, dst)

    def convert(self, op: Operation, dst: Block) -> None:
        v = self.values
        self.at = op.attributes.get(asc.LOC_ATTR)
        if self.par is not None and self.par.convert(op, dst):
            return
        if isinstance(op, asc_loop.ForOp):
            lb, ub, step = op.bounds
            _, body = self.loop(lb, ub, step, dst, v[op.bound] if op.bound else None)
            v[op.body.block.args[0]] = body.args[0]
            self.region(op.body.block, body)
        elif isinstance(op, asc_loop.YieldOp):
            self.add(scf.YieldOp(), dst)
        elif isinstance(op, asc_loop.NestYieldOp):
            return
        elif isinstance(op, asc_loop.AllocOp):
            fill = op.fill_value
            self.fill(self.arrays[op.result], float("nan") if fill is None else fill, dst)
        elif isinstance(op, asc_loop.LoadOp):
            a = self.arrays[op.array]
            assert a.tensor is not None
            at = self.linear(a, list(op.indices), dst)
            v[op.result] = self.add(sc.ScalarGetOp(a.tensor, at), dst).results[0]
        elif isinstance(op, asc_loop.StoreOp):
            a = self.arrays[op.array]
            assert a.tensor is not None
            at = self.linear(a, list(op.indices), dst)
            self.add(sc.ScalarSetOp(v[op.value], a.tensor, at), dst)
        else:
            new = self.scalar(op)
            new.attributes.update(op.attributes)
            self.add(new, dst)
            for old, r in zip(op.results, new.results, strict=True):
                v[old] = r

    def scalar(self, op: Operation) -> Operation:
        v = self.values
        if isinstance(op, asc_loop.ConstOp):
            return sc.ScalarConstOp(op.value.value.data)
        if isinstance(op, asc_loop.UnaryOp):
            return sc.ScalarUnaryOp(op.kind.data, v[op.input])
        if isinstance(op, asc_loop.BinaryOp):
            return sc.ScalarBinaryOp(op.kind.data, v[op.lhs], v[op.rhs])
        if isinstance(op, asc_loop.RoundOp):
            return sc.ScalarRoundOp(v[op.input], op.dtype)
        if isinstance(op, asc_loop.KahanOp):
            return sc.ScalarKahanOp(v[op.acc], v[op.comp], v[op.value])
        if isinstance(op, arith.ConstantOp | arith.AddiOp | arith.SubiOp | arith.MuliOp):
            return op.clone(value_mapper=v)
        raise PyAscCompileError(
            f"{op.name} cannot run in a scalar-loop kernel", loc_of(op), "report this as a bug"
        )

    def linear(self, a: _Array, idx: list[SSAValue], dst: Block) -> SSAValue:
        """The row-major element number of ``a[idx]``."""
        shape = a.mem.get_shape()
        if not idx:
            return self.index(0, dst)
        at = self.values[idx[0]]
        for k, d in zip(idx[1:], shape[1:], strict=True):
            at = self.add(arith.MuliOp(at, self.index(d, dst)), dst).results[0]
            at = self.add(arith.AddiOp(at, self.values[k]), dst).results[0]
        return at


def _gm(t: object) -> MemRefType:
    assert isinstance(t, TensorType)
    return MemRefType(t.element_type, t.get_shape(), memory_space=ScopeAttr("gm"))


def _name(module: ModuleOp, base: str) -> str:
    taken = {o.sym_name.data for o in module.body.block.ops if isinstance(o, func.FuncOp)}
    k = 0
    while f"{base}_loops_{k}" in taken:
        k += 1
    return f"{base}_loops_{k}"


@dataclass(frozen=True)
class AscLowerLoopsPass(ModulePass):
    """Lower ``asc_loop.nest`` ops to scalar-loop kernels (see the module docstring).
    ``platform``: whose UB size bounds the arrays held in UB; ``ub_budget`` >= 0 overrides
    that budget in bytes (0: every array in GM).

    Raises:
        PyAscCompileError: an array the nest allocates does not fit the budget."""

    name = "asc-lower-loops"
    platform: str = DEFAULT_PLATFORM
    ub_budget: int = -1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plat = get_platform(self.platform)
        budget = self.ub_budget if self.ub_budget >= 0 else plat.ub_usable_bytes
        for host in [f for f in op.body.block.ops if isinstance(f, func.FuncOp)]:
            for nest in [o for o in host.body.block.ops if isinstance(o, asc_loop.NestOp)]:
                k = LoopKernel(nest, _name(op, host.sym_name.data), budget)
                kernel = k.build()
                block_dim = k.par.workers if k.par is not None else 1
                attrs.mark_kernel(kernel)
                attrs.set_kernel_tiling(kernel, {"block_dim": block_dim})
                attrs.set_kernel_platform(kernel, plat.name)
                if asc.LOC_ATTR in nest.attributes:
                    kernel.attributes[asc.LOC_ATTR] = nest.attributes[asc.LOC_ATTR]
                op.body.block.add_op(kernel)
                launch = asc.LaunchOp(
                    kernel.sym_name.data,
                    block_dim,
                    list(nest.inputs),
                    [r.type for r in nest.outputs],
                )
                launch.attributes.update(
                    {k: v for k, v in nest.attributes.items() if k == asc.LOC_ATTR}
                )
                host.body.block.insert_op_before(launch, nest)
                for old, new in zip(nest.outputs, launch.outputs, strict=True):
                    old.replace_all_uses_with(new)
                host.body.block.erase_op(nest)
