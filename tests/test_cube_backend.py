"""``asc.mmad`` through the back end: tile interpreter, ``convert-asc-to-ascendc`` + the ascendc
interpreter, and the CPU build of the emitted Ascend C (high-level ``Matmul`` API), against a
float64 numpy reference, on hand-written tile-level kernels.

Kernel shape (``mmad_kernel``): the ``[M, N]`` output is cut into ``tile_m x tile_n`` blocks,
spread over ``block_dim`` cores round robin; each block is one ``asc.mmad`` into a UB buffer
(``ls = round_up(tile_n, 16)``), optionally scaled by 2 (a vector epilogue), then copied out.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.parser import Parser

from pyasc_mlir import checks
from pyasc_mlir import cube_tiling as ct
from pyasc_mlir.dialects import asc
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.emit_host import emit_cpu_entry
from pyasc_mlir.emitter import emit_kernel_source, kernels, tiling_fields
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.interpreter.ascendc_impls import AscendcInterpretationError
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.interpreter.tile_impls import TileInterpretationError
from pyasc_mlir.passes.registry import PASSES
from pyasc_mlir.pipeline import make_context
from pyasc_mlir.platform import COST_910B2, get_platform
from pyasc_mlir.runtime.cpu import CpuKernel, KernelError, build_library

BACKEND = ("asc-double-buffer", "asc-buffer-alloc", "convert-asc-to-ascendc")
RNG = np.random.default_rng(7)


def mmad_kernel(
    M: int,
    N: int,
    K: int,
    dt: str = "f16",
    ta: bool = False,
    tb: bool = False,
    tile_m: int | None = None,
    tile_n: int | None = None,
    role: str = "tmp",
    blocks: int = 2,
    epilogue: bool = False,
    platform: str = "910B2",
    bounds: bool = True,
    shift: bool = False,
) -> str:
    """MLIR text of ``@mm(a, b) -> a @ b`` (f32) over one tile-level kernel ``@mm_kernel``.
    ``bounds`` sets ``max_m/max_n/max_k`` on the op (else they are derived);
    ``shift`` copies out from UB row 1 on, so the last row read was never written (a bug)."""
    tile_m = tile_m or min(M, 64)
    tile_n = tile_n or min(N, 128)
    ls = -(-tile_n // 16) * 16
    mt, nt = -(-M // tile_m), -(-N // tile_n)
    units = mt * nt
    bd = min(blocks, units)
    lda, ldb = (M if ta else K), (K if tb else N)
    a_shape, b_shape = (f"{K}x{M}" if ta else f"{M}x{K}"), (f"{N}x{K}" if tb else f"{K}x{N}")
    ub = f"memref<{tile_m * ls}xf32, #asc.scope<ub>>"
    gma, gmb = f"memref<{M * K}x{dt}, #asc.scope<gm>>", f"memref<{K * N}x{dt}, #asc.scope<gm>>"
    gmc = f"memref<{M * N}xf32, #asc.scope<gm>>"
    props = f"max_m = {tile_m} : i64, max_n = {tile_n} : i64, max_k = {K} : i64, " if bounds else ""
    props += f"transpose_a = {str(ta).lower()}, transpose_b = {str(tb).lower()}"
    res = "%o" if role == "in" else "%d"  # a VECIN block is consumed, never copied out
    epi = (
        (
            "      %cnt = arith.muli %mrows, %ls : index\n"
            + (f'      %o = asc.alloc "out" {{buffers = 1 : i64}} : {ub}\n' if res == "%o" else "")
            + f'      asc.vscalar "muls" {res}, %d, 2.0, %cnt : {ub}, {ub}\n'
        )
        if epilogue
        else ""
    )
    tensors = f"tensor<{a_shape}x{dt}>, tensor<{b_shape}x{dt}>"
    a_off, b_off = ("%r0" if ta else "%r0K"), ("%c0K" if tb else "%c0")
    return f"""
