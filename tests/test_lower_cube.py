"""``asc-fuse`` grouping of matmuls and ``asc-lower-cube``: Cube kernels with fused epilogues,
checked by translation validation (tensor-level interpreter before == tile-level after) and
against numpy with f32 accumulation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import softmax_ref
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from pyasc_mlir.dialects import asc
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.passes.decompose import AscDecomposePass
from pyasc_mlir.passes.fuse import AscFusePass
from pyasc_mlir.passes.lower_cube import AscLowerCubePass
from pyasc_mlir.pipeline import make_context
from pyasc_mlir.validation import validate_pass

RNG = np.random.default_rng(7)
NP = {"f16": np.float16, "f32": np.float32}


def _t(shape: tuple[int, ...], dt: str) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dt}>"


def _matmul_src(
    sa: tuple[int, ...],
    sb: tuple[int, ...],
    so: tuple[int, ...],
    dt: str,
    ta: bool,
    tb: bool,
    a: str = "%a",
    b: str = "%b",
    res: str = "%m",
) -> str:
    return (
        f"{res} = asc.matmul {a}, {b} {{transpose_a = {str(ta).lower()}, transpose_b = "
        f"{str(tb).lower()}}} : ({_t(sa, dt)}, {_t(sb, dt)}) -> {_t(so, 'f32')}"
    )


def _fused(src: str) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, src).parse_module()
    module.verify()
    AscDecomposePass().apply(ctx, module)
    AscFusePass().apply(ctx, module)
    module.verify()
    return module


def _inputs(module: ModuleOp, name: str) -> list[np.ndarray]:
    f = next(o for o in module.walk() if isinstance(o, func.FuncOp) and o.sym_name.data == name)
    out = []
    for t in f.function_type.inputs.data:
        dt = np.float16 if "f16" in str(t.element_type) else np.float32  # type: ignore
        out.append(RNG.uniform(-1, 1, t.get_shape()).astype(dt))  # type: ignore
    return out


def _mm_ref(a: np.ndarray, b: np.ndarray, ta: bool, tb: bool) -> np.ndarray:
    a32, b32 = a.astype(np.float64), b.astype(np.float64)
    if ta:
        a32 = np.swapaxes(a32, -1, -2)
    if tb:
        b32 = np.swapaxes(b32, -1, -2)
    return a32 @ b32


def _kernels(module: ModuleOp) -> list[func.FuncOp]:
    return [o for o in module.walk() if isinstance(o, func.FuncOp) and "asc.kernel" in o.attributes]


SIZES = (1, 15, 17, 100, 513)
MNK = [
    (m, n, k)
    for m, n, k in itertools.product(SIZES, SIZES, SIZES)
    if m * n * k <= 513 * 100 * 17 and (m, n, k).count(513) <= 1
]


@pytest.mark.parametrize("m,n,k", MNK[::7] + [(513, 17, 100), (1, 1, 1), (17, 513, 15)])
@pytest.mark.parametrize("ta,tb", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_bias_matches_numpy(m: int, n: int, k: int, ta: bool, tb: bool) -> None:
    dt = "f16" if (m + n + k) % 2 else "f32"
    sa = (k, m) if ta else (m, k)
    sb = (n, k) if tb else (k, n)
    src = f"""func.func @lin(%a: {_t(sa, dt)}, %b: {_t(sb, dt)}, %c: {_t((n,), "f32")})
        -> {_t((m, n), "f32")} {{
      {_matmul_src(sa, sb, (m, n), dt, ta, tb)}
      %cb = asc.broadcast %c : {_t((n,), "f32")} -> {_t((m, n), "f32")}
      %y = asc.binary "add" %m, %cb : {_t((m, n), "f32")}
      func.return %y : {_t((m, n), "f32")}
    }}"""
    module = _fused(src)
    args = _inputs(module, "lin")
    after = validate_pass(module, AscLowerCubePass(), "lin", args, rtol=1e-5, atol=1e-5)
    assert len(_kernels(after)) == 1
    got = run_function(after, "lin", [x.copy() for x in args])[0]
    ref = _mm_ref(args[0], args[1], ta, tb) + args[2]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * np.sqrt(k))


def test_attention_scores_batched_with_mask() -> None:
    """``q @ k^T * scale + mask`` over [B, H, S, S], the mask [B, 1, 1, S] broadcast: one Cube
    kernel; the mask's scaling (an epilogue op on a smaller shape) fuses too."""
    B, H, S, D = 2, 3, 17, 32
    q, kt = (B, H, S, D), (B, H, S, D)
    so = (B, H, S, S)
    src = f"""func.func @scores(%q: {_t(q, "f16")}, %k: {_t(kt, "f16")},
        %mask: {_t((B, 1, 1, S), "f32")}) -> {_t(so, "f32")} {{
      %one = asc.constant 1.0 -> {_t((B, 1, 1, S), "f32")}
      %neg = asc.constant -10000.0 -> {_t((B, 1, 1, S), "f32")}
      %inv = asc.binary "sub" %one, %mask : {_t((B, 1, 1, S), "f32")}
      %bias = asc.binary "mul" %inv, %neg : {_t((B, 1, 1, S), "f32")}
      {_matmul_src(q, kt, so, "f16", False, True, "%q", "%k")}
      %sc = asc.constant 0.1767766952966369 -> {_t(so, "f32")}
      %s = asc.binary "mul" %m, %sc : {_t(so, "f32")}
      %bb = asc.broadcast %bias : {_t((B, 1, 1, S), "f32")} -> {_t(so, "f32")}
      %y = asc.binary "add" %s, %bb : {_t(so, "f32")}
      func.return %y : {_t(so, "f32")}
    }}"""
    module = _fused(src)
    assert len([o for o in module.walk() if isinstance(o, asc.FusionOp)]) == 1
    args = _inputs(module, "scores")
    args[2] = (RNG.uniform(0, 1, args[2].shape) > 0.3).astype(np.float32)
    after = validate_pass(module, AscLowerCubePass(), "scores", args, rtol=1e-5, atol=1e-4)
    got = run_function(after, "scores", [x.copy() for x in args])[0]
    ref = _mm_ref(args[0], args[1], False, True) * 0.1767766952966369 + (1 - args[2]) * -1e4
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-3)


