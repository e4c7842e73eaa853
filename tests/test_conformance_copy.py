"""Conformance of the CPU runtime's data movement with the documented Ascend C API.

The kernels in ``tests/conformance/copy_*.cpp`` were written here from the Ascend C API
documentation (docs/CPU_RUNTIME.md, "Copies", lists the forms and sources). They are built once
into one library (and once more with memory check) and compared with numpy models of the
documented semantics: ``DataCopy`` with ``DataCopyParams`` (GM->UB, UB->GM, UB->UB, strides),
``DataCopyPad`` both ways with padding, ``isPad``, ``SetPadValue`` and strides, the queue rules,
``LocalMemAllocator``, GM accesses past the ``SetGlobalBuffer`` size, sample-style kernels
("DataCopyPad + Adds", an unaligned Abs, a kernel sized from ``GetCoreMemSize(UB)``), and every
documented limit refused.
"""

from __future__ import annotations

import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
from cpu_run_helpers import shared_pch_cache

from pyasc_mlir.platform import (
    MAX_BLOCK_COUNT,
    MAX_PAD_BLOCK_LEN_BYTES,
    MAX_QUE_BUFFERS,
    get_platform,
)
from pyasc_mlir.runtime.cpu import (
    CpuKernel,
    GlobalBoundsWarning,
    KernelError,
    KernelMemoryError,
    build_library,
)

PLATFORM = get_platform("910B2")
HERE = Path(__file__).resolve().parent / "conformance"
KERNEL_FILES = ["copy_forms.cpp", "copy_samples.cpp"]
KERNELS = {"copy_kernel": 4, "pad_adds_kernel": 4, "abs_unaligned_kernel": 4, "ub_full_kernel": 4}
ENTRY_CPP = "\n".join(
    ['#include "kernel_operator.h"']
    + [f'extern "C" void {k}({", ".join(["GM_ADDR"] * n)});' for k, n in KERNELS.items()]
    + [f"PYASC_CPU_ENTRY_NAMED({k})" for k in KERNELS]
    + ["PYASC_CPU_LAST_ERROR()", ""]
)
BUF = 4096  # bytes of every UB buffer of copy_kernel
GM_BYTES = 4 * BUF  # bytes of the x and o arrays (the size copy_kernel gives SetGlobalBuffer)
F16, F32, BF16 = np.float16, np.float32, "bf16"
DT = {F16: 0, F32: 1, BF16: 2}
RNG = np.random.default_rng(99)


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


def itemsize(dt) -> int:
    return 2 if dt in (F16, BF16) else 4


def data(dt, n: int) -> np.ndarray:
    """n random elements; bf16 as uint16 bit patterns (the upper half of a float32)."""
    v = RNG.uniform(-8, 8, n).astype(F32)
    if dt == BF16:
        return (v.view(np.uint32) >> 16).astype(np.uint16)
    return v.astype(dt)


def const(dt, value: float):
    """value as an element of dt (bf16 as its bit pattern, exact for the values used here)."""
    if dt == BF16:
        return np.uint16(np.array([value], F32).view(np.uint32)[0] >> 16)
    return dt(value)


def storage(dt):
    return np.uint16 if dt == BF16 else dt


def run(libs, op, dt, a=(), fv=-7.0, x=None, memcheck=False, out=None):
    """Run copy_kernel case ``op``; returns (x, o) with o in the element dtype."""
    n = GM_BYTES // itemsize(dt)
    x = data(dt, n) if x is None else x
    o = np.zeros(n, storage(dt)) if out is None else out
    args = list(a) + [0] * (12 - len(a))
    tiling = struct.pack("<14if", op, DT[dt], *args, fv)
    kernel(libs, "copy_kernel", memcheck).run(1, [x, o], tiling)
    return x, o


def blocks_model(src, dst, count, length, src_step, dst_step):
    """dst after copying ``count`` blocks of ``length`` elements, block k from
    src[k*src_step:] to dst[k*dst_step:] (element units)."""
    out = dst.copy()
    for k in range(count):
        out[k * dst_step : k * dst_step + length] = src[k * src_step : k * src_step + length]
    return out


DTYPES = [F16, F32, BF16]


# ---------------------------------------------------------------- DataCopy with DataCopyParams

