"""Non-finite constants (issue 10, item 2): ``-inf``/``inf``/``nan`` in an operator compile and
compute right on every backend, and a kernel that g++ rejects never deletes the shared
precompiled header.

The attention-mask idiom ``pa.where(mask, x, float("-inf"))`` used to emit ``(float)-inff``,
which g++ rejects; the emitter now prints a non-finite value as its IEEE bit pattern
(``PYASC_F32_BITS(0xff800000u)``, defined by the CPU header; ``kernel.cpp`` falls back to
``__builtin_bit_cast`` on toolchains whose header lacks it). Masked softmax follows PyTorch: a
fully masked row is NaN (``exp(-inf - -inf)``), a partially masked row is exact with zeros at the
masked positions.
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_close, softmax_ref

import pyasc_mlir as pa
from pyasc_mlir import emitter
from pyasc_mlir.platform import get_platform, header_defines
from pyasc_mlir.runtime import cpu
from pyasc_mlir.runtime.cpu import INCLUDE_DIR, CompileError, build_library

SHAPES = [(1, 1), (3, 7), (2, 33), (1, 513), (1, 4097)]
NEG_INF = -math.inf
PLATFORM = get_platform()


def bits32(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float32).view(np.uint32)


def run_all(op: pa.CompiledOp, *xs: np.ndarray) -> dict[str, np.ndarray]:
    return {
        "cpu": op(*xs, backend="cpu"),
        "interp": op(*xs, backend="interp"),
        "tile": op.run_stage("tile", *xs)[0],
        "ascendc": op.run_stage("ascendc", *xs)[0],
    }


# --------------------------------------------------------------------------- printing


@pytest.mark.parametrize(
    ("value", "ty", "text"),
    [
        (-math.inf, "float", "(float)PYASC_F32_BITS(0xff800000u)"),
        (math.inf, "float", "(float)PYASC_F32_BITS(0x7f800000u)"),
        (math.nan, "float", "(float)PYASC_F32_BITS(0x7fc00000u)"),
        (-math.nan, "float", "(float)PYASC_F32_BITS(0xffc00000u)"),
        (-math.inf, "half", "(half)PYASC_F32_BITS(0xff800000u)"),
        (1e6, "half", "(half)PYASC_F32_BITS(0x7f800000u)"),  # overflows fp16: inf, as NumPy
        (0.1, "float", "(float)0.1f"),  # the shortest decimal of the fp32 value
        (0.1, "half", "(half)0.0999755859375f"),  # the fp16 value, exactly
        (-0.0, "float", "(float)-0.0f"),
        (1e-45, "float", "(float)1e-45f"),
        (2.0**-149 * 3, "float", "(float)4e-45f"),
        (16777217.0, "float", "(float)1.6777216e+07f"),  # rounded to fp32 first
    ],
)
def test_constants_print_as_exact_values(value, ty, text):
    assert emitter.c_float(value, ty) == text


def test_printed_constants_read_back_bit_exact_in_cpp(tmp_path: Path) -> None:
    """g++ reads every printed constant back as NumPy's rounding of the value (what the
    interpreters use), fp32 and fp16, subnormals, overflow and non-finite values included."""
    rng = np.random.default_rng(7)
    values = np.concatenate(
        [
            rng.standard_normal(100) * 10.0 ** rng.integers(-50, 40, 100),
            rng.standard_normal(50) * 10.0 ** rng.integers(-9, 6, 50),
            [0.0, -0.0, math.inf, -math.inf, math.nan, 65519.9, 65520.0, 3.5e38, 1e-46, 6e-8],
        ]
    ).tolist()
    lines = []
    for i, v in enumerate(values):
        lines.append(f"  f[{i}] = {emitter.c_float(v, 'float')};")
        lines.append(f"  h[{i}] = {emitter.c_float(v, 'half')};")
    src = (
        f'#include "kernel_operator.h"\nfloat f[{len(values)}]; half h[{len(values)}];\n'
        'extern "C" void fill(float* of, half* oh) {\n'
        + "\n".join(lines)
        + f"\n  for (int i = 0; i < {len(values)}; ++i) {{ of[i] = f[i]; oh[i] = h[i]; }}\n}}\n"
    )
    lib = build_library({"kernel.cpp": src}, PLATFORM, cache_dir=tmp_path)
    import ctypes

    fill = ctypes.CDLL(str(lib)).fill
    of = np.zeros(len(values), np.float32)
    oh = np.zeros(len(values), np.float16)
    fill(of.ctypes.data_as(ctypes.c_void_p), oh.ctypes.data_as(ctypes.c_void_p))
    with np.errstate(over="ignore"):
        want_f = np.array(values).astype(np.float32)
        want_h = np.array(values).astype(np.float16)
    np.testing.assert_array_equal(of.view(np.uint32), want_f.view(np.uint32))
    np.testing.assert_array_equal(oh.view(np.uint16), want_h.view(np.uint16))


# --------------------------------------------------------------------------- operators


def u_mask(x):
    return pa.where(x > 0.0, x, float("-inf"))


def u_inf_literal(x):
    return pa.maximum(x, -math.inf) + float("inf") * 0.0 + x * 0.0


def u_global(x):
    return pa.minimum(x, -NEG_INF) + NEG_INF


def u_nan(x):
    return pa.where(x > 0.0, x, float("nan"))


def u_param(x, fill):
    return pa.where(x < 1.0, x, fill)


def u_var1(x):
    return x.var(-1, keepdim=True, unbiased=True)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_mask_with_minus_inf_on_every_backend(dtype):
    x = np.linspace(-3, 3, 33 * 2).reshape(2, 33).astype(dtype)
    op = pa.compile(u_mask, [pa.TensorDesc(x.shape, dtype)])
    want = np.where(x > 0, x, -np.inf).astype(dtype)
    for where, got in run_all(op, x).items():
        np.testing.assert_array_equal(got, want, err_msg=where)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_inf_and_nan_constants_of_every_spelling(dtype):
    x = np.array([[-2.0, -0.0, 0.0, 0.5, 3.0, 1e4, -7.0]], dtype)
    cases = [
        (u_inf_literal, [], np.full(x.shape, np.nan)),  # inf * 0 = NaN
        (u_global, [], x.astype(np.float32) + -np.inf),
        (u_nan, [], np.where(x > 0, x, np.nan)),
        (u_param, [float("inf")], np.where(x < 1, x, np.inf)),
        (u_param, [-math.inf], np.where(x < 1, x, -np.inf)),
    ]
    for fn, consts, want in cases:
        op = pa.compile(fn, [pa.TensorDesc(x.shape, dtype), *consts])
        want = np.asarray(want, np.float32).astype(dtype)
        for where, got in run_all(op, x).items():
            np.testing.assert_array_equal(got, want, err_msg=f"{fn.__name__} {consts} {where}")


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_unbiased_var_of_one_element_is_nan(dtype):
    x = np.array([[1.5], [-2.0], [0.0]], dtype)
    op = pa.compile(u_var1, [pa.TensorDesc(x.shape, dtype)])
    for where, got in run_all(op, x).items():
        assert got.shape == (3, 1) and np.all(np.isnan(got)), (where, got)


def masked_softmax(x, mask):
    s = pa.where(mask > 0.5, x, float("-inf"))
    e = pa.exp(s - s.max(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def masked_softmax_ref(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """PyTorch's ``softmax(x.masked_fill(~mask, -inf))`` in float64: NaN rows where every
    position is masked."""
    s = np.where(mask, x.astype(np.float64), -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_masked_softmax_with_minus_inf(dtype, shape):
    rng = np.random.default_rng(math.prod(shape))
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    mask = rng.random(shape) < 0.6
    mask[0, :] = False  # a fully masked row: NaN, as PyTorch
    if shape[0] > 1:
        mask[1, :] = True  # an unmasked row: plain softmax
    op = pa.compile(masked_softmax, [pa.TensorDesc(shape, dtype), pa.TensorDesc(shape, dtype)])
    want = masked_softmax_ref(x, mask)
    for where, got in run_all(op, x, mask.astype(dtype)).items():
        assert got.dtype == np.dtype(dtype) and got.shape == shape, where
        assert np.all(np.isnan(got[0])), where
        rest = got[1:]
        assert not np.any(np.isnan(rest)), where
        np.testing.assert_array_equal(rest[~mask[1:]], 0, err_msg=where)  # exactly zero
        assert_close(rest, want[1:], dtype)
        if shape[0] > 1:
            assert_close(got[1], softmax_ref(x[1].astype(np.float32)), dtype)


# --------------------------------------------------------------------------- toolchains


def test_kernel_with_inf_compiles_where_the_header_lacks_the_helper(tmp_path: Path) -> None:
    pa.compile(u_mask, [pa.TensorDesc((7,), "float32")], output_dir=tmp_path / "op")
    text = (tmp_path / "op" / "kernel.cpp").read_text()
    assert "PYASC_F32_BITS(0xff800000u)" in text and "inff" not in text
    assert "#ifndef PYASC_F32_BITS" in text
    # a header without PYASC_F32_BITS (as the real Ascend C one): the kernel's guard defines it
    (tmp_path / "kernel_operator.h").write_text(
        f'#include "{INCLUDE_DIR / "kernel_operator.h"}"\n#undef PYASC_F32_BITS\n'
    )
    (tmp_path / "kernel.cpp").write_text(text)
    proc = subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-fsyntax-only",
            f"-I{tmp_path}",
            *header_defines(PLATFORM),
            str(tmp_path / "kernel.cpp"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


GOOD = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void k(GM_ADDR o, GM_ADDR ws, GM_ADDR tiling) {
  AscendC::GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)o, 1);
  g.SetValue(0, PYASC_F32_BITS(0xff800000u));
}
PYASC_CPU_ENTRY(k)
"""


def test_a_kernel_compile_error_keeps_the_precompiled_header(tmp_path: Path) -> None:
    kernel = cpu.CpuKernel(build_library({"kernel.cpp": GOOD}, PLATFORM, cache_dir=tmp_path))
    o = np.zeros(1, np.float32)
    kernel.run(1, [o], b"")
    assert bits32(o)[0] == 0xFF800000
    pchs = sorted((tmp_path / "cpu" / "pch").rglob("*.gch"))
    assert pchs, "the first build made a precompiled header"
    before = [p.stat().st_mtime_ns for p in pchs]
    with pytest.raises(CompileError, match="not_declared_anywhere"):
        build_library(
            {"kernel.cpp": GOOD.replace("0xff800000u", "not_declared_anywhere")},
            PLATFORM,
            cache_dir=tmp_path,
        )
    assert sorted((tmp_path / "cpu" / "pch").rglob("*.gch")) == pchs
    assert [p.stat().st_mtime_ns for p in pchs] == before
