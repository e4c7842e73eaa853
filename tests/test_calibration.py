"""The cost model's calibration against published 910B2 device times (issue 14, section 1).

The constants (``pyasc_mlir.platform.COST_910B2``) are fitted by ``benchmarks/calibrate.py``
to hicann/cann-bench's published Sigmoid and Maximum times; these tests check the committed
numbers against the data (not against themselves): every fitted case within 10 %, the fit a
least-squares optimum, lower-bound rows never fitted, and the model's predictions for cases the
fit never saw. All modeled times are MODELED.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from benchmarks import calibrate
from benchmarks.cann_cases import load_cases, walks
from pyasc_mlir import cost_model
from pyasc_mlir.platform import COST_910B2, cost_constants, get_platform

CASES = load_cases()
BY_LABEL = {c.label.split()[0]: c for c in CASES}


def test_data_file_lower_bounds_follow_the_publications_cap():
    # published = min(measured, max(10 * t_hw, 10 us)): a row at the cap is a lower bound
    assert len(CASES) == 164
    for c in CASES:
        if c.upper_bound:  # the GEMM figure: host-timed, no t_hw
            continue
        cap = max(10 * c.t_hw_us, 10.0)
        assert c.lower_bound == (abs(c.published_us - cap) <= 0.011), c.label
    assert BY_LABEL["exp#1"].lower_bound and not BY_LABEL["sigmoid#4"].lower_bound


def test_fit_cases_are_measured_memory_bound_single_kernels():
    fit = [c for c in CASES if calibrate.role(c) == "fit"]
    assert {c.op for c in fit} == {"sigmoid", "maximum"}
    assert len(fit) == 9 and not any(c.lower_bound for c in fit)
    assert all(c.dtype in calibrate.FIT_DTYPES for c in fit)


def test_every_fitted_case_within_ten_percent():
    for c in CASES:
        if calibrate.role(c) == "fit":
            err = calibrate.hardware_us(c, COST_910B2) / c.published_us - 1.0
            assert abs(err) <= calibrate.FIT_TOLERANCE, (c.label, err)


def _sse(k):
    fit = [c for c in CASES if calibrate.role(c) == "fit"]
    return sum(math.log(calibrate.hardware_us(c, k) / c.published_us) ** 2 for c in fit)


@pytest.mark.parametrize("name", calibrate.FITTED)
def test_committed_constants_are_the_least_squares_optimum(name):
    # every fitted constant moved by +-3 % makes the fit worse (no scipy needed here)
    best = _sse(COST_910B2)
    v = getattr(COST_910B2, name)
    for f in (0.97, 1.03):
        assert _sse(dataclasses.replace(COST_910B2, **{name: v * f})) > best


def test_l2_model_reads_from_hbm_and_absorbs_writes_up_to_capacity():
    plat = get_platform("910B2")
    k = COST_910B2
    small = cost_model.gm_seconds(1e6, 1e6, plat, k)
    assert small == pytest.approx(1e6 / (k.hbm_gbps * 1e9) + 1e6 / (k.l2_write_gbps * 1e9))
    big_w = k.l2_absorb_bytes + 1e8
    spill = cost_model.gm_seconds(0.0, big_w, plat, k)
    assert spill == pytest.approx(
        1e8 / (k.hbm_gbps * 1e9) + k.l2_absorb_bytes / (k.l2_write_gbps * 1e9)
    )


def test_other_socs_scale_the_fit_by_bandwidth():
    b4 = get_platform("910B4")
    c = cost_constants(b4)
    assert c.hbm_gbps == pytest.approx(
        COST_910B2.hbm_gbps * b4.hbm_gbps / get_platform("910B2").hbm_gbps
    )
    assert c.min_kernel_us == COST_910B2.min_kernel_us and "assumption" in c.source


@pytest.mark.parametrize(
    "label,bound",
    [("maximum#10", 0.10), ("maximum#8", 0.10), ("sigmoid#18", 0.10), ("mish#4", 0.15)],
)
def test_unseen_cases_are_predicted(label, bound):
    # validation: cases the fit never saw, our kernel for the same math, modeled in full
    c = BY_LABEL[label]
    assert calibrate.role(c) == "validation"
    t = calibrate.modeled_us(walks(c), COST_910B2)
    assert abs(t / c.published_us - 1.0) <= bound, (label, t, c.published_us)


def test_a_kernel_takes_at_least_the_least_kernel_time():
    c = BY_LABEL["sigmoid#1"]
    (w,) = walks(c)
    e = cost_model.time_walk(w, get_platform("910B2"))
    assert e.time_us == pytest.approx(max(COST_910B2.min_kernel_us, e.work_us))
    assert e.min_kernel_us == COST_910B2.min_kernel_us


def test_op_info_exposes_the_modeled_time(tmp_path):
    import pyasc_mlir as pa

    def sig_mul(x, y):
        return pa.sigmoid(x) * y

    op = pa.compile(sig_mul, [pa.TensorDesc((2048, 2048), "float32")] * 2, output_dir=tmp_path)
    m = op.info["modeled_us"]
    assert m["platform"] == "910B2" and m["label"] == "MODELED"
    (name,) = op.info["kernel_names"]
    assert m["total"] == pytest.approx(m["kernels"][name])
    # 2 x 16.8 MB in, 16.8 MB out: above the least kernel time, below the HBM-only time
    assert COST_910B2.min_kernel_us < m["total"] < 50.4e6 / (COST_910B2.hbm_gbps * 1e9) * 1e6 * 1.5
