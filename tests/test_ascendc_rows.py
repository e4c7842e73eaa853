"""``ascendc.whole_reduce`` (``WholeReduceSum`` / ``WholeReduceMax`` ``ORDER_ONLY_VALUE``) and
``ascendc.brcb`` (``Brcb``; CPU build: ``tests/test_cpu_runtime.py``, its model below):
the interpreter against the numpy model of the documented semantics that
``tests/test_conformance_reduce.py`` checks the CPU runtime (``pyasc_cpu/reduce.h``) against
(``tests/reduce_reference.py``): so interpreter and CPU build agree bit for bit (also checked
directly: ``tests/test_cpu_runtime.py``); the verifier and the cost walker's charge."""

from __future__ import annotations

import numpy as np
import pytest
import reduce_reference as ref
from helpers import parse
from reduce_reference import F16, F32, assert_bits
from test_ascendc_interp import CTX, GT, LT, gm, kernel, run
from xdsl.utils.exceptions import VerifyException

RNG = np.random.default_rng(1414)
API = {"sum": "WholeReduceSum", "max": "WholeReduceMax"}


def _src(t: str, n: int, out: int, api: str, mask: int, repeat: int, strides) -> str:
    d, b, r = strides
    props = f"dst_rep = {d} : i64, src_blk = {b} : i64, src_rep = {r} : i64"
    return kernel(
        f"%x: {gm(n, t)}, %o: {gm(out, t)}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(n, t)} -> {GT}<{t}>
    %go = ascendc.global_buffer %o : {gm(out, t)} -> {GT}<{t}>
    %cn = arith.constant {n} : index
    %co = arith.constant {out} : index
    %cm = arith.constant {mask} : index
    %cr = arith.constant {repeat} : index
    %buf = ascendc.init_tbuf {(n + out) * 4 + 64} {{position = "VECIN"}}
    %a = ascendc.tbuf_get %buf[0] : {LT}<{t}>
    %d = ascendc.tbuf_get %buf[{n}] : {LT}<{t}>
    ascendc.data_copy %a, %gx, %cn : {LT}<{t}>, {GT}<{t}>
    ascendc.data_copy %d, %gx, %co : {LT}<{t}>, {GT}<{t}>
    ascendc.whole_reduce "{api}" %d, %a, %cm, %cr {{{props}}} : {LT}<{t}>
    ascendc.data_copy %go, %d, %co : {GT}<{t}>, {LT}<{t}>
    """,
    )


def _model(dtype, kind, x, base, mask, repeat, strides):
    d, b, r = strides
    p = ref.plan(dtype, 0, mask, None, repeat)
    out = base.copy()
    n = ref.lanes_of(dtype)
    for i in range(repeat):
        lanes = ref.repeat_lanes(dtype, x, p, i, b, r)
        if kind == "sum":
            v = [lanes.get(k, 0.0) for k in range(n)]
            out[i * d] = dtype(ref.tree(dtype, v, sat=True))
        else:
            out[i * d] = dtype(ref.fold(list(lanes.values()), True)[0])
    return out


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("kind", ["sum", "max"])
@pytest.mark.parametrize(
    "mask,repeat,strides",
    [(64, 4, (16, 1, 16)), (5, 3, (1, 1, 8)), (33, 7, (16, 1, 2)), (1, 8, (1, 2, 2))],
)
def test_matches_documented_model(dtype, kind, mask, repeat, strides):
    lanes = ref.lanes_of(dtype)
    mask = min(mask * (lanes // 64), lanes)
    e = ref.block_of(dtype)
    d, b, r = strides
    n = max(64, (repeat - 1) * r * e + ((mask - 1) // e) * b * e + e)
    n = -(-n // 16) * 16
    out_n = -(-((repeat - 1) * d + 1) // 16) * 16
    x = (RNG.standard_normal(n) * 4).astype(dtype)
    x[3] = -0.0
    if kind == "max":
        x[1] = np.nan
    t = "f16" if dtype is F16 else "f32"
    o = np.zeros(out_n, dtype)
    run(_src(t, n, out_n, API[kind], mask, repeat, strides), x, o)
    assert_bits(o, _model(dtype, kind, x, x[:out_n], mask, repeat, strides))


def test_half_sum_saturates():
    x = np.full(128, 60000.0, F16)
    o = np.zeros(16, F16)
    run(_src("f16", 128, 16, "WholeReduceSum", 128, 1, (1, 1, 8)), x, o)
    assert o[0] == F16(65504.0)


@pytest.mark.parametrize(
    "mask,repeat,strides,match",
    [
        (65, 1, (1, 1, 8), "mask 65 is outside"),
        (4, 256, (1, 1, 8), "repeat 256 exceeds"),
        (4, 1, (256, 1, 8), "dstRepStride 256"),
    ],
)
def test_verifier(mask, repeat, strides, match):
    with pytest.raises(VerifyException, match=match):
        parse(_src("f32", 64, 16, "WholeReduceSum", mask, repeat, strides), CTX).verify()


def test_cost():
    from pyasc_mlir import cost_walker
    from pyasc_mlir.dialects import ascendc as ac
    from pyasc_mlir.platform import get_platform

    mod = parse(_src("f32", 1024, 1024, "WholeReduceMax", 64, 16, (16, 1, 16)), CTX)
    op = next(o for o in mod.walk() if isinstance(o, ac.WholeReduceOp))
    walker = cost_walker.Walker.__new__(cost_walker.Walker)  # no kernel: just the op's charge
    walker.env, walker.tiling, walker.platform = {}, {}, get_platform("910B2")
    cost = cost_walker.TileCost()
    for o in mod.walk():
        walker._index(o)
    walker._op(op, cost)
    # 16 repeats of one cycle (the op table's ReduceMax), the issue cost, log2(64) tree levels
    assert cost.v == 16 + cost_walker.VECTOR_ISSUE_CYCLES + 6


def brcb_model(x, base, reps, strides, e):
    """The documented Brcb: DataBlock ``r*dstRepStride + j*dstBlkStride`` = ``x[8r + j]``."""
    out = base.copy()
    blk, rep = strides
    for r in range(reps):
        for j in range(8):
            at = (r * rep + j * blk) * e
            out[at : at + e] = x[8 * r + j]
    return out


def run_brcb(dtype, x, base, reps, strides):
    """``ascendc.brcb`` in the interpreter: ``x`` (1024 elements) to a copy of ``base``."""
    t = "f16" if dtype is F16 else "f32"
    n, out = x.size, base.size
    props = f"dst_blk = {strides[0]} : i64, dst_rep = {strides[1]} : i64"
    src = kernel(
        f"%x: {gm(n, t)}, %b: {gm(out, t)}, %o: {gm(out, t)}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(n, t)} -> {GT}<{t}>
    %gb = ascendc.global_buffer %b : {gm(out, t)} -> {GT}<{t}>
    %go = ascendc.global_buffer %o : {gm(out, t)} -> {GT}<{t}>
    %cn = arith.constant {n} : index
    %co = arith.constant {out} : index
    %cr = arith.constant {reps} : index
    %buf = ascendc.init_tbuf {(n + out) * 4 + 64} {{position = "VECIN"}}
    %a = ascendc.tbuf_get %buf[0] : {LT}<{t}>
    %d = ascendc.tbuf_get %buf[{n}] : {LT}<{t}>
    ascendc.data_copy %a, %gx, %cn : {LT}<{t}>, {GT}<{t}>
    ascendc.data_copy %d, %gb, %co : {LT}<{t}>, {GT}<{t}>
    ascendc.brcb %d, %a, %cr {{{props}}} : {LT}<{t}>
    ascendc.data_copy %go, %d, %co : {GT}<{t}>, {LT}<{t}>
    """,
    )
    o = np.zeros_like(base)
    run(src, x, base, o)
    return o


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize("reps,strides", [(2, (1, 8)), (3, (2, 16)), (8, (16, 128)), (1, (0, 8))])
def test_brcb_matches_documented_model(dtype, reps, strides):
    e = ref.block_of(dtype)
    x = RNG.standard_normal(1024).astype(dtype)
    x[1] = np.nan
    need = (reps - 1) * strides[1] * e + 7 * strides[0] * e + e
    base = np.full(max(1024, -(-need // 16) * 16), 3.0, dtype)
    got = run_brcb(dtype, x, base, reps, strides)
    assert_bits(got, brcb_model(x, base, reps, strides, e))


def test_brcb_verifier():
    bad = kernel(
        f"%x: {gm(64, 'f32')}",
        f"""
    %buf = ascendc.init_tbuf 512 {{position = "VECIN"}}
    %a = ascendc.tbuf_get %buf[0] : {LT}<f32>
    %c = arith.constant 256 : index
    ascendc.brcb %a, %a, %c {{dst_blk = 1 : i64, dst_rep = 8 : i64}} : {LT}<f32>
    """,
    )
    with pytest.raises(VerifyException, match="repeat 256 exceeds 255"):
        parse(bad, CTX).verify()
