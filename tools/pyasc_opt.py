"""``pyasc-opt``: xdsl-opt with the pyasc-mlir dialects, passes, pipelines and targets.

Usage follows ``xdsl-opt``/``mlir-opt``::

    pyasc-opt in.mlir -p asc-decompose,asc-fuse,asc-tile
    pyasc-opt in.mlir -p 'asc-to-tile,asc-double-buffer{enable=false}'
    pyasc-opt in.mlir -p asc-to-ascendc -t ascendc
    pyasc-opt bad.mlir --split-input-file --verify-diagnostics

Registered: xDSL's ``builtin``, ``func``, ``arith``, ``scf`` and ``memref`` dialects, ``asc`` and
``ascendc``; every pass of ``pyasc_mlir.passes.registry.PASSES`` plus xDSL's generic passes
(``canonicalize``, ``cse``, ``dce``, ``licm``); every named pipeline of ``PIPELINES`` (usable in
``-p`` like a pass: it expands to its passes, and options given to it go to every member
pass that declares them, e.g. ``asc-to-ascendc{platform="310P3"}``); targets ``mlir`` and
``ascendc``. Every dialect, pass and target is registered by a loader and imported only when
used (startup is then dominated by importing the ``pyasc_mlir`` package itself).

A ``PyAscError`` (for instance a kernel that does not fit the Unified Buffer), a verifier error,
a parse error or a bad ``-p`` spec prints its message without a traceback and exits with
status 1. With ``--verify-diagnostics`` a ``PyAscError`` raised by a pass is printed on stdout
like a verifier error and processing continues with the next ``// -----`` chunk.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from collections.abc import Callable, Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from pyasc_mlir.errors import PyAscError


class PyAscToolError(PyAscError):
    """A problem with the command line or with a component that is not available."""


# --------------------------------------------------------------------------- lazy loaders


def _builtin() -> Dialect:
    from xdsl.dialects.builtin import Builtin

    return Builtin


def _func() -> Dialect:
    from xdsl.dialects.func import Func

    return Func


def _arith() -> Dialect:
    from xdsl.dialects.arith import Arith

    return Arith


def _scf() -> Dialect:
    from xdsl.dialects.scf import Scf

    return Scf


def _memref() -> Dialect:
    from xdsl.dialects.memref import MemRef

    return MemRef


def _asc() -> Dialect:
    from pyasc_mlir.dialects.asc import Asc

    return Asc


def _ascendc() -> Dialect:
    try:
        from pyasc_mlir.dialects.ascendc import Ascendc
    except ImportError as e:
        raise PyAscToolError(f"the 'ascendc' dialect is not available: {e}") from e
    return Ascendc


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "builtin": _builtin,
    "func": _func,
    "arith": _arith,
    "scf": _scf,
    "memref": _memref,
    "asc": _asc,
}
"""Dialect name -> loader; ``ascendc`` is added when its module exists."""


XDSL_PASSES = ("canonicalize", "cse", "dce", "licm")
"""xDSL's generic passes that are useful between ours (``-p asc-tile,canonicalize,cse``)."""


def _ascendc_target() -> type:
    try:
        from pyasc_mlir.emitter import AscendCTarget
    except ImportError as e:
        raise PyAscToolError(f"target 'ascendc' is not available: {e}") from e
    return AscendCTarget


def _mlir_target() -> type:
    from xdsl.targets.mlir import MLIRTarget

    return MLIRTarget


def _mlir_frontend() -> type:
    from xdsl.frontend.mlir import MLIRFrontend

    return MLIRFrontend


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


def pipeline_pass(
    name: str, members: Sequence[str], passes: dict[str, Callable[[], type[ModulePass]]]
) -> type[ModulePass]:
    """A ``ModulePass`` class running ``members`` in order (for use outside ``pyasc-opt``,
    which expands pipelines itself so that verification and ``--print-between-passes`` see
    every member pass)."""

    def apply(self: ModulePass, ctx: Context, op: ModuleOp) -> None:
        for member in members:
            passes[member]()().apply(ctx, op)

    cls = type(
        f"Pipeline_{name.replace('-', '_')}",
        (ModulePass,),
        {"name": name, "apply": apply, "__doc__": f"Pipeline: {', '.join(members)}."},
    )
    return dataclasses.dataclass(frozen=True)(cls)


# --------------------------------------------------------------------------- the tool


