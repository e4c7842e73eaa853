"""PyTorch interop: CPU ``torch.Tensor`` arguments and ``torch.library`` registration.

``@jit`` functions and ``CompiledOp`` objects accept CPU ``torch.Tensor`` arguments and then
return ``torch.Tensor`` results (see :func:`to_numpy` for the input rule). :func:`custom_op`
registers a pyasc operator with ``torch.library`` (``torch.library.custom_op``, the documented
API of PyTorch 2.4 and later), so a ``torch.nn.Module`` can call it::

    import pyasc_mlir as pa
    from pyasc_mlir.torch import custom_op

    @pa.jit
    def rmsnorm(x, w, eps=1e-6):
        return x * pa.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w

    op = custom_op(rmsnorm)          # torch.ops.pyasc.rmsnorm
    y = op(torch.randn(8, 384), torch.ones(384))

Importing ``pyasc_mlir`` does not import PyTorch; this module does (``ImportError`` with an
install hint when PyTorch is missing). Only CPU tensors run (the kernel runs as the CPU build of
the emitted Ascend C). Tested with PyTorch 2.13.
"""

from __future__ import annotations

import inspect
import keyword
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

try:
    import torch
except ImportError as exc:  # pragma: no cover - exercised only without PyTorch
    raise ImportError(
        "pyasc_mlir.torch needs PyTorch, which is not installed; install the CPU build with "
        '`pip install torch==2.13.0` (or `pip install -e ".[torch]"`)'
    ) from exc

from pyasc_mlir.compiled_op import CompiledOp
from pyasc_mlir.errors import PyAscUsageError, caller_loc, user_facing
from pyasc_mlir.grad import load_backward, load_saving_forward, vjp
from pyasc_mlir.grad_strategy import split_saving
from pyasc_mlir.jit import JitFunction, jit
from pyasc_mlir.torch_arrays import check_tensor, from_numpy, to_numpy
from pyasc_mlir.torch_autograd import register_backward, register_no_backward
from pyasc_mlir.types import TensorDesc

__all__ = ["TorchOp", "custom_op", "from_numpy", "to_numpy"]

NAMESPACE = "pyasc"
"""The ``torch.library`` namespace :func:`custom_op` registers into (``torch.ops.pyasc``)."""

_TORCH_DTYPES: dict[str, torch.dtype] = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "bool": torch.bool,
}


def _torch_dtype(name: str) -> torch.dtype:
    return _TORCH_DTYPES[name]


def _desc_of(t: torch.Tensor, what: str) -> TensorDesc:
    """The ``TensorDesc`` of a (real, fake or meta) tensor; shapes must be concrete."""
    dtype = {v: k for k, v in _TORCH_DTYPES.items()}.get(t.dtype)
    if dtype is None or dtype == "bool":
        raise PyAscUsageError(
            f"{what} is a torch {t.dtype} tensor; tensors are float16, bfloat16 or float32",
            caller_loc(),
            "convert it with .float() or .half()",
        )
    return TensorDesc(tuple(int(s) for s in t.shape), dtype)


