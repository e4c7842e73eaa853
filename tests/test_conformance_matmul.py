"""Conformance of the CPU runtime's Matmul API and MIX model with kernels written as the public
Matmul samples are (``tests/conformance/matmul_samples.cpp``), and the emitted Cube kernels
under the same strict model.

The sample kernels are built once (and once more with memory check) and compared with numpy:
C in GM from a MIX 1:2 kernel whose 2 x blockDim vector blocks split M (``IterateAll``,
``Iterate`` + ``GetTensorC`` at place and sequential), a Matmul + LeakyRelu epilogue through a
VECIN queue, the bias, M/N/K tails in {1, 15, 17, 100, 513}, fp16 in and fp32 out. Every
enforced limit has a refusal test: no system workspace (kernel side and host side), C into a
non-VECIN buffer, GM into VECCALC, an AIV-only kernel with a Matmul, block indices a kernel
type does not have, SetBias without isBias, the asynchronous form, unaligned at-place rows, and
the C-position pairs that do not compile.
"""

from __future__ import annotations

import ctypes
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cpu_run_helpers import shared_pch_cache
from helpers import tcube_fields
from xdsl.dialects.builtin import StringAttr

import pyasc_mlir as pa
from pyasc_mlir.platform import LIB_API_WORKSPACE_BYTES, get_platform, header_defines
from pyasc_mlir.runtime.cpu import (
    INCLUDE_DIR,
    CpuKernel,
    KernelError,
    KernelMemoryError,
    build_library,
)

PLATFORM = get_platform("910B2")
HERE = Path(__file__).resolve().parent / "conformance"
KERNELS = {"matmul_gm_kernel": 7, "matmul_leaky_kernel": 6, "matmul_refuse_kernel": 6}
ENTRY_CPP = "\n".join(
    ['#include "kernel_operator.h"']
    + [f'extern "C" void {k}({", ".join(["GM_ADDR"] * n)});' for k, n in KERNELS.items()]
    + [f"PYASC_CPU_ENTRY_NAMED({k})" for k in KERNELS]
    + ["PYASC_CPU_LAST_ERROR()", ""]
)
FIELDS = [
    "usedCoreNum",
    "M",
    "N",
    "Ka",
    "Kb",
    "singleCoreM",
    "singleCoreN",
    "singleCoreK",
    "baseM",
    "baseN",
    "baseK",
    "depthA1",
    "depthB1",
    "stepM",
    "stepN",
    "isBias",
    "transLength",
    "iterateOrder",
    "shareMode",
    "shareL1Size",
    "shareL0CSize",
    "shareUbSize",
    "batchM",
    "batchN",
    "singleBatchM",
    "singleBatchN",
    "stepKa",
    "stepKb",
    "depthAL1CacheUB",
    "depthBL1CacheUB",
    "dbL0A",
    "dbL0B",
    "dbL0C",
]  # header order
BM, BN, BK = 64, 64, 32
WS = LIB_API_WORKSPACE_BYTES
RNG = np.random.default_rng(99)
TAILS = [1, 15, 17, 100, 513]


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    cache = shared_pch_cache(tmp_path_factory.mktemp("pyasc_cache"))
    sources = {
        "matmul_samples.cpp": (HERE / "matmul_samples.cpp").read_text(),
        "zz_entry.cpp": ENTRY_CPP,
    }
    return {
        mc: build_library(sources, PLATFORM, cache_dir=cache, memcheck=mc) for mc in (False, True)
    }


def kernel(libs, name, memcheck=False):
    return CpuKernel(libs[memcheck], entry=f"pyasc_run_block_{name}")


def tiling(m, n, k, *, single_m=None, bias=False, mode=0, alpha=0.0, refuse=0, seq=0, order=0):
    """The sample's tiling struct: mode, bias, alpha, refuse, seq, then TCubeTiling."""
    v = dict.fromkeys(FIELDS, 0)
    v.update(tcube_fields(m, n, k, (BM, BN, BK), single_m, bias), iterateOrder=order)
    return struct.pack("<iifii", mode, int(bias), alpha, refuse, seq) + struct.pack(
        f"<{len(FIELDS)}i", *(v[f] for f in FIELDS)
    )


def operands(m, n, k):
    a = RNG.uniform(-1, 1, (m, k)).astype(np.float16)
    b = RNG.uniform(-1, 1, (k, n)).astype(np.float16)
    bias = RNG.uniform(-1, 1, n).astype(np.float32)
    return a, b, bias


