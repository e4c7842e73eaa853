"""The numpy interpreter of the ``ascendc`` dialect: API-semantics unit tests on hand-written
IR, and compiled operators whose ``ascendc`` stage must match the ``tile`` stage and numpy."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest
from helpers import dialect_context, layernorm_ref, parse, softmax_ref
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.memref import MemRef
from xdsl.dialects.scf import Scf
from xdsl.interpreter import Interpreter

import pyasc_mlir as pa
from pyasc_mlir.dialects.asc import Asc
from pyasc_mlir.dialects.ascendc import Ascendc
from pyasc_mlir.interpreter.ascendc_impls import (
    PIPE_KEY,
    AscendcInterpretationError,
    reduce_sum,
    ub_usable,
)
from pyasc_mlir.interpreter.core import make_interpreter
from pyasc_mlir.interpreter.tile_impls import block_state, set_block

F16, F32 = np.float16, np.float32
RNG = np.random.default_rng(7)


# --------------------------------------------------------------------------- IR helpers


CTX = dialect_context(Builtin, Func, Arith, Scf, MemRef, Asc, Ascendc)


CONSTS = (0, 1, 3, 4, 5, 6, 7, 8, 13, 16, 20, 32, 64)


def kernel(args: str, body: str, attrs: str = "") -> str:
    """A kernel ``@k(args)`` with ``body``; index constants ``%cN`` (N in :data:`CONSTS`) are
    predeclared."""
    consts = "\n".join(f"    %c{i} = arith.constant {i} : index" for i in CONSTS)
    attrs = f" attributes {{{attrs}}}" if attrs else ""
    return f"func.func @k({args}){attrs} {{\n{consts}\n{body}\n    func.return\n}}"


def run(src: str, *gm: np.ndarray) -> Interpreter:
    """Run ``@k`` of ``src`` as block 0 of 1 on the GM arrays (modified in place)."""
    it = make_interpreter(parse(src, CTX))
    set_block(it, 0, 1)
    it.call_op("k", gm)
    return it


def ub_view(it: Interpreter, offset: int, n: int, dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    return block_state(it).ub[offset : offset + n * dt.itemsize].view(dt)


def gm(n: int, t: str) -> str:
    return f"memref<{n}x{t}>"


LT = "!ascendc.local_tensor"
GT = "!ascendc.global_tensor"


# --------------------------------------------------------------------------- unit tests


def test_data_copy_rounds_down_to_32_bytes():
    x = RNG.standard_normal(64).astype(F32)
    out = np.zeros(64, F32)
    src = kernel(
        f"%x: {gm(64, 'f32')}, %o: {gm(64, 'f32')}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(64, "f32")} -> {GT}<f32>
    %go = ascendc.global_buffer %o : {gm(64, "f32")} -> {GT}<f32>
    %b = ascendc.init_tbuf 512 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[0] : {LT}<f32>
    ascendc.data_copy %t, %gx, %c13 : {LT}<f32>, {GT}<f32>
    ascendc.data_copy %go, %t, %c16 : {GT}<f32>, {LT}<f32>
    %t2 = ascendc.tbuf_get %b[64] : {LT}<f32>
    ascendc.data_copy %t2, %t, %c7 : {LT}<f32>, {LT}<f32>
    """,
    )
    it = run(src, x, out)
    # 13 f32 = 52 bytes -> 32 bytes = 8 elements; the rest of UB keeps its poison (NaN)
    np.testing.assert_array_equal(out[:8], x[:8])
    assert np.isnan(out[8:16]).all()
    assert (out[16:] == 0).all()  # UB->GM moved exactly 16 elements
    assert np.isnan(ub_view(it, 256, 16, F32)).all()  # 7 f32 = 28 bytes -> nothing moved


