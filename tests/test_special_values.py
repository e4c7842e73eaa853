"""Special values (NaN, +-inf, +-0, fp16 subnormals) through max/min/relu/abs and row max/min:
one semantics in every executor (docs/CPU_RUNTIME.md, "Special values").

The defined semantics, checked against a NumPy reference written here from the table:

* ``maximum``/``minimum`` (tensor-tensor and tensor-number) and ``max``/``min`` reductions:
  NaN if any operand is NaN (PyTorch); ``-0 < +0`` (IEEE 754-2019 ``maximum``/``minimum``),
  so ``max(-0, +0) = +0`` and ``min(-0, +0) = -0`` whatever the operand order;
* ``relu(x)``: ``+0`` where ``x < 0``, else ``x`` -- NaN stays NaN and ``relu(-0) = -0``
  (PyTorch CPU, measured);
* ``abs(x)``: the sign bit cleared (``abs(-0) = +0``, ``abs(-NaN)`` a NaN).

Every executor -- the tensor, tile and ascendc interpreters and the CPU build of the emitted
Ascend C -- must give these bits exactly (NaN payloads canonicalised), for fp16 and fp32, on
shapes with tails. Numeric-check mode must see a NaN that flows through ``relu``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import pyasc_mlir as pa

SHAPES = [(1,), (7,), (33,), (513,), (4097,)]
ROW_SHAPES = [(3, 1), (2, 7), (5, 33), (2, 513), (1, 4097)]
UINT = {np.dtype(np.float16): np.uint16, np.dtype(np.float32): np.uint32}


def specials(dtype) -> np.ndarray:
    """NaN (both signs), +-inf, +-0, +-1, +-smallest subnormal, +-largest subnormal,
    +-smallest normal, +-largest finite."""
    fi = np.finfo(dtype)
    sub = fi.smallest_subnormal
    vals = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5]
    vals += [sub, -sub, fi.smallest_normal - sub, -(fi.smallest_normal - sub)]
    vals += [fi.smallest_normal, -fi.smallest_normal, fi.max, -fi.max]
    out = np.array(vals, dtype=dtype)
    out[1] = -np.abs(out[1])  # a NaN with the sign bit set
    return out


def pairs(n: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """``n`` operand pairs cycling through every (special, special) combination; the first
    ones put a NaN in each position and the +-0 ties in both orders."""
    s = specials(dtype)
    first = [(0, 6), (6, 0), (4, 5), (5, 4), (1, 6), (6, 1), (0, 1), (5, 5), (4, 4)]
    grid = first + list(itertools.product(range(s.size), repeat=2))
    idx = np.array([grid[i % len(grid)] for i in range(n)])
    return s[idx[:, 0]], s[idx[:, 1]]


def bits(x: np.ndarray) -> np.ndarray:
    """The bit patterns of ``x`` with every NaN made the same quiet NaN."""
    x = np.asarray(x)
    u = x.view(UINT[x.dtype]).copy()
    u[np.isnan(x)] = np.array(np.nan, x.dtype).view(UINT[x.dtype])
    return u


def assert_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, what
    bad = np.flatnonzero(bits(got).ravel() != bits(want).ravel())
    if bad.size:
        i = int(bad[0])
        raise AssertionError(
            f"{what}: {bad.size} of {got.size} elements differ; first at "
            f"{i}: got {got.ravel()[i]!r} ({bits(got).ravel()[i]:#x}), "
            f"want {want.ravel()[i]!r} ({bits(want).ravel()[i]:#x})"
        )


# --------------------------------------------------------------------------- the reference


def _u(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).view(UINT[np.asarray(x).dtype])


def ref_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE 754-2019 maximum: NaN wins; on equal operands (+-0 ties) the AND of the bits."""
    tie = (_u(a) & _u(b)).view(a.dtype)
    r = np.where(a > b, a, b)
    r = np.where(a == b, tie, r)
    return np.where(np.isnan(a) | np.isnan(b), np.array(np.nan, a.dtype), r).astype(a.dtype)