def test_swiglu_two_matmuls_one_kernel() -> None:
    """``silu(x @ W + bg) * (x @ V + bu)``: both projections and the gate in ONE kernel whose
    only GM output is the gated result."""
    T, D, F = 7, 64, 48
    src = f"""func.func @swiglu(%x: {_t((T, D), "f16")}, %w: {_t((D, F), "f16")},
        %v: {_t((D, F), "f16")}, %bg: {_t((F,), "f32")}, %bu: {_t((F,), "f32")})
        -> {_t((T, F), "f32")} {{
      {_matmul_src((T, D), (D, F), (T, F), "f16", False, False, "%x", "%w", "%g")}
      %bgb = asc.broadcast %bg : {_t((F,), "f32")} -> {_t((T, F), "f32")}
      %g1 = asc.binary "add" %g, %bgb : {_t((T, F), "f32")}
      %sg = asc.unary "sigmoid" %g1 : {_t((T, F), "f32")}
      %act = asc.binary "mul" %g1, %sg : {_t((T, F), "f32")}
      {_matmul_src((T, D), (D, F), (T, F), "f16", False, False, "%x", "%v", "%u")}
      %bub = asc.broadcast %bu : {_t((F,), "f32")} -> {_t((T, F), "f32")}
      %u1 = asc.binary "add" %u, %bub : {_t((T, F), "f32")}
      %y = asc.binary "mul" %act, %u1 : {_t((T, F), "f32")}
      func.return %y : {_t((T, F), "f32")}
    }}"""
    module = _fused(src)
    args = _inputs(module, "swiglu")
    after = validate_pass(module, AscLowerCubePass(), "swiglu", args, rtol=1e-5, atol=1e-5)
    kernels = _kernels(after)
    assert len(kernels) == 1
    assert len([o for o in kernels[0].walk() if isinstance(o, asc.MmadOp)]) == 2
    outs = [o for o in kernels[0].walk() if isinstance(o, asc.CopyOutOp)]
    assert len(outs) == 1
    got = run_function(after, "swiglu", [x.copy() for x in args])[0]
    g = _mm_ref(args[0], args[1], False, False) + args[3]
    u = _mm_ref(args[0], args[2], False, False) + args[4]
    np.testing.assert_allclose(got, g / (1 + np.exp(-g)) * u, rtol=1e-5, atol=1e-5)