func.func @mm(%a: tensor<{a_shape}x{dt}>, %b: tensor<{b_shape}x{dt}>) -> tensor<{M}x{N}xf32> {{
  %0 = asc.launch @mm_kernel<{bd} : i64> (%a, %b) : ({tensors}) -> tensor<{M}x{N}xf32>
  func.return %0 : tensor<{M}x{N}xf32>
}}
func.func @mm_kernel(%ga: {gma}, %gb: {gmb}, %gc: {gmc}) attributes {{asc.kernel,
    asc.loc = "mm.py:3:5", asc.platform = "{platform}",
    asc.tiling = {{units = {units} : i64, block_dim = {bd} : i64}}}} {{
  %bid = asc.block_idx
  %units = asc.tiling_field "units"
  %nb = asc.tiling_field "block_dim"
  %TM = arith.constant {tile_m} : index
  %TN = arith.constant {tile_n} : index
  %NT = arith.constant {nt} : index
  %M = arith.constant {M} : index
  %N = arith.constant {N} : index
  %K = arith.constant {K} : index
  %lda = arith.constant {lda} : index
  %ldb = arith.constant {ldb} : index
  %ls = arith.constant {ls} : index
  %z = arith.constant 0 : index
  scf.for %u = %bid to %units step %nb {{
      %mi = arith.divsi %u, %NT : index
      %ni = arith.remsi %u, %NT : index
      %r0 = arith.muli %mi, %TM : index
      %c0 = arith.muli %ni, %TN : index
      %r0K = arith.muli %r0, %lda : index
      %c0K = arith.muli %c0, %ldb : index
      %mleft = arith.subi %M, %r0 : index
      %nleft = arith.subi %N, %c0 : index
      %mlt = arith.cmpi slt, %mleft, %TM : index
      %mrows = arith.select %mlt, %mleft, %TM : index
      %nlt = arith.cmpi slt, %nleft, %TN : index
      %ncols = arith.select %nlt, %nleft, %TN : index
      %d = asc.alloc "{role}" {{buffers = 1 : i64}} : {ub}
      asc.mmad %d, %ga[{a_off}], %gb[{b_off}] m %mrows n %ncols k %K lda %lda ldb %ldb ls %ls
          {{{props}}} : {ub}, {gma}, {gmb}
{epi}      %r0N = arith.muli %r0, %N : index
      %coff = arith.addi %r0N, %c0 : index
      %gap = arith.subi %N, %ncols : index
      asc.copy_out {res}[{"%ls" if shift else "%z"}] -> %gc[%coff] blocks %mrows x %ncols
          gap %gap stride %ls : {ub}, {gmc}
  }}
  func.return
}}
"""


def parse(src: str):
    module = Parser(make_context(), src).parse_module()
    module.verify()
    return module


def lower(module):
    ctx = make_context()
    for name in BACKEND:
        PASSES[name]()().apply(ctx, module)
    module.verify()
    return module


def operands(M, N, K, dt, ta, tb):
    np_dt = np.float16 if dt == "f16" else np.float32
    a = RNG.uniform(-2, 2, (K, M) if ta else (M, K)).astype(np_dt)
    b = RNG.uniform(-2, 2, (N, K) if tb else (K, N)).astype(np_dt)
    ref = (a.astype(np.float64).T if ta else a.astype(np.float64)) @ (
        b.astype(np.float64).T if tb else b.astype(np.float64)
    )
    return a, b, ref


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cube_cpu")


def run_cpu(module, a, b, M, N, cache, memcheck=False):
    src = {"kernel.cpp": emit_kernel_source(module), "cpu_entry.cpp": emit_cpu_entry(module)}
    (k,) = kernels(module)
    plat = get_platform(k.attributes["asc.platform"].data)
    lib = build_library(src, plat, cache_dir=cache, memcheck=memcheck)
    fields = tiling_fields(k)
    c = np.zeros((M, N), np.float32)
    CpuKernel(lib).run(
        fields["block_dim"],
        [a, b, c],
        np.array(list(fields.values()), np.int64).tobytes(),
        ct.launch_info(k)["workspace_bytes"],
    )  # the Matmul system workspace
    return c


def assert_matmul(got, ref, K):
    # f32 accumulation of exactly representable products: error grows with K (|x| <= 2)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=4e-7 * K * 4)


CASES = [  # M, N, K, dtype, transpose_a, transpose_b: every size of {1, 15, 17, 100, 513}
    (1, 1, 1, "f16", False, False),
    (15, 100, 17, "f32", True, False),
    (17, 513, 15, "f16", False, True),
    (100, 15, 513, "f32", True, True),
    (513, 17, 100, "f16", False, False),
    (513, 17, 100, "f32", True, True),
    (513, 17, 100, "f16", True, False),
    (513, 17, 100, "f32", False, True),
    (1, 17, 513, "f32", False, False),
    (15, 1, 100, "f16", True, True),
    (100, 100, 1, "f16", False, True),
    (17, 15, 15, "f32", True, False),
]


@pytest.mark.parametrize("M,N,K,dt,ta,tb", CASES)
def test_mmad_tile_ascendc_cpu_agree(M, N, K, dt, ta, tb, cache):
    a, b, ref = operands(M, N, K, dt, ta, tb)
    module = parse(mmad_kernel(M, N, K, dt, ta, tb))
    assert_matmul(run_function(module, "mm", [a, b])[0], ref, K)
    lower(module)
    assert_matmul(run_function(module, "mm", [a, b])[0], ref, K)
    assert_matmul(run_cpu(module, a, b, M, N, cache), ref, K)


@pytest.mark.parametrize("role", ["tmp", "out", "in"])
def test_mmad_destination_roles_and_epilogue(role, cache):
    """The destination may be scratch (TBuf), a VECOUT or a VECIN queue buffer (enqueued like
    a copy-in); a vector epilogue (x2) reads the block."""
    M, N, K = 40, 70, 33
    a, b, ref = operands(M, N, K, "f16", False, False)
    module = lower(parse(mmad_kernel(M, N, K, role=role, tile_m=16, tile_n=32, epilogue=True)))
    assert_matmul(run_function(module, "mm", [a, b])[0], 2 * ref, K)
    assert_matmul(run_cpu(module, a, b, M, N, cache), 2 * ref, K)


@pytest.mark.slow
def test_memory_check_defines_the_block_and_flags_reads_past_it(cache):
    M, N, K = 17, 20, 9
    a, b, ref = operands(M, N, K, "f32", False, False)
    good = parse(mmad_kernel(M, N, K, "f32", tile_m=16, tile_n=32))
    bad = parse(mmad_kernel(M, N, K, "f32", tile_m=32, tile_n=32, blocks=1, shift=True))
    with checks.enable_memory_check(True):
        assert_matmul(run_function(good, "mm", [a, b])[0], ref, K)
        lower(good)
        assert_matmul(run_function(good, "mm", [a, b])[0], ref, K)
        assert_matmul(run_cpu(good, a, b, M, N, cache, memcheck=True), ref, K)
        # rows 1..17 of a 17-row block: row 17 was never written
        with pytest.raises(TileInterpretationError, match="read of uninitialised UB"):
            run_function(bad, "mm", [a, b])
        lower(bad)
        with pytest.raises(AscendcInterpretationError, match="read of uninitialised UB"):
            run_function(bad, "mm", [a, b])
        with pytest.raises(KernelError, match="read of uninitialised UB"):
            run_cpu(bad, a, b, M, N, cache, memcheck=True)


def test_conversion_emits_one_registered_matmul_per_mmad_and_fills_tiling():
    module = lower(parse(mmad_kernel(513, 17, 100, "f16", True, False)))
    (k,) = [o for o in module.walk() if isinstance(o, func.FuncOp) and "asc.kernel" in o.attributes]
    ops = list(k.walk())
    kinds = [type(o) for o in ops]
    regist = kinds.index(ac.RegistMatmulOp)
    assert regist < min(i for i, t in enumerate(kinds) if t in (ac.InitQueueOp, ac.InitTBufOp))
    assert kinds.count(ac.MatmulObjectOp) == 1 and kinds.count(ac.MatmulEndOp) == 1
    fields = tiling_fields(k)
    assert fields["mm0_baseN"] == 32 and fields["mm0_baseM"] == 64
    assert fields["mm0_M"] == 513 and fields["mm0_Ka"] == 100  # A transposed: [K, M]
    assert fields["mm0_singleCoreM"] == 64 and fields["mm0_singleCoreK"] == 100
    text = emit_kernel_source(module)
    for needle in (
        '#include "lib/matmul_intf.h"',
        "Matmul<MatmulType<TPosition::GM, CubeFormat::ND, half, true>, "
        "MatmulType<TPosition::GM, CubeFormat::ND, half, false>,",
        "REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm",
        ".SetTail((int)",
        ".Iterate();",
        ".GetTensorC(t",
        ".End();",
    ):
        assert needle in text, needle


def test_buffer_alloc_reserves_base_m_rows():
    """17 rows need baseM = 32: GetTensorC's destination must hold baseM * baseN floats."""
    module = lower(parse(mmad_kernel(17, 32, 8, tile_m=17, tile_n=32)))
    (k,) = kernels(module)
    assert k.attributes["asc.calc_bytes"].value.data == 32 * 32 * 4