def _constant_type(name: str, value: Any) -> str:
    """The ``torch.library`` schema type of the default ``value`` (compile-time constants
    only: int, bool, finite float, plain str)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float) and np.isfinite(value):
        return "float"
    if isinstance(value, str) and "'" not in value and "\\" not in value:
        return "str"
    raise PyAscUsageError(
        f"parameter {name!r} has default {value!r}; custom_op registers parameters with an "
        "int, bool, finite float or plain str default as compile-time constants and parameters "
        "without a default as tensors",
        caller_loc(),
        "give the constant a plain default (or none to make it a tensor)",
    )


def _default_text(name: str, value: Any) -> str:
    """``value`` as a ``torch.library`` schema default."""
    kind = _constant_type(name, value)
    shown = f"'{value}'" if kind == "str" else repr(value) if kind == "float" else value
    return f"{kind} {name}={shown}"


def _parameters(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    """``fn``'s parameters, checked for a ``torch.library`` schema.

    Raises:
        PyAscUsageError: ``*args``/``**kwargs``, or a name torch.library cannot take."""
    params = list(inspect.signature(fn).parameters.values())
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise PyAscUsageError(
                f"{fn.__name__}() takes *args/**kwargs; custom_op needs named parameters",
                caller_loc(),
                "name every tensor and constant parameter",
            )
        if keyword.iskeyword(p.name) or p.name.startswith("_"):
            raise PyAscUsageError(
                f"parameter name {p.name!r} of {fn.__name__}() cannot be a "
                "torch.library argument name",
                caller_loc(),
                "rename it",
            )
    return params


def _function_schema(fn: Callable[..., Any]) -> str:
    """The ``torch.library`` schema of a ``@jit`` function: a parameter without a default is a
    ``Tensor``; one with an int/bool/float/str default is a compile-time constant of that type.
    Results are returned as ``Tensor[]`` (their number is known only after compiling)."""
    params = []
    star = False
    for p in _parameters(fn):
        if p.kind == p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        params.append(
            f"Tensor {p.name}" if p.default is p.empty else _default_text(p.name, p.default)
        )
    return f"({', '.join(params)}) -> Tensor[]"


def _typed_params(fn: Callable[..., Any]) -> list[str]:
    """``fn``'s parameters as ``"<type> <name>"`` without defaults (the backward's schema)."""
    return [
        f"Tensor {p.name}"
        if p.default is p.empty
        else f"{_constant_type(p.name, p.default)} {p.name}"
        for p in _parameters(fn)
    ]


def _compiled_schema(op: CompiledOp) -> str:
    names = op.info.get("arg_names") or []
    if len(names) != len(op.inputs) or not all(
        n.isidentifier() and not n.startswith("_") for n in names
    ):
        names = [f"arg{i}" for i in range(len(op.inputs))]
    return f"({', '.join(f'Tensor {n}' for n in names)}) -> Tensor[]"


def _tensor_args(args: Sequence[Any], kwargs: dict[str, Any]) -> list[tuple[str, torch.Tensor]]:
    named = [(f"argument {i}", a) for i, a in enumerate(args)]
    named += [(f"argument {k!r}", a) for k, a in kwargs.items()]
    return [(w, a) for w, a in named if isinstance(a, torch.Tensor)]


class TorchOp:
    """A pyasc operator registered with ``torch.library`` (made by :func:`custom_op`).

    Calling it runs ``torch.ops.<namespace>.<name>`` and returns one tensor, or a tuple for an
    operator with several results. ``qualname`` is ``"<namespace>::<name>"``; ``op`` is the
    ``torch.ops`` overload packet (returning a list of tensors); ``definition`` the
    ``torch.library.CustomOpDef``. CPU tensors run the CPU build of the kernel; ``meta`` and
    fake tensors (``torch.compile``, ``torch.export``) get results of the compiled shapes and
    dtypes. Autograd (:mod:`pyasc_mlir.torch_autograd`): a ``grad_mode`` operator or a
    ``CompiledOp`` compiled with ``grad=True`` differentiates through its compiled backward
    (``<qualname>_backward``); any other raises a located ``PyAscUsageError`` on backward.
    Calling a non-``grad_mode`` ``@jit`` function or ``CompiledOp`` directly with a tensor
    that requires grad (in grad mode) is a located ``PyAscUsageError``.
    """

    def __init__(self, qualname: str, definition: Any):
        self.qualname = qualname
        self.definition = definition
        namespace, name = qualname.split("::")
        self.op = getattr(getattr(torch.ops, namespace), name)

    @user_facing
    def __call__(self, *args: Any, **kwargs: Any) -> torch.Tensor | tuple[torch.Tensor, ...]:
        for what, t in _tensor_args(args, kwargs):
            check_tensor(t, f"{what} of {self.qualname}", allow_meta=True)
        outs = self.op(*args, **kwargs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def __repr__(self) -> str:
        return f"TorchOp({self.qualname!r})"


def _register(
    qualname: str,
    schema: str,
    impl: Callable[..., list[torch.Tensor]],
    fake: Callable[..., list[torch.Tensor]],
) -> TorchOp:
    try:
        definition = torch.library.custom_op(
            qualname, impl, mutates_args=(), device_types="cpu", schema=schema
        )
    except (RuntimeError, ValueError) as exc:
        raise PyAscUsageError(
            f"torch.library refused {qualname} with schema {schema}: {exc}",
            caller_loc(),
            "choose another name= for the operator",
        ) from None
    definition.register_fake(fake)
    return TorchOp(qualname, definition)


def _as_list(result: Any) -> list[torch.Tensor]:
    return list(result) if isinstance(result, tuple) else [result]


def _register_jit(fn: JitFunction, qualname: str) -> TorchOp:
    def impl(*args: Any, **kwargs: Any) -> list[torch.Tensor]:
        return _as_list(fn(*args, **kwargs))

    def fake(*args: Any, **kwargs: Any) -> list[torch.Tensor]:
        bound = fn._bind(args, kwargs)
        descs = [
            _desc_of(a, f"argument {i} of {qualname}") if isinstance(a, torch.Tensor) else a
            for i, a in enumerate(bound)
        ]
        like = next(a for a in bound if isinstance(a, torch.Tensor))
        return [
            like.new_empty(d.static_shape, dtype=_torch_dtype(d.dtype))
            for d in fn.compile(*descs).outputs
        ]

    op = _register(qualname, _function_schema(fn.fn), impl, fake)
    _register_jit_backward(op, fn, qualname)
    return op


def _register_jit_backward(op: TorchOp, fn: JitFunction, qualname: str) -> None:
    """The autograd formula of ``fn``'s custom op: its ``pa.vjp`` for a ``grad_mode``
    operator, else a located error on backward."""
    if not fn.grad_mode:
        hint = f"declare {fn.fn.__name__} with @pa.jit(grad_mode=True) before custom_op"
        register_no_backward(op.definition, qualname, hint)
        return
    params = inspect.signature(fn.fn).parameters.values()
    kw_names = [p.name for p in params if p.kind == p.KEYWORD_ONLY]  # constants (torch: no
    # keyword-only tensors in a custom op)
    backward = vjp(fn.fn, "recompute")  # the op's schema returns the forward's results only

    def run(args: list[Any], cotangents: list[torch.Tensor]) -> tuple[torch.Tensor, ...]:
        return backward(*args, *cotangents)

    register_backward(op.definition, qualname, _typed_params(fn.fn), kw_names, run)


def _register_compiled(op: CompiledOp, qualname: str) -> TorchOp:
    def impl(*args: torch.Tensor) -> list[torch.Tensor]:
        return _as_list(op(*args))

    def fake(*args: torch.Tensor) -> list[torch.Tensor]:
        for i, (a, d) in enumerate(zip(args, op.inputs, strict=True)):
            if _desc_of(a, f"argument {i} of {qualname}") != d:
                raise PyAscUsageError(
                    f"argument {i} of {qualname} is {list(a.shape)} {a.dtype}, but the "
                    f"operator was compiled for {list(d.shape)} {d.dtype}",
                    caller_loc(),
                    "compile it for this shape, or register the @jit function instead",
                )
        return [args[0].new_empty(d.static_shape, dtype=_torch_dtype(d.dtype)) for d in op.outputs]

    schema = _compiled_schema(op)
    registered = _register(qualname, schema, impl, fake)
    if "backward" not in op.info:
        register_no_backward(
            registered.definition,
            qualname,
            "compile the operator with pa.compile(..., grad=True), or register its @jit "
            "function declared with grad_mode=True",
        )
        return registered
    bwd = load_backward(op)
    saving = load_saving_forward(op) if op.info["backward"].get("saving_forward") else None

    def run(args: list[Any], cotangents: list[torch.Tensor]) -> list[torch.Tensor]:
        entries = op.info["backward"]["saved"]
        saved = split_saving(_as_list(saving(*args)), entries)[1] if saving is not None else ()
        return _as_list(bwd(*args, *cotangents, *saved))

    params = schema.removeprefix("(").split(") ->")[0].split(", ")
    register_backward(registered.definition, qualname, params, [], run)
    return registered


@user_facing
def custom_op(
    fn: JitFunction | CompiledOp | Callable[..., Any],
    name: str | None = None,
    *,
    namespace: str = NAMESPACE,
) -> TorchOp:
    """Register a pyasc operator with ``torch.library`` as ``torch.ops.<namespace>.<name>``.

    Args:
        fn: a ``@jit`` function (compiled per input shape and dtype on first use), a plain
            operator function (wrapped with ``@jit``), or a ``CompiledOp`` (fixed shapes).
            For functions, parameters without a default are tensors and parameters with an
            int/bool/float/str default are compile-time constants (schema arguments of that
            type); ``*args``/``**kwargs`` are refused.
        name: the operator name (default ``fn``'s ``__name__``, or the ``CompiledOp``'s name).
        namespace: the ``torch.library`` namespace (default ``"pyasc"``).

    Returns:
        A :class:`TorchOp`: calling it returns a tensor (a tuple for several results).

    Tensors: CPU float16/bfloat16/float32 (see :func:`to_numpy`); meta and fake tensors get
    results of the shapes and dtypes the compiler gives (the fake implementation compiles the
    operator for those shapes, so no shape is guessed). Registering a name again replaces the
    earlier definition.

    Raises:
        PyAscUsageError: ``fn`` is not an operator, a parameter cannot be expressed in a
            ``torch.library`` schema, or ``torch.library`` refuses the name.
    """
    if isinstance(fn, CompiledOp):
        return _register_compiled(fn, f"{namespace}::{name or fn.name}")
    if isinstance(fn, JitFunction):
        jitted = fn
    elif inspect.isfunction(fn):
        jitted = jit(fn)
    else:
        raise PyAscUsageError(
            f"custom_op() takes a @jit function, a Python function or a "
            f"CompiledOp, not {type(fn).__name__}",
            caller_loc(),
            "decorate the operator with @pyasc_mlir.jit",
        )
    return _register_jit(jitted, f"{namespace}::{name or jitted.fn.__name__}")
