"""``asc-lower-layout``: transpose / concat / slice as data-movement kernels, end to end.

Every case compiles the operator, runs the CPU build of the emitted Ascend C and the
interpreter at the ascendc and tile stages, and compares with NumPy exactly (the kernels only
move data). Shapes have tails 1, 7, 33, 513; fp16 and fp32. Translation validation runs each
pass of the pipeline on the interpreter (before == after).
"""

from __future__ import annotations

import numpy as np
import pytest

import pyasc_mlir as pa
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.passes.registry import PASSES, PIPELINES
from pyasc_mlir.validation import random_inputs, validate_pass

DTYPES = ["float16", "float32"]


def tr2(x):
    return x.T


def perm_keep_last(x):
    return x.permute(1, 0, 2)


def perm_move_last(x):
    return x.permute(2, 0, 1)


def sl(x):
    return x[1:, 2:-1]


def sl_row(x):
    return x[-1]


def cat_rows(a, b):
    return pa.concat([a, b, a], axis=0)


def cat_last(a, b):
    return pa.concat((b, a), axis=-1)


def refs(fn, xs):
    a = xs[0]
    return {
        "tr2": lambda: a.T,
        "perm_keep_last": lambda: a.transpose(1, 0, 2),
        "perm_move_last": lambda: a.transpose(2, 0, 1),
        "sl": lambda: a[1:, 2:-1],
        "sl_row": lambda: a[-1],
        "cat_rows": lambda: np.concatenate([a, xs[1], a], axis=0),
        "cat_last": lambda: np.concatenate([xs[1], a], axis=-1),
    }[fn.__name__]()


CASES = []
for t in (1, 7, 33, 513):
    CASES += [
        (tr2, [(t, 33)]),
        (perm_keep_last, [(3, 5, t)]),
        (sl, [(4, t + 3)]),
        (cat_rows, [(2, t), (1, t)]),
        (cat_last, [(3, t), (3, 7)]),
    ]
CASES += [
    (tr2, [(513, 7)]),
    (perm_move_last, [(2, 3, 33)]),
    (sl_row, [(5, 513)]),
    (tr2, [(4100, 2)]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("fn", "shapes"), CASES, ids=[f"{f.__name__}-{s}" for f, s in CASES])
def test_layout_kernels_match_numpy(fn, shapes, dtype):
    rng = np.random.default_rng(len(CASES))
    xs = [rng.standard_normal(s).astype(dtype) for s in shapes]
    op = pa.compile(fn, [pa.TensorDesc(s, dtype) for s in shapes])
    assert op.info["kernels"] == 1
    ref = refs(fn, xs)
    np.testing.assert_array_equal(op(*xs), ref)
    np.testing.assert_array_equal(op(*xs, backend="interp"), ref)
    (tile_out,) = op.run_stage("tile", *xs)
    np.testing.assert_array_equal(tile_out, ref)
    # GM traffic: every input element the op reads once, every output element once.
    assert op.info["gm_bytes"] == sum(x.nbytes for x in xs) + ref.nbytes


def test_layout_through_jit():
    f = pa.jit(cat_last)
    a, b = (
        np.random.default_rng(1).standard_normal(s).astype(np.float16) for s in [(7, 33), (7, 1)]
    )
    np.testing.assert_array_equal(f(a, b), np.concatenate([b, a], axis=-1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("fn", "shapes"),
    [
        (tr2, [(33, 7)]),
        (perm_move_last, [(2, 3, 17)]),
        (sl, [(5, 40)]),
        (cat_rows, [(2, 513), (3, 513)]),
        (cat_last, [(3, 1), (3, 7)]),
    ],
)
def test_every_pass_preserves_semantics(fn, shapes, dtype):
    module, _ = build_module(fn, [pa.TensorDesc(s, dtype) for s in shapes])
    args = random_inputs(module, fn.__name__, seed=2)
    for pass_name in PIPELINES["asc-to-ascendc"]:
        module = validate_pass(module, PASSES[pass_name]()(), fn.__name__, args, 0.0, 0.0)
    assert any(op.name == "asc.launch" for op in module.walk())
    assert not any(op.name in ("asc.transpose", "asc.concat", "asc.slice") for op in module.walk())
