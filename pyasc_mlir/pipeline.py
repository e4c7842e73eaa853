"""Lowering: the frontend, then the pass pipeline declared in ``passes/registry.py``.

:func:`lower` builds the tensor-level module of an operator and runs the registry's
:data:`PIPELINE` over it, pass by pass, with the options the compile call pins
(:func:`pass_options`), keeping a snapshot of the IR at every stage of :data:`STAGES`.
Also here: the pinned-tiling checks (:func:`check_tiling`, :func:`cube_tiles`) and the
dynamic-dim request for ``asc-tile`` (:func:`dynamic_request`).
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, memref, scf
from xdsl.dialects.builtin import ModuleOp

from pyasc_mlir.dialects import asc
from pyasc_mlir.dialects.asc import Asc
from pyasc_mlir.dialects.asc_loop import AscLoop
from pyasc_mlir.dialects.ascendc import Ascendc
from pyasc_mlir.dialects.attrs import DYNAMIC_REQUEST_ATTR
from pyasc_mlir.errors import PyAscCompileError, PyAscUsageError, SourceLoc, caller_loc
from pyasc_mlir.frontend.ast_frontend import SHAPE_READ_ATTR, build_module
from pyasc_mlir.lowering_log import FRONTEND, Observer, observer
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.passes.registry import PASSES, PIPELINES
from pyasc_mlir.types import TensorDesc, np_dtype_of

STAGES = ("tensor", "tile", "ascendc")
"""The IR snapshots :func:`lower` keeps: after the frontend, after buffer allocation (tile
level, every buffer placed) and after conversion to ``ascendc``."""

PIPELINE = "asc-to-ascendc"
"""The registry pipeline (``passes.registry.PIPELINES``) that ``compile`` runs."""

TILE_STAGE_AFTER = "asc-buffer-alloc"
"""The pass after which :func:`lower` snapshots the ``tile`` stage."""

RAISE_PASS = "asc-raise-loops"
"""A kernel-language operator's ``tensor`` stage is snapshot after this pass (the loop IR
before it is the frontend's output, seen by ``PYASC_LOG_LEVEL``/``PYASC_DUMP_DIR``)."""

STAND_IN = 997
"""The size a dynamic (``None``) dim is compiled at: > 1 (so it is not broadcast), prime and
unusual (so it rarely equals a static dim it meets)."""

TILING_KEYS = ("tile", "block_dim", "buffers", "tile_m", "tile_n")
"""The keys of a pinned ``tiling`` dict (see ``compile``)."""


def make_context() -> Context:
    """An xDSL context with every dialect pyasc-mlir uses."""
    ctx = Context()
    for d in (
        builtin.Builtin,
        func.Func,
        arith.Arith,
        scf.Scf,
        memref.MemRef,
        Asc,
        AscLoop,
        Ascendc,
    ):
        ctx.load_dialect(d)
    return ctx


def pass_options(
    platform: str,
    double_buffer: bool,
    fuse: bool = True,
    tile: int = 0,
    block_dim: int = 0,
    tile_m: int = 0,
    tile_n: int = 0,
) -> dict[str, dict[str, Any]]:
    """Pass name -> the keyword options :func:`lower` constructs that pass with, for every pass
    of :data:`PIPELINE` (see :func:`lower` for the arguments)."""
    buffers = 2 if double_buffer else 1
    return {
        "asc-raise-loops": {},
        "asc-decompose": {},
        "asc-flash-attention": {"enable": fuse},
        "asc-fuse": {"per_op": not fuse},
        "asc-lower-layout": {"platform": platform, "buffers": buffers},
        "asc-lower-cube": {
            "platform": platform,
            "buffers": buffers,
            "tile_m": tile_m,
            "tile_n": tile_n,
            "block_dim": block_dim,
        },
        "asc-lower-attention": {
            "platform": platform,
            "buffers": buffers,
            "block_dim": block_dim,
        },
        "asc-tile": {
            "platform": platform,
            "buffers": buffers,
            "tile": tile,
            "block_dim": block_dim,
        },
        "asc-double-buffer": {"enable": double_buffer},
        "asc-buffer-alloc": {},
        "convert-asc-to-ascendc": {},
        "asc-lower-loops": {"platform": platform},
    }


