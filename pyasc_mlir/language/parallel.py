"""``@lang.parallel(num_workers=N)``: a kernel whose loop is split across N cores explicitly.

::

    @lang.parallel(num_workers=4)          # with or without @lang.kernel under (or over) it
    def parallel_sum(x: lang.float32[N]) -> lang.float32[1]:
        s = 0.0
        for i in lang.distributed_range(N):  # core b takes its contiguous, DataBlock-aligned share
            s += x[i]
        return lang.allreduce(s)             # partials -> GM workspace, SyncAll, combine

The body is a distributed reduction (:mod:`pyasc_mlir.language.parallel_plan` has the form);
it compiles to ONE Ascend C vector kernel launched on ``num_workers`` cores (blockDim =
``num_workers``, also when ``N`` is smaller: cores with an empty share contribute the start
value), see :mod:`pyasc_mlir.language.parallel_emit`. Sums accumulate compensated (Kahan) in
float32, per core in index order and across cores in core order: deterministic, within a few
float32 roundings of the exact sum. ``backend="interp"`` runs the reference executor
(:func:`run_reference`): each core's program up to the barrier, then each core's combine after
it. ``PYASC_DEBUG=1`` runs the body as Python (``distributed_range`` = ``range``,
``allreduce`` = the value: one worker).
"""

from __future__ import annotations

import inspect
import struct
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.interop import torch_to_numpy
from pyasc_mlir.language.parallel_emit import kernel_source, workspace_bytes
from pyasc_mlir.language.parallel_plan import FORM, ParallelPlan, read_plan
from pyasc_mlir.language.types import ArraySpec, read_signature
from pyasc_mlir.platform import DATA_BLOCK_BYTES, DEFAULT_PLATFORM, ceil_div, get_platform

__all__ = [
    "ParallelKernel",
    "allreduce",
    "distributed_range",
    "parallel",
    "run_reference",
    "share",
]

_DTYPES = ("float32", "float16")


def share(n: int, cores: int, b: int, align: int) -> tuple[int, int]:
    """``[start, end)`` of core ``b``'s elements: the ``ceil(n / align)`` DataBlocks split as
    the work split does (``units // cores`` each, the first ``units % cores`` one more), clipped
    to ``n``."""
    units = ceil_div(n, align)
    per, rem = divmod(units, cores)
    u0 = b * per + min(b, rem)
    u1 = u0 + per + (1 if b < rem else 0)
    return min(u0 * align, n), min(u1 * align, n)


def _kahan(acc: np.float32, comp: np.float32, e: np.float32) -> tuple[np.float32, np.float32]:
    y = np.float32(e - comp)
    s = np.float32(acc + y)
    return s, np.float32(np.float32(s - acc) - y)


def run_reference(plan: ParallelPlan, x: np.ndarray, cores: int) -> np.float32:
    """The reference executor: the same kernel as per-core programs. Phase 1 runs every core's
    program up to the barrier (its share, its partial into the workspace), phase 2 (after all
    arrived) every core's combine; all cores must agree. float32 arithmetic as the kernel's."""
    n = x.shape[0]
    align = DATA_BLOCK_BYTES // x.dtype.itemsize
    init = np.float32(plan.init)
    partials: list[tuple[np.float32, np.float32]] = []
    for b in range(cores):  # phase 1: up to SyncAll
        acc, comp = init, np.float32(0.0)
        start, end = share(n, cores, b, align)
        for v in x[start:end].astype(np.float32):
            e = np.float32(plan.py(v))
            if plan.op == "sum":
                acc, comp = _kahan(acc, comp, e)
            elif e > acc or e != e:
                acc = e
        partials.append((acc, comp))
    results = []
    for _b in range(cores):  # phase 2: after SyncAll, every core combines in core order
        total, tcomp = init, np.float32(0.0)
        for acc, comp in partials:
            if plan.op == "sum":
                total, tcomp = _kahan(total, tcomp, acc)
                total, tcomp = _kahan(total, tcomp, np.float32(-comp))
            elif acc > total or acc != acc:
                total = acc
        results.append(total)
    assert all(r == results[0] or (r != r and results[0] != results[0]) for r in results)
    return results[0]


