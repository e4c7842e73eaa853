"""The API forms the CPU runtime implements, read from its headers, and the calls a C++ kernel
makes (tests/test_conformance_coverage.py).

A small C++ reader, enough for our own headers (``kernel_operator.h``, ``pyasc_cpu/*.h``):
comments and strings are blanked, our function-like ``PYASC_*`` macros are expanded where they
are invoked, other preprocessor lines are dropped, then declarations are collected per scope.
An API *form* is a public function (or public member function of a public class) of namespace
``AscendC`` -- not of its ``cpu``/``detail`` namespaces -- with its range of argument counts
(parameters with defaults lower the minimum); overloads with the same range are one form.
Types (classes, structs, enums, aliases) are forms too, used when their name appears.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_IDENT = re.compile(r"[A-Za-z_]\w*")
_TOKEN = re.compile(r"[A-Za-z_]\w*|::|->|\d[\w.']*|\S")
KEYWORDS = {
    "if", "for", "while", "switch", "return", "sizeof", "static_assert", "decltype", "alignof",
    "operator", "catch", "throw", "noexcept", "alignas", "static_cast", "reinterpret_cast",
    "const_cast", "defined",
}  # fmt: skip


@dataclass(frozen=True)
class Form:
    """A function form (``kind`` "call", ``lo``..``hi`` arguments) or a type (``kind`` "type")."""

    kind: str
    name: str
    lo: int = 0
    hi: int = 0
    owner: str = ""  # the class of a member function ("" for free functions and types)

    def __str__(self) -> str:
        if self.kind == "type":
            return self.name
        args = f"{self.lo}" if self.lo == self.hi else f"{self.lo}-{self.hi}"
        return f"{self.owner + '::' if self.owner else ''}{self.name}({args} args)"


def strip_comments(text: str) -> str:
    """Comments removed, string and char literals blanked (kept as ``""``), lines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            out.append("\n" * text.count("\n", i, j if j >= 0 else n))
            i = n if j < 0 else j + 2
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q:
                j += 2 if text[j] == "\\" else 1
            out.append(q + q)
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _split_args(text: str) -> list[str]:
    """Top-level comma split of an argument list (parentheses, brackets, braces and angle
    brackets of templates nest)."""
    parts, depth, cur, angle = [], 0, [], 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "<" and depth == 0 and _template_open(text, i):
            angle += 1
        elif ch == ">" and depth == 0 and angle:
            angle -= 1
        if ch == "," and depth == 0 and angle == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts]


def _template_open(text: str, i: int) -> bool:
    """``<`` at ``text[i]`` opens a template argument list (it follows a name, not ``<<``)."""
    before = text[:i].rstrip()
    m = re.search(r"[A-Za-z_]\w*$", before)
    return m is not None and text[i + 1 : i + 2] not in "<=" and before[-1:] != "<"


