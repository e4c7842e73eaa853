"""The operator's signature: its ``TensorDesc`` arguments as IR function arguments, and the
symbolic values bound to its parameters."""

from __future__ import annotations

import inspect
import types
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, SSAValue

from pyasc_mlir.errors import PyAscCompileError, SourceLoc
from pyasc_mlir.frontend.values import SymbolicTensor, holds_desc
from pyasc_mlir.types import TensorDesc, ir_type

__all__ = ["argument_types", "bind_error", "bind_operator"]


def bind_error(what: str, exc: TypeError) -> str:
    """The message for arguments that do not bind to ``what``'s signature (``exc``)."""
    text = str(exc)
    if "positional" in text or "missing" in text:
        return f"wrong number of arguments for {what}: {text}"
    return f"invalid arguments for {what}: {text}"


def argument_types(
    fn: types.FunctionType, args: Sequence[Any], def_loc: SourceLoc
) -> list[TensorType]:
    """The IR types of the tensor arguments among ``args`` (a tuple or list argument holding
    ``TensorDesc`` s contributes one per tensor), in order.

    Raises:
        PyAscCompileError: at ``def_loc`` for a dynamic or negative dim, or a NumPy array
            where a ``TensorDesc`` belongs.
    """
    arg_types: list[TensorType] = []
    for i, a in enumerate(args):
        for x in a if holds_desc(a) else [a]:
            if isinstance(x, TensorDesc):
                if any(d is None or d < 0 for d in x.shape):
                    raise PyAscCompileError(
                        f"argument {i} of {fn.__name__}() has shape {list(x.shape)}: only "
                        "static, positive dimensions are supported (or 0 for an empty "
                        "tensor)",
                        def_loc,
                        "give every dimension as an int",
                    )
                arg_types.append(TensorType(ir_type(x.dtype), x.static_shape))
            elif isinstance(x, np.ndarray):
                raise PyAscCompileError(
                    f"argument {i} of {fn.__name__}() is a NumPy array",
                    def_loc,
                    "describe tensor arguments with TensorDesc(shape, dtype) or "
                    "TensorDesc.of(array)",
                )
    return arg_types


def bind_operator(
    fn: types.FunctionType,
    bound_self: list[Any],
    args: Sequence[Any],
    block_args: Sequence[BlockArgument],
    def_loc: SourceLoc,
) -> inspect.BoundArguments:
    """``fn``'s parameters bound to ``bound_self`` then ``args``, each ``TensorDesc`` replaced
    by a :class:`SymbolicTensor` of the next block argument (named after its parameter:
    ``x``, or ``xs0``, ``xs1`` inside a tuple), defaults applied.

    Raises:
        PyAscCompileError: at ``def_loc`` when the arguments do not fit the signature.
    """
    values: list[Any] = list(bound_self)
    arg_iter = iter(block_args)

    def symbolic(x: Any) -> Any:
        if isinstance(x, TensorDesc):
            return SymbolicTensor(next(arg_iter), x.dtype, x.static_shape)
        return x

    for a in args:
        values.append(tuple(symbolic(x) for x in a) if holds_desc(a) else symbolic(a))
    try:
        bound = inspect.signature(fn).bind(*values)
    except TypeError as exc:
        raise PyAscCompileError(
            bind_error(f"{fn.__name__}()", exc),
            def_loc,
            "pass one TensorDesc or compile-time value per parameter",
        ) from None
    bound.apply_defaults()
    _name_arguments(bound)
    return bound


def _name_arguments(bound: inspect.BoundArguments) -> None:
    """Name each block argument's SSA value after its parameter (when a valid name)."""
    for pname, v in bound.arguments.items():
        items = list(enumerate(v)) if isinstance(v, tuple) else [(None, v)]
        for j, x in items:
            if isinstance(x, SymbolicTensor) and isinstance(x.value, BlockArgument):
                hint = pname if j is None else f"{pname}{j}"
                if SSAValue.is_valid_name(hint) and x.value.name_hint is None:
                    x.value.name_hint = hint
