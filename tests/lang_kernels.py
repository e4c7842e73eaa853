"""Kernels written in the kernel language (``pyasc_mlir.language``), from their math, as a
user would write them; shared by tests/test_lang*.py. The dim names are imported (linters
know them, and annotations are evaluated: no ``from __future__ import annotations`` here);
tests/test_lang_errors.py has kernels with bare, undefined names."""

import math

import pyasc_mlir.language as lang

# the README's acceptance examples, shared with ``pyasc demo``
from examples.kernel_language import (  # noqa: F401  (re-exported to the tests)
    blocked_matmul,
    fused_mlp,
    gelu_erf,
    parallel_sum,
    vector_add,
)
from examples.kernel_language import matmul as matmul16  # noqa: F401
from pyasc_mlir.language import D, K, L, M, N
from pyasc_mlir.language import math as lm


@lang.kernel
def vector_add32(a: lang.float32[N], b: lang.float32[N]) -> lang.float32[N]:
    c = lang.empty_like(a)
    for i in lang.range(0, N, 1):
        c[i] = a[i] + b[i]
    return c


def gelu_erf_body(x, y, n, d):
    for i in range(n):
        for j in range(d):
            v = x[i, j]
            y[i, j] = 0.5 * v * (1.0 + lang.erf(v / math.sqrt(2.0)))
    return y


@lang.kernel
def gelu_erf16(x: lang.float16[N, D]) -> lang.float16[N, D]:
    return gelu_erf_body(x, lang.empty_like(x), N, D)


@lang.kernel
def gelu_erf32(x: lang.float32[N, D]) -> lang.float32[N, D]:
    return gelu_erf_body(x, lang.empty_like(x), N, D)


def gelu_tanh_body(x, y, n, d):
    c = math.sqrt(2.0 / math.pi)
    for i in range(n):
        for j in range(d):
            v = x[i, j]
            y[i, j] = 0.5 * v * (1.0 + lm.tanh(c * (v + 0.044715 * v**3)))
    return y


@lang.kernel
def gelu_tanh16(x: lang.float16[N, D]) -> lang.float16[N, D]:
    return gelu_tanh_body(x, lang.empty_like(x), N, D)


@lang.kernel
def gelu_tanh32(x: lang.float32[N, D]) -> lang.float32[N, D]:
    return gelu_tanh_body(x, lang.empty_like(x), N, D)


def silu(v):
    return v * lang.sigmoid(v)


@lang.kernel
def swiglu16(gate: lang.float16[N, D], up: lang.float16[N, D]) -> lang.float16[N, D]:
    y = lang.empty((N, D), lang.float16)
    for i in range(N):
        for j in range(D):
            y[i, j] = silu(gate[i, j]) * up[i, j]
    return y


@lang.kernel
def swiglu32(gate: lang.float32[N, D], up: lang.float32[N, D]) -> lang.float32[N, D]:
    y = lang.empty((N, D), lang.float32)
    for i in range(N):
        for j in range(D):
            y[i, j] = silu(gate[i, j]) * up[i, j]
    return y


@lang.kernel
def row_sum32(x: lang.float32[N, D]) -> lang.float32[N]:
    s = lang.zeros(N, lang.float32)
    for i in range(N):
        for j in range(D):
            s[i] += x[i, j]
    return s


@lang.kernel
def row_sum16(x: lang.float16[N, D]) -> lang.float16[N]:
    s = lang.empty(N, lang.float16)
    for i in range(N):
        acc = 0.0
        for j in range(D):
            acc += x[i, j]
        s[i] = acc
    return s


@lang.kernel
def row_max16(x: lang.float16[N, D]) -> lang.float16[N]:
    s = lang.full((N,), -math.inf, lang.float16)
    for i in range(N):
        for j in range(D):
            s[i] = lang.maximum(s[i], x[i, j])
    return s


@lang.kernel
def row_max32(x: lang.float32[N, D]) -> lang.float32[N]:
    s = lang.full((N,), -math.inf, lang.float32)
    for i in range(N):
        for j in range(D):
            s[i] = max(s[i], x[i, j])
    return s


@lang.kernel
def matmul_acc32(a: lang.float32[M, N], b: lang.float32[N, K]) -> lang.float32[M, K]:
    c = lang.zeros((M, K), lang.float32)
    for i in range(M):
        for j in range(K):
            for k in range(N):
                c[i, j] += a[i, k] * b[k, j]
    return c


@lang.kernel
def bias_relu16(x: lang.float16[N, D], b: lang.float16[D]) -> lang.float16[N, D]:
    y = lang.empty_like(x)
    for i in range(N):
        for j in range(D):
            y[i, j] = lang.relu(x[i, j] + b[j])
    return y


def power_of_two(n):
    return 1 if n == 0 else 2 * power_of_two(n - 1)


def constructs_body(x, y, z, scale, mode, n):
    """Compile-time if/while, a recursive helper, math.pi, lang.cast, ones/full arrays."""
    steps = 0
    p = 1.0
    while steps < 3:
        p = p * 2.0
        steps += 1
    for i in range(n):
        if mode == "round":
            y[i] = lang.cast(x[i] * scale, lang.float16) + p + power_of_two(3) + math.pi
        else:
            y[i] = y[i] * x[i] - lang.sqrt(z[i]) / 4.0
    return y


