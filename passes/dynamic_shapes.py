"""Dynamic dimensions for ``asc-tile``: which iteration-axis extents come from the call.

The driver compiles an operator with dynamic dims at a stand-in size and marks them on the
top-level ``func.func`` (attribute :data:`REQUEST_ATTR`, JSON: ``{"dims": [[arg, dim,
strict], ...], "names": [...]}``; ``arg`` counts the tensor arguments). ``asc-tile`` then
plans and sizes tiles from the static dims only: every kernel value that depends on a dynamic
extent (GM sizes, the extents and strides of partially broadcast inputs) is read from a tiling
field, and the kernel gets a :data:`SPEC_ATTR` attribute (JSON, see :func:`spec`) from which the
host computes the whole tiling struct at call time (``pyasc_mlir.dynamic``: Python for the CPU
runtime and the emitted ``host.cpp``).

Rule (``docs/DESIGN.md``): only dims of *outer* iteration axes (the tiled leading dims that no
reduction covers) may be dynamic. The inner axes ``[M, L]`` are held whole in the Unified Buffer
and sized at compile time, so a dynamic dim there is a located :class:`PyAscCompileError`
(``strict`` dims: ``None`` in a ``TensorDesc``), or silently kept static (dims that
``@jit(dynamic=True)`` only offered).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import BlockArgument, SSAValue

from pyasc_mlir.dialects import asc, attrs
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.passes.iteration_space import IterationSpace

REQUEST_ATTR = attrs.DYNAMIC_REQUEST_ATTR
"""Top-level function attribute: the dynamic dims the driver asks for (JSON string)."""
SPEC_ATTR = attrs.DYNAMIC_SPEC_ATTR
"""Kernel attribute: how the host computes the tiling struct from the call's shapes (JSON)."""


@dataclass
class Factor:
    """One tensor dimension class inside an iteration axis (axes coalesce several dims).

    ``value`` is the compiled (stand-in) extent; ``sources`` the ``(arg, dim)`` input dims of
    this class; ``dynamic``: the extent is read from the call (every source is dynamic)."""

    value: int
    sources: list[tuple[int, int]] = field(default_factory=list)
    dynamic: bool = False


@dataclass
class DynamicShapes:
    """Dynamic-extent bookkeeping of one fusion's iteration space (see module docstring)."""

    space: IterationSpace
    factors: list[list[Factor]]
    dims: dict[SSAValue, list[tuple[int, int] | None]]
    """Per value dim: ``(axis, factor index)``, or ``None`` for a size-1 dim."""
    fields: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Extra tiling fields (name -> the axes whose extents they multiply), in creation order."""

    def axis_dynamic(self, a: int) -> bool:
        return any(f.dynamic for f in self.factors[a])

    def any_dynamic(self, axes: Any) -> bool:
        return any(self.axis_dynamic(a) for a in axes)

    def product_field(self, axes: Any, name: str | None = None) -> str:
        """Name of the tiling field holding the product of the extents of ``axes``."""
        key = tuple(sorted(axes))
        name = name or "ext_" + "_".join(map(str, key))
        self.fields.setdefault(name, key)
        return name


def _request(fusion: asc.FusionOp) -> dict[str, Any] | None:
    parent = fusion.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    attr = parent.attributes.get(REQUEST_ATTR) if parent is not None else None
    return json.loads(attr.data) if isinstance(attr, StringAttr) else None


def _shape(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def _assign(space: IterationSpace, v: SSAValue) -> list[tuple[int, int] | None]:
    """Each dim of ``v`` -> (axis, position inside the axis): the non-1 dims, in order, fill
    ``v``'s axes in order, each axis taking dims until their product is its extent."""
    shape = _shape(v)
    out: list[tuple[int, int] | None] = [None] * len(shape)
    dims = [d for d, e in enumerate(shape) if e > 1]
    i = 0
    for a in sorted(space.has[v]):
        prod, k = 1, 0
        while i < len(dims) and prod < space.extents[a]:
            prod *= shape[dims[i]]
            out[dims[i]] = (a, k)
            i, k = i + 1, k + 1
    return out


