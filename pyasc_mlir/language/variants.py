"""``@lang.cube_kernel`` and ``@lang.fused_kernel``: ``@lang.kernel`` with a check of what the
pipeline made of the body.

* ``@lang.cube_kernel``: the body's matmuls must run on the Cube. After each compile, a
  kernel without a Cube launch (no launch whose ``kernel_type`` is ``AIC_ONLY`` or
  ``MIX_AIC_*``) is a located :class:`PyAscCompileError` (at the decorator), naming the
  contraction form the raiser recognises.
* ``@lang.fused_kernel``: the ops fuse as far as the pipeline allows (``asc-fuse``: the
  elementwise work after a matmul runs as its epilogue in the Cube kernel; elementwise maps
  and reductions fuse into one vector kernel). After each compile ``op.info["fusion"]``
  lists the kernels in launch order, each ``{"kernel": name, "unit": "cube" | "vector",
  "ops": [op kinds], "lines": [source lines]}`` (see :func:`fusion_groups`). A vector
  kernel of a body that also has Cube kernels (work that could not run as a matmul's
  epilogue) is reported with a :class:`FusionWarning` at its first op's source line.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import warnings
from typing import Any

from xdsl.dialects.builtin import ModuleOp, StringAttr

from pyasc_mlir.compiled_op import CompiledOp
from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError, SourceLoc
from pyasc_mlir.language.kernel import LangKernel, kernel
from pyasc_mlir.passes.common import loc_of

__all__ = [
    "CubeKernel",
    "FusedKernel",
    "FusionWarning",
    "cube_kernel",
    "fused_kernel",
    "fusion_groups",
]


class FusionWarning(UserWarning):
    """Part of a ``@lang.fused_kernel`` body runs in a kernel of its own."""


def _decorator_loc(k: LangKernel, name: str) -> SourceLoc:
    """Where ``@lang.<name>`` decorates ``k``'s function (another decorator may stand above
    it): that decorator's line and column, else the ``def`` line."""
    code = k.fn.__code__
    first = code.co_firstlineno
    try:
        lines, _ = inspect.getsourcelines(k.fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return SourceLoc(code.co_filename, first, 0)
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, ast.FunctionDef | ast.AsyncFunctionDef):
        return SourceLoc(code.co_filename, first, 0)
    indent = len(lines[0]) - len(lines[0].lstrip())
    for d in fdef.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        spelled = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if spelled == name:
            return SourceLoc(code.co_filename, first + d.lineno - 1, d.col_offset + indent)
    return SourceLoc(code.co_filename, first + fdef.lineno - 1, fdef.col_offset + indent)


def _cube_launches(op: CompiledOp) -> list[str]:
    kinds = [str(x.get("kernel_type", "")) for x in op.info.get("launches", [])]
    return [k for k in kinds if "AIC" in k]


class CubeKernel(LangKernel):
    """A ``@lang.cube_kernel`` function: see the module docstring."""

    def _compile(self, args: tuple[Any, ...], dynamic: bool, like: Any = None) -> CompiledOp:
        op = super()._compile(args, dynamic, like)
        if not _cube_launches(op):
            kinds = sorted({str(x.get("kernel_type")) for x in op.info.get("launches", [])})
            raise PyAscCompileError(
                f"{self.fn.__name__}() is a @lang.cube_kernel but compiled to no Cube matmul "
                f"(its kernels: {', '.join(kinds) or 'none'})",
                _decorator_loc(self, "cube_kernel"),
                "write the matmul as a contraction over full ranges (acc = 0.0; for k in "
                "range(K): acc += a[i, k] * b[k, j]; c[i, j] = acc), or use @lang.kernel for "
                "vector-only work",
            )
        return op


def fusion_groups(module: ModuleOp) -> list[tuple[str, list[str], list[SourceLoc]]]:
    """``(unit, op kinds, source locations)`` of each ``asc.fusion`` of a module after
    ``asc-fuse``, in program order: the kinds of its ops in first-seen order (constants left
    out; composite ops such as ``erf`` appear as the primitives ``asc-decompose`` made), the
    source lines they came from; ``unit`` is ``"cube"`` when it holds a matmul."""
    out: list[tuple[str, list[str], list[SourceLoc]]] = []
    for f in module.walk():
        if not isinstance(f, asc.FusionOp):
            continue
        kinds: list[str] = []
        locs: list[SourceLoc] = []
        for o in f.body.block.ops:
            if isinstance(o, asc.YieldOp | asc.ConstantOp):
                continue
            kind = o.properties.get("kind")
            kind_name = kind.data if isinstance(kind, StringAttr) else o.name.split(".")[-1]
            if kind_name not in kinds:
                kinds.append(kind_name)
            loc = loc_of(o)
            if loc is not None and loc not in locs:
                locs.append(loc)
        unit = "cube" if "matmul" in kinds else "vector"
        out.append((unit, kinds, locs))
    return out


class FusedKernel(LangKernel):
    """A ``@lang.fused_kernel`` function: see the module docstring."""

    def _compile(self, args: tuple[Any, ...], dynamic: bool, like: Any = None) -> CompiledOp:
        op = super()._compile(args, dynamic, like)
        if "fusion" not in op.info:
            op.info["fusion"] = self._report(args, op)
        return op

    def _report(self, args: tuple[Any, ...], op: CompiledOp) -> list[dict[str, Any]]:
        import numpy as np

        from pyasc_mlir.language.kernel import build_kernel_module
        from pyasc_mlir.passes.registry import PASSES, PIPELINES
        from pyasc_mlir.pipeline import make_context, pass_options
        from pyasc_mlir.types import TensorDesc

        descs = [
            TensorDesc.of(np.asarray(a)) if hasattr(a, "__array__") else a
            for a in self._numpy_args(args)
        ]
        module, _ = build_kernel_module(self.fn, descs, self.fn.__name__)
        pipe = "lang-to-ascendc"
        options = pass_options(self.platform, self.double_buffer)
        ctx = make_context()
        for name in PIPELINES[pipe]:
            PASSES[name]()(**options[name]).apply(ctx, module)
            if name == "asc-fuse":
                break
        groups = fusion_groups(module)
        names = list(op.info.get("kernel_names", []))
        report = []
        cube = any(unit == "cube" for unit, _, _ in groups)
        for i, (unit, kinds, locs) in enumerate(groups):
            kname = names[i] if i < len(names) else f"kernel {i}"
            lines = sorted({loc.line for loc in locs})
            report.append({"kernel": kname, "unit": unit, "ops": kinds, "lines": lines})
            if cube and unit == "vector":
                where = locs[0] if locs else _decorator_loc(self, "fused_kernel")
                warnings.warn_explicit(
                    f"{where}: {self.fn.__name__}(): this work did not fuse into a matmul's "
                    f"epilogue and runs as a vector kernel of its own ({kname}: "
                    f"{', '.join(kinds)})",
                    FusionWarning,
                    where.file,
                    where.line,
                )
        return report


def cube_kernel(fn: Any = None, **options: Any) -> Any:
    """Decorator ``@lang.cube_kernel`` (options as ``@lang.kernel``): see :class:`CubeKernel`."""
    return kernel(fn, cls=CubeKernel, **options)


def fused_kernel(fn: Any = None, **options: Any) -> Any:
    """Decorator ``@lang.fused_kernel`` (options as ``@lang.kernel``): see
    :class:`FusedKernel`."""
    return kernel(fn, cls=FusedKernel, **options)