def lower(
    fn: Callable[..., Any],
    inputs: Sequence[object],
    name: str,
    platform: str,
    double_buffer: bool,
    fuse: bool = True,
    tile: int = 0,
    block_dim: int = 0,
    dynamic: dict[str, Any] | None = None,
    tile_m: int = 0,
    tile_n: int = 0,
    watch: Observer | None = None,
) -> tuple[dict[str, ModuleOp], list[str], dict[str, float]]:
    """Frontend and pass pipeline: ``(stages, result dtypes, seconds per step)``; ``stages``
    maps each of :data:`STAGES` to its module, the times cover ``"frontend"`` and every pass.

    ``dynamic``: the dynamic-dim request for ``asc-tile`` (see :func:`dynamic_request`), put on
    the top-level function. ``fuse=False``: one kernel per tensor op. ``tile``: asc-tile's
    pinned tile; ``tile_m``/``tile_n``: asc-lower-cube's pinned block; ``block_dim``: both
    passes' pinned cores (0 = automatic). ``watch``: sees the IR after every step
    (:mod:`pyasc_mlir.lowering_log`; default: the one ``PYASC_LOG_LEVEL``/``PYASC_DUMP_DIR``
    ask for, if any).

    Raises:
        PyAscCompileError: the frontend or a pass rejects the operator (located).
        PyAscUsageError: ``PYASC_DUMP_DIR`` cannot be written."""
    watch = watch if watch is not None else observer(name)
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    module, result_dtypes, pipeline_name = _frontend(fn, list(inputs), name)
    dynamic = _no_shape_reads(module, name, dynamic)
    if dynamic is not None:
        top_function(module, name).attributes[DYNAMIC_REQUEST_ATTR] = builtin.StringAttr(
            json.dumps(dynamic)
        )
    times["frontend"] = time.perf_counter() - t0
    if watch is not None:
        watch.after(FRONTEND, module)
    ctx = make_context()
    # the tensor-level stage: the frontend's module, or (kernel language) the raised one
    stages = {"tensor": module.clone()} if pipeline_name == PIPELINE else {}
    options = pass_options(platform, double_buffer, fuse, tile, block_dim, tile_m, tile_n)
    for pass_name in PIPELINES[pipeline_name]:
        t0 = time.perf_counter()
        PASSES[pass_name]()(**options[pass_name]).apply(ctx, module)
        times[pass_name] = time.perf_counter() - t0
        if watch is not None:
            watch.after(pass_name, module)
        if pass_name == RAISE_PASS:
            stages["tensor"] = module.clone()
        if pass_name == TILE_STAGE_AFTER:
            stages["tile"] = module.clone()
    stages["ascendc"] = module
    return stages, result_dtypes, times


def _frontend(
    fn: Callable[..., Any], inputs: list[object], name: str
) -> tuple[ModuleOp, list[str], str]:
    """The frontend's module, result dtypes and the registry pipeline to run: the
    kernel-language frontend and ``lang-to-ascendc`` for a ``@lang.kernel`` function, the
    function's own builder for a derived operator (``__pyasc_build__``: ``pa.vjp``'s backward),
    else the tensor frontend; both of the latter with :data:`PIPELINE`."""
    if getattr(getattr(fn, "fn", fn), "__pyasc_lang__", False):
        from pyasc_mlir.language.kernel import build_kernel_module

        module, dtypes = build_kernel_module(fn, inputs, name)
        return module, dtypes, "lang-to-ascendc"
    derived = getattr(fn, "__pyasc_build__", None)  # a derived operator (pa.vjp's backward)
    if derived is not None:
        module, dtypes = derived(inputs, name)
    else:
        module, dtypes = build_module(fn, inputs, name)
    return module, dtypes, PIPELINE


def top_function(module: ModuleOp, name: str) -> func.FuncOp:
    """The operator's top-level (host) function ``name`` in ``module``.

    Raises:
        StopIteration: no such function (a compiler bug)."""
    return next(
        op
        for op in module.body.block.ops
        if isinstance(op, func.FuncOp) and op.sym_name.data == name
    )


def result_descs(top: func.FuncOp) -> list[TensorDesc]:
    """The results of the operator's top-level function ``top``, as ``TensorDesc`` s."""
    descs = []
    for t in top.function_type.outputs.data:
        assert isinstance(t, builtin.TensorType)  # an operator returns tensors
        descs.append(TensorDesc(t.get_shape(), np_dtype_of(t.element_type)))
    return descs


def _no_shape_reads(
    module: ModuleOp, name: str, dynamic: dict[str, Any] | None
) -> dict[str, Any] | None:
    """An operator that reads tensor shapes (``.shape``, ``len``, ``match_shape``) would bake
    the compile-time size of a dynamic dim into its IR: with dims given as ``None`` that is a
    located error; under ``dynamic=True`` the operator stays static (compiled per shape).

    Raises:
        PyAscCompileError: ``None`` dims and a shape read.
    """
    if dynamic is None:
        return None
    where = top_function(module, name).attributes.get(SHAPE_READ_ATTR)
    if where is None:
        return dynamic
    assert isinstance(where, builtin.StringAttr)  # "file:line:col", set by the frontend
    if any(strict for _, _, strict in dynamic["dims"]):
        raise PyAscCompileError(
            "this operator reads a tensor's shape, which would fix the dims given as None to "
            "their compile-time stand-in size",
            SourceLoc.parse(where.data),
            "give those dims static sizes, or use @pa.jit(dynamic=True), which compiles such "
            "an operator per shape",
        )
    return None


