"""Backward operators: :func:`vjp` compiles the reverse-mode derivative of an operator.

``pa.vjp(fn)`` is a callable on NumPy arrays: ``dx, dw, db = pa.vjp(ln)(x, w, b, dy)`` takes
the forward's arguments (tensors and compile-time constants, in ``fn``'s order) followed by one
cotangent per result of ``fn`` (its shape and dtype) and returns one gradient per tensor
argument (its shape and dtype), always as a tuple. The backward function is derived by the
``asc-autodiff`` pass (``passes/autodiff.py``: derivative rules, tie rules, float32
cotangents) from the forward's tensor-level IR and compiled by the ordinary pipeline, so it is
fused, tiled, double-buffered and Cube-lowered like any operator and cached like one
(``CompiledOp``; ``info["backward"]`` records the save/recompute strategy).

``pa.compile(fn, inputs, grad=True)`` also compiles the backward into the ``backward``
sub-folder of the forward's folder and records it in ``op.json`` (:func:`attach_backward`);
``pa.load_backward(op_or_folder)`` loads it.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType

from pyasc_mlir.cache import atomic_write
from pyasc_mlir.compiled_op import CompiledOp
from pyasc_mlir.errors import PyAscUsageError, caller_loc, user_facing
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.grad_cost import plain_function
from pyasc_mlir.grad_strategy import (
    SavingForward,
    check_grad_strategy,
    check_strategy,
    decide,
    saved_descs,
    split_saving,
)
from pyasc_mlir.integrity import seal
from pyasc_mlir.passes.autodiff import CHOICE_ATTR, AscAutodiffPass, backward_name
from pyasc_mlir.pipeline import make_context, top_function
from pyasc_mlir.platform import DEFAULT_PLATFORM
from pyasc_mlir.types import TensorDesc, np_dtype_of

__all__ = [
    "BACKWARD_FOLDER",
    "SAVING_FORWARD_FOLDER",
    "VJP",
    "Backward",
    "attach_backward",
    "check_grad_strategy",
    "check_strategy",
    "load_backward",
    "load_saving_forward",
    "vjp",
]


def _plain_params(fn: Callable[..., Any]) -> list[str]:
    """The parameter names of the forward ``fn``.

    Raises:
        PyAscUsageError: ``fn`` takes ``*args`` / ``**kwargs`` (not differentiable here)."""
    params = inspect.signature(fn).parameters.values()
    var = [p.name for p in params if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if var:
        raise PyAscUsageError(
            f"the backward of {fn.__name__}() cannot be derived: it takes *{var[0]} "
            "(var-args are not supported by pa.vjp / grad_mode / grad=True)",
            caller_loc(),
            f"name each tensor parameter, e.g. def {fn.__name__}(x0, x1): ...",
        )
    return [p.name for p in params]


class Backward:
    """The backward operator of ``forward`` as something ``pa.compile`` compiles: its IR is
    built by :meth:`__pyasc_build__` (the forward's module through ``asc-autodiff``). Its
    parameters are the forward's, then ``d_out<result index>`` per result, then (strategy
    ``save``) the saved values. ``decision``: :func:`pyasc_mlir.grad_strategy.decide`'s result
    (default: ``recompute``, no report); its strategy is part of the cache key."""

    def __init__(self, forward: Callable[..., Any], decision: dict[str, Any] | None = None):
        self.forward = plain_function(forward)
        self.__name__ = backward_name(self.forward.__name__)
        self.__wrapped__ = self.forward  # the cache key follows the forward's source
        self.params = _plain_params(self.forward)
        self.decision = decision
        self.strategy = decision["strategy"] if decision else "recompute"
        self.saved: list[dict[str, Any]] = decision["saved"] if decision else []
        requested = decision["requested"] if decision else None
        self.__pyasc_key__ = {"backward": self.strategy, "requested": requested}

    def __call__(self, *args: Any) -> Any:
        raise PyAscUsageError(
            f"{self.__name__} is compiled, not called as Python",
            caller_loc(),
            "call pa.vjp(fn)(*args, *cotangents) instead",
        )

    def signature_for(self, n_results: int) -> inspect.Signature:
        """The parameters for a forward with ``n_results`` results (for messages)."""
        names = [
            *self.params,
            *(f"d_out{j}" for j in range(n_results)),
            *(f"saved_{e['name']}_{i}" for i, e in enumerate(self.saved)),
        ]
        return inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
        )

    def forward_module(self, inputs: Sequence[object]) -> ModuleOp:
        """The forward's tensor-level module for its first ``len(params)`` inputs."""
        module, _ = build_module(self.forward, list(inputs[: len(self.params)]))
        return module

    def __pyasc_build__(self, inputs: Sequence[object], name: str) -> tuple[ModuleOp, list[str]]:
        """``(module, result dtypes)`` of the backward for ``inputs`` (the forward's, then the
        cotangents' descriptions, then the saved values'); the backward function is named
        ``name``.

        Raises:
            PyAscUsageError: wrong number of cotangents, or one of the wrong shape/dtype.
            PyAscCompileError: the forward has an op without a derivative rule (located)."""
        module = self.forward_module(inputs)
        fwd = top_function(module, self.forward.__name__)
        rest = list(inputs[len(self.params) :])
        self._check_cotangents(fwd, rest[: len(rest) - len(self.saved)])
        save = self.strategy == "save"
        AscAutodiffPass(function=fwd.sym_name.data, replace=True, save=save).apply(
            make_context(), module
        )
        bwd = top_function(module, backward_name(fwd.sym_name.data))
        bwd.sym_name = StringAttr(name)
        if self.decision is not None:
            report = {k: self.decision[k] for k in ("requested", "reason", "modeled")}
            bwd.attributes[CHOICE_ATTR] = StringAttr(json.dumps(report))
        self.__signature__ = self.signature_for(len(fwd.function_type.outputs.data))
        dtypes = []
        for t in bwd.function_type.outputs.data:
            assert isinstance(t, TensorType)
            dtypes.append(str(np_dtype_of(t.element_type)))
        return module, dtypes

    def _check_cotangents(self, fwd: func.FuncOp, given: list[object]) -> None:
        outs = fwd.function_type.outputs.data
        want = [
            TensorDesc(t.get_shape(), np_dtype_of(t.element_type))
            for t in outs
            if isinstance(t, TensorType)
        ]
        hint = (
            f"pass one cotangent per result of {self.forward.__name__}() after its arguments: "
            + ", ".join(f"{list(d.shape)} {np.dtype(d.dtype).name}" for d in want)
        )
        if len(given) != len(want):
            raise PyAscUsageError(
                f"{self.__name__}: expected {len(want)} cotangent(s), got {len(given)}",
                caller_loc(),
                hint,
            )
        for j, (g, w) in enumerate(zip(given, want, strict=True)):
            if not isinstance(g, TensorDesc) or (
                tuple(g.shape) != tuple(w.shape) or np.dtype(g.dtype) != np.dtype(w.dtype)
            ):
                got = (
                    f"{list(g.shape)} {np.dtype(g.dtype).name}"
                    if isinstance(g, TensorDesc)
                    else repr(g)
                )
                raise PyAscUsageError(
                    f"{self.__name__}: cotangent {j} must be {list(w.shape)} "
                    f"{np.dtype(w.dtype).name} (result {j} of {self.forward.__name__}()), "
                    f"got {got}",
                    caller_loc(),
                    hint,
                )


