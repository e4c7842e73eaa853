"""Host-side tiling of kernels with dynamic dimensions, in Python and as emitted C++.

``asc-tile`` leaves a recipe on every kernel compiled with dynamic dims (attribute
``asc.dynamic_tiling``, built by ``passes/dynamic_shapes.spec``). :class:`DynamicTiling`
evaluates it for the CPU runtime at call time; :func:`cpp_fill_tiling` prints the same
computation as the ``<kernel>_fill_tiling`` function of ``host.cpp``. Both compute, from the
call's input shapes (all tensor arguments, in order):

* each iteration axis' extent = the product of its dimension classes ("factors"): a dynamic
  factor takes the size of its first source dim, and every other source dim must be equal
  (dynamic dims do not broadcast); a static factor has its compiled size;
* ``rows`` = product of the outer extents; chunk mode with a dynamic row length ``L``:
  ``chunk_len = min(tile, max(A, round_up(ceil(L / ceil(cores / rows)), A)))`` with
  ``A`` = :data:`pyasc_mlir.platform.COUNT_ALIGN` (128 elements) and
  ``chunks = ceil(L / chunk_len)`` (else both as compiled); ``units = rows * chunks``,
  ``block_dim = max(1, min(cores, units))``, ``units_per_core = units // block_dim``,
  ``units_rem = units % block_dim``, ``tile_units = 1`` (chunk mode) or
  ``min(tile, ceil(units / block_dim))``; ``m``, ``l`` the inner extents;
* each extra field (``ext_<axes>``, ``gm<i>_elems``) = the product of its axes' extents.

The static dims (every input dim that is not a source of a dynamic factor) must equal their
compiled size; the C++ function returns -1 where Python raises :class:`ShapeMismatch`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, overload

from pyasc_mlir.platform import COUNT_ALIGN, ceil_div, round_up

STANDARD_FIELDS = (
    "units",
    "block_dim",
    "units_per_core",
    "units_rem",
    "tile_units",
    "rows",
    "m",
    "l",
    "chunk_len",
    "chunks",
)


class ShapeMismatch(Exception):  # noqa: N818 - a condition the caller turns into a usage error
    """The call's shapes do not fit the compiled kernel: ``message`` and ``hint``."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