def test_kernel_split_before_matmul_and_at_reduction() -> None:
    """A reduction feeding a matmul, and a softmax of its result: two kernels (vector; Cube
    with the softmax in its epilogue, rows of 17 fit one block)."""
    M, K, N = 7, 33, 17
    src = f"""func.func @chain(%x: {_t((M, K), "f32")}, %w: {_t((K, N), "f32")})
        -> {_t((M, N), "f32")} {{
      %s = asc.reduce "max" %x {{axes = array<i64: 1>, keepdim = true}} : {_t((M, K), "f32")}
        -> {_t((M, 1), "f32")}
      %sb = asc.broadcast %s : {_t((M, 1), "f32")} -> {_t((M, K), "f32")}
      %h = asc.binary "sub" %x, %sb : {_t((M, K), "f32")}
      {_matmul_src((M, K), (K, N), (M, N), "f32", False, False, "%h", "%w")}
      %e = asc.unary "exp" %m : {_t((M, N), "f32")}
      %t = asc.reduce "sum" %e {{axes = array<i64: 1>, keepdim = true}} : {_t((M, N), "f32")}
        -> {_t((M, 1), "f32")}
      %tb = asc.broadcast %t : {_t((M, 1), "f32")} -> {_t((M, N), "f32")}
      %y = asc.binary "div" %e, %tb : {_t((M, N), "f32")}
      func.return %y : {_t((M, N), "f32")}
    }}"""
    module = _fused(src)
    fusions = [o for o in module.walk() if isinstance(o, asc.FusionOp)]
    assert [any(isinstance(x, asc.MatmulOp) for x in f.body.block.ops) for f in fusions] == [
        False,
        True,
    ]
    args = _inputs(module, "chain")
    validate_pass(module, AscLowerCubePass(), "chain", args, rtol=1e-5, atol=1e-5)


def test_epilogue_output_of_other_shape_is_rejected() -> None:
    M, K, N = 4, 16, 16
    src = f"""func.func @bad(%x: {_t((M, K), "f32")}, %w: {_t((K, N), "f32")},
        %c: {_t((N,), "f32")}) -> ({_t((M, N), "f32")}, {_t((N,), "f32")}) {{
      %d = asc.unary "exp" %c : {_t((N,), "f32")}
      {_matmul_src((M, K), (K, N), (M, N), "f32", False, False, "%x", "%w")}
      func.return %m, %d : {_t((M, N), "f32")}, {_t((N,), "f32")}
    }}"""
    module = _fused(src)
    with pytest.raises(PyAscCompileError, match="not the matmul's output shape"):
        AscLowerCubePass().apply(make_context(), module)


def test_blocks_fit_platform_and_fill_cores() -> None:
    M, K, N = 513, 384, 1536
    src = f"""func.func @big(%x: {_t((M, K), "f16")}, %w: {_t((N, K), "f16")})
        -> {_t((M, N), "f32")} {{
      {_matmul_src((M, K), (N, K), (M, N), "f16", False, True, "%x", "%w")}
      %g = asc.unary "erf" %m : {_t((M, N), "f32")}
      func.return %g : {_t((M, N), "f32")}
    }}"""
    module = _fused(src)
    AscLowerCubePass().apply(make_context(), module)
    (kernel,) = _kernels(module)
    tiling = {k: v.value.data for k, v in kernel.attributes["asc.tiling"].data.items()}
    assert tiling["tile_m"] * tiling["tile_n"] * 4 <= 128 * 1024  # L0C, f32
    assert tiling["tile_n"] % 16 == 0
    assert tiling["block_dim"] == 24 and tiling["units"] >= 24
    mm = next(o for o in kernel.walk() if isinstance(o, asc.MmadOp))
    assert mm.attributes["max_m"].value.data == tiling["tile_m"]


