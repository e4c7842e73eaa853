"""``pyasc cpu-run`` as a user runs it: subprocess calls of the CLI on kernel files.

Success against numpy (the README's worked example), each error class (API misuse,
out-of-bounds access, unknown entry, argument count, g++ errors, a failing block other than 0),
the memory-check report, ``--kernel-type``, a kernel's own header (and the cache seeing its
edits), and bad argument specs (exit status 2, no traceback).
"""

from __future__ import annotations

import numpy as np
import pytest
from cpu_run_helpers import EXAMPLES, CpuRun

RNG = np.random.default_rng(99)
ADD = EXAMPLES / "add_custom.cpp"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return CpuRun(tmp_path_factory.mktemp("cache"), tmp_path_factory.mktemp("work"))


def add_inputs(run, n=16384):
    x, y = (RNG.standard_normal(n).astype(np.float16) for _ in range(2))
    return x, y, run.save(x=x, y=y)


def no_traceback(res):
    assert "Traceback" not in res.stderr and "Traceback" not in res.stdout, res.stderr


def test_worked_example_matches_numpy(run):
    """The README's example, as written there."""
    x, y, p = add_inputs(run)
    res = run(
        ADD,
        "--entry",
        "add_custom",
        "--block-dim",
        "8",
        p["x"],
        p["y"],
        "z:float16[16384]",
        "u32:16384,8",
    )
    assert res.code == 0, res.stderr
    assert "wrote" in res.stdout and "z.npy" in res.stdout
    np.testing.assert_array_equal(res.output("z"), x + y)


def test_other_block_dims_and_shapes(run):
    x, y, p = add_inputs(run, 2 * 4 * 2 * 16)
    res = run(
        ADD,
        "--entry",
        "add_custom",
        "--block-dim",
        "2",
        p["x"],
        p["y"],
        "z:float16[16,16]",
        "u32:totalLength=256,tileNum=4",  # labelled values
    )  # the output shape is the file's, not the GM's
    assert res.code == 0, res.stderr
    np.testing.assert_array_equal(res.output("z"), (x + y).reshape(16, 16))


def test_api_misuse_names_api_block_and_line(run):
    """A tiling that overflows UB: the InitBuffer line of the example."""
    _, _, p = add_inputs(run)
    res = run(
        ADD,
        "--entry",
        "add_custom",
        "--block-dim",
        "8",
        p["x"],
        p["y"],
        "z:float16[16384]",
        "u32:1048576,1",
    )
    assert res.code == 1
    no_traceback(res)
    line = next(i for i, t in enumerate(ADD.read_text().splitlines(), 1) if "InitBuffer" in t)
    assert f"{ADD}:{line}:" in res.stderr
    assert "kernel error in block 0 of 8 (add_custom): TPipe::InitBuffer: UB overflow" in (
        res.stderr
    )
    assert "pipe.InitBuffer(inQueueX" in res.stderr  # the source line is shown


OOB = """#include "kernel_operator.h"
// copies one tile too many on the last core
extern "C" __global__ __aicore__ void oob(GM_ADDR x, GM_ADDR z) {
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
  pipe.InitBuffer(q, 1, 64 * sizeof(float));
  AscendC::GlobalTensor<float> xGm, zGm;
  xGm.SetGlobalBuffer((__gm__ float*)x + 128 * AscendC::GetBlockIdx(), 128);
  zGm.SetGlobalBuffer((__gm__ float*)z + 128 * AscendC::GetBlockIdx(), 128);
  const int tiles = AscendC::GetBlockIdx() == 3 ? 3 : 2;
  for (int i = 0; i < tiles; i++) {
    AscendC::LocalTensor<float> t = q.AllocTensor<float>();
    AscendC::DataCopy(t, xGm[i * 64], 64);
    q.EnQue(t);
    t = q.DeQue<float>();
    AscendC::PipeBarrier<PIPE_ALL>();  // the VECIN queue orders MTE2->V only: MTE3 waits here
    AscendC::DataCopy(zGm[i * 64], t, 64);
    AscendC::PipeBarrier<PIPE_ALL>();  // MTE3 done before the next MTE2 overwrites the buffer
    q.FreeTensor(t);
  }
}
"""


def test_out_of_bounds_in_a_later_block(run, tmp_path):
    kernel = tmp_path / "oob.cpp"
    kernel.write_text(OOB)
    # block 3's third tile reads past its SetGlobalBuffer size AND past the x buffer the host
    # passed (past the size but inside the buffer would be allowed, as on the hardware)
    x = RNG.standard_normal(4 * 128).astype(np.float32)
    p = run.save(x=x)
    res = run(kernel, "--entry", "oob", "--block-dim", "4", p["x"], "z:float32[512]")
    assert res.code == 1
    no_traceback(res)
    assert "block 3 of 4" in res.stderr and "DataCopy" in res.stderr
    assert f"{kernel}:13:" in res.stderr, res.stderr  # the DataCopy GM->UB line
    assert "AscendC::DataCopy(t, xGm[i * 64], 64);" in res.stderr


