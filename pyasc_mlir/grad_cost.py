"""Save vs recompute for a backward operator, by the cost model (MODELED times).

``recompute``: the forward is recomputed inside the fused backward. ``save``: the forward also
writes its reduction results (the per-row statistics, see ``passes.autodiff``'s
``saved_values`` and ``with_saved_outputs``) to GM and the backward reads them instead of
recomputing them (:mod:`pyasc_mlir.grad_strategy` picks one with this comparison). Both
variants of the forward and of the backward are lowered by the ordinary pipeline (no g++) and
modeled by :mod:`pyasc_mlir.cost_model` (constants calibrated to published 910B2 measurements);
the step time of a strategy is forward + backward.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from pyasc_mlir.artifacts import modeled_times
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.passes.autodiff import AscAutodiffPass, with_saved_outputs
from pyasc_mlir.passes.registry import PASSES, PIPELINES
from pyasc_mlir.pipeline import PIPELINE, make_context, pass_options, top_function
from pyasc_mlir.platform import DEFAULT_PLATFORM

__all__ = ["compare_strategies", "plain_function"]


def plain_function(fn: Any) -> Callable[..., Any]:
    """The Python function of ``fn`` (a ``@jit`` function's ``.fn``)."""
    inner = getattr(fn, "fn", None)
    return inner if callable(inner) and hasattr(inner, "__code__") else fn


def _forward_module(fn: Callable[..., Any], inputs: Sequence[object]) -> ModuleOp:
    n = len(inspect.signature(fn).parameters)
    module, _ = build_module(fn, list(inputs[:n]))
    return module


def _modeled_us(module: ModuleOp, platform: str) -> float:
    """The MODELED time (µs) of every kernel of the tensor-level ``module``, once lowered."""
    ctx = make_context()
    options = pass_options(platform, True)
    for name in PIPELINES[PIPELINE]:
        PASSES[name]()(**options[name]).apply(ctx, module)
    return float(modeled_times(module, platform)["total"])


def compare_strategies(
    fn: Callable[..., Any], inputs: Sequence[object], platform: str = DEFAULT_PLATFORM
) -> dict[str, Any]:
    """MODELED µs of the forward, the backward and their sum under each strategy, for ``fn``
    and its ``inputs`` (``TensorDesc`` s and constants, as ``pa.compile`` takes them), the
    saved bytes (and, for ``save``, the ``saved`` values: ``passes.autodiff.saved_entries``),
    and ``choice`` (the cheaper one; a tie gives ``recompute``). A strategy that does not compile is
    ``None`` with the reason.

    Raises:
        PyAscCompileError: the forward cannot be built or differentiated (located)."""
    forward = plain_function(fn)
    name = forward.__name__
    result: dict[str, Any] = {"label": "MODELED", "platform": platform}
    for strategy in ("recompute", "save"):
        fwd_module = _forward_module(forward, inputs)
        bwd_module = fwd_module.clone()
        AscAutodiffPass(function=name, replace=True, save=strategy == "save").apply(
            make_context(), bwd_module
        )
        kept = with_saved_outputs(top_function(fwd_module, name)) if strategy == "save" else []
        saved = sum(int(e["bytes"]) for e in kept)
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
        if strategy == "save":
            result[strategy]["saved"] = kept
    ok = [s for s in ("recompute", "save") if "total_us" in result[s]]
    result["choice"] = min(ok, key=lambda s: result[s]["total_us"]) if ok else None
    return result