class PyAscOptMain(xDSLOptMain):
    """``xdsl-opt`` restricted to the dialects pyasc-mlir uses, plus its passes, named
    pipelines and the ``ascendc`` target."""

    pipelines: dict[str, list[str]]

    def __init__(
        self,
        description: str = "pyasc-mlir modular optimizer driver",
        args: Sequence[str] | None = None,
    ):
        super().__init__(description, args)

    # -- registration --------------------------------------------------------------------
    def register_all_dialects(self) -> None:
        for name, loader in DIALECTS.items():
            self.ctx.register_dialect(name, loader)
        if _module_exists("pyasc_mlir.dialects.ascendc"):
            self.ctx.register_dialect("ascendc", _ascendc)

    def register_all_frontends(self) -> None:
        self.available_frontends["mlir"] = _mlir_frontend

    def register_all_passes(self) -> None:
        from xdsl.transforms import get_all_passes

        from pyasc_mlir.passes.registry import PASSES, PIPELINES

        xdsl_passes = get_all_passes()
        for name in XDSL_PASSES:
            self.register_pass(name, xdsl_passes[name])
        for name, loader in PASSES.items():
            self.register_pass(name, loader)
        self.pipelines = {name: list(members) for name, members in PIPELINES.items()}
        for name, members in self.pipelines.items():

            def load_pipeline(n: str = name, m: list[str] = members) -> type[ModulePass]:
                return pipeline_pass(n, m, self.available_passes)

            self.register_pass(name, load_pipeline)

    def register_all_targets(self) -> None:
        self.available_targets["mlir"] = _mlir_target
        self.available_targets["ascendc"] = _ascendc_target

    # -- pipeline ------------------------------------------------------------------------
    def pass_class(self, name: str) -> type[ModulePass]:
        """Load a registered pass class; a pass whose module is missing is a tool error."""
        try:
            return self.available_passes[name]()
        except ImportError as e:
            raise PyAscToolError(f"pass {name!r} is not available: {e}") from e

    def expand_pipelines(self, spec: str) -> list[ArgSpec]:
        """Parse a ``-p`` spec, replacing every named pipeline by its member passes. Options
        given to a pipeline go to each member pass that has a field of that name."""
        out: list[ArgSpec] = []
        for item in parse_pipeline(spec):
            members = self.pipelines.get(item.name)
            if members is None:
                if item.name not in self.available_passes:
                    raise PyAscToolError(
                        f"unknown pass or pipeline {item.name!r}; passes: "
                        f"{', '.join(p for p in self.available_passes if p not in self.pipelines)}"
                        f"; pipelines: {', '.join(self.pipelines)}"
                    )
                out.append(item)
                continue
            options = item.normalize_parameter_names().parameters
            used: set[str] = set()
            for member in members:
                fields = {f.name for f in dataclasses.fields(self.pass_class(member))}
                mine = {k: v for k, v in options.items() if k in fields}
                used.update(mine)
                out.append(ArgSpec(member, mine))
            unused = set(options) - used
            if unused:
                raise PyAscToolError(
                    f"pipeline {item.name!r} has no pass taking option(s) "
                    f"{', '.join(sorted(unused))}"
                )
        return out

    def setup_pipeline(self) -> None:
        spec = self.args.passes
        self.args.passes = ""
        super().setup_pipeline()  # builds the verifying / printing / timing callback
        self.args.passes = spec
        try:
            specs = self.expand_pipelines(spec)
        except PyAscToolError:
            raise
        except (Exception, ArgSpecParseError) as e:  # malformed spec (a BaseException in xDSL)
            raise PyAscToolError(f"invalid pass pipeline {spec!r}: {e}") from e
        passes = []
        for s in specs:
            cls = self.pass_class(s.name)
            try:
                passes.append(cls.from_pass_spec(s))
            except ValueError as e:
                raise PyAscToolError(f"invalid options for pass {s.name!r}: {e}") from e
        self.pipeline = PassPipeline(tuple(passes), self.pipeline.callback)

    def apply_passes(self, prog: ModuleOp) -> None:
        try:
            super().apply_passes(prog)
        except PyAscError as e:
            if self.args.verify_diagnostics:
                raise DiagnosticException(str(e)) from e
            raise


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point. A ``PyAscError``, a verifier error or a parse error prints its
    message (no Python traceback) on stderr and exits 1, as ``mlir-opt`` does."""
    try:
        PyAscOptMain(args=argv).run()
    except (PyAscError, DiagnosticException, ParseError) as e:
        sys.stdout.flush()
        print(str(e), file=sys.stderr)
        for note in getattr(e, "__notes__", ()):
            print(note, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