@dataclass
class DynamicTiling:
    """Evaluates a kernel's tiling recipe for concrete input shapes.

    Args:
        spec: the kernel's ``asc.dynamic_tiling`` recipe (a dict, see the module docstring).
        fields: the tiling struct's field names in struct order.
        shapes: the compiled input shapes (stand-in sizes for dynamic dims), one per tensor
            argument.
        names: tensor argument names, for messages.
    """

    spec: dict[str, Any]
    fields: list[str]
    shapes: list[list[int]]
    names: list[str]

    def __post_init__(self) -> None:
        sp = self.spec
        self.factors = [
            [(f["dynamic"], f["value"], [tuple(s) for s in f["src"]]) for f in fs]
            for fs in sp["factors"]
        ]
        self.dynamic_dims = {s for fs in self.factors for dyn, _, src in fs if dyn for s in src}
        self.static = [
            (a, d, e)
            for a, shape in enumerate(self.shapes)
            for d, e in enumerate(shape)
            if (a, d) not in self.dynamic_dims
        ]
        self.extra = {k: tuple(v) for k, v in sp["extra"].items()}
        unknown = [f for f in self.fields if f not in STANDARD_FIELDS and f not in self.extra]
        if unknown:
            raise ValueError(f"tiling fields {unknown} have no dynamic recipe")

    def input_shapes(self) -> list[tuple[int | None, ...]]:
        """The compiled input shapes with ``None`` for the dims read at call time."""
        return [
            tuple(None if (a, d) in self.dynamic_dims else e for d, e in enumerate(s))
            for a, s in enumerate(self.shapes)
        ]

    @overload
    def output_shapes(self, factor_sizes: None = None) -> list[tuple[int | None, ...]]: ...

    @overload
    def output_shapes(self, factor_sizes: list[list[int]]) -> list[tuple[int, ...]]: ...

    def output_shapes(
        self, factor_sizes: list[list[int]] | None = None
    ) -> list[tuple[int | None, ...]] | list[tuple[int, ...]]:
        """Output shapes for the given factor sizes (``None``: ``None`` for dynamic dims)."""
        out: list[tuple[int | None, ...]] = []
        for dims in self.spec["outputs"]:
            shape: list[int | None] = []
            for x in dims:
                if x is None:
                    shape.append(1)
                elif factor_sizes is not None:
                    shape.append(factor_sizes[x[0]][x[1]])
                else:
                    dyn, value, _ = self.factors[x[0]][x[1]]
                    shape.append(None if dyn else value)
            out.append(tuple(shape))
        return out

    def _who(self, a: int) -> str:
        return f"argument {a}" + (f" ({self.names[a]!r})" if a < len(self.names) else "")

    def check_static(self, shapes: Sequence[tuple[int, ...]]) -> None:
        """Ranks and static dims against the compiled ones.

        Raises:
            ShapeMismatch: names the argument and dim."""
        for a, (got, want) in enumerate(zip(shapes, self.shapes, strict=True)):
            if len(got) != len(want):
                raise ShapeMismatch(
                    f"{self._who(a)} has {len(got)} dimensions (shape {list(got)}); the operator "
                    f"was compiled for {len(want)} ({list(self.input_shapes()[a])})",
                    "pass a tensor of the compiled rank",
                )
        for a, d, e in self.static:
            if shapes[a][d] != e:
                raise ShapeMismatch(
                    f"dimension {d} of {self._who(a)} has size {shapes[a][d]}, but it is static "
                    f"in this kernel (compiled size {e}; shape {list(self.input_shapes()[a])}, "
                    "None = dynamic)",
                    "only dims marked None (or leading dims under @jit(dynamic=True)) may "
                    "change between calls; compile again for the new size",
                )

    def compute(
        self, shapes: Sequence[tuple[int, ...]]
    ) -> tuple[dict[str, int], list[tuple[int, ...]]]:
        """The tiling struct (field -> value, struct order) and the output shapes.

        Raises:
            ShapeMismatch: a rank or static dim differs, or two dynamic dims that the kernel
                treats as one axis have different sizes."""
        self.check_static(shapes)
        sizes: list[list[int]] = []
        ext: list[int] = []
        for fs in self.factors:
            row = []
            for dyn, value, src in fs:
                if dyn:
                    a0, d0 = src[0]
                    value = shapes[a0][d0]
                    for a, d in src[1:]:
                        if shapes[a][d] != value:
                            raise ShapeMismatch(
                                f"dimension {d} of {self._who(a)} has size {shapes[a][d]} but "
                                f"dimension {d0} of {self._who(a0)} has size {value}; the "
                                "kernel treats them as one dynamic dimension, and dynamic "
                                "dimensions do not broadcast",
                                "pass equal sizes; to broadcast "
                                "a size-1 dimension, give it a static size of 1",
                            )
                row.append(value)
            sizes.append(row)
            ext.append(math.prod(row))
        sp = self.spec
        rows = math.prod(ext[a] for a in sp["outer"])
        length = ext[sp["l_axis"]]
        chunk, chunks = (sp["tile"], sp["chunks"]) if sp["chunked"] else (length, 1)
        if sp["l_dynamic"]:  # as the static choice: split short rows over the cores
            per_row = ceil_div(sp["cores"], max(rows, 1))
            want = ceil_div(length, per_row)
            chunk = min(sp["tile"], max(COUNT_ALIGN, round_up(want, COUNT_ALIGN)))
            chunks = ceil_div(length, chunk)
        units = rows * chunks
        bd = max(1, min(sp["cores"], units))
        values = {
            "units": units,
            "block_dim": bd,
            "units_per_core": units // bd,
            "units_rem": units % bd,
            "tile_units": 1 if sp["chunked"] else min(sp["tile"], ceil_div(units, bd)),
            "rows": rows,
            "l": length,
            "chunk_len": chunk,
            "chunks": chunks,
            "m": 1 if sp["m_axis"] is None else ext[sp["m_axis"]],
        }
        for k, axes in self.extra.items():
            values[k] = math.prod(ext[a] for a in axes)
        return {f: values[f] for f in self.fields}, self.output_shapes(sizes)


