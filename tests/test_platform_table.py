"""``pyasc_mlir/platform.py`` is the only place a hardware number lives (issue 15).

Every non-test source file is scanned for hardware numbers spelled out: Python files token by
token (so comments, docstrings and message strings never match, and numbers are compared by
value), the CPU runtime headers with comments and string literals removed. A hit fails the test
naming ``file:line`` and the rule; the fix is to import the name from ``pyasc_mlir.platform``
(or, in the header, to take it from a ``-D`` flag of ``platform.header_defines``).

Rules (Python):

* ``hw-size``: an integer literal whose value is a buffer size or hardware limit of the platform
  table (UB 192/256 KiB and their usable parts, L1, L0A/L0B/L0C, the ``blockCount`` and ND
  stride limits).
* ``kib-arithmetic``: ``N * 1024``, ``1024 * N`` or ``N * KIB`` -- a size in KiB spelled out
  (``192 * 1024``).
* ``default-platform``: the string ``"910B2"`` (use ``DEFAULT_PLATFORM``).
* ``redefinition``: a module-level assignment to a name ``platform.py`` defines
  (``COUNT_ALIGN = 128``, ``LANE_ALIGN = ...``) or a function of the same name
  (``def round_up``): one home per fact.
* ``ceil-idiom``: ``-(-x // m)``, ``(x + m - 1) // m`` or ``(x + 31) // 32``: rounding written
  by hand (use ``ceil_div`` / ``round_up``).
* ``unit-arithmetic``: ``// N``, ``% N`` or ``round_up(x, N)`` / ``ceil_div(x, N)`` with ``N``
  one of 16, 32, 64, 256, 512 -- the Cube fractal, the DataBlock, L0C/L0A alignments and the
  vector repeat used as bare numbers.

Rules (C/C++ headers, code only): ``hw-size`` as above plus 32, 255 and 256 (DataBlock,
repeat limit, repeat bytes), ``kib-arithmetic``, and ``% 16`` (the fractal).

Emitted C++ held in Python strings is not scanned (its numbers come from formatted names).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from pyasc_mlir import platform

ROOT = Path(__file__).resolve().parents[1]
SOURCE_DIRS = ("pyasc_mlir", "passes", "dialects", "python", "tools", "benchmarks", "examples")
"""Folders of non-test sources (``tests/`` and ``lit_tests/`` inputs are tests)."""
HOME = ROOT / "pyasc_mlir" / "platform.py"

HW_SIZES = frozenset(
    {
        192 * 1024,
        256 * 1024,  # UB: 910B, 310P3
        platform.get_platform("910B2").ub_usable_bytes,  # 188160
        platform.get_platform("310P3").ub_usable_bytes,
        512 * 1024,
        1024 * 1024,  # L1: 910B, 310P3
        64 * 1024,
        128 * 1024,  # L0A/L0B, L0C (910B)
        platform.MAX_BLOCK_COUNT,
        platform.ND_STRIDE_MAX,
    }
)
"""Values that are sizes or limits from the platform table."""
UNIT_DIVISORS = frozenset({16, 32, 64, 256, 512})
"""Cube fractal, DataBlock, L0C alignment, vector repeat, L0A/L0B alignment."""
HEADER_NUMBERS = frozenset({32, 255, 256}) | HW_SIZES
PLATFORM_NAMES = frozenset(
    n
    for n in dir(platform)
    if not n.startswith("_")
    and getattr(getattr(platform, n), "__module__", platform.__name__) == platform.__name__
    and n not in {"annotations", "dataclass", "Platform"}
)
"""Public names ``platform.py`` defines (constants and helpers), not its imports."""


def _sources(*suffixes: str) -> Iterator[Path]:
    for folder in SOURCE_DIRS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in suffixes and path.is_file() and path != HOME:
                yield path


def _int(tok: tokenize.TokenInfo) -> int | None:
    if tok.type != tokenize.NUMBER:
        return None
    try:
        value = ast.literal_eval(tok.string)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, int) else None


def _rounding_call(toks: list[tokenize.TokenInfo], i: int) -> bool:
    """Is ``toks[i]`` the last argument of a ``round_up(...)`` / ``ceil_div(...)`` call?"""
    if toks[i - 1].string != "," or i + 1 >= len(toks) or toks[i + 1].string != ")":
        return False
    depth = 0
    for j in range(i - 1, 0, -1):
        depth += {")": 1, "(": -1}.get(toks[j].string, 0)
        if depth < 0:
            return toks[j - 1].string in ("round_up", "ceil_div")
    return False


def _python_hits(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line, rule, source text) of every rule match in one Python file (one per line and
    rule)."""
    seen: set[tuple[int, str]] = set()
    for line, rule, text in _python_token_hits(path):
        if (line, rule) not in seen:
            seen.add((line, rule))
            yield line, rule, text


