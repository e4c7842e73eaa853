"""Save vs recompute for a backward operator, by the cost model (MODELED times).

``recompute`` (what ``pa.vjp`` compiles): the forward is recomputed inside the fused backward.
``save``: the forward also writes its reduction results (the per-row statistics, see
``passes.autodiff.saved_values``) to GM and the backward reads them instead of recomputing
them. Both variants of the forward and of the backward are lowered by the ordinary pipeline
(no g++) and modeled by :mod:`pyasc_mlir.cost_model` (constants calibrated to published 910B2
measurements); the step time of a strategy is forward + backward.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType

from pyasc_mlir.artifacts import modeled_times
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.grad import Backward
from pyasc_mlir.passes.autodiff import AscAutodiffPass, saved_values
from pyasc_mlir.passes.registry import PASSES, PIPELINES
from pyasc_mlir.pipeline import PIPELINE, make_context, pass_options, top_function
from pyasc_mlir.platform import DEFAULT_PLATFORM

__all__ = ["compare_strategies"]


def _modeled_us(module: ModuleOp, platform: str) -> float:
    """The MODELED time (µs) of every kernel of the tensor-level ``module``, once lowered."""
    ctx = make_context()
    options = pass_options(platform, True)
    for name in PIPELINES[PIPELINE]:
        PASSES[name]()(**options[name]).apply(ctx, module)
    return float(modeled_times(module, platform)["total"])


def _with_saved_outputs(module: ModuleOp, name: str) -> int:
    """Make ``@name`` also return its :func:`saved_values`; their bytes."""
    fwd = top_function(module, name)
    kept = saved_values(fwd)
    ret = fwd.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    ret.operands = [*ret.operands, *kept]
    outs = [*fwd.function_type.outputs.data, *(v.type for v in kept)]
    fwd.function_type = FunctionType.from_lists(fwd.function_type.inputs.data, outs)
    total = 0
    for v in kept:
        assert isinstance(v.type, TensorType)
        total += v.type.element_count() * 4  # reductions compute in float32
    return total


def compare_strategies(
    fn: Callable[..., Any], inputs: Sequence[object], platform: str = DEFAULT_PLATFORM
) -> dict[str, Any]:
    """MODELED µs of the forward, the backward and their sum under each strategy, for ``fn``
    and its ``inputs`` (``TensorDesc`` s and constants, as ``pa.compile`` takes them), the
    saved bytes, and ``choice`` (the cheaper one). A strategy that does not compile is
    ``None`` with the reason.

    Raises:
        PyAscCompileError: the forward cannot be built or differentiated (located)."""
    bwd = Backward(fn)
    name = bwd.forward.__name__
    result: dict[str, Any] = {"label": "MODELED", "platform": platform}
    for strategy in ("recompute", "save"):
        fwd_module = bwd.forward_module(inputs)
        bwd_module = fwd_module.clone()
        AscAutodiffPass(function=name, replace=True, save=strategy == "save").apply(
            make_context(), bwd_module
        )
        saved = _with_saved_outputs(fwd_module, name) if strategy == "save" else 0
        try:
            f_us, b_us = _modeled_us(fwd_module, platform), _modeled_us(bwd_module, platform)
        except PyAscCompileError as exc:
            result[strategy] = {"error": exc.message if hasattr(exc, "message") else str(exc)}
            continue
        result[strategy] = {
            "forward_us": round(f_us, 3),
            "backward_us": round(b_us, 3),
            "total_us": round(f_us + b_us, 3),
            "saved_bytes": saved,
        }
    ok = [s for s in ("recompute", "save") if "total_us" in result[s]]
    result["choice"] = min(ok, key=lambda s: result[s]["total_us"]) if ok else None
    return result
