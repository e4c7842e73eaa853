"""The numpy interpreter of the asc tile-level ops against numpy references."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import assert_close, dialect_context, parse
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.dialects.memref import MemRef
from xdsl.dialects.scf import Scf
from xdsl.interpreter import Interpreter
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.builtin import BuiltinFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.utils.exceptions import InterpretationError

from pyasc_mlir.dialects.asc import Asc
from pyasc_mlir.interpreter.tile_impls import (
    AscTileFunctions,
    TileInterpretationError,
    block_state,
    convert,
    set_block,
    tiling_values,
)

F16, F32 = np.float16, np.float32
NP = {"f16": F16, "f32": F32}
RNG = np.random.default_rng(1234)


CTX = dialect_context(Builtin, Func, Arith, Scf, MemRef, Asc)


def interp(module: ModuleOp) -> Interpreter:
    it = Interpreter(module)
    for f in (
        FuncFunctions(),
        ArithFunctions(),
        ScfFunctions(),
        BuiltinFunctions(),
        AscTileFunctions(),
    ):
        it.register_implementations(f)
    return it


def ub(n: int, t: str) -> str:
    return f"memref<{n}x{t}, #asc.scope<ub>>"


def gm(n: int, t: str) -> str:
    return f"memref<{n}x{t}, #asc.scope<gm>>"


def call(src: str, *args, name: str = "k"):
    """Parse ``src``, then run function ``name`` as block 0 of 1."""
    it = interp(parse(src, CTX))
    set_block(it, 0, 1)
    return it.call_op(name, args)


def poisoned(n: int, dtype) -> np.ndarray:
    return np.full(n, np.nan, dtype)


def rand(n: int, dtype, lo: float = -4.0, hi: float = 4.0) -> np.ndarray:
    return RNG.uniform(lo, hi, n).astype(dtype)


def assert_near(got: np.ndarray, want: np.ndarray) -> None:
    """NaN-aware comparison; float32 results within 1e-6 (the tile interpreter and the
    references compute alike), float16 within the project's 1e-3."""
    tol = 1e-3 if got.dtype == np.float16 else 1e-6
    assert_close(got, want, rtol=tol, atol=tol, equal_nan=True)


COUNTS = (7, 33, 513)
N = 528  # buffer elements: a multiple of 16, > every count


# --------------------------------------------------------------------------- vector ops


UNARY_REF = {
    "neg": np.negative,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "abs": np.abs,
    "relu": lambda x: np.maximum(x, 0),
    "reciprocal": lambda x: 1 / x,
}


@pytest.mark.parametrize("t", ["f16", "f32"])
@pytest.mark.parametrize("kind", sorted(UNARY_REF))
def test_vunary(kind: str, t: str) -> None:
    src = f"""func.func @k(%d: {ub(N, t)}, %s: {ub(N, t)}, %n: index) {{
      asc.vunary "{kind}" %d, %s, %n : {ub(N, t)}, {ub(N, t)}
      func.return
    }}"""
    it = interp(parse(src, CTX))
    for n in COUNTS:
        lo = 0.1 if kind in ("log", "sqrt", "rsqrt") else -4.0
        x = rand(N, NP[t], lo, 4.0)
        d = poisoned(N, NP[t])
        it.call_op("k", (d, x, n))
        with np.errstate(all="ignore"):
            want = UNARY_REF[kind](x[:n].astype(np.float64))
        assert_near(d[:n], want)
        assert np.isnan(d[n:]).all(), "elements past count must stay untouched"


def test_vunary_in_place() -> None:
    src = f"""func.func @k(%d: {ub(N, "f32")}, %n: index) {{
      asc.vunary "exp" %d, %d, %n : {ub(N, "f32")}, {ub(N, "f32")}
      func.return
    }}"""
    x = rand(N, F32)
    d = x.copy()
    call(src, d, 33)
    assert_near(d[:33], np.exp(x[:33]))
    np.testing.assert_array_equal(d[33:], x[33:])


BINARY_REF = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
}


@pytest.mark.parametrize("t", ["f16", "f32"])
@pytest.mark.parametrize("kind", sorted(BINARY_REF))
def test_vbinary(kind: str, t: str) -> None:
    src = f"""func.func @k(%d: {ub(N, t)}, %a: {ub(N, t)}, %b: {ub(N, t)}, %n: index) {{
      asc.vbinary "{kind}" %d, %a, %b, %n : {ub(N, t)}, {ub(N, t)}, {ub(N, t)}
      func.return
    }}"""
    it = interp(parse(src, CTX))
    for n in COUNTS:
        a, b = rand(N, NP[t]), rand(N, NP[t], 0.5, 4.0)
        d = poisoned(N, NP[t])
        it.call_op("k", (d, a, b, n))
        want = BINARY_REF[kind](a[:n], b[:n])  # numpy in the dtype itself
        assert want.dtype == NP[t]
        assert_near(d[:n], want)
        assert np.isnan(d[n:]).all()


SCALAR_REF = {"adds": np.add, "muls": np.multiply, "maxs": np.maximum, "mins": np.minimum}


