"""Regression test written by ``pyasc fuzz`` (seed 1, program #1840, fz_19800fa31636).

mismatch at tile~ascendc: 910B2, double_buffer=True, inputs [2, 33, 1, 1] float16

Observed:
    tile vs ascendc output 0: 1 of 33 elements differ in sign; first at (0, 19, 0, 0): +0 vs -0

Reference: ``pyasc_mlir.fuzzing`` evaluates PROGRAM (the op list this source was rendered from)
in float64 with a per-element error bound; see ``pyasc_mlir.fuzzing.evaluator`` and
``pyasc_mlir.fuzzing.verdicts`` for the tolerances.
"""

import pyasc_mlir as pa

def fz_55e817eae6de(x0):
    t0 = x0.sum(0, keepdim=True)
    return t0,


PROGRAM = '{"data_seed": 0, "double_buffer": true, "inputs": [{"dist": "uniform", "dtype": "float16", "hi": 1.0, "lo": -1.0, "shape": [2, 33, 1, 1], "special": "zero"}], "nodes": [{"args": [["v", 0]], "kind": "reduce", "params": [["axis", 0], ["fn", "sum"], ["form", 0], ["keepdim", true], ["unbiased", false]]}], "outputs": [1], "platform": "910B2"}'


def test_fz_55e817eae6de():
    from pyasc_mlir.fuzzing import assert_program_ok

    assert_program_ok(fz_55e817eae6de, PROGRAM)