class ParallelKernel:
    """A ``@lang.parallel`` kernel (see the module docstring). ``launch_info`` holds the last
    compiled launch: ``block_dim``, ``workspace_bytes``, ``kernel_type``, ``source``."""

    def __init__(self, fn: Callable[..., Any], num_workers: int, backend: str, platform: str):
        self.fn = fn
        self.num_workers = num_workers
        self.backend = backend
        self.platform = get_platform(platform)
        self.signature = read_signature(fn)
        self.launch_info: dict[str, Any] = {}
        self._plan: ParallelPlan | None = None
        self._libs: dict[tuple[str, str], Any] = {}
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def plan(self) -> ParallelPlan:
        """The body's distributed reduction (read once).

        Raises:
            PyAscCompileError: the body is not of the form (located)."""
        if self._plan is None:
            specs = self.signature.params
            for s in specs.values():
                if s is not None and not isinstance(s, ArraySpec):
                    raise PyAscCompileError(
                        f"@lang.parallel {self.fn.__name__}: lang.Tensor parameters (dynamic "
                        "shapes) are not supported in a parallel kernel",
                        s.loc,
                        "declare the array with its dims, e.g. x: lang.float32[N]",
                    )
            arrays = {p: len(s.dims) for p, s in specs.items() if isinstance(s, ArraySpec)}
            dims = {d for s in specs.values() if isinstance(s, ArraySpec) for d in s.dims}
            self._plan = read_plan(self.fn, arrays, {d for d in dims if isinstance(d, str)})
        return self._plan

    def _result_dtype(self) -> str:
        res = self.signature.result
        if not isinstance(res, ArraySpec) or res.dims != (1,):
            raise PyAscCompileError(
                f"@lang.parallel {self.fn.__name__}: the result must be declared as a "
                "one-element array, e.g. -> lang.float32[1]",
                res.loc if isinstance(res, ArraySpec) else None,
                FORM,
            )
        if res.dtype.name not in _DTYPES:
            raise PyAscCompileError(
                f"{res!r} results are not supported by @lang.parallel", res.loc, "use float32"
            )
        return res.dtype.name

    def __call__(self, *args: Any) -> np.ndarray:
        """Run on ``num_workers`` cores; returns the ``[1]`` result array.

        Raises:
            PyAscCompileError: a body not of the form, a result not declared ``[1]``, or
                arguments that do not fit the signature (located)."""
        from pyasc_mlir.language import debug
        from pyasc_mlir.language.kernel import bind

        args = tuple(torch_to_numpy(a, f"argument {i}") for i, a in enumerate(args))
        dims = bind(self.signature, args, self.fn.__name__)
        if debug.mode() is not None:
            env = dict(self.fn.__globals__)
            env.update(dims)
            f = self.fn
            return types.FunctionType(f.__code__, env, f.__name__, f.__defaults__, f.__closure__)(
                *args
            )
        plan, out_dtype = self.plan(), self._result_dtype()
        names = list(self.signature.params)
        x = np.ascontiguousarray(args[names.index(plan.array)])
        if x.dtype.name not in _DTYPES:
            raise PyAscCompileError(
                f"{self.fn.__name__}(): {x.dtype} input is not supported by @lang.parallel",
                self.signature.params[plan.array].loc,  # type: ignore[union-attr]
                "use float32 or float16",
            )
        if self.backend == "interp":
            self.launch_info = {"block_dim": self.num_workers, "backend": "interp"}
            return np.array([run_reference(plan, x, self.num_workers)], dtype=out_dtype)
        return self._run_cpu(plan, x, out_dtype)

    def _run_cpu(self, plan: ParallelPlan, x: np.ndarray, out_dtype: str) -> np.ndarray:
        from pyasc_mlir.runtime.cpu import CpuKernel, build_library

        key = (x.dtype.name, out_dtype)
        src = kernel_source(self.fn.__name__, plan, *key)
        if key not in self._libs:
            self._libs[key] = CpuKernel(build_library({"kernel.cpp": src}, self.platform))
        out = np.zeros(1, dtype=out_dtype)
        ws = workspace_bytes(self.num_workers)
        self._libs[key].run(self.num_workers, [x, out], struct.pack("<q", x.shape[0]), ws)
        self.launch_info = {
            "block_dim": self.num_workers,
            "workspace_bytes": ws,
            "kernel_type": "KERNEL_TYPE_AIV_ONLY",
            "source": src,
        }
        return out


def distributed_range(n: int) -> range:
    """The loop of a ``@lang.parallel`` kernel whose iterations are split across its cores
    (contiguous, 32-byte DataBlock aligned shares). Run as Python (``PYASC_DEBUG=1``) it is
    ``range(n)``: one worker doing all of them."""
    return range(n)


def allreduce(value: Any, op: str = "sum") -> Any:
    """The combine of the per-core partials of a ``@lang.parallel`` kernel (``op`` ``"sum"``
    or ``"max"``), the same result on every core. Run as Python (one worker) it is
    ``value`` as a one-element float32 array."""
    if op not in ("sum", "max"):
        raise ValueError(f"lang.allreduce: op must be 'sum' or 'max', got {op!r}")
    return np.array([value], dtype=np.float32)


def parallel(
    fn: Callable[..., Any] | None = None,
    *,
    num_workers: int = 0,
    backend: str | None = None,
    platform: str = DEFAULT_PLATFORM,
) -> Any:
    """Decorator ``@lang.parallel(num_workers=N)`` (above or below ``@lang.kernel``, or alone):
    see :class:`ParallelKernel`. ``backend``: ``"cpu"`` (default; the kernel's own when it
    wraps a ``@lang.kernel``) or ``"interp"`` (the reference executor).

    Raises:
        ValueError: ``num_workers`` not in ``1..`` the platform's vector cores."""
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
        return ParallelKernel(inner, num_workers, chosen, platform)

    return wrap(fn) if fn is not None else wrap