@pytest.mark.parametrize("t", ["f16", "f32"])
@pytest.mark.parametrize("kind", sorted(SCALAR_REF))
def test_vscalar(kind: str, t: str) -> None:
    src = f"""func.func @k(%d: {ub(N, t)}, %s: {ub(N, t)}, %n: index) {{
      asc.vscalar "{kind}" %d, %s, 0.3 : f64, %n : {ub(N, t)}, {ub(N, t)}
      func.return
    }}"""
    it = interp(parse(src, CTX))
    for n in COUNTS:
        x = rand(N, NP[t])
        d = poisoned(N, NP[t])
        it.call_op("k", (d, x, n))
        want = SCALAR_REF[kind](x[:n], NP[t](0.3))
        np.testing.assert_array_equal(d[:n], want)  # scalar rounded to the dtype first
        assert np.isnan(d[n:]).all()


@pytest.mark.parametrize("t", ["f16", "f32"])
def test_vdup_and_vcopy(t: str) -> None:
    src = f"""func.func @k(%d: {ub(N, t)}, %c: {ub(N, t)}, %s: {ub(N, t)}, %n: index) {{
      asc.vdup %d, -2.5 : f64, %n : {ub(N, t)}
      asc.vcopy %c, %s, %n : {ub(N, t)}, {ub(N, t)}
      func.return
    }}"""
    it = interp(parse(src, CTX))
    for n in COUNTS:
        d, c, x = poisoned(N, NP[t]), poisoned(N, NP[t]), rand(N, NP[t])
        it.call_op("k", (d, c, x, n))
        assert (d[:n] == -2.5).all() and np.isnan(d[n:]).all()
        np.testing.assert_array_equal(c[:n], x[:n])
        assert np.isnan(c[n:]).all()


# --------------------------------------------------------------------------- casts


def _neighbours16(x: float) -> tuple[np.float16, np.float16]:
    """The f16 values just below/above (or equal to) x, found by walking nextafter."""
    a = np.float16(x)
    if np.isinf(a):
        a = np.copysign(np.finfo(F16).max, x).astype(F16)
    lo = a if float(a) <= x else np.nextafter(a, F16(-np.inf))
    hi = a if float(a) >= x else np.nextafter(a, F16(np.inf))
    return lo, hi


def _ref_cast16(x: float, mode: str) -> np.float16:
    lo, hi = _neighbours16(x)
    if float(lo) == x:
        return lo
    if mode in ("none", "rint"):
        return np.float16(x)
    if mode == "floor":
        return lo
    if mode == "ceil":
        return hi
    if mode == "trunc":
        return lo if x > 0 else hi
    if mode == "round":
        dl, dh = x - float(lo), float(hi) - x
        if dl == dh:
            return hi if x > 0 else lo
        return lo if dl < dh else hi
    assert mode == "odd"
    return lo if int(lo.view(np.uint16)) & 1 else hi


ROUND_MODES = ("none", "rint", "floor", "ceil", "round", "trunc", "odd")


def _cast_inputs() -> np.ndarray:
    one_ulp = 2.0**-10
    ties = [
        1 + one_ulp / 2,
        1 + 3 * one_ulp / 2,
        -(1 + one_ulp / 2),
        -(1 + 3 * one_ulp / 2),
        2049.0,
        2051.0,
        -2049.0,
        0.5 * 2.0**-24,
        -(0.5 * 2.0**-24),
        1.5 * 2.0**-24,
    ]
    values = np.concatenate(
        [
            np.array(ties),
            RNG.normal(0, 100, 200),
            RNG.normal(0, 1e-5, 100),
            [0.0, 1.0, -3.0, 65504.0],
        ]
    )
    return values.astype(F32)


@pytest.mark.parametrize("mode", ROUND_MODES)
def test_vcast_f32_to_f16(mode: str) -> None:
    x = _cast_inputs()
    n = x.size
    size = (n + 15) // 16 * 16
    src = f"""func.func @k(%d: {ub(size, "f16")}, %s: {ub(size, "f32")}, %n: index) {{
      asc.vcast "{mode}" %d, %s, %n : {ub(size, "f16")}, {ub(size, "f32")}
      func.return
    }}"""
    s = np.zeros(size, F32)
    s[:n] = x
    d = poisoned(size, F16)
    call(src, d, s, n)
    want = np.array([_ref_cast16(float(v), mode) for v in x], F16)
    np.testing.assert_array_equal(d[:n].view(np.uint16), want.view(np.uint16))
    assert np.isnan(d[n:]).all()


def test_vcast_overflow_and_specials() -> None:
    x = np.array([7e4, -7e4, np.inf, -np.inf, np.nan], F32)
    assert convert(x, np.dtype(F16), "rint")[0] == np.inf
    assert convert(x, np.dtype(F16), "trunc")[0] == 65504
    assert convert(x, np.dtype(F16), "floor")[1] == -np.inf
    assert convert(x, np.dtype(F16), "ceil")[1] == -65504
    for mode in ROUND_MODES:
        r = convert(x, np.dtype(F16), mode)
        assert r[2] == np.inf and r[3] == -np.inf and np.isnan(r[4])


@pytest.mark.parametrize("mode", ROUND_MODES)
def test_vcast_f16_to_f32_exact(mode: str) -> None:
    src = f"""func.func @k(%d: {ub(48, "f32")}, %s: {ub(48, "f16")}, %n: index) {{
      asc.vcast "{mode}" %d, %s, %n : {ub(48, "f32")}, {ub(48, "f16")}
      func.return
    }}"""
    x = rand(48, F16, -1000, 1000)
    d = poisoned(48, F32)
    call(src, d, x, 33)
    np.testing.assert_array_equal(d[:33], x[:33].astype(F32))
    assert np.isnan(d[33:]).all()