def cpp_fill_tiling(name: str, sname: str, tiling: DynamicTiling) -> list[str]:
    """``extern "C" int <name>_fill_tiling(const int64_t* dims, int64_t ndims, <sname>* t)``:
    the C++ twin of :meth:`DynamicTiling.compute` (``dims``: every tensor argument's shape,
    concatenated; returns 0, or -1 where ``compute`` raises)."""
    offsets, total = [], 0
    for s in tiling.shapes:
        offsets.append(total)
        total += len(s)
    sp = tiling.spec
    out = [
        f'extern "C" int {name}_fill_tiling(const int64_t* dims, int64_t ndims, {sname}* t)',
        "{",
        f"    if (ndims != {total}) return -1;",
    ]
    for a, d, e in tiling.static:
        out.append(f"    if (dims[{offsets[a] + d}] != {e}LL) return -1;  // arg {a} dim {d}")
    for ax, fs in enumerate(tiling.factors):
        terms = []
        for k, (dyn, value, src) in enumerate(fs):
            if not dyn:
                terms.append(f"{value}LL")
                continue
            var = f"f{ax}_{k}"
            (a0, d0), rest = src[0], src[1:]
            out.append(f"    const int64_t {var} = dims[{offsets[a0] + d0}];")
            out += [f"    if (dims[{offsets[a] + d}] != {var}) return -1;" for a, d in rest]
            terms.append(var)
        out.append(f"    const int64_t e{ax} = {' * '.join(terms) or '1LL'};")
    rows = " * ".join(f"e{a}" for a in sp["outer"]) or "1LL"
    tile_units = (
        "1LL"
        if sp["chunked"]
        else (f"({sp['tile']}LL < (units + bd - 1) / bd ? {sp['tile']}LL : (units + bd - 1) / bd)")
    )
    values = {
        "units": "units",
        "block_dim": "bd",
        "units_per_core": "units / bd",
        "units_rem": "units % bd",
        "tile_units": tile_units,
        "rows": "rows",
        "m": "1LL" if sp["m_axis"] is None else f"e{sp['m_axis']}",
        "l": f"e{sp['l_axis']}",
        "chunk_len": "chunk",
        "chunks": "chunks",
    }
    for k, axes in tiling.extra.items():
        values[k] = " * ".join(f"e{a}" for a in axes) or "1LL"
    out.append(f"    const int64_t rows = {rows};")
    if sp["l_dynamic"]:
        c, a = sp["cores"], COUNT_ALIGN
        out += [
            f"    const int64_t per_row = ({c}LL + (rows > 1 ? rows : 1) - 1) / "
            "(rows > 1 ? rows : 1);",
            f"    const int64_t want = (e{sp['l_axis']} + per_row - 1) / per_row;",
            f"    const int64_t want_al = (want + {a - 1}LL) / {a}LL * {a}LL;",
            f"    const int64_t chunk = {sp['tile']}LL < (want_al > {a}LL ? want_al : {a}LL)"
            f" ? {sp['tile']}LL : (want_al > {a}LL ? want_al : {a}LL);",
            f"    const int64_t chunks = (e{sp['l_axis']} + chunk - 1) / chunk;",
        ]
    elif sp["chunked"]:
        out += [
            f"    const int64_t chunk = {sp['tile']}LL;",
            f"    const int64_t chunks = {sp['chunks']}LL;",
        ]
    else:
        out += [f"    const int64_t chunk = e{sp['l_axis']};", "    const int64_t chunks = 1LL;"]
    out += [
        "    const int64_t units = rows * chunks;",
        f"    const int64_t bd = units < {sp['cores']}LL ? (units > 1 ? units : 1) : "
        f"{sp['cores']}LL;",
    ]
    out += [f"    t->{f} = {values[f]};" for f in tiling.fields]
    return out + ["    return 0;", "}"]
