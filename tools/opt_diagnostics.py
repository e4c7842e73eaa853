"""Diagnostics of ``pyasc-opt``: MLIR-style messages at ``file:line:col`` with the source line,
the ops' locations in the input, and the ``expected-error`` checks of ``--verify-diagnostics``.

Locations: :class:`LocatingParser` gives every op it parses without an explicit ``loc(...)`` a
``FileLineColLoc`` of its first token in the input file (the result list if any, as in
``mlir-opt``); passes that clone ops keep it, so errors raised after a pass still point into
the input. Printed IR shows locations only with ``--print-debuginfo``.

Annotations (as ``mlir-opt -verify-diagnostics``): ``// expected-error {{text}}`` expects an
error at its own line whose message contains ``text``; ``@+N`` / ``@-N`` shift the line by N;
``@below`` / ``@above`` designate the nearest line below / above that holds no annotation.
``expected-warning``, ``expected-remark`` and ``expected-note`` are recognised but pyasc-opt
reports only errors, so such an annotation is always reported as not produced.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from pyasc_mlir.errors import PyAscError, SourceLoc


@dataclass
class Diagnostic:
    """One error: where (``line``/``col`` are 1-based; ``None`` when not in the input), what,
    and follow-up lines (``hint: ...``, ``note: ...``)."""

    message: str
    file: str | None = None
    line: int | None = None
    col: int = 1
    notes: list[str] = field(default_factory=list)
    preformatted: str | None = None
    """The whole text when the error formats itself (a ``PyAscError`` at a Python line)."""

    def format(self, source: Sequence[str]) -> str:
        """The MLIR-style text: ``file:line:col: error: message``, the source line and a caret
        under the column (``pyasc-opt: error: message`` without a location), then the notes."""
        if self.preformatted is not None:
            return self.preformatted
        if self.line is None or self.file is None:
            lines = [f"pyasc-opt: error: {self.message}"]
        else:
            lines = [f"{self.file}:{self.line}:{self.col}: error: {self.message}"]
            if 0 < self.line <= len(source):
                lines += [source[self.line - 1].rstrip("\r\n"), " " * (self.col - 1) + "^"]
        return "\n".join(lines + self.notes)


class LocatedError(Exception):
    """An error found by the tool itself (not a verifier), carrying its diagnostic."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class OpNameError(ParseError):
    """An unknown op name, reported where its op starts (xDSL points after the name)."""


class LocatingParser(Parser):
    """The MLIR parser, recording where each op starts (``FileLineColLoc``). ``line_offset``:
    lines of the input before this chunk (``--split-input-file``)."""

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0):
        super().__init__(ctx, text, name)
        self.file_name = name
        self.line_offset = line_offset

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        start = span.get_location()
        try:
            op = super().parse_operation()
        except ParseError as e:
            if e.msg.endswith("is not registered") and not isinstance(e, OpNameError):
                raise OpNameError(span, e.msg) from None  # at the op, not the token after it
            raise
        except VerifyException as e:  # an attribute or type that does not verify
            raise LocatedError(
                Diagnostic(str(e), self.file_name, start.line + self.line_offset, start.col)
            ) from None

        if isinstance(op.location, UnknownLoc):
            op.location = FileLineColLoc(
                StringAttr(self.file_name),
                IntAttr(start.line + self.line_offset),
                IntAttr(start.col),
            )
        return op


def op_position(op: Operation | None) -> tuple[str, int, int] | None:
    """``(file, line, col)`` of ``op`` (its own location, else its nearest located parent)."""
    while op is not None:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return loc.filename.data, loc.line.data, loc.column.data
        op = op.parent_op()
    return None


def function_positions(module: ModuleOp) -> dict[str, tuple[str, int, int]]:
    """Where each top-level ``func.func`` of ``module`` is (``file, line, col``), by name."""
    out = {}
    for op in module.body.block.ops:
        pos = op_position(op)
        if isinstance(op, func.FuncOp) and pos is not None:
            out[op.sym_name.data] = pos
    return out


def at_op(op: Operation | None, message: str, notes: Iterable[str] = ()) -> Diagnostic:
    """A diagnostic at ``op``'s location (none when it has none)."""
    pos = op_position(op)
    if pos is None:
        return Diagnostic(message, notes=list(notes))
    return Diagnostic(message, pos[0], pos[1], pos[2], list(notes))


