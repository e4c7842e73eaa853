"""Conformance of the CPU runtime's Compare / Compares / GetCmpMask / SetCmpMask / Select.

``tests/conformance/compare_select.cpp`` calls every documented form (count, level-0 with a
contiguous or bit mask, the register form, the forms without a mask argument), and
``tests/conformance/sample_compare_select.cpp`` is a kernel written as the public samples are.
Both are built once into one library (and once more with memory check) and compared with
numpy models of the documented semantics (docs/CPU_RUNTIME.md, "Compare / Select"): bit i of a
mask is bit i % 8 of byte i / 8; IEEE comparisons (NaN unordered, +0 == -0); Select copies
the chosen lanes bit for bit; every refused use names the API and the value.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from cpu_run_helpers import shared_pch_cache

from pyasc_mlir.platform import get_platform
from pyasc_mlir.runtime.cpu import CpuKernel, KernelError, KernelMemoryError, build_library

PLATFORM = get_platform("910B2")
HERE = Path(__file__).resolve().parent / "conformance"
KERNELS = {"cmpsel_kernel": 6, "sample_cmpsel_half": 5, "sample_cmpsel_float": 5}
ENTRY_CPP = "\n".join(
    ['#include "kernel_operator.h"']
    + [f'extern "C" void {k}({", ".join(["GM_ADDR"] * n)});' for k, n in KERNELS.items()]
    + [f"PYASC_CPU_ENTRY_NAMED({k})" for k in KERNELS]
    + ["PYASC_CPU_LAST_ERROR()", ""]
)


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    cache = shared_pch_cache(tmp_path_factory.mktemp("pyasc_cache"))
    sources = {
        name: (HERE / name).read_text()
        for name in ("compare_select.cpp", "sample_compare_select.cpp")
    }
    sources["zz_entry.cpp"] = ENTRY_CPP
    return {
        mc: build_library(sources, PLATFORM, cache_dir=cache, memcheck=mc) for mc in (False, True)
    }


RNG = np.random.default_rng(99)
F16, F32, I32, I16 = np.float16, np.float32, np.int32, np.int16
DT = {F16: 0, F32: 1, I32: 2, I16: 3}
CMP = {
    0: np.less,
    1: np.greater,
    2: np.equal,
    3: np.less_equal,
    4: np.greater_equal,
    5: np.not_equal,
}
MODE_NAMES = {0: "LT", 1: "GT", 2: "EQ", 3: "LE", 4: "GE", 5: "NE"}
SIZE, MASK_BYTES = 1024, 256
DENSE = (1, 1, 1, 8, 8, 8)
MASK_TYPES = {np.uint8: 0, np.uint16: 1, np.uint32: 2, np.uint64: 3, np.int8: 4, np.int16: 5}


def lanes_of(dtype) -> int:
    return 256 // np.dtype(dtype).itemsize


def elem(dtype, blk, rep, r, k):
    e = 32 // np.dtype(dtype).itemsize
    return r * rep * e + (k // e) * blk * e + k % e


def special(dtype, n):
    """Random values with NaNs (several payloads), +-0, +-inf, subnormals and ties."""
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-3, 3, n).astype(dtype)
    x = RNG.integers(-4, 5, n).astype(F32) / 2  # many equal pairs
    x = x.astype(dtype)
    bits = x.view(np.uint16 if dtype == F16 else np.uint32)
    sp = (
        [0x7C00, 0xFC00, 0x0000, 0x8000, 0x7E00, 0x7C01, 0xFE3F, 0x0001, 0x83FF]
        if dtype == F16
        else [0x7F800000, 0xFF800000, 0, 0x80000000, 0x7FC00000, 0x7F800001, 0xFFC0ABCD, 1]
    )
    m = min(n, 3 * len(sp))
    idx = RNG.choice(n, m, replace=False)
    bits[idx] = np.array((sp * 3)[:m], bits.dtype)
    return x


def tiling(op, dtype, **kw):
    k = {
        "mode": 0,
        "count": 0,
        "repeat": 1,
        "strides": DENSE,
        "mask": 0,
        "bits": (0, 0),
        "scalar": 0.5,
        "fill": -7.0,
        "mask_type": np.uint8,
        "variant": 0,
        "counter": 0,
    }
    k.update(kw)
    return struct.pack(
        "<12iQ2Q2f4i",
        op,
        DT[dtype],
        k["mode"],
        k["count"],
        k["repeat"],
        SIZE,
        *k["strides"],
        k["mask"],
        *[int(b) for b in k["bits"]],
        k["scalar"],
        k["fill"],
        MASK_TYPES[k["mask_type"]],
        k["variant"],
        MASK_BYTES,
        k["counter"],
    )


def run(libs, op, dtype, x=None, y=None, z=None, memcheck=False, **kw):
    x = special(dtype, SIZE) if x is None else x
    y = special(dtype, SIZE) if y is None else y
    z = RNG.integers(0, 256, MASK_BYTES).astype(np.uint8) if z is None else z
    o = np.zeros(MASK_BYTES if op < 20 else SIZE, np.uint8 if op < 20 else dtype)
    k = CpuKernel(libs[memcheck], entry="pyasc_run_block_cmpsel_kernel")
    k.run(1, [x, y, z, o], tiling(op, dtype, **kw))
    return x, y, z, o


def refused(libs, op, dtype, needle, memory=False, **kw):
    with pytest.raises(KernelMemoryError if memory else KernelError) as info:
        run(libs, op, dtype, **kw)
    assert needle in str(info.value), str(info.value)


def pack(bits):
    return np.packbits(np.asarray(bits, bool), bitorder="little")


def bit(z, i):
    return (int(z[i // 8]) >> (i % 8)) & 1


def active(dtype, mask, bits):
    n = lanes_of(dtype)
    if mask:
        return list(range(mask))
    return [k for k in range(n) if (int(bits[k // 64]) >> (k % 64)) & 1 and (k < 64 or n == 128)]


# --------------------------------------------------------------------------------- Compare


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("mode", sorted(CMP))
@pytest.mark.parametrize("memcheck", [False, True])
def test_compare_count_form_special_values(libs, dtype, mode, memcheck):
    for count in (lanes_of(dtype), SIZE):
        x, y, _, o = run(libs, 0, dtype, mode=mode, count=count, memcheck=memcheck)
        ref = pack(CMP[mode](x[:count], y[:count]))
        np.testing.assert_array_equal(o[: count // 8], ref)
        assert (o[count // 8 :] == 0xAB).all()


def test_compare_nan_and_signed_zero_semantics(libs):
    x = np.zeros(SIZE, F32)
    y = np.zeros(SIZE, F32)
    x[0], y[0] = np.nan, np.nan
    x[1], y[1] = 0.0, -0.0
    x[2], y[2] = np.nan, 1.0
    got = {m: run(libs, 0, F32, x=x, y=y, mode=m, count=64)[3][0] & 0b111 for m in CMP}
    # NaN == NaN false, NaN != NaN true, +0 == -0, NaN vs 1 only NE
    assert got == {0: 0b000, 1: 0b000, 2: 0b010, 3: 0b010, 4: 0b010, 5: 0b101}


def test_compare_bit_order_lsb_first(libs):
    x = np.zeros(SIZE, F16)
    x[[0, 3, 9, 127, 128]] = 1
    o = run(libs, 0, F16, x=x, y=np.zeros(SIZE, F16), mode=1, count=256)[3]
    assert list(o[:2]) == [0b00001001, 0b00000010] and o[15] == 0x80 and o[16] == 1


def compare_l0_ref(dtype, x, y, mode, repeat, strides, scalar=None):
    n = lanes_of(dtype)
    out = []
    for r in range(repeat):
        for k in range(n):
            a = x[elem(dtype, strides[1], strides[4], r, k)]
            b = (
                dtype(scalar)
                if scalar is not None
                else y[elem(dtype, strides[2], strides[5], r, k)]
            )
            out.append(CMP[mode](a, b))
    return pack(out)


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("strides", [DENSE, (5, 2, 1, 0, 16, 8), (1, 1, 3, 9, 0, 16)])
def test_compare_level0_every_lane_of_every_repeat(libs, dtype, strides):
    """The A2 Compare has no mask (reserved): every lane is compared, repeat r writes bytes
    [r*L/8, (r+1)*L/8) of dst whatever the dst strides are."""
    for op, kw in ((1, {"mask": 3}), (2, {"bits": (1, 1)})):
        for mode in (0, 5):
            x, y, _, o = run(libs, op, dtype, mode=mode, repeat=3, strides=strides, **kw)
            ref = compare_l0_ref(dtype, x, y, mode, 3, strides)
            np.testing.assert_array_equal(o[: len(ref)], ref)
            assert (o[len(ref) :] == 0xAB).all()
    _, _, _, o = run(libs, 1, dtype, repeat=0, mask=8)
    assert (o == 0xAB).all()


def test_compare_int32_eq(libs):
    x = special(I32, SIZE)
    y = special(I32, SIZE)
    o = run(libs, 0, I32, x=x, y=y, mode=2, count=128)[3]
    np.testing.assert_array_equal(o[:16], pack(x[:128] == y[:128]))
    o = run(libs, 1, I32, x=x, y=y, mode=2, repeat=2, mask=64)[3]
    np.testing.assert_array_equal(o[:16], pack(x[:128] == y[:128]))


def register_ref(dtype, x, y, mode, lanes, strides=DENSE):
    bits = np.zeros(128, bool)
    for k in lanes:
        a = x[elem(dtype, strides[1], strides[4], 0, k)]
        b = y[elem(dtype, strides[2], strides[5], 0, k)]
        bits[k] = CMP[mode](a, b)
    return pack(bits)


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("mode", sorted(CMP))
def test_compare_register_form_and_get_cmp_mask(libs, dtype, mode):
    lanes = lanes_of(dtype)
    bits = (0x8000_0000_0000_F00F, 0x0000_0001_FFFF_0003) if dtype == F16 else (0xF0F0_1234_8001, 0)
    cases = [
        (3, {"mask": lanes}, list(range(lanes))),
        (3, {"mask": 5}, list(range(5))),
        (4, {"bits": bits}, active(dtype, 0, bits)),
        (5, {"bits": bits}, active(dtype, 0, bits)),  # isSetMask = false: SetVectorMask
        (5, {"mask": lanes - 3}, list(range(lanes - 3))),
        (5, {"mask": 9, "counter": 1}, list(range(9))),  # Counter mode, one repeat
    ]
    for op, kw, act in cases:
        x, y, _, o = run(libs, op, dtype, mode=mode, **kw)
        np.testing.assert_array_equal(o[:16], register_ref(dtype, x, y, mode, act), str(kw))
        assert (o[16:] == 0xAB).all()
    strides = (1, 2, 3, 8, 8, 8)
    x, y, _, o = run(libs, 3, dtype, mode=mode, mask=lanes, strides=strides)
    np.testing.assert_array_equal(o[:16], register_ref(dtype, x, y, mode, range(lanes), strides))


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("mode", sorted(CMP))
def test_compares_every_form(libs, dtype, mode):
    for scalar in (0.5, -0.0, float("nan"), float("inf")):
        for op in (6, 9):  # Compares, CompareScalar (count form)
            x, _, _, o = run(libs, op, dtype, mode=mode, count=2 * lanes_of(dtype), scalar=scalar)
            n = 2 * lanes_of(dtype)
            np.testing.assert_array_equal(o[: n // 8], pack(CMP[mode](x[:n], dtype(scalar))))
            assert (o[n // 8 :] == 0xAB).all()
    strides = (1, 3, 0, 2, 16, 0)
    forms = ((7, {"mask": 1}), (8, {"bits": (5, 0)}), (14, {"mask": 1}), (15, {"bits": (5, 0)}))
    for op, kw in forms:  # Compares, then CompareScalar (the older name), level-0 forms
        x, y, _, o = run(libs, op, dtype, mode=mode, repeat=2, strides=strides, scalar=1.0, **kw)
        ref = compare_l0_ref(dtype, x, y, mode, 2, strides, scalar=1.0)
        np.testing.assert_array_equal(o[: len(ref)], ref)


def test_set_and_get_cmp_mask_round_trip(libs):
    z = RNG.integers(0, 256, MASK_BYTES).astype(np.uint8)
    o = run(libs, 10, F16, z=z)[3]
    np.testing.assert_array_equal(o[:16], z[:16])
    assert (o[16:] == 0xAB).all()
    o = run(libs, 12, F16, z=z)[3]  # 16-byte aligned views are documented operands
    np.testing.assert_array_equal(o[16:32], z[16:32])
    assert (o[:16] == 0xAB).all() and (o[32:] == 0xAB).all()


# ---------------------------------------------------------------------------------- Select

SEL0, SEL1, SEL2 = 0, 1, 2


def select_ref(dtype, x, y, z, d, mode, plan, strides=DENSE, scalar=None):
    """d after Select: plan = (repeats, lanes, last)."""
    reps, lanes, last = plan
    out = d.copy()
    n = lanes_of(dtype)
    for r in range(reps):
        for k in lanes[:last] if r == reps - 1 else lanes:
            i = k if mode == SEL0 else r * n + k
            a = x[elem(dtype, strides[1], strides[4], r, k)]
            b = (
                dtype(scalar)
                if scalar is not None
                else y[elem(dtype, strides[2], strides[5], r, k)]
            )
            out[elem(dtype, strides[0], strides[3], r, k)] = a if bit(z, i) else b
    return out


def count_plan(dtype, count):
    n = lanes_of(dtype)
    reps = -(-count // n)
    return reps, list(range(n)), count - (reps - 1) * n if reps else 0


def same_bits(a, b):
    u = np.uint16 if a.dtype == F16 else np.uint32
    np.testing.assert_array_equal(a.view(u), b.view(u))


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("count", [1, 7, 33, 513, 1024])
@pytest.mark.parametrize("mask_type", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_select_count_forms_bit_exact(libs, dtype, count, mask_type):
    fill = np.full(SIZE, -7.0, dtype)
    for mode in (SEL2, SEL0):
        x, y, z, o = run(libs, 20, dtype, mode=mode, count=count, mask_type=mask_type)
        same_bits(o, select_ref(dtype, x, y, z, fill, mode, count_plan(dtype, count)))
    for scalar in (2.5, float("nan")):
        x, y, z, o = run(libs, 21, dtype, mode=SEL1, count=count, scalar=scalar)
        same_bits(
            o, select_ref(dtype, x, y, z, fill, SEL1, count_plan(dtype, count), scalar=scalar)
        )


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("strides", [DENSE, (2, 1, 3, 16, 8, 16), (1, 0, 1, 4, 0, 9)])
def test_select_level0_forms(libs, dtype, strides):
    fill = np.full(SIZE, -7.0, dtype)
    lanes = lanes_of(dtype)
    bits = (0x8000_0000_0000_F00F, 0x0000_0001_FFFF_0003) if dtype == F16 else (0xF0F0_1234_8001, 0)
    for mode, ops in ((SEL0, (22, 23)), (SEL2, (22, 23)), (SEL1, (24, 25))):
        for op in ops:
            kw = {"mask": lanes - 7} if op in (22, 24) else {"bits": bits}
            act = active(dtype, kw.get("mask", 0), kw.get("bits", (0, 0)))
            x, y, z, o = run(libs, op, dtype, mode=mode, repeat=3, strides=strides, **kw)
            sc = 0.5 if mode == SEL1 else None
            ref = select_ref(dtype, x, y, z, fill, mode, (3, act, len(act)), strides, sc)
            same_bits(o, ref)


@pytest.mark.parametrize("dtype", [F16, F32])
def test_select_register_form_counter_mode(libs, dtype):
    """A form without a mask argument reads the mask register: in Counter mode it holds the
    element count (repeatTime ignored, the last repeat partial)."""
    fill = np.full(SIZE, -7.0, dtype)
    n = lanes_of(dtype) + 17
    x, y, z, o = run(libs, 26, dtype, repeat=1, mask=n, counter=1)
    same_bits(o, select_ref(dtype, x, y, z, fill, SEL0, count_plan(dtype, n)))


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("memcheck", [False, True])
def test_select_register_forms(libs, dtype, memcheck):
    fill = np.full(SIZE, -7.0, dtype)
    lanes = lanes_of(dtype)
    act = list(range(lanes - 5))
    kw = {"repeat": 3, "mask": lanes - 5, "memcheck": memcheck}
    # mode 0: SetCmpMask(selMask) -> the same lanes of selMask in every repeat
    x, y, z, o = run(libs, 26, dtype, **kw)
    same_bits(o, select_ref(dtype, x, y, z, fill, SEL0, (3, act, len(act))))
    # mode 2: CMPMASK holds the address of selMask (host pointer, or its low 32 bits)
    for variant in (0, 1):
        x, y, z, o = run(libs, 27, dtype, variant=variant, **kw)
        same_bits(o, select_ref(dtype, x, y, z, fill, SEL2, (3, act, len(act))))
    # mode 1: the scalar in CMPMASK
    for scalar in (1.25, float("nan")):
        x, y, z, o = run(libs, 28, dtype, scalar=scalar, **kw)
        same_bits(o, select_ref(dtype, x, y, z, fill, SEL1, (3, act, len(act)), scalar=scalar))


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("mode", sorted(CMP))
def test_register_compare_feeds_select_mode0(libs, dtype, mode):
    lanes = lanes_of(dtype)
    x, y, _, o = run(libs, 29, dtype, mode=mode, mask=lanes, repeat=1)
    same_bits(o[:lanes], np.where(CMP[mode](x[:lanes], y[:lanes]), x[:lanes], y[:lanes]))
    assert (o[lanes:] == -7).all()


# ------------------------------------------------------------------------- refused uses


def test_compare_refusals(libs):
    refused(libs, 0, F32, "count 32 * 4 bytes = 128 is not a multiple of 256 bytes", count=32)
    refused(libs, 0, F16, "count 100 * 2 bytes = 200", count=100)
    refused(
        libs,
        0,
        I32,
        "int32_t supports only CMPMODE::EQ on the Atlas A2 (910B), got CMPMODE::LT",
        count=64,
    )
    refused(libs, 1, I32, "got CMPMODE::GE", mode=4, mask=64)
    refused(libs, 0, I16, "Compare: int16_t sources are not supported on the Atlas A2", count=128)
    refused(libs, 6, I16, "Compares: int16_t sources are not supported", count=128)
    refused(
        libs, 0, F16, "Compare: a dst of int16_t is not supported", count=128, mask_type=np.int16
    )
    refused(
        libs,
        6,
        F16,
        "Compares: a dst of int8_t is not supported on the Atlas A2 (910B) (supported: uint8_t)",
        count=128,
        mask_type=np.int8,
    )
    run(libs, 0, F16, count=128, mask_type=np.int8)  # Compare: int8_t dst is documented
    refused(libs, 1, F16, "Compare: repeatTime 256 is outside [0, 255]", repeat=256, mask=8)
    refused(libs, 7, F32, "Compares: repeatTime 300 is outside [0, 255]", repeat=300, mask=8)
    refused(libs, 0, F16, "7 is not a CMPMODE", mode=7, count=128)
    # register form: half/float only, the lane mask ranges, one repeat
    refused(libs, 3, I32, "the register form (no dst) supports half and float", mode=2, mask=8)
    refused(libs, 3, F16, "Compare: mask 129 is outside [1, 128] for 16-bit elements", mask=129)
    refused(libs, 5, F32, "SetVectorMask: the high mask word must be 0", bits=(1, 1))
    refused(libs, 4, F16, "Compare: the bit mask selects no lane", bits=(0, 0))
    refused(libs, 5, F32, "the register form computes one repeat (64 lanes)", mask=65, counter=1)


def test_compare_operands_outside_their_tensors(libs):
    refused(libs, 0, F16, "src0 LocalTensor at UB offset", memory=True, count=2048)
    # 17 repeats of 16 mask bytes > the 256-byte dst (sources re-read with repeat stride 0)
    refused(
        libs,
        1,
        F16,
        "dst LocalTensor at UB offset",
        memory=True,
        repeat=17,
        mask=8,
        strides=(1, 1, 1, 8, 0, 0),
    )
    refused(libs, 1, F16, "src0 LocalTensor", memory=True, repeat=9, mask=8)
    refused(libs, 11, F32, "GetCmpMask: dst UB offset", memory=True, mask=8)  # not 16-byte aligned
    refused(
        libs, 13, F32, "GetCmpMask: dst LocalTensor at UB offset", memory=True, mask=8
    )  # 8 bytes


def test_select_refusals(libs):
    refused(
        libs,
        20,
        I32,
        "Select: int32_t is not supported on the Atlas A2 (910B) (supported: half, float)",
        mode=2,
        count=8,
    )
    refused(
        libs,
        20,
        F16,
        "Select: a selMask of int8_t is not supported",
        mode=2,
        count=8,
        mask_type=np.int8,
    )
    refused(
        libs,
        20,
        F32,
        "SELMODE::VSEL_TENSOR_SCALAR_MODE takes a scalar src1, not a tensor",
        mode=1,
        count=8,
    )
    refused(
        libs,
        21,
        F32,
        "a scalar src1 needs SELMODE::VSEL_TENSOR_SCALAR_MODE, got "
        "SELMODE::VSEL_TENSOR_TENSOR_MODE",
        mode=2,
        count=8,
    )
    refused(libs, 22, F32, "Select: 3 is not a SELMODE", mode=3, mask=8)
    refused(
        libs,
        30,
        F16,
        "Select<T, SELMODE::VSEL_TENSOR_SCALAR_MODE>(dst, src0, src1, ...) is not a "
        "documented form",
        mask=8,
    )
    refused(
        libs, 22, F16, "Select: mask 129 is outside [1, 128] for 16-bit elements", mode=2, mask=129
    )
    refused(
        libs, 24, F32, "Select: mask 65 is outside [1, 64] for 32-bit elements", mode=1, mask=65
    )
    refused(libs, 23, F16, "Select: the bit mask selects no lane", mode=0, bits=(0, 0))
    refused(libs, 22, F16, "Select: repeatTime 256 is outside [0, 255]", mode=2, repeat=256, mask=8)
    refused(libs, 26, F16, "Select: repeatTime 256 is outside [0, 255]", repeat=256, mask=8)
    refused(libs, 27, F16, "holds 0x7, not a UB address", variant=2, mask=8)
    # selMask, dst, sources too small (AccessError)
    big = {"repeat": 17, "mask": 8, "strides": (1, 1, 1, 0, 0, 0)}
    refused(libs, 22, F16, "selMask LocalTensor at UB offset", memory=True, mode=2, **big)
    run(libs, 22, F16, mode=0, **big)  # mode 0 re-reads the first 128 bits every repeat
    refused(
        libs,
        22,
        F16,
        "dst LocalTensor at UB offset",
        memory=True,
        mode=0,
        repeat=9,
        mask=8,
        strides=(1, 1, 1, 8, 0, 0),
    )
    refused(libs, 20, F32, "holds 1024 elements", memory=True, mode=2, count=1025)


# ------------------------------------------------------------------------- memory check


def test_memory_check_register_bits_outside_the_mask_are_undefined(libs):
    # all 128 lanes of a half compare: the register is fully defined
    run(libs, 3, F16, mask=128, memcheck=True)
    # masked-off lanes (and, for float, bits 64..127): undefined when copied out
    refused(libs, 3, F16, "read of uninitialised UB", memory=True, mask=100, memcheck=True)
    refused(libs, 3, F32, "read of uninitialised UB", memory=True, mask=64, memcheck=True)
    # Select mode 0 on lanes whose CMPMASK bit a register Compare did not write
    run(libs, 29, F16, mask=128, memcheck=True)


def test_memory_check_select_propagates_undefined_mask_bits(libs):
    # bits of a register compare with 10 active lanes select 10 defined lanes, the rest not
    refused(
        libs, 29, F32, "read of uninitialised UB", memory=True, count=10, mask=64, memcheck=True
    )
    run(libs, 29, F32, count=10, mask=10, memcheck=True)  # only lanes with written bits


# ---------------------------------------------------------------------- sample kernels


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("n", [1, 7, 33, 513, 4097])
@pytest.mark.parametrize("blocks", [1, 3])
@pytest.mark.parametrize("variant", [0, 1])
def test_sample_compare_select(libs, dtype, n, blocks, variant):
    x, y = special(dtype, n), special(dtype, n)
    thr, fill = 0.5, -3.0
    ref = np.where(x < y, x, y) if variant == 0 else np.where(x >= dtype(thr), x, dtype(fill))
    name = "sample_cmpsel_half" if dtype == F16 else "sample_cmpsel_float"
    for memcheck in (False, True):
        z = np.full(n, 99, dtype)
        k = CpuKernel(libs[memcheck], entry=f"pyasc_run_block_{name}")
        k.run(blocks, [x, y, z], struct.pack("<2I2f", n, variant, thr, fill))
        same_bits(z, ref.astype(dtype))