def _desc(a: Any) -> object:
    if isinstance(a, np.ndarray | np.generic) and np.ndim(a) > 0:
        return TensorDesc(np.shape(a), np.asarray(a).dtype)
    if hasattr(a, "shape") and hasattr(a, "dtype") and hasattr(a, "numpy"):  # torch.Tensor
        return TensorDesc(tuple(a.shape), np.dtype(str(a.dtype).removeprefix("torch.")))
    return a


class VJP:
    """``pa.vjp(fn, strategy)``: see :func:`vjp`. ``compile(*args)`` gives the
    :class:`CompiledOp` for those arguments (compiled once per shape set and cached),
    ``decision(*forward_args)`` the strategy report, ``forward(*forward_args)`` the results
    and the saved values."""

    def __init__(
        self, fn: Callable[..., Any], strategy: str = "auto", platform: str = DEFAULT_PLATFORM
    ):
        self.requested = check_strategy(strategy)
        self.platform = platform
        self.backward = Backward(fn)
        self._backwards: dict[str, Backward] = {}
        self._decisions: dict[str, dict[str, Any]] = {}

    def _split(self, args: Sequence[Any]) -> tuple[list[object], list[Any]]:
        """The descriptions of the forward's arguments in ``args`` and the arrays of all.

        Raises:
            PyAscUsageError: an argument is a tuple/list holding arrays or tensors."""
        for i, a in enumerate(args):
            if isinstance(a, tuple | list) and any(hasattr(x, "shape") for x in a):
                name = self.backward.forward.__name__
                raise PyAscUsageError(
                    f"argument {i} of {name}() is a tuple/list of arrays: pa.vjp / grad_mode "
                    "differentiate tensor arguments passed one by one",
                    caller_loc(),
                    f"give {name}() one parameter per tensor, e.g. def {name}(x, w0, w1)",
                )
        descs = [_desc(a) for a in args]
        return descs[: len(self.backward.params)], [
            a for a, d in zip(args, descs, strict=True) if isinstance(d, TensorDesc)
        ]

    def decision(self, *forward_args: Any) -> dict[str, Any]:
        """The strategy for these forward arguments (arrays, ``TensorDesc`` s, constants):
        :func:`pyasc_mlir.grad_strategy.decide` (memoised per signature)."""
        descs, _ = self._split(forward_args)
        key = repr(descs)  # per signature (a change of the forward's source: its strategy
        # may be stale, its gradients not: the compiled operators follow the source)
        if key not in self._decisions:
            fn = self.backward.forward
            self._decisions[key] = decide(fn, descs, self.requested, self.platform)
        return self._decisions[key]

    def _backward_for(self, decision: dict[str, Any]) -> Backward:
        key = json.dumps(decision, sort_keys=True)
        if key not in self._backwards:
            self._backwards[key] = Backward(self.backward.forward, decision)
        return self._backwards[key]

    @user_facing
    def compile(self, *args: Any) -> CompiledOp:
        """The compiled backward for arrays (or ``TensorDesc`` s) like ``args`` (the forward's
        arguments, then the cotangents); with strategy ``save`` it also takes the saved values
        (``forward(...)[1]``) as trailing inputs."""
        from pyasc_mlir.driver import compile as compile_op

        decision = self.decision(*args[: len(self.backward.params)])
        descs = [*(_desc(a) for a in args), *saved_descs(decision)]
        return compile_op(self._backward_for(decision), descs, platform=self.platform)

    @user_facing
    def forward(self, *args: Any, backend: str = "cpu") -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """``(results, saved)`` of the forward on ``args`` (its arguments): with strategy
        ``save`` both from one run of :class:`SavingForward` (``saved``: float32 per-row
        statistics, as ``decision(...)["saved"]`` lists them), else the ordinary forward
        and ``()``. Arrays in, arrays out (``torch.Tensor`` s in: tensors out)."""
        from pyasc_mlir.driver import compile as compile_op

        descs, arrays = self._split(args)
        decision = self.decision(*args)
        save = decision["strategy"] == "save"
        fn = SavingForward(self.backward.forward) if save else self.backward.forward
        out = compile_op(fn, descs, platform=self.platform)(*arrays, backend=backend)
        return split_saving(out if isinstance(out, tuple) else (out,), decision["saved"])

    @user_facing
    def __call__(self, *args: Any, saved: Sequence[Any] | None = None) -> tuple[Any, ...]:
        """The gradients (one per tensor argument of the forward), as a tuple. ``saved``:
        the strategy ``save``'s saved values (``forward(...)[1]``); left out, the forward is
        run here to get them.

        Raises:
            PyAscUsageError: wrong cotangent count, shape or dtype, or ``saved`` values given
                to a ``recompute`` backward (the calling line).
            PyAscCompileError: the forward cannot be differentiated (located)."""
        fwd_args = args[: len(self.backward.params)]
        decision = self.decision(*fwd_args)
        if decision["strategy"] == "recompute" and saved:
            raise PyAscUsageError(
                f"{len(saved)} saved value(s) given to the recompute backward of "
                f"{self.backward.forward.__name__}()",
                caller_loc(),
                "pass saved= only when vjp.decision(...)['strategy'] is 'save'",
            )
        if decision["strategy"] == "save" and saved is None:
            saved = self.forward(*fwd_args)[1]
        _, arrays = self._split(args)
        out = self.compile(*args)(*arrays, *(saved or ()))
        return out if isinstance(out, tuple) else (out,)


