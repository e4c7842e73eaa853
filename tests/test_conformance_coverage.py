"""Meta-test: every Ascend C API the emitter can print, and every API form the CPU runtime
implements, has a conformance test.

The API names come from the string templates of ``pyasc_mlir/emitter.py``,
``emit_scalar.py`` and ``emit_host.py`` (calls ``Name(``,
``obj.Name<T>(``, brace-initialised structs ``Name{``, templates ``Name<`` and enumerators
``Scope::Name``) and, where a template takes the name from an op attribute, from the API tables
of ``dialects/ascendc.py`` (VEC_BINARY, VEC_UNARY, VEC_SCALAR, REDUCE, ROUND, CMP, EVENTS,
POSITIONS). The evidence is the C++ test kernel of ``tests/test_cpu_runtime.py`` (comments
stripped): each name must be used there. A template whose name part comes from an expression
this test does not know fails the test, so a new kind of emitted call cannot slip through.

Implemented forms: every public function, public member function of a public class, and type
of namespace ``AscendC`` in ``kernel_operator.h`` and ``pyasc_cpu/*.h``, found by parsing the
headers (``tests/api_inventory.py``: overloads by argument-count range), must be called with a
fitting argument count (types: named) by a kernel of ``tests/conformance/*.cpp``,
``tests/samples/*.cpp`` or the C++ of ``tests/test_cpu_runtime.py``. Member calls are matched
by name and argument count, not by receiver type. Exemptions: :data:`FORM_EXEMPT`, and member
functions named ``Cpu*`` (the CPU runtime's own hooks, e.g. ``TPipe::CpuPositionOf``, not
Ascend C names).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import api_inventory as inv
import pytest

import pyasc_mlir.emit_host as emit_host_module
import pyasc_mlir.emit_scalar as emit_scalar_module
import pyasc_mlir.emitter as emitter_module
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.runtime.cpu import INCLUDE_DIR

HERE = Path(__file__).resolve().parent
EMITTERS = tuple(Path(m.__file__) for m in (emitter_module, emit_scalar_module, emit_host_module))
CONFORMANCE = HERE / "test_cpu_runtime.py"

# Placeholders that print an API name (or an enumerator) taken from an op attribute: the
# values the dialect's verifiers allow.
API_PLACEHOLDERS: dict[str, list[str]] = {
    "op.api.data": sorted(
        {
            *ac.VEC_BINARY.values(),
            *ac.VEC_UNARY.values(),
            *ac.VEC_SCALAR.values(),
            *ac.REDUCE.values(),
            *ac.WHOLE_REDUCE.values(),
        }
    ),
    "op.round.data": sorted(ac.ROUND.values()),
    "op.mode.data": sorted(ac.CMP.values()),
    "e": list(ac.EVENTS),
    "op.position.data": list(ac.POSITIONS),
    "cache_line": list(ac.CACHE_LINES),
}
# Placeholders that print user-defined names (kernels, tiling structs), not APIs.
NAME_PLACEHOLDERS = {"k.sym_name.data", "name", "sname", "struct_name(k)"}
# Our own CPU-build macros (docs/CPU_RUNTIME.md), not Ascend C APIs.
NOT_API = re.compile(r"^PYASC_")

_SENTINEL = "\x00{}\x00"
_PIECE = r"(?:[A-Za-z_]\w*|\x00\d+\x00)"
_CALL = re.compile(rf"(?<![\w\x00])(?P<name>{_PIECE}+)\s*(?:<[^<>;]*>)?\s*[({{]")
_TEMPLATE = re.compile(rf"(?<![\w\x00])(?P<name>{_PIECE}+)<")
_SCOPED = re.compile(rf"(?P<scope>[A-Za-z_]\w*)::(?P<name>{_PIECE}+)")


def _templates(tree: ast.Module) -> list[tuple[str, list[str]]]:
    """(text with ``\\0i\\0`` for the i-th placeholder, placeholder sources) of every string
    the emitter can print: f-strings and string literals, docstrings excluded."""
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            docstrings.add(id(body[0].value))
    inner: set[int] = set()  # string parts of f-strings, handled with their f-string
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inner.update(id(v) for v in ast.walk(node) if v is not node)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and id(node) not in inner:
            text, holes = "", []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    text += str(v.value)
                else:
                    assert isinstance(v, ast.FormattedValue)
                    text += _SENTINEL.format(len(holes))
                    holes.append(ast.unparse(v.value))
            out.append((text, holes))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and id(node) not in inner
        ):
            out.append((node.value, []))
    return out


def _expand(piece: str, holes: list[str], problems: list[str], where: str) -> list[str]:
    """The names a (possibly templated) identifier can print; [] for user-defined names."""
    parts = re.split(r"\x00(\d+)\x00", piece)
    if len(parts) == 1:
        return [piece]
    if parts[0].startswith("pyasc_"):  # the emitted scalar prelude's own functions
        return []
    names = [""]
    for i, part in enumerate(parts):
        if i % 2 == 0:
            names = [n + part for n in names]
            continue
        expr = holes[int(part)]
        if expr in NAME_PLACEHOLDERS:
            return []
        if expr not in API_PLACEHOLDERS:
            problems.append(
                f"{where}: an API name printed from {{{expr}}}: teach "
                "tests/test_conformance_coverage.py which values it takes"
            )
            return []
        names = [n + v for n in names for v in API_PLACEHOLDERS[expr]]
    return names


def emitted_apis() -> dict[str, set[str]]:
    """``{"call": {...}, "type": {...}, "enum": {"Scope::Name", ...}}`` the emitter can print."""
    found: dict[str, set[str]] = {"call": set(), "type": set(), "enum": set()}
    problems: list[str] = []
    templates = [t for f in EMITTERS for t in _templates(ast.parse(f.read_text()))]
    for text, holes in templates:
        where = repr(text.replace("\x00", "")[:60])
        for m in _SCOPED.finditer(text):
            if m["scope"] == "std":  # the C++ standard library (the scalar prelude)
                continue
            for name in _expand(m["name"], holes, problems, where):
                found["enum"].add(f"{m['scope']}::{name}")
        scoped_names = {m.start("name") for m in _SCOPED.finditer(text)}
        for kind, pattern in (("call", _CALL), ("type", _TEMPLATE)):
            for m in pattern.finditer(text):
                if m.start("name") in scoped_names:
                    continue
                for name in _expand(m["name"], holes, problems, where):
                    if name[:1].isupper() and not NOT_API.match(name):
                        found[kind].add(name)
    assert not problems, "\n".join(problems)
    return found


@functools.cache
def conformance_cpp() -> str:
    """The C++ of the conformance test kernels (module-level ``*_CPP`` strings), without
    comments."""
    tree = ast.parse(CONFORMANCE.read_text())
    parts = []
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            and any(isinstance(t, ast.Name) and t.id.endswith("_CPP") for t in node.targets)
        ):
            parts.append(node.value.value)
    assert parts, "no *_CPP kernels in tests/test_cpu_runtime.py"
    text = "\n".join(parts)
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def conformance_names(tree_name: str) -> object:
    tree = ast.parse(CONFORMANCE.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == tree_name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{tree_name} not found in tests/test_cpu_runtime.py")


APIS = emitted_apis()


def used(name: str, kind: str, cpp: str) -> bool:
    if kind == "enum":
        return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", cpp) is not None
    if kind == "type":
        return re.search(rf"(?<!\w){re.escape(name)}\s*<", cpp) is not None
    return re.search(rf"(?<!\w){re.escape(name)}\s*(?:<[^;{{}}]*?>)?\s*[({{]", cpp) is not None


def test_the_extraction_finds_what_the_emitter_prints():
    """Guards the extractor itself: a sample of names from every source it reads."""
    calls, types, enums = APIS["call"], APIS["type"], APIS["enum"]
    for name in (
        "DataCopy",
        "DataCopyPad",
        "DataCopyExtParams",
        "DataCopyPadExtParams",
        "Duplicate",
        "Cast",
        "Compare",
        "Select",
        "GetValue",
        "AllocTensor",
        "EnQue",
        "DeQue",
        "FreeTensor",
        "InitBuffer",
        "SetGlobalBuffer",
        "Get",
        "GetBlockIdx",
        "SetFlag",
        "WaitFlag",
        "FetchEventID",
        "GetTPipePtr",
        "REGIST_MATMUL_OBJ",
        "GetSysWorkSpacePtr",
        "SetTensorA",
        "SetTensorB",
        "SetTail",
        "Iterate",
        "GetTensorC",
        "End",
    ):
        assert name in calls, name
    assert {
        *ac.VEC_BINARY.values(),
        *ac.VEC_UNARY.values(),
        *ac.VEC_SCALAR.values(),
        *ac.REDUCE.values(),
    } <= calls
    assert {"GlobalTensor", "LocalTensor", "TQue", "TBuf", "Matmul", "MatmulType"} <= types
    assert {f"RoundMode::{m}" for m in ac.ROUND.values()} <= enums
    assert {f"CMPMODE::{m}" for m in ac.CMP.values()} <= enums
    assert {f"HardEvent::{e}" for e in ac.EVENTS} <= enums
    assert {
        "TPosition::VECIN",
        "TPosition::VECOUT",
        "TPosition::VECCALC",
        "SELMODE::VSEL_TENSOR_TENSOR_MODE",
        "TPosition::GM",
        "CubeFormat::ND",
    } <= enums
    assert not any(n.startswith("PYASC_") for n in calls)  # our macros are not APIs


def test_unknown_placeholders_fail(tmp_path, monkeypatch):
    fake = tmp_path / "emitter.py"
    fake.write_text('def f(op):\n    return f"{op.brand_new.data}(dst, src);"\n')
    monkeypatch.setattr(__import__(__name__), "EMITTERS", (fake,))
    with pytest.raises(AssertionError, match="op.brand_new.data"):
        emitted_apis()


@pytest.mark.parametrize("kind,name", sorted((k, n) for k, ns in APIS.items() for n in ns))
def test_every_emitted_api_has_a_conformance_test(kind, name):
    assert used(name, kind, conformance_cpp()), (
        f"the emitter can print {name} ({kind}) but no conformance test kernel in "
        "tests/test_cpu_runtime.py uses it: add a case there (semantics: docs/CPU_RUNTIME.md)"
    )


def test_mode_sweeps_cover_every_mode():
    """Cast and Compare cases take the mode as an integer code: the tests' sweeps must cover
    every mode the emitter prints (the codes are pinned by static_asserts in the kernel)."""
    modes = conformance_names("MODES")
    assert {f"CAST_{m}" for m in modes} >= set(ac.ROUND.values())
    cmp_codes = {"LT": 0, "GT": 1, "EQ": 2, "LE": 3, "GE": 4, "NE": 5}
    tree = ast.parse(CONFORMANCE.read_text())
    cmp = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "CMP" for t in node.targets)
    )
    swept = {k.value for k in cmp.keys}  # type: ignore[attr-defined]
    assert {cmp_codes[m] for m in ac.CMP.values()} <= swept


# ------------------------------------------------------------- implemented API forms

FORM_EXEMPT: dict[str, str] = {
    "DefaultBiasType": "not an Ascend C name: the default BIAS_TYPE argument of Matmul "
    "(matmul.h), instantiated by every Matmul<A, B, C> of the Matmul kernels",
}
"""Forms (by ``str(form)`` or type name) exempt from the implemented-forms check, with why."""

KERNEL_SOURCES = [
    *sorted((HERE / "conformance").glob("*.cpp")),
    *sorted((HERE / "samples").glob("*.cpp")),
]


@functools.cache
def implemented_forms() -> frozenset[inv.Form]:
    forms: set[inv.Form] = set()
    for header in inv.header_files(INCLUDE_DIR):
        forms |= inv.api_forms(header.read_text())
    return frozenset(f for f in forms if not (f.owner and f.name.startswith("Cpu")))


@functools.cache
def kernel_cpp() -> str:
    """Every conformance kernel's C++ (the runtime-form evidence)."""
    return "\n".join([conformance_cpp(), *(p.read_text() for p in KERNEL_SOURCES)])


