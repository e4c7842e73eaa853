"""compile(output_dir=...) artifacts and load_op: files, op.json, and every backend."""

from __future__ import annotations

import json

import numpy as np

import pyasc_mlir as pa


def scaled_exp(a, b):
    return pa.exp(a) * 0.5 + b


def test_artifacts_and_load_op_run_on_cpu_and_interpreter(tmp_path):
    op = pa.compile(scaled_exp, [pa.TensorDesc((3, 40), "float16")] * 2, output_dir=tmp_path)
    for name in (
        "kernel.cpp",
        "host.cpp",
        "cpu_entry.cpp",
        "op.json",
        "tensor.mlir",
        "tile.mlir",
        "ascendc.mlir",
    ):
        assert (tmp_path / name).is_file(), name
    info = json.loads((tmp_path / "op.json").read_text())
    assert info["name"] == "scaled_exp" and info["kernels"] == 1
    assert info["inputs"] == [{"shape": [3, 40], "dtype": "float16"}] * 2
    assert info["gm_bytes"] == 3 * 3 * 40 * 2  # two inputs read once, one output written once
    assert (
        'extern "C" __global__ __aicore__ void scaled_exp_kernel('
        in (tmp_path / "kernel.cpp").read_text()
    )
    assert "<<<blockDim, nullptr, stream>>>" in (tmp_path / "host.cpp").read_text()

    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-2, 2, (3, 40)).astype(np.float16) for _ in range(2))
    ref = (np.exp(a.astype(np.float64)) * 0.5 + b).astype(np.float16)
    loaded = pa.load_op(tmp_path)
    for got in (
        op(a, b),
        loaded(a, b),
        loaded(a, b, backend="interp"),
        loaded.run_stage("tensor", a, b)[0],
        loaded.run_stage("tile", a, b)[0],
    ):
        np.testing.assert_allclose(
            got.astype(np.float64), ref.astype(np.float64), rtol=1e-3, atol=1e-3
        )


def test_loaded_op_without_ir_says_what_to_do(tmp_path):
    pa.compile(scaled_exp, [pa.TensorDesc((2, 16), "float32")] * 2, output_dir=tmp_path)
    (tmp_path / "tile.mlir").unlink()
    loaded = pa.load_op(tmp_path)
    x = np.ones((2, 16), np.float32)
    np.testing.assert_allclose(loaded(x, x), np.exp(1.0) * 0.5 + 1, rtol=1e-6)  # CPU still works
    try:
        loaded.run_stage("tile", x, x)
    except pa.PyAscUsageError as exc:
        assert "tile.mlir is missing" in str(exc) and "compile it again" in str(exc)
    else:
        raise AssertionError("expected PyAscUsageError")
