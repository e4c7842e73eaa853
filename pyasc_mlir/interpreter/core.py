"""The IR interpreter (reference executor): xDSL's interpreter with our implementations.

:func:`make_interpreter` registers xDSL's stock ``func``/``arith``/``scf``/``builtin``
implementations (the index arithmetic's hot ones replaced by the memoizing
:mod:`.index_arith`), the tensor-level ``asc`` ops (:mod:`.tensor_impls`) and, where those modules
exist, the tile-level ``asc`` ops (``tile_impls.AscTileFunctions``) and the ``ascendc`` ops
(``ascendc_impls.AscendcFunctions``). :func:`run_function` calls one ``func.func`` on NumPy
arrays.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.builtin import BuiltinFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions

from pyasc_mlir.errors import PyAscUsageError
from pyasc_mlir.interpreter.index_arith import IndexArithFunctions
from pyasc_mlir.interpreter.tensor_impls import AscTensorFunctions
from pyasc_mlir.types import np_dtype_of

__all__ = ["make_interpreter", "run_function"]

_OPTIONAL_IMPLS = (
    ("pyasc_mlir.interpreter.tile_impls", "AscTileFunctions"),
    ("pyasc_mlir.interpreter.ascendc_impls", "AscendcFunctions"),
    ("pyasc_mlir.interpreter.attention_impls", "AscAttentionFunctions"),
    ("pyasc_mlir.interpreter.loop_impls", "AscLoopFunctions"),
    ("pyasc_mlir.interpreter.nest_impls", "AscNestFunctions"),
    ("pyasc_mlir.interpreter.ascendc_scalar", "AscendcScalarFunctions"),
)


def _optional_impls() -> list[InterpreterFunctions]:
    found: list[InterpreterFunctions] = []
    for module_name, class_name in _OPTIONAL_IMPLS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:  # not written yet; a broken import inside it raises
                continue
            raise
        found.append(getattr(module, class_name)())
    return found


def make_interpreter(module: ModuleOp) -> Interpreter:
    """An xDSL :class:`Interpreter` for ``module`` that runs every pyasc-mlir IR level.

    Registers the stock func/arith/scf/builtin implementations, then ours (which may
    override stock ones: :class:`IndexArithFunctions` the hot index arithmetic)."""
    interp = Interpreter(module)
    for impls in (FuncFunctions(), ArithFunctions(), ScfFunctions(), BuiltinFunctions()):
        interp.register_implementations(impls)
    interp.register_implementations(IndexArithFunctions(), override=True)
    interp.register_implementations(AscTensorFunctions(), override=True)
    for optional in _optional_impls():
        interp.register_implementations(optional, override=True)
    return interp


def _find_func(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.walk():
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    names = [op.sym_name.data for op in module.walk() if isinstance(op, func.FuncOp)]
    raise PyAscUsageError(f"no function @{name} in the module; it has {names}")


def run_function(module: ModuleOp, name: str, args: Sequence[Any]) -> list[np.ndarray]:
    """Interpret ``func.func @name`` of ``module`` on ``args`` and return its results.

    Tensor arguments must be NumPy arrays (or array-likes) of the argument's shape; their
    dtype is converted to the argument's element type only when it is a lossless match
    (same dtype), otherwise a :class:`PyAscUsageError` is raised. Non-tensor arguments
    (tile-level buffers, scalars) are passed as given.

    Returns:
        One NumPy array per result, of the result's dtype and shape.

    Raises:
        PyAscUsageError: unknown function, wrong argument count, shape or dtype.
    """
    fop = _find_func(module, name)
    inputs = fop.function_type.inputs.data
    if len(args) != len(inputs):
        raise PyAscUsageError(f"@{name} takes {len(inputs)} arguments, got {len(args)}")
    values: list[Any] = []
    for i, (a, t) in enumerate(zip(args, inputs, strict=True)):
        if isinstance(t, TensorType):
            arr = np.asarray(a)
            want = np_dtype_of(t.element_type)
            shape = tuple(t.get_shape())
            if arr.dtype != want:
                raise PyAscUsageError(
                    f"argument {i} of @{name}: expected dtype {want.name}, got {arr.dtype.name}"
                )
            if arr.shape != shape:
                raise PyAscUsageError(
                    f"argument {i} of @{name}: expected shape {list(shape)}, got {list(arr.shape)}"
                )
            values.append(arr if arr.flags.c_contiguous else arr.copy(order="C"))
        else:
            values.append(a)
    results = make_interpreter(module).call_op(name, tuple(values))
    return [np.asarray(r) if isinstance(r, np.ndarray | np.generic) else r for r in results]
