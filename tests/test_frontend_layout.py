"""Frontend and tensor-level interpreter for matmul and the layout ops (issue 4, item 1).

``a @ b`` / ``pa.matmul`` (transposes, batch broadcast, f16 operands fed uncast), transpose /
permute / ``.T``, ``concat``, indexing and slicing, ``reshape(-1)``, the shape helpers and the
variadic tensor-tuple argument: the IR the frontend builds, its values through the tensor-level
interpreter against NumPy, and located errors that name the shapes.

References: matmul in float32 from the float32-converted inputs (f32 accumulation), rounded
once to the result dtype; tolerance rtol=atol=1e-5 (f32 result) / 1e-3 (f16 result) — the
interpreter and the reference both use float32 matmul, only the summation order may differ.
Layout ops move data and are compared exactly.
"""

from __future__ import annotations

import linecache

import numpy as np
import pytest
from helpers import line_of

import pyasc_mlir as pa
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.types import TensorDesc

THIS_FILE = __file__
DTYPES = ["float16", "float32"]
TAILS = [1, 7, 33, 513]
MNK = [
    (1, 1, 1),
    (15, 17, 100),
    (17, 15, 513),
    (100, 513, 1),
    (513, 17, 100),
    (513, 1, 15),
    (1, 513, 17),
]


def T(shape, dtype="float32") -> TensorDesc:  # noqa: N802
    return TensorDesc(shape, dtype)


def rand(shape, dtype, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def run(fn, args, inputs):
    module, dtypes = build_module(fn, args)
    module.verify()
    outs = run_function(module, fn.__name__, inputs)
    assert [o.dtype.name for o in outs] == dtypes
    return module, outs


def ops_named(module, name):
    return [op for op in module.walk() if op.name == name]


def check_error(fn, args, message: str) -> PyAscCompileError:
    """``build_module`` fails at the ``# ERR`` line of ``fn`` with ``message``, showing the
    source line and a caret."""
    with pytest.raises(PyAscCompileError) as info:
        build_module(fn, args)
    err = info.value
    text = str(err)
    line = line_of(fn)
    assert message in err.message, text
    assert err.loc is not None and err.loc.file == THIS_FILE and err.loc.line == line, text
    assert text.startswith(f"{err.loc}: error:") and str(err.loc).startswith(f"{THIS_FILE}:{line}:")
    assert f"    {linecache.getline(THIS_FILE, line).rstrip()}" in text.splitlines()
    return err


# --------------------------------------------------------------------------- matmul


def mm_plain(a, b):
    return a @ b


def mm_ta(a, b):
    return pa.matmul(a, b, transpose_a=True)


def mm_tb(a, b):
    return pa.matmul(a, b, transpose_b=True)


def mm_tab(a, b):
    return pa.matmul(a, b, transpose_a=True, transpose_b=True)


MM_FNS = {
    (False, False): mm_plain,
    (True, False): mm_ta,
    (False, True): mm_tb,
    (True, True): mm_tab,
}


def mm_ref(a, b, ta, tb, dtype):
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    if ta:
        a32 = np.swapaxes(a32, -1, -2)
    if tb:
        b32 = np.swapaxes(b32, -1, -2)
    return np.matmul(a32, b32).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ta,tb", list(MM_FNS))
@pytest.mark.parametrize("m,n,k", MNK)
def test_matmul_values(m, n, k, ta, tb, dtype):
    sa = (k, m) if ta else (m, k)
    sb = (n, k) if tb else (k, n)
    a, b = rand(sa, dtype, 1), rand(sb, dtype, 2)
    fn = MM_FNS[(ta, tb)]
    module, (out,) = run(fn, [T(sa, dtype), T(sb, dtype)], [a, b])
    (mm,) = ops_named(module, "asc.matmul")
    assert (mm.trans_a, mm.trans_b) == (ta, tb)
    # f16 operands reach the matmul as f16 (no cast): the Cube reads f16 from GM.
    want = "f16" if dtype == "float16" else "f32"
    assert str(mm.lhs.type.element_type) == want and str(mm.rhs.type.element_type) == want
    casts = ops_named(module, "asc.cast")
    assert all(str(c.input.type.element_type) == "f32" for c in casts)  # only the output's
    assert out.dtype == np.dtype(dtype) and out.shape == (m, n)
    tol = 1e-3 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(
        out.astype(np.float32),
        mm_ref(a, b, ta, tb, dtype).astype(np.float32),
        rtol=tol,
        atol=tol * max(1.0, np.sqrt(k)),
    )


def mm_dot_T(a, b):  # noqa: N802
    return a @ b.T


def mm_swap_batch(a, b):
    return a @ b.transpose(-1, -2) * 0.5


def test_matmul_folds_last_two_dims_transpose():
    """``a @ b.T`` and ``b.transpose(-1, -2)`` become ``transpose_b`` (no data movement)."""
    a, b = rand((7, 33), "float16", 3), rand((5, 33), "float16", 4)
    module, (out,) = run(mm_dot_T, [T((7, 33), "float16"), T((5, 33), "float16")], [a, b])
    (mm,) = ops_named(module, "asc.matmul")
    assert mm.trans_b and not mm.trans_a
    assert not ops_named(module, "asc.transpose")
    np.testing.assert_allclose(
        out.astype(np.float32),
        mm_ref(a, b, False, True, "float16").astype(np.float32),
        rtol=1e-3,
        atol=1e-3,
    )
    a, b = rand((2, 3, 7, 17), "float32", 5), rand((2, 3, 15, 17), "float32", 6)
    module, (out,) = run(mm_swap_batch, [T(a.shape), T(b.shape)], [a, b])
    (mm,) = ops_named(module, "asc.matmul")
    assert mm.trans_b and not ops_named(module, "asc.transpose")
    np.testing.assert_allclose(
        out, mm_ref(a, b, False, True, "float32") * 0.5, rtol=1e-5, atol=1e-5
    )


def test_matmul_batch_broadcast():
    a, b = rand((2, 1, 3, 4), "float32", 7), rand((5, 4, 6), "float32", 8)
    module, (out,) = run(mm_plain, [T(a.shape), T(b.shape)], [a, b])
    assert out.shape == (2, 5, 3, 6)
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=1e-5, atol=1e-5)