def test_data_copy_checks_bounds_and_alignment():
    x = np.zeros(16, F32)
    src = kernel(
        f"%x: {gm(16, 'f32')}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(16, "f32")} -> {GT}<f32>
    %b = ascendc.init_tbuf 64 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[0] : {LT}<f32>
    ascendc.data_copy %t, %gx, %c32 : {LT}<f32>, {GT}<f32>
    """,
    )
    with pytest.raises(AscendcInterpretationError, match=r"DataCopy\(GM->UB\).*64 bytes.*128"):
        run(src, x)
    src = kernel(
        f"%x: {gm(64, 'f32')}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(64, "f32")} -> {GT}<f32>
    %g2 = ascendc.subview %gx[%c32] : {GT}<f32> -> {GT}<f32>
    %b = ascendc.init_tbuf 256 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[0] : {LT}<f32>
    ascendc.data_copy %t, %g2, %c64 : {LT}<f32>, {GT}<f32>
    """,
    )
    with pytest.raises(AscendcInterpretationError, match=r"GlobalTensor holds 128 bytes"):
        run(src, np.zeros(64, F32))
    src = kernel(
        f"%x: {gm(64, 'f32')}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(64, "f32")} -> {GT}<f32>
    %b = ascendc.init_tbuf 256 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[3] : {LT}<f32>
    ascendc.data_copy %t, %gx, %c8 : {LT}<f32>, {GT}<f32>
    """,
    )
    with pytest.raises(AscendcInterpretationError, match="UB offset 12 is not 32-byte aligned"):
        run(src, np.zeros(64, F32))


def test_copy_element_types_must_agree():
    src = kernel(
        f"%x: {gm(64, 'f16')}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(64, "f16")} -> {GT}<f16>
    %b = ascendc.init_tbuf 256 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[0] : {LT}<f32>
    ascendc.data_copy %t, %gx, %c16 : {LT}<f32>, {GT}<f16>
    """,
    )
    with pytest.raises(
        AscendcInterpretationError, match="dst elements are float32, src elements float16"
    ):
        run(src, np.zeros(64, F16))


def test_data_copy_pad_gm_to_ub_pads_each_block_and_strides():
    x = np.arange(40, dtype=F32)
    # 3 blocks of 5 f32 (20 bytes); GM gap 8 bytes (2 elements); UB gap 1 block (32 bytes)
    src = kernel(
        f"%x: {gm(40, 'f32')}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(40, "f32")} -> {GT}<f32>
    %g1 = ascendc.subview %gx[%c1] : {GT}<f32> -> {GT}<f32>
    %b = ascendc.init_tbuf 256 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[0] : {LT}<f32>
    ascendc.data_copy_pad %t, %g1, %c3, %c20, %c8, %c1 : {LT}<f32>, {GT}<f32>
    """,
    )
    it = run(src, x)
    ub = ub_view(it, 0, 64, F32)
    for k in range(3):
        np.testing.assert_array_equal(ub[16 * k : 16 * k + 5], x[1 + 7 * k : 1 + 7 * k + 5])
        assert np.isnan(ub[16 * k + 5 : 16 * k + 16]).all()  # padding + gap keep UB contents
    assert np.isnan(ub[48:]).all()


def test_data_copy_pad_ub_to_gm_writes_exact_bytes():
    x = np.arange(128, dtype=F16)
    out = np.full(64, -1, F16)
    # f16 blocks of 3 elements (6 bytes): UB block k starts at 32*(1 + 1)*k bytes (gap 1
    # block), GM gap 4 bytes (2 elements)
    src = kernel(
        f"%x: {gm(128, 'f16')}, %o: {gm(64, 'f16')}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(128, "f16")} -> {GT}<f16>
    %go = ascendc.global_buffer %o : {gm(64, "f16")} -> {GT}<f16>
    %c128 = arith.constant 128 : index
    %b = ascendc.init_tbuf 256 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[0] : {LT}<f16>
    ascendc.data_copy %t, %gx, %c128 : {LT}<f16>, {GT}<f16>
    ascendc.data_copy_pad %go, %t, %c3, %c6, %c1, %c4 : {GT}<f16>, {LT}<f16>
    """,
    )
    run(src, x, out)
    want = np.full(64, -1, F16)
    for k in range(3):
        want[5 * k : 5 * k + 3] = x[32 * k : 32 * k + 3]
    np.testing.assert_array_equal(out, want)


def test_data_copy_pad_checks():
    x = np.zeros(64, F32)
    bad_len = kernel(
        f"%x: {gm(64, 'f32')}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(64, "f32")} -> {GT}<f32>
    %b = ascendc.init_tbuf 256 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[0] : {LT}<f32>
    ascendc.data_copy_pad %t, %gx, %c1, %c7, %c0, %c0 : {LT}<f32>, {GT}<f32>
    """,
    )
    with pytest.raises(AscendcInterpretationError, match="blockLen 7 bytes"):
        run(bad_len, x)
    # 3 blocks of 20 bytes padded to 32 with a 1-block gap need 160 bytes of UB; 128 given
    too_long = kernel(
        f"%x: {gm(64, 'f32')}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(64, "f32")} -> {GT}<f32>
    %b = ascendc.init_tbuf 128 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[0] : {LT}<f32>
    ascendc.data_copy_pad %t, %gx, %c3, %c20, %c0, %c1 : {LT}<f32>, {GT}<f32>
    """,
    )
    with pytest.raises(AscendcInterpretationError, match="128 bytes; access up to byte 160"):
        run(too_long, x)