def test_vcast_to_integral_and_int32() -> None:
    x = np.array([2.5, -2.5, 1.5, -0.5, 3.7, -3.7, 0.49999997, 7.0], F32)
    want = {
        "rint": [2, -2, 2, -0.0, 4, -4, 0, 7],
        "floor": [2, -3, 1, -1, 3, -4, 0, 7],
        "ceil": [3, -2, 2, -0.0, 4, -3, 1, 7],
        "trunc": [2, -2, 1, -0.0, 3, -3, 0, 7],
        "round": [3, -3, 2, -1, 4, -4, 0, 7],
    }
    for mode, w in want.items():
        np.testing.assert_array_equal(convert(x, np.dtype(F32), mode), np.array(w, F32))
        np.testing.assert_array_equal(convert(x, np.dtype(np.int32), mode), np.array(w, np.int32))
    src = f"""func.func @k(%d: {ub(8, "i32")}, %s: {ub(8, "f32")}, %n: index) {{
      asc.vcast "floor" %d, %s, %n : {ub(8, "i32")}, {ub(8, "f32")}
      func.return
    }}"""
    d = np.zeros(8, np.int32)
    call(src, d, x, 8)
    np.testing.assert_array_equal(d, np.floor(x).astype(np.int32))


# --------------------------------------------------------------------------- compare / select


PRED_REF = {
    "lt": np.less,
    "gt": np.greater,
    "eq": np.equal,
    "le": np.less_equal,
    "ge": np.greater_equal,
    "ne": np.not_equal,
}


@pytest.mark.parametrize("t", ["f16", "f32"])
@pytest.mark.parametrize("pred", sorted(PRED_REF))
def test_vcompare_vselect(pred: str, t: str) -> None:
    mask_t = ub(1024, "i1")  # 128 bytes
    src = f"""func.func @k(%d: {ub(N, t)}, %m: {mask_t}, %a: {ub(N, t)}, %b: {ub(N, t)},
                          %n: index) {{
      asc.vcompare "{pred}" %m, %a, %b, %n : {mask_t}, {ub(N, t)}, {ub(N, t)}
      asc.vselect %d, %m, %a, %b, %n : {ub(N, t)}, {mask_t}, {ub(N, t)}, {ub(N, t)}
      func.return
    }}"""
    it = interp(parse(src, CTX))
    for n in COUNTS:
        a = rand(N, NP[t]).round()  # small integers: plenty of equal pairs
        b = rand(N, NP[t]).round()
        m = np.full(128, 0xFF, np.uint8)
        d = poisoned(N, NP[t])
        it.call_op("k", (d, m, a, b, n))
        bits = np.unpackbits(m, bitorder="little").astype(bool)
        want_bits = PRED_REF[pred](a[:n], b[:n])
        np.testing.assert_array_equal(bits[:n], want_bits)
        assert bits[n:].all(), "mask bits past count must be kept"
        np.testing.assert_array_equal(d[:n], np.where(want_bits, a[:n], b[:n]))
        assert np.isnan(d[n:]).all()


def test_mask_alloc_is_packed_bytes() -> None:
    src = f"""func.func @k() -> {ub(256, "i1")} {{
      %m = asc.alloc "tmp" {{buffers = 1 : i64}} : {ub(256, "i1")}
      func.return %m : {ub(256, "i1")}
    }}"""
    (m,) = call(src)
    assert m.dtype == np.uint8 and m.size == 32


# --------------------------------------------------------------------------- reduce / broadcast


def _tile(rows: int, m: int, length: int, ls: int, dtype) -> np.ndarray:
    """A [rows, m, ls] tile: valid lanes random, padding lanes NaN."""
    x = np.full((rows, m, ls), np.nan, dtype)
    x[..., :length] = rand(rows * m * length, dtype).reshape(rows, m, length)
    return x


REDUCE_REF = {"sum": np.sum, "max": np.max, "min": np.min}


@pytest.mark.parametrize("t", ["f16", "f32"])
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("length,ls", [(7, 16), (33, 48), (513, 528)])
def test_vreduce_last(kind: str, t: str, length: int, ls: int) -> None:
    rows, m = 3, 2
    size = rows * m * ls
    dsize = rows * m * 16
    src = f"""func.func @k(%d: {ub(dsize, t)}, %s: {ub(size, t)}, %w: {ub(size, t)},
                          %r: index, %m: index, %l: index, %ls: index) {{
      asc.vreduce "{kind}" "last" %d, %s, %w rows %r m %m len %l ls %ls
          : {ub(dsize, t)}, {ub(size, t)}, {ub(size, t)}
      func.return
    }}"""
    x = _tile(rows, m, length, ls, NP[t])
    d = poisoned(dsize, NP[t])
    call(src, d, x.reshape(-1), poisoned(size, NP[t]), rows, m, length, ls)
    res = d.reshape(rows * m, 16)
    want = REDUCE_REF[kind](x[..., :length].astype(np.float64), axis=-1).reshape(-1)
    assert_near(res[:, 0], want)
    assert np.isnan(res[:, 1:]).all(), "only every 16th element is written"


