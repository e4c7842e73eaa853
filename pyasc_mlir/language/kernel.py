"""``@lang.kernel``: a kernel-language function compiled like ``@pa.jit``.

The call binds the typed signature (:func:`bind`): each array argument's rank, dtype and
literal dims are checked, and every symbolic dim name takes one size (the first argument that
has it fixes it); the body then sees those names as ints. Compilation goes through
``pyasc_mlir.compile`` (the driver and its caches), whose pipeline builds the module with the
kernel-language frontend and runs ``lang-to-ascendc`` (``asc-raise-loops`` first).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.jit import JitFunction
from pyasc_mlir.language.types import ArraySpec, KernelSignature, TensorSpec, read_signature
from pyasc_mlir.platform import DEFAULT_PLATFORM
from pyasc_mlir.types import TensorDesc, dtype_name

__all__ = ["LangKernel", "Vectorized", "bind", "build_kernel_module", "kernel", "vectorize"]

LANG_ATTR = "__pyasc_lang__"
"""Set on a kernel's function: ``pyasc_mlir.pipeline`` then uses the kernel-language frontend."""


def _shape_dtype(a: Any) -> tuple[tuple[int, ...], str] | None:
    if isinstance(a, TensorDesc):
        return a.static_shape, dtype_name(a.dtype)
    if isinstance(a, np.ndarray) or hasattr(a, "__array__"):
        arr = np.asarray(a)
        return arr.shape, arr.dtype.name
    return None


def bind(sig: KernelSignature, args: Sequence[Any], fn_name: str) -> dict[str, int]:
    """The sizes of the signature's dim names for these arguments.

    Raises:
        PyAscCompileError: at the parameter's annotation: an array where none is declared (or
            the reverse), an empty array, a wrong rank, dtype or literal dim, or a dim name
            whose size differs from the one an earlier argument gave it (both named)."""
    dims: dict[str, tuple[int, str]] = {}
    for (pname, spec), a in zip(sig.params.items(), args, strict=False):
        got = _shape_dtype(a)
        if spec is None or got is None:
            if spec is not None:
                raise PyAscCompileError(
                    f"{fn_name}(): parameter {pname!r} is declared {spec!r} but got "
                    f"{type(a).__name__}",
                    spec.loc,
                    "pass a NumPy array or CPU torch tensor of that dtype",
                )
            continue
        if 0 in got[0]:
            raise PyAscCompileError(
                f"{fn_name}(): argument {pname!r} is empty (shape {list(got[0])}); "
                "kernel-language kernels take arrays with at least one element per dim",
                spec.loc,
                "skip the call for empty inputs (if x.size == 0: ...)",
            )
        if isinstance(spec, TensorSpec):
            _check_tensor(spec, pname, got, fn_name)
        else:
            _check_arg(spec, pname, got, dims, fn_name)
    return {k: v for k, (v, _) in dims.items()}


def _check_tensor(
    spec: TensorSpec, pname: str, got: tuple[tuple[int, ...], str], fn_name: str
) -> None:
    shape, dtype = got
    where = f"{fn_name}(): argument {pname!r}"
    if spec.dtype is not None and dtype != spec.dtype.name:
        raise PyAscCompileError(
            f"{where} is {dtype}, declared {spec!r}", spec.loc, "pass an array of that dtype"
        )
    if spec.rank is not None and len(shape) != spec.rank:
        raise PyAscCompileError(
            f"{where} has rank {len(shape)}, declared {spec!r}",
            spec.loc,
            "pass an array of the declared rank",
        )


