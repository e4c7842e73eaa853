"""Save or recompute: the strategy of a compiled backward operator, decided per forward
signature.

``recompute``: the backward recomputes the forward inside its fused kernels (it reads the
forward's inputs and the cotangents only). ``save``: the forward also returns its reduction
results (the per-row statistics, float32: ``passes.autodiff.saved_values``; the operator
:class:`SavingForward`), and the backward reads them as trailing inputs instead of recomputing
them; a softmax result of the forward is saved as itself (no extra GM write) and differentiated
as ``y * (dy - sum(dy * y))`` (``passes/autodiff_softmax.py``). ``auto`` (the default of
``pa.vjp``, ``@pa.jit(grad_mode=True)`` and ``pa.compile(..., grad=True)``) takes the strategy
whose forward + backward the cost model models cheaper
(:func:`pyasc_mlir.grad_cost.compare_strategies`, MODELED µs, no g++); a tie or nothing to save
gives ``recompute``.

:func:`decide` gives the strategy with the report ``op.info["backward"]`` carries: ``requested``,
``reason`` and ``modeled`` (both strategies' MODELED forward/backward/total µs, saved bytes,
the platform).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType

from pyasc_mlir.cache import source_fingerprint
from pyasc_mlir.errors import PyAscUsageError, caller_loc
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.grad_cost import compare_strategies, plain_function
from pyasc_mlir.passes.autodiff import with_saved_outputs
from pyasc_mlir.pipeline import top_function
from pyasc_mlir.types import TensorDesc, np_dtype_of

__all__ = [
    "STRATEGIES",
    "SavingForward",
    "check_strategy",
    "decide",
    "saved_descs",
    "split_saving",
]

STRATEGIES = ("auto", "recompute", "save")
"""The values of the ``strategy`` / ``grad_strategy`` options."""

_DECISIONS: dict[tuple[str, str, str], dict[str, Any]] = {}


def check_strategy(value: object, option: str = "strategy") -> str:
    """``value`` if it is one of :data:`STRATEGIES`.

    Raises:
        PyAscUsageError: another value (located at the caller, ``option`` named)."""
    if isinstance(value, str) and value in STRATEGIES:
        return value
    raise PyAscUsageError(
        f"{option}={value!r} is not a backward strategy",
        caller_loc(),
        f"use {option}='auto' (the cost model chooses), 'recompute' or 'save'",
    )


def check_grad_strategy(value: object, enabled: bool, enabler: str) -> str:
    """``check_strategy(value, "grad_strategy")``, and refused unless ``"auto"`` when the
    backward is not asked for (``enabled`` false; ``enabler``: the option that asks for it,
    e.g. ``"grad_mode=True"``).

    Raises:
        PyAscUsageError: an unknown strategy, or one given without ``enabler`` (located at
            the caller)."""
    strategy = check_strategy(value, "grad_strategy")
    if strategy != "auto" and not enabled:
        raise PyAscUsageError(
            f"grad_strategy={strategy!r} given without {enabler}: there is no backward "
            "for it to apply to",
            caller_loc(),
            f"add {enabler} (or drop grad_strategy=)",
        )
    return strategy


def _auto(modeled: dict[str, Any], saved: list[dict[str, Any]]) -> tuple[str, str]:
    """The ``auto`` strategy for ``compare_strategies``' result (``saved``: what ``save``
    would save) and why."""
    rec, sav = modeled["recompute"], modeled["save"]
    where = f"MODELED on {modeled['platform']}, forward + backward"
    if "total_us" not in sav:
        return "recompute", f"auto: the save variant does not compile ({sav.get('error')})"
    if "total_us" not in rec:
        return "save", f"auto: the recompute variant does not compile ({rec.get('error')})"
    if not saved:
        return "recompute", "auto: the forward has no reduction results to save"
    if sav["total_us"] < rec["total_us"]:
        return "save", f"auto: save {sav['total_us']} us < recompute {rec['total_us']} us ({where})"
    return (
        "recompute",
        f"auto: recompute {rec['total_us']} us <= save {sav['total_us']} us ({where})",
    )


def decide(
    fn: Callable[..., Any], inputs: Sequence[object], requested: str, platform: str
) -> dict[str, Any]:
    """The strategy of ``fn``'s backward for the forward ``inputs`` (``TensorDesc`` s and
    constants): ``{"strategy", "requested", "reason", "modeled", "saved"}``; ``saved``: the
    values the ``save`` forward returns (``passes.autodiff.saved_entries``), ``[]`` for
    recompute. Memoised per forward source, inputs, platform and ``requested``.

    Raises:
        PyAscCompileError: the forward cannot be built or differentiated (located)."""
    forward = plain_function(fn)
    key = (source_fingerprint(forward, inputs), repr([*inputs, platform]), requested)
    if key in _DECISIONS:
        return _DECISIONS[key]
    modeled = compare_strategies(forward, inputs, platform)
    saved = modeled["save"].pop("saved", [])
    if requested == "auto":
        strategy, reason = _auto(modeled, saved)
    else:
        strategy, reason = requested, f"requested: strategy={requested!r}"
    modeled.pop("choice")
    modeled["label"] = "modeled"
    result = {
        "strategy": strategy,
        "requested": requested,
        "reason": reason,
        "modeled": modeled,
        "saved": saved if strategy == "save" else [],
    }
    _DECISIONS[key] = result
    return result


def saved_descs(decision: dict[str, Any]) -> list[TensorDesc]:
    """The saved values of a :func:`decide` result as ``TensorDesc`` s (backward inputs)."""
    return [TensorDesc(tuple(e["shape"]), e["dtype"]) for e in decision["saved"]]


def split_saving(
    outs: Sequence[Any], entries: list[dict[str, Any]]
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``(results, saved)`` of a :class:`SavingForward` run's ``outs`` for its saved
    ``entries`` (a saved softmax output is the result it names; the others follow the
    results, in order)."""
    n = len(outs) - sum(1 for e in entries if "output" not in e)
    rest = iter(outs[n:])
    saved = tuple(outs[e["output"]] if "output" in e else next(rest) for e in entries)
    return tuple(outs[:n]), saved


class SavingForward:
    """The ``save`` strategy's forward of ``forward`` as something ``pa.compile`` compiles:
    ``forward``'s results, then its saved values (reduction results, in program order; see
    ``passes.autodiff.with_saved_outputs``). Named ``<forward>_saving``."""

    def __init__(self, forward: Callable[..., Any]):
        self.forward = plain_function(forward)
        self.__name__ = f"{self.forward.__name__}_saving"
        self.__wrapped__ = self.forward  # the cache key follows the forward's source
        self.__signature__ = inspect.signature(self.forward)
        self.__pyasc_key__ = {"derived": "saving-forward"}

    def __call__(self, *args: Any) -> Any:
        raise PyAscUsageError(
            f"{self.__name__} is compiled, not called as Python",
            caller_loc(),
            "call pa.vjp(fn).forward(*args) instead",
        )

    def __pyasc_build__(self, inputs: Sequence[object], name: str) -> tuple[ModuleOp, list[str]]:
        """``(module, result dtypes)``: the forward for ``inputs`` returning its saved values
        too, as the function ``name``.

        Raises:
            PyAscCompileError: the forward cannot be built (located)."""
        module, _ = build_module(self.forward, list(inputs))
        fwd = top_function(module, self.forward.__name__)
        with_saved_outputs(fwd)
        fwd.sym_name = StringAttr(name)
        dtypes = []
        for t in fwd.function_type.outputs.data:
            assert isinstance(t, TensorType)
            dtypes.append(str(np_dtype_of(t.element_type)))
        return module, dtypes