def ref_min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE 754-2019 minimum: NaN wins; on equal operands (+-0 ties) the OR of the bits."""
    tie = (_u(a) | _u(b)).view(a.dtype)
    r = np.where(a < b, a, b)
    r = np.where(a == b, tie, r)
    return np.where(np.isnan(a) | np.isnan(b), np.array(np.nan, a.dtype), r).astype(a.dtype)


def ref_relu(x: np.ndarray) -> np.ndarray:
    return np.where(x < 0, np.zeros_like(x), x)


def ref_abs(x: np.ndarray) -> np.ndarray:
    sign = np.array(1 << (8 * x.dtype.itemsize - 1), UINT[x.dtype])
    return (_u(x) & ~sign).view(x.dtype)


def ref_reduce(x: np.ndarray, f) -> np.ndarray:
    """Row reduction with the elementwise ``f``: order does not matter for these semantics."""
    out = x[..., 0].copy()
    for j in range(1, x.shape[-1]):
        out = f(out, x[..., j])
    return out[..., None]


def test_reference_matches_pytorch_where_pytorch_is_consistent():
    """The table above is PyTorch CPU's for NaN (every op), ``relu(-0)`` and ``abs(-0)``:
    checked with torch itself when it is installed."""
    torch = pytest.importorskip("torch")
    for dt in (np.float16, np.float32):
        a, b = pairs(300, dt)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        for mine, theirs in (
            (ref_max(a, b), torch.maximum(ta, tb)),
            (ref_min(a, b), torch.minimum(ta, tb)),
        ):
            t = theirs.numpy()
            np.testing.assert_array_equal(np.isnan(mine), np.isnan(t))
            nz = (a != 0) | (b != 0)  # torch's +-0 ties depend on the vector width
            np.testing.assert_array_equal(bits(mine[nz]), bits(t[nz]))
        assert_bits(ref_relu(a), torch.relu(ta).numpy(), "relu")
        np.testing.assert_array_equal(
            bits(ref_abs(a)) & ~np.array(1 << (8 * a.itemsize - 1), UINT[a.dtype]),
            bits(torch.abs(ta).numpy()),
        )
        x = np.array([[1.0, np.nan, 2.0], [-1.0, -2.0, -3.0]], dt)
        tx = torch.from_numpy(x)
        assert_bits(ref_reduce(x, ref_max), torch.amax(tx, -1, keepdim=True).numpy(), "amax")
        assert_bits(ref_reduce(x, ref_min), torch.amin(tx, -1, keepdim=True).numpy(), "amin")


# --------------------------------------------------------------------------- operators


def u_elementwise(x, y):
    return (
        pa.maximum(x, y),
        pa.minimum(x, y),
        pa.relu(x),
        abs(x),
        pa.maximum(x, 0.0),
        pa.minimum(x, 0.0),
        pa.maximum(x, -0.0),
        pa.minimum(x, -0.0),
    )


def elementwise_refs(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    z, nz = np.zeros_like(x), np.full_like(x, -0.0)
    return [
        ref_max(x, y),
        ref_min(x, y),
        ref_relu(x),
        ref_abs(x),
        ref_max(x, z),
        ref_min(x, z),
        ref_max(x, nz),
        ref_min(x, nz),
    ]


NAMES = [
    "maximum",
    "minimum",
    "relu",
    "abs",
    "maximum(x, 0)",
    "minimum(x, 0)",
    "maximum(x, -0)",
    "minimum(x, -0)",
]


def run_everywhere(op, *arrays) -> dict[str, list[np.ndarray]]:
    outs = {stage: op.run_stage(stage, *arrays) for stage in ("tensor", "tile", "ascendc")}
    cpu = op(*arrays, backend="cpu")
    outs["cpu"] = list(cpu) if isinstance(cpu, tuple) else [cpu]
    return outs


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_elementwise_special_values_bit_exact_everywhere(dtype, shape):
    x, y = pairs(math.prod(shape), dtype)
    x, y = x.reshape(shape), y.reshape(shape)
    op = pa.compile(u_elementwise, [pa.TensorDesc(shape, dtype)] * 2)
    with np.errstate(invalid="ignore"):
        wants = elementwise_refs(x, y)
    for where, got in run_everywhere(op, x, y).items():
        for name, g, w in zip(NAMES, got, wants, strict=True):
            assert_bits(g, w, f"{name} on {where}, {dtype} {shape}")


def u_row_max_min(x):
    return pa.max(x, -1, keepdim=True), pa.min(x, -1, keepdim=True), x.sum(-1, keepdim=True)


def row_inputs(shape, dtype) -> np.ndarray:
    """Rows with a NaN first, last, in the middle, or none; rows of +-0 in both orders; rows
    with +-inf and subnormals."""
    rows, n = shape
    s = specials(dtype)
    rng = np.random.default_rng(rows * 10007 + n)
    x = rng.choice(s[2:], size=shape).astype(dtype)  # no NaN by default
    kinds = itertools.cycle(
        [
            "nan_first",
            "nan_last",
            "zeros_neg_first",
            "zeros_pos_first",
            "nan_mid",
            "neg_zeros",
            "plain",
        ]
    )
    for r, k in zip(range(rows), kinds, strict=False):
        if k == "nan_first":
            x[r, 0] = np.nan
        elif k == "nan_last":
            x[r, -1] = -np.nan
        elif k == "nan_mid":
            x[r, n // 2] = np.nan
        elif k in ("zeros_neg_first", "zeros_pos_first", "neg_zeros"):
            x[r] = -0.0 if k != "zeros_pos_first" else 0.0
            if k != "neg_zeros" and n > 1:
                x[r, 1::2] = 0.0 if k == "zeros_neg_first" else -0.0
    return x


@pytest.mark.parametrize("shape", ROW_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_row_max_min_special_values_bit_exact_everywhere(dtype, shape):
    x = row_inputs(shape, dtype)
    op = pa.compile(u_row_max_min, [pa.TensorDesc(shape, dtype)])
    want_max, want_min = ref_reduce(x, ref_max), ref_reduce(x, ref_min)
    nan_rows = np.isnan(x).any(-1, keepdims=True)
    for where, (mx, mn, sm) in run_everywhere(op, x).items():
        assert_bits(mx, want_max, f"row max on {where}, {dtype} {shape}")
        assert_bits(mn, want_min, f"row min on {where}, {dtype} {shape}")
        assert np.isnan(sm[nan_rows]).all(), f"row sum drops a NaN on {where}"


def u_col_max(x):
    return pa.max(x, 0, keepdim=True), pa.min(x, 0, keepdim=True)


@pytest.mark.parametrize("shape", [(3, 7), (4, 33), (2, 513)], ids=str)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_column_max_min_special_values_bit_exact_everywhere(dtype, shape):
    """Reductions over a leading axis (the ``mid`` vector reduction: a loop of Max/Min)."""
    x = row_inputs(shape[::-1], dtype).T.copy()
    op = pa.compile(u_col_max, [pa.TensorDesc(shape, dtype)])
    want_max = ref_reduce(x.T, ref_max).T
    want_min = ref_reduce(x.T, ref_min).T
    for where, (mx, mn) in run_everywhere(op, x).items():
        assert_bits(mx, want_max, f"column max on {where}, {dtype} {shape}")
        assert_bits(mn, want_min, f"column min on {where}, {dtype} {shape}")


def u_relu_scale(x):
    return pa.relu(x) * 2.0


def test_numeric_check_sees_a_nan_through_relu():
    x = np.array([1.0, -2.0, np.nan, 3.0, -0.0, 5.0, 6.0], np.float32)
    op = pa.compile(u_relu_scale, [pa.TensorDesc(x.shape, "float32")])
    with pa.enable_numeric_check(True):
        for backend in ("cpu", "interp"):
            with pytest.raises(pa.NumericCheckError) as info:
                op(x, backend=backend)
            assert "nan" in str(info.value).lower(), backend
    with pa.enable_numeric_check(False):
        out = op(x, backend="cpu")
    assert_bits(out, np.array([2.0, 0.0, np.nan, 6.0, -0.0, 10.0, 12.0], np.float32), "relu(x) * 2")
