"""Registry of the project's passes and named pipelines (used by ``pyasc-opt`` and by
``pyasc_mlir.pipeline``, which runs ``asc-to-ascendc`` for ``compile``)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _autodiff() -> type[ModulePass]:
    from pyasc_mlir.passes.autodiff import AscAutodiffPass

    return AscAutodiffPass


def _decompose() -> type[ModulePass]:
    from pyasc_mlir.passes.decompose import AscDecomposePass

    return AscDecomposePass


def _raise_loops() -> type[ModulePass]:
    from pyasc_mlir.passes.raise_loops import AscRaiseLoopsPass

    return AscRaiseLoopsPass


def _lower_loops() -> type[ModulePass]:
    from pyasc_mlir.passes.lower_loops import AscLowerLoopsPass

    return AscLowerLoopsPass


def _fuse() -> type[ModulePass]:
    from pyasc_mlir.passes.fuse import AscFusePass

    return AscFusePass


def _lower_layout() -> type[ModulePass]:
    from pyasc_mlir.passes.lower_layout import AscLowerLayoutPass

    return AscLowerLayoutPass


def _lower_cube() -> type[ModulePass]:
    from pyasc_mlir.passes.lower_cube import AscLowerCubePass

    return AscLowerCubePass


def _flash_attention() -> type[ModulePass]:
    from pyasc_mlir.passes.flash_attention import AscFlashAttentionPass

    return AscFlashAttentionPass


def _lower_attention() -> type[ModulePass]:
    from pyasc_mlir.passes.lower_attention import AscLowerAttentionPass

    return AscLowerAttentionPass


def _tile() -> type[ModulePass]:
    from pyasc_mlir.passes.tile import AscTilePass

    return AscTilePass


def _double_buffer() -> type[ModulePass]:
    from pyasc_mlir.passes.double_buffer import AscDoubleBufferPass

    return AscDoubleBufferPass


def _buffer_alloc() -> type[ModulePass]:
    from pyasc_mlir.passes.buffer_alloc import AscBufferAllocPass

    return AscBufferAllocPass


def _to_ascendc() -> type[ModulePass]:
    from pyasc_mlir.passes.convert_to_ascendc import ConvertAscToAscendcPass

    return ConvertAscToAscendcPass


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "asc-autodiff": _autodiff,
    "asc-decompose": _decompose,
    "asc-fuse": _fuse,
    "asc-lower-layout": _lower_layout,
    "asc-lower-cube": _lower_cube,
    "asc-tile": _tile,
    "asc-double-buffer": _double_buffer,
    "asc-buffer-alloc": _buffer_alloc,
    "convert-asc-to-ascendc": _to_ascendc,
    "asc-flash-attention": _flash_attention,
    "asc-lower-attention": _lower_attention,
    "asc-raise-loops": _raise_loops,
    "asc-lower-loops": _lower_loops,
}
"""Pass name -> loader of the pass class (lazy, so tools start fast)."""

PIPELINES: dict[str, list[str]] = {
    "asc-to-tile": [
        "asc-decompose",
        "asc-flash-attention",
        "asc-fuse",
        "asc-lower-layout",
        "asc-lower-attention",
        "asc-lower-cube",
        "asc-tile",
    ],
    "asc-to-ascendc": [
        "asc-decompose",
        "asc-flash-attention",
        "asc-fuse",
        "asc-lower-layout",
        "asc-lower-attention",
        "asc-lower-cube",
        "asc-tile",
        "asc-double-buffer",
        "asc-buffer-alloc",
        "convert-asc-to-ascendc",
    ],
}
"""Named pipelines: lists of pass names, run in order."""

PIPELINES["lang-to-ascendc"] = ["asc-raise-loops", *PIPELINES["asc-to-ascendc"], "asc-lower-loops"]
# The kernel language (pyasc_mlir.language): its loop nests are raised first; the nests that
# cannot be raised (asc_loop.nest) become scalar-loop kernels last, already at the ascendc level.
