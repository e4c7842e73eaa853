"""The fuzzer's special-value reference (``pyasc_mlir.fuzzing.specials`` / ``evaluator``) on
hand-written cases: the value, whether its IEEE class is certain, and how a stage output is
judged against it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyasc_mlir import fuzzing as fuzz
from pyasc_mlir.fuzzing import EV, Input, Node, Program
from pyasc_mlir.fuzzing.specials import CLASS_NAMES, classes, sprinkle

NAN, INF = math.nan, math.inf


def _ref(
    nodes: list[Node], *arrays: list[float], out: int = -1, lohi: tuple[float, float] = (-1.0, 1.0)
) -> EV:
    """The reference of ``nodes`` on float32 inputs ``arrays`` (1-D, generator range
    ``lohi``), output ``out``."""
    ins = tuple(Input((len(a),), "float32", *lohi) for a in arrays)
    p = Program(ins, tuple(nodes), (len(ins) + len(nodes) + out if out < 0 else out,))
    ((ev, _),) = fuzz.reference(p, [np.asarray(a, np.float32) for a in arrays])
    return ev


def _names(ev: EV) -> list[str]:
    """Class names of a reference, ``?`` where it is not certain and special."""
    c = classes(ev.v)
    return [
        CLASS_NAMES[k] if (x and k) else ("?" if k else "finite")
        for k, x in zip(c, ev.xs(), strict=True)
    ]


def _un(fn: str, guard: str = "none", c: float = 0.0) -> Node:
    return Node("unary", (("v", 0),), (("c", c), ("fn", fn), ("guard", guard)))


def _bin(fn: str, a: tuple, b: tuple) -> Node:
    return Node("binary", (a, b), (("fn", fn),))


V0, V1 = ("v", 0), ("v", 1)


def test_maximum_minimum_propagate_nan_and_order_zeros() -> None:
    a = [NAN, 1.0, -0.0, 0.0, -0.0, INF]
    b = [1.0, NAN, 0.0, -0.0, -0.0, NAN]
    assert _names(_ref([_bin("maximum", V0, V1)], a, b)) == ["NaN", "NaN", "+0", "+0", "-0", "NaN"]
    assert _names(_ref([_bin("minimum", V0, V1)], a, b)) == ["NaN", "NaN", "-0", "-0", "-0", "NaN"]


@pytest.mark.parametrize(
    ("fn", "want"),
    [
        ("relu", ["NaN", "+inf", "+0", "-0", "+0"]),  # relu(-0) = -0 (torch.relu)
        ("abs", ["NaN", "+inf", "+inf", "+0", "+0"]),
        ("neg", ["NaN", "-inf", "+inf", "+0", "-0"]),
        ("tanh", ["NaN", "finite", "finite", "-0", "+0"]),
        ("erf", ["NaN", "finite", "finite", "-0", "+0"]),
        ("sin", ["NaN", "NaN", "NaN", "-0", "+0"]),
        ("exp", ["NaN", "+inf", "+0", "finite", "finite"]),
        ("sigmoid", ["NaN", "finite", "+0", "finite", "finite"]),
        ("cube", ["NaN", "+inf", "-inf", "-0", "+0"]),
        ("square", ["NaN", "+inf", "+inf", "+0", "+0"]),
    ],
)
def test_unary_special_values(fn: str, want: list[str]) -> None:
    ev = _ref([_un(fn)], [NAN, INF, -INF, -0.0, 0.0])
    assert _names(ev) == want
    if fn == "tanh":  # tanh(+-inf) = +-1 exactly, within the bound
        assert list(ev.v[1:3]) == [1.0, -1.0]


def test_guards_follow_their_source_spelling() -> None:
    x = [NAN, -INF, INF, -0.0]
    # where(x > c, x, c): NaN > c is false, so NaN gives c (the old reference said NaN)
    w = _ref([_un("log", "where", 1.0)], x)
    assert _names(w) == ["+0", "+0", "+inf", "+0"]  # log(1) = +0, log(inf) = inf
    m = _ref([_un("log", "max", 1.0)], x)
    assert _names(m)[:3] == ["NaN", "+0", "+inf"]
    a = _ref([_un("rsqrt", "abs", 0.5)], x)  # 1/sqrt(|x| + 0.5)
    assert _names(a)[:3] == ["NaN", "+0", "+0"]


def test_arithmetic_signed_zeros_and_infinities() -> None:
    x = [-3.0, 3.0, INF, -0.0, 2.0, -0.0]
    assert _names(_ref([_bin("mul", V0, ("c", 0.0))], x)) == ["-0", "+0", "NaN", "-0", "+0", "-0"]
    assert _names(_ref([_bin("sub", V0, V0)], x)) == ["+0", "+0", "NaN", "+0", "+0", "+0"]
    assert _names(_ref([_bin("add", V0, ("c", -0.0))], x)) == [
        "finite",
        "finite",
        "+inf",
        "-0",
        "finite",
        "-0",
    ]
    d = [2.0, 2.0, 2.0, 2.0, INF, -INF]  # (an input with range [1, 2] and infinities)
    assert _names(_ref([_bin("div", V0, V1)], x, d, lohi=(1.0, 2.0))) == [
        "finite",
        "finite",
        "+inf",
        "-0",
        "+0",
        "+0",
    ]
    # inf + (an inexact but certainly finite value) is certainly inf
    ev = _ref([_un("exp"), _bin("add", ("v", 2), V1)], [1.0, 2.0, 3.0], [INF, -INF, 1.0])
    assert _names(ev) == ["+inf", "-inf", "finite"] and not ev.xs()[2]


def test_compare_where_and_nan_test() -> None:
    x = [NAN, 1.0, -INF, -0.0]
    ne = _ref(
        [Node("compare", (V0, V0), (("pred", "ne"),)), Node("where", (("v", 1), ("c", 5.0), V0))], x
    )
    assert list(ne.v) == [5.0, 1.0, -INF, 0.0] and _names(ne)[2:] == ["-inf", "-0"]
    lt = _ref(
        [
            Node("compare", (V0, ("c", INF)), (("pred", "lt"),)),
            Node("cast", (("v", 1),), (("form", 0), ("to", "float32"))),
        ],
        x,
    )
    assert list(lt.v) == [0.0, 1.0, 1.0, 1.0] and lt.xs().all()


def test_masked_softmax_with_minus_inf() -> None:
    """where(x > 0, x, -inf) then softmax: masked entries +0, a fully masked row NaN."""
    p = Program(
        (Input((2, 4), "float32", -1.0, 1.0),),
        (
            Node("compare", (V0, ("c", 0.0)), (("pred", "gt"),)),
            Node("where", (("v", 1), V0, ("c", -INF))),
            Node("softmax", (("v", 2),)),
        ),
        (3,),
    )
    x = np.array([[1.0, -1.0, 2.0, -0.5], [-1.0, -2.0, -0.0, -3.0]], np.float32)
    ((ev, _),) = fuzz.reference(p, [x])
    e = np.exp(np.array([1.0, 2.0]) - 2.0)
    np.testing.assert_allclose(ev.v[0, [0, 2]], e / e.sum())
    assert [_names(EV(r, e_, x_)) for r, e_, x_ in zip(ev.v, ev.e, ev.xs(), strict=True)] == [
        ["finite", "+0", "finite", "+0"],
        ["NaN"] * 4,
    ]


def test_reductions_nan_inf_and_zero_signs() -> None:
    def red(fn: str, *rows: list[float]) -> EV:
        p = Program(
            (Input((len(rows), len(rows[0])), "float32", -1.0, 1.0),),
            (Node("reduce", (V0,), (("axis", -1), ("fn", fn), ("keepdim", False))),),
            (1,),
        )
        ((ev, _),) = fuzz.reference(p, [np.asarray(rows, np.float32)])
        return ev

    rows = (
        [1.0, NAN, 2.0],
        [INF, -INF, 1.0],
        [INF, 1.0, 2.0],
        [-0.0, -0.0, -0.0],
        [-0.0, 0.0, -0.0],
    )
    assert _names(red("max", *rows)) == ["NaN", "+inf", "+inf", "-0", "+0"]
    assert _names(red("min", *rows)) == ["NaN", "-inf", "finite", "-0", "-0"]
    # sum: NaN and inf+-inf give NaN; inf + finite is inf; all -0 is left undefined (?)
    s = red("sum", *rows)
    assert _names(s) == ["NaN", "NaN", "+inf", "?", "+0"]
    assert s.v[3] == 0 and np.isfinite(s.e[3])  # any zero passes there
    assert _names(red("mean", *rows))[:3] == ["NaN", "NaN", "+inf"]


def test_fp16_cast_at_the_overflow_edge() -> None:
    ev = _ref(
        [Node("cast", (V0,), (("form", 0), ("to", "float16")))],
        [65504.0, 65519.99609375, 65520.0, -65520.0, 2.0**-25, -(2.0**-26)],
    )
    assert list(ev.v[:4]) == [65504.0, 65504.0, INF, -INF]
    assert _names(ev) == ["finite", "finite", "+inf", "-inf", "+0", "-0"]
    # an inexact value that may or may not reach 65520 is not checked (infinite bound)
    p = Program(
        (Input((1, 2), "float32", -1.0, 1.0),),
        (
            Node("reduce", (V0,), (("axis", -1), ("fn", "sum"), ("keepdim", True))),
            Node("cast", (("v", 1),), (("form", 0), ("to", "float16"))),
        ),
        (2,),
    )
    ((near, _),) = fuzz.reference(p, [np.array([[65000.0, 519.998]], np.float32)])
    assert near.v[0, 0] == 65504.0 and near.e[0, 0] == INF


def test_compare_checks_classes_exactly() -> None:
    ref = EV(np.array([NAN, INF, -0.0, 0.0, 1.0]), np.zeros(5), np.ones(5, bool))
    good = ref.v.astype(np.float32)
    assert fuzz.compare(good, ref, "float32", 4)[0] is None
    for i, wrong in ((0, 0.0), (1, -INF), (2, 0.0), (3, -0.0), (1, 3e38)):
        bad = good.copy()
        bad[i] = wrong
        msg = fuzz.compare(bad, ref, "float32", 4)[0]
        assert msg is not None and "special values wrong" in msg and f"({i},)" in msg, msg
    loose = EV(ref.v, np.array([INF, INF, 1e-3, 1e-3, 1e-3]), np.zeros(5, bool))
    flipped = good.copy()
    flipped[2:4] = [0.0, -0.0]
    assert fuzz.compare(flipped, loose, "float32", 4)[0] is None


def test_stages_agree_bit_for_bit_on_nan_and_zero_signs() -> None:
    from pyasc_mlir.fuzzing.verdicts import compare_stages

    ref = EV(np.array([1.0, 0.0, 2.0]), np.full(3, 1e-6))
    a = np.array([1.0, 0.0, 2.0], np.float32)
    assert compare_stages(a, a.copy(), ref, "float32", 1) is None
    msg = compare_stages(a, np.array([1.0, -0.0, 2.0], np.float32), ref, "float32", 1)
    assert msg is not None and "sign" in msg and "(1,)" in msg
    msg = compare_stages(np.array([NAN, 0, 2], np.float32), a, ref, "float32", 1)
    assert msg is not None and "NaN-ness" in msg


def test_sprinkle_replaces_a_few_elements_deterministically() -> None:
    x = np.linspace(-1, 1, 512)
    y = sprinkle(x, "nan", "float32", np.random.default_rng(3))
    assert int(np.isnan(y).sum()) == 8 and np.array_equal(y[~np.isnan(y)], x[~np.isnan(y)])
    z = sprinkle(x, "zero", "float16", np.random.default_rng(3))
    assert 0 < int(np.signbit(z[z == 0]).sum()) < 64
    e = sprinkle(x, "edge", "float32", np.random.default_rng(1))
    assert np.abs(e).max() >= 65504
    assert np.array_equal(
        sprinkle(x, "mix", "float16", np.random.default_rng(5)),
        sprinkle(x, "mix", "float16", np.random.default_rng(5)),
        equal_nan=True,
    )


def test_failures_are_counted_by_class() -> None:
    from pyasc_mlir.fuzzing.report import failure_class

    wrong = fuzz.Verdict(
        "mismatch",
        "cpu",
        "cpu output 0: 1 of 9 special values wrong; first at (0,): got 1, expected NaN",
    )
    assert failure_class(wrong) == "mismatch at cpu: expected NaN, got finite"
    sign = fuzz.Verdict(
        "mismatch",
        "tile~cpu",
        "tile vs cpu output 0: 3 of 9 elements differ in sign; first at (1,): +0 vs -0",
    )
    assert failure_class(sign) == "mismatch at tile~cpu: sign (+0 vs -0)"
    gxx = fuzz.Verdict(
        "crash",
        "build",
        "CompileError: g++ failed\nkernels.cpp:7:3: error: 'inff' was not declared in this scope",
    )
    assert "non-finite constant" in failure_class(gxx)
    value = fuzz.Verdict("mismatch", "tile", "tile output 0: 1 of 9 elements outside the bound")
    assert failure_class(value) == "mismatch:tile: value out of bound"