def mm_mixed(a, b):
    return a @ b


def mm_computed(a, b):
    return (a * 2.0) @ b


def test_matmul_dtypes():
    """f16 @ f32 is f32 (the f16 operand is cast, exactly); a computed operand of an f16
    program (f32 in the IR) is rounded to f16 so the other f16 operand is read in place;
    f16 @ f16 returns f16 from an f32-accumulating matmul."""
    a, b = rand((7, 33), "float16", 9), rand((33, 1), "float32", 10)
    module, (out,) = run(mm_mixed, [T(a.shape, "float16"), T(b.shape)], [a, b])
    (mm,) = ops_named(module, "asc.matmul")
    assert str(mm.lhs.type.element_type) == "f32" and out.dtype == np.float32
    np.testing.assert_allclose(out, a.astype(np.float32) @ b, rtol=1e-5, atol=1e-5)
    a, b = rand((7, 33), "float16", 11), rand((33, 15), "float16", 12)
    module, (out,) = run(mm_computed, [T(a.shape, "float16"), T(b.shape, "float16")], [a, b])
    (mm,) = ops_named(module, "asc.matmul")
    assert str(mm.lhs.type.element_type) == "f16" and out.dtype == np.float16
    assert str(mm.rhs.type.element_type) == "f16"
    ref = (a.astype(np.float32) * 2).astype(np.float16).astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(
        out.astype(np.float32), ref.astype(np.float16).astype(np.float32), rtol=1e-3, atol=1e-2
    )


def e_mm_rank(a, b):
    return a @ b  # ERR


def e_mm_k(a, b):
    return pa.matmul(a, b, transpose_b=True)  # ERR


def e_mm_batch(a, b):
    return a @ b  # ERR


def e_mm_mask(a, b):
    return (a > 0) @ b  # ERR


def e_mm_flag(a, b):
    return pa.matmul(a, b, transpose_a=a)  # ERR