UNINIT = """#include "kernel_operator.h"
extern "C" __global__ __aicore__ void uninit(GM_ADDR z) {
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> q;
  pipe.InitBuffer(q, 1, 64 * sizeof(float));
  AscendC::GlobalTensor<float> zGm;
  zGm.SetGlobalBuffer((__gm__ float*)z, 64);
  AscendC::LocalTensor<float> t = q.AllocTensor<float>();
  AscendC::Adds(t[8], t[8], 1.0f, 8);  // only part of it
  q.EnQue(t);
  t = q.DeQue<float>();
  AscendC::DataCopy(zGm, t, 64);
  q.FreeTensor(t);
}
"""


def test_memory_check_reports_an_uninitialised_read(run, tmp_path):
    kernel = tmp_path / "uninit.cpp"
    kernel.write_text(UNINIT)
    plain = run(kernel, "--entry", "uninit", "--block-dim", "1", "z:float32[64]")
    assert plain.code == 0, plain.stderr  # the hardware would copy whatever UB holds
    res = run(kernel, "--entry", "uninit", "--block-dim", "1", "z:float32[64]", "--memory-check")
    assert res.code == 1
    no_traceback(res)
    assert "memory check in block 0 of 1 (uninit)" in res.stderr
    assert "uninitialised" in res.stderr and "DataCopy" in res.stderr
    assert f"{kernel}:12:" in res.stderr, res.stderr


def test_unknown_entry(run):
    res = run(ADD, "--entry", "add", "--block-dim", "1", "null")
    assert res.code == 2
    no_traceback(res)
    assert "unknown entry 'add'" in res.stderr and "found: add_custom" in res.stderr


def test_wrong_argument_count_points_at_the_entry(run):
    res = run(ADD, "--entry", "add_custom", "--block-dim", "1", "null", "null")
    assert res.code == 2
    no_traceback(res)
    assert "add_custom takes 4 arguments (GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling)" in (
        res.stderr
    )
    line = next(i for i, t in enumerate(ADD.read_text().splitlines(), 1) if "void add_custom(" in t)
    assert f"{ADD}:{line}:" in res.stderr


def test_compile_error_shows_gxx_diagnostics_with_the_users_path(run, tmp_path):
    kernel = tmp_path / "bad.cpp"
    kernel.write_text(
        ADD.read_text().replace("tileLength);\n    outQueueZ", "tileLength, 3);\n    outQueueZ")
    )
    _, _, p = add_inputs(run)
    res = run(
        kernel,
        "--entry",
        "add_custom",
        "--block-dim",
        "8",
        p["x"],
        p["y"],
        "z:float16[16384]",
        "u32:16384,8",
    )
    assert res.code == 1
    no_traceback(res)
    assert f"g++ rejected {kernel}" in res.stderr
    assert f"{kernel}:" in res.stderr and "no matching function for call to ‘Add(" in res.stderr
    assert "unity.cc" not in res.stderr


MIX = """#include "kernel_operator.h"
extern "C" __global__ __aicore__ void ids(GM_ADDR out) {
  ((__gm__ int32_t*)out)[GetBlockIdx()] = 100 + GetBlockIdx();
}
extern "C" __global__ __aicore__ void aiv_only(GM_ADDR out) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
}
"""


def test_kernel_type_mix_1_2_runs_twice_the_vector_blocks(run, tmp_path):
    kernel = tmp_path / "mix.cpp"
    kernel.write_text(MIX)
    res = run(kernel, "--entry", "ids", "--block-dim", "3", "out:int32[8]")
    assert res.code == 0, res.stderr
    np.testing.assert_array_equal(res.output("out"), [100, 101, 102, 0, 0, 0, 0, 0])
    res = run(
        kernel, "--entry", "ids", "--block-dim", "3", "out:int32[8]", "--kernel-type", "MIX_AIC_1_2"
    )
    assert res.code == 0, res.stderr
    np.testing.assert_array_equal(res.output("out"), [100, 101, 102, 103, 104, 105, 0, 0])
    res = run(
        kernel,
        "--entry",
        "aiv_only",
        "--block-dim",
        "1",
        "null",
        "--kernel-type",
        "KERNEL_TYPE_MIX_AIC_1_2",
    )
    assert res.code == 1
    assert "KERNEL_TASK_TYPE_DEFAULT" in res.stderr and f"{kernel}:6:" in res.stderr


