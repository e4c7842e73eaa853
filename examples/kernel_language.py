"""The kernel language's examples (``pyasc_mlir.language``), written from their math with
explicit loops, as the README's "Kernel language" section shows them.

Each is checked against a float64 NumPy reference on shapes with tails by :func:`run` (and
by ``tests/test_lang_*.py``, which import them); ``pyasc demo`` prints :func:`demo_line`.
``python -m examples.kernel_language`` prints one row per example: kernels after fusion,
kernel type, blockDim, GM bytes against the fused ideal, max error, wall time of the run on
the CPU build.

The dim names are imported (annotations are evaluated at ``def`` time here: no
``from __future__ import annotations``).
"""

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import pyasc_mlir.language as lang
from pyasc_mlir.language import D, K, M, N

from . import within_tolerance
from ._common import normal, round_to


@lang.kernel
def vector_add(a: lang.float16[N], b: lang.float16[N]) -> lang.float16[N]:
    c = lang.empty_like(a)
    for i in range(N):
        c[i] = a[i] + b[i]
    return c  # ONE vector kernel, the GM bytes of a + b


@lang.kernel
def matmul(a: lang.float16[M, N], b: lang.float16[N, K]) -> lang.float16[M, K]:
    c = lang.empty((M, K), lang.float16)
    for i in range(M):
        for j in range(K):
            acc = 0.0
            for k in range(N):
                acc += a[i, k] * b[k, j]
            c[i, j] = acc
    return c  # a Cube kernel, not scalar loops


@lang.kernel
def gelu(x: lang.float16[N, D]) -> lang.float16[N, D]:
    y = lang.empty_like(x)
    for i in range(N):
        for j in range(D):
            v = x[i, j]
            y[i, j] = 0.5 * v * (1.0 + lang.erf(v / math.sqrt(2.0)))
    return y  # the erf form: one vector kernel


@lang.kernel
def gelu_tanh(x: lang.float16[N, D]) -> lang.float16[N, D]:
    y = lang.empty_like(x)
    c = math.sqrt(2.0 / math.pi)
    for i in range(N):
        for j in range(D):
            v = x[i, j]
            y[i, j] = 0.5 * v * (1.0 + lang.tanh(c * (v + 0.044715 * v**3)))
    return y  # the tanh form: one vector kernel


@lang.kernel
def softmax(x: lang.float32[N, D]) -> lang.float32[N, D]:
    y = lang.empty_like(x)
    for i in range(N):
        m = -math.inf
        for j in range(D):
            m = lang.maximum(m, x[i, j])
        s = 0.0
        for j in range(D):
            s += lang.exp(x[i, j] - m)
        for j in range(D):
            y[i, j] = lang.exp(x[i, j] - m) / s
    return y  # one kernel, the GM bytes of pa.softmax


def silu(v):
    return v * lang.sigmoid(v)


@lang.kernel
def swishglu(x: lang.float16[N, D]):  # -> float16[N, D // 2]
    h = D // 2
    y = lang.empty((N, h), lang.float16)
    for i in range(N):
        for j in range(h):
            y[i, j] = silu(x[i, j]) * x[i, j + h]  # gate half, up half
    return y  # one vector kernel


@lang.vectorize
def saxpy(a, x, y):  # a scalar function over arrays, NumPy broadcasting
    return a * x + y


@lang.kernel
def blocked_matmul(a: lang.float16[M, K], b: lang.float16[K, N], BM, BN, BK) -> lang.float16[M, N]:
    c = lang.global_buffer((M, N), lang.float16)
    ta = lang.local_buffer((BM, BK), lang.float16, "L1")
    tb = lang.local_buffer((BK, BN), lang.float16, "L1")
    tc = lang.local_buffer((BM, BN), lang.float32, "L0C")  # the accumulator
    for i in lang.range(0, M, BM):
        for j in lang.range(0, N, BN):
            for ii in range(BM):
                for jj in range(BN):
                    tc[ii, jj] = 0.0
            for k in lang.range(0, K, BK):
                lang.load_2d(a[i : i + BM, k : k + BK], ta)
                lang.load_2d(b[k : k + BK, j : j + BN], tb)
                for ii in range(BM):
                    for jj in range(BN):
                        for kk in range(BK):
                            tc[ii, jj] += ta[ii, kk] * tb[kk, jj]
            lang.store_2d(tc, c[i : i + BM, j : j + BN])
    return c  # baseM x baseN x baseK = BM x BN x BK


