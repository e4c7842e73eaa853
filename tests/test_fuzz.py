"""The differential fuzzer (``pyasc_mlir.fuzzing``, ``pyasc fuzz``).

* ``test_ci_batch``: the fixed-seed CI batch -- 200 random operators with special values
  (NaN, +-inf, +-0, fp16 subnormals and overflow edge, -inf masks, comparison chains), each
  checked against the NumPy reference at every interpreter stage and on the CPU build (marked
  ``fuzz``; it runs in the default ``python -m pytest -q``; ``-m "not fuzz"`` skips it, and it
  is ``slow``: not in the fast subset ``-m "not slow"``).
* The fuzzer itself: reproducible in its seed, its comparison catches a wrong element / NaN /
  wrong row but accepts fp16 rounding, an injected compiler bug is detected, shrunk and
  written as a regression test that fails while the bug is there and passes once it is gone,
  and the ``pyasc fuzz`` command works end to end.
* Special values: generated (every class, the -inf mask, the NaN test), judged by class (a
  dropped NaN, a wrong zero sign), and an injected NaN-dropping max is caught and shrunk; the
  reference's semantics on hand-written cases are in ``tests/test_fuzz_specials.py``.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from pyasc_mlir import fuzzing as fuzz
from pyasc_mlir.fuzzing import EV, Input, Node, Program
from pyasc_mlir.fuzzing.runner import lower_program

CI_SEED = 20240
CI_PROGRAMS = 120
"""The CI batch (more: ``pyasc fuzz --programs N --seed S``); sized for the suite's budget."""


@pytest.mark.slow
@pytest.mark.fuzz
def test_ci_batch(tmp_path: Path) -> None:
    # one process under pytest-xdist (its workers already use the cores), else up to two
    workers = 1 if os.environ.get("PYTEST_XDIST_WORKER") else min(2, os.cpu_count() or 1)
    report = fuzz.run_fuzz(
        CI_PROGRAMS,
        seed=CI_SEED,
        workers=workers,
        out_dir=tmp_path,
        shrink_budget=60,
        max_shrink=2,
        log=None,
        special=True,
    )
    print(report.summary())
    assert report.programs == CI_PROGRAMS
    assert report.ok >= CI_PROGRAMS // 2, report.summary()  # rejections stay a minority
    if report.failed:
        first = next(path for _, _, path in report.failures if path is not None)
        pytest.fail(
            f"{report.summary()}\n\nfirst regression test ({first.name}, ready to "
            f"paste into tests/):\n\n{first.read_text()}"
        )


# ----------------------------------------------------------------------------- the generator


def test_generation_is_reproducible_in_the_seed() -> None:
    a = fuzz.generate(fuzz.Chunk(5, 0, 4))
    b = fuzz.generate(fuzz.Chunk(5, 0, 4))
    c = fuzz.generate(fuzz.Chunk(6, 0, 4))
    assert [p.to_json() for p in a] == [p.to_json() for p in b]
    assert [p.source() for p in a] == [p.source() for p in b]
    assert [p.key for p in a] != [p.key for p in c]
    assert len({p.key for p in a}) == 4  # independent programs, not mutations of one
    for p in a:
        assert Program.from_json(p.to_json()) == p
        assert 1 <= len(p.nodes) <= 15 + 1  # (+1: a returned mask is cast)
    sizes = {len(fuzz.generate_one(fuzz.Spec(5, i, "910B2")).nodes) for i in range(40)}
    assert min(sizes) == 1 and max(sizes) >= 15


def test_programs_cover_the_frontend() -> None:
    progs = [fuzz.generate_one(fuzz.Spec(11, i, "910B2")) for i in range(60)]
    kinds = {n.kind for p in progs for n in p.nodes}
    assert kinds >= {
        "unary",
        "binary",
        "compare",
        "where",
        "cast",
        "reduce",
        "reshape",
        "softmax",
        "layernorm",
        "logsumexp",
        "logic",
    }
    fns = {n.p("fn") for p in progs for n in p.nodes if n.kind in ("unary", "binary")}
    assert fns >= {"exp", "log", "rsqrt", "sqrt", "sigmoid", "tanh", "erf", "div", "maximum"}
    ranks = {len(p.inputs[0].shape) for p in progs}
    assert ranks == {1, 2, 3, 4}
    assert {i.dtype for p in progs for i in p.inputs} == {"float16", "float32"}
    assert any(len(i.shape) < len(p.inputs[0].shape) for p in progs for i in p.inputs)


# ----------------------------------------------------------------------------- the comparison


def _ev(v: list[float], e: float) -> EV:
    a = np.asarray(v, np.float64)
    return EV(a, np.full(a.shape, e))