@functools.cache
def kernel_calls() -> dict[str, set[int]]:
    return inv.calls(kernel_cpp())


def test_the_header_inventory_finds_the_api():
    """Guards the header reader: known forms of every header are found, CPU internals not."""
    names = {str(f) for f in implemented_forms()}
    for form in (
        "Add(4 args)",  # count form (macro-generated)
        "Add(6 args)",  # level-0 form (vector_level0.h macro)
        "LeakyRelu(4 args)",
        "Cast(4 args)",
        "DataCopyPad(3 args)",
        "DataCopyPad(4 args)",
        "ReduceMax(4-5 args)",  # calIndex has a default
        "TPipe::InitBuffer(2 args)",
        "TPipe::InitBuffer(3 args)",
        "TQue::AllocTensor(0 args)",
        "LocalTensor::GetValue(1 args)",
        "Matmul::IterateAll(1-5 args)",
        "Matmul::SetOrgShape(4-5 args)",
        "SetVectorMask(2 args)",
        "GetSubBlockIdx(0 args)",
        "InitSocState(0 args)",
        "LocalTensor",
        "TCubeTiling",
        "BinaryRepeatParams",
        "MatmulType",
    ):
        assert form in names, form
    bare = {f.name for f in implemented_forms()}
    for internal in ("Fail", "State", "RoundUp32", "CheckCubeTiling", "Core", "Cat", "Valid"):
        assert internal not in bare, internal