def reference(a, b, bias=None):
    c = a.astype(np.float64) @ b.astype(np.float64)
    return c + bias if bias is not None else c


def close(got, ref, k):
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6 * k + 1e-6)


def blocks(rows, cols):
    """The [baseM, baseN] blocks of a [rows, cols] result in Iterate order (M first)."""
    mb, nb = -(-rows // BM), -(-cols // BN)
    return [(i % mb * BM, i // mb * BN) for i in range(mb * nb)]


# ------------------------------------------------------------------ C in GM, MIX 1:2

GM_SHAPES = [
    (m, n, k)
    for m, n, k in [
        (1, 1, 1),
        (15, 17, 100),
        (513, 15, 17),
        (100, 513, 15),
        (17, 100, 513),
        (513, 100, 100),
    ]
]


@pytest.mark.parametrize("mode", [0, 1, 2], ids=["IterateAll", "GetTensorC", "sequential"])
@pytest.mark.parametrize("m,n,k", GM_SHAPES)
def test_c_in_gm_split_over_the_vector_blocks_of_mix_1_2(libs, mode, m, n, k):
    block_dim, vec = 2, 4  # MIX_AIC_1_2: 2 x blockDim vector blocks
    a, b, bias = operands(m, n, k)
    per = -(-m // vec)
    seq = len(blocks(per, n)) * BM * BN
    c = np.full(vec * seq if mode == 2 else m * n, -7.0, np.float32)
    info = np.full(4 * vec, -1, np.int32)
    t = tiling(m, n, k, single_m=per, bias=mode != 1, mode=mode, seq=seq)
    kernel(libs, "matmul_gm_kernel").run(block_dim, [a, b, bias, c, info], t, WS)
    # every vector block ran: index, sub-block, GetBlockNum() = blockDim, ratio 2
    assert info.reshape(vec, 4).tolist() == [[i, i % 2, block_dim, 2] for i in range(vec)]
    ref = reference(a, b, bias if mode != 1 else None)
    if mode != 2:
        close(c.reshape(m, n), ref, k)
        return
    want = np.full(vec * seq, -7.0)
    for v in range(vec):  # block j of vector block v: [baseM, baseN] at v * seq + j * BM * BN
        rows = min(per, m - v * per)
        for j, (r0, c0) in enumerate(blocks(max(rows, 0), n)):
            h, w = min(BM, rows - r0), min(BN, n - c0)
            dst = want[v * seq + j * BM * BN :][: BM * BN].reshape(BM, BN)
            dst[:h, :w] = ref[v * per + r0 :][:h, c0 : c0 + w]
    close(c, want, k)


# ------------------------------------------------------------------ C to UB + LeakyRelu


@pytest.mark.parametrize(
    "m,n,k", [(1, 15, 17), (15, 1, 513), (17, 100, 1), (100, 513, 15), (513, 17, 100)]
)
@pytest.mark.parametrize("bias", [False, True])
def test_matmul_leakyrelu_epilogue_through_a_vecin_queue(libs, m, n, k, bias):
    a, b, bv = operands(m, n, k)
    c = np.full((m, n), -7.0, np.float32)
    t = tiling(m, n, k, bias=bias, alpha=0.125)
    kernel(libs, "matmul_leaky_kernel").run(1, [a, b, bv, c], t, WS)
    ref = reference(a, b, bv if bias else None)
    close(c, np.where(ref >= 0, ref, ref * 0.125), k)


def test_leakyrelu_sample_is_clean_under_memory_check(libs):
    m, n, k = 100, 100, 17
    a, b, bv = operands(m, n, k)
    c = np.zeros((m, n), np.float32)
    kernel(libs, "matmul_leaky_kernel", memcheck=True).run(
        1, [a, b, bv, c], tiling(m, n, k, bias=True, alpha=0.5), WS
    )
    ref = reference(a, b, bv)
    close(c, np.where(ref >= 0, ref, ref * 0.5), k)


def test_get_tensor_c_at_place_into_ub_with_aligned_rows(libs):
    m, n, k = 100, 80, 17  # 80 floats = 10 DataBlocks per row; two N blocks of 64
    a, b, _ = operands(m, n, k)
    c = np.zeros((m, n), np.float32)
    kernel(libs, "matmul_refuse_kernel").run(
        1, [a, b, np.zeros(n, np.float32), c], tiling(m, n, k, refuse=10), WS
    )
    close(c, reference(a, b), k)


# ------------------------------------------------------------------ refusals

REFUSALS = [
    (1, KernelError, r"REGIST_MATMUL_OBJ: no system workspace: call SetSysWorkspace"),
    (
        3,
        KernelError,
        r"Matmul::GetTensorC: C LocalTensor at UB offset \d+ is in a "
        r"TPosition::VECCALC buffer",
    ),
    (4, KernelError, r"DataCopy\(GM->UB\): dst at UB offset \d+ is in a TPosition::VECCALC"),
    (
        5,
        KernelError,
        r"REGIST_MATMUL_OBJ: the kernel is declared KERNEL_TYPE_AIV_ONLY, which "
        r"has no Cube core",
    ),
    (7, KernelError, r"Matmul::SetBias: the TCubeTiling has isBias = 0"),
    (8, KernelError, r"Matmul::Iterate<false>: the asynchronous form is not modelled"),
    (9, KernelError, r"singleN = 15 floats is not a whole number of 32-byte blocks"),
]


@pytest.mark.parametrize("case,exc,msg", REFUSALS, ids=[str(r[0]) for r in REFUSALS])
def test_refused_forms(libs, case, exc, msg):
    m, n, k = 17, 15, 33
    a, b, bv = operands(m, n, k)
    with pytest.raises(exc, match=msg):
        kernel(libs, "matmul_refuse_kernel").run(
            1, [a, b, bv, np.zeros(m * n, np.float32)], tiling(m, n, k, refuse=case), WS
        )


def test_a_host_that_allocates_no_workspace_is_refused(libs):
    a, b, bv = operands(15, 17, 100)
    with pytest.raises(KernelError, match="no system workspace"):
        kernel(libs, "matmul_leaky_kernel").run(
            1, [a, b, bv, np.zeros((15, 17), np.float32)], tiling(15, 17, 100), 0
        )


def test_mix_1_2_vector_blocks_past_blockdim_are_real(libs):
    """A 1:2 kernel whose split assumes GetBlockIdx() < GetBlockNum() writes past its data
    from vector block blockDim on (the "negative tails" of issue 9)."""
    with pytest.raises(KernelMemoryError, match=r"block 2 of 2.*index 2 out of range for 2"):
        kernel(libs, "matmul_refuse_kernel").run(
            2, [np.zeros(1)] * 3 + [np.zeros(2, np.float32)], tiling(16, 16, 16, refuse=6), WS
        )


def test_a_block_index_the_declared_type_does_not_have_is_refused(libs):
    k = kernel(libs, "matmul_leaky_kernel")
    a, b, bv = operands(15, 17, 100)
    c = np.zeros((15, 17), np.float32)
    k.run(2, [a, b, bv, c], tiling(15, 17, 100), WS)  # MIX 1:1: blocks 0 and 1 only
    ws = np.zeros(64, np.uint8)
    t = np.frombuffer(tiling(15, 17, 100), np.uint8).copy()
    ptrs = [x.ctypes.data for x in (a, b, bv, c, ws, t)]
    argv = (ctypes.c_void_p * 6)(*ptrs)
    assert k._run_block(2, 2, argv, 6) == 1
    assert (
        "KERNEL_TASK_TYPE_DEFAULT: block 2 of a 2-block launch does not exist for "
        "KERNEL_TYPE_MIX_AIC_1_1"
    ) in k._last_error().decode()


COMPILE_ERRORS = r"""
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
using namespace AscendC;
using A = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using CGm = MatmulType<TPosition::GM, CubeFormat::ND, float>;
using CUb = MatmulType<TPosition::VECIN, CubeFormat::ND, float>;
void f(GlobalTensor<float> g, LocalTensor<float> l) {
  Matmul<A, A, CGm> gm;
  gm.GetTensorC(l);  // ERR C in GM: no UB destination
  Matmul<A, A, CUb> ub;
  ub.GetTensorC(g);  // ERR C in VECIN: no GM destination
  ub.IterateAll(g);  // ERR
  Matmul<A, A, MatmulType<TPosition::VECCALC, CubeFormat::ND, float>> calc;  // ERR
}
"""


def test_c_position_pairs_that_do_not_compile(tmp_path):
    src = tmp_path / "mm_errors.cpp"
    src.write_text(COMPILE_ERRORS)
    proc = subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-fsyntax-only",
            f"-I{INCLUDE_DIR}",
            *header_defines(PLATFORM),
            str(src),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    for needle in (
        "C's MatmulType must be TPosition::VECIN",
        "C's MatmulType must be TPosition::GM",
        "C goes to TPosition::GM or TPosition::VECIN",
    ):
        assert needle in proc.stderr, proc.stderr
    bad = [i for i, line in enumerate(COMPILE_ERRORS.splitlines(), 1) if "// ERR" in line]
    for line in bad:
        assert f"mm_errors.cpp:{line}:" in proc.stderr, (line, proc.stderr)


# ------------------------------------------------------------------ emitted Cube kernels


def swiglu(x, w, bg, v, bu):
    g = pa.matmul(x, w) + bg
    return g * pa.sigmoid(g) * (pa.matmul(x, v) + bu)


def test_emitted_swiglu_declares_its_kernel_type_and_sets_up_its_workspace(monkeypatch):
    monkeypatch.setenv("PYASC_MEMORY_CHECK", "1")
    shapes = [(33, 100), (100, 17), (17,), (100, 17), (17,)]
    descs = [pa.TensorDesc(s, "float16") for s in shapes]
    op = pa.compile(swiglu, descs)
    src = (op.directory / "kernel.cpp").read_text()
    assert src.count("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_1);") == 1
    assert src.index("SetSysWorkspace(workspace);") < src.index("REGIST_MATMUL_OBJ(")
    assert "GetTensorC(" in src and all(
        ", 0, true);" in line for line in src.splitlines() if "GetTensorC(" in line
    )
    assert "TBuf<TPosition::VECIN>" in src
    assert op.info["kernel_type"] == "MIX_AIC_1_1"
    assert op.info["workspace_bytes"] == LIB_API_WORKSPACE_BYTES
    assert op.info["launches"][0]["workspace_bytes"] == LIB_API_WORKSPACE_BYTES
    assert "GetBlockIdx()" in op.info["block_mapping"]
    host = (op.directory / "host.cpp").read_text()
    assert f"return {LIB_API_WORKSPACE_BYTES}ULL;" in host and "KERNEL_TYPE_MIX_AIC_1_1" in host
    t = op.info["tiling"]
    for i in (0, 1):  # TCubeTiling describes the data: M = 33 rows, not a padded block
        assert t[f"mm{i}_M"] <= 33 and t[f"mm{i}_singleCoreM"] <= t[f"mm{i}_M"]
    arrays = [RNG.uniform(-1, 1, s).astype(np.float16) for s in shapes]
    x, w, bg, v, bu = (z.astype(np.float64) for z in arrays)
    g = x @ w + bg
    ref = g / (1 + np.exp(-g)) * (x @ v + bu)
    got = op(*arrays)  # CPU build with memory check on
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=2e-2, atol=2e-2)
    (interp,) = op.run_stage("ascendc", *arrays)
    np.testing.assert_allclose(interp.astype(np.float64), ref, rtol=2e-2, atol=2e-2)


def linear(x, w):
    return x @ w


@pytest.mark.parametrize("form", ["no SetSysWorkspace", "VECCALC C buffer", "AIV_ONLY"])
def test_interpreter_refuses_the_old_forms(form):
    """The ascendc-level interpreter enforces on emitted IR what the CPU runtime does."""
    from pyasc_mlir.dialects import ascendc as ac
    from pyasc_mlir.interpreter.core import run_function

    x = RNG.uniform(-1, 1, (17, 15)).astype(np.float16)
    w = RNG.uniform(-1, 1, (15, 33)).astype(np.float16)
    op = pa.compile(linear, [pa.TensorDesc(x.shape, "float16"), pa.TensorDesc(w.shape, "float16")])
    module = op.stages()["ascendc"].clone()
    ops = list(module.walk())
    if form == "no SetSysWorkspace":
        next(o for o in ops if isinstance(o, ac.SetSysWorkspaceOp)).detach()
        msg = r"\(REGIST_MATMUL_OBJ\): no system workspace: call SetSysWorkspace"
    elif form == "AIV_ONLY":
        next(o for o in ops if isinstance(o, ac.KernelTypeOp)).properties["kind"] = StringAttr(
            "AIV_ONLY"
        )
        msg = "declared KERNEL_TYPE_AIV_ONLY, which has no Cube core"
    else:
        tbuf = next(o for o in ops if isinstance(o, ac.InitTBufOp))
        del tbuf.properties["position"]
        msg = r"C LocalTensor at UB offset \d+ is in a TPosition::VECCALC buffer"
    ref = reference(x, w)
    np.testing.assert_allclose(
        run_function(op.stages()["ascendc"], "linear", [x, w])[0], ref, rtol=2e-2, atol=2e-2
    )  # the emitted form runs
    with pytest.raises(Exception, match=msg):
        run_function(module, "linear", [x, w])
