"""Dynamic shapes: ``TensorDesc`` dims given as ``None`` and ``@jit(dynamic=True)``.

One compile, then calls at several row counts (tails included) against NumPy; a new shape
computes the host tiling only (no lowering, no g++: counted); the emitted C++
``fill_tiling`` computes the same struct as the Python the CPU runtime uses; dims that must
be static and dynamic dims that do not match give located errors.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_close, layernorm_ref, softmax_ref

import pyasc_mlir as pa
from pyasc_mlir import pipeline
from pyasc_mlir.runtime import cpu

ROWS = (1, 7, 33, 513, 4097)
RNG = np.random.default_rng(5)


def add_scaled(x, y):
    return x * 2.0 + y


def bias_gate(x, g, b):
    return x * pa.sigmoid(g) + b


def softmax(x):
    e = pa.exp(x - x.max(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def layernorm(x, w, b, eps=1e-5):
    d = x - x.mean(-1, keepdim=True)
    return d * pa.rsqrt((d * d).mean(-1, keepdim=True) + eps) * w + b


def tol(dtype: str) -> float:
    return 2e-3 if dtype == "float16" else 2e-5


def assert_result(got: np.ndarray, want: np.ndarray, dtype: str) -> None:
    """``got`` has ``dtype`` and ``want``'s shape, and is within this module's tolerance (a
    float32 reference, not rounded to ``dtype``: rtol 4x the atol of 2e-3 / 2e-5)."""
    assert got.dtype == np.dtype(dtype)
    assert got.shape == want.shape
    assert_close(got, want, rtol=tol(dtype) * 4, atol=tol(dtype))


@pytest.fixture
def counters(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of lowering (frontend + passes) and g++ builds in this test."""
    counts = {"lower": 0, "gxx": 0}
    lower, build = pipeline.lower, cpu.build_library

    def counting_lower(*args, **kwargs):
        counts["lower"] += 1
        return lower(*args, **kwargs)

    def counting_build(*args, **kwargs):
        counts["gxx"] += 1
        return build(*args, **kwargs)

    monkeypatch.setattr(pipeline, "lower", counting_lower)
    monkeypatch.setattr(cpu, "build_library", counting_build)
    return counts


def check_new_shapes_cost_nothing(
    counts: dict[str, int], op: pa.CompiledOp, before: int, shapes: int
) -> None:
    assert counts == {"lower": 0, "gxx": 0}, "a new shape lowered or built again"
    assert op.tiling_computations == before + shapes


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_elementwise_one_kernel_many_row_counts(dtype: str, counters: dict[str, int]) -> None:
    op = pa.compile(add_scaled, [pa.TensorDesc((None, 40), dtype)] * 2)
    assert op.dynamic and op.inputs[0].shape == (None, 40)
    assert op.outputs[0].shape == (None, 40)
    counters.update(lower=0, gxx=0)
    for n in ROWS:
        x, y = (RNG.standard_normal((n, 40)).astype(dtype) for _ in range(2))
        assert_result(op(x, y), x.astype(np.float32) * 2 + y, dtype)
    check_new_shapes_cost_nothing(counters, op, 0, len(ROWS))
    op(x, y)  # the same shape again: cached tiling
    assert op.tiling_computations == len(ROWS)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_partial_broadcast_over_dynamic_leading_dims(dtype: str, counters: dict[str, int]) -> None:
    """``g`` spans dims 0 and 2 only: its GM row offsets use dynamic extents and strides."""
    op = pa.compile(
        bias_gate,
        [
            pa.TensorDesc((None, None, 48), dtype),
            pa.TensorDesc((None, 1, 48), dtype),
            pa.TensorDesc((48,), dtype),
        ],
    )
    counters.update(lower=0, gxx=0)
    for a, b in ((1, 1), (3, 7), (2, 33), (5, 513)):
        x = RNG.standard_normal((a, b, 48)).astype(dtype)
        g = RNG.standard_normal((a, 1, 48)).astype(dtype)
        bias = RNG.standard_normal(48).astype(dtype)
        f32 = [v.astype(np.float32) for v in (x, g, bias)]
        want = f32[0] / (1 + np.exp(-f32[1])) + f32[2]
        assert_result(op(x, g, bias), want, dtype)
    check_new_shapes_cost_nothing(counters, op, 0, 4)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_softmax_jit_dynamic(dtype: str, counters: dict[str, int]) -> None:
    fn = pa.jit(softmax, dynamic=True)
    x = RNG.standard_normal((ROWS[1], 96)).astype(dtype)
    assert_result(fn(x), softmax_ref(x.astype(np.float32)), dtype)
    assert counters["lower"] <= 1
    (ops,) = fn._dyn_ops.values()
    (op,) = ops
    assert op.inputs[0].shape == (None, 96)  # the reduced dim stays static
    counters.update(lower=0, gxx=0)
    for n in ROWS:
        x = RNG.standard_normal((n, 96)).astype(dtype)
        assert_result(fn(x), softmax_ref(x.astype(np.float32)), dtype)
    assert counters == {"lower": 0, "gxx": 0}
    assert op.tiling_computations == len(ROWS)  # 7 rows again: cached
    fn(RNG.standard_normal((5, 64)).astype(dtype))  # a new static dim: a second kernel
    assert counters["lower"] <= 1 and sum(len(v) for v in fn._dyn_ops.values()) == 2


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_layernorm_dynamic_batch_and_sequence(dtype: str, counters: dict[str, int]) -> None:
    op = pa.compile(
        layernorm,
        [
            pa.TensorDesc((None, None, 384), dtype),
            pa.TensorDesc((384,), dtype),
            pa.TensorDesc((384,), dtype),
        ],
    )
    w = RNG.standard_normal(384).astype(dtype)
    b = RNG.standard_normal(384).astype(dtype)
    counters.update(lower=0, gxx=0)
    for shape in ((1, 1), (1, 7), (3, 11), (1, 513), (2, 2049)):
        x = RNG.standard_normal((*shape, 384)).astype(dtype)
        assert_result(op(x, w, b), layernorm_ref(x.astype(np.float32), w, b), dtype)
    check_new_shapes_cost_nothing(counters, op, 0, 5)