def dynamic_request(
    fn: Callable[..., Any], inputs: Sequence[object], auto: bool
) -> tuple[list[object], dict[str, Any] | None]:
    """The inputs with ``None`` dims at :data:`STAND_IN`, and the request for ``asc-tile``
    (``passes/dynamic_shapes.py``): ``[tensor arg, dim, strict]`` per dim that may be dynamic
    (``strict``: given as ``None``; otherwise offered by ``dynamic=True``); ``None`` when no
    dim is dynamic and ``auto`` is off."""
    dims: list[list[Any]] = []
    count = 0

    def concrete(d: object) -> object:
        nonlocal count
        if isinstance(d, tuple | list):
            return type(d)(concrete(x) for x in d)
        if not isinstance(d, TensorDesc):
            return d
        shape = []
        for j, e in enumerate(d.shape):
            if e is None or (auto and e > 1):
                dims.append([count, j, e is None])
            shape.append(STAND_IN if e is None else e)
        count += 1
        return TensorDesc(shape, d.dtype)

    out = [concrete(d) for d in inputs]
    if not dims and not auto:
        return list(inputs), None
    return out, {"dims": dims, "names": tensor_arg_names(fn, inputs)}


def tensor_descs(inputs: Sequence[object]) -> list[TensorDesc]:
    """The tensor arguments in order: ``TensorDesc`` entries, and those inside a tuple or list
    entry (a variadic tensor-tuple argument) in place."""
    out: list[TensorDesc] = []
    for d in inputs:
        items = d if isinstance(d, tuple | list) else (d,)
        out.extend(x for x in items if isinstance(x, TensorDesc))
    return out


def tensor_arg_names(fn: Callable[..., Any], inputs: Sequence[object]) -> list[str]:
    """Parameter names of the tensor arguments (for messages; ``xs[1]`` inside a tuple
    argument); ``arg<i>`` where unknown."""
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for i, d in enumerate(inputs):
        name = params[i] if i < len(params) else f"arg{i}"
        if isinstance(d, TensorDesc):
            names.append(name)
        elif isinstance(d, tuple | list):
            names += [f"{name}[{j}]" for j, x in enumerate(d) if isinstance(x, TensorDesc)]
    return names


def check_tiling(tiling: dict[str, int] | None, double_buffer: bool) -> tuple[int, int, bool]:
    """``(tile, block_dim, double_buffer)`` of a pinned ``tiling`` dict (see ``compile``; its
    ``tile_m``/``tile_n`` are read by :func:`cube_tiles`); the ranges that depend on the kernel
    (UB/L0C fit, core count, multiples of 16) are checked by ``asc-tile`` and
    ``asc-lower-cube``.

    Raises:
        PyAscUsageError: unknown key, a value that is not an int >= 0, or buffers not 1 or 2
            (located at the calling line)."""
    if tiling is None:
        return 0, 0, double_buffer
    hint = (
        'pin e.g. tiling={"tile": 24, "block_dim": 40, "buffers": 2} (matmul kernels: '
        '"tile_m", "tile_n"); 0 or a missing key keeps the automatic choice'
    )
    if not isinstance(tiling, dict):
        raise PyAscUsageError(
            f"tiling must be a dict, got {type(tiling).__name__}", caller_loc(), hint
        )
    for k, v in tiling.items():
        if k not in TILING_KEYS:
            raise PyAscUsageError(
                f"unknown tiling key {k!r}; known: {', '.join(TILING_KEYS)}", caller_loc(), hint
            )
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0:
            raise PyAscUsageError(
                f"tiling[{k!r}] = {v!r} is not an integer >= 0", caller_loc(), hint
            )
    buffers = tiling.get("buffers", 0)
    if buffers not in (0, 1, 2):
        raise PyAscUsageError(
            f"tiling['buffers'] = {buffers} is not 1 or 2",
            caller_loc(),
            "1 = single buffering, 2 = double buffering (MTE2/V/MTE3 overlap)",
        )
    return (
        int(tiling.get("tile", 0)),
        int(tiling.get("block_dim", 0)),
        double_buffer if not buffers else buffers == 2,
    )


def cube_tiles(tiling: dict[str, int] | None) -> tuple[int, int]:
    """``(tile_m, tile_n)`` of a ``tiling`` dict already checked by :func:`check_tiling`
    (0 = automatic)."""
    if tiling is None:
        return 0, 0
    return int(tiling.get("tile_m", 0)), int(tiling.get("tile_n", 0))


def lower_empty(
    fn: Callable[..., Any], inputs: Sequence[object], name: str
) -> tuple[ModuleOp, list[TensorDesc]]:
    """The tensor-level module and result descriptions of an operator with a zero-size input
    dimension (no pass runs: no kernel is built for it).

    Raises:
        PyAscCompileError: the frontend rejects the operator, or a non-empty result is a
            ``max``/``min`` over a zero-size dimension (it has no value)."""
    module, _, _ = _frontend(fn, list(inputs), name)
    outs = result_descs(top_function(module, name))
    for op in module.walk() if not all(0 in d.shape for d in outs) else ():
        if isinstance(op, asc.ReduceOp) and op.kind.data in ("max", "min"):
            assert isinstance(op.input.type, builtin.TensorType)  # ReduceOp's constraint
            shape = op.input.type.get_shape()
            if any(shape[a] == 0 for a in op.axes.get_values()):
                raise PyAscCompileError(
                    f"{op.kind.data}() over a zero-size dimension (shape {list(shape)}) has no "
                    "result",
                    loc_of(op),
                    "skip the call for empty inputs, or use sum()",
                )
    return module, outs
