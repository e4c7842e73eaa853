"""Registry of the project's passes and named pipelines (used by ``pyasc-opt`` and by
``pyasc_mlir.pipeline``, which runs ``asc-to-ascendc`` for ``compile``)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _decompose() -> type[ModulePass]:
    from pyasc_mlir.passes.decompose import AscDecomposePass

    return AscDecomposePass


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
    "asc-decompose": _decompose,
    "asc-fuse": _fuse,
    "asc-lower-layout": _lower_layout,
    "asc-lower-cube": _lower_cube,
    "asc-tile": _tile,
    "asc-double-buffer": _double_buffer,
    "asc-buffer-alloc": _buffer_alloc,
    "convert-asc-to-ascendc": _to_ascendc,
    "asc-flash-attention": _flash_attention,
}
"""Pass name -> loader of the pass class (lazy, so tools start fast)."""

PIPELINES: dict[str, list[str]] = {
    "asc-to-tile": ["asc-decompose", "asc-fuse", "asc-lower-layout", "asc-lower-cube", "asc-tile"],
    "asc-to-ascendc": [
        "asc-decompose",
        "asc-fuse",
        "asc-lower-layout",
        "asc-lower-cube",
        "asc-tile",
        "asc-double-buffer",
        "asc-buffer-alloc",
        "convert-asc-to-ascendc",
    ],
}
"""Named pipelines: lists of pass names, run in order."""