def _perm_src(res: str, src: str, shape: tuple[int, ...], perm: tuple[int, ...], dt: str) -> str:
    out = tuple(shape[p] for p in perm)
    return (
        f"{res} = asc.transpose {src} {{perm = array<i64: {', '.join(map(str, perm))}>}} : "
        f"{_t(shape, dt)} -> {_t(out, dt)}"
    )


def _reshape_src(res: str, src: str, shape: tuple[int, ...], out: tuple[int, ...], dt: str) -> str:
    return f"{res} = asc.reshape {src} : {_t(shape, dt)} -> {_t(out, dt)}"


def test_attention_reads_heads_in_place_and_writes_merged_heads() -> None:
    """Multi-head attention on [B, S, H*D] projections: the head split (reshape + transpose)
    of q, k, v and the head merge of the context fold into the Cube kernels' GM addressing —
    no data-movement kernel, no extra GM round trip."""
    B, S, H, D = 2, 7, 3, 16
    HD = H * D
    bs, b4, bh = (B, S, HD), (B, S, H, D), (B, H, S, D)
    src = f"""func.func @attn(%q: {_t(bs, "f16")}, %k: {_t(bs, "f16")},
        %p: {_t((B, H, S, S), "f16")}, %v: {_t(bs, "f16")})
        -> ({_t((B, H, S, S), "f32")}, {_t(bs, "f32")}) {{
      {_reshape_src("%q4", "%q", bs, b4, "f16")}
      {_perm_src("%qh", "%q4", b4, (0, 2, 1, 3), "f16")}
      {_reshape_src("%k4", "%k", bs, b4, "f16")}
      {_perm_src("%kh", "%k4", b4, (0, 2, 1, 3), "f16")}
      {_matmul_src(bh, bh, (B, H, S, S), "f16", False, True, "%qh", "%kh", "%s")}
      %sc = asc.constant 0.25 -> {_t((B, H, S, S), "f32")}
      %s2 = asc.binary "mul" %s, %sc : {_t((B, H, S, S), "f32")}
      {_reshape_src("%v4", "%v", bs, b4, "f16")}
      {_perm_src("%vh", "%v4", b4, (0, 2, 1, 3), "f16")}
      {_matmul_src((B, H, S, S), bh, bh, "f16", False, False, "%p", "%vh", "%c")}
      {_perm_src("%ct", "%c", bh, (0, 2, 1, 3), "f32")}
      {_reshape_src("%cm", "%ct", b4, bs, "f32")}
      func.return %s2, %cm : {_t((B, H, S, S), "f32")}, {_t(bs, "f32")}
    }}"""
    module = _fused(src)
    fusions = [o for o in module.walk() if isinstance(o, asc.FusionOp)]
    assert len(fusions) == 2
    args = _inputs(module, "attn")
    after = validate_pass(module, AscLowerCubePass(), "attn", args, rtol=1e-5, atol=1e-5)
    assert len(_kernels(after)) == 2
    got_s, got_c = run_function(after, "attn", [x.copy() for x in args])
    q, k, p, v = (x.astype(np.float64) for x in args)
    heads = lambda x: x.reshape(B, S, H, D).transpose(0, 2, 1, 3)  # noqa: E731
    ref_s = heads(q) @ heads(k).transpose(0, 1, 3, 2) * 0.25
    ref_c = (p @ heads(v)).transpose(0, 2, 1, 3).reshape(B, S, HD)
    np.testing.assert_allclose(got_s, ref_s, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_c, ref_c, rtol=1e-5, atol=1e-5)


def test_operand_transposed_by_view_uses_transpose_flag() -> None:
    """``x.T @ w`` written as a transpose op: read in place with the transpose flag."""
    M, K, N = 17, 15, 33
    src = f"""func.func @tt(%x: {_t((K, M), "f32")}, %w: {_t((K, N), "f32")})
        -> {_t((M, N), "f32")} {{
      {_perm_src("%xt", "%x", (K, M), (1, 0), "f32")}
      {_matmul_src((M, K), (K, N), (M, N), "f32", False, False, "%xt", "%w")}
      func.return %m : {_t((M, N), "f32")}
    }}"""
    module = _fused(src)
    args = _inputs(module, "tt")
    after = validate_pass(module, AscLowerCubePass(), "tt", args, rtol=1e-5, atol=1e-5)
    (mm,) = [o for o in after.walk() if isinstance(o, asc.MmadOp)]
    assert mm.trans_a and not mm.trans_b
    got = run_function(after, "tt", [x.copy() for x in args])[0]
    np.testing.assert_allclose(got, args[0].T.astype(np.float64) @ args[1], rtol=1e-5, atol=1e-5)


