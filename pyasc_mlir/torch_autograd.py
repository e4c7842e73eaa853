"""Autograd formulas of :func:`pyasc_mlir.torch.custom_op` operators (``torch.library``).

A ``custom_op`` of a ``grad_mode`` operator (``@pa.jit(grad_mode=True)``,
``pa.operator(grad_mode=True)``) or of a ``CompiledOp`` compiled with ``grad=True`` gets an
autograd formula (``torch.library.register_autograd``): ``setup_context`` saves the inputs
(tensors with ``ctx.save_for_backward``, compile-time constants on ``ctx``); the backward calls a
second custom op, ``<namespace>::<name>_backward``, whose implementation runs the compiled
backward operator (``pa.vjp`` of the function, or the ``CompiledOp``'s ``backward`` folder) and
whose fake implementation gives one gradient per tensor argument of that argument's shape and
dtype. Both ops are opaque to ``torch.compile`` (eager, aot_eager, inductor) and appear as such
in ``torch.export`` graphs, the joint forward-backward graph included.

Its schema is the forward's parameters (constants without defaults), then ``Tensor[]
cotangents`` (one per result; a result that gets no gradient counts as zeros), returning
``Tensor[]`` (one gradient per tensor parameter, in order).

Two traps handled here: the dispatcher drops trailing arguments equal to their defaults before
the autograd ``Function`` sees them, so ``ctx.needs_input_grad`` can be shorter than the
``inputs`` given to ``setup_context`` (filled with defaults): the gradients returned are cut to
its length. Double backward (``create_graph=True``) is a located ``PyAscUsageError``: the
backward kernels are not themselves differentiated.

Any other ``custom_op`` gets a formula that raises a located ``PyAscUsageError`` naming the
operator, with the way to declare a backward.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from pyasc_mlir.errors import PyAscUsageError, caller_loc

__all__ = ["backward_schema", "register_backward", "register_no_backward"]

BackwardRun = Callable[[list[Any], list[torch.Tensor]], Sequence[torch.Tensor]]
"""``run(args, cotangents) -> gradients``: ``args`` are the forward's arguments in order
(tensors and constants), ``cotangents`` one tensor per result; one gradient per tensor
argument."""


def backward_schema(params: Sequence[str]) -> str:
    """The schema of the backward op for forward parameters ``params`` (``"Tensor x"``,
    ``"float eps"``: type and name, no default): those, then ``Tensor[] cotangents``."""
    names = {p.split()[-1] for p in params}
    cot = "cotangents"
    while cot in names:
        cot += "_"
    return f"({', '.join([*params, f'Tensor[] {cot}'])}) -> Tensor[]"


def register_backward(
    definition: Any,
    qualname: str,
    params: Sequence[str],
    kwonly: Sequence[str],
    run: BackwardRun,
) -> None:
    """Register ``qualname``'s autograd formula (see the module docstring).

    Args:
        definition: the forward's ``torch.library.CustomOpDef``.
        qualname: its ``"<namespace>::<name>"``; the backward is ``<qualname>_backward``.
        params: the forward's parameters as ``"<type> <name>"`` (no defaults), in order.
        kwonly: the names of its keyword-only parameters (the last ones of ``params``).
        run: runs the compiled backward (see :data:`BackwardRun`).

    Raises:
        PyAscUsageError: ``torch.library`` refuses the backward op's name or schema.
    """
    bwd_qualname = f"{qualname}_backward"

    def impl(*args: Any) -> list[torch.Tensor]:
        *fwd, cotangents = args
        return list(run(list(fwd), list(cotangents)))

    def fake(*args: Any) -> list[torch.Tensor]:
        return [torch.empty_like(a) for a in args[:-1] if isinstance(a, torch.Tensor)]

    schema = backward_schema(params)
    try:
        bwd_def = torch.library.custom_op(
            bwd_qualname, impl, mutates_args=(), device_types="cpu", schema=schema
        )
    except (RuntimeError, ValueError) as exc:
        raise PyAscUsageError(
            f"torch.library refused {bwd_qualname} with schema {schema}: {exc}",
            caller_loc(),
            "choose another name= for the operator",
        ) from None
    bwd_def.register_fake(fake)
    namespace, name = bwd_qualname.split("::")
    bwd_op = getattr(getattr(torch.ops, namespace), name).default

    def setup_context(
        ctx: Any, inputs: tuple[Any, ...], output: Any, keyword_only_inputs: Any = None
    ) -> None:
        args = [*inputs, *((keyword_only_inputs or {})[k] for k in kwonly)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, torch.Tensor)))
        ctx.pyasc_template = [None if isinstance(a, torch.Tensor) else a for a in args]
        ctx.pyasc_positional = len(inputs)
        ctx.pyasc_results = [(o.shape, o.dtype) for o in output]

    def backward(ctx: Any, grads: Sequence[torch.Tensor | None]) -> tuple[Any, ...]:
        if torch.is_grad_enabled():  # create_graph=True: a graph of the backward is asked
            raise PyAscUsageError(
                f"double backward through {qualname}: its compiled backward is not differentiable",
                caller_loc(),
                "call backward() without create_graph=True through pyasc operators",
            )
        saved = iter(ctx.saved_tensors)
        args = [next(saved) if a is None else a for a in ctx.pyasc_template]
        cotangents = [
            torch.zeros(shape, dtype=dtype) if g is None else g
            for g, (shape, dtype) in zip(grads, ctx.pyasc_results, strict=True)
        ]
        gradients = iter(bwd_op(*args, cotangents))
        per_input = [
            next(gradients) if isinstance(a, torch.Tensor) else None
            for a in args[: ctx.pyasc_positional]
        ]
        # the dispatcher dropped defaulted trailing arguments: one gradient per argument given
        needs = ctx.needs_input_grad
        return tuple(g if need else None for g, need in zip(per_input, needs, strict=False))

    definition.register_autograd(backward, setup_context=setup_context)


def register_no_backward(definition: Any, qualname: str, hint: str) -> None:
    """Register a formula for an operator without a backward: ``backward()`` through it is a
    located ``PyAscUsageError`` naming ``qualname``, with ``hint`` (how to declare one)."""

    def backward(ctx: Any, *grads: Any) -> Any:
        raise PyAscUsageError(
            f"backward through {qualname}: the operator has no backward (custom_op registers "
            "one only for a grad_mode operator or a CompiledOp compiled with grad=True)",
            caller_loc(),
            hint,
        )

    definition.register_autograd(backward)