@pytest.mark.parametrize("t", ["f16", "f32"])
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_vreduce_mid(kind: str, t: str) -> None:
    rows, m, length, ls = 3, 5, 33, 48
    size = rows * m * ls
    src = f"""func.func @k(%d: {ub(size, t)}, %s: {ub(size, t)}, %w: {ub(size, t)},
                          %r: index, %m: index, %l: index, %ls: index) {{
      asc.vreduce "{kind}" "mid" %d, %s, %w rows %r m %m len %l ls %ls
          : {ub(size, t)}, {ub(size, t)}, {ub(size, t)}
      func.return
    }}"""
    x = _tile(rows, m, length, ls, NP[t])
    d = poisoned(size, NP[t])
    call(src, d, x.reshape(-1), poisoned(size, NP[t]), rows, m, length, ls)
    got = d[: rows * ls].reshape(rows, ls)
    want = REDUCE_REF[kind](x.astype(np.float64), axis=1)
    assert_near(got[:, :length], want[:, :length])
    assert np.isnan(d[rows * ls :]).all()


def test_vreduce_in_place_and_bad_sizes() -> None:
    t = ub(64, "f32")
    src = f"""func.func @k(%d: {t}, %r: index, %m: index, %l: index, %ls: index) {{
      asc.vreduce "sum" "last" %d, %d, %d rows %r m %m len %l ls %ls : {t}, {t}, {t}
      func.return
    }}"""
    x = rand(64, F32)
    d = x.copy()
    call(src, d, 2, 1, 20, 32)
    assert_near(d[[0, 16]], x.reshape(2, 32)[:, :20].astype(np.float64).sum(axis=1))
    with pytest.raises(TileInterpretationError, match=r"asc.vreduce: .*len 40 ls 32"):
        call(src, d, 2, 1, 40, 32)
    with pytest.raises(TileInterpretationError, match="exceeds its buffer of 64"):
        call(src, d, 3, 1, 20, 32)


@pytest.mark.parametrize("has", [(r, m, c) for r in (0, 1) for m in (0, 1) for c in (0, 1)])
def test_vbroadcast(has: tuple[int, int, int]) -> None:
    rows, m, ls = 3, 4, 48
    shape = (rows if has[0] else 1, m if has[1] else 1, ls if has[2] else 16)
    ssize = max(16, int(np.prod(shape)))
    dsize = rows * m * ls + 16
    flags = ", ".join(
        f"{k} = {'true' if v else 'false'}"
        for k, v in zip(("src_rows", "src_m", "src_l"), has, strict=True)
    )
    src = f"""func.func @k(%d: {ub(dsize, "f16")}, %s: {ub(ssize, "f16")}, %r: index,
                          %m: index, %ls: index) {{
      asc.vbroadcast %d, %s rows %r m %m ls %ls {{{flags}}} : {ub(dsize, "f16")},
          {ub(ssize, "f16")}
      func.return
    }}"""
    s = rand(ssize, F16)
    d = poisoned(dsize, F16)
    call(src, d, s, rows, m, ls)
    view = s[: int(np.prod(shape))].reshape(shape)
    if not has[2]:
        view = view[..., :1]
    want = np.broadcast_to(view, (rows, m, ls))
    np.testing.assert_array_equal(d[: rows * m * ls].reshape(rows, m, ls), want)
    assert np.isnan(d[rows * m * ls :]).all()


# --------------------------------------------------------------------------- memory


def test_alloc_fresh_is_poisoned_and_distinct() -> None:
    src = f"""func.func @k() -> ({ub(32, "f16")}, {ub(32, "f16")}) {{
      %a = asc.alloc "tmp" {{buffers = 1 : i64}} : {ub(32, "f16")}
      %b = asc.alloc "tmp" {{buffers = 1 : i64}} : {ub(32, "f16")}
      func.return %a, %b : {ub(32, "f16")}, {ub(32, "f16")}
    }}"""
    a, b = call(src)
    assert a.dtype == F16 and a.size == 32 and np.isnan(a).all()
    assert not np.shares_memory(a, b)


def test_alloc_offsets_view_ub_and_rotate() -> None:
    t = ub(16, "f32")  # 64 bytes
    src = f"""func.func @k() -> ({t}, {t}, {t}, {t}) {{
      %a0 = asc.alloc "in" {{buffers = 2 : i64, offset = 64 : i64}} : {t}
      %c = asc.alloc "tmp" {{buffers = 1 : i64, offset = 0 : i64}} : {t}
      func.return %a0, %c, %a0, %c : {t}, {t}, {t}, {t}
    }}"""
    it = interp(parse(src, CTX))
    state = set_block(it, 0, 1)
    a, c, _, _ = it.call_op("k", ())
    a2, c2, _, _ = it.call_op("k", ())
    a3, _, _, _ = it.call_op("k", ())
    ub_base = state.ub.ctypes.data
    assert a.ctypes.data - ub_base == 64
    assert a2.ctypes.data - ub_base == 128, "second run takes the second buffer"
    assert a3.ctypes.data - ub_base == 64, "third run rotates back"
    assert c.ctypes.data == c2.ctypes.data == ub_base
    assert np.isnan(a).all()  # UB starts poisoned
    a[:] = 1.0
    assert (state.ub[64:128].view(F32) == 1.0).all()


def test_alloc_past_end_of_ub_raises() -> None:
    t = ub(16, "f32")
    src = f"""func.func @k() -> {t} {{
      %a = asc.alloc "in" {{buffers = 2 : i64, offset = 196544 : i64}} : {t}
      func.return %a : {t}
    }}"""
    it = interp(parse(src, CTX))
    set_block(it, 0, 1)
    it.call_op("k", ())  # buffer 0 fits exactly
    with pytest.raises(
        TileInterpretationError, match=r"asc.alloc: buffer 1 of 2 \(64 bytes at UB offset 196608\)"
    ):
        it.call_op("k", ())