def test_compare_accepts_rounding_and_catches_real_errors() -> None:
    ref = _ev([1.0, 2.0, 3.0001, 65519.0], 0.0)
    ok16 = ref.v.astype(np.float16)  # exact rounding of the reference: accepted
    assert fuzz.compare(ok16, ref, "float16", 4)[0] is None
    bad = ok16.copy()
    bad[1] = np.float16(2.002)  # one fp16 ulp off an exact value
    msg = fuzz.compare(bad, ref, "float16", 4)[0]
    assert msg is not None and "(1,)" in msg
    nan = ok16.copy()
    nan[0] = np.nan
    assert fuzz.compare(nan, ref, "float16", 4)[0] is not None
    # With an fp32 error bound, only differences within K x bound pass.
    r = _ev([[1.0, 2.0], [3.0, 4.0]], 1e-6)
    close = (r.v + 3e-6).astype(np.float32)
    assert fuzz.compare(close, r, "float32", 4)[0] is None
    rows = r.v[::-1].astype(np.float32)  # rows swapped
    assert fuzz.compare(rows, r, "float32", 4)[0] is not None
    assert "shape" in fuzz.compare(rows.T[:1], r, "float32", 4)[0]


def test_reference_bounds_hold_for_fp32_evaluation() -> None:
    """The error bound covers a plain float32 evaluation of the same ops (K = 1)."""
    p = Program(
        (Input((4, 33), "float32", -15.0, 15.0), Input((33,), "float32", 0.5, 2.0)),
        (
            Node("softmax", (("v", 0),)),
            Node("binary", (("v", 2), ("v", 1)), (("fn", "mul"),)),
            Node("reduce", (("v", 3),), (("axis", -1), ("fn", "var"), ("keepdim", True))),
            Node("unary", (("v", 4),), (("c", 1e-3), ("fn", "log"), ("guard", "abs"))),
        ),
        (5, 3),
        data_seed=3,
    )
    x, w = fuzz.make_inputs(p)
    f = np.float32
    e = np.exp(x - x.max(-1, keepdims=True))
    sm = (e / e.sum(-1, keepdims=True, dtype=f)) * w
    d = sm - sm.mean(-1, keepdims=True, dtype=f)
    var = (d * d).sum(-1, keepdims=True, dtype=f) * f(1 / 33)
    out = np.log(np.abs(var) + f(1e-3))
    (r0, _), (r1, _) = fuzz.reference(p, [x, w])
    assert fuzz.compare(out.astype(np.float32), r0, "float32", 1.0)[0] is None
    assert fuzz.compare(sm.astype(np.float32), r1, "float32", 1.0)[0] is None


# ----------------------------------------------------------------------------- bug detection


