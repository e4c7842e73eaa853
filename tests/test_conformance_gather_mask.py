"""Conformance of the CPU runtime's GatherMask with the documented semantics.

``tests/conformance/gather_mask.cpp`` (written here from the GatherMask page of the Ascend C API
reference) is built once (and once more with memory check) and compared with the numpy model
``reduce_reference.gather_mask``: the built-in patterns 1..7 and user uint16/uint32 pattern
tensors, reduceMode false (Normal) and true (Counter), GatherMaskParams strides, rsvdCnt and
GetGatherMaskRemainCount, for half, float, uint16, int16, uint32, int32; bits moved unchanged;
every documented limit refused. Semantics and sources: docs/CPU_RUNTIME.md, "GatherMask".
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import reduce_reference as ref
from cpu_run_helpers import shared_pch_cache
from reduce_reference import F16, F32, assert_bits

from pyasc_mlir.platform import get_platform
from pyasc_mlir.runtime.cpu import CpuKernel, KernelError, KernelMemoryError, build_library

PLATFORM = get_platform("910B2")
HERE = Path(__file__).resolve().parent / "conformance"
ENTRY_CPP = """#include "kernel_operator.h"
extern "C" void gather_mask_kernel(GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR);
PYASC_CPU_ENTRY_NAMED(gather_mask_kernel)
PYASC_CPU_LAST_ERROR()
"""


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    cache = shared_pch_cache(tmp_path_factory.mktemp("pyasc_cache"))
    sources = {"gather_mask.cpp": (HERE / "gather_mask.cpp").read_text(), "zz_entry.cpp": ENTRY_CPP}
    return {
        mc: build_library(sources, PLATFORM, cache_dir=cache, memcheck=mc) for mc in (False, True)
    }


def kernel(libs, name, memcheck=False):
    return CpuKernel(libs[memcheck], entry=f"pyasc_run_block_{name}")


RNG = np.random.default_rng(4242)


def special(dtype, n):
    """Random data with NaN, +-inf, +-0 and subnormals sprinkled in."""
    x = RNG.uniform(-4.0, 4.0, n).astype(dtype)
    sub = np.finfo(dtype).smallest_subnormal
    for v, k in ((np.nan, 3), (np.inf, 3), (-np.inf, 3), (0.0, 9), (-0.0, 9), (sub, 4)):
        x[RNG.choice(n, k, replace=False)] = v
    return x


# ------------------------------------------------------------------------------ GatherMask

GM_TYPES = {F16: 0, F32: 1, np.uint16: 2, np.int16: 3, np.uint32: 4, np.int32: 5}


def run_gather(
    libs,
    dtype,
    x,
    pattern=1,
    *,
    pbits=None,
    reduce_mode=0,
    mask=0,
    params=(1, 1, 0, 0),
    fill=True,
    counter_before=0,
    accessor_only=0,
    pinputs=None,
    memcheck=False,
):
    size = len(x)
    u = np.uint16 if np.dtype(dtype).itemsize == 2 else np.uint32
    pat = np.zeros(512 // np.dtype(u).itemsize * 8, u) if pbits is None else pbits.view(u)
    o = np.zeros(size, dtype)
    cnt = np.zeros(3, np.uint64)
    tiling = struct.pack(
        "<3iI10i",
        GM_TYPES[dtype],
        pattern,
        reduce_mode,
        mask,
        *params,
        size,
        len(pat),
        len(pat) if pinputs is None else pinputs,
        int(fill),
        counter_before,
        accessor_only,
    )
    kernel(libs, "gather_mask_kernel", memcheck).run(1, [x, pat, o, cnt], tiling)
    return o, cnt


def gm_data(dtype, n=1024):
    if np.dtype(dtype).kind == "f":
        return special(dtype, n)
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def check_gather(libs, dtype, x, pattern=1, pbits=None, **kw):
    o, cnt = run_gather(libs, dtype, x, pattern, pbits=pbits, **kw)
    fill = np.full(len(x) * np.dtype(dtype).itemsize, 0x7B, np.uint8).view(dtype)
    want, n = ref.gather_mask(
        dtype,
        x,
        fill,
        pattern,
        kw.get("reduce_mode", 0),
        kw.get("mask", 0),
        kw.get("params", (1, 1, 0, 0)),
        None if pbits is None else pbits,
    )
    assert_bits(o, want)
    assert int(cnt[0]) == n == int(cnt[1])
    assert int(cnt[2]) == 0  # the call leaves Normal mode behind
    return o, n


@pytest.mark.parametrize("dtype", list(GM_TYPES))
@pytest.mark.parametrize("pattern", range(1, 8))
def test_gather_mask_built_in_patterns(libs, dtype, pattern):
    x = gm_data(dtype)
    for params in ((1, 1, 0, 0), (1, 3, 8, 0), (2, 2, 16, 0), (1, 4, 4, 0)):
        check_gather(libs, dtype, x, pattern, params=params)
    # Counter mode (reduceMode = true, the A2's configuration 1): mask elements per repeat
    for mask, params in (
        (1, (1, 1, 0, 0)),
        (7, (1, 2, 1, 0)),
        (70, (1, 2, 4, 0)),
        (513, (1, 1, 0, 0)),
    ):
        check_gather(
            libs, dtype, x, pattern, reduce_mode=1, mask=mask, params=params, counter_before=1
        )


@pytest.mark.parametrize("dtype", list(GM_TYPES))
def test_gather_mask_user_pattern(libs, dtype):
    x = gm_data(dtype)
    pbits = RNG.integers(0, 256, 512, dtype=np.uint8)
    for params in ((1, 1, 0, 0), (1, 3, 8, 1), (2, 2, 16, 2), (1, 2, 8, 0)):
        check_gather(libs, dtype, x, 0, pbits=pbits, params=params)
    # the documented Counter-mode example: mask 70, repeatTimes 2, src0RepeatStride 4, src1 0
    check_gather(libs, dtype, x, 0, pbits=pbits, reduce_mode=1, mask=70, params=(1, 2, 4, 0))


def test_gather_mask_documented_example(libs):
    # src0 = 1..128 (uint16), built-in pattern 2 -> [2, 4, ..., 128], rsvdCnt 64
    x = np.arange(1, 129, dtype=np.uint16)
    o, n = check_gather(libs, np.uint16, x, 2, params=(1, 1, 0, 0))
    assert n == 64 and (o[:64] == np.arange(2, 129, 2)).all()


def test_gather_mask_moves_special_value_bits(libs):
    for dtype in (F16, F32):
        x = np.zeros(1024, dtype)
        u = x.view(np.uint16 if dtype == F16 else np.uint32)
        half_bits = [0x7E01, 0xFE55, 0x8000, 0x0001, 0x7C00, 0xFC00, 0x0000, 0x3C00]
        float_bits = [
            0x7FC0_0001,
            0xFFA0_0055,
            0x8000_0000,
            1,
            0x7F80_0000,
            0xFF80_0000,
            0,
            0x3F80_0000,
        ]
        u[:8] = half_bits if dtype == F16 else float_bits
        o, _ = run_gather(libs, dtype, x, 7)
        assert (o.view(u.dtype)[:8] == u[:8]).all()  # NaN payloads, -0, subnormals unchanged


def gather_refused(libs, needle, *args, memory=False, **kw):
    with pytest.raises(KernelMemoryError if memory else KernelError) as info:
        run_gather(libs, *args, **kw)
    assert needle in str(info.value), str(info.value)


def test_gather_mask_limits_are_refused(libs):
    x = gm_data(F32, 256)
    gather_refused(libs, "built-in src1Pattern 8 is outside [1, 7]", F32, x, 8)
    gather_refused(
        libs, "src1RepeatStride 1 with a built-in src1Pattern", F32, x, 3, params=(1, 1, 0, 1)
    )
    gather_refused(libs, "needs mask >= 1", F32, x, 1, reduce_mode=1, mask=0)
    gather_refused(libs, "no GatherMask ran in this block", F32, x, 1, accessor_only=1)
    # 8 repeats of 64 lanes over the same DataBlocks: 512 picked > 256 elements of dst
    gather_refused(libs, "exceeds it", F32, x, 7, params=(1, 8, 0, 0), memory=True)
    gather_refused(libs, "exceeds it", F32, x, 7, params=(1, 5, 8, 0), memory=True)  # src0


def test_gather_mask_memory_check(libs):
    x = gm_data(F16, 1024)
    pbits = RNG.integers(0, 256, 512, dtype=np.uint8)
    run_gather(libs, F16, x, 0, pbits=pbits, params=(1, 2, 8, 1), memcheck=True)
    # pattern bits never loaded are reported
    with pytest.raises(KernelMemoryError, match="src1Pattern"):
        run_gather(libs, F16, x, 0, pbits=pbits, params=(1, 2, 8, 1), pinputs=16, memcheck=True)
    # dst past rsvdCnt stays undefined: copying all of dst out reads it
    with pytest.raises(KernelMemoryError, match="read of uninitialised UB"):
        run_gather(libs, F16, x, 1, fill=False, memcheck=True)