def test_a_kernels_own_header_is_found_and_tracked(run, tmp_path):
    (tmp_path / "scale.h").write_text("constexpr float SCALE = 2.0f;\n")
    kernel = tmp_path / "scaled.cc"  # not .cpp: built under a .cpp name
    kernel.write_text(
        '#include "kernel_operator.h"\n#include "scale.h"\n'
        'extern "C" __global__ __aicore__ void scaled(GM_ADDR z) {\n'
        "  ((__gm__ float*)z)[0] = SCALE;\n}\n"
    )
    res = run(kernel, "--entry", "scaled", "--block-dim", "1", "z:float32[1]")
    assert res.code == 0, res.stderr
    assert res.output("z")[0] == 2.0
    (tmp_path / "scale.h").write_text("constexpr float SCALE = 3.0f;\n")
    res = run(kernel, "--entry", "scaled", "--block-dim", "1", "z:float32[1]")
    assert res.code == 0, res.stderr
    assert res.output("z")[0] == 3.0  # rebuilt: the header is part of the cache key


@pytest.mark.parametrize(
    "arg,message",
    [
        ("z:float16[]", "at least one dimension"),
        ("z:float16[4,0]", "at least one dimension"),
        ("z:complex64[4]", "not a number type"),
        ("z:nosuch[4]", "unknown dtype 'nosuch'"),
        ("u32:12,abc", "'abc' is not a u32"),
        ("u8:300", "'300' is not a u8"),
        ("q7:1", "is not TYPE:V"),
        ("tcube:Mx=4", "'Mx' is not a TCubeTiling field"),
        ("tcube:M=four", "M='four' is not an integer"),
        ("ws:0", "positive size"),
        ("ws:lots", "positive size"),
        ("missing.npy", "no such file"),
        ("hello", "not a known form"),
    ],
)
def test_bad_argument_specs(run, arg, message):
    res = run(ADD, "--entry", "add_custom", "--block-dim", "1", arg, "null", "null", "null")
    assert res.code == 2, res.stderr
    no_traceback(res)
    assert "argument 0" in res.stderr and message in res.stderr, res.stderr
    assert "hint: an ARG is one of" in res.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["--block-dim", "0"], "--block-dim must be >= 1"),
        (["--block-dim", "1", "--kernel-type", "MIX_9"], "unknown kernel type 'MIX_9'"),
        (["--block-dim", "1", "--platform", "A100"], "invalid choice: 'A100'"),
        ([], "the following arguments are required: --block-dim"),
    ],
)
def test_bad_options(run, args, message):
    res = run(ADD, "--entry", "add_custom", *args, "null", "null", "null", "null")
    assert res.code == 2
    no_traceback(res)
    assert message in res.stderr, res.stderr


def test_missing_kernel_file(run, tmp_path):
    res = run(tmp_path / "nope.cpp", "--entry", "k", "--block-dim", "1")
    assert res.code == 2
    no_traceback(res)
    assert "nope.cpp does not exist" in res.stderr


def test_bad_npy_file(run, tmp_path):
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"not numpy")
    res = run(ADD, "--entry", "add_custom", "--block-dim", "1", str(bad), "null", "null", "null")
    assert res.code == 2
    no_traceback(res)
    assert "not a .npy array" in res.stderr


def test_gm_bounds_are_the_host_buffers(run, tmp_path):
    """Past a SetGlobalBuffer size but inside the buffer the host passed: allowed (as on the
    hardware), reported as a warning under --memory-check; a write past the output's buffer is
    an error naming the copy, never host-memory corruption."""
    kernel = tmp_path / "oob.cpp"
    kernel.write_text(OOB)
    x = RNG.standard_normal(4 * 128 + 64).astype(np.float32)
    p = run.save(x=x)
    res = run(kernel, "--entry", "oob", "--block-dim", "4", p["x"], "z:float32[576]")
    assert res.code == 0, res.stderr
    np.testing.assert_array_equal(res.output("z"), x)
    res = run(
        kernel, "--entry", "oob", "--block-dim", "4", "--memory-check", p["x"], "z:float32[576]"
    )
    assert res.code == 0, res.stderr
    assert "warning:" in res.stderr and "SetGlobalBuffer" in res.stderr and "block 3" in res.stderr
    res = run(kernel, "--entry", "oob", "--block-dim", "4", p["x"], "z:float32[100]")
    assert res.code == 1
    no_traceback(res)
    assert "block 0 of 4" in res.stderr and "DataCopy(UB->GM)" in res.stderr, res.stderr
    assert "leaves every buffer the host passed" in res.stderr


CRASH = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void crash(GM_ADDR x, GM_ADDR tiling) {
  const uint32_t n = *reinterpret_cast<const uint32_t*>(tiling);  // tiling passed as null
  AscendC::GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)x, n);
}
"""


def test_a_kernel_that_crashes_the_process_is_reported(run, tmp_path):
    kernel = tmp_path / "crash.cpp"
    kernel.write_text(CRASH)
    p = run.save(x=np.zeros(8, np.float32))
    res = run(kernel, "--entry", "crash", "--block-dim", "2", p["x"], "null")
    assert res.code == 1
    no_traceback(res)
    assert "the kernel crashed (SIGSEGV) in block 0 of 2 (crash)" in res.stderr, res.stderr
    assert "hint:" in res.stderr
