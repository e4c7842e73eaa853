"""Tile-level Cube op: ``asc.mmad``, one output block of ``A @ B`` from GM into UB."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, PythonValues, impl

from pyasc_mlir.dialects.asc import MmadOp
from pyasc_mlir.interpreter.tile_access import gm_matrix
from pyasc_mlir.interpreter.tile_memcheck import set_defined
from pyasc_mlir.interpreter.tile_state import (
    TileFunctionsBase,
    as_int,
    block_state,
    tile_fail,
    tile_mem_fail,
)

__all__ = ["TileCubeFunctions"]


class TileCubeFunctions(TileFunctionsBase):
    """``asc.mmad``."""

    @impl(MmadOp)
    def run_mmad(self, interpreter: Interpreter, op: MmadOp, args: PythonValues) -> PythonValues:
        """One Cube output block into UB (see ``asc.MmadOp``): ``dst[i*ls + j]`` for
        ``i < m``, ``j < ls`` gets ``sum_p A(i, p) * B(p, j)`` (``j < n``) or 0 (``n <= j``).
        ``m, n, k >= 1``. Operands are converted to f32 (exact for f16) and multiplied with
        ``np.matmul`` in float32 (f32 accumulation; the summation order is unspecified, as on
        the Cube unit).
        Memory check: defines ``dst[0, m*ls)``; GM reads need no definedness."""
        dst, a, b, a_off, b_off, m, n, k, lda, ldb, ls = args
        a_off, b_off, m, n, k = as_int(a_off), as_int(b_off), as_int(m), as_int(n), as_int(k)
        lda, ldb, ls = as_int(lda), as_int(ldb), as_int(ls)
        if min(m, n, k) < 1 or min(lda, ldb, ls, a_off, b_off) < 0:
            raise tile_fail(
                op,
                f"sizes must be >= 1 (Matmul SetTail) and strides and offsets "
                f">= 0 (m={m} n={n} k={k} lda={lda} ldb={ldb} ls={ls} "
                f"a_offset={a_off} b_offset={b_off})",
            )
        if n > ls:
            raise tile_fail(op, f"n = {n} exceeds the row length ls = {ls}")
        if m * ls > dst.size:
            raise tile_mem_fail(
                op,
                f"block of {m} x {ls} elements exceeds the destination "
                f"buffer of {dst.size} elements",
            )
        lhs = gm_matrix(op, "a", a, a_off, (k, m) if op.trans_a else (m, k), lda)
        rhs = gm_matrix(op, "b", b, b_off, (n, k) if op.trans_b else (k, n), ldb)
        lhs = lhs.T if op.trans_a else lhs
        rhs = rhs.T if op.trans_b else rhs
        block = np.zeros((m, ls), np.float32)
        block[:, :n] = np.matmul(lhs.astype(np.float32), rhs.astype(np.float32))
        dst[: m * ls] = block.reshape(-1)
        set_defined(block_state(interpreter), dst, m * ls, True)
        return ()
