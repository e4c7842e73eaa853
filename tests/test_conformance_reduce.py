"""Conformance of the CPU runtime's reductions and GatherMask with the documented semantics.

Kernels in ``tests/conformance/{reduce_ops,sample_whole_reduce,sample_reduce}.cpp``
(written here from the Ascend C API documentation, in the style of the public samples) are
built once into one library (and once more with memory check) and compared with the numpy
models of ``tests/reduce_reference.py``: WholeReduceSum/Max/Min (every ReduceOrder),
BlockReduceSum/Max/Min, PairReduceSum, ReduceSum/Max/Min (count and level-0 forms, calIndex),
the accessors; half and float, tails, NaN / +-inf / +-0; every documented limit refused.
GatherMask: tests/test_conformance_gather_mask.py.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import reduce_reference as ref
from cpu_run_helpers import shared_pch_cache
from reduce_reference import F16, F32, assert_bits, lanes_of

from pyasc_mlir.platform import get_platform
from pyasc_mlir.runtime.cpu import CpuKernel, KernelError, KernelMemoryError, build_library

PLATFORM = get_platform("910B2")
HERE = Path(__file__).resolve().parent / "conformance"
KERNEL_FILES = ["reduce_ops.cpp", "sample_whole_reduce.cpp", "sample_reduce.cpp"]
KERNELS = {
    "reduce_ops_kernel": 4,
    "whole_reduce_sum_custom": 4,
    "reduce_custom": 4,
}
ENTRY_CPP = "\n".join(
    ['#include "kernel_operator.h"']
    + [f'extern "C" void {k}({", ".join(["GM_ADDR"] * n)});' for k, n in KERNELS.items()]
    + [f"PYASC_CPU_ENTRY_NAMED({k})" for k in KERNELS]
    + ["PYASC_CPU_LAST_ERROR()", ""]
)


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    cache = shared_pch_cache(tmp_path_factory.mktemp("pyasc_cache"))
    sources = {name: (HERE / name).read_text() for name in KERNEL_FILES}
    sources["zz_entry.cpp"] = ENTRY_CPP
    return {
        mc: build_library(sources, PLATFORM, cache_dir=cache, memcheck=mc) for mc in (False, True)
    }


def kernel(libs, name, memcheck=False):
    return CpuKernel(libs[memcheck], entry=f"pyasc_run_block_{name}")


RNG = np.random.default_rng(909)
DT = {F16: 0, F32: 1}
FILL = -7.0
WHOLE_SUM, WHOLE_MAX, WHOLE_MIN, BLOCK_SUM, BLOCK_MAX, BLOCK_MIN, PAIR = range(7)
SUM_N, MAX_N, MIN_N, SUM_L0, MAX_L0, MIN_L0 = range(10, 16)
HALF_BITS = (0x8000_0000_0000_F00F, 0x0000_0001_FFFF_0003)
FLOAT_BITS = (0xF0F0_0000_1234_8001, 0)


def run_reduce(
    libs,
    op,
    dtype,
    x,
    *,
    form=0,
    repeat=2,
    mask=None,
    bits=(0, 0),
    dst_rep=1,
    src_blk=1,
    src_rep=8,
    order=0,
    cal_index=0,
    dsize=1024,
    work=4096,
    inputs=None,
    fill=True,
    dst_offset=0,
    memcheck=False,
):
    """Run one call of reduce_ops_kernel on x (loaded whole unless ``inputs``); returns dst."""
    mask = lanes_of(dtype) if mask is None else mask
    o = np.zeros(dsize, dtype)
    tiling = struct.pack(
        "<16i2Qfi",
        op,
        DT[dtype],
        form,
        repeat,
        len(x),
        dsize,
        work,
        len(x) if inputs is None else inputs,
        int(fill),
        mask,
        dst_rep,
        src_blk,
        src_rep,
        order,
        cal_index,
        dst_offset,
        *[int(b) for b in bits],
        FILL,
        0,
    )
    kernel(libs, "reduce_ops_kernel", memcheck).run(1, [x, o], tiling)
    return o


def data(dtype, n=4096, lo=-4.0, hi=4.0):
    return RNG.uniform(lo, hi, n).astype(dtype)


def special(dtype, n=4096):
    """Random data with NaN, +-inf, +-0 and subnormals sprinkled in."""
    x = data(dtype, n)
    sub = np.finfo(dtype).smallest_subnormal
    for v, k in ((np.nan, 3), (np.inf, 3), (-np.inf, 3), (0.0, 9), (-0.0, 9), (sub, 4)):
        x[RNG.choice(n, k, replace=False)] = v
    return x


# --------------------------------------------------------------------------- reference model


def per_repeat(dtype, op, x, p, src_blk, src_rep, dst, dst_rep, order, off):
    """dst after WholeReduce*/BlockReduce*/PairReduceSum (numpy model)."""
    out = dst.copy()
    raw = out.view(np.uint8)
    n, e = lanes_of(dtype), ref.block_of(dtype)
    size = np.dtype(dtype).itemsize
    for r in range(p[0]):
        got = ref.repeat_lanes(dtype, x, p, r, src_blk, src_rep)
        if op == WHOLE_SUM:
            out[off + r * dst_rep] = ref.tree(dtype, [got.get(k, 0.0) for k in range(n)], True)
        elif op in (WHOLE_MAX, WHOLE_MIN):
            ks = sorted(got)
            v, i = ref.fold([got[k] for k in ks], op == WHOLE_MAX)
            i = ks[i]
            unit = {0: 2 * size, 1: 2 * size, 2: size, 3: 4}[order]
            at = off * size + r * dst_rep * unit
            val = np.array([v], dtype).view(np.uint8)
            idx = np.array([i], np.uint16 if size == 2 else np.uint32).view(np.uint8)
            if order == 3:
                raw[at : at + 4] = np.array([i], np.uint32).view(np.uint8)
            elif order == 2:
                raw[at : at + size] = val
            else:
                first, second = (val, idx) if order == 0 else (idx, val)
                raw[at : at + size] = first
                raw[at + size : at + 2 * size] = second
        elif op in (BLOCK_SUM, BLOCK_MAX, BLOCK_MIN):
            for b in range(8):
                ks = [k for k in range(b * e, (b + 1) * e) if k in got]
                if not ks:
                    continue
                if op == BLOCK_SUM:
                    v = ref.tree(dtype, [got.get(k, 0.0) for k in range(b * e, (b + 1) * e)], True)
                else:
                    v, _ = ref.fold([got[k] for k in ks], op == BLOCK_MAX)
                out[off + r * dst_rep * 8 + b] = v
        else:  # PairReduceSum
            for j in range(n // 2):
                a, b = 2 * j in got, 2 * j + 1 in got
                if not (a or b):
                    continue
                v = (
                    ref.add(dtype, got[2 * j], got[2 * j + 1])
                    if a and b
                    else got[2 * j if a else 2 * j + 1]
                )
                out[off + r * dst_rep * (n // 2) + j] = v
    return out


def check_per_repeat(libs, op, dtype, x, **kw):
    o = run_reduce(libs, op, dtype, x, **kw)
    args = dict(
        form=0,
        repeat=2,
        mask=lanes_of(dtype),
        bits=(0, 0),
        dst_rep=1,
        src_blk=1,
        src_rep=8,
        order=0,
        dst_offset=0,
    )
    args.update({k: v for k, v in kw.items() if k in args})
    p = ref.plan(dtype, args["form"], args["mask"], args["bits"], args["repeat"])
    want = per_repeat(
        dtype,
        op,
        x,
        p,
        args["src_blk"],
        args["src_rep"],
        np.full(len(o), FILL, dtype),
        args["dst_rep"],
        args["order"],
        args["dst_offset"],
    )
    assert_bits(o, want)
    return o


PER_REPEAT_OPS = [WHOLE_SUM, WHOLE_MAX, WHOLE_MIN, BLOCK_SUM, BLOCK_MAX, BLOCK_MIN, PAIR]


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("op", PER_REPEAT_OPS)
def test_per_repeat_reductions_every_mask_form(libs, op, dtype):
    n = lanes_of(dtype)
    bits = HALF_BITS if dtype == F16 else FLOAT_BITS
    x = data(dtype)
    for mask in (n, n // 2 + 3, 1, n - 9):  # contiguous: all lanes, partial DataBlocks, one lane
        check_per_repeat(libs, op, dtype, x, mask=mask, repeat=3, dst_rep=2)
    check_per_repeat(libs, op, dtype, x, form=1, bits=bits, repeat=2)  # bit mask argument
    check_per_repeat(libs, op, dtype, x, form=2, bits=bits, repeat=4)  # mask register
    for count in (1, 7, 33, n + 33, 4 * n + 1):  # Counter mode: the last repeat partial
        check_per_repeat(libs, op, dtype, x, form=3, mask=count, repeat=0)
    o = check_per_repeat(libs, op, dtype, x, repeat=0)  # repeatTime 0 writes nothing
    assert (o == FILL).all()


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("op", PER_REPEAT_OPS)
@pytest.mark.parametrize("strides", [(1, 2, 8), (3, 1, 16), (0, 1, 4), (2, 3, 0)])
def test_per_repeat_reductions_strides(libs, op, dtype, strides):
    dst_rep, src_blk, src_rep = strides
    check_per_repeat(
        libs,
        op,
        dtype,
        data(dtype),
        mask=lanes_of(dtype) - 5,
        repeat=5,
        dst_rep=dst_rep,
        src_blk=src_blk,
        src_rep=src_rep,
    )


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("op", PER_REPEAT_OPS)
def test_per_repeat_reductions_special_values(libs, op, dtype):
    x = special(dtype)
    check_per_repeat(libs, op, dtype, x, repeat=4096 // lanes_of(dtype), dst_rep=2, dsize=8192)
    # a repeat of zeros of both signs, one of -0 only, one of +0 only
    z = np.zeros(4096, dtype)
    n = lanes_of(dtype)
    z[:n:3] = -0.0
    z[n : 2 * n] = -0.0
    check_per_repeat(libs, op, dtype, z, repeat=3)


@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("op", [WHOLE_MAX, WHOLE_MIN])
def test_whole_reduce_max_min_orders_ties_and_index_bits(libs, op, dtype, order):
    n = lanes_of(dtype)
    x = np.full(4096, 1.0, dtype)
    x[5], x[17] = 3.0, 3.0  # repeat 0: a tie for the max, first index 5
    x[n + 9], x[n + 40] = -2.0, -2.0  # repeat 1: a tie for the min, first index 9
    x[2 * n + 11] = np.nan  # repeat 2: NaN wins
    o = check_per_repeat(libs, op, dtype, x, repeat=3, order=order, dst_rep=1)
    u = o.view(np.uint16 if dtype == F16 else np.uint32)
    if order == 0:
        assert u[1] == (5 if op == WHOLE_MAX else 0) and u[5] == 11
    if order == 3:
        w = o.view(np.uint32)
        assert w[0] == (5 if op == WHOLE_MAX else 0) and w[1] == (0 if op == WHOLE_MAX else 9)


@pytest.mark.parametrize("op", [WHOLE_SUM, BLOCK_SUM])
def test_half_sums_saturate_at_65504_as_documented(libs, op):
    # the documented example [60000, 60000, -30000, 100]: 60000 + 60000 is stored as 65504,
    # -30000 + 100 = -29900, "65504 - 29900 = 35604". In fp16 -29900 is -29904 and
    # 65504 - 29904 = 35600 rounds (ties to even) to 35584; without the clamp it would be inf.
    x = np.zeros(4096, F16)
    x[:4] = [60000, 60000, -30000, 100]
    o = run_reduce(libs, op, F16, x, repeat=1, mask=4)
    assert o[0] == F16(35584) == F16(F32(65504) + F32(F16(-29900)))
    x[4:6] = np.inf  # an infinite operand is not clamped
    o = run_reduce(libs, op, F16, x, repeat=1, mask=8)
    assert o[0] == np.inf
    # PairReduceSum is IEEE (no clamp documented)
    o = run_reduce(libs, PAIR, F16, x, repeat=1, mask=2)
    assert o[0] == np.inf


# ----------------------------------------------------------------- ReduceSum / Max / Min


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("count", [1, 7, 33, 513, 4097])
def test_reduce_sum_max_min_count_form(libs, dtype, count):
    for x in (data(dtype, 8192, -1, 1), special(dtype, 8192)):
        o = run_reduce(libs, SUM_N, dtype, x, repeat=count)
        assert_bits(o[:1], np.array([ref.count_sum(dtype, x[:count])], dtype))
        for op in (MAX_N, MIN_N):
            o = run_reduce(libs, op, dtype, x, repeat=count, cal_index=1)
            v, i = ref.fold(x[:count], op == MAX_N)
            assert_bits(o[:2], np.array([v, ref.index_bits(dtype, i)], dtype))
            assert (o[2:] == FILL).all()


@pytest.mark.parametrize("dtype", [F16, F32])
def test_reduce_max_min_count_form_ties_and_zeros(libs, dtype):
    x = np.zeros(1024, dtype)
    x[[3, 600]] = -0.0
    x[[10, 700]] = 5.0
    for op, want in ((MAX_N, (5.0, 10)), (MIN_N, (-0.0, 0))):
        o = run_reduce(libs, op, dtype, x, repeat=1000, cal_index=1)
        assert_bits(o[:2], np.array([want[0], ref.index_bits(dtype, want[1])], dtype))
    x[:] = 0.0
    x[[3, 600]] = -0.0  # max of zeros: +0 (index 0); min: -0 (first zero, index 0)
    for op, v in ((MAX_N, 0.0), (MIN_N, -0.0)):
        o = run_reduce(libs, op, dtype, x, repeat=1000, cal_index=1)
        assert_bits(o[:2], np.array([v, ref.index_bits(dtype, 0)], dtype))


def level0_ref(dtype, op, x, p, src_rep):
    vals, offs, sums = [], [], []
    n = lanes_of(dtype)
    for r in range(p[0]):
        got = ref.repeat_lanes(dtype, x, p, r, 1, src_rep)
        sums.append(ref.tree(dtype, [got.get(k, 0.0) for k in range(n)]))
        for k in sorted(got):
            vals.append(got[k])
            offs.append(ref.elem(dtype, 1, src_rep, r, k))
    if op == SUM_L0:
        return np.array([ref.tree_of_repeats(dtype, sums)], dtype)
    v, i = ref.fold(vals, op == MAX_L0)
    return np.array([v, ref.index_bits(dtype, offs[i])], dtype)


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("op", [SUM_L0, MAX_L0, MIN_L0])
def test_reduce_level0_forms(libs, op, dtype):
    n = lanes_of(dtype)
    bits = HALF_BITS if dtype == F16 else FLOAT_BITS
    size = 300 * n
    for x in (data(dtype, size, -1, 1), special(dtype, size)):
        for form, mask, repeat, src_rep in (
            (0, n, 1, 8),
            (0, n - 3, 65, 8),
            (0, 7, 260, 8),
            (1, 0, 3, 16),
            (0, n, 129, 4),
        ):
            o = run_reduce(
                libs,
                op,
                dtype,
                x,
                form=form,
                mask=mask,
                bits=bits,
                repeat=repeat,
                src_rep=src_rep,
                cal_index=1,
            )
            want = level0_ref(dtype, op, x, ref.plan(dtype, form, mask, bits, repeat), src_rep)
            assert_bits(o[: len(want)], want)


@pytest.mark.parametrize("dtype", [F16, F32])
def test_reduce_sum_isSetMask_false_reads_the_mask_register(libs, dtype):
    bits = HALF_BITS if dtype == F16 else FLOAT_BITS
    x = data(dtype)
    o = run_reduce(libs, SUM_L0, dtype, x, form=2, bits=bits, repeat=5)
    assert_bits(o[:1], level0_ref(dtype, SUM_L0, x, ref.plan(dtype, 2, 0, bits, 5), 8))


# ------------------------------------------------------------------- sharedTmpBuffer sizes


def work_max_min(dtype, f, cal_index):
    """The documented sharedTmpBuffer minimum of ReduceMax/Min (elements), as computed by hand
    in the API reference's examples."""
    e, r = ref.block_of(dtype), lanes_of(dtype)
    up = lambda a, b: -(-a // b) * b  # noqa: E731
    a = up(2 * f, e)
    if not cal_index or 2 * f <= 2:
        return a
    o2 = up(2 * f, r) // r * 2
    if o2 <= 2:
        return a + up(o2, e)
    return a + up(o2, e) + up(up(o2, r) // r * 2, e)


def test_documented_work_examples():
    # the API reference's ReduceMax examples: 176, 544, 1056, 32, 1024 (no index), 288 elements
    assert work_max_min(F16, 65, True) == 176
    assert work_max_min(F16, 255, True) == 544
    assert work_max_min(F16, 65408 // 128, True) == 1056
    assert work_max_min(F16, 4, True) == 32
    assert work_max_min(F16, 65408 // 128, False) == 1024
    assert work_max_min(F32, 130, True) == 288


@pytest.mark.parametrize("dtype", [F16, F32])
def test_work_buffer_minimums_pass_and_one_less_is_refused(libs, dtype):
    n, e = lanes_of(dtype), ref.block_of(dtype)
    x = data(dtype, 8320)
    cases = [
        (SUM_N, 8320, None, 0, -(-max(1, 8320 // n) // e) * e),
        (SUM_N, 7, None, 0, e),
        (SUM_L0, 65, n, 0, -(-65 // e) * e),
        (MAX_N, 8320, None, 1, work_max_min(dtype, 8320 // n, True)),
        (MIN_N, 8320, None, 0, work_max_min(dtype, 8320 // n, False)),
        (MAX_L0, 65, n, 1, work_max_min(dtype, 65, True)),
        (MIN_L0, 4, n, 1, work_max_min(dtype, 4, True)),
    ]
    for op, repeat, mask, cal, need in cases:
        run_reduce(libs, op, dtype, x, repeat=repeat, mask=mask, cal_index=cal, work=need)
        with pytest.raises(
            KernelMemoryError, match=f"documented minimum for this call is {need} elements"
        ):
            run_reduce(libs, op, dtype, x, repeat=repeat, mask=mask, cal_index=cal, work=need - 1)


# ------------------------------------------------------------------------------ accessors


@pytest.mark.parametrize("dtype", [F16, F32])
def test_accessors(libs, dtype):
    x = data(dtype)
    o = run_reduce(libs, 20, dtype, x, repeat=513)  # GetReduceRepeatSumSpr after ReduceSum
    assert_bits(o[2:3], o[:1])
    assert_bits(o[:1], np.array([ref.count_sum(dtype, x[:513])], dtype))
    o = run_reduce(libs, 21, dtype, x, repeat=33)  # GetReduceMaxMinCount(value)
    assert_bits(o[2:3], np.array([x[:33].max()], dtype))


def refused(libs, needle, *args, memory=False, **kw):
    with pytest.raises(KernelMemoryError if memory else KernelError) as info:
        run_reduce(libs, *args, **kw)
    assert needle in str(info.value), str(info.value)


def test_accessor_misuse_is_refused(libs):
    x = data(F32)
    refused(libs, "the Atlas A2 cannot return an accurate index", 22, F32, x, repeat=64)
    refused(libs, "no count-form ReduceSum", 23, F32, x)
    refused(libs, "no count-form ReduceSum", 24, F32, x, repeat=2, mask=64)


# ---------------------------------------------------------------------------------- limits


@pytest.mark.parametrize("op", PER_REPEAT_OPS)
def test_per_repeat_limits_are_refused(libs, op):
    x = data(F16)
    refused(libs, "repeatTime 256 is outside [0, 255]", op, F16, x, repeat=256)
    refused(libs, "mask 129 is outside [1, 128] for 16-bit elements", op, F16, x, mask=129)
    refused(libs, "mask 65 is outside [1, 64] for 32-bit elements", op, F32, data(F32), mask=65)
    refused(libs, "mask 0 is outside [1, 64]", op, F32, data(F32), mask=0)
    refused(libs, "mask -3 is outside", op, F32, data(F32), mask=-3)
    refused(libs, "the bit mask selects no lane", op, F16, x, form=1, bits=(0, 0))
    # 32-bit elements read mask[0] only (documented array length 1): mask[1] selects nothing
    refused(libs, "the bit mask selects no lane", op, F32, data(F32), form=1, bits=(0, 1))
    refused(libs, "dstRepStride 256 is outside [0, 255]", op, F16, x, dst_rep=256)
    refused(libs, "srcRepStride 300 is outside [0, 255]", op, F16, x, src_rep=300)
    # source / destination too small for the repeats and strides
    refused(libs, "exceeds it", op, F16, x[:512], repeat=5, memory=True)
    refused(
        libs,
        "the call writes",
        op,
        F16,
        x,
        repeat=200,
        dst_rep=40,
        src_rep=0,
        dsize=64,
        memory=True,
    )


def test_destination_alignment_is_refused(libs):
    x = data(F16)
    # WholeReduceSum needs 2-byte (half) alignment only: an odd element offset is fine
    check_per_repeat(libs, WHOLE_SUM, F16, x, repeat=3, dst_offset=1)
    # [value, index] needs 4 bytes (half): offset 1 element = 2 bytes is refused
    refused(libs, "is not 4-byte aligned", WHOLE_MAX, F16, x, dst_offset=1, memory=True)
    refused(libs, "is not 16-byte aligned", BLOCK_SUM, F16, x, dst_offset=4, memory=True)
    refused(libs, "is not 32-byte aligned", PAIR, F32, data(F32), dst_offset=4, memory=True)


def test_reduce_limits_are_refused(libs):
    x = data(F32)
    refused(libs, "count must be positive, got 0", SUM_N, F32, x, repeat=0)
    refused(libs, "count must be positive, got -1", MAX_N, F32, x, repeat=-1)
    refused(libs, "negative repeatTime -2", SUM_L0, F32, x, repeat=-2, mask=64)
    refused(libs, "repeatTime 0 leaves no element", MAX_L0, F32, x, repeat=0, mask=64)
    refused(libs, "modelled in Normal mode only", SUM_L0, F32, x, form=3, mask=64, repeat=1)
    refused(libs, "mask 65 is outside [1, 64]", MIN_L0, F32, x, mask=65, repeat=1)
    # half indices go up to 65535 (documented)
    big = np.ones(65552, F16)
    refused(
        libs,
        "supports indices up to 65535 only",
        MAX_N,
        F16,
        big,
        repeat=65537,
        cal_index=1,
        dsize=16,
        work=2048,
    )
    run_reduce(libs, MAX_N, F16, big, repeat=65536, cal_index=1, dsize=16, work=2048)
    run_reduce(libs, MAX_N, F16, big, repeat=65537, cal_index=0, dsize=16, work=2048)


# ----------------------------------------------------------------------------- memory check


def test_memory_check(libs):
    x = data(F16)
    n = lanes_of(F16)
    # all written: fine; masked-off lanes propagate, so a partially read DataBlock is still ok
    run_reduce(libs, WHOLE_SUM, F16, x, repeat=4, dsize=16, fill=True, memcheck=True)
    # BlockReduce leaves DataBlocks without an active lane alone: copying dst out reads them
    with pytest.raises(KernelMemoryError, match="read of uninitialised UB"):
        run_reduce(libs, BLOCK_MAX, F16, x, mask=20, repeat=1, dsize=16, fill=False, memcheck=True)
    # a result from an unwritten source lane is undefined; the scalar reductions report it
    with pytest.raises(KernelMemoryError, match="read of uninitialised UB"):
        run_reduce(libs, WHOLE_SUM, F16, x, repeat=2, dsize=16, inputs=n, memcheck=True)
    with pytest.raises(KernelMemoryError, match="src element 128"):
        run_reduce(libs, SUM_L0, F16, x, repeat=2, inputs=n, memcheck=True)
    with pytest.raises(KernelMemoryError, match="read of uninitialised UB"):
        run_reduce(libs, MAX_N, F16, x, repeat=n + 1, inputs=n, memcheck=True)


# ------------------------------------------------------------------- sample-style kernels


def test_sample_whole_reduce_sum_with_datacopypad(libs):
    """Unaligned rows: DataCopyPad in (pad to 32 B), WholeReduceSum per row, DataCopyPad out."""
    for dtype, rows, cols in ((F16, 7, 33), (F16, 5, 1), (F32, 3, 7), (F32, 4, 50), (F16, 2, 127)):
        x = data(dtype, rows * cols, -2, 2)
        o = np.zeros(rows, dtype)
        tiling = struct.pack("<4i", DT[dtype], rows, cols, 0)
        for mc in (False, True):
            kernel(libs, "whole_reduce_sum_custom", mc).run(1, [x, o], tiling)
            n = lanes_of(dtype)
            want = [
                ref.tree(dtype, (list(x[r * cols : (r + 1) * cols]) + [0.0] * n)[:n], True)
                for r in range(rows)
            ]
            assert_bits(o, np.array(want, dtype))


def test_sample_reduce_sum_max_min(libs):
    """ReduceSum / ReduceMax / ReduceMin as the samples write them (count form, calIndex)."""
    for dtype, count in ((F16, 1), (F16, 513), (F32, 33), (F32, 4097), (F16, 4097)):
        x = special(dtype, 8192) if count > 100 else data(dtype, 8192)
        o = np.zeros(8 * 16 // np.dtype(dtype).itemsize, dtype)
        tiling = struct.pack("<4i", DT[dtype], count, 0, 0)
        for mc in (False, True):
            kernel(libs, "reduce_custom", mc).run(1, [x, o], tiling)
            e = ref.block_of(dtype)
            assert_bits(o[:1], np.array([ref.count_sum(dtype, x[:count])], dtype))
            for slot, is_max in ((1, True), (2, False)):
                v, i = ref.fold(x[:count], is_max)
                assert_bits(
                    o[slot * e : slot * e + 2], np.array([v, ref.index_bits(dtype, i)], dtype)
                )


def test_unsupported_element_types_do_not_compile():
    import subprocess

    from pyasc_mlir.platform import header_defines
    from pyasc_mlir.runtime.cpu import INCLUDE_DIR

    src = HERE / "reduce_type_errors.cpp"
    cmd = ["g++", "-std=c++17", "-fsyntax-only", f"-I{INCLUDE_DIR}", *header_defines(PLATFORM)]
    proc = subprocess.run([*cmd, str(src)], capture_output=True, text=True)
    assert proc.returncode != 0
    bad = [i for i, line in enumerate(src.read_text().splitlines(), 1) if "// ERR" in line]
    assert len(bad) == 7
    for line in bad:
        assert f"reduce_type_errors.cpp:{line}:" in proc.stderr, proc.stderr
    for needle in ("needs half or float", "src1Pattern must be uint16_t", "unsupported element"):
        assert needle in proc.stderr, proc.stderr