QUEUE_BODY = f"""
    %q = ascendc.init_queue "VECIN" 2 : i64 100 : i64
    %t0 = ascendc.alloc_tensor %q : {LT}<f32>
    %t1 = ascendc.alloc_tensor %q : {LT}<f32>
    ascendc.enque %q, %t0 : {LT}<f32>
    ascendc.enque %q, %t1 : {LT}<f32>
    %d0 = ascendc.deque %q : {LT}<f32>
    %d1 = ascendc.deque %q : {LT}<f32>
    ascendc.duplicate %d0, %one, %c32 : {LT}<f32>, f32
    ascendc.duplicate %d1, %two, %c32 : {LT}<f32>, f32
    ascendc.free_tensor %q, %d0 : {LT}<f32>
"""


def test_queue_rotation_fifo_and_reuse():
    src = kernel(
        "",
        f"""
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    {QUEUE_BODY}
    %t2 = ascendc.alloc_tensor %q : {LT}<f32>
    ascendc.duplicate %t2, %two, %c8 : {LT}<f32>, f32
    """,
    )
    it = run(src)
    # buffers of 100 bytes rounded to 128: buffer 0 at 0 (reused by the third alloc), 1 at 128
    np.testing.assert_array_equal(ub_view(it, 0, 8, F32), 2)
    np.testing.assert_array_equal(ub_view(it, 32, 24, F32), 1)
    np.testing.assert_array_equal(ub_view(it, 128, 32, F32), 2)
    assert block_state(it).allocs[PIPE_KEY].cursor == 256


def test_queue_alloc_of_unfreed_buffer_raises():
    src = kernel(
        "",
        f"""
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    {QUEUE_BODY}
    %t2 = ascendc.alloc_tensor %q : {LT}<f32>
    %t3 = ascendc.alloc_tensor %q : {LT}<f32>
    """,
    )
    with pytest.raises(
        AscendcInterpretationError,
        match=r"AllocTensor.*buffer 1 of 2 \(UB offset 128\) was not freed",
    ):
        run(src)


def test_queue_misuse_raises():
    empty = kernel(
        "",
        """
    %q = ascendc.init_queue "VECOUT" 1 : i64 64 : i64
    %d = ascendc.deque %q : !ascendc.local_tensor<f32>
    """,
    )
    with pytest.raises(AscendcInterpretationError, match="DeQue.*queue is empty"):
        run(empty)
    double_free = kernel(
        "",
        """
    %q = ascendc.init_queue "VECOUT" 1 : i64 64 : i64
    %t = ascendc.alloc_tensor %q : !ascendc.local_tensor<f32>
    ascendc.free_tensor %q, %t : !ascendc.local_tensor<f32>
    ascendc.free_tensor %q, %t : !ascendc.local_tensor<f32>
    """,
    )
    with pytest.raises(AscendcInterpretationError, match="already free"):
        run(double_free)


def test_ub_overflow_and_usable_bound():
    assert ub_usable(192 * 1024) == 188160
    fits = kernel(
        "",
        """
    %q = ascendc.init_queue "VECIN" 2 : i64 1024 : i64
    %b = ascendc.init_tbuf 186112 {position = "VECIN"}
    """,
    )
    run(fits)
    over = kernel(
        "",
        """
    %q = ascendc.init_queue "VECIN" 2 : i64 1024 : i64
    %b = ascendc.init_tbuf 186113 {position = "VECIN"}
    """,
    )
    with pytest.raises(
        AscendcInterpretationError, match=r"UB overflow: need 188192 bytes, usable 188160"
    ):
        run(over)


