"""Save vs recompute (``pyasc_mlir/grad_cost.py``): the ``save`` variant of ``asc-autodiff``
gives the same gradients as ``recompute`` (tensor interpreter; ``rtol = atol = 1e-6``: the
saved statistics are the forward's own float32 values, bit for bit what the recompute
computes, so only the order of the remaining float32 operations can differ), and the cost
model's comparison is well-formed (MODELED times, the choice is the cheaper strategy).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import seed_of
from test_autodiff_structural import layer_norm, rms_norm, softmax
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType

import pyasc_mlir as pa
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.grad_cost import compare_strategies
from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.passes.autodiff import AscAutodiffPass, saved_values
from pyasc_mlir.pipeline import make_context, top_function

CASES = {
    "layer_norm": (layer_norm, [(33, 40), (40,), (40,)], 2),
    "rms_norm": (rms_norm, [(33, 40), (40,)], 1),
    "softmax": (softmax, [(33, 40)], 1),  # its output (passes/autodiff_softmax.py)
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_save_variant_gives_the_same_gradients(name: str):
    fn, shapes, n_saved = CASES[name]
    rng = np.random.default_rng(seed_of(name))
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    dy = rng.standard_normal(shapes[0]).astype(np.float32)
    module, _ = build_module(fn, [pa.TensorDesc(s, "float32") for s in shapes], name)
    fwd = top_function(module, name)
    kept = saved_values(fwd)
    assert len(kept) == n_saved
    saving = module.clone()
    AscAutodiffPass().apply(make_context(), module)
    AscAutodiffPass(save=True).apply(make_context(), saving)
    saving.verify()
    bwd = top_function(saving, f"{name}_backward")
    assert bwd.attributes["asc.backward"].data == "save"
    # the saved values, as the forward computes them: its reductions' results
    probe = module.clone()
    pf = top_function(probe, name)
    ret = pf.body.block.last_op
    stats = saved_values(pf)
    ret.detach()
    ret.erase()
    pf.body.block.add_op(func.ReturnOp(*stats))
    pf.function_type = FunctionType.from_lists(
        pf.function_type.inputs.data, [v.type for v in stats]
    )
    saved = run_function(probe, name, args)
    want = run_function(module, f"{name}_backward", [*args, dy])
    got = run_function(saving, f"{name}_backward", [*args, dy, *saved])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_compare_strategies_reports_both_and_picks_the_cheaper():
    fn, shapes, n_saved = CASES["layer_norm"]
    rows = 513
    descs = [pa.TensorDesc((rows, *s[1:]) if len(s) == 2 else s, "float32") for s in shapes]
    out = compare_strategies(fn, descs)
    assert out["label"] == "MODELED"
    for s in ("recompute", "save"):
        r = out[s]
        assert r["forward_us"] > 0 and r["backward_us"] > 0
        assert r["total_us"] == pytest.approx(r["forward_us"] + r["backward_us"], abs=2e-3)
    assert out["recompute"]["saved_bytes"] == 0
    assert out["save"]["saved_bytes"] == n_saved * rows * 4  # one float32 per row each
    cheaper = min(("recompute", "save"), key=lambda s: out[s]["total_us"])
    assert out["choice"] == cheaper