def test_double_buffer_rotation_in_loop() -> None:
    """Tiles 0..3 pass through a 2-buffer alloc; a second alloc viewing both buffers sees the
    last two tiles in their rotation slots."""
    t, g = ub(16, "f32"), gm(64, "f32")
    both, out = ub(32, "f32"), gm(32, "f32")
    src = f"""func.func @k(%x: {g}, %y: {out}) {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      scf.for %i = %c0 to %c4 step %c1 {{
        %a = asc.alloc "in" {{buffers = 2 : i64, offset = 0 : i64}} : {t}
        %o = arith.muli %i, %c16 : index
        asc.copy_in %x[%o] -> %a[%c0] blocks %c1 x %c16 gap %c0 stride %c16 : {g}, {t}
      }}
      %v = asc.alloc "tmp" {{buffers = 1 : i64, offset = 0 : i64}} : {both}
      asc.copy_out %v[%c0] -> %y[%c0] blocks %c1 x %c32 gap %c0 stride %c32 : {both}, {out}
      func.return
    }}"""
    x = rand(64, F32)
    y = np.zeros(32, F32)
    call(src, x, y)
    np.testing.assert_array_equal(y, x[32:])


def test_wrongly_shared_ub_shows_up() -> None:
    """Two live buffers at the same offset: the interpreter's result differs from numpy, which
    is what translation validation of asc-buffer-alloc relies on."""
    t, g = ub(16, "f32"), gm(16, "f32")

    def kernel(off_b: int) -> str:
        return f"""func.func @k(%x: {g}, %z: {g}, %y: {g}) {{
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c16 = arith.constant 16 : index
          %a = asc.alloc "in" {{buffers = 1 : i64, offset = 0 : i64}} : {t}
          %b = asc.alloc "in" {{buffers = 1 : i64, offset = {off_b} : i64}} : {t}
          asc.copy_in %x[%c0] -> %a[%c0] blocks %c1 x %c16 gap %c0 stride %c16 : {g}, {t}
          asc.copy_in %z[%c0] -> %b[%c0] blocks %c1 x %c16 gap %c0 stride %c16 : {g}, {t}
          asc.vbinary "sub" %a, %a, %b, %c16 : {t}, {t}, {t}
          asc.copy_out %a[%c0] -> %y[%c0] blocks %c1 x %c16 gap %c0 stride %c16 : {t}, {g}
          func.return
        }}"""

    x, z = rand(16, F32), rand(16, F32)
    y = np.zeros(16, F32)
    call(kernel(64), x, z, y)
    np.testing.assert_array_equal(y, x - z)
    call(kernel(0), x, z, y)
    assert (y == 0).all() and not np.array_equal(y, x - z)


def test_copy_strided_both_ways() -> None:
    """GM [3, 20] -> columns 2..8 (7 elements) of each row into UB rows 16 apart, then back out
    into a GM [3, 10] at column 1."""
    g_in, g_out, t = gm(60, "f16"), gm(30, "f16"), ub(48, "f16")
    src = f"""func.func @k(%x: {g_in}, %y: {g_out}) {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c7 = arith.constant 7 : index
      %c13 = arith.constant 13 : index
      %c16 = arith.constant 16 : index
      %a = asc.alloc "in" {{buffers = 1 : i64, offset = 0 : i64}} : {t}
      asc.copy_in %x[%c2] -> %a[%c0] blocks %c3 x %c7 gap %c13 stride %c16 : {g_in}, {t}
      asc.copy_out %a[%c0] -> %y[%c1] blocks %c3 x %c7 gap %c3 stride %c16 : {t}, {g_out}
      func.return
    }}"""
    x = rand(60, F16)
    y = np.zeros(30, F16)
    it = interp(parse(src, CTX))
    state = set_block(it, 0, 1)
    it.call_op("k", (x, y))
    tile = state.ub[:96].view(F16).reshape(3, 16)
    np.testing.assert_array_equal(tile[:, :7], x.reshape(3, 20)[:, 2:9])
    assert np.isnan(tile[:, 7:]).all(), "copy_in writes only length elements per block"
    want = np.zeros((3, 10), F16)
    want[:, 1:8] = x.reshape(3, 20)[:, 2:9]
    np.testing.assert_array_equal(y.reshape(3, 10), want)


@pytest.mark.parametrize(
    "case,pattern",
    [
        (
            "gm_in",
            r"asc.copy_in: GM access out of bounds: 2 blocks x 16 elements from offset 40, "
            r"block stride 16 \(last element 71\) in a buffer of 64 elements",
        ),
        (
            "ub_in",
            r"asc.copy_in: UB access out of bounds: 2 blocks x 16 elements from offset 0, "
            r"block stride 32 \(last element 47\) in a buffer of 32 elements",
        ),
        ("gm_out", r"loc.py:3:4: asc.copy_out: GM access out of bounds: .* buffer of 64"),
    ],
)
def test_copy_out_of_bounds_raises(case: str, pattern: str) -> None:
    g, t = gm(64, "f32"), ub(32, "f32")
    gm_off, stride = {"gm_in": (40, 16), "ub_in": (0, 32), "gm_out": (56, 16)}[case]
    copy = (
        f"asc.copy_in %x[%o] -> %a[%c0] blocks %c2 x %c16 gap %c0 stride %s : {g}, {t}"
        if case != "gm_out"
        else f"asc.copy_out %a[%c0] -> %x[%o] blocks %c2 x %c16 gap %c0 stride %s "
        f'{{"asc.loc" = "loc.py:3:4"}} : {t}, {g}'
    )
    src = f"""func.func @k(%x: {g}) {{
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c16 = arith.constant 16 : index
      %o = arith.constant {gm_off} : index
      %s = arith.constant {stride} : index
      %a = asc.alloc "in" {{buffers = 1 : i64, offset = 0 : i64}} : {t}
      {copy}
      func.return
    }}"""
    with pytest.raises(TileInterpretationError, match=pattern):
        call(src, np.zeros(64, F32))


