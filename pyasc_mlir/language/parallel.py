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

from pyasc_mlir.language.builtins import allreduce, distributed_range
from pyasc_mlir.language.kernel import LangKernel
from pyasc_mlir.platform import DEFAULT_PLATFORM, get_platform

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


def parallel(
    fn: Callable[..., Any] | None = None,
    *,
    num_workers: int = 0,
    backend: str | None = None,
    platform: str = DEFAULT_PLATFORM,
) -> Any:
    """Decorator ``@lang.parallel(num_workers=N)`` (above or below ``@lang.kernel``, or alone):
    see :class:`ParallelKernel`. ``backend``: ``"cpu"`` (default; the kernel's own when it
    wraps a ``@lang.kernel``) or ``"interp"`` (the IR interpreter).

    Raises:
        ValueError: ``num_workers`` not in ``1..`` the platform's vector cores.
        PyAscCompileError: (at the first call) a body outside the parallel form (located)."""
    cores = get_platform(platform).vector_cores
    if not isinstance(num_workers, int) or not 1 <= num_workers <= cores:
        raise ValueError(
            f"@lang.parallel: num_workers must be an int in 1..{cores} (the vector cores of "
            f"{platform}), got {num_workers!r}"
        )

    def wrap(f: Any) -> ParallelKernel:
        inner = getattr(f, "fn", f)  # a @lang.kernel under it
        if not inspect.isfunction(inner):
            raise TypeError("@lang.parallel decorates a def function or a @lang.kernel")
        chosen = str(backend or getattr(f, "backend", "cpu"))
        return ParallelKernel(inner, num_workers=num_workers, backend=chosen, platform=platform)

    return wrap(fn) if fn is not None else wrap