@lang.kernel
def constructs32(x: lang.float32[N], scale: float, mode: str) -> lang.float32[N]:
    y, z = lang.ones(N, lang.float32), lang.full((N,), 2.0, lang.float32)
    return constructs_body(x, y, z, scale, mode, N)


@lang.kernel
def constructs16(x: lang.float16[N], scale: float, mode: str) -> lang.float16[N]:
    y, z = lang.ones(N, lang.float16), lang.full((N,), 2.0, lang.float16)
    return constructs_body(x, y, z, scale, mode, N)


@lang.kernel
def two_results16(x: lang.float16[N, D]) -> tuple[lang.float16[N, D], lang.float32[N]]:
    """An elementwise map and a row sum of it: two results."""
    e = lang.empty_like(x)
    s = lang.zeros(N, lang.float32)
    for i in range(N):
        for j in range(D):
            e[i, j] = lang.exp(x[i, j] - 1.0)
    for i in range(N):
        for j in range(D):
            s[i] += e[i, j]
    return e, s


def softmax_body(x, y, n, d):
    """Row max, then the sum of exponentials, then the normalised row: three loops over j
    sharing two scalar variables per row."""
    for i in range(n):
        m = -math.inf
        for j in range(d):
            m = lang.maximum(m, x[i, j])
        s = 0.0
        for j in range(d):
            s += lang.exp(x[i, j] - m)
        for j in range(d):
            y[i, j] = lang.exp(x[i, j] - m) / s
    return y


@lang.kernel
def softmax_rows32(x: lang.float32[N, D]) -> lang.float32[N, D]:
    return softmax_body(x, lang.empty_like(x), N, D)


@lang.kernel
def softmax_rows16(x: lang.float16[N, D]) -> lang.float16[N, D]:
    return softmax_body(x, lang.empty_like(x), N, D)


def centered_body(x, y, n):
    """A full reduction to a scalar (the mean), then an elementwise map that reads it."""
    total = 0.0
    for i in range(n):
        total += x[i]
    for i in range(n):
        y[i] = x[i] - total / n
    return y


@lang.kernel
def centered16(x: lang.float16[N]) -> lang.float16[N]:
    return centered_body(x, lang.empty_like(x), N)


@lang.kernel
def centered32(x: lang.float32[N]) -> lang.float32[N]:
    return centered_body(x, lang.empty_like(x), N)


@lang.kernel
def row_budget32(x: lang.float32[N, D]) -> lang.float32[N]:
    """s -= x over a row from a full(100) start: 100 - row sum."""
    s = lang.full(N, 100.0, lang.float32)
    for i in range(N):
        for j in range(D):
            s[i] -= x[i, j]
    return s


@lang.kernel
def second_difference32(x: lang.float32[N]) -> lang.float32[L]:  # L: free (N - 2)
    """Offset indices and lang.range(start, stop): y[i - 1] = x[i + 1] - 2 x[i] + x[i - 1]."""
    y = lang.empty(N - 2, lang.float32)
    for i in lang.range(1, N - 1):
        y[i - 1] = x[i + 1] - 2.0 * x[i] + x[i - 1]
    return y


@lang.kernel
def head_sum16(x: lang.float16[N, D], width: int) -> lang.float16[N]:
    """A loop over part of an axis: the sum of the first ``width`` columns."""
    s = lang.zeros(N, lang.float32)
    y = lang.empty(N, lang.float16)
    for i in range(N):
        for j in range(width):
            s[i] += x[i, j]
    for i in range(N):
        y[i] = s[i]
    return y


@lang.fused_kernel
def fused_mlp32(
    x: lang.float32[M, N], w1: lang.float32[N, K], w2: lang.float32[K, D]
) -> lang.float32[M, D]:
    """fused_mlp in float32; the second matmul accumulates into a zeros array."""
    h = lang.empty((M, K), lang.float32)
    for i in range(M):
        for j in range(K):
            acc = 0.0
            for k in range(N):
                acc += x[i, k] * w1[k, j]
            h[i, j] = gelu_erf(acc)
    y = lang.zeros((M, D), lang.float32)
    for i in range(M):
        for j in range(D):
            for k in range(K):
                y[i, j] += h[i, k] * w2[k, j]
    return y


def swishglu_body(x, y, n, d):
    """y[i, j] = silu(x[i, j]) * x[i, j + d]: the gate and the up half of one input."""
    for i in range(n):
        for j in range(d):
            y[i, j] = silu(x[i, j]) * x[i, j + d]
    return y


