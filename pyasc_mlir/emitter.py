"""Print ``ascendc``-level kernels as Ascend C source (the ``ascendc`` target of pyasc-opt).

Outputs: the kernel source (``extern "C" __global__ __aicore__`` entries with ``GM_ADDR``
arguments, a tiling struct per kernel), the host source (a function that fills the tiling
struct from the input shapes and launches with ``<<<blockDim, nullptr, stream>>>``) and, for
the CPU build only, ``cpu_entry.cpp`` (``pyasc_run_block`` / ``pyasc_last_error``, see
``docs/CPU_RUNTIME.md``).

Source locations: before an API call whose op carries an ``asc.loc`` attribute the kernel source
gets ``PYASC_LOC("file.py:12:5");`` (only where the location changes, and again at the top of
every loop body and after every loop). The CPU runtime header defines ``PYASC_LOC`` to record the
location, so its errors end with ``at file.py:12:5``; for real Ascend toolchains ``kernel.cpp``
defines it as nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import IO

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
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
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.utils.target import Target

from pyasc_mlir import emit_scalar as scalar
from pyasc_mlir.cube_tiling import TCUBE_FIELDS, user_workspace_base
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects.asc import LOC_ATTR
from pyasc_mlir.dialects.attrs import TILING_ATTR, module_kernels

_BIN = {
    arith.AddiOp: "+",
    arith.SubiOp: "-",
    arith.MuliOp: "*",
    arith.DivSIOp: "/",
    arith.RemSIOp: "%",
}
_CMP = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}
_UNSET = object()
LOC_GUARD = (
    "#ifndef PYASC_LOC",
    "#define PYASC_LOC(loc)  // source locations: CPU build only",
    "#endif",
)
"""Lines after the include: ``PYASC_LOC`` is a no-op where the header does not define it."""
F32_BITS_GUARD = (
    "#ifndef PYASC_F32_BITS",
    "#define PYASC_F32_BITS(bits) __builtin_bit_cast(float, (uint32_t)(bits))",
    "#endif",
)
"""Lines after the include: the float with IEEE-754 bit pattern ``bits``, the spelling of a
non-finite constant (the CPU header defines it; other toolchains get ``__builtin_bit_cast``)."""


def c_float(value: float, ty: str) -> str:
    """A ``float``/``half`` constant as C++, of exactly the value the interpreters use.

    ``value`` is first rounded to ``ty`` (``"float"`` or ``"half"``, IEEE binary32/binary16,
    round to nearest even, overflow to inf: NumPy's ``float32(value)``/``float16(value)``),
    so no second rounding happens in the C++ compiler. A finite ``float`` prints as the
    shortest decimal that reads back as it (``(float)0.1f``), a finite ``half`` as its exact
    value (``(half)0.0999755859375f``: exact in ``float``, so ``(half)`` does not round a second
    time); ``inf``/``-inf``/NaN print as their binary32 bit pattern,
    ``(float)PYASC_F32_BITS(0xff800000u)`` (sign and NaN payload kept; ``(half)`` of a
    binary32 inf/NaN is the binary16 inf/NaN).

    Raises:
        ValueError: ``ty`` is neither ``"float"`` nor ``"half"``.
    """
    if ty not in ("float", "half"):
        raise ValueError(f"c_float: no float constant of C++ type {ty!r}")
    with np.errstate(over="ignore"):
        rounded = (np.float16 if ty == "half" else np.float32)(value)
    if np.isfinite(rounded) and ty == "float":
        return f"(float){str(rounded)}f"  # the shortest decimal that reads back as it
    if np.isfinite(rounded):
        return f"(half){float(rounded)!r}f"  # exact in float: no double rounding
    bits = int(np.float32(rounded).view(np.uint32))  # sign and NaN payload kept
    return f"({ty})PYASC_F32_BITS(0x{bits:08x}u)"


def c_string(text: str) -> str:
    """``text`` as a C/C++ string literal (non-printable and non-ASCII bytes as octal escapes)."""
    out = []
    for b in text.encode():
        ch = chr(b)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= b < 0x7F and ch != "?":
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def c_type(t: Attribute) -> str:
    """C++ spelling of a scalar or ascendc type."""
    if isinstance(t, IndexType):
        return "int64_t"
    if isinstance(t, Float16Type):
        return "half"
    if isinstance(t, BFloat16Type):
        return "bfloat16_t"
    if isinstance(t, Float32Type):
        return "float"
    if isinstance(t, IntegerType):
        return {1: "bool", 8: "uint8_t", 32: "int32_t", 64: "int64_t"}[t.width.data]
    if isinstance(t, ac.LocalTensorType):
        return f"LocalTensor<{c_type(t.element_type)}>"
    if isinstance(t, ac.GlobalTensorType):
        return f"GlobalTensor<{c_type(t.element_type)}>"
    raise ValueError(f"no C++ type for {t}")


def kernels(module: ModuleOp) -> list[func.FuncOp]:
    """The kernel functions (``asc.kernel``) of a module, in order."""
    return module_kernels(module)


def tiling_fields(kernel: func.FuncOp) -> dict[str, int]:
    """Tiling struct fields (name -> static value) of a kernel."""
    attr = kernel.attributes[TILING_ATTR]
    assert isinstance(attr, DictionaryAttr)
    return {k: v.value.data for k, v in attr.data.items() if isinstance(v, IntegerAttr)}


def struct_name(kernel: func.FuncOp) -> str:
    return "".join(p.capitalize() for p in kernel.sym_name.data.split("_")) + "TilingData"


class _KernelPrinter:
    def __init__(self, kernel: func.FuncOp):
        self.k = kernel
        self.names: dict[SSAValue, str] = {}
        self.lines: list[str] = []
        self.indent = 1
        self.n = 0
        self.qn = 0
        self.loc: object = _UNSET  # the location the emitted code last recorded
        self.ws_base = user_workspace_base(kernel)  # the kernel's own workspace part

    def mark(self, op: Operation) -> None:
        """``PYASC_LOC(...)`` before ``op``'s statements when its ``asc.loc`` differs from the
        location recorded last (an op without one records the empty string: unknown)."""
        attr = op.attributes.get(LOC_ATTR)
        loc = attr.data if isinstance(attr, StringAttr) else ""
        if loc != self.loc:
            self.emit(f"PYASC_LOC({c_string(loc)});")
            self.loc = loc

    def name(self, v: SSAValue, prefix: str = "v") -> str:
        if v not in self.names:
            self.names[v] = f"{prefix}{self.n}"
            self.n += 1
        return self.names[v]

    def emit(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)

    def decl(self, v: SSAValue, expr: str, prefix: str = "v") -> None:
        self.emit(f"{c_type(v.type)} {self.name(v, prefix)} = {expr};")

    def _arith(self, op: Operation) -> bool:
        n = self.name
        if isinstance(op, arith.ConstantOp):
            val = op.value
            if isinstance(val, IntegerAttr):
                self.emit(f"const int64_t {n(op.result)} = {val.value.data};")
            else:
                assert isinstance(val, FloatAttr)
                ty = c_type(op.result.type)
                self.emit(f"const {ty} {n(op.result)} = {c_float(float(val.value.data), ty)};")
        elif type(op) in _BIN:
            a, b = op.operands
            self.decl(op.results[0], f"{n(a)} {_BIN[type(op)]} {n(b)}")
        elif isinstance(op, arith.CmpiOp):
            self.decl(op.result, f"{n(op.lhs)} {_CMP[op.predicate.value.data]} {n(op.rhs)}")
        elif isinstance(op, arith.SelectOp):
            self.decl(op.result, f"{n(op.cond)} ? {n(op.lhs)} : {n(op.rhs)}")
        else:
            return False
        return True

    def _buffers(self, op: Operation) -> bool:
        n = self.name
        if isinstance(op, ac.GlobalBufferOp):
            t = op.addr.type
            assert isinstance(t, MemRefType)
            ty = c_type(t.element_type)
            g = n(op.result, "gm")
            self.emit(f"GlobalTensor<{ty}> {g};")
            size = (
                f"tiling.gm{op.addr.index}_elems"
                if t.get_shape()[0] == DYNAMIC_INDEX and isinstance(op.addr, BlockArgument)
                else f"{math.prod(t.get_shape())}LL"
            )
            self.emit(f"{g}.SetGlobalBuffer((__gm__ {ty}*){n(op.addr, 'arg')}, {size});")
        elif isinstance(op, ac.InitQueueOp):
            q = n(op.result, "que")
            self.emit(f"TQue<TPosition::{op.position.data}, 1> {q};")
            self.emit(f"pipe.InitBuffer({q}, {op.num.value.data}, {op.length.value.data});")
        elif isinstance(op, ac.InitTBufOp):
            b = n(op.result, "calcBuf")
            pos = (
                "TBuf<TPosition::VECIN>"
                if op.position_name == "VECIN"
                else "TBuf<TPosition::VECCALC>"
            )
            self.emit(f"{pos} {b};")
            self.emit(f"pipe.InitBuffer({b}, {op.length.value.data});")
        elif isinstance(op, ac.TBufGetOp):
            ty = c_type(op.result.type.element_type)
            self.decl(op.result, f"{n(op.buf)}.Get<{ty}>()[{op.offset.value.data}]", "t")
        elif isinstance(op, ac.AllocTensorOp):
            ty = c_type(op.result.type.element_type)
            self.decl(op.result, f"{n(op.queue)}.AllocTensor<{ty}>()", "t")
        elif isinstance(op, ac.EnQueOp):
            self.emit(f"{n(op.queue)}.EnQue({n(op.tensor)});")
        elif isinstance(op, ac.DeQueOp):
            ty = c_type(op.result.type.element_type)
            self.decl(op.result, f"{n(op.queue)}.DeQue<{ty}>()", "t")
        elif isinstance(op, ac.FreeTensorOp):
            self.emit(f"{n(op.queue)}.FreeTensor({n(op.tensor)});")
        elif isinstance(op, ac.SubviewOp):
            self.decl(op.result, f"{n(op.source)}[{n(op.offset)}]", "t")
        else:
            return False
        return True

    def _compute(self, op: Operation) -> bool:
        n = self.name
        if isinstance(op, ac.DataCopyOp):
            self.emit(f"DataCopy({n(op.dst)}, {n(op.src)}, {n(op.count)});")
        elif isinstance(op, ac.DataCopyPadOp):
            p = (
                f"DataCopyExtParams{{(uint16_t){n(op.block_count)}, (uint32_t){n(op.block_len)}, "
                f"(uint32_t){n(op.src_stride)}, (uint32_t){n(op.dst_stride)}, 0}}"
            )
            if isinstance(op.dst.type, ac.LocalTensorType):
                ty = c_type(op.dst.type.element_type)
                self.emit(
                    f"DataCopyPad({n(op.dst)}, {n(op.src)}, {p}, "
                    f"DataCopyPadExtParams<{ty}>{{false, 0, 0, 0}});"
                )
            else:
                self.emit(f"DataCopyPad({n(op.dst)}, {n(op.src)}, {p});")
        elif isinstance(op, ac.VecBinaryOp):
            self.emit(
                f"{op.api.data}({n(op.dst)}, {n(op.lhs)}, {n(op.rhs)}, (int32_t){n(op.count)});"
            )
        elif isinstance(op, ac.VecUnaryOp):
            self.emit(f"{op.api.data}({n(op.dst)}, {n(op.src)}, (int32_t){n(op.count)});")
        elif isinstance(op, ac.VecScalarOp):
            ty = c_type(ac.elem(op.dst.type))
            self.emit(
                f"{op.api.data}({n(op.dst)}, {n(op.src)}, "
                f"{c_float(float(op.scalar.value.data), ty)}, (int32_t){n(op.count)});"
            )
        elif isinstance(op, ac.DuplicateOp):
            ty = c_type(ac.elem(op.dst.type))
            self.emit(f"Duplicate({n(op.dst)}, ({ty}){n(op.scalar)}, (int32_t){n(op.count)});")
        elif isinstance(op, ac.CreateVecIndexOp):
            ty = c_type(ac.elem(op.dst.type))
            self.emit(f"CreateVecIndex({n(op.dst)}, ({ty}){n(op.first)}, (uint32_t){n(op.count)});")
        elif isinstance(op, ac.GetValueOp):
            self.decl(op.result, f"{n(op.tensor)}.GetValue({n(op.index)})")
        elif isinstance(op, ac.CastOp):
            self.emit(
                f"Cast({n(op.dst)}, {n(op.src)}, RoundMode::{op.round.data}, "
                f"(int32_t){n(op.count)});"
            )
        elif isinstance(op, ac.CompareOp):
            self.emit(
                f"Compare({n(op.mask)}, {n(op.lhs)}, {n(op.rhs)}, CMPMODE::{op.mode.data}, "
                f"(uint32_t){n(op.count)});"
            )
        elif isinstance(op, ac.SelectOp):
            self.emit(
                f"Select({n(op.dst)}, {n(op.mask)}, {n(op.lhs)}, {n(op.rhs)}, "
                f"SELMODE::VSEL_TENSOR_TENSOR_MODE, (uint32_t){n(op.count)});"
            )
        elif isinstance(op, ac.ReduceOp):
            self.emit(
                f"{op.api.data}({n(op.dst)}, {n(op.src)}, {n(op.work)}, (int32_t){n(op.count)});"
            )
        elif isinstance(op, ac.WholeReduceOp):
            order = ", ReduceOrder::ORDER_ONLY_VALUE" if op.api.data == "WholeReduceMax" else ""
            d, sb, sr = op.strides
            self.emit(
                f"{op.api.data}({n(op.dst)}, {n(op.src)}, (int32_t){n(op.mask)}, "
                f"(int32_t){n(op.repeat)}, {d}, {sb}, {sr}{order});"
            )
        elif isinstance(op, ac.BrcbOp):
            b, r = op.strides
            self.emit(
                f"Brcb({n(op.dst)}, {n(op.src)}, (uint8_t){n(op.repeat)}, "
                f"BrcbRepeatParams({b}, {r}));"
            )
        elif isinstance(op, ac.GetBlockIdxOp):
            self.decl(op.result, "(int64_t)GetBlockIdx()")
        elif isinstance(op, ac.WorkspaceOp):
            ty = c_type(ac.elem(op.result.type))
            g = n(op.result, "ws")
            self.emit(f"GlobalTensor<{ty}> {g};")
            self.emit(
                f"{g}.SetGlobalBuffer((__gm__ {ty}*)(workspace + "
                f"{self.ws_base + op.byte_offset}), {op.elements}LL);"
            )
        elif isinstance(op, ac.SyncAllOp):
            self.emit("SyncAll();  // every core of the launch arrives before any goes on")
        elif isinstance(op, ac.DataCacheCleanOp):
            ty = c_type(ac.elem(op.tensor.type))
            cache_line = ac.CACHE_LINES[op.index is None]
            at = f"[{n(op.index)}]" if op.index is not None else ""
            self.emit(
                f"DataCacheCleanAndInvalid<{ty}, CacheLine::{cache_line}, DcciDst::CACHELINE_OUT>"
                f"({n(op.tensor)}{at});"
            )
        elif isinstance(op, ac.TilingFieldOp):
            self.decl(op.result, f"tiling.{op.field.data}")
        elif isinstance(op, ac.SyncOp):
            e = op.event.data
            ev = f"ev{self.n}"
            self.n += 1
            self.emit(
                f"{{ TEventID {ev} = GetTPipePtr()->FetchEventID(HardEvent::{e}); "
                f"SetFlag<HardEvent::{e}>({ev}); WaitFlag<HardEvent::{e}>({ev}); }}"
            )
        else:
            return False
        return True

    def _matmul(self, op: Operation) -> bool:
        """The high-level Matmul API (docs/CPU_RUNTIME.md, "Matmul")."""
        n = self.name
        if isinstance(op, ac.KernelTypeOp):
            self.emit(f"KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_{op.kind.data});")
        elif isinstance(op, ac.SetSysWorkspaceOp):
            self.emit("SetSysWorkspace(workspace);  // the Matmul API's system workspace")
        elif isinstance(op, ac.CubeTilingOp):
            t = n(op.result, f"{op.prefix.data}Tiling")
            self.emit(f"TCubeTiling {t} = {{}};")
            for f in TCUBE_FIELDS:
                self.emit(f"{t}.{f} = static_cast<int32_t>(tiling.{op.prefix.data}_{f});")
        elif isinstance(op, ac.MatmulObjectOp):
            ty = c_type(op.result.type.element_type)
            ta = "true" if op.transpose_a.value.data else "false"
            tb = "true" if op.transpose_b.value.data else "false"
            self.emit(
                f"Matmul<MatmulType<TPosition::GM, CubeFormat::ND, {ty}, {ta}>, "
                f"MatmulType<TPosition::GM, CubeFormat::ND, {ty}, {tb}>,"
            )
            self.emit(
                "       MatmulType<TPosition::VECIN, CubeFormat::ND, float>, "
                "MatmulType<TPosition::GM, CubeFormat::ND, float>> "
                f"{n(op.result, 'mm')};"
            )
        elif isinstance(op, ac.RegistMatmulOp):
            objs = [
                f"{n(mm)}, &{n(t)}" for mm, t in zip(op.pairs[::2], op.pairs[1::2], strict=True)
            ]
            self.emit(f"REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), {', '.join(objs)});")
        elif isinstance(op, ac.MatmulSetTensorAOp):
            tr = "true" if op.transpose.value.data else "false"
            self.emit(f"{n(op.mm)}.SetTensorA({n(op.tensor)}, {tr});")
        elif isinstance(op, ac.MatmulSetTensorBOp):
            tr = "true" if op.transpose.value.data else "false"
            self.emit(f"{n(op.mm)}.SetTensorB({n(op.tensor)}, {tr});")
        elif isinstance(op, ac.MatmulSetTailOp):
            self.emit(f"{n(op.mm)}.SetTail((int){n(op.m)}, (int){n(op.n)}, (int){n(op.k)});")
        elif isinstance(op, ac.MatmulIterateOp):
            self.emit(f"{n(op.mm)}.Iterate();")
        elif isinstance(op, ac.MatmulGetTensorCOp):
            self.emit(
                f"{n(op.mm)}.GetTensorC({n(op.tensor)}, 0, true);  // sequential: [baseM, baseN]"
            )
        elif isinstance(op, ac.MatmulEndOp):
            self.emit(f"{n(op.mm)}.End();")
        else:
            return scalar.emit_scalar(self, op)  # the scalar-unit ops, or False
        return True

    def _if(self, op: scf.IfOp) -> None:
        """``if (cond) { ... } else { ... }`` (the else only when the op has one); an
        ``scf.if`` with results has no C++ form here."""
        if op.results:
            raise ValueError("the ascendc emitter prints scf.if without results only")
        self.emit(f"if ({self.name(op.cond)}) {{")
        for i, region in enumerate((op.true_region, op.false_region)):
            if not region.blocks:
                continue
            if i:
                self.emit("} else {")
            self.indent += 1
            self.loc = _UNSET  # either branch may run after code that changed it
            self.block(region.block)
            self.indent -= 1
        self.emit("}")
        self.loc = _UNSET

    def block(self, block: Block) -> None:
        for op in block.ops:
            if isinstance(op, scf.ForOp):
                iv = self.name(op.body.block.args[0], "i")
                self.emit(
                    f"for (int64_t {iv} = {self.name(op.lb)}; {iv} < {self.name(op.ub)}; "
                    f"{iv} += {self.name(op.step)}) {{"
                )
                self.indent += 1
                self.loc = _UNSET  # the body runs after earlier iterations changed it
                self.block(op.body.block)
                self.indent -= 1
                self.emit("}")
                self.loc = _UNSET
            elif isinstance(op, scf.IfOp):
                self._if(op)
            elif isinstance(op, scf.YieldOp | func.ReturnOp):
                continue
            elif self._arith(op):
                continue
            else:
                at = len(self.lines)
                if not (self._buffers(op) or self._compute(op) or self._matmul(op)):
                    raise ValueError(f"the ascendc emitter cannot print {op.name}")
                body = self.lines[at:]
                del self.lines[at:]
                self.mark(op)
                self.lines.extend(body)

    def print(self) -> str:
        k = self.k
        args = k.body.block.args
        params = [f"GM_ADDR {self.name(a, 'arg')}" for a in args]
        params += ["GM_ADDR workspace", "GM_ADDR tilingGm"]
        sname = struct_name(k)
        head = [
            f'extern "C" __global__ __aicore__ void {k.sym_name.data}({", ".join(params)})',
            "{",
            f"    const {sname} tiling = *reinterpret_cast<__gm__ const {sname}*>(tilingGm);",
            "    TPipe pipe;",
        ]
        self.block(k.body.block)
        return "\n".join(head + self.lines + ["}"])


def emit_kernel_source(module: ModuleOp) -> str:
    """``kernel.cpp``: the device code of every kernel in ``module`` (ascendc level)."""
    parts = ["// Generated by pyasc-mlir. Ascend C kernel source.", '#include "kernel_operator.h"']
    if any(isinstance(op, ac.MatmulObjectOp) for op in module.walk()):
        parts.append('#include "lib/matmul_intf.h"  // the high-level Matmul API')
    parts += [*LOC_GUARD, *F32_BITS_GUARD, "using namespace AscendC;", *scalar.prelude(module), ""]
    for k in kernels(module):
        fields = "\n".join(f"    int64_t {f};" for f in tiling_fields(k))
        parts += [f"struct {struct_name(k)} {{", fields, "};", "", _KernelPrinter(k).print(), ""]
    return "\n".join(parts)


@dataclass(frozen=True)
class AscendCTarget(Target):
    """``pyasc-opt -t ascendc``: print the Ascend C kernel source of an ascendc-level module."""

    name = "ascendc"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(emit_kernel_source(module))