def test_derived_bounds_without_attributes(cache):
    M, N, K = 33, 20, 50
    a, b, ref = operands(M, N, K, "f32", False, True)
    module = lower(
        parse(mmad_kernel(M, N, K, "f32", False, True, tile_m=16, tile_n=32, bounds=False))
    )
    fields = tiling_fields(kernels(module)[0])
    # n <= the 32-column tile, capped by the data: B (transposed) has N = 20 rows
    assert (fields["mm0_singleCoreM"], fields["mm0_singleCoreN"]) == (16, 20)
    assert fields["mm0_N"] == 20
    assert fields["mm0_singleCoreK"] == K  # B transposed: K <= ldb
    assert_matmul(run_cpu(module, a, b, M, N, cache), ref, K)


def test_coupled_core_reserves_trans_length(cache):
    """310P (coupled cores): the Matmul library's transLength UB bytes come first."""
    M, N, K = 20, 40, 30
    a, b, ref = operands(M, N, K, "f16", False, False)
    module = lower(parse(mmad_kernel(M, N, K, platform="310P3", tile_m=16, tile_n=48)))
    (k,) = kernels(module)
    trans = tiling_fields(k)["mm0_transLength"]
    assert trans > 0 and k.attributes["asc.calc_base"].value.data == trans
    assert_matmul(run_function(module, "mm", [a, b])[0], ref, K)
    assert_matmul(run_cpu(module, a, b, M, N, cache), ref, K)