@lang.parallel(num_workers=4)
def parallel_sum(x: lang.float32[N]) -> lang.float32[1]:
    s = 0.0
    for i in lang.distributed_range(N):
        s += x[i]
    return lang.allreduce(s)  # blockDim 4: a GM workspace and SyncAll


def gelu_erf(v):
    return 0.5 * v * (1.0 + lang.erf(v / math.sqrt(2.0)))


@lang.fused_kernel
def fused_mlp(
    x: lang.float16[M, N], w1: lang.float16[N, K], w2: lang.float16[K, D]
) -> lang.float16[M, D]:
    h = lang.empty((M, K), lang.float16)
    for i in range(M):
        for j in range(K):
            acc = 0.0
            for k in range(N):
                acc += x[i, k] * w1[k, j]
            h[i, j] = gelu_erf(acc)  # the first Cube kernel's epilogue
    y = lang.empty((M, D), lang.float16)
    for i in range(M):
        for j in range(D):
            acc = 0.0
            for k in range(K):
                acc += h[i, k] * w2[k, j]
            y[i, j] = acc
    return y  # two Cube kernels (op.info["fusion"])


# ------------------------------------------------------------------ references and the run
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _gelu64(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _silu64(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def _f64(*xs: np.ndarray) -> list[np.ndarray]:
    return [np.asarray(x, np.float64) for x in xs]


def _ref_gelu_tanh(x: np.ndarray) -> np.ndarray:
    (v,) = _f64(x)
    return 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v**3)))