def _python_token_hits(path: Path) -> Iterator[tuple[int, str, str]]:
    toks = [
        t
        for t in tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
        if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT)
    ]
    for i, tok in enumerate(toks):
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        value = _int(tok)
        rule = None
        if value in HW_SIZES:
            rule = "hw-size"
        elif (value == 1024 or tok.string == "KIB") and "*" in (
            prev and prev.string,
            nxt and nxt.string,
        ):
            rule = "kib-arithmetic"
        elif (
            tok.type == tokenize.STRING
            and tok.string.strip("\"'") == "910B2"
            and len(tok.string) <= 9
        ):
            rule = "default-platform"
        elif (
            tok.type == tokenize.NAME
            and tok.string in PLATFORM_NAMES
            and tok.start[1] == 0
            and nxt is not None
            and nxt.string in ("=", ":")
        ):
            rule = "redefinition"
        elif tok.string == "def" and nxt is not None and nxt.string in PLATFORM_NAMES:
            rule = "redefinition"
        elif (
            tok.string == "-"
            and nxt is not None
            and nxt.string == "("
            and i + 2 < len(toks)
            and toks[i + 2].string == "-"
        ):
            rule = "ceil-idiom"
        elif (
            tok.string == ")"
            and nxt is not None
            and nxt.string == "//"
            and prev is not None
            and (
                prev.string == "1"
                and toks[i - 2].string == "-"
                or _int(prev) in {15, 31, 63, 127, 255, 511}
            )
        ):
            rule = "ceil-idiom"
        elif (
            value in UNIT_DIVISORS
            and prev is not None
            and (prev.string in ("//", "%") or _rounding_call(toks, i))
        ):
            rule = "unit-arithmetic"
        if rule:
            yield tok.start[0], rule, tok.line.strip()


_C_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def _header_hits(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line, rule, source text) of every rule match in the code of one C/C++ header."""
    text = path.read_text()
    code = _C_NOISE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    lines = text.splitlines()
    for no, line in enumerate(code.splitlines(), 1):
        for m in re.finditer(r"(?<![\w.])(\d+)(?![\w.])", line):
            if int(m.group(1)) in HEADER_NUMBERS:
                yield no, "hw-size", lines[no - 1].strip()
        if re.search(r"\*\s*1024\b|\b1024\s*\*", line):
            yield no, "kib-arithmetic", lines[no - 1].strip()
        if re.search(r"%\s*16\b", line):
            yield no, "unit-arithmetic", lines[no - 1].strip()


def _all_hits() -> list[tuple[str, int, str, str]]:
    hits = []
    for path in _sources(".py"):
        hits += [(path.relative_to(ROOT).as_posix(), *h) for h in _python_hits(path)]
    for path in _sources(".h", ".hpp", ".cpp", ".inc"):
        hits += [(path.relative_to(ROOT).as_posix(), *h) for h in _header_hits(path)]
    return hits


def test_hardware_numbers_live_only_in_platform_py() -> None:
    bad = [f"{f}:{line}: [{rule}] {text}" for f, line, rule, text in _all_hits()]
    assert not bad, (
        "hardware numbers outside pyasc_mlir/platform.py (import them from "
        "there):\n" + "\n".join(bad)
    )


def test_the_scanner_catches_each_rule(tmp_path: Path) -> None:
    src = tmp_path / "sample.py"
    src.write_text(
        'UB = 196608\nX = 192 * 1024\ndef f(p="910B2"):\n    pass\n'
        "COUNT_ALIGN = 128\ndef round_up(x, m):\n    return -(-x // m) * m\n"
        "U = 8 * KIB\nY = (n + 31) // 32\nZ = (n + m - 1) // m\nW = n % 256\n"
        "V = round_up(f(n, 3), 16)\n"
        '"""192 * 1024 and 196608 in a docstring"""  # and 4095 in a comment\n'
    )
    rules = [(line, rule) for line, rule, _ in _python_hits(src)]
    assert rules == [
        (1, "hw-size"),
        (2, "kib-arithmetic"),
        (3, "default-platform"),
        (5, "redefinition"),
        (6, "redefinition"),
        (7, "ceil-idiom"),
        (8, "kib-arithmetic"),
        (9, "ceil-idiom"),
        (9, "unit-arithmetic"),
        (10, "ceil-idiom"),
        (11, "unit-arithmetic"),
        (12, "unit-arithmetic"),
    ]
    hdr = tmp_path / "sample.h"
    hdr.write_text(
        '#define A (192 * 1024)  // 256\nconstexpr int k = 32;\nint x = "255";\n'
        "if (b % 16) {}\n/* 4095\n */ int y = 4095;\n"
    )
    assert [(line, rule) for line, rule, _ in _header_hits(hdr)] == [
        (1, "kib-arithmetic"),
        (2, "hw-size"),
        (4, "unit-arithmetic"),
        (6, "hw-size"),
    ]