def test_transpose_not_feeding_a_matmul_stays_a_data_movement_kernel() -> None:
    src = f"""func.func @t(%x: {_t((7, 33), "f32")}) -> {_t((33, 7), "f32")} {{
      %e = asc.unary "exp" %x : {_t((7, 33), "f32")}
      {_perm_src("%y", "%e", (7, 33), (1, 0), "f32")}
      func.return %y : {_t((33, 7), "f32")}
    }}"""
    module = _fused(src)
    bodies = [
        [o.name for o in f.body.block.ops] for f in module.walk() if isinstance(f, asc.FusionOp)
    ]
    assert bodies == [["asc.unary", "asc.yield"], ["asc.transpose", "asc.yield"]]


def test_f16_rounding_hoisted_over_head_merge_view() -> None:
    """``cast(reshape(transpose(p @ v)))`` (an f16 result written through the head merge)
    becomes ``reshape(transpose(cast(p @ v)))``: one Cube kernel rounding in its epilogue."""
    B, H, S, D = 2, 3, 7, 16
    bh, b4, bs = (B, H, S, D), (B, S, H, D), (B, S, H * D)
    src = f"""func.func @ctx(%p: {_t((B, H, S, S), "f16")}, %v: {_t(bh, "f16")})
        -> {_t(bs, "f16")} {{
      {_matmul_src((B, H, S, S), bh, bh, "f16", False, False, "%p", "%v", "%c")}
      {_perm_src("%ct", "%c", bh, (0, 2, 1, 3), "f32")}
      {_reshape_src("%cm", "%ct", b4, bs, "f32")}
      %y = asc.cast %cm : {_t(bs, "f32")} -> {_t(bs, "f16")}
      func.return %y : {_t(bs, "f16")}
    }}"""
    module = _fused(src)
    (fusion,) = [o for o in module.walk() if isinstance(o, asc.FusionOp)]
    assert [o.name for o in fusion.body.block.ops] == [
        "asc.matmul",
        "asc.cast",
        "asc.transpose",
        "asc.reshape",
        "asc.yield",
    ]
    args = _inputs(module, "ctx")
    after = validate_pass(module, AscLowerCubePass(), "ctx", args, rtol=1e-3, atol=1e-3)
    got = run_function(after, "ctx", [x.copy() for x in args])[0]
    ref = (args[0].astype(np.float64) @ args[1]).transpose(0, 2, 1, 3).reshape(bs)
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("S", [1, 7, 33, 250])
def test_softmax_of_scores_in_the_matmul_epilogue(S: int) -> None:
    """``softmax(q k^T * scale + mask)`` with rows of at most 256 keys: ONE Cube kernel whose
    blocks hold whole rows; the row max/sum run on the UB tile."""
    B, H, D = 2, 2, 16
    q = (B, H, S, D)
    so, sr = (B, H, S, S), (B, H, S, 1)
    src = f"""func.func @attn(%q: {_t(q, "f16")}, %k: {_t(q, "f16")},
        %mask: {_t((B, 1, 1, S), "f32")}) -> {_t(so, "f32")} {{
      {_matmul_src(q, q, so, "f16", False, True, "%q", "%k", "%s")}
      %sc = asc.constant 0.25 -> {_t(so, "f32")}
      %s1 = asc.binary "mul" %s, %sc : {_t(so, "f32")}
      %mb = asc.broadcast %mask : {_t((B, 1, 1, S), "f32")} -> {_t(so, "f32")}
      %s2 = asc.binary "add" %s1, %mb : {_t(so, "f32")}
      %mx = asc.reduce "max" %s2 {{axes = array<i64: 3>, keepdim = true}} : {_t(so, "f32")}
        -> {_t(sr, "f32")}
      %mxb = asc.broadcast %mx : {_t(sr, "f32")} -> {_t(so, "f32")}
      %d = asc.binary "sub" %s2, %mxb : {_t(so, "f32")}
      %e = asc.unary "exp" %d : {_t(so, "f32")}
      %sm = asc.reduce "sum" %e {{axes = array<i64: 3>, keepdim = true}} : {_t(so, "f32")}
        -> {_t(sr, "f32")}
      %smb = asc.broadcast %sm : {_t(sr, "f32")} -> {_t(so, "f32")}
      %p = asc.binary "div" %e, %smb : {_t(so, "f32")}
      func.return %p : {_t(so, "f32")}
    }}"""
    module = _fused(src)
    assert len([o for o in module.walk() if isinstance(o, asc.FusionOp)]) == 1
    args = _inputs(module, "attn")
    args[2] = np.where(RNG.uniform(0, 1, args[2].shape) > 0.3, 0.0, -1e4).astype(np.float32)
    after = validate_pass(module, AscLowerCubePass(), "attn", args, rtol=1e-5, atol=1e-6)
    (kernel,) = _kernels(after)
    tiling = {k: v.value.data for k, v in kernel.attributes["asc.tiling"].data.items()}
    assert tiling["tile_n"] >= S
    got = run_function(after, "attn", [x.copy() for x in args])[0]
    s = _mm_ref(args[0], args[1], False, True) * 0.25 + args[2]
    np.testing.assert_allclose(got, softmax_ref(s), rtol=1e-5, atol=1e-6)


