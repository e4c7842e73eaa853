"""The API forms only ``tests/conformance/api_forms.cpp`` uses (see its header comment), run
through ``pyasc cpu-run`` and checked against numpy and the documented semantics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cpu_run_helpers import CpuRun
from helpers import tcube_arg, tcube_fields

KERNEL = Path(__file__).resolve().parent / "conformance" / "api_forms.cpp"
RNG = np.random.default_rng(31)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return CpuRun(tmp_path_factory.mktemp("cache"), tmp_path_factory.mktemp("work"))


def test_tensor_pipe_and_core_forms(run):
    x = RNG.standard_normal(64).astype(np.float32)
    x[:3] = [np.nan, -0.0, np.inf]
    p = run.save(x=x)
    res = run(
        KERNEL,
        "--entry",
        "api_tensor_forms",
        "--block-dim",
        "1",
        p["x"],
        "z:int32[64]",
        "info:int32[16]",
        "--memory-check",
    )
    assert res.code == 0, res.stderr
    np.testing.assert_array_equal(res.output("z"), x.view(np.int32) + 1)
    info = res.output("info")
    np.testing.assert_array_equal(info[:9], [64, 16, 64, 1, 1, 1, 0, 0, 1234])


BM = BN = 32
BK = 16


def _tcube(m, n, k):
    return tcube_arg(tcube_fields(m, n, k, (BM, BN, BK)))


def _ref(a, b):
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for p in range(a.shape[1]):
        acc += np.outer(a[:, p].astype(np.float32), b[p].astype(np.float32))
    return acc


@pytest.mark.parametrize("mode,sm,sn", [(0, 17, 9), (1, 0, 0)])
def test_matmul_shape_and_bias_forms(run, mode, sm, sn):
    m, n, k = 40, 24, 32
    a = RNG.uniform(-1, 1, (m, k)).astype(np.float16)
    b = RNG.uniform(-1, 1, (k, n)).astype(np.float16)
    bias = np.full(n, 100.0, np.float32)  # must not be added (DisableBias)
    p = run.save(a=a, b=b, bias=bias)
    res = run(
        KERNEL,
        "--entry",
        "api_matmul_forms",
        "--block-dim",
        "1",
        p["a"],
        p["b"],
        p["bias"],
        f"c:float32[{m},{n}]",
        "ws:16M",
        _tcube(m, n, k),
        f"i32:{mode},{sm},{sn}",
    )
    assert res.code == 0, res.stderr
    want = _ref(a, b)
    if mode == 0:
        full, want = want, np.zeros_like(want)
        want[:sm, :sn] = full[:sm, :sn]
    np.testing.assert_allclose(res.output("c"), want, rtol=1e-6, atol=1e-6)