def test_allocator_and_queues_reset_per_block_under_launch():
    # every block takes 150000 bytes of UB and leaves its queue buffer allocated: both only
    # work when each block starts with a fresh TPipe
    n = 4 * 64
    body = kernel(
        f"%x: {gm(n, 'f32')}, %o: {gm(n, 'f32')}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(n, "f32")} -> {GT}<f32>
    %go = ascendc.global_buffer %o : {gm(n, "f32")} -> {GT}<f32>
    %q = ascendc.init_queue "VECIN" 1 : i64 256 : i64
    %b = ascendc.init_tbuf 150000 {{position = "VECIN"}}
    %i = ascendc.get_block_idx
    %per = ascendc.tiling_field "per_block"
    %off = arith.muli %i, %per : index
    %sx = ascendc.subview %gx[%off] : {GT}<f32> -> {GT}<f32>
    %so = ascendc.subview %go[%off] : {GT}<f32> -> {GT}<f32>
    %t = ascendc.alloc_tensor %q : {LT}<f32>
    %w = ascendc.tbuf_get %b[0] : {LT}<f32>
    ascendc.data_copy %t, %sx, %per : {LT}<f32>, {GT}<f32>
    ascendc.vec_scalar "Adds" %w, %t, 1.5 : f64, %per : {LT}<f32>
    ascendc.data_copy %so, %w, %per : {GT}<f32>, {LT}<f32>
    """,
        attrs="asc.kernel, asc.tiling = {per_block = 64 : i64}",
    )
    src = f"""
    builtin.module {{
      func.func @main(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
        %r = asc.launch @k<4 : i64> (%x) : (tensor<{n}xf32>) -> tensor<{n}xf32>
        func.return %r : tensor<{n}xf32>
      }}
      {body}
    }}"""
    x = RNG.standard_normal(n).astype(F32)
    (out,) = make_interpreter(parse(src, CTX)).call_op("main", (x,))
    np.testing.assert_array_equal(out, x + F32(1.5))


def test_vector_bounds_and_alignment():
    over = kernel(
        "",
        f"""
    %b = ascendc.init_tbuf 256 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[0] : {LT}<f32>
    %u = ascendc.tbuf_get %b[32] : {LT}<f32>
    ascendc.vec_binary "Add" %u, %t, %t, %c64 : {LT}<f32>
    """,
    )
    with pytest.raises(
        AscendcInterpretationError,
        match=r"\(Add\): dst LocalTensor at UB offset 128 holds 32 elements "
        r"\(128 bytes\); access of 64 elements",
    ):
        run(over)
    misaligned = kernel(
        "",
        f"""
    %b = ascendc.init_tbuf 256 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[0] : {LT}<f32>
    %u = ascendc.subview %t[%c4] : {LT}<f32> -> {LT}<f32>
    ascendc.vec_unary "Exp" %u, %t, %c8 : {LT}<f32>
    """,
    )
    with pytest.raises(AscendcInterpretationError, match="Exp.*UB offset 16 is not 32-byte"):
        run(misaligned)
    past = kernel(
        "",
        f"""
    %b = ascendc.init_tbuf 64 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[0] : {LT}<f32>
    %u = ascendc.subview %t[%c20] : {LT}<f32> -> {LT}<f32>
    """,
    )
    with pytest.raises(AscendcInterpretationError, match="offset 20 out of range.*16 elements"):
        run(past)
    get = kernel(
        "",
        f"""
    %b = ascendc.init_tbuf 64 {{position = "VECIN"}}
    %t = ascendc.tbuf_get %b[8] : {LT}<f32>
    %v = ascendc.get_value %t[%c8] : {LT}<f32> -> f32
    """,
    )
    with pytest.raises(AscendcInterpretationError, match=r"GetValue\): index 8 out of range"):
        run(get)


def _vec_kernel(dtype: str, ops_text: str, n: int = 64) -> str:
    """Kernel loading ``x``, ``y`` (``n`` elements) to ``%a``/``%b`` and storing ``%d``."""
    t = dtype
    return kernel(
        f"%x: {gm(n, t)}, %y: {gm(n, t)}, %o: {gm(n, t)}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(n, t)} -> {GT}<{t}>
    %gy = ascendc.global_buffer %y : {gm(n, t)} -> {GT}<{t}>
    %go = ascendc.global_buffer %o : {gm(n, t)} -> {GT}<{t}>
    %cn = arith.constant {n} : index
    %buf = ascendc.init_tbuf {3 * n * 4 + 64} {{position = "VECIN"}}
    %a = ascendc.tbuf_get %buf[0] : {LT}<{t}>
    %b = ascendc.tbuf_get %buf[{n}] : {LT}<{t}>
    %d = ascendc.tbuf_get %buf[{2 * n}] : {LT}<{t}>
    ascendc.data_copy %a, %gx, %cn : {LT}<{t}>, {GT}<{t}>
    ascendc.data_copy %b, %gy, %cn : {LT}<{t}>, {GT}<{t}>
    {ops_text}
    ascendc.data_copy %go, %d, %cn : {GT}<{t}>, {LT}<{t}>
    """,
    )