def _check_arg(
    spec: ArraySpec,
    pname: str,
    got: tuple[tuple[int, ...], str],
    dims: dict[str, tuple[int, str]],
    fn_name: str,
) -> None:
    shape, dtype = got
    where = f"{fn_name}(): argument {pname!r}"
    if not spec.dtype.supported:
        raise PyAscCompileError(
            f"{where}: {spec.dtype!r} arrays are not supported by the backend yet",
            spec.loc,
            "use lang.float16, lang.bfloat16 or lang.float32",
        )
    if dtype != spec.dtype.name:
        raise PyAscCompileError(
            f"{where} is {dtype}, declared {spec!r}",
            spec.loc,
            f"convert it: x.astype(np.{spec.dtype.name})"
            if spec.dtype.name != "bfloat16"
            else "convert it to ml_dtypes.bfloat16",
        )
    if len(shape) != len(spec.dims):
        raise PyAscCompileError(
            f"{where} has shape {list(shape)} (rank {len(shape)}), declared {spec!r} "
            f"(rank {len(spec.dims)})",
            spec.loc,
            "pass an array of the declared rank",
        )
    for axis, (d, n) in enumerate(zip(spec.dims, shape, strict=True)):
        if isinstance(d, int):
            if d != n:
                raise PyAscCompileError(
                    f"{where}: axis {axis} has size {n}, declared {d} in {spec!r}",
                    spec.loc,
                    f"pass an array with {d} elements on axis {axis}",
                )
        elif d in dims and dims[d][0] != n:
            raise PyAscCompileError(
                f"{where}: dim {d} = {n} (axis {axis}), but {dims[d][1]} gave {d} = {dims[d][0]}",
                spec.loc,
                f"every {d} in the signature must have the same size",
            )
        else:
            dims.setdefault(d, (n, f"argument {pname!r}"))


def build_kernel_module(
    fn: Callable[..., Any], inputs: Sequence[object], name: str
) -> tuple[Any, list[str]]:
    """The ``asc_loop`` module of kernel ``fn`` (a function or a :class:`LangKernel`) for
    ``inputs`` (``TensorDesc`` per array parameter), its signature bound first."""
    from pyasc_mlir.frontend.lang_frontend import build_lang_module

    f = getattr(fn, "fn", fn)
    if getattr(f, LANG_ATTR, None) == "vectorize":
        from pyasc_mlir.frontend.lang_vectorize import build_vectorized_module

        assert isinstance(f, types.FunctionType)  # @lang.vectorize takes def functions only
        return build_vectorized_module(f, inputs, name)
    dims = bind(read_signature(f), list(inputs), f.__name__)
    key = getattr(f, "__pyasc_key__", {})
    precision = key.get("lang_precision", "default")
    return build_lang_module(f, inputs, name, dims, precision, key.get("lang_workers", 0))