def _load(path: Path):  # noqa: ANN202
    spec = importlib.util.spec_from_file_location(f"_fz_regression_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_injected_pass_bug_is_found_shrunk_and_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asc-tile computing ``b - a`` for ``a - b`` is reported as a mismatch, shrunk to a tiny
    program and written as a regression test that fails with the bug and passes without."""
    from pyasc_mlir.dialects import asc
    from pyasc_mlir.passes import kernel_builder

    real = kernel_builder.KernelBuilder._binary

    def swapped_sub(self, t, op):  # noqa: ANN001, ANN202
        real(self, t, op)
        last = t.ix.block.last_op
        if isinstance(last, asc.VBinaryOp) and last.kind.data == "sub":
            lhs, rhs = last.operands[1], last.operands[2]
            last.operands[1], last.operands[2] = rhs, lhs

    monkeypatch.setattr(kernel_builder.KernelBuilder, "_binary", swapped_sub)
    report = fuzz.run_fuzz(
        8,
        seed=1,
        workers=1,
        out_dir=tmp_path,
        shrink_budget=60,
        max_shrink=1,
        log=None,
        special=False,
    )
    assert report.mismatches >= 1, report.summary()
    prog, verdict, path = report.failures[0]
    assert verdict.status == "mismatch" and verdict.where == "tile", verdict
    assert path is not None and path.exists()
    text = path.read_text()
    assert "def test_fz_" in text and "PROGRAM = " in text and "assert_program_ok" in text
    assert len(prog.nodes) <= 2, prog.source()  # shrunk to (nearly) a single subtraction
    test = getattr(_load(path), f"test_{prog.name}")
    with pytest.raises(AssertionError, match="tile"):
        test()
    monkeypatch.setattr(kernel_builder.KernelBuilder, "_binary", real)
    test()  # the bug is gone: the regression test passes


def test_cpu_only_divergence_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong CPU build (the emitted ``Max`` printed as ``Min``) is caught although every
    interpreter stage is right, and its regression test fails."""
    import re

    from pyasc_mlir import emitter

    real = emitter.emit_kernel_source
    monkeypatch.setattr(
        emitter, "emit_kernel_source", lambda m: re.sub(r"(?<![A-Za-z])Max\(", "Min(", real(m))
    )
    p = Program(
        (Input((4, 33), "float32", -1.0, 1.0), Input((4, 33), "float32", -1.0, 1.0)),
        (Node("binary", (("v", 0), ("v", 1)), (("fn", "maximum"),)),),
        (2,),
        "910B2",
        True,
        5,
    )
    (v,) = fuzz.check_programs([p])
    assert v.status == "mismatch" and v.where == "cpu", v
    path = fuzz.write_regression_test(p, v, tmp_path, "test")
    test = getattr(_load(path), f"test_{p.name}")
    with pytest.raises(AssertionError, match="cpu"):
        test()


@pytest.mark.slow
def test_cli_runs_a_small_batch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pyasc_mlir.tools.cli import main

    rc = main(
        [
            "fuzz",
            "--programs",
            "3",
            "--seed",
            "7",
            "--workers",
            "1",
            "--no-special",
            "--out",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "special values off" in out
    assert "3 programs in" in out and "0 mismatches, 0 crashes" in out
    assert main(["fuzz", "--show", "2", "--seed", "7"]) == 0
    assert "def fz_" in capsys.readouterr().out
    assert main(["fuzz", "--show", "2", "--seed", "7", "--no-special"]) == 0
    plain = capsys.readouterr().out
    assert main(["fuzz", "--show", "2", "--seed", "7", "--special-values"]) == 0
    assert capsys.readouterr().out != plain  # special values change the programs


# ----------------------------------------------------------------------------- special values


def test_special_value_programs_are_generated_and_valid() -> None:
    """With special values, inputs carry every class, constants include NaN / +-inf / -0,
    the -inf mask idiom and comparison chains (the NaN test ``x != x``) appear, every program
    lowers (or is a documented rejection), and without them a seed keeps its programs."""
    from pyasc_mlir.fuzzing.runner import lower_only
    from pyasc_mlir.fuzzing.specials import INPUT_CLASSES

    progs = [fuzz.generate_one(fuzz.Spec(11, i, "910B2", 15, True)) for i in range(40)]
    assert {i.special for p in progs for i in p.inputs} >= set(INPUT_CLASSES)
    consts = [a[1] for p in progs for n in p.nodes for a in n.args if a[0] == "c"]
    assert any(math.isnan(c) for c in consts) and -math.inf in consts and math.inf in consts
    assert any(c == 0 and math.copysign(1, c) < 0 for c in consts)
    assert any(n.kind == "where" and ("c", -math.inf) in n.args for p in progs for n in p.nodes)
    assert any(n.kind == "compare" and n.args[0] == n.args[1] for p in progs for n in p.nodes)
    assert any('float("-inf")' in p.source() for p in progs)
    for p in progs[:12]:
        v = lower_only(p)
        assert v.status in ("ok", "rejected"), (v, p.source())
    plain = [fuzz.generate_one(fuzz.Spec(11, i, "910B2")) for i in range(4)]
    assert all(not i.special for p in plain for i in p.inputs)
    assert [p.key for p in plain] == [
        fuzz.generate_one(fuzz.Spec(11, i, "910B2", 15, False)).key for i in range(4)
    ]
    assert '"special"' not in plain[0].to_json()  # keys of programs without specials kept


def test_a_program_of_several_kernels_is_checked_on_the_cpu_build() -> None:
    """Two unrelated results (a layernorm over 16 elements, |x| over rows of 513) compile to
    two kernels since asc-fuse splits unrelated row lengths; the batch builds both entries
    and the CPU build runs the launch plan (the runner assumed one kernel: a crash)."""
    p = Program(
        (
            Input((1, 2, 16, 513), "float32", -15.0, 15.0),
            Input((16, 1), "float32", -10000.0, 10000.0, "normal", "nan"),
        ),
        (
            Node("unary", (("v", 0),), (("c", 0.0), ("fn", "abs"), ("form", 2), ("guard", "none"))),
            Node("reshape", (("v", 1),), (("form", 1), ("shape", (16,)))),
            Node("layernorm", (("v", 3),), (("eps", 0.001),)),
        ),
        (4, 2),
        "910B4",
        True,
        423,
    )
    lowered = lower_program(p)
    assert not isinstance(lowered, fuzz.Verdict) and len(lowered.kernel_names) == 2
    (v,) = fuzz.check_programs([p])
    assert v.status == "ok", v  # every stage and the CPU build match the reference


def test_special_value_program_is_judged_by_class() -> None:
    """``x - x`` on an input with NaN, +-inf, +-0, subnormals and edge values: +0 where x is
    finite, NaN where it is not -- checked exactly at every stage and on the CPU build; a
    stage output with a -0 or a dropped NaN is caught."""
    p = Program(
        (Input((16, 33), "float32", -1.0, 1.0, "uniform", "mix"),),
        (Node("binary", (("v", 0), ("v", 0)), (("fn", "sub"),)),),
        (1,),
        "910B2",
        True,
        5,
    )
    (x,) = fuzz.make_inputs(p)
    assert np.isnan(x).any() and np.isinf(x).any() and (np.signbit(x) & (x == 0)).any()
    ((ref, dt),) = fuzz.reference(p, [x])
    finite = np.isfinite(x)
    assert ref.xs().all() and np.isnan(ref.v[~finite]).all()
    assert (ref.v[finite] == 0).all() and not np.signbit(ref.v[finite]).any()
    (v,) = fuzz.check_programs([p])
    assert v.status == "ok", v
    got = np.where(finite, 0.0, np.nan).astype(np.float32)
    assert fuzz.compare(got, ref, dt, 4)[0] is None
    neg = got.copy()
    neg[np.argmax(finite)] = -0.0
    assert "got -0, expected +0" in fuzz.compare(neg, ref, dt, 4)[0]
    dropped = np.zeros_like(got)
    assert "got +0, expected NaN" in fuzz.compare(dropped, ref, dt, 4)[0]


def _drops_nan(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tile interpreter's max / min / relu become NaN-dropping (``fmax``: the other
    operand wins), and ``asc-tile`` emits no NaN guards (with them the emitted kernel gives
    the defined result whatever the instructions do with NaN, so the injected bug would not
    show: that is what tests/test_nan_guards.py checks)."""
    from pyasc_mlir.interpreter import tile_vector
    from pyasc_mlir.passes import nan_guard

    monkeypatch.setattr(nan_guard, "NanGuards", lambda builder: None)

    # NaN-dropping only: the signs of zero stay right, so what a program exposes is the NaN
    for table, kind in [(tile_vector.BINARY, k) for k in ("max", "min")] + [
        (tile_vector.SCALAR, k) for k in ("maxs", "mins")
    ]:
        monkeypatch.setitem(table, kind, _nan_dropping(table[kind]))
    relu = tile_vector.UNARY["relu"]
    monkeypatch.setitem(
        tile_vector.UNARY,
        "relu",
        lambda x, out: np.copyto(out, np.where(np.isnan(x), 0, relu(x, out=out))),
    )


def _nan_dropping(f):
    def dropped(a, b, out):
        right = f(a, b, out=np.empty_like(out))
        np.copyto(out, np.where(np.isnan(a), b, np.where(np.isnan(b), a, right)), casting="unsafe")
        return out

    return dropped


def test_injected_nan_dropping_max_is_caught_and_shrunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A NaN-dropping ``maximum`` in the tile interpreter is reported as a special-value
    mismatch at ``tile`` on a generated program and shrunk to a few ops that still drop a
    NaN (the tile stage only: no g++)."""
    from pyasc_mlir.fuzzing.shrinking import shrink

    _drops_nan(monkeypatch)
    stages = ("tensor", "tile")
    found = None
    for i in range(300):
        spec = fuzz.Spec(3, i, "910B2", 15, True)
        p = fuzz.generate_one(spec)
        if not any(i.special in ("nan", "mix") for i in p.inputs) or not any(
            n.p("fn") in ("maximum", "minimum", "relu") for n in p.nodes
        ):
            continue
        (v,) = fuzz.check_programs([p], stages)
        if v.failed:
            found = (spec, p, v)
            break
    assert found is not None, "no generated program exposed the NaN-dropping max"
    spec, p, v = found
    assert v.status == "mismatch" and v.where == "tile", v
    assert "special values wrong" in v.detail and "expected NaN" in v.detail, v.detail
    best = shrink(spec, v.signature, {p.key: v}, 60)
    assert best is not None
    small, sv = best
    assert sv.where == "tile" and "expected NaN" in sv.detail, sv
    assert len(small.nodes) <= min(6, len(p.nodes) - 1), small.source()
    assert any(n.p("fn") in ("maximum", "minimum", "relu") for n in small.nodes), small.source()
    monkeypatch.undo()
    assert fuzz.check_programs([small], stages)[0].status == "ok"  # no bug, no mismatch
