"""Autotuning (``pyasc_mlir.autotune``, ``@jit(autotune=True)``, ``pyasc tune``) and the pinned
``tiling=`` knobs of ``compile`` / ``asc-tile``.

Every test runs against a private cache folder that shares only the precompiled runtime header
with the default cache, so "the first call searches" holds on every run.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from helpers import softmax_ref

import pyasc_mlir as pa
from pyasc_mlir import autotune, driver
from pyasc_mlir.cost_model import estimate
from pyasc_mlir.emitter import emit_kernel_source, kernels, tiling_fields
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.pipeline import lower
from pyasc_mlir.runtime import cpu
from pyasc_mlir.tools.cli import main as cli_main


def softmax(x):  # here, not helpers.softmax: the pin errors are located in this file
    e = pa.exp(x - x.max(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def rmsnorm(x, w):
    return x * pa.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w


def scale(x):
    return x * 2.0


def np_rmsnorm(x, w):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w.astype(np.float64)


def swiglu(x, w, bg, v, bu):
    g = pa.matmul(x, w) + bg
    return g * pa.sigmoid(g) * (pa.matmul(x, v) + bu)


def linear_gelu(x, w, b):
    h = pa.matmul(x, w) + b
    return 0.5 * h * (1.0 + pa.erf(h * 0.7071067811865476))


def centered_linear(x, w):
    return pa.matmul(x - x.max(-1, keepdim=True), w)  # a vector kernel, then a Cube kernel


def np_swiglu(x, w, bg, v, bu):
    x, w, bg, v, bu = (a.astype(np.float64) for a in (x, w, bg, v, bu))
    g = x @ w + bg
    return g / (1.0 + np.exp(-g)) * (x @ v + bu)


SM32 = [pa.TensorDesc((33, 513), "float32")]
RMS16 = [pa.TensorDesc((7, 1000), "float16"), pa.TensorDesc((1000,), "float16")]


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("tune_cache")
    shared = cpu.default_cache_dir() / "cpu" / "pch"
    shared.mkdir(parents=True, exist_ok=True)
    (root / "cpu").mkdir()
    (root / "cpu" / "pch").symlink_to(shared, target_is_directory=True)
    return root


@pytest.fixture(autouse=True)
def private_cache(cache_root, monkeypatch):
    monkeypatch.setenv("PYASC_CACHE_DIR", str(cache_root))
    monkeypatch.delenv("PYASC_CACHE_DISABLE", raising=False)
    driver.clear_memory_cache()
    autotune._MEMORY.clear()
    yield
    autotune._MEMORY.clear()


@pytest.fixture(scope="module")
def sm_result(cache_root):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYASC_CACHE_DIR", str(cache_root))
        return autotune.tune(softmax, SM32, cache=False, workers=2, progress=False)


def modeled(fn, descs, knobs):
    stages, _, _ = lower(
        fn,
        descs,
        fn.__name__,
        "910B2",
        knobs.buffers == 2,
        tile=knobs.tile,
        block_dim=knobs.block_dim,
        tile_m=knobs.tile_m,
        tile_n=knobs.tile_n,
    )
    return stages, sum(e.time_us for e in estimate(stages["ascendc"]))


def modeled_work(fn, descs, knobs):
    """The modeled pipeline time without the least-kernel-time floor (``work_us``)."""
    stages, _ = modeled(fn, descs, knobs)
    return sum(e.work_us for e in estimate(stages["ascendc"]))


def test_winner_is_the_cost_model_minimum(sm_result):
    ok = [c for c in sm_result.candidates if c.ok]
    assert len(ok) >= 6
    assert sm_result.winner.modeled_us == min(c.modeled_us for c in ok)
    # The ranking is by modeled time, and each figure is what the model gives that kernel.
    assert [c.modeled_us for c in ok] == sorted(c.modeled_us for c in ok)
    for c in (ok[0], ok[-1]):
        assert modeled(softmax, SM32, c.knobs)[1] == pytest.approx(c.modeled_us)
    for knob in ("tile", "block_dim", "buffers"):  # the search varies every knob
        assert len({getattr(c.knobs, knob) for c in ok}) >= 2, knob
    assert sm_result.winner.modeled_us <= sm_result.default.modeled_us


def test_the_cost_model_reacts_to_every_knob():
    # 257 rows over 43 cores: 6 rows per core, 3 tiles of 2 rows, so buffering can overlap.
    # The kernel is below the least kernel time (min_kernel_us), so the knobs show in the
    # pipeline time under that floor (work_us), which the autotuner breaks ties with.
    descs = [pa.TensorDesc((257, 513), "float32")]
    K = autotune.Knobs
    times = {
        k: modeled_work(softmax, descs, k)
        for k in (K(2, 43, 2), K(2, 43, 1), K(3, 43, 2), K(2, 22, 2))
    }
    assert len({round(t, 6) for t in times.values()}) == 4, times
    assert times[K(2, 43, 2)] < times[K(2, 43, 1)]  # double buffering overlaps MTE2/V/MTE3
    assert times[K(2, 43, 2)] < times[K(2, 22, 2)]  # more cores, less work each


def test_pinned_tiling_reproduces_the_winners_kernel(sm_result):
    w = sm_result.winner.knobs
    op = pa.compile(softmax, SM32, tiling=w.pin)
    stages, _ = modeled(softmax, SM32, w)
    assert (op.directory / "kernel.cpp").read_text() == emit_kernel_source(stages["ascendc"])
    assert op.info["tiling"]["block_dim"] == w.block_dim
    assert op.info["tiling"]["tile_units"] == w.tile
    x = np.random.default_rng(1).standard_normal((33, 513)).astype(np.float32)
    np.testing.assert_allclose(op(x), softmax_ref(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_winner_and_other_candidates_are_correct_on_tail_shapes():
    res = autotune.tune(rmsnorm, RMS16, cache=False, workers=1, progress=False)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((7, 1000)).astype(np.float16)
    w = rng.standard_normal(1000).astype(np.float16)
    ref = np_rmsnorm(x, w)
    op = pa.compile(rmsnorm, RMS16, tiling=res.winner.knobs.pin)  # CPU build of the winner
    np.testing.assert_allclose(op(x, w).astype(np.float64), ref, rtol=2e-2, atol=2e-2)
    others = [c for c in res.candidates[1:] if c.ok and c.knobs != res.default.knobs]
    picks = {others[-1].knobs, next(c.knobs for c in others if c.knobs.buffers == 1)}
    for knobs in picks:  # non-default kernels, run in the ascendc-level interpreter
        stages, _ = modeled(rmsnorm, RMS16, knobs)
        (k,) = kernels(stages["ascendc"])
        assert tiling_fields(k)["block_dim"] == knobs.block_dim
        (y,) = run_function(stages["ascendc"], "rmsnorm", [x, w])
        np.testing.assert_allclose(np.asarray(y, np.float64), ref, rtol=2e-2, atol=2e-2)


def test_second_call_hits_the_cache_without_searching(monkeypatch):
    descs = [pa.TensorDesc((7, 129), "float16")]  # a signature no other test tunes
    first = autotune.tune(softmax, descs, workers=1, progress=False)
    assert not first.from_cache
    autotune._MEMORY.clear()  # as in a new process: read from <cache>/tune/<key>.json

    def no_search(knobs):
        raise AssertionError("searched although the winner is cached")

    monkeypatch.setattr(autotune, "_cost", no_search)
    second = autotune.tune(softmax, descs, workers=1, progress=False)
    assert second.from_cache
    assert second.winner.knobs == first.winner.knobs
    assert second.winner.modeled_us == first.winner.modeled_us


def test_jit_autotune_prints_the_pin_once_and_runs_the_winner(capsys, monkeypatch):
    x = np.random.default_rng(3).standard_normal((9, 257)).astype(np.float32)
    f = pa.jit(autotune=True)(softmax)
    np.testing.assert_allclose(f(x), softmax_ref(x.astype(np.float64)), rtol=1e-5, atol=1e-6)
    err = capsys.readouterr().err
    assert "autotune softmax([9, 257] float32)" in err
    assert "pin it with @pa.jit(tiling={" in err
    pin = err.split("@pa.jit(tiling=")[1].split(")")[0]
    assert f.compile(x).info["tiling"]["block_dim"] == eval(pin)["block_dim"]
    monkeypatch.setattr(autotune, "_cost", None)  # any search would fail
    autotune._MEMORY.clear()
    driver.clear_memory_cache()
    g = pa.jit(autotune=True)(softmax)
    np.testing.assert_allclose(g(x), softmax_ref(x.astype(np.float64)), rtol=1e-5, atol=1e-6)
    assert capsys.readouterr().err == ""


def test_cli_prints_the_table_and_the_hint(tmp_path, capsys):
    src = tmp_path / "ops.py"
    src.write_text(
        textwrap.dedent("""
        import pyasc_mlir as pa

        def scaled_softmax(x):
            e = pa.exp(x * 0.5 - (x * 0.5).max(-1, keepdim=True))
            return e / e.sum(-1, keepdim=True)
    """)
    )
    rc = cli_main(
        [
            "tune",
            f"{src}::scaled_softmax",
            "--shape",
            "33,513",
            "--dtype",
            "float32",
            "--measure",
            "1",
            "--workers",
            "2",
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["rank", "modeled", "us"]
    assert "CPU-build us" in lines[0]
    winner = next(ln for ln in lines if ln.rstrip().endswith("winner") or "winner," in ln)
    assert float(winner.split()[-3 if "automatic" not in winner else -4]) > 0  # measured us
    assert "MODELED" in out and 'pin it with @pa.jit(tiling={"tile": ' in out


def test_bad_pins_give_located_errors():
    with pytest.raises(pa.PyAscCompileError) as e:
        pa.compile(softmax, SM32, tiling={"tile": 34})  # 33 rows
    assert "tile=34 is out of range" in str(e.value) and "from 1 to 33" in str(e.value)
    assert e.value.loc is not None and e.value.loc.file == __file__
    assert "e = pa.exp(" in str(e.value)  # the operator's source line
    with pytest.raises(
        pa.PyAscCompileError,
        match=r"tile=20 \(rows per tile\) needs \d+ "
        r"bytes of UB(.|\n)*largest tile that fits is 1;",
    ):
        pa.compile(softmax, SM32, tiling={"tile": 20})
    with pytest.raises(pa.PyAscCompileError, match="block_dim=49 is out of range"):
        pa.compile(softmax, SM32, tiling={"block_dim": 49})
    with pytest.raises(
        pa.PyAscCompileError,
        match=r"elements per chunk of its 16386-element "
        r"rows, a multiple of 128 from 128 to 16512",
    ):  # coalesced to one row
        pa.compile(scale, [pa.TensorDesc((2, 8193), "float32")], tiling={"tile": 100})
    for bad, msg in (
        ({"tiles": 3}, "unknown tiling key 'tiles'"),
        ({"tile": -1}, "not an integer >= 0"),
        ({"buffers": 3}, "is not 1 or 2"),
    ):
        with pytest.raises(pa.PyAscUsageError, match=msg) as e:
            pa.compile(softmax, SM32, tiling=bad)
        assert e.value.loc is not None and e.value.loc.file == __file__
    with pytest.raises(pa.PyAscUsageError, match="cannot also take a pinned tiling") as e:
        pa.jit(autotune=True, tiling={"tile": 1})(softmax)
    assert e.value.loc is not None and e.value.loc.file == __file__


# -- Cube (matmul + epilogue) kernels -----------------------------------------------------------
def _descs(dtype, *shapes):
    return [pa.TensorDesc(s, dtype) for s in shapes]


SW16 = _descs("float16", (33, 100), (100, 17), (17,), (100, 17), (17,))  # tails on M, K, N


def _rand(descs, seed):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(d.shape) * 0.3).astype(d.np_dtype) for d in descs]


def test_swiglu_tunes_its_cube_knobs_and_the_pinned_winner_is_correct():
    res = autotune.tune(swiglu, SW16, cache=False, workers=2, progress=False)
    ok = [c for c in res.candidates if c.ok]
    assert res.winner.modeled_us == min(c.modeled_us for c in ok)
    assert [c.modeled_us for c in ok] == sorted(c.modeled_us for c in ok)
    assert {c.mode for c in ok} == {"cube"} and res.default.cube_shape == [1, 33, 17]
    for knob in ("tile_m", "block_dim", "buffers"):  # tile_n: 17 columns leave only 32
        assert len({getattr(c.knobs, knob) for c in ok}) >= 2, knob
    for c in (ok[0], ok[-1]):
        assert modeled(swiglu, SW16, c.knobs)[1] == pytest.approx(c.modeled_us)
    w = res.winner.knobs
    op = pa.compile(swiglu, SW16, tiling=w.pin)
    stages, t = modeled(swiglu, SW16, w)
    assert t == pytest.approx(res.winner.modeled_us)
    assert (op.directory / "kernel.cpp").read_text() == emit_kernel_source(stages["ascendc"])
    fields = op.info["tiling"]
    assert fields["block_dim"] == w.block_dim
    if w.tile_m:  # 0: the automatic block (its halving can leave a height that is not pinnable)
        assert (fields["tile_m"], fields["tile_n"]) == (w.tile_m, w.tile_n)
    arrays = _rand(SW16, 4)
    np.testing.assert_allclose(
        op(*arrays).astype(np.float64), np_swiglu(*arrays), rtol=2e-2, atol=2e-2
    )
    loser = ok[-1].knobs  # another block size, run in the ascendc-level interpreter
    (y,) = run_function(modeled(swiglu, SW16, loser)[0]["ascendc"], "swiglu", arrays)
    np.testing.assert_allclose(np.asarray(y, np.float64), np_swiglu(*arrays), rtol=2e-2, atol=2e-2)


def test_the_cost_model_charges_block_re_reads():
    # Every [tile_m, tile_n] block reads its A panel and its B panel: M*K*ceil(N/tile_n) +
    # K*N*ceil(M/tile_m) elements in all, so small blocks move more bytes and take longer.
    descs = _descs("float16", (128, 384), (384, 1536), (1536,))
    K = autotune.Knobs
    est = {}
    for m, n in ((16, 32), (32, 64), (64, 64)):
        stages, _ = modeled(linear_gelu, descs, K(0, 24, 2, m, n))
        (e,) = estimate(stages["ascendc"])
        est[m, n] = e
    assert est[16, 32].time_us > est[64, 64].time_us
    assert est[16, 32].gm_bytes > est[32, 64].gm_bytes > est[64, 64].gm_bytes
    assert est[32, 64].time_us != est[64, 64].time_us


def test_mixed_vector_and_cube_operator_tunes_both_knob_sets():
    descs = _descs("float32", (33, 100), (100, 17))
    res = autotune.tune(centered_linear, descs, cache=False, workers=2, progress=False)
    ok = [c for c in res.candidates if c.ok]
    assert res.default.mode == "rows+cube"
    assert res.winner.modeled_us == min(c.modeled_us for c in ok)
    for knob in ("tile", "tile_m", "block_dim", "buffers"):
        assert len({getattr(c.knobs, knob) for c in ok}) >= 2, knob
    assert all(c.knobs.block_dim <= 24 for c in ok)  # one block_dim: at most the cube cores
    w = res.winner.knobs
    op = pa.compile(centered_linear, descs, tiling=w.pin)
    stages, t = modeled(centered_linear, descs, w)
    assert t == pytest.approx(res.winner.modeled_us)
    x, wt = _rand(descs, 5)
    x64 = x.astype(np.float64)
    ref = (x64 - x64.max(-1, keepdims=True)) @ wt.astype(np.float64)
    np.testing.assert_allclose(op(x, wt), ref, rtol=1e-5, atol=1e-5)


def test_bad_cube_pins_give_located_errors():
    sw32 = _descs("float32", (256, 64), (64, 512), (512,), (64, 512), (512,))
    cases = (
        (
            {"tile_m": 20},
            r"tile_m=20 is not a multiple of 16 \(the Matmul API's baseM\)",
            "pin tile_m=16",
        ),
        ({"tile_n": 8}, r"tile_n=8 is not a multiple of 16", "pin tile_n=16"),
        (
            {"tile_m": 256, "tile_n": 256},
            r"needs 262144 bytes of L0C, but 910B2 has 131072",
            "the largest tile_m that fits L0C with the other size is 128",
        ),
        (
            {"tile_m": 128, "tile_n": 128},
            r"blocks need \d+ bytes of UB with 2 buffer\(s\)",
            "the largest tile_m that fits with tile_n=128 is 64",
        ),
        (
            {"block_dim": 25},
            r"block_dim=25 is out of range: platform 910B2 has 24 cube cores",
            "from 1 to 24",
        ),
    )
    for pin, msg, hint in cases:
        with pytest.raises(pa.PyAscCompileError, match=msg) as e:
            pa.compile(swiglu, sw32, tiling=pin)
        assert hint in (e.value.hint or ""), (pin, e.value.hint)
        assert e.value.loc is not None and e.value.loc.file == __file__
        assert "g = pa.matmul(x, w) + bg" in str(e.value)
    with pytest.raises(pa.PyAscUsageError, match="not an integer >= 0") as e:
        pa.compile(swiglu, sw32, tiling={"tile_n": -16})
    assert e.value.loc is not None and e.value.loc.file == __file__


def test_cli_tunes_a_package_file_with_relative_imports(capsys):
    root = Path(__file__).resolve().parents[1]
    rc = cli_main(
        [
            "tune",
            f"{root}/examples/softmax.py::softmax",
            "--shape",
            "8,1024",
            "--workers",
            "1",
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert "autotune softmax([8, 1024] float16)" in out and "pin it with" in out


@pytest.mark.parametrize("command", ["tune", "profile"])
@pytest.mark.parametrize(
    "extra, words",
    [
        (["--shape", "4,x"], "invalid shape '4,x'"),
        (["--shape", "4,-1"], "invalid shape '4,-1'"),
        (["--shape", "4,8", "--dtype", "int8"], "invalid choice: 'int8'"),
        (["--shape", "4,8", "--const", "foo("], "invalid constant 'foo('"),
    ],
)
def test_cli_bad_arguments_are_usage_errors(command, extra, words, capsys):
    root = Path(__file__).resolve().parents[1]
    with pytest.raises(SystemExit) as e:
        cli_main([command, f"{root}/examples/softmax.py::softmax", *extra])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert f"pyasc {command}: error: " in err and words in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["tune", "profile"])
def test_cli_missing_function_names_the_subcommand(command, capsys):
    root = Path(__file__).resolve().parents[1]
    with pytest.raises(SystemExit) as e:
        cli_main([command, f"{root}/examples/softmax.py::nosuch", "--shape", "4,8"])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert f"pyasc {command}: error: " in err and "has no function 'nosuch'" in err, err