def _ref_softmax(x: np.ndarray) -> np.ndarray:
    (v,) = _f64(x)
    e = np.exp(v - v.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _ref_swishglu(x: np.ndarray) -> np.ndarray:
    (v,) = _f64(x)
    h = v.shape[1] // 2
    return _silu64(v[:, :h]) * v[:, h:]


def _ref_fused_mlp(x: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    a, b, c = _f64(x, w1, w2)
    h = round_to(_gelu64(a @ b), x.dtype).astype(np.float64)  # h is a float16 array
    return h @ c


@dataclass(frozen=True)
class Example:
    """One example: its kernel, inputs (``rng -> args``, arrays and compile-time values), a
    float64 reference over the array arguments, and the rtol = atol it is checked at."""

    name: str
    kernel: Any
    inputs: Callable[[np.random.Generator], tuple[Any, ...]]
    reference: Callable[..., np.ndarray]
    tol: float
    note: str


def _h(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return normal(rng, shape, np.float16, scale)


EXAMPLES: list[Example] = [
    Example(
        "vector_add",
        vector_add,
        lambda r: (_h(r, 4097), _h(r, 4097)),
        lambda a, b: np.add(*_f64(a, b)),
        1e-3,
        "as a + b",
    ),
    Example(
        "matmul",
        matmul,
        lambda r: (_h(r, 1024, 1024, scale=0.1), _h(r, 1024, 1024, scale=0.1)),
        lambda a, b: np.matmul(*_f64(a, b)),
        1e-3,
        "triple loop, 1024^3",
    ),
    Example("gelu", gelu, lambda r: (_h(r, 33, 513),), lambda x: _gelu64(*_f64(x)), 1e-3, "erf"),
    Example("gelu_tanh", gelu_tanh, lambda r: (_h(r, 33, 513),), _ref_gelu_tanh, 1e-3, "tanh"),
    Example(
        "softmax",
        softmax,
        lambda r: (normal(r, (33, 513), np.float32),),
        _ref_softmax,
        1e-5,
        "fp32 rows",
    ),
    Example("swishglu", swishglu, lambda r: (_h(r, 33, 1026),), _ref_swishglu, 1e-3, "(N, D)"),
    Example(
        "saxpy",
        saxpy,
        lambda r: (2.5, _h(r, 7, 513), _h(r, 513)),
        lambda x, y: 2.5 * np.float64(x) + np.float64(y),
        1e-3,
        "@lang.vectorize",
    ),
    Example(
        "blocked_matmul",
        blocked_matmul,
        lambda r: (_h(r, 33, 65), _h(r, 65, 513), 32, 64, 32),
        lambda a, b: np.matmul(*_f64(a, b)),
        1e-3,
        "blocks 32x64x32",
    ),
    Example(
        "parallel_sum",
        parallel_sum,
        lambda r: (np.abs(normal(r, (4097,), np.float32)),),
        lambda x: np.array([math.fsum(np.float64(x))]),
        1e-6,
        "4 workers",
    ),
    Example(
        "fused_mlp",
        fused_mlp,
        lambda r: (_h(r, 33, 64), _h(r, 64, 128, scale=0.2), _h(r, 128, 65, scale=0.2)),
        _ref_fused_mlp,
        2e-3,
        "matmul, gelu, matmul",
    ),
]


@dataclass
class Row:
    """The outcome of one example (``kernels``, ``kernel_type`` and ``block_dim`` of the
    compiled operator; ``gm_bytes``: what its kernels read and write; ``err``: max
    |got - ref|; ``ideal_bytes``: the arrays' bytes, each moved once; ``seconds``: the CPU
    build's run, compile excluded)."""

    name: str
    note: str
    kernels: int
    kernel_type: str
    block_dim: int
    gm_bytes: int
    ideal_bytes: int
    err: float
    ok: bool
    seconds: float


def _info(ex: Example, args: tuple[Any, ...]) -> dict[str, Any]:
    return ex.kernel.compile(*args).info


def run_example(ex: Example, seed: int = 0) -> Row:
    """Compile and run ``ex`` on the CPU build and check it against its reference.

    Raises:
        PyAscError: the example does not compile (a regression)."""
    args = ex.inputs(np.random.default_rng(seed))
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    ex.kernel(*args)  # compile (or hit the cache) outside the timing
    t0 = time.perf_counter()
    got = np.asarray(ex.kernel(*args))
    seconds = time.perf_counter() - t0
    ref = ex.reference(*arrays)
    info = _info(ex, args)
    err = float(np.max(np.abs(np.float64(got) - ref)))
    kt = str(info.get("kernel_type", "")).removeprefix("KERNEL_TYPE_")
    return Row(
        ex.name,
        ex.note,
        int(info["kernels"]),
        kt,
        int(info["block_dim"]),
        int(info.get("gm_bytes", 0)),
        sum(a.nbytes for a in arrays) + got.nbytes,
        err,
        within_tolerance(got, round_to(ref, got.dtype), ex.tol),
        seconds,
    )


def select(spec: str) -> list[str] | None:
    """The example names in ``spec``: ``"all"`` (``None``: every example) or a comma-separated
    subset such as ``"vector_add,parallel_sum"``.

    Raises:
        ValueError: a name that is not an example; the message lists the known ones.
    """
    if spec == "all":
        return None
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = sorted(set(names) - {e.name for e in EXAMPLES})
    if unknown or not names:
        raise ValueError(
            f"unknown kernel-language example(s) {', '.join(unknown) or repr(spec)}; "
            f"known: {', '.join(e.name for e in EXAMPLES)}"
        )
    return names


def run(names: list[str] | None = None) -> list[Row]:
    """:func:`run_example` for every example (or those in ``names``)."""
    return [run_example(e) for e in EXAMPLES if names is None or e.name in names]


def table(rows: list[Row]) -> str:
    """The rows as a plain-text table."""
    head = f"{'example':16s} {'':22s} {'kernels':>7s} {'type':10s} {'blockDim':>8s}"
    head += f" {'GM bytes':>10s} {'ideal':>10s} {'max err':>9s} {'cpu s':>6s}"
    lines = [head]
    for r in rows:
        lines.append(
            f"{r.name:16s} {r.note:22s} {r.kernels:7d} {r.kernel_type:10s} {r.block_dim:8d} "
            f"{r.gm_bytes or '-':>10} {r.ideal_bytes:10d} {r.err:9.2e} {r.seconds:6.2f}"
            + ("" if r.ok else "  !")
        )
    return "\n".join(lines)


def demo_line(names: list[str] | None = None) -> tuple[str, bool]:
    """``pyasc demo``'s kernel-language part: ``(text, ok)``; ``ok`` when every example (or
    every one in ``names``) is within its tolerance."""
    rows = run(names)
    ok = all(r.ok for r in rows)
    title = (
        f"kernel language (examples/kernel_language.py): {sum(r.ok for r in rows)}/"
        f"{len(rows)} loop-written kernels match float64 NumPy"
    )
    return title + "\n" + table(rows), ok


def main(argv: list[str] | None = None) -> None:  # pragma: no cover - printing only
    """``python -m examples.kernel_language [NAME ...]``: the table, exit status 1 when an
    example is outside its tolerance."""
    args = sys.argv[1:] if argv is None else argv
    try:
        names = select(",".join(args) or "all")
    except ValueError as exc:
        print(f"python -m examples.kernel_language: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    text, ok = demo_line(names)
    print(text)
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":  # pragma: no cover
    main()
