"""Compiler bugs found by the differential fuzzer (``pyasc fuzz``), one minimal program each.

Every test compiles with ``pyasc_mlir.compile`` and checks the interpreter at every stage and
the CPU build against NumPy.

* Kernel outputs in op order, not return order (``asc-fuse``): ``return b, a`` with ``a``
  computed first swapped the two results on the CPU build -- and, when their shapes differ,
  wrote past the smaller output buffer (heap corruption).
* A value returned twice (``asc-fuse``): the kernel had one output argument, the launcher passed
  two ("kernel takes 4 arguments, got 5").
* An input returned unchanged (``asc-fuse``): next to computed values, one kernel output
  argument too few ("kernel takes 5 arguments, got 6"); alone (``return x``, or
  ``x.astype(pa.float16)`` of a float16 ``x``, or every computed value dead) no kernel at all
  (``ValueError: not enough values to unpack`` in the CPU-entry emitter). The kernel now copies
  returned inputs.
* Independent outputs (``iteration_space``): ``return x * 2, y * 3`` was rejected ("an output of
  the operator does not span all of its leading dimensions"): nothing related the two
  computations' dims, so each got its own iteration axes.
* A broadcast mask (``asc-decompose``): ``where(m, x, ...)`` with ``m`` broadcast along the row
  copied mask *bytes* element by element (``GetValue``/``Duplicate`` on the bit-packed mask);
  the ascendc interpreter crashed on it. Masks are now broadcast as 1.0/0.0 floats.
* The sign of a zero sum over a middle axis (tile interpreter): summing rows of -0 gave +0 in
  the tile interpreter (NumPy's reduction starts at +0) but -0 in the ascendc interpreter and
  the CPU build, which add the rows one after another (``pyasc fuzz --programs 2000 --seed 1``,
  program #1840).
"""

from __future__ import annotations

import numpy as np
import pytest

import pyasc_mlir as pa

STAGES = ("tensor", "tile", "ascendc")


def _check(
    fn,
    arrays: list[np.ndarray],
    expected: list[np.ndarray],  # noqa: ANN001
    platform: str = "910B2",
) -> None:
    op = pa.compile(fn, [pa.TensorDesc.of(a) for a in arrays], platform=platform, cache=False)
    runs = {s: op.run_stage(s, *arrays) for s in STAGES}
    runs["cpu"] = op.run_cpu(*arrays)
    for where, outs in runs.items():
        assert len(outs) == len(expected), where
        for j, (got, want) in enumerate(zip(outs, expected, strict=True)):
            assert got.shape == want.shape, (where, j, got.shape, want.shape)
            np.testing.assert_allclose(
                got.astype(np.float64), want, rtol=1e-5, atol=1e-6, err_msg=f"{where} output {j}"
            )


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + sum(shape)).uniform(-3, 3, shape).astype(np.float32)


# -------------------------------------------------------------------------- output order


def returns_later_value_first(x, y):
    a = x + y
    b = a * 2.0
    return b, a


def returns_reduction_first(x, y):
    a = x + y
    b = a.sum(-1, keepdim=True)
    return b, a


def test_outputs_follow_the_return_order() -> None:
    x, y = _rand(4, 33), _rand(4, 33, seed=1)
    s = x.astype(np.float64) + y
    _check(returns_later_value_first, [x, y], [2 * s, s])


def test_outputs_of_different_shapes_follow_the_return_order() -> None:
    x, y = _rand(40, 33), _rand(40, 33, seed=1)
    s = x.astype(np.float64) + y
    _check(returns_reduction_first, [x, y], [s.sum(-1, keepdims=True), s])


# -------------------------------------------------------------------------- repeated / passthrough


def returns_twice(x):
    a = x * 2.0
    return a, a


def returns_input(x, y):
    return x


def returns_inputs_and_value(x, y):
    return y * 3.0, x, y


def returns_a_noop_cast(x):
    x.sum(-1)  # dead: removed before fusion
    return x.astype(pa.float16), x


def test_a_value_returned_twice() -> None:
    x = _rand(4, 33)
    _check(returns_twice, [x], [2.0 * x, 2.0 * x])


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_an_input_returned_unchanged(dtype: str) -> None:
    x, y = _rand(5, 7).astype(dtype), _rand(5, 7, seed=1).astype(dtype)
    _check(returns_input, [x, y], [x.astype(np.float64)])


def test_only_inputs_returned_after_dead_code() -> None:
    x = _rand(3, 17).astype(np.float16)
    _check(returns_a_noop_cast, [x], [x.astype(np.float64), x.astype(np.float64)])


def test_inputs_returned_next_to_a_value() -> None:
    x, y = _rand(4, 33), _rand(4, 33, seed=1)
    _check(returns_inputs_and_value, [x, y], [3.0 * y.astype(np.float64), x, y])


# -------------------------------------------------------------------------- independent outputs


def independent(x, y):
    return x * 2.0, y * 3.0


def independent_with_reduction(x, y):
    return x * 2.0, y.sum(-1, keepdim=True)


def test_independent_outputs_share_the_iteration_space() -> None:
    x, y = _rand(4, 33), _rand(4, 33, seed=1)
    _check(independent, [x, y], [2.0 * x.astype(np.float64), 3.0 * y.astype(np.float64)])
    _check(
        independent_with_reduction,
        [x, y],
        [2.0 * x.astype(np.float64), y.astype(np.float64).sum(-1, keepdims=True)],
    )


# -------------------------------------------------------------------------- mask broadcast


def broadcast_mask(x, y):
    m = y > 0.0
    return pa.where(m, x, -1.0)


def broadcast_reduced_mask(x0, x3):
    t1 = x0.max((1, 2), keepdim=True)
    m = x3 != t1
    return pa.where(m, x0, t1)


@pytest.mark.parametrize("platform", ["910B2", "310P3"])
def test_a_mask_broadcast_along_the_row(platform: str) -> None:
    x, y = _rand(6, 40), _rand(6, 1, seed=1)
    _check(broadcast_mask, [x, y], [np.where(y > 0, x, -1.0)], platform)


def test_a_reduced_mask_broadcast_over_rows_and_columns() -> None:
    x0 = _rand(1, 8, 255)
    x3 = np.array([x0.max()], np.float32)  # equal to the max: the mask is all False
    for probe in (x3, x3 + 1):
        t1 = x0.astype(np.float64).max(axis=(1, 2), keepdims=True)
        _check(broadcast_reduced_mask, [x0, probe], [np.where(probe != t1, x0, t1)])


def _sum_rows(x0):
    return (x0.sum(0, keepdim=True),)


def test_middle_axis_sum_of_negative_zeros_is_negative_zero_on_every_stage() -> None:
    x = np.full((2, 33, 1, 1), -0.0, np.float16)
    x[1, 5] = 0.0  # a +0 term makes that sum +0
    op = pa.compile(_sum_rows, [pa.TensorDesc.of(x)], cache=False)
    outs = {s: op.run_stage(s, x)[0] for s in ("tile", "ascendc")} | {"cpu": op.run_cpu(x)[0]}
    for stage, got in outs.items():
        assert got.shape == (1, 33, 1, 1), stage
        assert not got.any(), stage
        want = np.ones(33, bool)
        want[5] = False
        np.testing.assert_array_equal(np.signbit(got).reshape(-1), want, err_msg=stage)