class LangKernel(JitFunction):
    """A ``@lang.kernel`` function: callable with NumPy arrays and CPU torch tensors,
    compiled once per signature (see :class:`pyasc_mlir.jit.JitFunction`; static shapes).

    With ``PYASC_DEBUG=1`` in the environment (or under ``python -m pyasc_mlir.debugger``)
    a call runs the body as plain Python over NumPy (:mod:`pyasc_mlir.language.debug`), so
    ``print`` and ``breakpoint()`` work; ``PYASC_DEBUG=compare`` also runs the compiled
    kernel and warns when the two differ beyond the dtype's tolerance."""

    kind = "kernel"

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        precision: str = "default",
        dynamic_shape: bool = False,
        **options: Any,
    ):
        setattr(fn, LANG_ATTR, self.kind)
        target = (options.get("platform", DEFAULT_PLATFORM), options.get("double_buffer", True))
        fn.__pyasc_lang_target__ = target  # type: ignore[attr-defined]  # lang_tiles' capacity
        if precision != "default":  # part of the cache key, read by build_kernel_module
            key = dict(getattr(fn, "__pyasc_key__", {}))
            fn.__pyasc_key__ = key | {"lang_precision": precision}  # type: ignore[attr-defined]
        super().__init__(fn, dynamic=True if dynamic_shape else False, **options)
        self.precision = precision
        self.signature = read_signature(fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from pyasc_mlir.language import debug

        mode = debug.mode()
        if mode is None:
            return super().__call__(*args, **kwargs)
        return debug.call(
            self, mode, args, kwargs, lambda: super(LangKernel, self).__call__(*args, **kwargs)
        )

    def dims(self, args: Sequence[Any]) -> dict[str, int]:
        """The dim sizes these arguments bind (see :func:`bind`)."""
        return bind(self.signature, args, self.fn.__name__)

    def _record_reads(self, descs: list[object], dynamic: bool) -> None:
        build_kernel_module(self.fn, descs, self.fn.__name__)

    def _check_call(self, args: tuple[Any, ...]) -> None:
        bind(self.signature, args, self.fn.__name__)  # the declared types first
        super()._check_call(args)


class Vectorized(LangKernel):
    """A ``@lang.vectorize`` function: a scalar function applied elementwise to its array
    arguments, broadcast together (NumPy rules, as ``numpy.vectorize``); numbers are
    compile-time constants. The result has the broadcast shape and the arrays' dtype when
    they share one (else float32). One vector kernel per signature."""

    kind = "vectorize"

    def dims(self, args: Sequence[Any]) -> dict[str, int]:
        return {}


def vectorize(
    fn: Callable[..., Any] | None = None, *, backend: str = "cpu", platform: str = DEFAULT_PLATFORM
) -> Any:
    """Decorator ``@lang.vectorize``: see :class:`Vectorized`.

    Raises:
        PyAscCompileError: (at the first call) no array argument, shapes that do not
            broadcast, a body that does not return a number or uses unsupported Python."""

    def wrap(f: Callable[..., Any]) -> Vectorized:
        if not inspect.isfunction(f):
            raise TypeError("@lang.vectorize decorates a def function")
        return Vectorized(f, backend=backend, platform=platform)

    return wrap(fn) if fn is not None else wrap


def kernel(
    fn: Callable[..., Any] | None = None,
    *,
    backend: str = "cpu",
    platform: str = DEFAULT_PLATFORM,
    double_buffer: bool = True,
    precision: str = "default",
    dynamic_shape: bool = False,
    autotune: bool = False,
    tiling: dict[str, int] | None = None,
    cls: type[LangKernel] | None = None,
) -> Any:
    """Decorator ``@lang.kernel`` (or ``@lang.kernel(backend="interp")``): see
    :class:`LangKernel`. ``backend``: ``"cpu"`` (the CPU build of the emitted Ascend C) or
    ``"interp"`` (the IR interpreter). ``precision="mixed"``: float32 arguments and results,
    float16 storage inside (``pyasc_mlir.frontend.lang_precision``). ``dynamic_shape=True``:
    one compilation per ranks and dtypes, the sizes read at run time (as ``@pa.jit(
    dynamic=True)``; ``lang.Tensor`` parameters). ``autotune``/``tiling``: as ``@pa.jit``.
    ``cls``: the kernel class (``lang.cube_kernel``/``lang.fused_kernel`` pass theirs).

    Raises:
        PyAscUsageError: options given over a ``@lang.parallel`` kernel (at the decorator:
            they belong under it).
        PyAscCompileError: an unknown ``precision`` (at the decorator); at the first call a
            malformed annotation, a signature mismatch, an unsupported construct in the body
            (located)."""
    from pyasc_mlir.errors import PyAscUsageError, caller_loc
    from pyasc_mlir.frontend.lang_precision import check_precision

    loc = caller_loc()
    check_precision(precision, loc)
    options = (backend, platform, double_buffer, precision, dynamic_shape, autotune, tiling)
    defaults = ("cpu", DEFAULT_PLATFORM, True, "default", False, False, None)

    def wrap(f: Callable[..., Any]) -> Any:
        from pyasc_mlir.language.parallel import ParallelKernel

        if isinstance(f, ParallelKernel):  # @lang.kernel over @lang.parallel: already one
            if options != defaults or cls is not None:
                raise PyAscUsageError(
                    "@lang.kernel(...) over @lang.parallel: its options would be ignored",
                    loc,
                    "put @lang.kernel(...) under @lang.parallel (next to the def): "
                    "@lang.parallel keeps the options of the kernel it decorates",
                )
            return f
        if not inspect.isfunction(f):
            raise TypeError("@lang.kernel decorates a def function")
        return (cls or LangKernel)(
            f,
            backend=backend,
            platform=platform,
            double_buffer=double_buffer,
            precision=precision,
            dynamic_shape=dynamic_shape,
            autotune=autotune,
            tiling=tiling,
        )

    return wrap(fn) if fn is not None else wrap