def test_reduction_over_wide_rows_stays_a_separate_kernel() -> None:
    M, K, N = 4, 16, 300
    src = f"""func.func @wide(%x: {_t((M, K), "f32")}, %w: {_t((K, N), "f32")})
        -> {_t((M, 1), "f32")} {{
      {_matmul_src((M, K), (K, N), (M, N), "f32", False, False, "%x", "%w")}
      %r = asc.reduce "sum" %m {{axes = array<i64: 1>, keepdim = true}} : {_t((M, N), "f32")}
        -> {_t((M, 1), "f32")}
      func.return %r : {_t((M, 1), "f32")}
    }}"""
    assert len([o for o in _fused(src).walk() if isinstance(o, asc.FusionOp)]) == 2


@pytest.mark.parametrize("m", [1, 17, 33, 100, 513])
def test_block_heights_are_multiples_of_16(m: int) -> None:
    src = f"""func.func @h(%x: {_t((m, 64), "f16")}, %w: {_t((64, 48), "f16")})
        -> {_t((m, 48), "f32")} {{
      {_matmul_src((m, 64), (64, 48), (m, 48), "f16", False, False, "%x", "%w")}
      func.return %m : {_t((m, 48), "f32")}
    }}"""
    module = _fused(src)
    AscLowerCubePass().apply(make_context(), module)
    (kernel,) = _kernels(module)
    tiling = {k: v.value.data for k, v in kernel.attributes["asc.tiling"].data.items()}
    assert tiling["tile_m"] % 16 == 0 and tiling["tile_n"] % 16 == 0


def test_pinned_tile_n_may_not_split_reduced_rows() -> None:
    S = 40
    so = (1, S, S)
    src = f"""func.func @p(%q: {_t((1, S, 16), "f16")}, %k: {_t((1, S, 16), "f16")})
        -> {_t(so, "f32")} {{
      {_matmul_src((1, S, 16), (1, S, 16), so, "f16", False, True, "%q", "%k", "%s")}
      %mx = asc.reduce "max" %s {{axes = array<i64: 2>, keepdim = true}} : {_t(so, "f32")}
        -> {_t((1, S, 1), "f32")}
      %mb = asc.broadcast %mx : {_t((1, S, 1), "f32")} -> {_t(so, "f32")}
      %d = asc.binary "sub" %s, %mb : {_t(so, "f32")}
      func.return %d : {_t(so, "f32")}
    }}"""
    module = _fused(src)
    with pytest.raises(PyAscCompileError, match="splits the rows"):
        AscLowerCubePass(tile_n=32).apply(make_context(), module)
