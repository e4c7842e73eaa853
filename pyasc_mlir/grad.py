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
from pyasc_mlir.integrity import seal
from pyasc_mlir.passes.autodiff import AscAutodiffPass, backward_name
from pyasc_mlir.pipeline import make_context, top_function
from pyasc_mlir.types import TensorDesc, np_dtype_of

__all__ = ["BACKWARD_FOLDER", "VJP", "Backward", "attach_backward", "load_backward", "vjp"]


def _plain(fn: Any) -> Callable[..., Any]:
    """The Python function of ``fn`` (a ``@jit`` function's ``.fn``)."""
    inner = getattr(fn, "fn", None)
    return inner if callable(inner) and hasattr(inner, "__code__") else fn


class Backward:
    """The backward operator of ``forward`` as something ``pa.compile`` compiles: its IR is
    built by :meth:`__pyasc_build__` (the forward's module through ``asc-autodiff``). Its
    parameters are the forward's, then ``d_<result index>`` per result."""

    def __init__(self, forward: Callable[..., Any]):
        self.forward = _plain(forward)
        self.__name__ = backward_name(self.forward.__name__)
        self.__wrapped__ = self.forward  # the cache key follows the forward's source
        self.params = list(inspect.signature(self.forward).parameters)

    def __call__(self, *args: Any) -> Any:
        raise PyAscUsageError(
            f"{self.__name__} is compiled, not called as Python",
            caller_loc(),
            "call pa.vjp(fn)(*args, *cotangents) instead",
        )

    def signature_for(self, n_results: int) -> inspect.Signature:
        """The parameters for a forward with ``n_results`` results (for messages)."""
        names = [*self.params, *(f"d_out{j}" for j in range(n_results))]
        return inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
        )

    def forward_module(self, inputs: Sequence[object]) -> ModuleOp:
        """The forward's tensor-level module for its first ``len(params)`` inputs."""
        module, _ = build_module(self.forward, list(inputs[: len(self.params)]))
        return module

    def __pyasc_build__(self, inputs: Sequence[object], name: str) -> tuple[ModuleOp, list[str]]:
        """``(module, result dtypes)`` of the backward for ``inputs`` (the forward's, then the
        cotangents' descriptions); the backward function is named ``name``.

        Raises:
            PyAscUsageError: wrong number of cotangents, or one of the wrong shape/dtype.
            PyAscCompileError: the forward has an op without a derivative rule (located)."""
        module = self.forward_module(inputs)
        fwd = top_function(module, self.forward.__name__)
        self._check_cotangents(fwd, list(inputs[len(self.params) :]))
        AscAutodiffPass(function=fwd.sym_name.data, replace=True).apply(make_context(), module)
        bwd = top_function(module, backward_name(fwd.sym_name.data))
        bwd.sym_name = StringAttr(name)
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
    """``pa.vjp(fn)``: see the module docstring. ``compile(*args)`` gives the
    :class:`CompiledOp` for those arguments (compiled once per shape set and cached)."""

    def __init__(self, fn: Callable[..., Any]):
        self.backward = Backward(fn)

    @user_facing
    def compile(self, *args: Any) -> CompiledOp:
        """The compiled backward for arrays (or ``TensorDesc`` s) like ``args``."""
        from pyasc_mlir.driver import compile as compile_op

        descs = [_desc(a) for a in args]
        return compile_op(self.backward, descs)

    @user_facing
    def __call__(self, *args: Any) -> tuple[Any, ...]:
        """The gradients (one per tensor argument of the forward), as a tuple.

        Raises:
            PyAscUsageError: wrong cotangent count, shape or dtype (the calling line).
            PyAscCompileError: the forward cannot be differentiated (located)."""
        arrays = [a for a in args if isinstance(_desc(a), TensorDesc)]
        out = self.compile(*args)(*arrays)
        return out if isinstance(out, tuple) else (out,)


def vjp(fn: Callable[..., Any]) -> VJP:
    """The compiled vector-Jacobian product of the operator ``fn`` (a function or a
    ``@pa.jit`` function): ``pa.vjp(fn)(*args, *cotangents) -> tuple of gradients``.

    ``args`` are ``fn``'s arguments (arrays of shape ``[...]`` f16/f32 and compile-time
    constants), ``cotangents`` one array per result of ``fn`` (its shape and dtype); the result
    is one gradient per tensor argument, of that argument's shape and dtype (computed in
    float32). Derivative and tie rules: ``passes/autodiff.py`` and ``dialects/opset_grad.py``.

    Raises (on call):
        PyAscUsageError: a wrong cotangent count, shape or dtype (located at the call, with
            the expected ones in the hint).
        PyAscCompileError: an op without a derivative in ``fn`` (located at its line)."""
    return VJP(fn)


BACKWARD_FOLDER = "backward"
"""The sub-folder of a ``compile(..., grad=True)`` output folder holding the backward
operator (itself a complete compiled folder, relocatable with its parent)."""


def attach_backward(op: CompiledOp, fn: Callable[..., Any], inputs: Sequence[object]) -> None:
    """``compile(fn, inputs, grad=True)``: compile the backward of ``fn`` for ``inputs`` and
    the forward's results into ``op.directory / "backward"`` and record it in ``op.json``
    (``info["backward"]``: ``folder``, ``name``, ``inputs`` (the forward's, then one
    cotangent per result), ``outputs`` (one gradient per tensor input) and ``strategy``);
    ``op.json`` is sealed again (:func:`pyasc_mlir.integrity.seal`).

    Raises:
        PyAscCompileError: the forward cannot be differentiated (located)."""
    from pyasc_mlir.driver import compile as compile_op

    cotangents = [TensorDesc(o.shape, o.dtype) for o in op.outputs]
    target = op.directory / BACKWARD_FOLDER
    bwd = compile_op(Backward(fn), [*inputs, *cotangents], output_dir=target)
    op.info["backward"] = {
        "folder": BACKWARD_FOLDER,
        "name": bwd.info["name"],
        "inputs": bwd.info["inputs"],
        "outputs": bwd.info["outputs"],
        "strategy": bwd.info["backward"]["strategy"],
        "kernels": bwd.info["kernels"],
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