@lang.kernel
def swishglu16(x: lang.float16[N, D]):  # -> float16[N, D // 2]
    return swishglu_body(x, lang.empty((N, D // 2), lang.float16), N, D // 2)


@lang.kernel
def swishglu32(x: lang.float32[N, D]):  # -> float32[N, D // 2]
    return swishglu_body(x, lang.empty((N, D // 2), lang.float32), N, D // 2)


# --------------------------------------------------------------------------- test helpers


def lowered(kern, *args):
    """``(stages, info)`` of kernel ``kern`` for ``args`` (arrays or compile-time values)
    through the whole pipeline without g++: ``info`` is what ``compile`` records (kernels,
    gm_bytes, launches)."""
    import numpy as np

    from pyasc_mlir import pipeline
    from pyasc_mlir.artifacts import describe
    from pyasc_mlir.types import TensorDesc

    fn = getattr(kern, "fn", kern)
    descs = [TensorDesc(a.shape, a.dtype.name) if isinstance(a, np.ndarray) else a for a in args]
    stages, _, _ = pipeline.lower(fn, descs, fn.__name__, "910B2", True)
    tensors = [d for d in descs if isinstance(d, TensorDesc)]
    return stages, describe(stages, fn.__name__, tensors, "910B2")


def run_stage(stages, stage, kern, *args):
    """Interpret ``stages[stage]`` of ``kern`` on the array arguments."""
    import numpy as np

    from pyasc_mlir.interpreter.core import run_function

    fn = getattr(kern, "fn", kern)
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    return run_function(stages[stage], fn.__name__, arrays)


# -- explicit tiles (README "Kernel language", "Explicit tiles") ----------------------------
@lang.kernel
def blocked_add(a: lang.float16[N], b: lang.float16[N], BLOCK) -> lang.float16[N]:
    c = lang.global_buffer((N,), lang.float16)
    xa = lang.local_buffer((BLOCK,), lang.float16)
    xb = lang.local_buffer((BLOCK,), lang.float16)
    xc = lang.local_buffer((BLOCK,), lang.float16)
    for i in lang.range(0, N, BLOCK):
        lang.load_2d(a[i : i + BLOCK], xa)
        lang.load_2d(b[i : i + BLOCK], xb)
        for j in range(BLOCK):
            xc[j] = xa[j] + xb[j]
        lang.store_2d(xc, c[i : i + BLOCK])
    return c


@lang.kernel(double_buffer=False)
def blocked_add_single(a: lang.float16[N], b: lang.float16[N], BLOCK) -> lang.float16[N]:
    c = lang.global_buffer((N,), lang.float16)
    xa = lang.local_buffer((BLOCK,), lang.float16)
    xb = lang.local_buffer((BLOCK,), lang.float16)
    xc = lang.local_buffer((BLOCK,), lang.float16)
    for i in lang.range(0, N, BLOCK):
        lang.load_2d(a[i : i + BLOCK], xa)
        lang.load_2d(b[i : i + BLOCK], xb)
        xc[:] = xa[:] + xb[:]  # whole-buffer slices
        lang.store_2d(xc, c[i : i + BLOCK])
    return c


@lang.kernel
def blocked_scale(x: lang.float32[M, N], s, BM) -> lang.float32[M, N]:
    y = lang.global_buffer((M, N), lang.float32)
    t = lang.local_buffer((BM, N), lang.float32)
    u = lang.local_buffer((BM, N), lang.float32)
    for i in lang.range(0, M, BM):
        lang.load_2d(x[i : i + BM, :], t)
        for ii in range(BM):
            for j in range(N):
                u[ii, j] = s * t[ii, j] + 1.0
        lang.store_2d(u, y[i : i + BM, :])
    return y


@lang.kernel
def ub_overflow(a: lang.float32[N], BLOCK) -> lang.float32[N]:
    c = lang.global_buffer((N,), lang.float32)
    xa = lang.local_buffer((BLOCK,), lang.float32)
    xc = lang.local_buffer((BLOCK,), lang.float32)
    for i in lang.range(0, N, BLOCK):
        lang.load_2d(a[i : i + BLOCK], xa)
        for j in range(BLOCK):
            xc[j] = xa[j] * 2.0
        lang.store_2d(xc, c[i : i + BLOCK])
    return c


@lang.kernel
def slices(x: lang.float32[M, N]) -> lang.float32[M, N]:
    y = lang.empty_like(x)
    y[:, :] = x[:, :] * 2.0  # a whole-slice write
    for i in range(M):
        y[i, :] += x[i, :] * x[i, :]  # rows: a loop index and full slices
    return y


@lang.kernel
def slice_reads(x: lang.float32[N]) -> lang.float32[2]:
    y = lang.empty((2,), lang.float32)
    y[0:2] = x[0:2] + x[N - 2 : N]  # constant slices of a wider array
    return y


@lang.kernel
def blocked_row_sum(x: lang.float32[M, N], BM) -> lang.float32[M]:
    y = lang.global_buffer((M,), lang.float32)
    t = lang.local_buffer((BM, N), lang.float32)
    s = lang.local_buffer((BM,), lang.float32)
    for i in lang.range(0, M, BM):
        lang.load_2d(x[i : i + BM, :], t)
        for ii in range(BM):
            s[ii] = 0.0
            for j in range(N):
                s[ii] += t[ii, j]
        lang.store_2d(s, y[i : i + BM])
    return y  # a reduction: the UB tile is BM rows
