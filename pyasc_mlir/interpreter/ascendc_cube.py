"""``ascendc`` Cube calls: the high-level ``Matmul`` object (``TCubeTiling``,
``REGIST_MATMUL_OBJ``, ``SetTensorA/B``, ``SetTail``, ``Iterate``, ``GetTensorC``, ``End``)
with A/B in GM (ND) and C in f32 to a VECIN buffer of UB; and the kernel's declarations the
Matmul API needs: ``KERNEL_TASK_TYPE_DEFAULT`` and ``SetSysWorkspace`` (the same rules as the
CPU runtime, ``pyasc_cpu/matmul.h`` and ``pyasc_cpu/core_state.h``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.dialects import func
from xdsl.interpreter import Interpreter, PythonValues, impl
from xdsl.ir import Operation

from pyasc_mlir import cube_tiling as ct
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects.attrs import kernel_platform
from pyasc_mlir.interpreter.ascendc_access import define_lanes, local_view
from pyasc_mlir.interpreter.ascendc_state import (
    AscendcFunctionsBase,
    GlobalTensor,
    api_fail,
    api_mem_fail,
    local_dtype,
    pipe_of,
    round32,
)
from pyasc_mlir.interpreter.tile_state import as_int, block_state
from pyasc_mlir.platform import Platform, ceil_div, get_platform

__all__ = ["AscendcCubeFunctions", "MatmulObject"]

KERNEL_TYPE_KEY = "ascendc.kernel_type"
"""``BlockState.allocs`` key of the kind the block declared (``KERNEL_TASK_TYPE_DEFAULT``)."""
SYS_WORKSPACE_KEY = "ascendc.sys_workspace"
"""``BlockState.allocs`` key set once the block called ``SetSysWorkspace``."""
AIV_RATIO = {"MIX_AIC_1_2": 2}
"""Vector blocks per launched block of a kernel type (1 when not listed; "GetTaskRation")."""


@dataclass(eq=False)
class MatmulObject:
    """A high-level ``Matmul`` object (A/B in GM, ND, ``dtype``; C f32 to UB).

    ``tiling``: its TCubeTiling fields once registered; ``a``/``b``: the GM tensors and
    transposes SetTensorA/B gave; ``tail``: (m, n, k) of this computation; ``next_block``:
    the next ``[baseM, baseN]`` block Iterate computes; ``block``: the block Iterate computed
    and GetTensorC has not taken yet, ``(row0, col0, values)``; ``ended`` after ``End``."""

    dtype: np.dtype
    trans_a: bool
    trans_b: bool
    tiling: dict[str, int] | None = None
    a: tuple[GlobalTensor, bool] | None = None
    b: tuple[GlobalTensor, bool] | None = None
    tail: tuple[int, int, int] | None = None
    next_block: int = 0
    block: tuple[int, int, np.ndarray] | None = None
    ended: bool = False


def _kernel_platform(op: Operation) -> Platform:
    """The platform of the kernel ``op`` is in (its ``asc.platform``; default otherwise)."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return get_platform(kernel_platform(parent) if parent is not None else None)


def _live_matmul(op: Operation, api: str, mm: MatmulObject) -> dict[str, int]:
    """The tiling of ``mm`` (raises unless it is registered and not ended)."""
    if mm.tiling is None:
        raise api_fail(op, api, "the Matmul object was not registered (REGIST_MATMUL_OBJ)")
    if mm.ended:
        raise api_fail(op, api, "the Matmul object was already ended (End)")
    return mm.tiling


def _gm_matrix(
    op: Operation, api: str, g: GlobalTensor, rows: int, cols: int, ld: int
) -> np.ndarray:
    """A ``[rows, cols]`` view of ``g`` with row stride ``ld`` (checked against the GM)."""
    last = (rows - 1) * ld + cols
    if g.offset + last > g.array.size:
        raise api_mem_fail(
            op,
            api,
            f"a [{rows}, {cols}] matrix with row stride {ld} from GM "
            f"element {g.offset} ends at element {g.offset + last}, past "
            f"the GlobalTensor of {g.array.size} elements",
        )
    isz = g.array.itemsize
    return as_strided(g.array[g.offset :], shape=(rows, cols), strides=(ld * isz, isz))


