"""Torch autograd for ``grad_mode`` operators (``@pa.jit(grad_mode=True)``,
``pa.operator(grad_mode=True)``).

Called with ``torch.Tensor`` arguments of which one requires grad (and grad mode on), a
``grad_mode`` operator runs its compiled forward and returns tensors with a ``grad_fn``; their
``backward()`` runs the compiled backward operator (``pa.vjp`` of the same function: fused,
tiled kernels derived by ``asc-autodiff``) on the saved inputs and the incoming gradients
(a result that gets no gradient counts as zeros). The save/recompute strategy is decided
per signature (:mod:`pyasc_mlir.grad_strategy`): with ``save`` the forward runs as
``vjp.forward`` (its results and the saved statistics in one run), the statistics stay in
the autograd context and the backward reads them. The gradient of every tensor argument that
requires grad is returned; compile-time constants get none. Double backward
(``create_graph=True`` through it) is a :class:`~pyasc_mlir.errors.PyAscUsageError`: the
backward kernels are not themselves differentiated, and a gradient without a graph would make
a higher derivative silently wrong. Inputs and saved statistics are kept with
``ctx.save_for_backward``: an in-place change of them after the call raises torch's
"modified by an inplace operation" error on backward, and a second backward needs
``retain_graph=True``, as with torch's own operators.

torch is imported only when such a call happens.
"""

from __future__ import annotations

import sys
from typing import Any

from pyasc_mlir.errors import PyAscUsageError, caller_loc
from pyasc_mlir.grad import VJP

__all__ = ["apply", "wants_grad"]


def wants_grad(args: tuple[Any, ...]) -> bool:
    """Some argument is a ``torch.Tensor`` that requires grad, with grad mode enabled."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.is_grad_enabled():
        return False
    return any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)


_FUNCTION: Any = None


def _function() -> Any:
    """The ``torch.autograd.Function`` (made once, on first use)."""
    global _FUNCTION
    if _FUNCTION is not None:
        return _FUNCTION
    import torch

    class PyAscFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, run: Any, vjp: VJP, template: list, where: list, *ts: Any) -> Any:
            args = list(template)
            for i, t in zip(where, ts, strict=True):
                args[i] = t.detach()
            with torch.no_grad():
                if vjp.decision(*args)["strategy"] == "save":
                    outs, saved = vjp.forward(*args, backend=getattr(run, "backend", "cpu"))
                    out = outs if len(outs) > 1 else outs[0]
                else:
                    out, saved = run(*args), ()
            outs = out if isinstance(out, tuple) else (out,)
            # save_for_backward: torch's version counters then catch an in-place change of
            # an input or of a saved result after this call, and a second backward
            ctx.save_for_backward(*ts, *saved)
            ctx.pyasc = (vjp, template, where, [(o.shape, o.dtype) for o in outs])
            return out

        @staticmethod
        def backward(ctx: Any, *gys: Any) -> Any:
            vjp, template, where, metas = ctx.pyasc
            kept = [t.detach() for t in ctx.saved_tensors]
            args = list(template)
            for i, t in zip(where, kept[: len(where)], strict=True):
                args[i] = t
            saved = tuple(kept[len(where) :])
            if torch.is_grad_enabled():  # create_graph=True: a graph of the backward is asked
                raise PyAscUsageError(
                    f"double backward through {vjp.backward.forward.__name__}(): its "
                    "compiled backward is not differentiable",
                    caller_loc(),
                    "call backward() without create_graph=True through pyasc operators",
                )
            dys = [
                torch.zeros(shape, dtype=dtype) if g is None else g.contiguous()
                for g, (shape, dtype) in zip(gys, metas, strict=True)
            ]
            grads = vjp(*args, *dys, saved=saved)
            tensor_at = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
            by_arg = dict(zip(tensor_at, grads, strict=True))
            picked = [
                by_arg[i] if ctx.needs_input_grad[4 + k] else None for k, i in enumerate(where)
            ]
            return (None, None, None, None, *picked)

    _FUNCTION = PyAscFunction
    return _FUNCTION


_EAGER: Any = None


def apply(
    run: Any, fn: Any, args: tuple[Any, ...], vjps: dict[int, VJP], strategy: str = "auto"
) -> Any:
    """Call ``run(*args)`` (the operator's ordinary call) under autograd: see the module
    docstring. ``fn``: the operator's Python function (differentiated by
    ``pa.vjp(fn, strategy)``, cached in ``vjps``); ``args``: every argument, defaults bound.
    Inside ``torch.compile`` the call is a graph break (``torch.compiler.disable``): it runs
    eagerly, its autograd node included.

    Raises:
        PyAscUsageError: see :func:`_apply`."""
    global _EAGER
    if _EAGER is None:
        import torch

        _EAGER = torch.compiler.disable(_apply)
    return _EAGER(run, fn, args, vjps, strategy)


def _apply(
    run: Any, fn: Any, args: tuple[Any, ...], vjps: dict[int, VJP], strategy: str = "auto"
) -> Any:
    """:func:`apply` itself (eager).

    Raises:
        PyAscUsageError: a tuple/list-of-tensors argument that requires grad (not supported)."""
    import torch

    vjp = vjps.setdefault(0, VJP(fn, strategy))
    for i, a in enumerate(args):
        if isinstance(a, tuple | list) and any(
            isinstance(x, torch.Tensor) and x.requires_grad for x in a
        ):
            raise PyAscUsageError(
                f"argument {i} of {fn.__name__}() is a tuple of tensors that require grad",
                caller_loc(),
                "grad_mode operators differentiate tensor arguments passed one by one",
            )
    where = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    template = [None if i in where else a for i, a in enumerate(args)]
    return _function().apply(run, vjp, template, where, *[args[i] for i in where])
