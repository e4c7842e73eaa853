"""Helpers shared by the test modules: tolerances, NumPy references, error-marker lines, inputs.

Import them as ``from helpers import ...`` (pytest puts ``tests/`` on ``sys.path``; fixtures
live in ``conftest.py``, which pytest loads itself and test modules do not import).

Tolerances (``shared/ASCEND_FACTS.md``): rtol = atol = 1e-3 for float16 results (8e-3 for
bfloat16: the same rule for its 8 significant bits), 1e-5 for
float32 results and 1e-4 for float32 reductions, unless a test passes its own ``rtol``/``atol``.
References take their inputs in the precision the caller chose (cast before calling: float32
for "computed in float32, rounded once", float64 for an exact reference).
"""

from __future__ import annotations

import inspect
import math
import re
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect
from xdsl.parser import Parser

import pyasc_mlir as pa

F16_TOL = 1e-3
BF16_TOL = 8e-3
F32_TOL = 1e-5
F32_REDUCTION_TOL = 1e-4


def tolerance(dtype: Any, reduction: bool = False) -> dict[str, float]:
    """The project's ``rtol``/``atol`` for results of ``dtype`` (float16, bfloat16 or float32; a
    reduction accumulates more rounding in float32)."""
    if np.dtype(dtype) == np.float16:
        return {"rtol": F16_TOL, "atol": F16_TOL}
    if np.dtype(dtype).name == "bfloat16":
        return {"rtol": BF16_TOL, "atol": BF16_TOL}
    tol = F32_REDUCTION_TOL if reduction else F32_TOL
    return {"rtol": tol, "atol": tol}


def assert_close(
    actual: np.ndarray,
    expected: Any,
    dtype: Any = None,
    *,
    reduction: bool = False,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
) -> None:
    """``actual`` equals ``expected`` within tolerance, compared in float64.

    With ``dtype``: ``actual`` has that dtype and ``expected``'s shape, and ``expected`` (a
    float32-or-wider reference) is first rounded once to ``dtype`` through float32, as the kernel
    rounds its result. Without it, both are compared as given. ``rtol``/``atol`` default to
    :func:`tolerance` of ``dtype`` (else of ``actual.dtype``); a test may pass its own.

    Raises:
        AssertionError: a dtype, shape or value mismatch.
    """
    if dtype is not None:
        expected = np.asarray(expected, dtype=np.float32).astype(dtype)
        assert actual.dtype == np.dtype(dtype)
        assert actual.shape == expected.shape
    tol = tolerance(actual.dtype if dtype is None else dtype, reduction)
    np.testing.assert_allclose(
        np.asarray(actual).astype(np.float64),
        np.asarray(expected).astype(np.float64),
        rtol=tol["rtol"] if rtol is None else rtol,
        atol=tol["atol"] if atol is None else atol,
        equal_nan=equal_nan,
    )


# --------------------------------------------------------------------------- operators


def softmax(x: Any) -> Any:
    """Softmax over the last axis, as a pyasc operator (``@jit`` or ``compile`` it); where a
    test checks error locations in its own file, it defines its own operators instead."""
    e = pa.exp(x - x.max(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


# --------------------------------------------------------------------------- NumPy references


def softmax_ref(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``, max-subtracted, in ``x``'s dtype (cast ``x`` first)."""
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def layernorm_ref(x: np.ndarray, w: Any = None, b: Any = None, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm over the last axis with the biased variance E[(x - mean)^2], in ``x``'s dtype;
    scaled by ``w`` and shifted by ``b`` when given."""
    d = x - x.mean(-1, keepdims=True)
    y = d / np.sqrt((d * d).mean(-1, keepdims=True) + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def erf_ref(x: Any) -> np.ndarray:
    """``math.erf`` element-wise, in float64 (NumPy has no erf)."""
    return np.array([math.erf(v) for v in np.ravel(x).astype(np.float64)]).reshape(np.shape(x))


# --------------------------------------------------------------------------- inputs


def seed_of(*key: Any) -> int:
    """A deterministic seed from ``key`` (``hash`` of a str is salted per process)."""
    return zlib.crc32(repr(key).encode())


def make_input(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: Any, domain: str = "any"
) -> np.ndarray:
    """Random values of ``shape`` in an op's domain: ``pos`` in [0.1, 4), ``nonzero`` with
    |x| in [0.5, 3), ``int`` small integers in [-3, 3], else normal with std 2."""
    if domain == "pos":
        x = rng.uniform(0.1, 4.0, size=shape)
    elif domain == "nonzero":
        x = rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.5, 3.0, size=shape)
    elif domain == "int":
        x = rng.integers(-3, 4, size=shape).astype(np.float64)
    else:
        x = rng.standard_normal(size=shape) * 2.0
    return np.asarray(x, dtype=dtype)


# --------------------------------------------------------------------------- IR and errors


def dialect_context(*dialects: Dialect) -> Context:
    """A context with exactly ``dialects`` loaded (a test's own, smaller than the driver's)."""
    ctx = Context()
    for d in dialects:
        ctx.load_dialect(d)
    return ctx


def parse(src: str, ctx: Context) -> ModuleOp:
    """Parse ``src`` (MLIR text) with the dialects of ``ctx`` and verify it."""
    module = Parser(ctx, src).parse_module()
    module.verify()
    return module


def line_of(fn: Callable[..., Any], marker: str = "# ERR") -> int:
    """The line (in its file) of the first line of ``fn``'s source containing ``marker``.

    Raises:
        AssertionError: ``fn`` has no such line.
    """
    lines, start = inspect.getsourcelines(fn)
    for i, text in enumerate(lines):
        if marker in text:
            return start + i
    raise AssertionError(f"no {marker!r} in {fn.__name__}")


def tagged_line(path: str, tag: str) -> int:
    """The line of file ``path`` carrying the marker ``# ERR <tag>``.

    Raises:
        AssertionError: no line carries it.
    """
    marker = re.compile(rf"#\s*ERR {re.escape(tag)}\b")
    with open(path) as f:
        for n, text in enumerate(f.read().splitlines(), 1):
            if marker.search(text):
                return n
    raise AssertionError(f"no '# ERR {tag}' marker")


def tcube_fields(
    m: int,
    n: int,
    k: int,
    base: tuple[int, int, int],
    single_m: int | None = None,
    bias: bool = True,
) -> dict[str, int]:
    """The TCubeTiling fields of a one-core [m, k] x [k, n] Matmul with base blocks ``base``
    (baseM, baseN, baseK), A1/B1 depth 2, steps 1 and L0 single-buffered: what the samples'
    host code would fill in (``singleCoreM``: ``single_m``, default ``m``)."""
    bm, bn, bk = base
    return dict(
        usedCoreNum=1,
        M=m,
        N=n,
        Ka=k,
        Kb=k,
        singleCoreM=single_m or m,
        singleCoreN=n,
        singleCoreK=k,
        baseM=bm,
        baseN=bn,
        baseK=bk,
        depthA1=2,
        depthB1=2,
        stepM=1,
        stepN=1,
        stepKa=1,
        stepKb=1,
        dbL0A=1,
        dbL0B=1,
        dbL0C=1,
        isBias=int(bias),
    )


def tcube_arg(fields: dict[str, int]) -> str:
    """``fields`` as a ``pyasc cpu-run`` argument (``tcube:name=value,...``)."""
    return "tcube:" + ",".join(f"{key}={v}" for key, v in fields.items())