def _run_vec(dtype, ops_text: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    t = {F16: "f16", F32: "f32"}[dtype]
    out = np.zeros_like(x)
    run(_vec_kernel(t, ops_text, x.size), x, y, out)
    return out


@pytest.mark.parametrize("dtype", [F16, F32])
@pytest.mark.parametrize(
    "api,fn",
    [
        ("Add", np.add),
        ("Sub", np.subtract),
        ("Mul", np.multiply),
        ("Div", np.divide),
        ("Max", np.maximum),
        ("Min", np.minimum),
    ],
)
def test_vec_binary(dtype, api, fn):
    x, y = RNG.standard_normal((2, 64)).astype(dtype)
    t = {F16: "f16", F32: "f32"}[dtype]
    out = _run_vec(dtype, f'ascendc.vec_binary "{api}" %d, %a, %b, %cn : {LT}<{t}>', x, y)
    want = fn(x.astype(np.float64), y.astype(np.float64)).astype(dtype)  # correctly rounded
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", [F16, F32])
def test_vec_unary_and_scalar(dtype):
    t = {F16: "f16", F32: "f32"}[dtype]
    x = (RNG.random(64) * 4 + 0.25).astype(dtype)
    x[:8] *= -1
    cases = {
        "Exp": np.exp,
        "Ln": np.log,
        "Abs": np.abs,
        "Sqrt": np.sqrt,
        "Rsqrt": lambda v: 1 / np.sqrt(v),
        "Reciprocal": lambda v: 1 / v,
        "Relu": lambda v: np.maximum(v, 0),
    }
    tol = 1e-3 if dtype == F16 else 1e-6
    with np.errstate(invalid="ignore"):
        for api, fn in cases.items():
            out = _run_vec(dtype, f'ascendc.vec_unary "{api}" %d, %a, %cn : {LT}<{t}>', x, x)
            want = fn(x.astype(np.float64)).astype(dtype)
            np.testing.assert_allclose(out, want, rtol=tol, atol=0, err_msg=api)
    scalars = {"Adds": np.add, "Muls": np.multiply, "Maxs": np.maximum, "Mins": np.minimum}
    for api, fn in scalars.items():
        out = _run_vec(
            dtype, f'ascendc.vec_scalar "{api}" %d, %a, 1.1 : f64, %cn : {LT}<{t}>', x, x
        )
        s = np.float64(dtype(1.1))  # the scalar is converted to T first
        np.testing.assert_array_equal(out, fn(x.astype(np.float64), s).astype(dtype), api)


def test_duplicate_and_get_value():
    x = RNG.standard_normal(64).astype(F16)
    out = _run_vec(
        F16,
        f"""
    %v = ascendc.get_value %a[%c5] : {LT}<f16> -> f16
    ascendc.duplicate %d, %v, %c64 : {LT}<f16>, f16
    %c = arith.constant 0.1 : f16
    %d2 = ascendc.subview %d[%c32] : {LT}<f16> -> {LT}<f16>
    ascendc.duplicate %d2, %c, %c16 : {LT}<f16>, f16""",
        x,
        x,
    )
    np.testing.assert_array_equal(out[:32], np.full(32, x[5]))
    np.testing.assert_array_equal(out[32:48], np.full(16, F16(0.1)))
    np.testing.assert_array_equal(out[48:], np.full(16, x[5]))


CAST_IN = np.array(
    [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7, -2.7, 3.0, -0.2, 1e10, np.nan, 4.5, -4.5, 7.25, 0.0], F32
)
CAST_WANT = {
    "CAST_NONE": [-2, -2, -0, 0, 2, 2, 3, -3, 3, -0, 2**31 - 1, 0, 4, -4, 7, 0],
    "CAST_RINT": [-2, -2, -0, 0, 2, 2, 3, -3, 3, -0, 2**31 - 1, 0, 4, -4, 7, 0],
    "CAST_FLOOR": [-3, -2, -1, 0, 1, 2, 2, -3, 3, -1, 2**31 - 1, 0, 4, -5, 7, 0],
    "CAST_CEIL": [-2, -1, -0, 1, 2, 3, 3, -2, 3, -0, 2**31 - 1, 0, 5, -4, 8, 0],
    "CAST_ROUND": [-3, -2, -1, 1, 2, 3, 3, -3, 3, -0, 2**31 - 1, 0, 5, -5, 7, 0],
    "CAST_TRUNC": [-2, -1, -0, 0, 1, 2, 2, -2, 3, -0, 2**31 - 1, 0, 4, -4, 7, 0],
    "CAST_ODD": [-3, -1, -1, 1, 1, 3, 3, -3, 3, -1, 2**31 - 1, 0, 5, -5, 7, 0],
}


@pytest.mark.parametrize("mode", list(CAST_WANT))
def test_cast_f32_to_i32_round_modes(mode):
    x = np.zeros(64, F32)
    x[:16] = CAST_IN
    out = np.zeros(64, np.int32)
    src = kernel(
        f"%x: {gm(64, 'f32')}, %o: {gm(64, 'i32')}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(64, "f32")} -> {GT}<f32>
    %go = ascendc.global_buffer %o : {gm(64, "i32")} -> {GT}<i32>
    %b = ascendc.init_tbuf 512 {{position = "VECIN"}}
    %a = ascendc.tbuf_get %b[0] : {LT}<f32>
    %d = ascendc.tbuf_get %b[64] : {LT}<i32>
    ascendc.data_copy %a, %gx, %c64 : {LT}<f32>, {GT}<f32>
    ascendc.cast "{mode}" %d, %a, %c16 : {LT}<i32>, {LT}<f32>
    ascendc.data_copy %go, %d, %c16 : {GT}<i32>, {LT}<i32>
    """,
    )
    run(src, x, out)
    np.testing.assert_array_equal(out[:16], np.array(CAST_WANT[mode], np.int32))


def test_cast_f32_to_f16_modes():
    one = 1.0 + 2.0**-11  # exactly halfway between 1 and the next f16
    x = np.array([one, -one, 1.0 + 3 * 2.0**-12, 70000.0, -70000.0, 1e-9] + [0.0] * 58, F32)
    results = {}
    for mode in ("CAST_NONE", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC", "CAST_ODD"):
        out = np.zeros(64, F16)
        src = kernel(
            f"%x: {gm(64, 'f32')}, %o: {gm(64, 'f16')}",
            f"""
        %gx = ascendc.global_buffer %x : {gm(64, "f32")} -> {GT}<f32>
        %go = ascendc.global_buffer %o : {gm(64, "f16")} -> {GT}<f16>
        %b = ascendc.init_tbuf 512 {{position = "VECIN"}}
        %a = ascendc.tbuf_get %b[0] : {LT}<f32>
        %d = ascendc.tbuf_get %b[128] : {LT}<f16>
        ascendc.data_copy %a, %gx, %c64 : {LT}<f32>, {GT}<f32>
        ascendc.cast "{mode}" %d, %a, %c64 : {LT}<f16>, {LT}<f32>
        ascendc.data_copy %go, %d, %c64 : {GT}<f16>, {LT}<f16>
        """,
        )
        run(src, x, out)
        results[mode] = out[:6].astype(np.float64)
    up = 1.0 + 2.0**-10
    big = 65504.0
    np.testing.assert_array_equal(results["CAST_NONE"], [1.0, -1.0, up, np.inf, -np.inf, 0.0])
    np.testing.assert_array_equal(results["CAST_ROUND"][:3], [up, -up, up])
    np.testing.assert_array_equal(results["CAST_FLOOR"][:5], [1.0, -up, 1.0, big, -np.inf])
    np.testing.assert_array_equal(results["CAST_CEIL"][:5], [up, -1.0, up, np.inf, -big])
    np.testing.assert_array_equal(results["CAST_TRUNC"][:5], [1.0, -1.0, 1.0, big, -big])
    np.testing.assert_array_equal(results["CAST_ODD"][:3], [up, -up, up])


@pytest.mark.parametrize(
    "mode,fn",
    [
        ("LT", np.less),
        ("GT", np.greater),
        ("EQ", np.equal),
        ("LE", np.less_equal),
        ("GE", np.greater_equal),
        ("NE", np.not_equal),
    ],
)
def test_compare_writes_bits_and_select_reads_them(mode, fn):
    x = RNG.integers(-2, 3, 64).astype(F32)
    y = RNG.integers(-2, 3, 64).astype(F32)
    src = kernel(
        f"%x: {gm(64, 'f32')}, %y: {gm(64, 'f32')}, %o: {gm(64, 'f32')}",
        f"""
    %gx = ascendc.global_buffer %x : {gm(64, "f32")} -> {GT}<f32>
    %gy = ascendc.global_buffer %y : {gm(64, "f32")} -> {GT}<f32>
    %go = ascendc.global_buffer %o : {gm(64, "f32")} -> {GT}<f32>
    %b = ascendc.init_tbuf 1024 {{position = "VECIN"}}
    %a = ascendc.tbuf_get %b[0] : {LT}<f32>
    %c = ascendc.tbuf_get %b[64] : {LT}<f32>
    %d = ascendc.tbuf_get %b[128] : {LT}<f32>
    %m = ascendc.tbuf_get %b[768] : {LT}<i8>
    ascendc.data_copy %a, %gx, %c64 : {LT}<f32>, {GT}<f32>
    ascendc.data_copy %c, %gy, %c64 : {LT}<f32>, {GT}<f32>
    ascendc.compare "{mode}" %m, %a, %c, %c64 : {LT}<i8>, {LT}<f32>
    ascendc.select %d, %m, %a, %c, %c64 : {LT}<f32>, {LT}<i8>
    ascendc.data_copy %go, %d, %c64 : {GT}<f32>, {LT}<f32>
    """,
    )
    out = np.zeros(64, F32)
    it = run(src, x, y, out)
    bits = fn(x, y)
    np.testing.assert_array_equal(
        ub_view(it, 768, 8, np.uint8), np.packbits(bits, bitorder="little")
    )
    assert (ub_view(it, 776, 24, np.uint8) == 0xFF).all()  # count/8 bytes written, no more
    np.testing.assert_array_equal(out, np.where(bits, x, y))


def test_compare_count_must_fill_256_byte_repeats():
    src = kernel(
        "",
        f"""
    %b = ascendc.init_tbuf 1024 {{position = "VECIN"}}
    %a = ascendc.tbuf_get %b[0] : {LT}<f32>
    %m = ascendc.tbuf_get %b[768] : {LT}<i8>
    ascendc.compare "LT" %m, %a, %a, %c32 : {LT}<i8>, {LT}<f32>
    """,
    )
    with pytest.raises(
        AscendcInterpretationError, match="count 32 . 4 bytes = 128 is not a multiple of 256"
    ):
        run(src)


def test_select_partial_mask_byte():
    x, y = RNG.integers(-3, 4, (2, 128)).astype(F16)  # Compare needs 256-byte repeats
    src = _vec_kernel(
        "f16",
        f"""
    %mb = ascendc.init_tbuf 32 {{position = "VECIN"}}
    %m = ascendc.tbuf_get %mb[0] : {LT}<i8>
    %cm = arith.constant 0.0 : f16
    ascendc.compare "GT" %m, %a, %b, %cn : {LT}<i8>, {LT}<f16>
    ascendc.duplicate %d, %cm, %cn : {LT}<f16>, f16
    ascendc.select %d, %m, %a, %b, %c13 : {LT}<f16>, {LT}<i8>""",
        n=128,
    )
    out = np.zeros(128, F16)
    run(src, x, y, out)
    want = np.zeros(128, F16)
    want[:13] = np.where(x[:13] > y[:13], x[:13], y[:13])
    np.testing.assert_array_equal(out, want)


def _documented_sum(x: np.ndarray, lanes: int):
    """docs/CPU_RUNTIME.md's ReduceSum order, written out with scalar float32/float16 adds."""
    t = x.dtype.type
    vals = [t(v) for v in x] + [t(0)] * (-len(x) % lanes)
    reps = []
    for r in range(0, len(vals), lanes):
        level = vals[r : r + lanes]
        while len(level) > 1:
            level = [
                t(np.float32(level[2 * i]) + np.float32(level[2 * i + 1]))
                for i in range(len(level) // 2)
            ]
        reps.append(level[0])
    acc = reps[0]
    for v in reps[1:]:
        acc = t(np.float32(acc) + np.float32(v))
    return acc


def test_reduce_sum_order_and_extremes():
    # tree order inside a 256-byte repeat: (2^24 + 0) + (1 + 1) = 2^24 + 2; a left-to-right
    # float32 sum would give 2^24
    x = np.zeros(64, F32)
    x[:4] = [2.0**24, 0.0, 1.0, 1.0]
    assert reduce_sum(x[:4]) == F32(2.0**24 + 2)
    # 130 f32 = 3 repeats of 64 lanes (the last zero-padded); repeat results left to right
    y = RNG.standard_normal(130).astype(F32)
    assert reduce_sum(y) == _documented_sum(y, 64)
    src = _vec_kernel(
        "f32",
        f"""
    %w = ascendc.tbuf_get %buf[{3 * 64}] : {LT}<f32>
    ascendc.duplicate %d, %zero, %c64 : {LT}<f32>, f32
    ascendc.reduce "ReduceSum" %d, %a, %w, %c4 : {LT}<f32>
    %d1 = ascendc.subview %d[%c8] : {LT}<f32> -> {LT}<f32>
    ascendc.reduce "ReduceMax" %d1, %b, %w, %c64 : {LT}<f32>
    %d2 = ascendc.subview %d[%c16] : {LT}<f32> -> {LT}<f32>
    ascendc.reduce "ReduceMin" %d2, %b, %w, %c13 : {LT}<f32>""",
    ).replace(
        "%cn = arith.constant 64 : index",
        "%cn = arith.constant 64 : index\n    %zero = arith.constant 0.0 : f32",
    )
    z = RNG.standard_normal(64).astype(F32)
    out = np.full(64, 7, F32)
    run(src, x, z, out)
    assert out[0] == F32(2.0**24 + 2)
    assert out[8] == z.max() and out[16] == z[:13].min()
    assert (out[[1, 2, 9, 17, 20]] == 0).all()  # only dst[0] is written


def test_reduce_sum_f16_accumulates_in_f16():
    x = (RNG.standard_normal(300) * 100).astype(F16)
    got = reduce_sum(x)
    assert got.dtype == F16
    assert got == _documented_sum(x, 128)
    ones = np.full(256, F16(1.0))
    ones[0] = F16(2048.0)  # 2048 + 1 rounds back to 2048 in f16: the tree loses the ones
    assert reduce_sum(ones) == _documented_sum(ones, 128) != F16(2048 + 255)


# --------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module", autouse=True)
def _no_gxx(tmp_path_factory):
    """``compile`` without g++: the tests only interpret the IR stages."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYASC_CACHE_DIR", str(tmp_path_factory.mktemp("pyasc_cache")))
        fake = lambda *a, **k: Path("/nonexistent/lib.so")  # noqa: E731
        mp.setattr("pyasc_mlir.runtime.cpu.build_library", fake)
        yield


def add_scalar(x, y):
    return x * 2.0 + y + 1.5


def add_ln(x, r, w, b):
    h = x + r
    mu = pa.mean(h, -1, keepdim=True)
    d = h - mu
    v = pa.mean(d * d, -1, keepdim=True)
    return d * pa.rsqrt(v + 1e-5) * w + b


def softmax(x):
    e = pa.exp(x - pa.max(x, -1, keepdim=True))
    return e / pa.sum(e, -1, keepdim=True)


def where_gt(a, b):
    return pa.where(a > b, a, b * 0.5)


def bcast_add(x, y):
    return x + y


def sum_mid(x):
    return pa.sum(x, 1)


def _ref_ln(x, r, w, b):
    return layernorm_ref(x + r, w, b)


CASES = {
    "add_scalar": (
        add_scalar,
        lambda x, y: x * 2.0 + y + 1.5,
        [[(1,), (1,)], [(7, 33), (7, 33)], [(513,), (513,)], [(400, 1025), (400, 1025)]],
    ),  # several tiles per block: buffer rotation
    "add_ln": (
        add_ln,
        _ref_ln,
        [[(7, 513), (7, 513), (513,), (513,)], [(1, 33), (1, 33), (33,), (33,)]],
    ),
    "softmax": (softmax, softmax_ref, [[(7, 513)], [(1, 7)]]),
    "where_gt": (
        where_gt,
        lambda a, b: np.where(a > b, a, b * 0.5),
        [[(7, 33), (7, 33)], [(513,), (513,)]],
    ),
    "bcast_add": (bcast_add, lambda x, y: x + y, [[(4, 1, 7), (1, 5, 1)]]),
    "sum_mid": (sum_mid, lambda x: x.sum(1), [[(2, 5, 33)]]),
}
E2E = [
    (name, shapes, dt)
    for name, (_, _, shape_sets) in CASES.items()
    for shapes in shape_sets
    for dt in ("float16", "float32")
]


@pytest.mark.parametrize(
    "name,shapes,dtype", E2E, ids=[f"{n}-{'x'.join(map(str, s[0]))}-{d}" for n, s, d in E2E]
)
def test_ascendc_stage_matches_tile_and_numpy(name, shapes, dtype):
    fn, ref_fn, _ = CASES[name]
    op = pa.compile(fn, [pa.TensorDesc(s, dtype) for s in shapes], cache=False)
    rng = np.random.default_rng(zlib.crc32(f"{name}{shapes}{dtype}".encode()))
    args = [rng.standard_normal(s).astype(dtype) for s in shapes]
    asc = op.run_stage("ascendc", *args)
    tile = op.run_stage("tile", *args)
    ref = ref_fn(*[a.astype(np.float64) for a in args]).astype(dtype)
    tol = 1e-3 if dtype == "float16" else 1e-5
    tight = 1e-3 if dtype == "float16" else 2e-6  # <= 1 f16 ulp; a few f32 ulps (sum order)
    for a, t in zip(asc, tile, strict=True):
        assert a.dtype == np.dtype(dtype) and a.shape == ref.shape
        assert not np.isnan(a).any()
        scale = max(1.0, float(np.abs(ref).max()))
        np.testing.assert_allclose(a, t, rtol=tight, atol=tight * scale)
        np.testing.assert_allclose(a, ref, rtol=tol, atol=tol * scale)
