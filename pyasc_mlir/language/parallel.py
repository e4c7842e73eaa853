"""``@lang.parallel(num_workers=N)``: a kernel whose loops are split across N cores explicitly.

::

    @lang.parallel(num_workers=4)          # with or without @lang.kernel under (or over) it
    def parallel_sum(x: lang.float32[N]) -> lang.float32[1]:
        s = 0.0
        for i in lang.distributed_range(N):  # core b takes its contiguous share
            s += x[i]
        return lang.allreduce(s)             # partials -> GM workspace, SyncAll, combine

The body is an SPMD program: every statement runs on each of the ``N`` cores, a loop over
``lang.distributed_range(n)`` runs each core's share of the iterations, a scalar updated in
it (``acc += e``, ``acc -= e``, ``acc = lang.maximum(acc, e)``, ``lang.minimum``) is a
reduction variable whose per-core partials ``lang.allreduce(acc)`` combines
(``pyasc_mlir.frontend.lang_parallel``; semantics in ``dialects/asc_loop.py``, "Parallel
nests"). Sums accumulate compensated (Kahan) in float32, per core in index order and across
cores in core order: deterministic, within a few float32 roundings of the exact sum.
Distributed loops may also write results (``y[i] = f(x[i])``, each core its share).

A parallel kernel is a :class:`~pyasc_mlir.language.kernel.LangKernel`: it compiles through
the pipeline (its body one ``asc_loop.nest``, lowered by ``asc-lower-loops`` to ONE vector
kernel on ``blockDim = N`` cores with a GM workspace and ``SyncAll()``), runs on the CPU build
or the IR interpreter (``backend="interp"``), and works with ``pa.compile``/``load_op``, the
profiler and ``PYASC_DEBUG=1`` (the body as Python: one worker) like every kernel. Its loops
run on the scalar unit (one instruction per element access).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pyasc_mlir.errors import PyAscUsageError, SourceLoc, caller_loc, user_facing
from pyasc_mlir.language.builtins import allreduce, distributed_range
from pyasc_mlir.language.kernel import LangKernel
from pyasc_mlir.platform import DEFAULT_PLATFORM, get_platform, unknown_platform

__all__ = ["ParallelKernel", "allreduce", "distributed_range", "parallel"]

WORKERS_KEY = "lang_workers"
"""The ``__pyasc_key__`` entry (part of the compile cache key) holding ``num_workers``."""


class ParallelKernel(LangKernel):
    """A ``@lang.parallel`` kernel (see the module docstring); ``num_workers`` cores."""

    kind = "parallel"

    def __init__(self, fn: Callable[..., Any], *, num_workers: int, **options: Any):
        key = dict(getattr(fn, "__pyasc_key__", {}))
        key[WORKERS_KEY] = num_workers
        fn.__pyasc_key__ = key  # type: ignore[attr-defined]
        super().__init__(fn, **options)
        self.num_workers = num_workers


@user_facing
def parallel(
    fn: Callable[..., Any] | None = None,
    *,
    num_workers: int | None = None,
    backend: str | None = None,
    platform: str | None = None,
) -> Any:
    """Decorator ``@lang.parallel(num_workers=N)`` (above or below ``@lang.kernel``, or alone):
    see :class:`ParallelKernel`. ``backend``: ``"cpu"`` (default; the kernel's own when it
    wraps a ``@lang.kernel``) or ``"interp"`` (the IR interpreter). ``platform``: the target
    (default: the wrapped ``@lang.kernel``'s, else ``910B2``); ``N`` is at most its AI Vector
    core count (``pyasc_mlir.platform``: 48 on the 910B2). A wrapped ``@lang.kernel`` keeps its
    ``double_buffer``, ``precision`` and ``dynamic_shape``.

    Raises:
        PyAscUsageError: (a ``ValueError``, at the decorator) ``num_workers`` missing, not an
            int (a bool included) or not in ``1..`` the platform's vector cores; an unknown
            platform; something other than a def function or a ``@lang.kernel`` decorated.
        PyAscCompileError: (at the first call) a body outside the parallel form (located)."""
    loc = caller_loc()
    if num_workers is None or isinstance(num_workers, bool) or not isinstance(num_workers, int):
        raise PyAscUsageError(
            "@lang.parallel needs num_workers=N (an int)"
            if num_workers is None
            else f"@lang.parallel: num_workers must be an int, got {num_workers!r} "
            f"({type(num_workers).__name__})",
            loc,
            _workers_hint(platform),
        )
    if num_workers < 1:
        raise PyAscUsageError(
            f"@lang.parallel: num_workers = {num_workers} is not a core count",
            loc,
            _workers_hint(platform),
        )
    if platform is not None:
        _check_workers(num_workers, platform, loc)

    @user_facing
    def wrap(f: Any) -> ParallelKernel:
        inner = getattr(f, "fn", f)  # a @lang.kernel under it
        if not inspect.isfunction(inner):
            raise PyAscUsageError(
                f"@lang.parallel decorates a def function or a @lang.kernel, not "
                f"{type(f).__name__}",
                loc,
                "put @lang.parallel(num_workers=N) directly over def (or over @lang.kernel)",
            )
        under = f if isinstance(f, LangKernel) else None
        target = platform or (under.platform if under is not None else DEFAULT_PLATFORM)
        _check_workers(num_workers, target, loc)
        chosen = str(backend or getattr(f, "backend", "cpu"))
        options: dict[str, Any] = {}
        if under is not None:  # what else the @lang.kernel under it was given
            options = {"double_buffer": under.double_buffer, "dynamic_shape": bool(under.dynamic)}
            options |= {"precision": under.precision, "autotune": under.autotune}
            options["tiling"] = under.tiling
        return ParallelKernel(
            inner, num_workers=num_workers, backend=chosen, platform=target, **options
        )

    return wrap(fn) if fn is not None else wrap


def _workers_hint(platform: str | None) -> str:
    name = platform or DEFAULT_PLATFORM
    try:
        cores = get_platform(name).vector_cores
    except PyAscUsageError:
        return "num_workers is the number of cores the body runs on"
    return (
        f"num_workers is the number of cores the body runs on: an int in 1..{cores} (the AI "
        f"Vector cores of the {name}{'' if platform else ', the default platform'}), e.g. "
        "@lang.parallel(num_workers=4)"
    )


def _check_workers(num_workers: int, platform: str, loc: SourceLoc | None) -> None:
    """``num_workers`` fits ``platform``'s vector cores (else a located usage error)."""
    try:
        cores = get_platform(platform).vector_cores
    except PyAscUsageError as exc:
        raise unknown_platform(platform, loc) from exc
    if num_workers > cores:
        raise PyAscUsageError(
            f"@lang.parallel: num_workers = {num_workers} is more than the {cores} AI Vector "
            f"cores of the {platform}",
            loc,
            f"use num_workers in 1..{cores} (pyasc_mlir.platform's vector_cores of {platform})",
        )
