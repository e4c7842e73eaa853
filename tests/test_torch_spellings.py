"""PyTorch spellings (issue 13, item 1): ``dim=``/``axis=``, ``keepdim``/``keepdims``, the shape
methods, ``pa.add ... pa.clamp``, ``zeros_like``, the composites (softmax, log_softmax,
layer_norm, rms_norm, gelu, silu), ``where`` with a compile-time condition, ``match_shape(x,
other, dim=)``, ``pa.Tensor``/``pa.Tuple`` annotations, and the hints for wrong spellings.

Each spelling is checked against float64 NumPy on the tensor-level interpreter (fp16 and fp32,
rows of 1, 7, 33 and 513 elements), and grouped into multi-result operators end to end: the CPU
build of the emitted Ascend C, the ascendc-level and the tile-level interpreter. Tolerances are
the project's (``helpers.tolerance``: fp16 1e-3, fp32 1e-5, fp32 reductions 1e-4); shape ops
move data and compare exactly. The composites fuse: kernel counts are checked on the lowered IR.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_close, erf_ref, line_of, softmax_ref

import pyasc_mlir as pa
from pyasc_mlir import pipeline
from pyasc_mlir.emitter import kernels
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.platform import DEFAULT_PLATFORM

THIS_FILE = __file__
DTYPES = ["float16", "float32"]
TAILS = [1, 7, 33, 513]


def rand(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def run(fn, inputs, *consts):
    descs = [pa.TensorDesc(x.shape, x.dtype.name) for x in inputs]
    module, dtypes = build_module(fn, [*descs, *consts])
    module.verify()
    outs = run_function(module, fn.__name__, list(inputs))
    assert [o.dtype.name for o in outs] == dtypes
    return outs


# --------------------------------------------------------------------------- operators


def t_sum_dim(x):
    return x.sum(dim=-1)


def t_sum_axis_keepdims(x):
    return pa.sum(x, axis=-1, keepdims=True)


def t_mean_dims(x):
    return x.mean(dim=(0, 1), keepdim=True)


def t_var_dim(x):  # torch.var: unbiased by default
    return x.var(dim=-1)


def t_var_axis(x):  # np.var: ddof 0 by default
    return pa.var(x, axis=-1, keepdims=True)


def t_var_correction(x):
    return x.var(dim=-1, correction=0) + pa.var(x, -1, ddof=1)


def t_max_values(x):
    return x.max(dim=-1).values


def t_max_index0(x):
    return x.max(dim=-1, keepdim=True)[0]


def t_min_unpack(x):
    v, _ = x.min(dim=0)
    return v


def t_amax_amin(x):
    return pa.amax(x, dim=-1) - x.amin(-1, keepdims=False)


def t_unsqueeze_expand(x):
    return x.unsqueeze(-1).expand(-1, -1, 2).flatten(1)


def t_squeeze(x):
    return x.reshape(1, -1).squeeze() + x.unsqueeze(1).squeeze(1).view(-1)


def t_view_flatten(x):
    return pa.flatten(x.view(x.size(0), 1, x.size(-1)), start_dim=1) * x.dim()


def t_chunk(x):
    parts = x.chunk(2, dim=-1)
    return pa.cat(list(reversed(parts)), dim=-1)


def t_split(x):
    n = x.shape[-1]
    a, b = pa.split(x, [1, n - 1], dim=-1) if n > 1 else (x, x)
    return pa.concat([b, a], axis=-1)


def t_transposes(x):
    return pa.transpose(x, 0, 1) + x.T + pa.permute(x, (1, 0)) + x.transpose(-1, -2)


def t_casts(x):
    return x.half().float() + x.to(pa.float16).to(x)


def t_functional(x, y):
    return (
        pa.add(x, y, alpha=0.5),
        pa.sub(x, 1.0),
        pa.mul(x, y),
        pa.div(x, 2.0),
        pa.pow(x, 2) + pa.neg(y),
        pa.clamp(x, -0.5, 0.5),
        pa.clamp(x, min=0.0) + pa.clip(x, max=0.25) + x.clamp(y, 1.0),
        pa.abs(x) + pa.maximum(x, y) - pa.minimum(x, 0.0),
    )


def t_number_fold(x):
    k = pa.add(1.0, 2.0) + pa.sub(5.0, 1.0, alpha=2) + pa.mul(2.0, 3.0) + pa.div(1.0, 4.0)
    return x + k + pa.clamp(7.0, max=1.0) + pa.pow(2.0, 3) + pa.neg(1.0)


def t_like(x):
    return pa.zeros_like(x) + pa.ones_like(x) * x + pa.full_like(x, 2.5)


def t_softmax(x):
    return pa.softmax(x, dim=-1), x.softmax(0), pa.log_softmax(x, dim=-1)


def t_layer_norm(x, w, b):
    return pa.layer_norm(x, x.shape[-1:], w, b, eps=1e-5), pa.layer_norm(x, x.shape[-1])


def t_rms_norm(x, w):
    return pa.rms_norm(x, x.shape[-1:], w, eps=1e-6), pa.rms_norm(x, (x.shape[-1],))


def t_activations(x):
    return pa.gelu(x), pa.gelu(x, approximate="tanh"), pa.silu(x), pa.sigmoid(x), pa.tanh(x)


def t_where_const(x, y, apply):
    return pa.where(apply, x * 2.0, y), pa.where(not apply, 1.0, x), pa.where(x > 0, 1.0, -1.0)


# --------------------------------------------------------------------------- references

INV_SQRT2 = 1.0 / math.sqrt(2.0)


def gelu_ref(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1.0 + erf_ref(x * INV_SQRT2))


def layer_norm_ref(x, w=None, b=None, eps=1e-5):
    d = x - x.mean(-1, keepdims=True)
    y = d / np.sqrt((d * d).mean(-1, keepdims=True) + eps)
    return y * (1.0 if w is None else w) + (0.0 if b is None else b)


def rms_norm_ref(x, w=None, eps=1e-6):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * (1.0 if w is None else w)


def log_softmax_ref(x):
    s = x - x.max(-1, keepdims=True)
    return s - np.log(np.exp(s).sum(-1, keepdims=True))


def chunk_ref(x):
    n = x.shape[-1]
    size = -(-n // 2)
    return np.concatenate([x[:, size:], x[:, :size]], axis=-1)


def split_ref(x):
    return np.concatenate([x[:, 1:], x[:, :1]] if x.shape[-1] > 1 else [x, x], axis=-1)


UNARY_CASES = {
    "sum_dim": (t_sum_dim, lambda x: x.sum(-1), True),
    "sum_axis_keepdims": (t_sum_axis_keepdims, lambda x: x.sum(-1, keepdims=True), True),
    "mean_dims": (t_mean_dims, lambda x: x.mean((0, 1), keepdims=True), True),
    "var_dim": (t_var_dim, lambda x: np.var(x, -1, ddof=1), True),
    "var_axis": (t_var_axis, lambda x: np.var(x, -1, keepdims=True), True),
    "var_correction": (
        t_var_correction,
        lambda x: np.var(x, -1) + np.var(x, -1, ddof=1),
        True,
    ),
    "max_values": (t_max_values, lambda x: x.max(-1), False),
    "max_index0": (t_max_index0, lambda x: x.max(-1, keepdims=True), False),
    "min_unpack": (t_min_unpack, lambda x: x.min(0), False),
    "amax_amin": (t_amax_amin, lambda x: x.max(-1) - x.min(-1), False),
    "unsqueeze_expand": (
        t_unsqueeze_expand,
        lambda x: np.repeat(x[:, :, None], 2, axis=2).reshape(x.shape[0], -1),
        False,
    ),
    "squeeze": (t_squeeze, lambda x: x.reshape(-1) + x.reshape(-1), False),
    "view_flatten": (t_view_flatten, lambda x: x * 2, False),
    "chunk": (t_chunk, chunk_ref, False),
    "split": (t_split, split_ref, False),
    "casts": (t_casts, lambda x: 2 * x.astype(np.float16).astype(np.float64), False),  # f32
    "number_fold": (t_number_fold, lambda x: x + 3.0 + 3.0 + 6.0 + 0.25 + 1.0 + 8.0 - 1.0, False),
    "like": (t_like, lambda x: x + 2.5, False),
}


@pytest.mark.parametrize("n", TAILS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(UNARY_CASES))
def test_spelling_matches_numpy(case, dtype, n):
    fn, ref, reduction = UNARY_CASES[case]
    x = rand((3, n), dtype, seed=n)
    (got,) = run(fn, [x])
    if case in ("var_dim", "var_correction") and n == 1:  # N - 1 = 0: NaN, as torch.var
        assert np.isnan(got).all()
        return
    want = ref(x.astype(np.float64))
    assert_close(got, want, "float32" if case == "casts" else dtype, reduction=reduction)


def test_transposes_match_numpy():
    for dtype in DTYPES:
        x = rand((7, 33), dtype)
        (got,) = run(t_transposes, [x])
        assert_close(got, 4 * x.astype(np.float64).T, dtype)
        (got,) = run(t_transposes, [rand((1, 1), dtype)])
        assert got.shape == (1, 1)


@pytest.mark.parametrize("n", TAILS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_functional_forms(dtype, n):
    x, y = rand((3, n), dtype, 1), rand((n,), dtype, 2)
    got = run(t_functional, [x, y])
    x, y = x.astype(np.float64), y.astype(np.float64)
    want = [
        x + 0.5 * y,
        x - 1.0,
        x * y,
        x / 2.0,
        x * x - y,
        np.clip(x, -0.5, 0.5),
        np.maximum(x, 0.0) + np.minimum(x, 0.25) + np.minimum(np.maximum(x, y), 1.0),
        np.abs(x) + np.maximum(x, y) - np.minimum(x, 0.0),
    ]
    for g, w in zip(got, want, strict=True):
        assert_close(g, w, dtype)


@pytest.mark.parametrize("n", TAILS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_composites(dtype, n):
    x, w, b = rand((3, n), dtype, 3), rand((n,), dtype, 4), rand((n,), dtype, 5)
    x64, w64, b64 = (a.astype(np.float64) for a in (x, w, b))
    sm, sm0, lsm = run(t_softmax, [x])
    assert_close(sm, softmax_ref(x64), dtype, reduction=True)
    assert_close(sm0, softmax_ref(x64, axis=0), dtype, reduction=True)
    assert_close(lsm, log_softmax_ref(x64), dtype, reduction=True)
    ln, ln_plain = run(t_layer_norm, [x, w, b])
    assert_close(ln, layer_norm_ref(x64, w64, b64), dtype, reduction=True)
    assert_close(ln_plain, layer_norm_ref(x64), dtype, reduction=True)
    rn, rn_default_eps = run(t_rms_norm, [x, w])
    assert_close(rn, rms_norm_ref(x64, w64), dtype, reduction=True)
    assert_close(rn_default_eps, rms_norm_ref(x64, eps=np.finfo(dtype).eps), dtype, reduction=True)
    acts = run(t_activations, [x])
    refs = [gelu_ref(x64), gelu_ref(x64, "tanh"), x64 / (1 + np.exp(-x64))]
    refs += [1 / (1 + np.exp(-x64)), np.tanh(x64)]
    for g, r in zip(acts, refs, strict=True):
        assert_close(g, r, dtype)


def test_activations_on_special_values():
    """gelu/silu: NaN stays NaN, +inf gives +inf, -inf gives NaN (-inf * 0, as PyTorch's
    silu and gelu), -0 gives -0, large negative inputs a tiny non-positive value."""
    x = np.array([[np.nan, np.inf, -np.inf, -0.0, 0.0, -30.0, 30.0, 1e-30]], np.float32)
    g, gt, s, _, _ = run(t_activations, [x])
    for got in (g, gt, s):
        assert np.isnan(got[0, 0]) and got[0, 1] == np.inf and np.isnan(got[0, 2])
        assert got[0, 3] == 0.0 and np.signbit(got[0, 3]) and got[0, 4] == 0.0
        assert not np.signbit(got[0, 4]) and got[0, 6] == 30.0
        assert -1e-9 < got[0, 5] <= 0.0


@pytest.mark.parametrize("apply", [True, False])
def test_where_with_a_compile_time_condition(apply):
    x, y = rand((4, 33), "float16", 6), rand((33,), "float32", 7)
    picked, number, mask = run(t_where_const, [x, y], apply)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    # the result has both branches' shape and their common dtype (f16 with f32: f32)
    assert picked.shape == (4, 33) and picked.dtype == np.float32
    assert_close(picked, 2 * x64 if apply else np.broadcast_to(y64, (4, 33)), np.float32)
    assert number.dtype == np.float16
    assert_close(number, x64 if apply else np.ones_like(x64), np.float16)
    np.testing.assert_array_equal(mask, np.where(x > 0, 1.0, -1.0).astype(np.float32))
    module, _ = build_module(t_where_const, [pa.TensorDesc((4, 33)), pa.TensorDesc((33,)), apply])
    # the branch not picked is not computed: no multiply when it is x * 2.0
    muls = [op for op in module.walk() if op.name == "asc.binary"]
    assert len(muls) == (1 if apply else 0)


# --------------------------------------------------------------------------- match_shape


def t_match(x, mask, dim):
    m = pa.match_shape(x, mask, dim=dim)
    b, s, h = m
    assert m["target_dim"] == 2 and m.target_size == h and m["shape"] == (b, s, h)
    return (x * mask.unsqueeze(m["target_dim"])).sum(dim=1)


def t_match_keepdim(x, mask):
    m = pa.match_shape(x, mask, dim=1)
    return x * mask + m["target_size"]


def t_match_same(x, y):
    m = pa.match_shape(x, y)
    assert m["target_dim"] is None and m == x.shape
    return x + y


def test_match_shape_dim_form():
    x, mask = rand((2, 5, 7), "float32"), (rand((2, 5), "float32") > 0).astype(np.float32)
    (got,) = run(t_match, [x, mask], -1)
    assert_close(got, np.einsum("bsh,bs->bh", x, mask), np.float32, reduction=True)
    (got,) = run(t_match_keepdim, [x, mask[:, None, :5][:, :, :1].repeat(7, 2)[:, :1, :]])
    assert got.shape == (2, 5, 7)
    (got,) = run(t_match_same, [x, x])
    np.testing.assert_array_equal(got, x + x)


# --------------------------------------------------------------------------- annotations


def t_annotated(xs: pa.Tuple[pa.Tensor, ...], w: pa.Tensor) -> pa.Tuple[pa.Tensor, pa.Tensor]:
    h = pa.cat(xs, dim=-1)
    return h * w, h


def test_annotations():
    assert pa.Tuple[pa.Tensor, ...] is not None
    a, b, w = rand((3, 4), "float32", 1), rand((3, 5), "float32", 2), rand((9,), "float32", 3)
    f32 = "float32"
    descs = [(pa.TensorDesc((3, 4), f32), pa.TensorDesc((3, 5), f32)), pa.TensorDesc((9,), f32)]
    module, _ = build_module(t_annotated, descs)
    y, h = run_function(module, "t_annotated", [a, b, w])
    np.testing.assert_array_equal(h, np.concatenate([a, b], -1))
    np.testing.assert_array_equal(y, np.concatenate([a, b], -1) * w)


# --------------------------------------------------------------------------- fusion


def k_softmax(x):
    return pa.softmax(x, dim=-1)


def k_layer_norm(x, w, b):
    return pa.layer_norm(x, x.shape[-1:], w, b)


def k_rms_norm(x, w):
    return pa.rms_norm(x, x.shape[-1:], w, eps=1e-6)


def k_gelu_silu(x):
    return pa.gelu(x) * pa.silu(x) + pa.gelu(x, approximate="tanh")


@pytest.mark.parametrize(
    "fn, n_inputs",
    [(k_softmax, 1), (k_layer_norm, 3), (k_rms_norm, 2), (k_gelu_silu, 1)],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_composites_fuse_into_one_kernel(fn, n_inputs):
    descs = [pa.TensorDesc((8, 384), "float16")] + [pa.TensorDesc((384,), "float16")] * (
        n_inputs - 1
    )
    stages, _, _ = pipeline.lower(fn, descs, fn.__name__, DEFAULT_PLATFORM, True)
    assert len(kernels(stages["ascendc"])) == 1


# --------------------------------------------------------------------------- end to end


def e2e_elementwise(x, y):
    return (
        pa.add(x, y, alpha=0.5),
        pa.clamp(x, -0.5, 0.5),
        pa.gelu(x),
        pa.gelu(x, approximate="tanh"),
        pa.silu(x),
        pa.where(True, x * 2.0, y) + pa.full_like(x, 0.5),
        x.unsqueeze(-1).expand(-1, -1, 2).flatten(1),
        x.half().to(x),
    )


def e2e_reduce(x, w, b):
    return (
        pa.softmax(x, dim=-1),
        pa.log_softmax(x, dim=-1),
        pa.layer_norm(x, x.shape[-1:], w, b),
        pa.rms_norm(x, x.shape[-1:], w, eps=1e-6),
        x.var(dim=-1, keepdim=True, unbiased=False),
        x.mean(dim=-1) + x.max(dim=-1).values + pa.amin(x, axis=-1, keepdim=False),
    )


def elementwise_refs(x, y):
    return [
        x + 0.5 * y,
        np.clip(x, -0.5, 0.5),
        gelu_ref(x),
        gelu_ref(x, "tanh"),
        x / (1 + np.exp(-x)),
        2 * x + 0.5,
        np.repeat(x[:, :, None], 2, axis=2).reshape(x.shape[0], -1),
        x.astype(np.float16).astype(np.float64),
    ]


def reduce_refs(x, w, b):
    return [
        softmax_ref(x),
        log_softmax_ref(x),
        layer_norm_ref(x, w, b),
        rms_norm_ref(x, w),
        np.var(x, -1, keepdims=True),
        x.mean(-1) + x.max(-1) + x.min(-1),
    ]


def check_every_backend(fn, inputs, refs, dtype, reduction):
    op = pa.compile(fn, [pa.TensorDesc(a.shape, a.dtype.name) for a in inputs])
    outs = {
        "cpu": op(*inputs, backend="cpu"),
        "interp": op(*inputs, backend="interp"),
        "tile": op.run_stage("tile", *inputs),
    }
    for where, got in outs.items():
        for i, (g, r) in enumerate(zip(got, refs, strict=True)):
            assert g.dtype == np.dtype(dtype), (where, i)
            try:
                assert_close(g, r, dtype, reduction=reduction)
            except AssertionError as exc:
                raise AssertionError(f"{where}, result {i}: {exc}") from None
    for i, (c, t) in enumerate(zip(outs["cpu"], outs["interp"], strict=True)):
        assert_close(c, t, rtol=1e-6, atol=1e-6), i


E2E = [("float16", 33), ("float32", 513)]
E2E_SWEEP = [(d, n) for d in DTYPES for n in TAILS if (d, n) not in E2E]


def _e2e(dtype, n):
    x, y = rand((3, n), dtype, 8), rand((n,), dtype, 9)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    check_every_backend(e2e_elementwise, [x, y], elementwise_refs(x64, y64), dtype, False)
    w, b = rand((n,), dtype, 10), rand((n,), dtype, 11)
    w64, b64 = w.astype(np.float64), b.astype(np.float64)
    check_every_backend(e2e_reduce, [x, w, b], reduce_refs(x64, w64, b64), dtype, True)


@pytest.mark.parametrize("dtype, n", E2E)
def test_end_to_end(dtype, n):
    _e2e(dtype, n)


@pytest.mark.slow
@pytest.mark.parametrize("dtype, n", E2E_SWEEP)
def test_end_to_end_sweep(dtype, n):
    _e2e(dtype, n)


# --------------------------------------------------------------------------- errors


def e_dims(x):
    return x.sum(dims=-1)  # ERR


def e_keep_dim(x):
    return pa.mean(x, -1, keep_dim=True)  # ERR


def e_both(x):
    return x.sum(dim=-1, axis=-1)  # ERR


def e_method(x):
    return x.unsqeeze(0)  # ERR


def e_function(x):
    return pa.argmax(x, dim=-1)  # ERR


def e_gelu(x):
    return pa.gelu(x, approximate="exact")  # ERR


def e_indices(x):
    return x.max(dim=-1).indices + 1  # ERR


def e_max_pair(x):
    return x - x.max(dim=-1, keepdim=True)  # ERR


def e_match(x, y):
    return pa.match_shape(x, y, dim=0)  # ERR


def e_match_pattern_dim(x):
    return pa.match_shape(x, (None, 4), dim=0)  # ERR


def e_layer_norm(x):
    return pa.layer_norm(x, (5,))  # ERR


def e_expand(x):
    return x.expand(2, 9)  # ERR


def e_split(x):
    return x.split([2, 3], dim=-1)  # ERR


def e_where(x):
    return pa.where("yes", x, 0.0)  # ERR


def e_to(x):
    return x.to("cuda")  # ERR


def e_unsqueeze(x):
    return x.unsqueeze(3)  # ERR


V = pa.TensorDesc((3, 4))
ERRORS = {
    "dims": (e_dims, [V], "unexpected keyword argument 'dims'", "use dim="),
    "keep_dim": (e_keep_dim, [V], "unexpected keyword argument 'keep_dim'", "use keepdim="),
    "both": (e_both, [V], "both dim= and axis= given", "pass one"),
    "method": (e_method, [V], "a tensor has no attribute 'unsqeeze'", "'unsqueeze'"),
    "function": (e_function, [V], "unknown function pyasc_mlir.argmax", "amax"),
    "gelu": (e_gelu, [V], "approximate must be 'none' or 'tanh'", "approximate='tanh'"),
    "indices": (e_indices, [V], "indices of x.max(dim=) / x.min(dim=) are not computed", "Python"),
    "max_pair": (e_max_pair, [V], "gives (values, indices), not a tensor", ".values"),
    "match": (
        e_match,
        [V, pa.TensorDesc((3,))],
        "shape [3] does not match x's shape [3, 4]: expected [4] or [1, 4]",
        "None accepts",
    ),
    "match_pattern_dim": (
        e_match_pattern_dim,
        [V],
        "takes dim= only with a tensor to match",
        "match_shape(x, mask, dim=-1)",
    ),
    "layer_norm": (e_layer_norm, [V], "normalized_shape [5] is not the trailing", "x.shape[-1:]"),
    "expand": (e_expand, [V], "cannot expand shape [3, 4] to [2, 9]", "size-1 dims"),
    "split": (
        e_split,
        [V],
        "split() sizes [2, 3] sum to 5, but dim 1 of shape [3, 4] has 4",
        "add up",
    ),
    "where": (e_where, [V], "must be a boolean mask (e.g. x > 0) or a compile-time", "True"),
    "to": (e_to, [V], "x.to() takes a dtype here", "x.half()"),
    "unsqueeze": (e_unsqueeze, [V], "dim 3 is out of range for a tensor of shape [3, 4]", "-3..2"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_are_located_with_hints(name):
    fn, args, message, hint = ERRORS[name]
    with pytest.raises(PyAscCompileError) as info:
        build_module(fn, args)
    err = info.value
    assert message in err.message, str(err)
    assert err.hint is not None and hint in err.hint, str(err)
    assert f"{THIS_FILE}:{line_of(fn)}:" in str(err), str(err)


def test_markers_outside_an_operator():
    with pytest.raises(pa.ops.OutsideOperatorError):
        pa.softmax(np.ones(3))
    with pytest.raises(pa.ops.OutsideOperatorError):
        pa.add(1.0, 2.0)


def _zeros_of(x):
    return pa.zeros_like(x)


def _full_and_sum(x):
    return pa.full_like(x, 3.0), x + 1.0


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_a_returned_constant_tensor_is_materialised(dtype):
    """``return pa.zeros_like(x)``: the kernel's output is a bare constant (found by the
    fresh-user review: it was an internal KeyError)."""
    x = np.random.default_rng(3).standard_normal((7, 33)).astype(dtype)
    for backend in ("cpu", "interp"):
        np.testing.assert_array_equal(pa.jit(_zeros_of, backend=backend)(x), np.zeros_like(x))
        full, y = pa.jit(_full_and_sum, backend=backend)(x)
        np.testing.assert_array_equal(full, np.full_like(x, 3.0))
        np.testing.assert_allclose(y, x + dtype(1.0), rtol=1e-3)
    t = pa.from_numpy(x)
    np.testing.assert_array_equal(pa.zeros_like(t).to_numpy(), np.zeros_like(x))