def test_vector_count_past_buffer_raises() -> None:
    src = f"""func.func @k(%d: {ub(32, "f16")}, %n: index) {{
      asc.vdup %d, 1.0 : f64, %n : {ub(32, "f16")}
      func.return
    }}"""
    with pytest.raises(TileInterpretationError, match="asc.vdup: count 33 exceeds dst buffer"):
        call(src, poisoned(32, F16), 33)
    assert isinstance(TileInterpretationError("x"), InterpretationError)


# --------------------------------------------------------------------------- scalars, launch


def test_block_scalars_and_tiling() -> None:
    src = """func.func @k() -> (index, index, index) attributes {asc.tiling = {rows = 11 : i64,
        tile = 2 : i64}} {
      %b = asc.block_idx
      %n = asc.block_num
      %r = asc.tiling_field "rows"
      func.return %b, %n, %r : index, index, index
    }
    func.func @bad() -> index {
      %r = asc.tiling_field "cols"
      func.return %r : index
    }"""
    module = parse(src, CTX)
    it = interp(module)
    kernel = next(op for op in module.ops if op.sym_name.data == "k")
    assert tiling_values(kernel) == {"rows": 11, "tile": 2}
    set_block(it, 2, 5, tiling_values(kernel))
    got = it.call_op("k", ())
    assert [v.value.data for v in got] == [2, 5, 11]
    assert block_state(it).idx == 2
    with pytest.raises(TileInterpretationError, match=r"no tiling field 'cols'.*\['rows', 'tile'"):
        it.call_op("bad", ())