def test_matmul_errors():
    check_error(
        e_mm_rank,
        [T((4,)), T((4, 3))],
        "matmul needs operands of rank >= 2, got shapes [4] and [4, 3]",
    )
    check_error(
        e_mm_k,
        [T((4, 5)), T((4, 6))],
        "matmul shapes [4, 5] and [4, 6] do not multiply, transpose_b=True: K differs (5 vs 6)",
    )
    check_error(e_mm_batch, [T((2, 4, 5)), T((3, 5, 6))], "batch dims [2] and [3] do not broadcast")
    check_error(e_mm_mask, [T((4, 4)), T((4, 4))], "a boolean mask cannot be a matmul operand")
    check_error(e_mm_flag, [T((4, 4)), T((4, 4))], "must be compile-time bools")


# --------------------------------------------------------------------------- transpose


def tr_swap(x):
    return x.transpose(0, -1)


def tr_permute(x):
    return x.permute(2, 0, 1)


def tr_permute_tuple(x):
    return x.permute((1, 2, 0))


def tr_fn(x):
    return pa.transpose(x)


def tr_T(x):  # noqa: N802
    return x.T


def tr_identity(x):
    return x.permute(0, 1, 2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tail", TAILS)
def test_transpose_values(tail, dtype):
    x3 = rand((3, 5, tail), dtype, tail)
    cases = [
        (tr_swap, np.swapaxes(x3, 0, -1)),
        (tr_permute, np.transpose(x3, (2, 0, 1))),
        (tr_permute_tuple, np.transpose(x3, (1, 2, 0))),
        (tr_fn, np.transpose(x3)),
    ]
    for fn, ref in cases:
        module, (out,) = run(fn, [T(x3.shape, dtype)], [x3])
        (tr,) = ops_named(module, "asc.transpose")
        assert str(tr.input.type.element_type) == ("f16" if dtype == "float16" else "f32")
        assert not ops_named(module, "asc.cast")  # f16 moves as f16
        np.testing.assert_array_equal(out, ref)
    x2 = rand((tail, 7), dtype, 1)
    _, (out,) = run(tr_T, [T(x2.shape, dtype)], [x2])
    np.testing.assert_array_equal(out, x2.T)
    module, (out,) = run(tr_identity, [T(x3.shape, dtype)], [x3])
    assert not ops_named(module, "asc.transpose")
    np.testing.assert_array_equal(out, x3)


def tr_mask(x):
    return pa.where((x > 0).T, 1.0, -1.0)


def test_transpose_of_mask():
    x = rand((7, 33), "float32", 2)
    _, (out,) = run(tr_mask, [T(x.shape)], [x])
    np.testing.assert_array_equal(out, np.where(x.T > 0, 1.0, -1.0).astype(np.float32))


def e_tr_perm(x):
    return x.permute(0, 0, 1)  # ERR


def e_tr_len(x):
    return x.permute(1, 0)  # ERR


def e_tr_3d_T(x):  # noqa: N802
    return x.T  # ERR


def e_tr_dim(x):
    return x.transpose(0, 3)  # ERR


def e_no_attr(x):
    return x.foo  # ERR


def test_transpose_errors():
    check_error(
        e_tr_perm,
        [T((2, 3, 4))],
        "[0, 0, 1] is not a permutation of the dims of a tensor of shape [2, 3, 4]",
    )
    check_error(
        e_tr_len, [T((2, 3, 4))], "permutation [1, 0] has 2 dims but the tensor has shape [2, 3, 4]"
    )
    check_error(e_tr_3d_T, [T((2, 3, 4))], ".T needs a 2-D tensor, got shape [2, 3, 4]")
    check_error(e_tr_dim, [T((2, 3, 4))], "dim 3 is out of range for a tensor of shape [2, 3, 4]")
    check_error(e_no_attr, [T((2, 3))], "a tensor has no attribute 'foo'")


# --------------------------------------------------------------------------- concat


def cat_rows(a, b, c):
    return pa.concat([a, b, c], axis=0)


def cat_last(a, b, c):
    return pa.concat((a, b, c), axis=-1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tail", TAILS)
def test_concat_values(tail, dtype):
    a, b, c = rand((2, tail), dtype, 1), rand((3, tail), dtype, 2), rand((1, tail), dtype, 3)
    module, (out,) = run(cat_rows, [T(v.shape, dtype) for v in (a, b, c)], [a, b, c])
    assert not ops_named(module, "asc.cast")
    np.testing.assert_array_equal(out, np.concatenate([a, b, c], axis=0))
    a, b, c = rand((4, tail), dtype, 4), rand((4, 1), dtype, 5), rand((4, 7), dtype, 6)
    _, (out,) = run(cat_last, [T(v.shape, dtype) for v in (a, b, c)], [a, b, c])
    np.testing.assert_array_equal(out, np.concatenate([a, b, c], axis=-1))


def test_concat_mixed_dtypes_is_f32():
    a, b, c = rand((2, 7), "float16", 1), rand((1, 7), "float32", 2), rand((3, 7), "float16", 3)
    module, (out,) = run(
        cat_rows, [T((2, 7), "float16"), T((1, 7)), T((3, 7), "float16")], [a, b, c]
    )
    assert out.dtype == np.float32
    np.testing.assert_array_equal(
        out, np.concatenate([a.astype(np.float32), b, c.astype(np.float32)])
    )


def e_cat_dims(a, b):
    return pa.concat([a, b], axis=1)  # ERR


def e_cat_rank(a, b):
    return pa.concat([a, b])  # ERR


def e_cat_empty(a, b):
    return pa.concat([], axis=0)  # ERR


def test_concat_errors():
    check_error(
        e_cat_dims,
        [T((2, 3)), T((4, 3))],
        "concat() along axis 1: shapes [2, 3], [4, 3] differ in dim 0",
    )
    check_error(
        e_cat_rank,
        [T((2, 3)), T((3,))],
        "concat() needs tensors of one rank, got shapes [2, 3], [3]",
    )
    check_error(e_cat_empty, [T((2, 3)), T((3,))], "non-empty list or tuple of tensors")


# --------------------------------------------------------------------------- indexing


def ix_cases(x):
    return x[1:3], x[-1], x[..., 2:], x[0, None, :, -2], x[:, 1:-1, ...]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tail", [7, 33, 513])
def test_indexing_values(tail, dtype):
    x = rand((4, 5, tail), dtype, tail)
    module, outs = run(ix_cases, [T(x.shape, dtype)], [x])
    refs = [x[1:3], x[-1], x[..., 2:], x[0, None, :, -2], x[:, 1:-1, ...]]
    for got, ref in zip(outs, refs, strict=True):
        assert got.shape == ref.shape
        np.testing.assert_array_equal(got, ref)
    for op in ops_named(module, "asc.slice"):
        assert str(op.input.type.element_type) == ("f16" if dtype == "float16" else "f32")


def ix_full(x):
    return x[:, ...] + x.reshape(-1).reshape(x.shape)


def test_full_slice_is_free():
    x = rand((3, 33), "float32", 1)
    module, (out,) = run(ix_full, [T(x.shape)], [x])
    assert not ops_named(module, "asc.slice") and len(ops_named(module, "asc.reshape")) == 2
    np.testing.assert_array_equal(out, x + x)


def reshape_flat(x):
    return x.reshape(-1), x.reshape(3, -1)


def test_reshape_minus_one():
    x = rand((3, 4, 7), "float16", 2)
    _, outs = run(reshape_flat, [T(x.shape, "float16")], [x])
    np.testing.assert_array_equal(outs[0], x.reshape(-1))
    np.testing.assert_array_equal(outs[1], x.reshape(3, -1))


def e_ix_step(x):
    return x[::2]  # ERR


def e_ix_range(x):
    return x[:, 7]  # ERR


def e_ix_many(x):
    return x[0, 0, 0]  # ERR


def e_ix_empty(x):
    return x[3:3]  # ERR


def e_ix_tensor(x):
    return x[x]  # ERR


def test_indexing_errors():
    check_error(e_ix_step, [T((4, 5))], "slice step 2 in dim 0 is not supported")
    check_error(
        e_ix_range, [T((4, 5))], "index 7 is out of range for dim 1 (size 5) of shape [4, 5]"
    )
    check_error(e_ix_many, [T((4, 5))], "too many indices (3) for a tensor of shape [4, 5]")
    check_error(e_ix_empty, [T((4, 5))], "the slice 3:3 of dim 0 (size 4) of shape [4, 5] is empty")
    check_error(e_ix_tensor, [T((4, 5))], "a tensor cannot be used as an index")


# --------------------------------------------------------------------------- shape helpers


def sh_match(x, w):
    B, S, H = pa.match_shape(x, (None, None, 384))  # noqa: N806
    pa.match_shape(w, (H,))
    pa.assert_same_rank(x, x * 2.0)
    pa.assert_compatible([x, x], exclude_dim=0)
    return x.reshape(B * S, H) * w


def test_shape_helpers_pass_and_return_dims():
    x, w = rand((2, 3, 384), "float32", 1), rand((384,), "float32", 2)
    module, (out,) = run(sh_match, [T(x.shape), T(w.shape)], [x, w])
    np.testing.assert_allclose(out, (x * w).reshape(6, 384), rtol=1e-6)


def e_match_dim(x):
    pa.match_shape(x, (None, 384))  # ERR
    return x


def e_match_rank(x):
    pa.match_shape(x, (None, None, 384))  # ERR
    return x


def e_same_rank(x, y):
    pa.assert_same_rank(x, y)  # ERR
    return x


def e_compatible(x, y):
    pa.assert_compatible([x, y], exclude_dim=-1)  # ERR
    return x


def e_compatible_rank(x, y):
    pa.assert_compatible((x, y))  # ERR
    return x


def test_shape_helper_errors():
    check_error(
        e_match_dim,
        [T((2, 100))],
        "shape [2, 100] does not match (None, 384): dim 1 is 100, expected 384",
    )
    check_error(
        e_match_rank,
        [T((2, 384))],
        "shape [2, 384] does not match (None, None, 384): rank 2, expected 3",
    )
    check_error(e_same_rank, [T((2, 3)), T((3,))], "tensors of different ranks: shapes [2, 3], [3]")
    check_error(
        e_compatible,
        [T((2, 3, 4)), T((2, 5, 6))],
        "shapes [2, 3, 4], [2, 5, 6] differ in dim 1 (exclude_dim=-1)",
    )
    check_error(
        e_compatible_rank,
        [T((2, 3)), T((2, 3, 1))],
        "tensors of different ranks: shapes [2, 3], [2, 3, 1]",
    )


# --------------------------------------------------------------------------- variadic tuples


def var_star(*xs):
    pa.assert_compatible(xs, exclude_dim=1)
    total = xs[0][:, :1] * 0.0
    for x in xs:
        total = total + x.sum(-1, keepdim=True)
    return pa.concat(xs, axis=1) * float(len(xs)), total


def var_tuple(xs, scale):
    out = xs[0] * scale
    for i, x in enumerate(xs[1:]):
        out = out + x * float(i + 2)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_variadic_star_args(dtype):
    xs = [rand((3, n), dtype, n) for n in (1, 7, 33)]
    module, (cat, total) = run(var_star, [T(x.shape, dtype) for x in xs], xs)
    names = [a.name_hint for a in next(iter(module.body.block.ops)).body.block.args]
    assert names == ["xs0", "xs1", "xs2"]
    x32 = [x.astype(np.float32) for x in xs]
    np.testing.assert_allclose(
        cat.astype(np.float32), (np.concatenate(x32, axis=1) * 3).astype(dtype), rtol=1e-3
    )
    np.testing.assert_allclose(
        total.astype(np.float32),
        sum(x.sum(-1, keepdims=True) for x in x32).astype(dtype),
        rtol=1e-3,
        atol=1e-3,
    )


def test_tuple_argument():
    xs = tuple(rand((5, 33), "float32", i) for i in range(3))
    module, (out,) = run(var_tuple, [tuple(T(x.shape) for x in xs), 0.5], list(xs))
    np.testing.assert_allclose(out, xs[0] * 0.5 + xs[1] * 2 + xs[2] * 3, rtol=1e-6)


def test_tuple_argument_through_jit():
    """A tuple of arrays as one argument of a ``@jit`` function, end to end (CPU build)."""
    f = pa.jit(var_tuple)
    xs = tuple(rand((4, 7), "float16", i) for i in range(2))
    out = f(xs, 2.0)
    x32 = [x.astype(np.float32) for x in xs]
    np.testing.assert_allclose(
        out.astype(np.float32),
        (x32[0] * 2 + x32[1] * 2).astype(np.float16).astype(np.float32),
        rtol=1e-3,
    )
    assert f.compile(xs, 2.0).info["arg_names"] == ["xs[0]", "xs[1]"]
