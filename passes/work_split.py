"""How a kernel's work units are divided over its ``blockDim`` cores (one rule for all kernels).

Core ``b`` takes ``units_per_core + (b < units_rem)`` consecutive units starting at
``b * units_per_core + min(b, units_rem)``; ``blockDim = max(1, min(cores, units))``. The
split is a part of every kernel's tiling struct (:func:`work_split_fields`), and the kernel
reads it back from those fields (:func:`core_range`).
"""

from __future__ import annotations

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


def core_range(
    ix: IRBuilder, tile_units: bool = True
) -> tuple[SSAValue, SSAValue, SSAValue | None]:
    """``(start, end, step)`` of this core's work units, built with ``ix`` from the tiling
    fields: ``step`` is field ``tile_units`` (units per loop iteration), or ``None`` when
    ``tile_units`` is false (one unit per iteration, no field read)."""
    bid = ix.add(asc.BlockIdxOp())
    per = ix.add(asc.TilingFieldOp("units_per_core"))
    rem = ix.add(asc.TilingFieldOp("units_rem"))
    step = ix.add(asc.TilingFieldOp("tile_units")) if tile_units else None
    start = ix.addi(ix.muli(bid, per), ix.mini(bid, rem))  # type: ignore[arg-type]
    lt = ix.add(arith.CmpiOp(bid, rem, "slt"))  # type: ignore[arg-type]
    extra = ix.add(arith.SelectOp(lt, ix.c(1), ix.c(0)))  # type: ignore[arg-type]
    end = ix.addi(start, ix.addi(per, extra))  # type: ignore[arg-type]
    return start, end, step
