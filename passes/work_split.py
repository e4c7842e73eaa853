"""How a kernel's work units are divided over its ``blockDim`` cores (one rule for all kernels).

Core ``b`` takes ``units_per_core + (b < units_rem)`` consecutive units starting at
``b * units_per_core + min(b, units_rem)``; ``blockDim = max(1, min(cores, units))``. The
split is a part of every kernel's tiling struct (:func:`work_split_fields`), and the kernel
reads it back from those fields (:func:`core_range`).
"""

from __future__ import annotations

from typing import Literal, overload

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.passes.ir_builder import IRBuilder


def work_split_fields(units: int, cores: int) -> dict[str, int]:
    """The work-split fields of a tiling struct, in struct order: ``units``, ``block_dim``
    (cores used, at most ``cores``), ``units_per_core`` and ``units_rem``."""
    block_dim = max(1, min(cores, units))
    return {
        "units": units,
        "block_dim": block_dim,
        "units_per_core": units // block_dim,
        "units_rem": units % block_dim,
    }


@overload
def core_range(
    ix: IRBuilder, tile_units: Literal[True] = True
) -> tuple[SSAValue, SSAValue, SSAValue]: ...


@overload
def core_range(ix: IRBuilder, tile_units: Literal[False]) -> tuple[SSAValue, SSAValue, None]: ...


def core_range(
    ix: IRBuilder, tile_units: bool = True
) -> tuple[SSAValue, SSAValue, SSAValue | None]:
    """``(start, end, step)`` of this core's work units, built with ``ix`` from the tiling
    fields: ``step`` is field ``tile_units`` (units per loop iteration), or ``None`` when
    ``tile_units`` is false (one unit per iteration, no field read)."""
    bid = ix.add_value(asc.BlockIdxOp())
    per = ix.add_value(asc.TilingFieldOp("units_per_core"))
    rem = ix.add_value(asc.TilingFieldOp("units_rem"))
    step = ix.add_value(asc.TilingFieldOp("tile_units")) if tile_units else None
    start = ix.addi(ix.muli(bid, per), ix.mini(bid, rem))
    lt = ix.add_value(arith.CmpiOp(bid, rem, "slt"))
    extra = ix.add_value(arith.SelectOp(lt, ix.c(1), ix.c(0)))
    end = ix.addi(start, ix.addi(per, extra))
    return start, end, step