def vjp(fn: Callable[..., Any], strategy: str = "auto") -> VJP:
    """The compiled vector-Jacobian product of the operator ``fn`` (a function or a
    ``@pa.jit`` function): ``pa.vjp(fn)(*args, *cotangents) -> tuple of gradients``.

    ``args`` are ``fn``'s arguments (arrays of shape ``[...]`` f16/f32 and compile-time
    constants), ``cotangents`` one array per result of ``fn`` (its shape and dtype); the result
    is one gradient per tensor argument, of that argument's shape and dtype (computed in
    float32). Derivative and tie rules: ``passes/autodiff.py`` and ``dialects/opset_grad.py``.

    ``strategy`` (:mod:`pyasc_mlir.grad_strategy`): ``"auto"`` (the cost model chooses per
    forward signature), ``"recompute"`` or ``"save"``. With ``save`` the backward reads the
    forward's saved statistics: ``y, saved = v.forward(*args)`` then
    ``v(*args, *cotangents, saved=saved)``; without ``saved=`` the call runs the forward
    itself first. ``op.info["backward"]`` reports the strategy, the saved values and both
    strategies' MODELED µs.

    Raises:
        PyAscUsageError: ``strategy`` is not one of the three (here); on call: a wrong
            cotangent count, shape or dtype (located at the call, with the expected ones in
            the hint).
        PyAscCompileError: an op without a derivative in ``fn`` (located at its line)."""
    return VJP(fn, check_strategy(strategy))