def _rows_kernel(rows: int, cols: int, t: str, block_dim: int, tile_rows: int) -> str:
    """y = exp(x) * 2 + 1 and m = row max of x for x [rows, cols]; block b handles rows
    [b*rpb, min((b+1)*rpb, rows)) in tiles of tile_rows rows (tail tile shorter)."""
    ls = (cols + 15) // 16 * 16
    rpb = -(-rows // block_dim)
    g, gm_m = gm(rows * cols, t), gm(rows, t)
    tu, tm = ub(tile_rows * ls, t), ub(tile_rows * 16, t)
    ts, tt = f"tensor<{rows}x{cols}x{t}>", f"tensor<{rows}x{t}>"
    return f"""
    func.func @kernel(%x: {g}, %y: {g}, %mx: {gm_m}) attributes {{asc.kernel,
        asc.tiling = {{rows = {rows} : i64, cols = {cols} : i64, rpb = {rpb} : i64,
                       tile = {tile_rows} : i64, ls = {ls} : i64}}}} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %rows = asc.tiling_field "rows"
      %cols = asc.tiling_field "cols"
      %rpb = asc.tiling_field "rpb"
      %tile = asc.tiling_field "tile"
      %ls = asc.tiling_field "ls"
      %b = asc.block_idx
      %start = arith.muli %b, %rpb : index
      %e0 = arith.addi %start, %rpb : index
      %lt = arith.cmpi slt, %e0, %rows : index
      %end = arith.select %lt, %e0, %rows : index
      scf.for %r = %start to %end step %tile {{
        %left = arith.subi %end, %r : index
        %short = arith.cmpi slt, %left, %tile : index
        %nr = arith.select %short, %left, %tile : index
        %gofs = arith.muli %r, %cols : index
        %n = arith.muli %nr, %ls : index
        %a = asc.alloc "in" {{buffers = 2 : i64, offset = 0 : i64}} : {tu}
        %o = asc.alloc "out" {{buffers = 2 : i64, offset = {2 * tile_rows * ls * 4} : i64}}
            : {tu}
        %m = asc.alloc "out" {{buffers = 2 : i64, offset = {4 * tile_rows * ls * 4} : i64}}
            : {tm}
        asc.copy_in %x[%gofs] -> %a[%c0] blocks %nr x %cols gap %c0 stride %ls : {g}, {tu}
        asc.vreduce "max" "last" %m, %a, %o rows %nr m %c1 len %cols ls %ls
            : {tm}, {tu}, {tu}
        asc.vunary "exp" %o, %a, %n : {tu}, {tu}
        asc.vscalar "muls" %o, %o, 2.0 : f64, %n : {tu}, {tu}
        asc.vscalar "adds" %o, %o, 1.0 : f64, %n : {tu}, {tu}
        asc.copy_out %o[%c0] -> %y[%gofs] blocks %nr x %cols gap %c0 stride %ls : {tu}, {g}
        %c16 = arith.constant 16 : index
        asc.copy_out %m[%c0] -> %mx[%r] blocks %nr x %c1 gap %c0 stride %c16 : {tm}, {gm_m}
      }}
      func.return
    }}
    func.func @main(%x: {ts}) -> ({ts}, {tt}) {{
      %y, %m = asc.launch @kernel<{block_dim} : i64> (%x) : ({ts}) -> ({ts}, {tt})
      func.return %y, %m : {ts}, {tt}
    }}"""


@pytest.mark.parametrize("t", ["f16", "f32"])
def test_launch_three_blocks(t: str) -> None:
    rows, cols = 11, 33
    module = parse(_rows_kernel(rows, cols, t, 3, 2), CTX)
    x = rand(rows * cols, NP[t], -2, 2).reshape(rows, cols)
    y, m = interp(module).call_op("main", (x,))
    assert y.shape == (rows, cols) and m.shape == (rows,)
    with np.errstate(all="ignore"):
        want = np.exp(x.astype(np.float64)) * 2 + 1
    assert_near(y, want)
    np.testing.assert_array_equal(m, x.max(axis=1))


def test_launch_idle_block_and_inputs_untouched() -> None:
    rows, cols = 6, 16
    # 4 blocks of ceil(6/4)=2 rows: block 3 starts at row 6 and has nothing to do
    module = parse(_rows_kernel(rows, cols, "f32", 4, 2), CTX)
    x = rand(rows * cols, F32).reshape(rows, cols)
    x0 = x.copy()
    y, m = interp(module).call_op("main", (x,))
    np.testing.assert_array_equal(x, x0)
    assert_near(y, np.exp(x.astype(np.float64)) * 2 + 1)
    np.testing.assert_array_equal(m, x.max(axis=1))


def test_launch_rejects_wrong_input_dtype() -> None:
    module = parse(_rows_kernel(4, 16, "f16", 2, 2), CTX)
    with pytest.raises(TileInterpretationError, match="input 0 is float32"):
        interp(module).call_op("main", (np.zeros((4, 16), F32),))


def test_launch_big_tensor_is_fast() -> None:
    """[64, 4096] fp16 over 8 blocks in 1-row tiles (64 tiles): the oracle for big tensors."""
    rows, cols = 64, 4096
    module = parse(_rows_kernel(rows, cols, "f16", 8, 1), CTX)
    x = rand(rows * cols, F16, -2, 2).reshape(rows, cols)
    it = interp(module)
    t0 = time.perf_counter()
    y, m = it.call_op("main", (x,))
    elapsed = time.perf_counter() - t0
    assert_near(y, np.exp(x.astype(np.float64)) * 2 + 1)
    np.testing.assert_array_equal(m, x.max(axis=1))
    assert elapsed < 2.0, f"interpretation took {elapsed:.2f} s"


def _per_block_kernel(attrs: str, offset: int) -> str:
    """Block b copies x[b*16 : b*16+16] through a 2-buffer alloc, then writes UB bytes
    [offset, offset + 128) (both rotation slots) to y[b]."""
    t, v = ub(16, "f32"), ub(32, "f32")
    g_in, g_out = gm(48, "f32"), gm(96, "f32")
    return f"""
    func.func @kernel(%x: {g_in}, %y: {g_out}) attributes {{{attrs}}} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %b = asc.block_idx
      %nb = asc.block_num
      %xo = arith.muli %b, %c16 : index
      %yo = arith.muli %b, %c32 : index
      %a = asc.alloc "in" {{buffers = 2 : i64, offset = {offset} : i64}} : {t}
      asc.copy_in %x[%xo] -> %a[%c0] blocks %c1 x %c16 gap %c0 stride %c16 : {g_in}, {t}
      %w = asc.alloc "tmp" {{buffers = 1 : i64, offset = {offset} : i64}} : {v}
      asc.copy_out %w[%c0] -> %y[%yo] blocks %c1 x %c32 gap %c0 stride %c32 : {v}, {g_out}
      func.return
    }}
    func.func @main(%x: tensor<3x16xf32>) -> tensor<3x32xf32> {{
      %y = asc.launch @kernel<3 : i64> (%x) : (tensor<3x16xf32>) -> tensor<3x32xf32>
      func.return %y : tensor<3x32xf32>
    }}"""


def test_launch_gives_each_block_a_fresh_ub_and_counters() -> None:
    x = rand(48, F32).reshape(3, 16)
    (y,) = interp(parse(_per_block_kernel("asc.kernel", 0), CTX)).call_op("main", (x,))
    np.testing.assert_array_equal(y[:, :16], x)
    assert np.isnan(y[:, 16:]).all(), "slot 1 is never written: rotation restarts per block"


def test_launch_ub_size_from_platform_or_option() -> None:
    offset = 229376  # past 192 KiB, inside the 310P3's 256 KiB
    x = rand(48, F32).reshape(3, 16)
    with pytest.raises(TileInterpretationError, match=r"past the end of UB \(196608 bytes\)"):
        interp(parse(_per_block_kernel("asc.kernel", offset), CTX)).call_op("main", (x,))
    (y,) = interp(
        parse(_per_block_kernel('asc.kernel, asc.platform = "310P3"', offset), CTX)
    ).call_op("main", (x,))
    np.testing.assert_array_equal(y[:, :16], x)
    it = Interpreter(parse(_per_block_kernel("asc.kernel", offset), CTX))
    for f in (
        FuncFunctions(),
        ArithFunctions(),
        ScfFunctions(),
        BuiltinFunctions(),
        AscTileFunctions(ub_bytes=1 << 20),
    ):
        it.register_implementations(f)
    (y,) = it.call_op("main", (x,))
    np.testing.assert_array_equal(y[:, :16], x)


def test_masks_through_gm_copy_select_cast() -> None:
    """i1 tensors are packed bits in GM and UB alike; copies, vcopy and vcast work in bits."""
    gx, gc, gf = gm(60, "f32"), gm(60, "i1"), gm(60, "f16")
    t, mt, ht = ub(128, "f32"), ub(256, "i1"), ub(128, "f16")
    src = f"""
    func.func @kernel(%x: {gx}, %c: {gc}, %y: {gx}, %g: {gc}, %f: {gf}) attributes
        {{asc.kernel}} {{
      %c0 = arith.constant 0 : index
      %c3 = arith.constant 3 : index
      %c20 = arith.constant 20 : index
      %c32 = arith.constant 32 : index
      %c96 = arith.constant 96 : index
      %xa = asc.alloc "in" {{buffers = 1 : i64, offset = 0 : i64}} : {t}
      asc.copy_in %x[%c0] -> %xa[%c0] blocks %c3 x %c20 gap %c0 stride %c32 : {gx}, {t}
      %ca = asc.alloc "in" {{buffers = 1 : i64, offset = 512 : i64}} : {mt}
      asc.copy_in %c[%c0] -> %ca[%c0] blocks %c3 x %c20 gap %c0 stride %c32 : {gc}, {mt}
      %z = asc.alloc "tmp" {{buffers = 1 : i64, offset = 1024 : i64}} : {t}
      asc.vdup %z, 0.0 : f64, %c96 : {t}
      %ya = asc.alloc "out" {{buffers = 1 : i64, offset = 1536 : i64}} : {t}
      asc.vselect %ya, %ca, %xa, %z, %c96 : {t}, {mt}, {t}, {t}
      asc.copy_out %ya[%c0] -> %y[%c0] blocks %c3 x %c20 gap %c0 stride %c32 : {t}, {gx}
      %ga = asc.alloc "tmp" {{buffers = 1 : i64, offset = 2048 : i64}} : {mt}
      asc.vcompare "gt" %ga, %xa, %z, %c96 : {mt}, {t}, {t}
      %gb = asc.alloc "out" {{buffers = 1 : i64, offset = 2560 : i64}} : {mt}
      asc.vcopy %gb, %ga, %c96 : {mt}, {mt}
      asc.copy_out %gb[%c0] -> %g[%c0] blocks %c3 x %c20 gap %c0 stride %c32 : {mt}, {gc}
      %fa = asc.alloc "out" {{buffers = 1 : i64, offset = 3072 : i64}} : {ht}
      asc.vcast "none" %fa, %gb, %c96 : {ht}, {mt}
      asc.copy_out %fa[%c0] -> %f[%c0] blocks %c3 x %c20 gap %c0 stride %c32 : {ht}, {gf}
      func.return
    }}
    func.func @main(%x: tensor<3x20xf32>, %c: tensor<3x20xi1>)
        -> (tensor<3x20xf32>, tensor<3x20xi1>, tensor<3x20xf16>) {{
      %y, %g, %f = asc.launch @kernel<1 : i64> (%x, %c) : (tensor<3x20xf32>, tensor<3x20xi1>)
          -> (tensor<3x20xf32>, tensor<3x20xi1>, tensor<3x20xf16>)
      func.return %y, %g, %f : tensor<3x20xf32>, tensor<3x20xi1>, tensor<3x20xf16>
    }}"""
    x = rand(60, F32).reshape(3, 20)
    c = RNG.random((3, 20)) < 0.5
    y, g, f = interp(parse(src, CTX)).call_op("main", (x, c))
    np.testing.assert_array_equal(y, np.where(c, x, 0))
    assert g.dtype == np.bool_ and g.shape == (3, 20)
    np.testing.assert_array_equal(g, x > 0)
    np.testing.assert_array_equal(f, (x > 0).astype(F16))


def test_mask_vdup_vbroadcast_and_cast_to_mask() -> None:
    mt, t = ub(256, "i1"), ub(64, "f32")
    src = f"""func.func @k(%a: {mt}, %b: {mt}, %m: {mt}, %x: {t}, %n: index, %r: index,
                          %mm: index, %ls: index) {{
      asc.vdup %a, 1.0 : f64, %n : {mt}
      asc.vbroadcast %b, %a rows %r m %mm ls %ls {{src_rows = true, src_m = false,
          src_l = false}} : {mt}, {mt}
      asc.vcast "none" %m, %x, %n : {mt}, {t}
      func.return
    }}"""
    a = np.zeros(32, np.uint8)
    a[0] = 0b1000_0000
    b = np.zeros(32, np.uint8)
    m = np.full(32, 0xFF, np.uint8)
    x = np.array([0, 1, -2, 0, 0.5] * 12 + [0] * 4, F32)
    call(src, a, b, m, x, 5, 2, 3, 32)
    abits = np.unpackbits(a, bitorder="little").astype(bool)
    assert abits[:5].all() and not abits[5:7].any() and abits[7] and not abits[8:].any()
    # b: rows 2 x m 3 x 32 lanes from a [2, 1, 16]: row 0 takes a[0] (1), row 1 a[16] (0)
    bbits = np.unpackbits(b, bitorder="little").astype(bool)[:192].reshape(2, 3, 32)
    assert bbits[0].all() and not bbits[1].any()
    mbits = np.unpackbits(m, bitorder="little").astype(bool)
    np.testing.assert_array_equal(mbits[:5], x[:5] != 0)
    assert mbits[5:].all()
