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

Errors are MLIR-style diagnostics on stderr and exit status 1, never a Python traceback:
``file:line:col: error: ...`` with the source line for a parse or verifier error (every op
that does not verify is reported) and for ``-t ascendc`` on IR that is not lowered or a kernel
without its ``asc.tiling``; a ``PyAscError`` raised by a pass as it formats itself (at the
user's Python line); ``pyasc-opt: error: ...`` for a missing, unreadable or non-UTF-8 input, an
output file that cannot be opened, a bad ``-p`` spec or option, and IR nested too deeply. An
exception escaping a pass is an ``internal error in pass 'NAME' on 'OP'`` at that op, with the
Python stack only under ``PYASC_LOG_LEVEL=2``. With ``--split-input-file`` every chunk is
processed and reported; the exit status is 1 if any failed.

``--verify-diagnostics``: in an input with ``expected-error`` annotations they are checked as
``mlir-opt`` does (see ``pyasc_mlir.tools.opt_diagnostics``): unexpected errors and expected
errors that did not occur are reported and exit 1. In an input without annotations the errors
are printed on stdout and the exit status is 0 (xDSL's behaviour, for FileCheck tests).
``--parsing-diagnostics`` does the same for parse errors.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline, parse_spec
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from pyasc_mlir.errors import PyAscError, log_level
from pyasc_mlir.tools import opt_diagnostics as od
from pyasc_mlir.tools.opt_target import check_emittable


class PyAscToolError(PyAscError):
    """A problem with the command line or with a component that is not available."""


class PassCrash(Exception):
    """An exception (a bug) escaped pass ``name``; the original is ``__cause__``."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


BUG_NOTE = "note: this is a bug in pyasc-mlir; PYASC_LOG_LEVEL=2 shows the Python stack"


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


def _asc_loop() -> Dialect:
    from pyasc_mlir.dialects.asc_loop import AscLoop

    return AscLoop


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
    "asc_loop": _asc_loop,
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
    stage: str = "starting"
    """What the tool is doing (for internal-error and recursion-limit messages)."""
    parsed_functions: dict[str, tuple[str, int, int]] = {}  # noqa: RUF012  (set per chunk)
    """Where the functions of the current chunk were in the input, by name."""

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
            self.register_pass(name, self.pipeline_loader(name, members))

    def pipeline_loader(self, name: str, members: list[str]) -> Callable[[], type[ModulePass]]:
        """The loader of named pipeline ``name`` as one pass class (see :func:`pipeline_pass`)."""
        return lambda: pipeline_pass(name, members, self.available_passes)

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

    # -- running ---------------------------------------------------------------------------
    def apply_passes(self, prog: ModuleOp) -> None:
        """Run the pipeline as ``PassPipeline.apply`` does (the callback verifies and prints
        between passes); an exception escaping a pass becomes a :class:`PassCrash`."""
        callback = self.pipeline.callback
        assert callback is not None
        prev: ModulePass | None = None
        for p in self.pipeline.passes:
            self.stage = "verifying"
            callback(prev, prog, p)
            self.stage = f"running pass '{p.name}'"
            try:
                p.apply(self.ctx, prog)
            except (PyAscError, DiagnosticException, RecursionError):
                raise
            except Exception as e:
                raise PassCrash(p.name) from e
            prev = p
        self.stage = "verifying"
        callback(prev, prog, None)

    def output_resulting_program(self, prog: ModuleOp) -> str:
        if parse_spec(self.args.target).name == "ascendc":
            check_emittable(prog, self.parsed_functions)
        self.stage = f"printing target '{self.args.target}'"
        return super().output_resulting_program(prog)

    def read_input(self) -> tuple[str, str]:
        """``(name, text)`` of the input; unreadable or non-UTF-8 input is a tool error."""
        path = self.args.input_file
        if path is None:
            name, data = "<stdin>", sys.stdin.buffer.read()
        else:
            name = path
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError as e:
                raise PyAscToolError(f"cannot read input file '{path}': {e.strerror}") from None
        bad = data.find(b"\0")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            bad = e.start
        if bad >= 0:
            line = data.count(b"\n", 0, bad) + 1
            col = bad - (data.rfind(b"\n", 0, bad) + 1) + 1
            raise PyAscToolError(
                f"input file '{name}' is not UTF-8 text: invalid byte "
                f"0x{data[bad]:02x} at line {line}, column {col}"
            )
        return name, text

    def open_output(self) -> IO[str]:
        path = self.args.output_file
        if path is None:
            return sys.stdout
        try:
            return open(path, "w")
        except OSError as e:
            raise PyAscToolError(f"cannot open output file '{path}': {e.strerror}") from None

    def chunks(self, text: str) -> list[tuple[str, int]]:
        """``(text, lines before it)`` of every chunk (split at ``// -----`` as xDSL does)."""
        if not self.args.split_input_file:
            return [(text, 0)]
        out, offset = [], 0
        for part in text.split("// -----"):
            out.append((part, offset))
            offset += part.count("\n")
        return out

    def process(
        self, chunk: str, offset: int, name: str, out: IO[str]
    ) -> list[tuple[str, od.Diagnostic]]:
        """Parse, run and print one chunk; its errors as ``(category, diagnostic)`` with
        category ``parse``, ``error`` or ``internal``."""
        module: ModuleOp | None = None
        self.stage = "parsing"
        try:
            parser = od.LocatingParser(self.ctx, chunk, name, offset)
            module = parser.parse_module(not self.args.no_implicit_module)
            self.parsed_functions = od.function_positions(module)
            self.apply_passes(module)
            out.write(self.output_resulting_program(module))
            out.flush()
            return []
        except ParseError as e:
            e.span = dataclasses.replace(e.span, line_offset=offset)
            return [("parse", od.parse_error(e))]
        except od.LocatedError as e:
            return [("error", e.diagnostic)]
        except VerifyException as e:
            return (
                [("error", d) for d in od.verify_errors(module, e)]
                if module
                else [("error", od.Diagnostic(str(e)))]
            )
        except PyAscError as e:
            return [("error", od.pyasc_error(e, module))]
        except DiagnosticException as e:
            return [("error", od.Diagnostic(str(e)))]
        except RecursionError:
            return [
                (
                    "error",
                    od.Diagnostic(
                        f"{name}: the IR nests too deeply for pyasc-opt (Python's recursion "
                        f"limit was reached while {self.stage})",
                        notes=[
                            "hint: flatten the nesting (deeper than about "
                            f"{sys.getrecursionlimit() // 10} levels)"
                        ],
                    ),
                )
            ]
        except PassCrash as e:
            return [("internal", self.crash(e.__cause__, f"in pass '{e.name}'"))]
        except Exception as e:
            return [("internal", self.crash(e, f"while {self.stage}"))]

    def crash(self, exc: BaseException | None, where: str) -> od.Diagnostic:
        """An internal error (a bug) at the op it was raised on."""
        assert exc is not None
        op = od.blamed_op(exc)
        on = f" on '{op.name}'" if op is not None else ""
        notes = [BUG_NOTE]
        if log_level() >= 2:
            notes.append("".join(traceback.format_exception(exc)).rstrip("\n"))
        return od.at_op(op, f"internal error {where}{on}: {type(exc).__name__}: {exc}", notes)

    def report(
        self,
        diags: list[tuple[str, od.Diagnostic]],
        source: list[str],
        expected: list[od.Expectation] | None,
        name: str,
    ) -> bool:
        """Print one chunk's errors; whether the run fails because of them."""
        if expected is not None:
            mismatches = od.check(expected, [d for c, d in diags if c != "internal"], name)
            mismatches += [d for c, d in diags if c == "internal"]
            self.emit(mismatches, source, sys.stderr)
            return bool(mismatches)
        failed = False
        for category, d in diags:
            quiet = (
                self.args.parsing_diagnostics
                if category == "parse"
                else self.args.verify_diagnostics and category == "error"
            )
            self.emit([d], source, sys.stdout if quiet else sys.stderr)
            failed = failed or not quiet
        return failed

    @staticmethod
    def emit(diags: list[od.Diagnostic], source: list[str], stream: IO[str]) -> None:
        sys.stdout.flush()
        for d in diags:
            print(d.format(source), file=stream)
        stream.flush()

    def run(self) -> int:
        """Process every chunk; the exit status (0, or 1 when any chunk failed)."""
        name, text = self.read_input()
        out = self.open_output()
        source = text.splitlines()
        annotated = self.args.verify_diagnostics and od.has_annotations(text)
        failed = False
        try:
            for i, (chunk, offset) in enumerate(self.chunks(text)):
                if i > 0:
                    out.write("// -----\n")
                diags = self.process(chunk, offset, name, out)
                expected = (
                    od.expectations(source, offset + 1, offset + chunk.count("\n") + 1)
                    if annotated
                    else None
                )
                failed = self.report(diags, source, expected, name) or failed
        finally:
            if out is not sys.stdout:
                out.close()
        return 1 if failed else 0


def main(argv: Sequence[str] | None = None, tool: type[PyAscOptMain] = PyAscOptMain) -> int:
    """Console entry point (``tool``: the class to run, a subclass in tests). Returns the exit
    status: 0, or 1 after printing MLIR-style diagnostics on stderr (no Python traceback)."""
    try:
        return tool(args=argv).run()
    except PyAscToolError as e:
        sys.stdout.flush()
        print(f"pyasc-opt: error: {e}", file=sys.stderr)
    except (PyAscError, DiagnosticException, ParseError) as e:
        sys.stdout.flush()
        print(str(e), file=sys.stderr)
    except RecursionError:
        print("pyasc-opt: error: Python's recursion limit was reached", file=sys.stderr)
    except Exception as e:  # noqa: BLE001  (a bug outside any chunk: still no raw traceback)
        print(f"pyasc-opt: error: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        print(BUG_NOTE, file=sys.stderr)
        if log_level() >= 2:
            traceback.print_exception(e)
    return 1


if __name__ == "__main__":
    sys.exit(main())
