"""Conformance of the CPU runtime with Ascend C kernels written as public samples are.

The kernels in ``tests/conformance/*.cpp`` were written here from the Ascend C API
documentation (docs/CPU_RUNTIME.md lists the forms and the sources). They are built once into
one library (and once more with memory check) and compared with numpy references of the
documented semantics: the level-0 (mask/repeat) vector forms in every mask form, masked-off
lanes, strides, the Counter mode, bfloat16_t casts with their round modes, the Atlas A2 Cast
table, the kernel qualifiers/macros, and every documented limit refused.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cpu_run_helpers import shared_pch_cache

from pyasc_mlir.platform import get_platform
from pyasc_mlir.runtime.cpu import (
    INCLUDE_DIR,
    CpuKernel,
    KernelError,
    KernelMemoryError,
    build_library,
)

PLATFORM = get_platform("910B2")
HERE = Path(__file__).resolve().parent / "conformance"
KERNEL_FILES = [
    "add_leakyrelu_level0.cpp",
    "vector_level0_ops.cpp",
    "cast_bf16.cpp",
    "qualifiers_sync.cpp",
]
KERNELS = {
    "add_leaky_half": 5,
    "add_leaky_float": 5,
    "l0_ops_kernel": 5,
    "cast_bf16_kernel": 5,
    "cast_any_kernel": 4,
    "qual_kernel": 3,
}
ENTRY_CPP = "\n".join(
    ['#include "kernel_operator.h"']
    + [f'extern "C" void {k}({", ".join(["GM_ADDR"] * n)});' for k, n in KERNELS.items()]
    + [f"PYASC_CPU_ENTRY_NAMED({k})" for k in KERNELS]
    + ["PYASC_CPU_LAST_ERROR()", ""]
)


def _sources() -> dict[str, str]:
    out = {name: (HERE / name).read_text() for name in KERNEL_FILES}
    out["zz_entry.cpp"] = ENTRY_CPP
    return out


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    cache = shared_pch_cache(tmp_path_factory.mktemp("pyasc_cache"))
    return {
        mc: build_library(_sources(), PLATFORM, cache_dir=cache, memcheck=mc)
        for mc in (False, True)
    }


def kernel(libs, name, memcheck=False):
    return CpuKernel(libs[memcheck], entry=f"pyasc_run_block_{name}")


RNG = np.random.default_rng(2024)
F16, F32 = np.float16, np.float32
DT = {F16: 0, F32: 1}

# ------------------------------------------------------------------ level-0 reference model

BINARY = {0: np.add, 1: np.subtract, 2: np.multiply, 3: np.divide, 4: np.maximum, 5: np.minimum}
UNARY = {
    10: np.exp,
    11: np.log,
    12: np.abs,
    13: np.sqrt,
    14: lambda x: 1 / np.sqrt(x),
    15: lambda x: 1 / x,
    16: lambda x: np.maximum(x, 0),
}
SCALAR = {
    20: np.add,
    21: np.multiply,
    22: np.maximum,
    23: np.minimum,
    24: lambda x, s: np.where(x >= 0, x, x * s),
}
INEXACT = {10, 11, 14}  # C library exp/log, rsqrt through double: compared with a tolerance
SIZE = 1024  # elements of every UB buffer of l0_ops_kernel


def lanes_of(dtype) -> int:
    return 256 // np.dtype(dtype).itemsize


def plan(dtype, form, mask, bits, repeat):
    """(repeats, active lanes of a full repeat, lanes of the last repeat)."""
    n_lanes = lanes_of(dtype)
    if form in (0, 3):
        lanes = list(range(mask))
    elif form in (1, 2):
        lanes = [
            k
            for k in range(n_lanes)
            if (int(bits[k // 64]) >> (k % 64)) & 1 and (k < 64 or n_lanes == 128)
        ]
    else:  # Counter mode: mask is the element count
        reps = -(-mask // n_lanes)
        return reps, list(range(n_lanes)), mask - (reps - 1) * n_lanes if reps else 0
    return repeat, lanes, len(lanes)


def elem(dtype, blk, rep, r, k):
    e = 32 // np.dtype(dtype).itemsize
    return r * rep * e + (k // e) * blk * e + k % e


def level0_ref(op, dtype, x, y, dst, form, mask, bits, repeat, strides, scalar):
    """dst after the call (numpy model of the documented level-0 semantics)."""
    reps, lanes, last = plan(dtype, form, mask, bits, repeat)
    out = dst.copy()
    db, sb0, sb1, dr, sr0, sr1 = strides
    s = dtype(scalar).astype(F32)
    for r in range(reps):
        ks = lanes[:last] if r == reps - 1 else lanes
        di = [elem(dtype, db, dr, r, k) for k in ks]
        ai = [elem(dtype, sb0, sr0, r, k) for k in ks]
        bi = [elem(dtype, sb1, sr1, r, k) for k in ks]
        a, b = x[ai].astype(F32), y[bi].astype(F32)
        if op in BINARY:
            v = BINARY[op](a, b)
        elif op in UNARY:
            v = UNARY[op](a.astype(np.float64) if op == 14 else a)
        elif op in SCALAR:
            v = SCALAR[op](a, s)
        else:
            v = np.full(len(ks), s)
        out[di] = np.asarray(v).astype(dtype)
    return out


def run_l0(
    libs,
    op,
    dtype,
    form=0,
    mask=None,
    bits=(0, 0),
    repeat=2,
    strides=(1, 1, 1, 8, 8, 8),
    scalar=0.75,
    fill=True,
    fill_value=-7.0,
    x=None,
    y=None,
    inputs=SIZE,
    memcheck=False,
):
    mask = lanes_of(dtype) if mask is None else mask
    positive = op in (11, 13, 14)
    x = (
        (RNG.uniform(0.25, 4.0, SIZE) if positive else RNG.uniform(-4, 4, SIZE)).astype(dtype)
        if x is None
        else x
    )
    if y is None:
        y = (RNG.uniform(0.5, 4.0, SIZE) * RNG.choice([-1, 1], SIZE)).astype(dtype)
    o = np.zeros(SIZE, dtype)
    tiling = struct.pack(
        "<12iQ2Q2f2i",
        op,
        DT[dtype],
        form,
        repeat,
        SIZE,
        int(fill),
        *strides,
        mask,
        *[int(b) for b in bits],
        scalar,
        fill_value,
        inputs,
        0,
    )
    kernel(libs, "l0_ops_kernel", memcheck).run(1, [x, y, o], tiling)
    return x, y, o


def check_l0(libs, op, dtype, **kw):
    x, y, o = run_l0(libs, op, dtype, **kw)
    args = {
        k: kw.get(k, d)
        for k, d in (
            ("form", 0),
            ("mask", lanes_of(dtype)),
            ("bits", (0, 0)),
            ("repeat", 2),
            ("strides", (1, 1, 1, 8, 8, 8)),
            ("scalar", 0.75),
        )
    }
    ref = level0_ref(op, dtype, x, y, np.full(SIZE, -7.0, dtype), **args)
    if op in INEXACT:
        np.testing.assert_allclose(
            o.astype(F32), ref.astype(F32), rtol=2e-3 if dtype == F16 else 1e-6
        )
    else:
        np.testing.assert_array_equal(o, ref)
    return o, ref


ALL_OPS = [*BINARY, *UNARY, *SCALAR, 30]
HALF_BITS = (0x8000_0000_0000_F00F, 0x0000_0001_FFFF_0003)
FLOAT_BITS = (0xF0F0_0000_1234_8001, 0)


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("op", ALL_OPS)
def test_level0_contiguous_and_bit_masks(libs, op, dtype):
    lanes = lanes_of(dtype)
    # contiguous: every lane, a partial mask (masked-off lanes keep -7), one lane
    for mask in (lanes, lanes // 2 + 3, 1):
        o, _ = check_l0(libs, op, dtype, form=0, mask=mask, repeat=3)
        assert (o[mask:lanes] == -7).all() and (o[3 * lanes :] == -7).all()
    bits = HALF_BITS if dtype == F16 else FLOAT_BITS
    check_l0(libs, op, dtype, form=1, bits=bits, repeat=2)
    # repeatTime 0 does nothing
    o, _ = check_l0(libs, op, dtype, form=0, repeat=0)
    assert (o == -7).all()


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("op", ALL_OPS)
def test_level0_mask_registers_and_counter_mode(libs, op, dtype):
    lanes = lanes_of(dtype)
    bits = HALF_BITS if dtype == F16 else FLOAT_BITS
    check_l0(libs, op, dtype, form=2, bits=bits, repeat=2)  # SetVectorMask(high, low)
    check_l0(libs, op, dtype, form=3, mask=lanes - 5, repeat=3)  # SetVectorMask(len)
    for n in (1, 7, lanes + 33, 2 * lanes):  # Counter mode: repeatTime is ignored
        o, _ = check_l0(libs, op, dtype, form=4, mask=n, repeat=1)
        assert (o[n:] == -7).all()
        check_l0(libs, op, dtype, form=5, mask=n, repeat=0)


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize(
    "strides", [(2, 1, 3, 16, 8, 24), (1, 2, 1, 0, 16, 8), (1, 1, 1, 4, 4, 4), (3, 0, 1, 24, 0, 9)]
)
@pytest.mark.parametrize("op", [0, 3, 12, 14, 21, 24, 30])
def test_level0_block_and_repeat_strides(libs, op, dtype, strides):
    check_l0(libs, op, dtype, form=0, mask=lanes_of(dtype) - 9, repeat=2, strides=strides)
    check_l0(libs, op, dtype, form=4, mask=lanes_of(dtype) + 17, strides=strides)


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("op", [40, 41, 42, 43, 44])
def test_count_forms_with_is_set_mask_false_use_the_counter(libs, op, dtype):
    for n in (1, 33, 513):
        x, _, o = run_l0(libs, op, dtype, form=4, mask=n)
        s = dtype(0.75).astype(F32)
        ref = np.full(SIZE, -7.0, dtype)
        ref[:n] = np.asarray(SCALAR[op - 20](x[:n].astype(F32), s)).astype(dtype)
        np.testing.assert_array_equal(o, ref)


def test_level0_fp16_rounding_matches_the_count_form(libs):
    # one rounding per op: (a * b) in float, then to half (ties to even)
    x = np.full(SIZE, 1 + 2**-10, F16)
    y = np.full(SIZE, 1 + 2**-10, F16)
    _, _, o = run_l0(libs, 2, F16, x=x, y=y, repeat=1)
    assert o[0] == F16((1 + 2**-10) ** 2)


# ---------------------------------------------------------------------- level-0 limits


def refused(libs, op, dtype, needle, memory=False, **kw):
    with pytest.raises(KernelMemoryError if memory else KernelError) as info:
        run_l0(libs, op, dtype, **kw)
    assert needle in str(info.value), str(info.value)


@pytest.mark.parametrize("op", [0, 10, 20, 24, 30])
def test_level0_limits_are_refused(libs, op):
    refused(libs, op, F16, "repeatTime 256 is outside [0, 255]", repeat=256)
    refused(libs, op, F32, "repeatTime 300 is outside [0, 255]", form=1, bits=(1, 0), repeat=300)
    refused(libs, op, F16, "mask 129 is outside [1, 128] for 16-bit elements", mask=129)
    refused(libs, op, F32, "mask 65 is outside [1, 64] for 32-bit elements", mask=65)
    refused(libs, op, F32, "mask 0 is outside [1, 64]", mask=0)
    refused(libs, op, F16, "the bit mask selects no lane", form=1, bits=(0, 0))
    refused(libs, op, F32, "the high mask word must be 0 for 32-bit elements", form=2, bits=(1, 1))
    refused(libs, op, F16, "pass MASK_PLACEHOLDER, not 64", form=6, mask=64)
    refused(libs, op, F16, "the bit-mask form needs Normal mode", form=7, bits=(1, 0))
    # an active lane past the end of the destination / source tensor
    refused(libs, op, F32, "exceeds it", memory=True, repeat=17)
    refused(libs, op, F16, "exceeds it", memory=True, form=4, mask=SIZE + 1)


def test_duplicate_stride_limits_and_count_form_needs_counter_mode(libs):
    refused(libs, 30, F16, "dstRepeatStride 256 is outside [0, 255]", strides=(1, 1, 1, 256, 8, 8))
    refused(
        libs,
        40,
        F16,
        "isSetMask = false takes the element count from SetVectorMask in Counter mode",
        form=0,
    )


def test_level0_memory_check_keeps_masked_off_lanes_undefined(libs):
    lanes = lanes_of(F16)
    # every lane written: nothing undefined is copied out
    run_l0(libs, 0, F16, repeat=SIZE // lanes, fill=False, memcheck=True)
    # masked-off lanes keep their (never written) state: copying dst out reads undefined UB
    refused(
        libs,
        0,
        F16,
        "read of uninitialised UB",
        memory=True,
        mask=lanes - 1,
        repeat=SIZE // lanes,
        fill=False,
        memcheck=True,
    )
    # only the first 64 source elements are loaded: lanes < 64 are fine, lane 64 propagates
    run_l0(libs, 0, F16, mask=64, repeat=1, inputs=64, memcheck=True)
    refused(
        libs,
        0,
        F16,
        "read of uninitialised UB: src byte 128 (element 64",
        memory=True,
        mask=65,
        repeat=1,
        inputs=64,
        memcheck=True,
    )
    refused(
        libs,
        24,
        F32,
        "read of uninitialised UB",
        memory=True,
        form=4,
        mask=17,
        inputs=16,
        memcheck=True,
    )
    # Duplicate defines exactly its active lanes
    run_l0(libs, 30, F32, repeat=SIZE // 64, fill=False, memcheck=True)


# ------------------------------------------------------------- sample: Add + LeakyRelu


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("n", [1, 7, 33, 513, 4097])
@pytest.mark.parametrize("blocks", [1, 3])
def test_sample_add_leakyrelu_tails_and_blocks(libs, dtype, n, blocks):
    x = RNG.uniform(-4, 4, n).astype(dtype)
    y = RNG.uniform(-4, 4, n).astype(dtype)
    alpha = 0.1
    s = (x.astype(F32) + y.astype(F32)).astype(dtype).astype(F32)
    ref = np.where(s >= 0, s, s * dtype(alpha).astype(F32)).astype(dtype)
    name = "add_leaky_half" if dtype == F16 else "add_leaky_float"
    for memcheck in (False, True):
        z = np.full(n, 99, dtype)
        kernel(libs, name, memcheck).run(blocks, [x, y, z], struct.pack("<If", n, alpha))
        np.testing.assert_array_equal(z, ref)


# ------------------------------------------------------------------------ bf16 and Cast

MODES = ["NONE", "RINT", "FLOOR", "CEIL", "ROUND", "TRUNC", "ODD"]


def bf16_ref(x: np.ndarray, mode: str) -> np.ndarray:
    """bfloat16 bits of float32 x rounded per mode (sign-magnitude on the top 16 bits)."""
    u = x.astype(F32).view(np.uint32).astype(np.uint64)
    lo, rest, neg = u >> 16, u & 0xFFFF, (u >> 31) & 1 == 1
    up = {
        "RINT": (rest > 0x8000) | ((rest == 0x8000) & (lo & 1 == 1)),
        "ROUND": rest >= 0x8000,
        "TRUNC": np.zeros_like(neg),
        "FLOOR": neg & (rest != 0),
        "CEIL": ~neg & (rest != 0),
    }[mode]
    out = (lo + up).astype(np.uint16)
    nan = np.isnan(x)
    out[nan] = (lo[nan] | 0x40).astype(np.uint16)
    return out


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(F32)


def special_floats() -> np.ndarray:
    t = 2.0**-8
    vals = [
        1 + t,
        1 + 3 * t,
        -(1 + t),
        -(1 + 3 * t),
        1 + t + 2**-20,
        0.5 + 2**-9 + 2**-11,
        3 * 2.0**-134,
        2.0**-133,
        5 * 2.0**-135,
        -(3 * 2.0**-134),
        2.0**-126 * (1 + t),
        np.inf,
        -np.inf,
        np.nan,
        -np.nan,
        0.0,
        -0.0,
        3.3961e38,
        -3.3961e38,
        np.finfo(F32).max,
        1.0,
        -2.5,
        65504.0,
        1e-40,
    ]
    more = RNG.standard_normal(64 - len(vals)) * 10.0 ** RNG.integers(-30, 30, 64 - len(vals))
    return np.array(vals + list(more), F32)


@pytest.mark.parametrize("mode", [1, 2, 3, 4, 5])
def test_cast_float_to_bf16_modes_and_back(libs, mode):
    x = special_floats()
    o16, o32 = np.zeros(64, np.uint16), np.zeros(64, F32)
    kernel(libs, "cast_bf16_kernel").run(1, [x, o16, o32], struct.pack("<4i", 64, mode, 0, 0))
    ref = bf16_ref(x, MODES[mode])
    np.testing.assert_array_equal(o16, ref)
    np.testing.assert_array_equal(o32.view(np.uint32), bf16_to_f32(ref).view(np.uint32))
    assert np.isnan(o32[13]) and np.isnan(o32[14]) and o32[11] == np.inf
    if MODES[mode] == "RINT":  # ties to even, subnormals
        assert o32[0] == 1.0 and o32[1] == 1 + 2**-6 and o32[2] == -1.0
        assert o32[6] == 2.0**-132 and o32[7] == 2.0**-133 and o32[8] == 2.0**-133
        assert o32[19] == np.inf  # float max rounds up past the largest bf16


@pytest.mark.parametrize("mode", [0, 6])
def test_cast_float_to_bf16_undocumented_modes_refused(libs, mode):
    x = special_floats()
    with pytest.raises(
        KernelError,
        match=rf"Cast: float -> bfloat16_t with RoundMode::"
        rf"CAST_{MODES[mode]} is not supported on the Atlas A2",
    ):
        kernel(libs, "cast_bf16_kernel").run(
            1, [x, np.zeros(64, np.uint16), np.zeros(64, F32)], struct.pack("<4i", 64, mode, 0, 0)
        )


# The documented Atlas A2 Cast table restricted to half, float, bfloat16_t, int32_t.
CODES = {0: "half", 1: "float", 2: "bfloat16_t", 3: "int32_t"}
ROUNDING = {1, 2, 3, 4, 5}
A2_TABLE = {
    ("half", "float"): {0},
    ("half", "int32_t"): ROUNDING,
    ("float", "float"): ROUNDING,
    ("float", "int32_t"): ROUNDING,
    ("float", "half"): ROUNDING | {0, 6},
    ("float", "bfloat16_t"): ROUNDING,
    ("bfloat16_t", "float"): {0},
    ("bfloat16_t", "int32_t"): ROUNDING,
    ("int32_t", "float"): ROUNDING | {0},
}
NP = {"half": F16, "float": F32, "bfloat16_t": np.uint16, "int32_t": np.int32}


def _cast_any(libs, src, dst, mode, x):
    o = np.zeros(16, NP[CODES[dst]])
    kernel(libs, "cast_any_kernel").run(1, [x, o], struct.pack("<4i", 16, mode, src, dst))
    return o


@pytest.mark.parametrize("src", list(CODES))
@pytest.mark.parametrize("dst", list(CODES))
def test_cast_a2_table(libs, src, dst):
    s, d = CODES[src], CODES[dst]
    vals = np.array([1.5, -2.5, 0.25, 3.0] * 4, F32)
    x = {
        "half": vals.astype(F16),
        "float": vals,
        "int32_t": np.arange(-8, 8, dtype=np.int32),
        "bfloat16_t": bf16_ref(vals, "RINT"),
    }[s]
    for mode in range(7):
        if mode in A2_TABLE.get((s, d), set()):
            o = _cast_any(libs, src, dst, mode, x)
            if (s, d) == ("bfloat16_t", "int32_t") and MODES[mode] == "FLOOR":
                np.testing.assert_array_equal(o[:4], [1, -3, 0, 3])
            if (s, d) == ("half", "float"):
                np.testing.assert_array_equal(o, x.astype(F32))
            continue
        needle = (
            "SetDeqScale"
            if (s, d) == ("int32_t", "half")
            else f"Cast: {s} -> {d}"
            + (
                f" with RoundMode::CAST_{MODES[mode]}"
                if (s, d) in A2_TABLE
                else " is not supported"
            )
        )
        with pytest.raises(KernelError) as info:
            _cast_any(libs, src, dst, mode, x)
        assert needle in str(info.value), str(info.value)


# --------------------------------------------------------------- qualifiers and macros


def run_qual(libs, op, arg=0, blocks=1):
    o = np.zeros(4, np.int32)
    kernel(libs, "qual_kernel").run(blocks, [o], struct.pack("<2i", op, arg))
    return o


def qual_error(libs, op, arg=0):
    with pytest.raises(KernelError) as info:
        run_qual(libs, op, arg)
    return str(info.value)


KERNEL_TYPE_MIX_AIC_1_2, KERNEL_TYPE_MAX = 5, 10


def test_kernel_type_is_recorded_per_block(libs):
    # MIX 1:2: a 2-block launch runs 4 vector blocks; the last one (index 3) writes last
    np.testing.assert_array_equal(run_qual(libs, 0, blocks=2), [KERNEL_TYPE_MIX_AIC_1_2, 3, 2, 1])
    assert run_qual(libs, 1)[0] == KERNEL_TYPE_MAX  # reset at the block start
    assert "KERNEL_TASK_TYPE_DEFAULT: kernel type 1 declared after type 0" in qual_error(libs, 2)


def test_assert(libs):
    run_qual(libs, 3, 0)
    msg = qual_error(libs, 3, 1)
    assert "ASSERT(t.arg == 0) failed at " in msg and "qualifiers_sync.cpp:" in msg
    msg = qual_error(libs, 4, 2)
    assert "ASSERT(t.arg == 0) failed at " in msg and msg.endswith(": arg is 2"), msg


def test_events_and_barriers(libs):
    assert run_qual(libs, 5, 7)[0] == 1
    assert run_qual(libs, 5, -7)[0] == 1
    assert "SetFlag: eventID 8 is outside [0, 7]" in qual_error(libs, 5, 8)
    assert "WaitFlag: eventID 9 is outside [0, 7]" in qual_error(libs, 5, -9)


def test_kernel_tiling_header(libs):
    assert run_qual(libs, 6)[0] == 7


def test_unknown_kernel_type_does_not_compile():
    src = HERE / "kernel_type_errors.cpp"
    proc = subprocess.run(
        ["g++", "-std=c++17", "-fsyntax-only", f"-I{INCLUDE_DIR}", str(src)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    bad = [i for i, line in enumerate(src.read_text().splitlines(), 1) if "// ERR" in line]
    assert len(bad) == 3
    for line in bad:
        assert f"kernel_type_errors.cpp:{line}:" in proc.stderr, proc.stderr
    assert "KERNEL_TYPE_MAX is a bound" in proc.stderr


def test_headers_are_packaged():
    import tomllib

    data = tomllib.loads((HERE.parent.parent / "pyproject.toml").read_text())
    globs = data["tool"]["setuptools"]["package-data"]["pyasc_mlir.runtime"]
    headers = sorted(p.relative_to(INCLUDE_DIR.parent) for p in INCLUDE_DIR.rglob("*.h"))
    assert headers and all(any(h.match(g) for g in globs) for h in headers), (globs, headers)