def analyze_dynamic(fusion: asc.FusionOp, space: IterationSpace) -> DynamicShapes | None:
    """The dynamic-extent map of ``fusion``, or ``None`` when the driver asked for none."""
    req = _request(fusion)
    if req is None:
        return None
    wanted = {(a, d) for a, d, _ in req["dims"]}
    block = fusion.body.block
    values = list(block.args) + [r for op in block.ops for r in op.results]
    dims = {v: _assign(space, v) for v in values if isinstance(v.type, TensorType)}
    factors: list[list[Factor]] = [[] for _ in space.extents]
    for v, per_dim in dims.items():
        shape = _shape(v)
        for d, ak in enumerate(per_dim):
            if ak is not None and ak[1] >= len(factors[ak[0]]):
                factors[ak[0]].append(Factor(shape[d]))
    for v, outer in zip(block.args, fusion.inputs, strict=True):
        if not isinstance(outer, BlockArgument):
            continue
        for d, ak in enumerate(dims[v]):
            if ak is not None:
                factors[ak[0]][ak[1]].sources.append((outer.index, d))
    for fs in factors:
        for f in fs:
            f.dynamic = bool(f.sources) and all(s in wanted for s in f.sources)
    return DynamicShapes(space, factors, dims)


def require_static(
    fusion: asc.FusionOp, dyn: DynamicShapes, axes: dict[int, str], names: list[str] | None = None
) -> None:
    """Make the ``axes`` (axis -> why it must be static) static: a dim the user marked
    dynamic (``None``) there is a located error; a dim ``@jit(dynamic=True)`` only offered is
    quietly kept at its compiled size."""
    req = _request(fusion) or {"dims": [], "names": []}
    strict = {(a, d) for a, d, s in req["dims"] if s}
    names = names or req.get("names", [])
    for a, why in axes.items():
        for f in dyn.factors[a]:
            if not f.dynamic:
                continue
            bad = [s for s in f.sources if s in strict]
            if bad:
                arg, d = bad[0]
                who = f"argument {arg}" + (f" ({names[arg]!r})" if arg < len(names) else "")
                raise PyAscCompileError(
                    f"dimension {d} of {who} is dynamic (None), but {why}, so the kernel needs "
                    "its size at compile time",
                    _loc_for(fusion, dyn, a),
                    "give that dimension a static size in its TensorDesc; only leading "
                    "dimensions that no reduction covers may be None",
                )
            f.dynamic = False


def _loc_for(fusion: asc.FusionOp, dyn: DynamicShapes, a: int) -> Any:
    for op, axes in dyn.space.reduced.items():
        if a in axes:
            return loc_of(op)
    return loc_of(fusion)


def spec(
    dyn: DynamicShapes,
    fusion: asc.FusionOp,
    *,
    cores: int,
    chunked: bool,
    tile: int,
    chunks: int,
    m_axis: int | None,
    l_axis: int,
    outer: range,
) -> dict[str, Any]:
    """The JSON-able recipe of the tiling struct (``pyasc_mlir.dynamic`` evaluates it)."""
    term = fusion.body.block.last_op
    assert isinstance(term, asc.YieldOp)
    inputs: dict[str, list[Any]] = {}
    for v, o in zip(fusion.body.block.args, fusion.inputs, strict=True):
        if isinstance(o, BlockArgument):
            inputs[str(o.index)] = [list(x) if x else None for x in dyn.dims[v]]
    return {
        "version": 1,
        "cores": cores,
        "chunked": chunked,
        "tile": tile,
        "chunks": chunks,
        "m_axis": m_axis,
        "l_axis": l_axis,
        "l_dynamic": dyn.axis_dynamic(l_axis),
        "outer": list(outer),
        "factors": [
            [
                {"value": f.value, "dynamic": f.dynamic, "src": [list(s) for s in f.sources]}
                for f in fs
            ]
            for fs in dyn.factors
        ],
        "extra": {k: list(v) for k, v in dyn.fields.items()},
        "inputs": inputs,
        "outputs": [[list(x) if x else None for x in dyn.dims[v]] for v in term.values],
    }


def static_extent(dyn: DynamicShapes | None, space: IterationSpace, axes: Any) -> int | None:
    """Product of the extents of ``axes`` when none is dynamic, else ``None``."""
    if dyn is not None and dyn.any_dynamic(axes):
        return None
    return math.prod(space.extents[a] for a in axes)