def _matching(text: str, open_pos: int) -> int:
    """Index of the ``)`` matching the ``(`` at ``open_pos`` (``len(text)`` if unbalanced)."""
    depth = 0
    for j in range(open_pos, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return len(text)


def preprocess(text: str) -> str:
    """Join continued lines, expand invocations of the file's ``PYASC_*`` function-like macros,
    drop every preprocessor line."""
    text = strip_comments(text).replace("\\\n", " ")
    macros: dict[str, tuple[list[str], str]] = {}
    kept = []
    for line in text.splitlines():
        m = re.match(r"\s*#\s*define\s+(PYASC_\w+)\(([^)]*)\)(.*)", line)
        if m:
            macros[m[1]] = ([p.strip() for p in m[2].split(",")], m[3])
        if not line.lstrip().startswith("#"):
            kept.append(line)
    code = "\n".join(kept)
    for _ in range(4):  # nested expansions
        changed = False
        for name, (params, body) in macros.items():
            for m in reversed(list(re.finditer(rf"(?<!\w){name}\s*\(", code))):
                end = _matching(code, m.end() - 1)
                args = _split_args(code[m.end() : end])
                sub = body
                for p, a in zip(params, args, strict=False):
                    sub = re.sub(rf"(?<!\w)##\s*{p}(?!\w)|(?<!\w){p}\s*##", a, sub)
                    sub = re.sub(rf"(?<![\w#]){p}(?!\w)", a, sub)
                code = code[: m.start()] + sub + code[end + 1 :]
                changed = True
        if not changed:
            break
    return code


def _params_range(params: str) -> tuple[int, int]:
    args = _split_args(params)
    if args == [] or args == ["void"]:
        return 0, 0
    if args and args[-1] == "...":
        return len(args) - 1, 99
    required = sum(1 for a in args if "=" not in a.replace("==", ""))
    return required, len(args)


class _Scope:
    def __init__(self, kind: str, name: str, public: bool):
        self.kind, self.name, self.public = kind, name, public


def api_forms(text: str) -> set[Form]:
    """The public API forms of namespace ``AscendC`` declared in header ``text``."""
    code = preprocess(text)
    forms: set[Form] = set()
    stack: list[_Scope] = []
    stmt_start = 0
    i, n = 0, len(code)
    while i < n:
        ch = code[i]
        if ch == "{":
            head = code[stmt_start:i]
            stack.append(_open_scope(head, stack, forms))
            stmt_start = i + 1
        elif ch == "}":
            if stack:
                stack.pop()
            stmt_start = i + 1
        elif ch == ";":
            _declaration(code[stmt_start:i], stack, forms)
            stmt_start = i + 1
        elif ch == ":" and stack and stack[-1].kind == "class":
            label = code[stmt_start:i].strip()
            if label in ("public", "private", "protected"):
                stack[-1].public = label == "public"
                stmt_start = i + 1
        elif ch == "(":  # skip argument lists whole (lambdas, initialisers inside)
            i = _matching(code, i)
        i += 1
    return forms


def _in_api(stack: list[_Scope]) -> tuple[bool, str]:
    """Whether declarations here are public AscendC API, and the class they belong to."""
    names = [s for s in stack if s.kind == "namespace"]
    if [s.name for s in names] != ["AscendC"]:
        return False, ""
    rest = [s for s in stack if s.kind != "namespace"]
    if not rest:
        return True, ""
    if len(rest) == 1 and rest[0].kind == "class" and rest[0].public:
        return True, rest[0].name
    return False, ""


def _open_scope(head: str, stack: list[_Scope], forms: set[Form]) -> _Scope:
    h = head.strip()
    m = re.match(r"(?:inline\s+)?namespace\s+([\w:]*)\s*$", h)
    if m:
        names = m[1].split("::") if m[1] else ["<anon>"]
        for extra in names[:-1]:
            stack.append(_Scope("namespace", extra, True))
        return _Scope("namespace", names[-1], True)
    # `extern "C"` blocks and the like are transparent: a namespace with the enclosing name
    if re.match(r'extern\s*""\s*$', h):
        return _Scope("namespace", stack[-1].name if stack else "", True)
    api, owner = _in_api(stack)
    h = _drop_template_heads(h)
    m = re.search(r"\b(class|struct|union|enum(?:\s+class)?)\s+([A-Za-z_]\w*)[^(]*$", h)
    if m and "(" not in h.split(m[2], 1)[0].split("template", 1)[-1].replace("<", " "):
        if api and not owner:
            forms.add(Form("type", m[2]))
        kind = "enum" if m[1].startswith("enum") else "class"
        return _Scope(kind, m[2], m[1] != "class")
    _function(h, stack, forms)
    return _Scope("body", "", False)


def _drop_template_heads(head: str) -> str:
    """``head`` without its ``template <...>`` parameter lists."""
    while True:
        m = re.search(r"\btemplate\s*<", head)
        if m is None:
            return head
        depth, j = 1, m.end()
        while j < len(head) and depth:
            depth += {"<": 1, ">": -1}.get(head[j], 0)
            j += 1
        head = head[: m.start()] + " " + head[j:]


def _function(head: str, stack: list[_Scope], forms: set[Form]) -> None:
    api, owner = _in_api(stack)
    if not api:
        return
    head = _drop_template_heads(head)
    if re.search(r"(?<![=!<>])=(?!=)", head.split("(", 1)[0]):  # `x = f(...)`: an initialiser
        return
    m = re.search(r"(~?[A-Za-z_]\w*)\s*(?:<[^()]*>)?\s*\(", head)
    while m is not None and m[1] in KEYWORDS | {"template", "alignas"}:
        m = re.compile(r"(~?[A-Za-z_]\w*)\s*(?:<[^()]*>)?\s*\(").search(head, m.end())
    if m is None or "operator" in head[: m.start() + 1].split()[-1:]:
        return
    name = m[1]
    if name.startswith("~") or name == owner or re.search(r"\boperator\s*\S*$", head[: m.start()]):
        return
    if re.search(r"=\s*$", head[: m.start()]):  # `x = f(...)`: not a declaration
        return
    open_pos = m.end() - 1
    lo, hi = _params_range(head[open_pos + 1 : _matching(head, open_pos)])
    forms.add(Form("call", name, lo, hi, owner))


def _declaration(stmt: str, stack: list[_Scope], forms: set[Form]) -> None:
    api, owner = _in_api(stack)
    if not api:
        return
    s = stmt.strip()
    m = re.match(r"(?:template\s*<.*>\s*)?using\s+([A-Za-z_]\w*)\s*=", s, re.S)
    if m:
        if not owner:
            forms.add(Form("type", m[1]))
        return
    if "(" in s and not re.match(r"(?:friend|typedef)\b", s):
        _function(s, stack, forms)  # a declaration without a body


def calls(cpp: str) -> dict[str, set[int]]:
    """``{name: {argument counts}}`` of every call ``Name(...)`` / ``Name<...>(...)`` in
    ``cpp`` (comments stripped)."""
    code = strip_comments(cpp)
    out: dict[str, set[int]] = {}
    for m in re.finditer(r"(?<![\w])([A-Za-z_]\w*)\s*(<[^;{}()=]*?>)?\s*\(", code):
        end = _matching(code, m.end() - 1)
        out.setdefault(m[1], set()).add(len(_split_args(code[m.end() : end])))
    return out


def used(form: Form, cpp: str, call_map: dict[str, set[int]]) -> bool:
    if form.kind == "type":
        return re.search(rf"(?<!\w){re.escape(form.name)}(?!\w)", strip_comments(cpp)) is not None
    return any(form.lo <= k <= form.hi for k in call_map.get(form.name, ()))


def header_files(include_dir: Path) -> list[Path]:
    return [include_dir / "kernel_operator.h", *sorted((include_dir / "pyasc_cpu").glob("*.h"))]
