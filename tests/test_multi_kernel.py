"""Operators that lower to several kernels, on the CPU build: the host function's launches run
in order, intermediates in GM arrays between them (``op.info["launches"]``/``["returns"]``).

Every CPU run here allocates results through a stand-in that fills them with NaN, so a kernel
that leaves an element of an output or of an intermediate unwritten fails the comparison
(``run_cpu`` allocates uninitialised arrays: ``device.aligned_empty``)."""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pytest
from helpers import layernorm_ref, softmax_ref

import pyasc_mlir as pa
from pyasc_mlir import compiled_op, driver
from pyasc_mlir.cost_model import estimate
from pyasc_mlir.errors import CacheWarning

RNG = np.random.default_rng(23)


def _softmax(y):
    e = pa.exp(y - y.max(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def softmax_of_matmul(x, w):
    return _softmax(x @ w)


def transpose_scaled(x):
    return x.T * 2


def matmul_softmax_and_matmul(x, w):
    y = x @ w
    return y, _softmax(y), y


def softmax_and_input(x, w):
    return _softmax(x @ w), x


def layernorm_then_matmul(x, w):
    d = x - x.mean(-1, keepdim=True)
    return (d * pa.rsqrt((d * d).mean(-1, keepdim=True) + 1e-5)) @ w


def row_sums_and_max(x):
    return x.sum(-1), x.max()


def concat_rows(x, y):
    return pa.concat([x, y], 0)


def slice_block(x):
    return x[1:6, 3:]


def _desc(*arrays: np.ndarray) -> list[pa.TensorDesc]:
    return [pa.TensorDesc(a.shape, a.dtype.name) for a in arrays]


@pytest.fixture
def nan_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernel results start as NaN instead of uninitialised memory."""

    def alloc(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        assert np.dtype(dtype).kind == "f", dtype
        return np.full(shape, np.nan, dtype)

    monkeypatch.setattr(compiled_op, "new_output", alloc)


def _no_nan(*arrays: np.ndarray) -> None:
    for i, a in enumerate(arrays):
        assert not np.isnan(a).any(), f"output {i}: element left unwritten"


@pytest.mark.parametrize(
    "dtype,m,n,k",
    [
        ("float32", 1, 513, 1),
        ("float32", 33, 513, 513),
        ("float16", 7, 513, 33),
        ("float16", 513, 513, 7),
    ],
)
def test_softmax_of_matmul(dtype: str, m: int, n: int, k: int, nan_outputs: None) -> None:
    x = RNG.uniform(-1, 1, (m, k)).astype(dtype)
    w = RNG.uniform(-1, 1, (k, n)).astype(dtype)
    op = pa.compile(softmax_of_matmul, _desc(x, w))
    assert op.info["kernels"] == 2 and len(op.info["launches"]) == 2
    got = op(x, w)
    assert got.shape == (m, n) and got.dtype == dtype
    _no_nan(got)
    ref = softmax_ref(x.astype(np.float64) @ w.astype(np.float64))
    tol = 2e-3 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def test_interpreter_agrees_with_the_cpu_build(nan_outputs: None) -> None:
    x = RNG.uniform(-1, 1, (7, 33)).astype(np.float16)
    w = RNG.uniform(-1, 1, (33, 513)).astype(np.float16)
    op = pa.compile(softmax_of_matmul, _desc(x, w))
    cpu = op(x, w)
    for stage in ("tile", "ascendc"):
        (got,) = op.run_stage(stage, x, w)
        np.testing.assert_allclose(got, cpu, rtol=1e-3, atol=1e-4, err_msg=stage)


@pytest.mark.parametrize("dtype,shape", [("float32", (7, 33)), ("float16", (33, 513))])
def test_transpose_then_vector_kernel(
    dtype: str, shape: tuple[int, int], nan_outputs: None
) -> None:
    x = RNG.uniform(-4, 4, shape).astype(dtype)
    op = pa.compile(transpose_scaled, _desc(x))
    assert op.info["kernels"] >= 2  # data movement, then the scaling (f16: casts around it)
    got = op(x)
    np.testing.assert_array_equal(got, x.T * 2)
    np.testing.assert_array_equal(op(x, backend="interp"), got)


def test_intermediate_and_final_value_returned(nan_outputs: None) -> None:
    """``y`` is launch 0's result, read by launch 1 and returned (twice: distinct arrays)."""
    x = RNG.uniform(-1, 1, (7, 33)).astype(np.float32)
    w = RNG.uniform(-1, 1, (33, 513)).astype(np.float32)
    op = pa.compile(matmul_softmax_and_matmul, _desc(x, w))
    assert op.info["kernels"] == 2
    y, s, y2 = op(x, w)
    _no_nan(y, s, y2)
    ref = x.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(s, softmax_ref(ref), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(y2, y)
    assert not np.shares_memory(y, y2)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_returned_input_next_to_multi_kernel_outputs(dtype: str, nan_outputs: None) -> None:
    x = RNG.uniform(-1, 1, (7, 513)).astype(dtype)  # returned x shares the output's space
    w = RNG.uniform(-1, 1, (513, 513)).astype(dtype)
    op = pa.compile(softmax_and_input, _desc(x, w))
    assert op.info["kernels"] == 2
    s, x_out = op(x, w)
    _no_nan(s, x_out)
    np.testing.assert_array_equal(x_out, x)
    assert not np.shares_memory(x_out, x)
    tol = 2e-3 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(
        s, softmax_ref(x.astype(np.float64) @ w.astype(np.float64)), rtol=tol, atol=tol
    )


def test_layernorm_then_matmul(nan_outputs: None) -> None:
    x = RNG.uniform(-2, 2, (33, 513)).astype(np.float16)
    w = RNG.uniform(-1, 1, (513, 7)).astype(np.float16)
    op = pa.compile(layernorm_then_matmul, _desc(x, w))
    first = op.info["launches"][0]
    assert op.info["kernels"] == 2 and first["args"] == [0]  # LayerNorm of x runs first
    assert op.info["tiling"] == first["tiling"] and op.info["block_dim"] == first["block_dim"]
    assert op.info["kernel_args"] == first["args"]
    got = op(x, w)
    _no_nan(got)
    xs = x.astype(np.float64)
    h = layernorm_ref(xs).astype(np.float16)
    ref = h.astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_allclose(got, ref, rtol=2e-2, atol=3e-2)


def test_memory_check_build_runs_every_kernel() -> None:
    x = RNG.uniform(-4, 4, (7, 33)).astype(np.float32)
    op = pa.compile(transpose_scaled, _desc(x))
    with pa.enable_memory_check():
        got = op(x)
    np.testing.assert_array_equal(got, x.T * 2)
    entries = op._cpu_multi[True]
    assert set(entries) == set(op.info["kernel_names"])
    assert all(str(e.so_path) != op.info["library"] for e in entries.values())


def test_load_op_round_trip(tmp_path, nan_outputs: None) -> None:
    x = RNG.uniform(-1, 1, (7, 33)).astype(np.float32)
    w = RNG.uniform(-1, 1, (33, 513)).astype(np.float32)
    op = pa.compile(matmul_softmax_and_matmul, _desc(x, w), output_dir=tmp_path / "op")
    loaded = pa.load_op(tmp_path / "op")
    assert loaded.info["launches"] == op.info["launches"]
    assert loaded.info["returns"] == op.info["returns"]
    launch0, launch1 = op.info["launches"]  # matmul (y, and y again), then softmax(y)
    assert op.info["returns"][0] == launch0["results"][0]["id"] == 2  # ids 0, 1: x, w
    assert launch1["args"] == [2]
    ids = [r["id"] for la in op.info["launches"] for r in la["results"]]
    assert ids == [2, 3, 4] and sorted(op.info["returns"]) == ids
    for a, b in zip(loaded(x, w), op(x, w), strict=True):
        np.testing.assert_array_equal(a, b)


def test_cache_entry_with_bad_launches_is_rebuilt() -> None:
    x = RNG.uniform(-1, 1, (7, 33)).astype(np.float32)
    w = RNG.uniform(-1, 1, (33, 513)).astype(np.float32)
    driver.clear_memory_cache()  # an operator compiled with output_dir may be remembered
    op = pa.compile(matmul_softmax_and_matmul, _desc(x, w))
    info = json.loads((op.directory / "op.json").read_text())
    info["launches"][1]["args"] = [9]  # reads a value no launch has computed
    (op.directory / "op.json").write_text(json.dumps(info))
    driver.clear_memory_cache()
    with pytest.warns(CacheWarning, match="corrupt"):
        again = pa.compile(matmul_softmax_and_matmul, _desc(x, w))
    assert not again.info["cache_hit"] and again.info["launches"][1]["args"] == [2]
    np.testing.assert_array_equal(again(x, w)[1], op(x, w)[1])
    driver.clear_memory_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        assert pa.compile(matmul_softmax_and_matmul, _desc(x, w)).info["cache_hit"]


def test_profiler_records_the_whole_operator() -> None:
    x = RNG.uniform(-1, 1, (7, 33)).astype(np.float16)
    w = RNG.uniform(-1, 1, (33, 513)).astype(np.float16)
    op = pa.compile(softmax_of_matmul, _desc(x, w))
    with pa.profiler() as prof:
        op(x, w)
        op(x, w)
    (row,) = prof.report()
    kernels = estimate(op.stages()["ascendc"], op.info["platform"])
    assert len(kernels) == 2 and row["calls"] == 2
    assert row["modeled_us"] == pytest.approx(sum(k.time_us for k in kernels), abs=1e-3)
    assert row["gm_bytes"] == sum(k.gm_bytes for k in kernels)


def test_dynamic_falls_back_to_static_and_none_dims_are_an_error(nan_outputs: None) -> None:
    w = RNG.uniform(-1, 1, (33, 513)).astype(np.float32)
    fn = pa.jit(softmax_of_matmul, dynamic=True)
    for m in (3, 5):
        x = RNG.uniform(-1, 1, (m, 33)).astype(np.float32)
        np.testing.assert_allclose(
            fn(x, w), softmax_ref(x.astype(np.float64) @ w), rtol=1e-5, atol=1e-6
        )
    ops = [op for v in fn._dyn_ops.values() for op in v]
    assert len(ops) == 2 and not any(op.dynamic for op in ops)
    with pytest.raises(pa.PyAscUsageError, match="dynamic dims .* compiles to 2 kernels") as info:
        pa.compile(
            softmax_of_matmul,
            [pa.TensorDesc((None, 33), "float32"), pa.TensorDesc((33, 513), "float32")],
        )
    assert "test_multi_kernel.py" in str(info.value)


def test_zero_size_dims() -> None:
    w = RNG.uniform(-1, 1, (0, 513)).astype(np.float32)
    op = pa.compile(softmax_of_matmul, _desc(np.zeros((7, 0), np.float32), w))
    np.testing.assert_allclose(
        op(np.zeros((7, 0), np.float32), w), np.full((7, 513), 1 / 513), rtol=1e-6
    )
    op = pa.compile(
        softmax_of_matmul, [pa.TensorDesc((0, 33), "float32"), pa.TensorDesc((33, 513), "float32")]
    )
    assert op(np.zeros((0, 33), np.float32), np.ones((33, 513), np.float32)).shape == (0, 513)


@pytest.mark.parametrize("case", ["reductions", "concat", "slice"])
def test_single_kernel_writes_every_output_element(case: str, nan_outputs: None) -> None:
    """The uninitialised result arrays are safe: these kernels overwrite every NaN."""
    x = RNG.uniform(-1, 1, (9, 33)).astype(np.float16)
    y = RNG.uniform(-1, 1, (4, 33)).astype(np.float16)
    if case == "reductions":
        s, mx = pa.jit(row_sums_and_max)(x)
        _no_nan(s, mx)
        np.testing.assert_allclose(s, x.astype(np.float32).sum(-1), rtol=2e-3, atol=2e-2)
        assert mx == x.max()
    elif case == "concat":
        got = pa.jit(concat_rows)(x, y)
        np.testing.assert_array_equal(got, np.concatenate([x, y]))
    else:
        got = pa.jit(slice_block)(x)
        np.testing.assert_array_equal(got, x[1:6, 3:])


def test_output_dir_holds_a_complete_multi_kernel_operator(tmp_path) -> None:
    """``output_dir`` holds a complete multi-kernel operator: sources with one CPU entry per
    kernel, every stage's IR, ``op.json``; a copy of the folder loads and runs elsewhere."""
    x = RNG.uniform(-4, 4, (7, 33)).astype(np.float32)
    pa.compile(transpose_scaled, _desc(x), output_dir=tmp_path / "a")
    entry = (tmp_path / "a" / "cpu_entry.cpp").read_text()
    assert entry.count("PYASC_CPU_ENTRY_CHECKED(") == 2  # checked entries, one each
    assert "PYASC_CPU_LAST_ERROR()" in entry and "pyasc_signature()" in entry
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    np.testing.assert_array_equal(pa.load_op(tmp_path / "b")(x), x.T * 2)