def test_interpreter_runs_the_dynamic_kernel() -> None:
    op = pa.compile(
        bias_gate,
        [
            pa.TensorDesc((None, None, 48), "float32"),
            pa.TensorDesc((None, 1, 48), "float32"),
            pa.TensorDesc((48,), "float32"),
        ],
    )
    for a, b in ((1, 1), (2, 7)):
        x = RNG.standard_normal((a, b, 48)).astype(np.float32)
        g = RNG.standard_normal((a, 1, 48)).astype(np.float32)
        bias = RNG.standard_normal(48).astype(np.float32)
        want = op(x, g, bias)
        for stage in ("tile", "ascendc"):
            (got,) = op.run_stage(stage, x, g, bias)
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    with pytest.raises(pa.PyAscError, match="tensor stage"):
        op.run_stage("tensor", x, g, bias)


def test_zero_rows_give_empty_results() -> None:
    op = pa.compile(softmax, [pa.TensorDesc((None, 32), "float32")])
    out = op(np.zeros((0, 32), np.float32))
    assert out.shape == (0, 32)


def test_load_op_runs_new_shapes(tmp_path: Path) -> None:
    pa.compile(add_scaled, [pa.TensorDesc((None, 40), "float32")] * 2, output_dir=tmp_path)
    op = pa.load_op(tmp_path)
    assert op.dynamic
    x = RNG.standard_normal((9, 40)).astype(np.float32)
    np.testing.assert_allclose(op(x, x), x * 3, rtol=1e-6)


# -- the emitted C++ fill_tiling computes what the Python runtime computes ---------------------
def _host_program(op: pa.CompiledOp, tmp: Path) -> Path:
    host = (op.directory / "host.cpp").read_text()
    (kname,) = op.info["kernel_names"]
    struct = re.search(r"struct \w+TilingData \{.*?\};", host, re.S)
    fill = re.search(rf'extern "C" int {kname}_fill_tiling.*?\n\}}', host, re.S)
    assert struct and fill
    fields = op.info["dynamic"]["fields"]
    sname = struct.group(0).split()[1]
    prints = "".join(f'    std::printf("%lld\\n", (long long)t.{f});\n' for f in fields)
    src = (
        f"#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n{struct.group(0)}\n"
        f"{fill.group(0)}\nint main(int argc, char** argv) {{\n"
        "    int64_t dims[64];\n"
        "    for (int i = 1; i < argc; ++i) dims[i - 1] = std::atoll(argv[i]);\n"
        f"    {sname} t;\n"
        f'    if ({kname}_fill_tiling(dims, argc - 1, &t) != 0) {{ std::puts("-1"); '
        "return 0; }\n" + prints + "}\n"
    )
    (tmp / "fill.cpp").write_text(src)
    exe = tmp / "fill"
    subprocess.run(["g++", "-O0", "-o", str(exe), str(tmp / "fill.cpp")], check=True)
    return exe


