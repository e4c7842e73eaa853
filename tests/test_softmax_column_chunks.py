"""Softmax over a non-trailing axis whose ``[M, L]`` slab does not fit the Unified Buffer:
``asc-tile`` walks column chunks (``M`` blocks of a multiple of 16 columns) instead of refusing
(cann-bench softmax cases 6, 9 and 11 at reduced, tail-shaped sizes). CPU build and the
``ascendc``-stage interpreter against a float64 NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest

import pyasc_mlir as pa


def _softmax(d: int):
    def softmax(x):
        e = pa.exp(x - pa.max(x, axis=d, keepdim=True))
        return e / pa.sum(e, axis=d, keepdim=True)

    return softmax


CASES = [
    ((3, 500, 37), 1, "float32", 1e-6),  # slab 500 x 48 fp32: too big whole, 16 columns fit
    ((5, 513, 33), 1, "float16", 1e-3),
    ((2, 700, 7), -2, "float16", 1e-3),
]


@pytest.mark.parametrize(("shape", "dim", "dtype", "atol"), CASES)
def test_softmax_column_chunks(shape, dim, dtype, atol):
    x = (np.random.default_rng(0).standard_normal(shape) * 3).astype(dtype)
    op = pa.compile(_softmax(dim), [pa.TensorDesc(shape, dtype)])
    x64 = x.astype(np.float64)
    ref = np.exp(x64 - x64.max(axis=dim, keepdims=True))
    ref /= ref.sum(axis=dim, keepdims=True)
    assert op.info["tiling"]["m"] == shape[1]
    assert op.info["tiling"]["chunk_len"] < shape[2] or op.info["tiling"]["rows"] == shape[0]
    np.testing.assert_allclose(op(x).astype(np.float64), ref, atol=atol, rtol=0)
    interp = op.run_stage("ascendc", x)
    interp = interp[0] if isinstance(interp, (list, tuple)) else interp
    np.testing.assert_allclose(np.asarray(interp).astype(np.float64), ref, atol=atol, rtol=0)


def test_cann_softmax_cases_compile():
    """The three measured cann-bench softmax cases that did not compile now lower to one
    kernel each."""
    from benchmarks.cann_cases import load_cases, walks

    cases = [c for c in load_cases() if c.op == "softmax" and c.case in (6, 9, 11)]
    assert len(cases) == 3
    for c in cases:
        assert len(walks(c)) == 1, c.label
