"""The AST frontend: a Python operator function -> ``asc`` tensor-level IR.

:func:`build_module` reads the function's source with :mod:`inspect`, parses it with
:mod:`ast` and evaluates it *symbolically*: names are bound either to symbolic tensors
(:class:`SymbolicTensor`, one SSA value each) or to ordinary Python values (compile-time
constants). Python control flow (``if``, ``for``, conditional expressions, ``and``/``or``) runs
at compile time on compile-time values; on a tensor it is an error that points at the line and
suggests ``pyasc_mlir.where``. Calls to the tensor functions of :mod:`pyasc_mlir.ops` become IR;
calls to user helper functions with tensor arguments are inlined (their own source is parsed);
calls whose arguments are all compile-time values are evaluated in Python.

dtype semantics ("opmath", as PyTorch's fused kernels): every tensor has a *logical* dtype
(``float16``/``float32``; comparisons give ``bool`` masks), but arithmetic is always computed
in f32 IR: an f16 value is ``asc.cast`` to f32 once (cached) before its first arithmetic use.
A result is ``float16`` when every tensor operand is ``float16`` (Python numbers do not
promote); values are rounded to their logical dtype only by an explicit
``cast(x, float16)`` and when returned.

Every op built carries ``asc.loc = "file:line:col"`` of the Python expression it came from.

This module is the entry point. The work is split as in Triton's frontend:
:mod:`.code_generator` (the AST visitor), :mod:`.dispatch` (calls and operators),
:mod:`.semantic` and :mod:`.semantic_layout` (what tensor operations mean), :mod:`.values`
(symbolic tensors and frames), :mod:`.names` (the op-name tables), :mod:`.hints` (error hints),
:mod:`.context`, :mod:`.source` and :mod:`.signature`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from pyasc_mlir.frontend.code_generator import SHAPE_READ_ATTR, CodeGenerator
from pyasc_mlir.frontend.values import SymbolicTensor

__all__ = ["SHAPE_READ_ATTR", "SymbolicTensor", "build_module"]


def build_module(
    fn: Callable[..., Any], args: Sequence[object], name: str | None = None
) -> tuple[ModuleOp, list[str]]:
    """Compile the Python operator ``fn`` to a ``builtin.module`` of tensor-level ``asc`` IR.

    Args:
        fn: a plain ``def`` function (or bound method) defined in a source file.
        args: one entry per parameter, in order. A :class:`TensorDesc` becomes a function
            argument of type ``tensor<shape x f16|f32>`` (static dims; 0 = empty); any
            other value (int, float, bool, str, tuple, ...) is a compile-time constant baked
            into the IR.
        name: the symbol name of the ``func.func`` (default ``fn.__name__``).

    Returns:
        ``(module, result_dtypes)``: the module holds one ``func.func`` whose arguments are
        the TensorDesc args in order and whose results are the returned tensor(s) (a single
        tensor or a tuple), each of its logical dtype; ``result_dtypes`` names those dtypes
        (``"float16"``/``"float32"``). Every op in the body (and the function) carries
        ``asc.loc = "file:line:col"``.

    Raises:
        PyAscCompileError: for every mistake in the operator (unsupported syntax, Python
            control flow on tensor values, broadcast mismatches, bad axes or dtypes, unknown
            functions, recursion, wrong argument counts, returning masks or non-tensors), with
            the source location and a hint.
    """
    return CodeGenerator().build(fn, args, name)