def test_more_than_four_matmul_objects_is_a_located_error():
    lines = mmad_kernel(16, 16, 16).splitlines()
    i = next(i for i, x in enumerate(lines) if "asc.mmad" in x)
    module = parse("\n".join(lines[:i] + lines[i : i + 2] * 5 + lines[i + 2 :]))
    with pytest.raises(PyAscCompileError, match="at most 4 Matmul objects"):
        lower(module)


def test_dynamic_ls_is_a_located_error():
    src = mmad_kernel(16, 16, 16).replace("ls %ls", "ls %mrows")
    with pytest.raises(PyAscCompileError, match="ls must be a positive constant"):
        lower(parse(src))


@pytest.mark.parametrize("dt,elem", [("f16", 2), ("f32", 4)])
def test_tiler_respects_documented_limits(dt, elem):
    for plat in (get_platform("910B2"), get_platform("310P3")):
        for m, n, k in ((128, 256, 4096), (1, 16, 1), (64, 96, 513), (16, 16, 65535)):
            blk = ct.StaticBlock(m, n, k, ct.round16(n), k, n, elem, False, False)
            t = ct.cube_tiling(blk, plat)
            assert not ct.tiling_violations(t, elem, False, False, plat)
            assert t["baseM"] >= m and t["baseN"] == ct.round16(n) and t["baseK"] >= 16
            assert t["dbL0A"] * t["baseM"] * t["baseK"] * elem <= plat.l0a_bytes


def test_tiler_rejects_a_block_larger_than_l0c():
    blk = ct.StaticBlock(256, 256, 64, 256, 64, 256, 2, False, False)
    with pytest.raises(PyAscCompileError, match="needs 262144 bytes of L0C"):
        ct.cube_tiling(blk, get_platform("910B2"))


def test_tile_interpreter_rejects_out_of_bounds_operands():
    src = (
        mmad_kernel(16, 16, 16)
        .replace("k %K", "k %lda")
        .replace("%lda = arith.constant 16", "%lda = arith.constant 17")
    )
    module = parse(src)
    a, b, _ = operands(16, 16, 16, "f16", False, False)
    with pytest.raises(TileInterpretationError, match="past the GM buffer"):
        run_function(module, "mm", [a, b])


def test_asc_mmad_verifier_still_rejects_mixed_dtypes():
    src = mmad_kernel(16, 16, 16).replace(
        "memref<256xf16, #asc.scope<gm>>, %gc", "memref<256xf32, #asc.scope<gm>>, %gc"
    )
    with pytest.raises(Exception, match="asc.mmad|type"):
        parse(src.replace("tensor<16x16xf16>) -> tensor", "tensor<16x16xf32>) -> tensor"))
    assert asc.MmadOp.name == "asc.mmad"


@pytest.mark.parametrize("dt,rate", [("f16", 1.0), ("f32", COST_910B2.cube_fp32_rate)])
def test_cost_model_charges_the_cube(dt, rate):
    """MODELED: one Iterate of a [16, 32] block over K costs ceil(16/16)*ceil(32/16)*ceil(K/16)
    fractals at 1 per cycle for fp16, at the calibrated fp32 rate for fp32 (+ issue), and its
    A/B/C bytes go through MTE2."""
    from pyasc_mlir.cost_model import CUBE_ISSUE_CYCLES, estimate

    K = 100
    module = lower(parse(mmad_kernel(16, 32, K, dt, tile_m=16, tile_n=32, blocks=1)))
    (e,) = estimate(module)
    plat = get_platform("910B2")
    cycles = 1 * 2 * -(-K // 16) / rate + CUBE_ISSUE_CYCLES
    assert e.pipe_us["M"] == pytest.approx(cycles / plat.clock_mhz)
    sz = 2 if dt == "f16" else 4
    c_bytes = 16 * 32 * 4
    # MTE2 reads A, B and the C block; MTE3 writes C to the workspace and to the output
    assert e.gm_bytes == (16 * K + K * 32) * sz + c_bytes + c_bytes + 16 * 32 * 4
