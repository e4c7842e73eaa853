"""The op table (``pyasc_mlir.dialects.opset``): every record is complete and consistent, every
consumer knows every record, and the CPU ``kernel_operator.h`` implements every Ascend C call
the table names."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType
from xdsl.ir import Block, Region

import pyasc_mlir as pa
from pyasc_mlir import fuzzing as fuzz
from pyasc_mlir.dialects import asc, opset
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.frontend import dispatch, names
from pyasc_mlir.interpreter import ascendc_math, tensor_impls, tile_vector
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.ops import OutsideOperatorError
from pyasc_mlir.passes.decompose import AscDecomposePass

HEADER = Path(pa.__file__).resolve().parent / "runtime" / "include" / "kernel_operator.h"
RECORDS = opset.RECORDS
UNARY = list(opset.UNARY.values())
CALLS = [r for r in RECORDS if r.call is not None]


def _ids(records):
    return [f"{r.category}:{r.kind}" for r in records]


@pytest.fixture(scope="module")
def header_api() -> tuple[set[str], set[str]]:
    """(functions and macro-made ops the header and the pyasc_cpu/ headers it includes define,
    ``CMPMODE`` enumerators)."""
    text = "\n".join(h.read_text() for h in [HEADER, *sorted(HEADER.parent.glob("pyasc_cpu/*.h"))])
    names = set(re.findall(r"^PYASC_\w+\((\w+),", text, re.M))
    names |= set(re.findall(r"^inline\s+[\w:<>]+\s+(\w+)\s*\(", text, re.M))
    (modes,) = re.findall(r"enum class CMPMODE \{([^}]*)\}", text)
    return names, {m.split("=")[0].strip() for m in modes.split(",")}


@pytest.mark.parametrize("record", CALLS, ids=_ids(CALLS))
def test_header_implements_call(record, header_api):
    names, modes = header_api
    assert record.call.form in opset.CALL_FORMS
    if record.call.form == "cmpmode":
        assert record.call.name in modes
    else:
        assert record.call.name in names, f"kernel_operator.h has no {record.call.name}"


def test_records_are_well_formed():
    keys = [(r.category, r.kind) for r in RECORDS]
    assert len(keys) == len(set(keys))
    calls = [r.call.name for r in CALLS]
    assert len(calls) == len(set(calls))
    for r in RECORDS:
        assert r.category in opset.CATEGORIES
        assert r.arity == {"unary": 1, "scalar": 1, "reduce": 1}.get(r.category, 2), r.kind
        assert r.dtype_rule == (opset.DTYPE_MASK if r.category == "compare" else opset.DTYPE_SAME)
        assert opset.by_call(r.call.name) is r if r.call else True
        assert r.repeat_cycles >= 1
        assert not (r.function and r.category in ("unary", "binary")) or r.doc, r.kind


@pytest.mark.parametrize("record", UNARY, ids=_ids(UNARY))
def test_unary_record_is_complete(record):
    assert record.tensor_impl() is not None
    if record.composite:
        assert record.decompose is not None and record.call is None
        assert record.kind in asc.COMPOSITE_UNARY_KINDS
    else:
        assert record.decompose is None and record.kind in asc.VECTOR_UNARY_KINDS
        assert record.tile_impl() is not None and record.kind in tile_vector.UNARY
        # every vector kind has a call, except neg: asc-tile lowers it to Muls by -1
        assert (record.call is None) == (record.kind == "neg")
    if record.function is not None:
        assert record.function == record.kind  # the frontend builds asc.unary <function>
        assert record.py_fold is not None
    assert record.fuzz is not None and record.fuzz.name in fuzz.UNARY_FNS


def test_verifier_and_call_tables_cover_the_table():
    for cat, kinds in [
        ("unary", asc.UNARY_KINDS),
        ("binary", asc.BINARY_KINDS),
        ("scalar", asc.SCALAR_KINDS),
        ("compare", asc.COMPARE_PREDICATES),
        ("reduce", asc.REDUCE_KINDS),
    ]:
        assert sorted(kinds) == sorted(opset.by_category(cat)), cat
    for table, cat in [
        (ac.VEC_UNARY, "unary"),
        (ac.VEC_BINARY, "binary"),
        (ac.VEC_SCALAR, "scalar"),
        (ac.CMP, "compare"),
        (ac.REDUCE, "reduce"),
    ]:
        assert table == {k: r.call.name for k, r in opset.by_category(cat).items() if r.call}
    assert set(asc.VECTOR_REDUCE_KINDS) == set(ac.REDUCE)


def test_interpreters_know_every_record():
    assert set(tensor_impls.UNARY) == set(opset.UNARY)
    assert set(tensor_impls.BINARY) == set(opset.BINARY)
    assert set(tensor_impls.COMPARE) == set(opset.COMPARE)
    assert set(tile_vector.BINARY) == set(opset.BINARY)
    assert set(tile_vector.SCALAR) == set(opset.SCALAR)
    assert set(tile_vector.COMPARE) == set(opset.COMPARE)
    by_form = {
        "unary": ascendc_math.UNARY,
        "binary": ascendc_math.BINARY,
        "scalar": ascendc_math.SCALAR,
        "compare": ascendc_math.COMPARE,
    }
    for r in CALLS:
        if r.category in by_form:
            assert r.call.name in by_form[r.category], r.kind


def test_frontend_and_markers_know_every_spelling():
    for r in RECORDS:
        if r.function is not None:
            marker = getattr(pa, r.function)
            assert r.function in pa.__all__
            assert names.MARKERS[marker] == r.function
            assert (marker.__name__, marker.__qualname__, marker.__module__) == (
                r.function,
                r.function,
                "pyasc_mlir.ops",
            )
            if r.category in ("unary", "binary"):
                assert marker.__doc__ == r.doc
                with pytest.raises(OutsideOperatorError, match=rf"pyasc_mlir\.{r.function}\("):
                    marker(*[1.0] * r.arity)
        for m in r.methods:
            assert m in names.METHODS
        if r.py_fold is not None:
            assert names.PY_UNARY[r.kind] is r.py_fold
    symbols = dict(dispatch.OP_SYMBOLS)
    binops = {symbols[t]: k for t, k in dispatch.TENSOR_BINOPS.items()}
    assert binops == {r.py_operator: k for k, r in opset.BINARY.items() if r.py_operator}
    cmp_symbols = {"lt": "<", "gt": ">", "le": "<=", "ge": ">=", "eq": "==", "ne": "!="}
    assert set(dispatch.CMP_PREDICATES.values()) == set(opset.COMPARE)
    assert {k: r.py_operator for k, r in opset.COMPARE.items()} == cmp_symbols
    assert set(names.REDUCE) == {r.function for r in opset.REDUCE.values()}


def _unary_module(kind: str, n: int) -> ModuleOp:
    t = TensorType(Float32Type(), [n])
    block = Block(arg_types=[t])
    op = asc.UnaryOp(kind, block.args[0])
    block.add_ops([op, func.ReturnOp(op.result)])
    return ModuleOp([func.FuncOp("f", ([t], [t]), Region(block))])


COMPOSITES = [r for r in UNARY if r.composite]


@pytest.mark.parametrize("record", COMPOSITES, ids=_ids(COMPOSITES))
def test_decomposition_matches_reference(record):
    """asc-decompose leaves only vector kinds, and the expansion computes the reference."""
    x = np.linspace(-12.0, 12.0, 4097, dtype=np.float32)
    module = _unary_module(record.kind, x.size)
    (want,) = run_function(module, "f", [x])
    AscDecomposePass().apply(Context(), module)
    module.verify()
    kinds = {op.kind.data for op in module.walk() if isinstance(op, asc.UnaryOp)}
    assert kinds <= set(asc.VECTOR_UNARY_KINDS)
    (got,) = run_function(module, "f", [x])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("record", UNARY, ids=_ids(UNARY))
def test_fuzz_model_is_consistent(record):
    """The fuzz model's reference is the op's float64 value and its interval holds it."""
    model = record.fuzz
    lo, hi = (0.25, 9.0) if model.positive else (-9.0, min(9.0, model.max_input))
    v = np.linspace(lo, hi, 1001)
    r, bound = model.error(v, np.zeros_like(v))
    with np.errstate(all="ignore"):
        want = np.asarray(record.tensor_impl()(v), dtype=np.float64)
    np.testing.assert_allclose(r, want, rtol=1e-6, atol=1e-7)
    assert np.all(bound >= 0) and np.all(np.isfinite(bound))
    ilo, ihi = model.interval(lo, hi)
    assert ilo <= r.min() + 1e-12 and r.max() - 1e-12 <= ihi
    assert math.isfinite(ilo) and math.isfinite(ihi)
