"""What ``pyasc-opt -t ascendc`` checks before printing: the module is lowered to the
``ascendc`` dialect and every kernel has its tiling struct, so the target never prints an empty
kernel file or fails inside the emitter."""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp

from pyasc_mlir.dialects.attrs import TILING_ATTR, module_kernels
from pyasc_mlir.tools.opt_diagnostics import Diagnostic, LocatedError, at_op

NOT_LOWERED_HINT = (
    "hint: run -p convert-asc-to-ascendc (after asc-buffer-alloc), or "
    "-p asc-to-ascendc from the tensor level"
)
NO_TILING_HINT = (
    "hint: kernels get asc.tiling from asc-tile, asc-lower-layout or "
    "asc-lower-cube; hand-written kernels need asc.tiling = {...}"
)


def check_emittable(
    module: ModuleOp, parsed: Mapping[str, tuple[str, int, int]] | None = None
) -> None:
    """Raise :class:`LocatedError` unless ``module`` has a kernel, no kernel holds an ``asc``
    op (tile or tensor level) and every kernel has an ``asc.tiling`` dictionary. ``parsed``:
    where each function was in the input (``file, line, col``), for kernels that passes
    rebuilt without a location."""
    kernels: list[func.FuncOp] = module_kernels(module)
    if not kernels:
        raise LocatedError(
            Diagnostic(
                "-t ascendc: the module has no kernel (a func.func with the asc.kernel attribute) "
                "to emit",
                notes=["hint: lower tensor-level IR first: -p asc-to-ascendc"],
            )
        )
    for k in kernels:
        for op in k.walk():
            if op.name.startswith("asc."):
                raise LocatedError(
                    at_op(
                        op,
                        f"-t ascendc: '{op.name}' is not lowered to the ascendc dialect",
                        [NOT_LOWERED_HINT],
                    )
                )
        if not isinstance(k.attributes.get(TILING_ATTR), DictionaryAttr):
            name = k.sym_name.data
            diag = at_op(
                k,
                f"-t ascendc: kernel @{name} has no asc.tiling attribute (its tiling struct)",
                [NO_TILING_HINT],
            )
            if diag.line is None and parsed and name in parsed:
                diag.file, diag.line, diag.col = parsed[name]
            raise LocatedError(diag)