BACKWARD_FOLDER = "backward"
"""The sub-folder of a ``compile(..., grad=True)`` output folder holding the backward
operator (itself a complete compiled folder, relocatable with its parent)."""


SAVING_FORWARD_FOLDER = "saving_forward"
"""The sub-folder holding the ``save`` strategy's forward (:class:`SavingForward`) when the
backward of a ``compile(..., grad=True)`` operator reads saved values."""


def attach_backward(
    op: CompiledOp, fn: Callable[..., Any], inputs: Sequence[object], strategy: str = "auto"
) -> None:
    """``compile(fn, inputs, grad=True, grad_strategy=strategy)``: compile the backward of
    ``fn`` for ``inputs`` and the forward's results into ``op.directory / "backward"`` (and,
    with strategy ``save``, the forward returning its saved values into
    ``"saving_forward"``) and record it in ``op.json`` (``info["backward"]``: ``folder``,
    ``name``, ``inputs`` (the forward's, then one cotangent per result, then the saved
    values), ``outputs`` (one gradient per tensor input), ``kernels``, ``saving_forward``
    (the folder or ``None``) and the strategy report of :func:`pyasc_mlir.grad_strategy.decide`:
    ``strategy``, ``saved``, ``saved_bytes``, ``requested``, ``reason``, ``modeled``);
    ``op.json`` is sealed again (:func:`pyasc_mlir.integrity.seal`).

    Raises:
        PyAscCompileError: the forward cannot be differentiated (located)."""
    from pyasc_mlir.driver import compile as compile_op

    platform = str(op.info["platform"])
    decision = decide(fn, list(inputs), strategy, platform)
    cotangents = [TensorDesc(o.shape, o.dtype) for o in op.outputs]
    target = op.directory / BACKWARD_FOLDER
    descs = [*inputs, *cotangents, *saved_descs(decision)]
    bwd = compile_op(Backward(fn, decision), descs, output_dir=target, platform=platform)
    saving = None
    if decision["strategy"] == "save":
        saving = SAVING_FORWARD_FOLDER
        compile_op(
            SavingForward(fn), list(inputs), output_dir=op.directory / saving, platform=platform
        )
    op.info["backward"] = {
        "folder": BACKWARD_FOLDER,
        "name": bwd.info["name"],
        "inputs": bwd.info["inputs"],
        "outputs": bwd.info["outputs"],
        "kernels": bwd.info["kernels"],
        "saving_forward": saving,
        **{k: v for k, v in bwd.info["backward"].items() if k != "forward"},
    }
    seal(op.info, op.directory)
    atomic_write(op.directory / "op.json", json.dumps(op.info, indent=2))


@user_facing
def load_backward(target: str | Path | CompiledOp) -> CompiledOp:
    """The backward operator of a ``compile(..., grad=True)`` operator: ``target`` is the
    forward's ``CompiledOp`` or its folder (as :func:`pyasc_mlir.load_op` takes it); the
    backward is loaded (and checked) like any compiled folder.

    Raises:
        PyAscUsageError: the operator was compiled without ``grad=True`` (no ``backward``
            entry in its ``op.json``), or ``load_op``'s errors for either folder."""
    from pyasc_mlir.driver import load_op

    op = target if isinstance(target, CompiledOp) else load_op(target)
    entry = op.info.get("backward")
    if not isinstance(entry, dict) or "folder" not in entry:
        raise PyAscUsageError(
            f"{op.directory / 'op.json'} has no backward entry",
            caller_loc(),
            "compile the operator with pa.compile(fn, inputs, grad=True)",
        )
    return load_op(op.directory / str(entry["folder"]))


@user_facing
def load_saving_forward(target: str | Path | CompiledOp) -> CompiledOp:
    """The ``save`` strategy's forward of a ``compile(..., grad=True)`` operator (``target``
    as :func:`load_backward` takes it): the forward's results, then the saved values its
    backward takes after the cotangents.

    Raises:
        PyAscUsageError: no backward entry, or its strategy is ``recompute`` (nothing saved),
            or ``load_op``'s errors."""
    from pyasc_mlir.driver import load_op

    op = target if isinstance(target, CompiledOp) else load_op(target)
    load_backward(op)  # the entry exists
    folder = op.info["backward"].get("saving_forward")
    if not folder:
        raise PyAscUsageError(
            f"the backward of {op.name} recomputes the forward: it saves nothing",
            caller_loc(),
            "compile with pa.compile(fn, inputs, grad=True, grad_strategy='save')",
        )
    return load_op(op.directory / str(folder))