@pytest.mark.parametrize("case", ["elementwise", "broadcast", "layernorm"])
def test_host_cpp_fill_tiling_matches_python(case: str, tmp_path: Path) -> None:
    if case == "elementwise":
        op = pa.compile(add_scaled, [pa.TensorDesc((None, 40), "float16")] * 2)
        calls = [[(n, 40)] * 2 for n in ROWS] + [[(5, 40), (6, 40)], [(5, 41), (5, 41)]]
    elif case == "broadcast":
        op = pa.compile(
            bias_gate,
            [
                pa.TensorDesc((None, None, 48), "float32"),
                pa.TensorDesc((None, 1, 48), "float32"),
                pa.TensorDesc((48,), "float32"),
            ],
        )
        calls = [[(a, b, 48), (a, 1, 48), (48,)] for a, b in ((1, 1), (3, 7), (7, 4097))]
        calls.append([(3, 7, 48), (2, 1, 48), (48,)])
    else:
        op = pa.compile(
            layernorm,
            [
                pa.TensorDesc((None, None, 384), "float16"),
                pa.TensorDesc((384,), "float16"),
                pa.TensorDesc((384,), "float16"),
            ],
        )
        calls = [[(a, b, 384), (384,), (384,)] for a, b in ((1, 1), (2, 33), (8, 4097))]
        calls.append([(2, 33, 384), (383,), (384,)])
    exe = _host_program(op, tmp_path)
    for shapes in calls:
        dims = [str(d) for s in shapes for d in s]
        cpp = subprocess.run(
            [str(exe), *dims], capture_output=True, text=True, check=True
        ).stdout.split()
        try:
            want = [str(v) for v in op._dyn.compute(shapes)[0].values()]
        except Exception:  # noqa: BLE001 - a shape the kernel refuses
            want = ["-1"]
        assert cpp == want, shapes


# -- errors ---------------------------------------------------------------------------------
def test_dynamic_reduced_dim_is_a_located_compile_error() -> None:
    with pytest.raises(pa.PyAscCompileError) as info:
        pa.compile(softmax, [pa.TensorDesc((4, None), "float32")])
    text = str(info.value)
    assert "dimension 1 of argument 0 ('x') is dynamic (None)" in text
    assert "reduced" in text and "static size" in text
    assert "test_dynamic.py" in text and "x.max(-1" in text  # points at the reduction


def test_dynamic_dims_do_not_broadcast() -> None:
    op = pa.compile(add_scaled, [pa.TensorDesc((None, 40), "float32")] * 2)
    x = np.ones((5, 40), np.float32)
    with pytest.raises(pa.PyAscUsageError) as info:
        op(x, np.ones((1, 40), np.float32))
    text = str(info.value)
    assert "do not broadcast" in text and "test_dynamic.py" in text


def test_static_dim_and_rank_mismatch_are_call_errors() -> None:
    op = pa.compile(softmax, [pa.TensorDesc((None, 32), "float32")])
    with pytest.raises(pa.PyAscUsageError, match="dimension 1 of argument 0 .* static"):
        op(np.ones((3, 33), np.float32))
    with pytest.raises(pa.PyAscUsageError, match="has 3 dimensions"):
        op(np.ones((3, 2, 32), np.float32))
    assert not op.accepts([(3, 33)]) and op.accepts([(3, 32)])


def matmul_bias(x, w, b):
    return x @ w + b


def test_jit_dynamic_falls_back_to_static_for_matmul() -> None:
    """``dynamic=True`` only offers dims: a kernel without a dynamic recipe stays static and a
    new shape compiles again; ``None`` dims there are a clear error."""
    fn = pa.jit(matmul_bias, dynamic=True)
    for m in (3, 5):
        x = RNG.standard_normal((m, 16)).astype(np.float32)
        w = RNG.standard_normal((16, 8)).astype(np.float32)
        b = RNG.standard_normal(8).astype(np.float32)
        np.testing.assert_allclose(fn(x, w, b), x @ w + b, rtol=1e-4, atol=1e-4)
    assert sum(len(v) for v in fn._dyn_ops.values()) == 2
    assert not any(op.dynamic for v in fn._dyn_ops.values() for op in v)
    with pytest.raises(pa.PyAscError, match="dynamic dims are supported") as info:
        pa.compile(
            matmul_bias,
            [
                pa.TensorDesc((None, 16), "float32"),
                pa.TensorDesc((16, 8), "float32"),
                pa.TensorDesc((8,), "float32"),
            ],
        )
    err = info.value
    assert "it compiles to one Cube (matmul) kernel" in err.message, err
    assert "static sizes" in err.hint and "@pa.jit(dynamic=True)" in err.hint, err
    assert err.loc is not None and err.loc.file == __file__, err


def _scale_by_rows(x):
    return x * float(x.shape[0])


def test_shape_read_is_an_error_with_none_dims_and_static_under_dynamic_true():
    """Reading ``.shape`` would bake the stand-in size into the IR: a located error for
    ``None`` dims; ``dynamic=True`` compiles such an operator per shape (right values)."""
    with pytest.raises(pa.PyAscCompileError, match="reads a tensor's shape") as info:
        pa.compile(_scale_by_rows, [pa.TensorDesc((None, 16), "float32")])
    assert "x.shape[0]" in str(info.value)
    op = pa.jit(dynamic=True)(_scale_by_rows)
    for n in (3, 5):
        np.testing.assert_array_equal(op(np.ones((n, 16), np.float32)), np.full((n, 16), n))