def parse_error(e: ParseError) -> Diagnostic:
    """A parse error (its span already carries the chunk's line offset)."""
    loc = e.span.get_location()
    return Diagnostic(e.msg, loc.file, loc.line, loc.col)


def verify_errors(module: ModuleOp, e: VerifyException) -> list[Diagnostic]:
    """Every op of ``module`` that does not verify on its own (innermost first, as xDSL
    verifies), at its location; ``e`` alone when no single op can be blamed."""
    out = []
    for op in _post_order(module):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as err:
            out.append(at_op(op, f"Operation does not verify: {err}"))
        except Exception as err:  # noqa: BLE001  (a broken verifier: still a located report)
            out.append(at_op(op, f"verifier of '{op.name}' failed: {type(err).__name__}: {err}"))
    return out or [Diagnostic(str(e))]


def _post_order(op: Operation) -> Iterable[Operation]:
    stack: list[tuple[Operation, bool]] = [(op, False)]
    while stack:
        cur, expanded = stack.pop()
        if expanded:
            yield cur
            continue
        stack.append((cur, True))
        children = [o for r in cur.regions for b in r.blocks for o in b.ops]
        stack.extend((c, False) for c in reversed(children))


def pyasc_error(e: PyAscError, module: ModuleOp | None) -> Diagnostic:
    """A ``PyAscError`` raised by a pass, as it formats itself (its location is the user's
    Python source when it has one); for matching annotations its line is that of the op whose
    ``asc.loc`` is the error's location."""
    diag = Diagnostic(e.message, preformatted=e.format())
    if module is not None and e.loc is not None:
        for op in module.walk():
            attr = op.attributes.get("asc.loc")
            if isinstance(attr, StringAttr) and SourceLoc.parse(attr.data) == e.loc:
                pos = op_position(op)
                if pos is not None:
                    diag.file, diag.line, diag.col = pos
                break
    return diag


def blamed_op(exc: BaseException) -> Operation | None:
    """The op an internal exception was raised on: the innermost frame of its traceback with an
    ``Operation`` (not a module) among its locals."""
    frames = [f for f, _ in traceback.walk_tb(exc.__traceback__)]
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            if isinstance(value, Operation) and not isinstance(value, ModuleOp):
                return value
    return None


# --------------------------------------------------------------------------- expectations

_ANNOTATION = re.compile(
    r"expected-(?P<kind>error|warning|remark|note)\s*(?:@(?P<where>[+-]\d+|above|below))?"
    r"\s*\{\{(?P<text>.*?)\}\}"
)


@dataclass
class Expectation:
    """An ``expected-<kind>`` annotation: the ``line`` it designates, where it is written
    (``at_line``/``at_col``) and the ``text`` the message must contain."""

    kind: str
    text: str
    line: int
    at_line: int
    at_col: int


def expectations(lines: Sequence[str], first: int, last: int) -> list[Expectation]:
    """The annotations of input lines ``first``..``last`` (1-based, inclusive: one chunk)."""
    out: list[Expectation] = []
    last = min(last, len(lines))
    annotated = {n for n in range(first, last + 1) if _ANNOTATION.search(lines[n - 1])}
    for n in sorted(annotated):
        for m in _ANNOTATION.finditer(lines[n - 1]):
            where = m.group("where")
            if where is None:
                target = n
            elif where in ("above", "below"):
                step = -1 if where == "above" else 1
                target = n + step
                while target in annotated:
                    target += step
            else:
                target = n + int(where)
            out.append(Expectation(m.group("kind"), m.group("text"), target, n, m.start() + 1))
    return out


def has_annotations(text: str) -> bool:
    """Whether ``text`` holds any ``expected-*`` annotation."""
    return _ANNOTATION.search(text) is not None


def check(expected: list[Expectation], got: list[Diagnostic], file: str) -> list[Diagnostic]:
    """The mismatches between a chunk's annotations and its errors: every error no annotation
    expects (``unexpected error: ...``), then every annotation no error satisfied."""
    left = list(expected)
    report = []
    for d in got:
        match = next(
            (
                x
                for x in left
                if x.kind == "error" and d.file == file and x.line == d.line and x.text in d.message
            ),
            None,
        )
        if match is None:
            report.append(Diagnostic(f"unexpected error: {d.message}", d.file, d.line, d.col))
        else:
            left.remove(match)
    for x in left:
        report.append(
            Diagnostic(f'expected {x.kind} "{x.text}" was not produced', file, x.at_line, x.at_col)
        )
    return report