class AscendcCubeFunctions(AscendcFunctionsBase):
    """The ``Matmul`` object calls and ``TCubeTiling``."""

    @impl(ac.KernelTypeOp)
    def run_kernel_type(
        self, interpreter: Interpreter, op: ac.KernelTypeOp, args: PythonValues
    ) -> PythonValues:
        """``KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_<kind>)``: recorded for the block; its block
        index must exist for the kind. This interpreter runs ``blockDim`` vector blocks, so it
        refuses ``MIX_AIC_1_2`` (2 x blockDim vector blocks: run the CPU build)."""
        state = block_state(interpreter)
        kind = op.kind.data
        api = "KERNEL_TASK_TYPE_DEFAULT"
        old = state.allocs.get(KERNEL_TYPE_KEY)
        if old is not None and old != kind:
            raise api_fail(
                op,
                api,
                f"kernel type KERNEL_TYPE_{kind} declared after "
                f"KERNEL_TYPE_{old} in the same block",
            )
        if kind in AIV_RATIO:
            raise api_fail(
                op,
                api,
                f"KERNEL_TYPE_{kind} runs {AIV_RATIO[kind]} vector blocks per "
                "launched block; the ascendc-level interpreter models 1 "
                "(use the CPU build)",
            )
        if state.idx >= state.num:
            raise api_fail(
                op,
                api,
                f"block {state.idx} of a {state.num}-block launch does not "
                f"exist for KERNEL_TYPE_{kind}",
            )
        state.allocs[KERNEL_TYPE_KEY] = kind
        return ()

    @impl(ac.SetSysWorkspaceOp)
    def run_set_sys_workspace(
        self, interpreter: Interpreter, op: ac.SetSysWorkspaceOp, args: PythonValues
    ) -> PythonValues:
        """``SetSysWorkspace(workspace)``: the Matmul API has its system workspace (the
        interpreter holds no GM workspace; only the call is recorded)."""
        block_state(interpreter).allocs[SYS_WORKSPACE_KEY] = True
        return ()

    @impl(ac.CubeTilingOp)
    def run_cube_tiling(
        self, interpreter: Interpreter, op: ac.CubeTilingOp, args: PythonValues
    ) -> PythonValues:
        """``TCubeTiling t{}; t.F = tiling.PREFIX_F; ...``: a dict of the fields."""
        tiling = block_state(interpreter).tiling
        prefix = op.prefix.data
        missing = [f for f in ct.TCUBE_FIELDS if f"{prefix}_{f}" not in tiling]
        if missing:
            raise api_fail(op, "TCubeTiling", f"the tiling struct lacks {prefix}_{missing[0]}")
        return ({f: tiling[f"{prefix}_{f}"] for f in ct.TCUBE_FIELDS},)

    @impl(ac.MatmulObjectOp)
    def run_matmul_object(
        self, interpreter: Interpreter, op: ac.MatmulObjectOp, args: PythonValues
    ) -> PythonValues:
        """Declares a Matmul object (unregistered)."""
        return (
            MatmulObject(
                local_dtype(op.result.type.element_type),
                bool(op.transpose_a.value.data),
                bool(op.transpose_b.value.data),
            ),
        )

    @impl(ac.RegistMatmulOp)
    def run_regist_matmul(
        self, interpreter: Interpreter, op: ac.RegistMatmulOp, args: PythonValues
    ) -> PythonValues:
        """``REGIST_MATMUL_OBJ``: before any ``InitBuffer``; checks each TCubeTiling against
        the documented constraints (``cube_tiling.tiling_violations``) and takes its
        ``transLength`` bytes of UB (coupled-core platforms)."""
        api = "REGIST_MATMUL_OBJ"
        state = block_state(interpreter)
        kind = state.allocs.get(KERNEL_TYPE_KEY)
        if kind == "AIV_ONLY":
            raise api_fail(
                op,
                api,
                "the kernel is declared KERNEL_TYPE_AIV_ONLY, which has no "
                "Cube core: declare KERNEL_TYPE_MIX_AIC_1_1 or _1_2",
            )
        if not state.allocs.get(SYS_WORKSPACE_KEY):
            raise api_fail(
                op,
                api,
                "no system workspace: call SetSysWorkspace(workspace) with "
                "the kernel's workspace (the host allocates "
                "GetLibApiWorkSpaceSize() bytes) before it",
            )
        pipe = pipe_of(state)
        if pipe.cursor:
            raise api_fail(
                op,
                api,
                f"must come before the first InitBuffer ({pipe.cursor} bytes "
                "of UB were already handed out)",
            )
        plat = _kernel_platform(op)
        for mm, tiling in zip(args[::2], args[1::2], strict=True):
            if mm.tiling is not None:
                raise api_fail(op, api, "the Matmul object is already registered")
            bad = ct.tiling_violations(tiling, mm.dtype.itemsize, mm.trans_a, mm.trans_b, plat)
            if bad:
                raise api_fail(op, api, f"invalid TCubeTiling: {'; '.join(bad)}")
            mm.tiling = dict(tiling)
            if tiling["transLength"]:
                pipe.take(op, round32(tiling["transLength"]))
        return ()

    def _set_tensor(
        self, op: ac.MatmulSetTensorAOp | ac.MatmulSetTensorBOp, args: PythonValues, side: str
    ) -> None:
        mm, g = args
        api = f"Matmul::SetTensor{side}"
        _live_matmul(op, api, mm)
        trans = bool(op.transpose.value.data)
        if trans and not (mm.trans_a if side == "A" else mm.trans_b):
            raise api_fail(
                op, api, f"isTranspose{side} = true needs isTrans = true in {side}'s MatmulType"
            )
        if side == "A":
            mm.a = (g, trans)
        else:
            mm.b = (g, trans)
        mm.next_block, mm.block = 0, None

    @impl(ac.MatmulSetTensorAOp)
    def run_matmul_set_tensor_a(
        self, interpreter: Interpreter, op: ac.MatmulSetTensorAOp, args: PythonValues
    ) -> PythonValues:
        """``mm.SetTensorA(gm, isTransposeA)``."""
        self._set_tensor(op, args, "A")
        return ()

    @impl(ac.MatmulSetTensorBOp)
    def run_matmul_set_tensor_b(
        self, interpreter: Interpreter, op: ac.MatmulSetTensorBOp, args: PythonValues
    ) -> PythonValues:
        """``mm.SetTensorB(gm, isTransposeB)``."""
        self._set_tensor(op, args, "B")
        return ()

    @impl(ac.MatmulSetTailOp)
    def run_matmul_set_tail(
        self, interpreter: Interpreter, op: ac.MatmulSetTailOp, args: PythonValues
    ) -> PythonValues:
        """``mm.SetTail(m, n, k)``: each in ``[1, singleCoreM/N/K]``."""
        mm, m, n, k = args
        t = _live_matmul(op, "Matmul::SetTail", mm)
        tail = (as_int(m), as_int(n), as_int(k))
        for name, v, top in zip(
            "MNK", tail, (t["singleCoreM"], t["singleCoreN"], t["singleCoreK"]), strict=True
        ):
            if not 1 <= v <= top:
                raise api_fail(
                    op,
                    "Matmul::SetTail",
                    f"tail{name} = {v} is outside [1, singleCore{name} = {top}]",
                )
        mm.tail = tail
        mm.next_block, mm.block = 0, None
        return ()

    @impl(ac.MatmulIterateOp)
    def run_matmul_iterate(
        self, interpreter: Interpreter, op: ac.MatmulIterateOp, args: PythonValues
    ) -> PythonValues:
        """``mm.Iterate()``: the next ``[baseM, baseN]`` block of C (M first when
        ``iterateOrder`` is 0), f32 accumulation over the whole K; nothing when all blocks
        were computed."""
        (mm,) = args
        api = "Matmul::Iterate"
        t = _live_matmul(op, api, mm)
        if mm.a is None or mm.b is None:
            raise api_fail(op, api, "SetTensorA and SetTensorB must come first")
        tm, tn, tk = mm.tail or (t["singleCoreM"], t["singleCoreN"], t["singleCoreK"])
        bm, bn = t["baseM"], t["baseN"]
        m_blocks, n_blocks = ceil_div(tm, bm), ceil_div(tn, bn)
        if mm.next_block >= m_blocks * n_blocks:
            mm.block = None
            return ()
        i = mm.next_block
        mi, ni = (
            (i % m_blocks, i // m_blocks)
            if t["iterateOrder"] == 0
            else (i // n_blocks, i % n_blocks)
        )
        mm.next_block += 1
        r0, c0 = mi * bm, ni * bn
        rows, cols = min(bm, tm - r0), min(bn, tn - c0)
        (ga, ta), (gb, tb) = mm.a, mm.b
        lhs = (
            _gm_matrix(op, api, ga, tk, r0 + rows, t["M"])[:, r0:].T
            if ta
            else _gm_matrix(op, api, ga, r0 + rows, tk, t["Ka"])[r0:]
        )
        rhs = (
            _gm_matrix(op, api, gb, c0 + cols, tk, t["Kb"])[c0:].T
            if tb
            else _gm_matrix(op, api, gb, tk, c0 + cols, t["N"])[:, c0:]
        )
        mm.block = (r0, c0, np.matmul(lhs.astype(np.float32), rhs.astype(np.float32)))
        return ()

    @impl(ac.MatmulGetTensorCOp)
    def run_matmul_get_tensor_c(
        self, interpreter: Interpreter, op: ac.MatmulGetTensorCOp, args: PythonValues
    ) -> PythonValues:
        """``mm.GetTensorC(ub, 0, true)`` (sequential write; ``ub`` in a VECIN buffer): the
        block Iterate computed, ND with row stride ``baseN``
        (its rows only; columns past its width are 0); ``ub`` must hold ``baseM * baseN``
        elements (documented). Memory check: defines ``rows * baseN`` elements."""
        mm, dst = args
        api = "Matmul::GetTensorC"
        t = _live_matmul(op, api, mm)
        if mm.block is None:
            raise api_fail(
                op,
                api,
                "no block to get: Iterate computed none since the last "
                "GetTensorC / SetTensorA / SetTensorB / SetTail",
            )
        bm, bn = t["baseM"], t["baseN"]
        state = block_state(interpreter)
        pos = pipe_of(state).position_of(dst.offset)
        if pos is not None and pos != "VECIN":
            raise api_fail(
                op,
                api,
                f"C LocalTensor at UB offset {dst.offset} is in a "
                f"TPosition::{pos} buffer; the Matmul API writes C to "
                "TPosition::VECIN (a TQue or TBuf of VECIN)",
            )
        if dst.size < bm * bn:
            raise api_mem_fail(
                op,
                api,
                f"C LocalTensor at UB offset {dst.offset} holds {dst.size} "
                f"elements; baseM * baseN = {bm * bn} are required",
            )
        _, _, values = mm.block
        rows, cols = values.shape
        d = local_view(op, api, "C", dst, rows * bn, state.ub).reshape(rows, bn)
        d[:, :cols] = values
        d[:, cols:] = 0
        if state.shadow is not None:
            define_lanes(state, dst, rows * bn)
        mm.block = None
        return ()

    @impl(ac.MatmulEndOp)
    def run_matmul_end(
        self, interpreter: Interpreter, op: ac.MatmulEndOp, args: PythonValues
    ) -> PythonValues:
        """``mm.End()``: no Matmul call may follow."""
        (mm,) = args
        _live_matmul(op, "Matmul::End", mm)
        mm.ended = True
        return ()