PARAMS = [(1, 1, 0, 0), (3, 2, 1, 4), (7, 1, 3, 0), (5, 3, 0, 2), (33, 1, 1, 1)]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("p", PARAMS)
def test_datacopy_params_gm_to_ub_layout(libs, dt, p):
    count, blen, ss, ds = p
    e = 32 // itemsize(dt)  # elements per DataBlock
    x, o = run(libs, 1, dt, a=p)
    ub = np.full(BUF // itemsize(dt), const(dt, -7.0), storage(dt))
    ub = blocks_model(x, ub, count, blen * e, (blen + ss) * e, (blen + ds) * e)
    expect = np.zeros_like(o)
    expect[: len(ub)] = ub
    np.testing.assert_array_equal(o, expect)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("p", PARAMS)
def test_datacopy_params_round_trip_with_gm_strides(libs, dt, p):
    count, blen, ss, ds = p
    os_ = 2  # GM gap of the copy out, DataBlocks
    e = 32 // itemsize(dt)
    for memcheck in (False, True):
        x, o = run(libs, 0, dt, a=(*p, os_), memcheck=memcheck)
        ub = blocks_model(
            x, np.zeros(BUF, storage(dt)), count, blen * e, (blen + ss) * e, (blen + ds) * e
        )
        expect = blocks_model(
            ub, np.zeros_like(o), count, blen * e, (blen + ds) * e, (blen + os_) * e
        )
        np.testing.assert_array_equal(o, expect)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("p", PARAMS)
def test_datacopy_params_ub_to_ub(libs, dt, p):
    count, blen, ss, ds = p
    e = 32 // itemsize(dt)
    x, o = run(libs, 2, dt, a=p, memcheck=True)
    n = BUF // itemsize(dt)
    ub = blocks_model(
        x[:n],
        np.full(n, const(dt, -7.0), storage(dt)),
        count,
        blen * e,
        (blen + ss) * e,
        (blen + ds) * e,
    )
    np.testing.assert_array_equal(o[:n], ub)
    assert (o[n:] == 0).all()


# ------------------------------------------------------------------------------- DataCopyPad


def round32(n: int) -> int:
    return -(-n // 32) * 32


def pad_gm_to_ub_model(x, dt, count, blen, ss, ds, is_pad, left, right, fv, pad_reg, fill):
    """The UB buffer after DataCopyPad GM->UB (docs/CPU_RUNTIME.md, "Copies"), bytes."""
    sz = itemsize(dt)
    ub = np.full(BUF // sz, const(dt, -7.0) if fill else 0, storage(dt))
    ubb, xb = ub.view(np.uint8), x.view(np.uint8)
    block = round32((left + right) * sz + blen)
    value = fv if is_pad else pad_reg
    for k in range(count):
        at = k * (block + ds * 32)
        ubb[at + left * sz : at + left * sz + blen] = xb[k * (blen + ss) : k * (blen + ss) + blen]
        if value is not None:
            padding = np.r_[0:left, (left * sz + blen) // sz : block // sz] + at // sz
            ub[padding] = const(dt, value)
    return ub


PAD_CASES = [
    # count, blockLen bytes (in elements below), srcStride bytes, dstStride blocks, left, right
    (1, 1, 0, 0, 0, 0),
    (1, 7, 0, 0, 0, 0),
    (3, 7, 6, 1, 0, 3),
    (4, 33, 0, 0, 2, 1),
    (2, 16, 8, 2, 1, 0),
    (5, 3, 2, 0, 4, 4),
]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("case", PAD_CASES)
@pytest.mark.parametrize("mode", ["isPad", "SetPadValue", "none", "isPad+SetPadValue"])
def test_datacopypad_gm_to_ub(libs, dt, case, mode):
    count, n, ss_el, ds, left, right = case
    sz = itemsize(dt)
    blen, ss = n * sz, ss_el * sz
    is_pad = mode.startswith("isPad")
    reg = 5 if "SetPadValue" in mode else None
    a = (count, blen, ss, ds, int(is_pad), left, right, int(reg is not None), reg or 0, 0)
    x, o = run(libs, 3, dt, a=a, fv=2.5)
    ub = pad_gm_to_ub_model(x, dt, count, blen, ss, ds, is_pad, left, right, 2.5, reg, True)
    np.testing.assert_array_equal(o[: len(ub)], ub)


def test_datacopypad_fill_of_an_unaligned_block_without_pads(libs):
    # 7 halves (14 bytes), both pads 0: the rest of the 32-byte block (9 elements) is padding
    for dt in (F16, F32):
        n = 7
        _, o = run(libs, 3, dt, a=(1, n * itemsize(dt), 0, 0, 1, 0, 0, 0, 0, 0), fv=3.0)
        e = 32 // itemsize(dt)
        assert (o[n:e] == dt(3.0)).all() and (o[e : 2 * e] == dt(-7.0)).all()
        # isPad false and no SetPadValue: the documented fill is unspecified ("random"); the
        # CPU model leaves UB as it was (-7 here)
        _, o = run(libs, 3, dt, a=(1, n * itemsize(dt), 0, 0, 0, 0, 0, 0, 0, 0), fv=3.0)
        assert (o[n:e] == dt(-7.0)).all()


def test_datacopypad_padding_definedness_in_memory_check(libs):
    # no fill first: without isPad or SetPadValue the padding stays undefined, so copying the
    # whole buffer out reads uninitialised UB; with either it is defined
    a = [1, 14, 0, 0, 0, 0, 0, 0, 0, 1]
    with pytest.raises(KernelMemoryError, match=r"DataCopy\(UB->GM\): read of uninitialised UB"):
        run(libs, 3, F16, a=a, memcheck=True)
    # a whole 4 KiB buffer: make the copy cover it (128 blocks of 32 B, pads define the rest)
    full = [BUF // 32, 14, 0, 0, 1, 0, 0, 0, 0, 1]
    _, o = run(libs, 3, F16, a=full, fv=1.0, memcheck=True)
    assert (o[7:16] == 1).all()
    full_reg = [BUF // 32, 14, 0, 0, 0, 0, 0, 1, 9, 1]
    _, o = run(libs, 3, F16, a=full_reg, memcheck=True)
    assert (o[7:16] == 9).all()


UB_TO_GM_CASES = [(1, 1, 0, 0), (1, 7, 0, 0), (3, 7, 1, 5), (4, 33, 0, 0), (6, 5, 2, 3)]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("case", UB_TO_GM_CASES)
def test_datacopypad_ub_to_gm(libs, dt, case):
    count, n, ss, ds_el = case
    sz = itemsize(dt)
    blen, ds = n * sz, ds_el * sz
    for memcheck in (False, True):
        o0 = np.full(GM_BYTES // sz, const(dt, -3.0), storage(dt))
        x, o = run(libs, 4, dt, a=(count, blen, ss, ds), memcheck=memcheck, out=o0)
        expect = o0.copy()
        ub_step = (round32(blen) + ss * 32) // sz
        expect = blocks_model(
            x[: BUF // sz], np.full_like(o0, const(dt, -3.0)), count, n, ub_step, n + ds_el
        )
        np.testing.assert_array_equal(o, expect)


# ------------------------------------------------------------------------ documented limits


def refused(libs, op, a, needle, dt=F32, memory=False, memcheck=False):
    with pytest.raises(KernelMemoryError if memory else KernelError) as info:
        run(libs, op, dt, a=a, memcheck=memcheck)
    assert needle in str(info.value), str(info.value)
    return info.value


@pytest.mark.parametrize("direction", [0, 1, 2])
def test_datacopy_params_ranges_are_refused(libs, direction):
    top = MAX_BLOCK_COUNT
    refused(libs, 6, (direction, 0, 1, 0, 0), "blockCount 0 is outside [1, 4095]")
    refused(libs, 6, (direction, top + 1, 1, 0, 0), f"blockCount {top + 1} is outside [1, {top}]")
    refused(libs, 6, (direction, 1, 0, 0, 0), "blockLen 0 is outside [1, 65535]")
    refused(libs, 6, (direction, 1, 65536, 0, 0), "blockLen 65536 is outside [1, 65535]")
    refused(libs, 6, (direction, 1, 1, 65536, 0), "srcStride 65536 is outside [0, 65535]")
    refused(libs, 6, (direction, 1, 1, 0, 70000), "dstStride 70000 is outside [0, 65535]")
    # in range but past the 4 KiB buffer: an access error naming the operand
    refused(libs, 6, (direction, 2, 65, 0, 0), "exceeds it", memory=True)


@pytest.mark.parametrize("direction", [3, 4])
def test_datacopypad_ranges_are_refused(libs, direction):
    top, big = MAX_BLOCK_COUNT, MAX_PAD_BLOCK_LEN_BYTES
    refused(libs, 6, (direction, top + 1, 4), f"blockCount {top + 1} is outside [0, {top}]")
    refused(libs, 6, (direction, 1, big + 1), f"blockLen {big + 1} is outside [0, {big}]")
    refused(libs, 6, (direction, 1, 6), "blockLen 6 bytes is not a multiple of 4")
    if direction == 3:
        refused(libs, 6, (3, 1, 4, 9, 0), "leftPadding/rightPadding (36/0 bytes) exceed 32 bytes")
        refused(libs, 6, (3, 1, 4, 0, 9), "(0/36 bytes) exceed 32 bytes")
    # blockCount 0 moves nothing (the documented range starts at 0)
    _, o = run(libs, 6, F32, a=(direction, 0, 4))
    assert (o == 0).all()


def test_datacopy_needs_a_32_byte_aligned_ub_operand(libs):
    refused(libs, 6, (5, 1, 1, 0, 0), "dst UB offset 4 is not 32-byte aligned", memory=True)


def test_datacopy_positions_are_checked(libs):
    refused(libs, 9, (), "dst at UB offset 0 is in a TPosition::VECIN buffer; a UB->UB DataCopy")
    refused(libs, 10, (), "SetPadValue was given a 1-byte value, the copy moves 4-byte elements")


# ------------------------------------------------------------------------------ queue rules


def test_queue_depth_and_buffers(libs):
    o = run(libs, 5, F32, a=(1,))[1].view(np.int32)
    assert o[0] == 1  # two EnQue in a row on a depth-2 queue
    refused(libs, 5, (0,), "TQue::EnQue: 1 tensors are already enqueued and the queue's depth is 1")
    refused(libs, 5, (2,), "TQue::DeQue: queue is empty")
    refused(libs, 5, (3,), "TQue::AllocTensor: buffer 0 of 1 (UB offset 0) was not freed yet")
    refused(libs, 5, (4,), "TQue::FreeTensor: tensor at UB offset 64 does not belong to this queue")
    refused(libs, 5, (5,), "TQue::EnQue: tensor at UB offset 64 does not belong to this queue")


def test_initbuffer_buffer_count_limits(libs):
    top = MAX_QUE_BUFFERS
    o = run(libs, 5, F32, a=(6, top - 1, 1))[1].view(np.int32)
    assert o[0] == 1  # exactly the documented 64 buffers
    refused(libs, 5, (6, top - 1, 2), f"{top + 1} queue buffers in this kernel; at most {top}")
    refused(libs, 5, (7, 256), "buffer count 256 does not fit the uint8_t num")


# ------------------------------------------------------------------------ LocalMemAllocator


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", [16, 33, 256])
def test_local_mem_allocator(libs, dt, n):
    x, o = run(libs, 7, dt, a=(0, n), memcheck=True)
    moved = n * itemsize(dt) // 32 * 32 // itemsize(dt)  # DataCopy rounds down to DataBlocks
    info = o.view(np.int32)[-3:]
    assert info[0] == 0  # the first allocation starts at UB 0
    assert info[1] == round32(n * itemsize(dt)) // itemsize(dt)  # the next a DataBlock on
    assert info[2] == round32(n * itemsize(dt)) + round32(256 * itemsize(dt))
    np.testing.assert_array_equal(o[:moved], x[:moved])
    assert (o[moved : -12 // itemsize(dt)] == 0).all()


def test_local_mem_allocator_limits(libs):
    ub = PLATFORM.ub_kernel_bytes
    o = run(libs, 7, F32, a=(1, ub // 4 - 8, 8))[1].view(np.int32)
    assert o[0] == ub  # the whole UB GetCoreMemSize reports
    refused(
        libs, 7, (1, ub // 4 - 8, 9), f"only {ub} bytes are available (GetCurAddr() = {ub - 32})"
    )
    refused(libs, 7, (2,), "LocalMemAllocator: a TPipe exists in this block")
    refused(libs, 7, (3,), "TPipe: a LocalMemAllocator was constructed in this block")


# ------------------------------------------ GM past the SetGlobalBuffer size (no false positive)


def test_gm_past_the_global_buffer_size_inside_the_allocation(libs):
    # x is given 8 floats but the host allocated 4096: reading 64 (and element 100) is legal on
    # the hardware. Normal build: silent. Memory check: a GlobalBoundsWarning per access.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, o = run(libs, 8, F32, a=(8, 64, 100))
    np.testing.assert_array_equal(o[:64], x[:64])
    assert o[64] == x[100]
    with pytest.warns(GlobalBoundsWarning) as caught:
        x, o = run(libs, 8, F32, a=(8, 64, 100), memcheck=True)
    np.testing.assert_array_equal(o[:64], x[:64])
    texts = [str(w.message) for w in caught]
    assert any(
        "DataCopy(GM->UB): src GlobalTensor was given 32 bytes by SetGlobalBuffer, access up to "
        "byte 256 is past it"
        in t
        and "in block 0" in t
        for t in texts
    ), texts
    assert any("GlobalTensor::GetValue" in t and "up to byte 404" in t for t in texts), texts
    # within the size: no report
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(libs, 8, F32, a=(64, 64, 10), memcheck=True)


def test_gm_past_the_host_allocation_is_refused(libs):
    n = GM_BYTES // 4
    # element n is one past the array the host allocated (the output array is elsewhere)
    for memcheck in (False, True):
        with pytest.raises(
            KernelMemoryError,
            match=r"GlobalTensor::GetValue: index 4096 out of "
            r"range for 8 elements",
        ):
            run(libs, 8, F32, a=(8, 8, n), memcheck=memcheck)
    # a copy that leaves the allocation: refused with the SetGlobalBuffer size in the message
    x = np.zeros(64, F32)  # a small host array: 256 bytes
    with pytest.raises(
        KernelMemoryError,
        match=r"DataCopy\(GM->UB\): src GlobalTensor holds 128 "
        r"bytes, access up to byte 512 exceeds it",
    ):
        run(libs, 8, F32, a=(32, 128, 0), x=x)


# ---------------------------------------------------------------- kernels as samples write them


@pytest.mark.parametrize("dt", [F16, F32])
@pytest.mark.parametrize("rows,cols", [(1, 1), (7, 7), (33, 33), (5, 513), (3, 4097)])
def test_sample_datacopypad_adds(libs, dt, rows, cols):
    tile_rows = max(1, min(4, 60000 // (round32(cols * itemsize(dt)) * 2 * 2)))
    x = RNG.uniform(-4, 4, rows * cols).astype(dt)
    y = np.full(rows * cols, -9, dt)
    tiling = struct.pack("<3Iif", rows, cols, tile_rows, DT[dt], 1.25)
    for memcheck in (False, True):
        y[:] = -9
        kernel(libs, "pad_adds_kernel", memcheck).run(3, [x, y], tiling)
        np.testing.assert_array_equal(y, (x.astype(F32) + F32(dt(1.25))).astype(dt))


@pytest.mark.parametrize("dt", [F16, F32])
@pytest.mark.parametrize("total", [1, 7, 33, 513, 4097])
def test_sample_unaligned_abs(libs, dt, total):
    x = RNG.uniform(-4, 4, total).astype(dt)
    x[: min(total, 3)] = [-0.0, np.inf, -np.nan][: min(total, 3)]
    z = np.full(total, 5, dt)
    for memcheck in (False, True):
        z[:] = 5
        kernel(libs, "abs_unaligned_kernel", memcheck).run(
            4, [x, z], struct.pack("<2Ii", total, 256, DT[dt])
        )
        np.testing.assert_array_equal(z.view(np.uint8), np.abs(x).view(np.uint8))


def test_kernel_sized_from_get_core_mem_size_fits(libs):
    ub = PLATFORM.ub_kernel_bytes  # what GetCoreMemSize(CoreMemType::UB) reports on a 910B
    assert ub == PLATFORM.ub_bytes - 256
    n = 3 * (ub // 4 // 4) + 64  # several tiles, a partial last one
    n -= n % 8
    x = RNG.uniform(-4, 4, n).astype(F32)
    y = np.zeros(n, F32)
    kernel(libs, "ub_full_kernel").run(1, [x, y], struct.pack("<QI", ub, n))
    np.testing.assert_array_equal(y, x * 2)
    # one DataBlock more per buffer does not fit
    with pytest.raises(KernelError, match=f"UB overflow: need {ub + 128} bytes, usable {ub}"):
        kernel(libs, "ub_full_kernel").run(1, [x, y], struct.pack("<QI", ub + 4 * 32, n))