def test_the_header_reader_on_a_synthetic_header():
    text = """
    #define PYASC_TWO(NAME) template <class T> inline void NAME(T a, T b = 0) {}
    namespace AscendC {
    namespace cpu { inline void Hidden(int) {} }
    PYASC_TWO(Pair)
    template <class T> class Box {
     public:
      void Put(int i, const char* s = "x,y") { (void)i; }
      Box() = default;
     private:
      void Secret() {}
    };
    struct Params { int a = f(1); };
    inline int Free(int a, int b, ...) { return a; }
    }  // namespace AscendC
    inline void Outside() {}
    """
    got = {str(f) for f in inv.api_forms(text)}
    assert got == {"Pair(1-2 args)", "Box", "Box::Put(1-2 args)", "Params", "Free(2-99 args)"}
    assert inv.calls("Box<int> b = x.Put<int>(1, g(2, 3)); Pair(a, b);") == {
        "Put": {2},
        "g": {2},
        "Pair": {2},
    }


def _exempt(form: inv.Form) -> bool:
    return str(form) in FORM_EXEMPT or (form.kind == "type" and form.name in FORM_EXEMPT)


@pytest.mark.parametrize(
    "form", sorted((f for f in implemented_forms() if not _exempt(f)), key=str), ids=str
)
def test_every_implemented_api_form_has_a_conformance_kernel(form):
    assert inv.used(form, kernel_cpp(), kernel_calls()), (
        f"the CPU runtime implements {form} but no conformance kernel uses it "
        "(tests/conformance/*.cpp, tests/samples/*.cpp, tests/test_cpu_runtime.py): add one"
    )


def test_exemptions_are_still_needed():
    """An exemption names an implemented form that no kernel uses (else it must go)."""
    by_key = {str(f): f for f in implemented_forms()} | {
        f.name: f for f in implemented_forms() if f.kind == "type"
    }
    for key in FORM_EXEMPT:
        assert key in by_key, f"FORM_EXEMPT lists {key}, which the headers do not implement"
        assert not inv.used(by_key[key], kernel_cpp(), kernel_calls()), (
            f"{key} is used by a kernel now: drop its exemption"
        )
