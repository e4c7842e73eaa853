"""numpy models of the documented Ascend C reduction and GatherMask semantics.

Used by ``tests/test_conformance_reduce.py`` to check the CPU runtime
(``pyasc_mlir/runtime/include/pyasc_cpu/{reduce,reduce_scalar,gather_mask}.h``); the semantics
and their sources are in docs/CPU_RUNTIME.md, "Reductions" and "GatherMask". Lanes are computed
in float32 and every addition is rounded to the element type (fp16: float32 sum, then RNE).
"""

from __future__ import annotations

import numpy as np

F16, F32 = np.float16, np.float32
HALF_MAX = 65504.0  # largest finite fp16 (the documented WholeReduceSum/BlockReduceSum clamp)


def lanes_of(dtype) -> int:
    """Elements per 256-byte repeat."""
    return 256 // np.dtype(dtype).itemsize


def block_of(dtype) -> int:
    """Elements per 32-byte DataBlock."""
    return 32 // np.dtype(dtype).itemsize


def plan(dtype, form: int, mask: int, bits, repeat: int):
    """(repeats, active lanes of a full repeat, lanes of the last repeat) of a level-0 call.

    form 0: contiguous mask, 1/2: bit mask (argument / register), 3: Counter mode (``mask`` is
    the element count, ``repeat`` is ignored)."""
    n = lanes_of(dtype)
    if form == 0:
        lanes = list(range(mask))
    elif form in (1, 2):
        lanes = [
            k for k in range(n) if (int(bits[k // 64]) >> (k % 64)) & 1 and (k < 64 or n == 128)
        ]
    else:
        reps = -(-mask // n)
        return reps, list(range(n)), mask - (reps - 1) * n
    return repeat, lanes, len(lanes)


def elem(dtype, blk: int, rep: int, r: int, k: int) -> int:
    e = block_of(dtype)
    return r * rep * e + (k // e) * blk * e + k % e


def repeat_lanes(dtype, x, p, r: int, blk: int, rep: int):
    """{lane: value (float32)} of repeat r."""
    reps, lanes, last = p
    ks = lanes[:last] if r == reps - 1 else lanes
    return {k: np.float32(x[elem(dtype, blk, rep, r, k)]) for k in ks}


def add(dtype, a, b, sat: bool = False):
    with np.errstate(all="ignore"):
        s = np.float32(a) + np.float32(b)
        if dtype is F16:
            h = np.float32(np.float16(s))
            if sat and np.isinf(h) and np.isfinite(a) and np.isfinite(b):
                h = np.float32(np.copysign(HALF_MAX, h))
            return h
        return s


def tree(dtype, v, sat: bool = False):
    v = [np.float32(t) for t in v]
    while len(v) > 1:
        v = [add(dtype, v[2 * i], v[2 * i + 1], sat) for i in range(len(v) // 2)]
    return v[0]


def fold(vals, is_max: bool):
    """(extreme, index of its first occurrence): NaN wins (first NaN); a zero result is +0
    (max) / -0 (min) when any element is that zero; the index is the first element == it."""
    a = np.asarray(vals, F32)
    nan = np.isnan(a)
    if nan.any():
        i = int(np.argmax(nan))
        return a[i], i
    m = a.max() if is_max else a.min()
    if m == 0:
        zeros = a[a == 0]
        neg = np.signbit(zeros)
        m = F32(0.0) if (is_max and (~neg).any()) or (not is_max and not neg.any()) else F32(-0.0)
    return m, int(np.argmax(a == m))


def index_bits(dtype, i: int):
    """An index stored as the bits of the element type."""
    u = np.uint16 if np.dtype(dtype).itemsize == 2 else np.uint32
    return np.array([i], u).view(dtype)[0]


def count_sum(dtype, x):
    """Count-form ReduceSum: tree within each 256-byte repeat (zero-padded), repeats in order."""
    n = lanes_of(dtype)
    reps = -(-len(x) // n)
    v = np.zeros(reps * n, F32)
    v[: len(x)] = np.asarray(x, F32)
    acc = None
    for r in range(reps):
        s = tree(dtype, v[r * n : (r + 1) * n])
        acc = s if acc is None else add(dtype, acc, s)
    return acc


def tree_of_repeats(dtype, sums):
    n = lanes_of(dtype)
    v = list(sums)
    while len(v) > 1:
        groups = -(-len(v) // n)
        v = [tree(dtype, (v[g * n : (g + 1) * n] + [0.0] * n)[:n]) for g in range(groups)]
    return v[0]


def assert_bits(out, ref):
    """Equal bit for bit, except that a NaN only has to be some NaN."""
    out, ref = np.asarray(out), np.asarray(ref)
    assert out.dtype == ref.dtype and out.shape == ref.shape
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32}[out.dtype.itemsize]
    nan = np.isnan(ref.astype(F32)) if ref.dtype.kind == "f" else np.zeros(ref.shape, bool)
    assert np.isnan(out[nan].astype(F32)).all(), (out[nan], ref[nan])
    bad = np.nonzero(out.view(u)[~nan] != ref.view(u)[~nan])[0]
    assert bad.size == 0, (
        f"{bad.size} elements differ, first at {np.nonzero(~nan)[0][bad[0]]}: "
        f"{out[~nan][bad[0]]!r} vs {ref[~nan][bad[0]]!r}"
    )


BUILT_IN = {
    1: lambda k: k % 2 == 0,
    2: lambda k: k % 2 == 1,
    3: lambda k: k % 4 == 0,
    4: lambda k: k % 4 == 1,
    5: lambda k: k % 4 == 2,
    6: lambda k: k % 4 == 3,
    7: lambda k: True,
}


def gather_mask(dtype, x, dst, pattern, reduce_mode, mask, params, pattern_bits=None):
    """(dst after GatherMask, rsvdCnt). ``pattern``: 1..7 or 0 for ``pattern_bits`` (a uint8
    array of the user pattern tensor's bytes)."""
    blk_s, reps, rep_s, rep_p = params
    lanes = mask if reduce_mode else lanes_of(dtype)
    picked = []
    for r in range(reps):
        for k in range(lanes):
            if pattern:
                sel = BUILT_IN[pattern](k)
            else:
                bit = r * rep_p * 32 * 8 + k
                sel = (int(pattern_bits[bit // 8]) >> (bit % 8)) & 1
            if sel:
                picked.append(elem(dtype, blk_s, rep_s, r, k))
    out = dst.copy()
    out[: len(picked)] = x[picked]
    return out, len(picked)
