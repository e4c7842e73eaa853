"""The seeds' tensor-level operators written as PyTorch users write them (issue 13, acceptance):
``masked_sum`` with ``match_shape(..., dim=)`` and ``unsqueeze``, ``norm_family`` with
``dim=(2, 3)``, ``concat_proj`` with ``pa.Tuple``, ``fused_residual_ln``, ``rms_norm`` (the
Hugging Face LlamaRMSNorm spelling) and ``conditional_scale`` with ``pa.where(apply, ...)``.

The operators below are PyTorch code but for the import line (``import pyasc_mlir as pa`` for
``import torch`` / ``torch.nn.functional as F``): ``@pa.jit`` functions called with NumPy
arrays. Each is checked against float64 NumPy (rounded once to the result dtype) on the CPU
build of its Ascend C (the ``@pa.jit`` call), the ascendc-level and the tile-level interpreter,
fp16 and fp32, on shapes whose reduced rows have 1, 7, 33 and 513 elements. Tolerances:
fp16 1e-3, fp32 1e-5, fp32 reductions 1e-4 (``helpers.tolerance``). The default run builds
one fp16 and one fp32 case per operator; the full sweep is ``slow``.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close

import pyasc_mlir as pa

# --------------------------------------------------------------------------- the operators


@pa.jit
def masked_sum(x: pa.Tensor, mask: pa.Tensor) -> pa.Tensor:
    """x: [B, S, H]; mask: [B, S] of 1.0 (token) / 0.0 (padding) -> [B, H]."""
    dims = pa.match_shape(x, mask, dim=-1)  # mask is x's shape without its hidden dim
    return (x * mask.unsqueeze(dims["target_dim"])).sum(dim=1)


@pa.jit
def norm_family(
    x: pa.Tensor, weight: pa.Tensor, bias: pa.Tensor, kind: str = "instance", eps: float = 1e-5
) -> pa.Tensor:
    """x: [N, C, H, W]; instance norm over (H, W), group-of-one norm over (C, H, W)."""
    dims = (2, 3) if kind == "instance" else (1, 2, 3)
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, keepdim=True, unbiased=False)
    return (x - mean) / pa.sqrt(var + eps) * weight + bias


@pa.jit
def concat_proj(xs: pa.Tuple[pa.Tensor, ...], w: pa.Tensor) -> pa.Tensor:
    """xs: tensors [M, K_i]; w: [sum K_i, N] -> [M, N]."""
    return pa.cat(xs, dim=-1) @ w


@pa.jit
def fused_residual_ln(
    x: pa.Tensor, residual: pa.Tensor, weight: pa.Tensor, bias: pa.Tensor, eps: float = 1e-5
) -> pa.Tuple[pa.Tensor, pa.Tensor]:
    """Returns (LayerNorm(x + residual), x + residual)."""
    h = pa.add(x, residual)
    return pa.layer_norm(h, h.shape[-1:], weight, bias, eps), h


@pa.jit
def rms_norm(x: pa.Tensor, weight: pa.Tensor, eps: float = 1e-6) -> pa.Tensor:
    """LlamaRMSNorm.forward: in float32, rounded back to the input dtype, then scaled."""
    input_dtype = x.dtype
    hidden = x.to(pa.float32)
    variance = hidden.pow(2).mean(-1, keepdim=True)
    hidden = hidden * pa.rsqrt(variance + eps)
    return weight * hidden.to(input_dtype)


@pa.jit
def conditional_scale(x: pa.Tensor, scale: float, apply: bool = True) -> pa.Tensor:
    return pa.where(apply, x * scale, x)


# --------------------------------------------------------------------------- references


def f64(*xs):
    return [np.asarray(x, dtype=np.float64) for x in xs]


def masked_sum_ref(x, mask):
    x, m = f64(x, mask)
    return np.einsum("bsh,bs->bh", x, m)


def norm_family_ref(x, w, b, kind="instance", eps=1e-5):
    x, w, b = f64(x, w, b)
    dims = (2, 3) if kind == "instance" else (1, 2, 3)
    mu = x.mean(dims, keepdims=True)
    return (x - mu) / np.sqrt(x.var(dims, keepdims=True) + eps) * w + b


def concat_proj_ref(xs, w):
    return np.concatenate([x.astype(np.float32) for x in xs], -1) @ w.astype(np.float32)


def fused_residual_ln_ref(x, r, w, b, eps=1e-5):
    h32 = x.astype(np.float32) + r.astype(np.float32)
    h = h32.astype(x.dtype).astype(np.float64) if x.dtype == np.float16 else h32
    h = np.asarray(h32, np.float64)
    d = h - h.mean(-1, keepdims=True)
    w, b = f64(w, b)
    return d / np.sqrt((d * d).mean(-1, keepdims=True) + eps) * w + b, h32


def rms_norm_ref(x, w, eps=1e-6):
    x64, w64 = f64(x, w)
    hidden = x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + eps)
    return w64 * hidden.astype(np.float32).astype(x.dtype)  # .to(input_dtype) rounds


def rand(shape, dtype, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def case(name, dtype, n):
    """``(operator, arrays, constants, references, reduction)`` of one configuration whose
    rows (the trailing dim; for concat_proj, the K of the matmul) have ``n`` elements."""
    if name == "masked_sum":
        s = min(n, 16)  # rows of n elements; S rows are reduced (all in UB at once)
        x = rand((2, s, n), dtype, n)
        mask = (np.arange(s)[None, :] < np.array([[max(1, s // 2)], [s]])).astype(dtype)
        return masked_sum, [x, mask], [], [masked_sum_ref(x, mask)], True
    if name == "norm_family":
        x = rand((2, 3, 2, n), dtype, n) + np.arange(3, dtype=dtype)[None, :, None, None]
        w, b = rand((3, 1, 1), dtype, 1), rand((3, 1, 1), dtype, 2)
        return norm_family, [x, w, b], [], [norm_family_ref(x, w, b)], True
    if name == "concat_proj":
        xs = (rand((7, n), dtype, 3), rand((7, 5), dtype, 4))
        w = rand((n + 5, 16), dtype, 5)
        return concat_proj, [xs, w], [], [concat_proj_ref(xs, w)], True
    if name == "fused_residual_ln":
        x, r = rand((3, n), dtype, 6), rand((3, n), dtype, 7)
        w, b = rand((n,), dtype, 8), rand((n,), dtype, 9)
        return fused_residual_ln, [x, r, w, b], [], list(fused_residual_ln_ref(x, r, w, b)), True
    if name == "rms_norm":
        x, w = rand((4, n), dtype, 10), rand((n,), dtype, 11)
        return rms_norm, [x, w], [], [rms_norm_ref(x, w)], True
    assert name == "conditional_scale"
    x = rand((3, n), dtype, 12)
    return conditional_scale, [x], [1.7, True], [x.astype(np.float64) * 1.7], False


NAMES = [
    "masked_sum",
    "norm_family",
    "concat_proj",
    "fused_residual_ln",
    "rms_norm",
    "conditional_scale",
]
DEFAULT = [(n, d, t) for i, n in enumerate(NAMES) for d, t in (("float16", 7 + 26 * (i % 2)),)]
DEFAULT += [(n, "float32", (513, 33, 7, 1)[i % 4]) for i, n in enumerate(NAMES)]
SWEEP = [
    (n, d, t)
    for n in NAMES
    for d in ("float16", "float32")
    for t in (1, 7, 33, 513)
    if (n, d, t) not in DEFAULT
]


def descs_of(arrays, consts):
    def desc(a):
        if isinstance(a, tuple):
            return tuple(desc(x) for x in a)
        return pa.TensorDesc(a.shape, a.dtype.name)

    return [desc(a) for a in arrays] + list(consts)


def check(name, dtype, n):
    fn, arrays, consts, refs, reduction = case(name, dtype, n)
    got_cpu = fn(*arrays, *consts)  # the @pa.jit call: the CPU build
    got_cpu = list(got_cpu) if isinstance(got_cpu, tuple | list) else [got_cpu]
    op = pa.compile(fn.fn, descs_of(arrays, consts))
    flat = [x for a in arrays for x in (a if isinstance(a, tuple) else (a,))]
    outs = {"cpu": got_cpu, "interp": op.run_stage("ascendc", *flat)}
    outs["tile"] = op.run_stage("tile", *flat)
    for where, got in outs.items():
        assert len(got) == len(refs), where
        for i, (g, r) in enumerate(zip(got, refs, strict=True)):
            try:
                assert_close(g, r, dtype, reduction=reduction)
            except AssertionError as exc:
                raise AssertionError(f"{name} {dtype} n={n}, {where}, result {i}: {exc}") from None
    # the CPU build and the interpreter: equal up to the order of the sums (the Cube's K loop
    # sums in another order than NumPy's matmul: 1e-5 relative at K = 518 in fp32)
    tol = 2e-5 if name == "concat_proj" else 1e-6
    for c, t in zip(outs["cpu"], outs["interp"], strict=True):
        np.testing.assert_allclose(c, t, rtol=tol, atol=tol)


@pytest.mark.parametrize("name, dtype, n", DEFAULT)
def test_seed_operator(name, dtype, n):
    check(name, dtype, n)


@pytest.mark.slow
@pytest.mark.parametrize("name, dtype, n", SWEEP)
def test_seed_operator_sweep(name, dtype, n):
    check(name, dtype, n)


def test_conditional_scale_without_apply_is_the_identity():
    x = rand((5, 33), "float16", 13)
    np.testing.assert_array_equal(conditional_scale(x, 1.7, False), x)


def test_masked_sum_rejects_a_mask_of_the_wrong_shape():
    x, mask = rand((2, 4, 8), "float32", 14), np.ones((2, 8), np.float32)
    with pytest.raises(pa.PyAscCompileError) as info:
        masked_sum(x, mask)
    err = info.value
    assert "shape [2, 8] does not match x's shape [2, 4, 8]: expected [2, 4]" in err.message
    assert f"{__file__}:" in str(err)
