"""``@jit`` / ``operator`` and the ``Op`` class form of the Python surface."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from pyasc_mlir import grad_torch, pipeline
from pyasc_mlir.autotune import tune
from pyasc_mlir.compiled_op import BACKENDS, CompiledOp
from pyasc_mlir.driver import compile
from pyasc_mlir.errors import PyAscError, PyAscUsageError, SourceLoc, caller_loc, user_facing
from pyasc_mlir.frontend import reads
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.grad_strategy import check_grad_strategy
from pyasc_mlir.interop import same_kind_as, torch_to_numpy, uses_tensors
from pyasc_mlir.op_class import OpBase
from pyasc_mlir.pipeline import check_tiling
from pyasc_mlir.platform import DEFAULT_PLATFORM
from pyasc_mlir.types import DTYPES, TensorDesc


def _is_array(a: Any) -> bool:
    """A tensor argument: an array or array-like, not a NumPy scalar (``np.float64(0.5)`` is a
    compile-time constant, as ``0.5`` is)."""
    return isinstance(a, np.ndarray) or (hasattr(a, "__array__") and not isinstance(a, np.generic))


def _is_array_seq(a: Any) -> bool:
    """A tuple or list of arrays: a variadic tensor-tuple argument (``f((a, b, c))``)."""
    return (
        isinstance(a, tuple | list)
        and bool(a)
        and all(_is_array(x) and not isinstance(x, TensorDesc) for x in a)
    )


def _flat_arrays(args: tuple[Any, ...]) -> list[Any]:
    """The tensor arguments in order, tuple/list arguments flattened."""
    out: list[Any] = []
    for a in args:
        if _is_array_seq(a):
            out.extend(a)
        elif _is_array(a):
            out.append(a)
    return out


def _desc(a: Any) -> Any:
    if _is_array_seq(a):
        return tuple(TensorDesc.of(np.asarray(x)) for x in a)
    return TensorDesc.of(np.asarray(a)) if _is_array(a) and not isinstance(a, TensorDesc) else a


_CONSTANTS = (int, float, str, bool, type(None))
"""Compile-time argument types that the per-call key holds by value."""


class JitFunction:
    """A Python operator compiled on first call, once per signature.

    Array arguments (NumPy) become tensors; every other argument is a compile-time constant and
    part of the cache key. ``backend``: ``"cpu"`` (the CPU build of the emitted Ascend C) or
    ``"interp"`` (the IR interpreter). ``always_compile``: compile again on every call
    (bypassing the caches; the fresh result refreshes the disk cache).

    Input rule: the tensor dtypes come from the arrays, so arrays must be float16, bfloat16
    (``ml_dtypes.bfloat16``) or float32
    (float64, integer and bool arrays are refused: convert them with ``astype`` first, or
    compile a signature with ``pyasc_mlir.compile`` whose ``CompiledOp`` converts numeric
    inputs); non-contiguous views are copied; zero-size dimensions give empty results.
    CPU ``torch.Tensor`` arguments are accepted (``pyasc_mlir.torch.to_numpy``: no copy when
    contiguous, detached, other devices refused; ``torch.bfloat16`` allowed); then the results are
    ``torch.Tensor``s too (NumPy in, NumPy out).

    Shapes (``dynamic``): ``None`` (the default) is *automatic dynamic shapes*: the first call
    compiles a static kernel for its shapes; the first call with other shapes of the same ranks
    (dtypes and constants equal) compiles once more, as ``dynamic=True`` does, and from then on
    a new shape of those ranks only computes the host tiling (no lowering, no g++), except
    where a dim the kernel needs static changes (a reduced dim, a size-1 dim: one more
    dynamic kernel for those sizes). An operator that cannot be dynamic (matmul, several
    kernels, shape reads) is compiled statically for each new shape instead. ``True``: dynamic
    from the first call; ``False``: always the exact static shapes (one kernel per shape).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        backend: str = "cpu",
        platform: str = DEFAULT_PLATFORM,
        double_buffer: bool = True,
        always_compile: bool = False,
        *,
        autotune: bool = False,
        tiling: dict[str, int] | None = None,
        dynamic: bool | None = None,
        grad_mode: bool = False,
        grad_strategy: str = "auto",
    ):
        self.fn = fn
        self.grad_mode = grad_mode
        """Torch autograd through the compiled backward (:mod:`pyasc_mlir.grad_torch`)."""
        self.grad_strategy = check_grad_strategy(grad_strategy, grad_mode, "grad_mode=True")
        """Its save/recompute strategy (:mod:`pyasc_mlir.grad_strategy`)."""
        self._vjps: dict[int, Any] = {}
        self.dynamic = dynamic
        self._dyn_ops: dict[tuple, list[CompiledOp]] = {}
        self._ranks_seen: dict[tuple, list[object]] = {}
        """Automatic dynamic shapes (``dynamic=None``): the rank keys compiled statically once,
        with the argument descriptions of that first compile."""
        self._static_ranks: set[tuple] = set()
        """... and those whose kernel cannot be dynamic (compiled per shape)."""
        self.backend = backend
        self.platform = platform
        self.double_buffer = double_buffer
        self.always_compile = always_compile
        self.autotune = autotune
        self.tiling = tiling
        if autotune and tiling:
            raise PyAscUsageError(
                "@jit(autotune=True) searches the tiling; it cannot also take a pinned tiling=",
                caller_loc(),
                "drop autotune=True to use the pinned tiling",
            )
        if backend not in BACKENDS:
            raise PyAscUsageError(
                f"unknown backend {backend!r}",
                caller_loc(),
                "use backend='cpu' (the CPU build of the emitted Ascend C) or 'interp' (the IR "
                "interpreter)",
            )
        check_tiling(tiling, double_buffer)
        self._compiled: dict[tuple, CompiledOp] = {}
        self._fast: dict[tuple, CompiledOp] = {}
        self._watch: list[reads.Read] = []
        """Every compile-time value the frontend read while compiling (globals, closure
        variables, attributes, defaults: :mod:`pyasc_mlir.frontend.reads`): when one
        changes, the in-memory kernels are dropped and the next call compiles (or hits the
        cache entry for the new values)."""
        self.compilations = 0
        """How often :meth:`compile` asked ``pyasc_mlir.compile`` for an operator (cache hits
        included): once per signature, and again after a value the operator read changed."""
        functools.update_wrapper(self, fn)

    def _check_call(self, args: tuple[Any, ...]) -> None:
        """Argument count versus the Python signature, and array dtypes, at the caller's line."""
        try:
            inspect.signature(self.fn).bind(*args)
        except TypeError as exc:
            code = getattr(inspect.unwrap(self.fn), "__code__", None)
            where = (
                f"; def {self.fn.__name__}{_plain(self.fn)} is at "
                f"{SourceLoc(code.co_filename, code.co_firstlineno, 0)}"
                if code
                else ""
            )
            raise PyAscUsageError(
                f"{self.fn.__name__}(): {exc}",
                caller_loc(),
                "pass one array per tensor parameter and one value per "
                f"compile-time parameter{where}",
            ) from None
        for i, a in enumerate(args):
            if _is_array_seq(a):
                for x in a:
                    self._check_dtype(i, x)
                continue
            if isinstance(a, list):
                raise PyAscUsageError(
                    f"argument {i} of {self.fn.__name__}() is a Python list",
                    caller_loc(),
                    "pass tensors as NumPy arrays (np.asarray(...)); compile-time values as "
                    "numbers, strings or tuples",
                )
            if not _is_array(a) or isinstance(a, TensorDesc):
                continue
            self._check_dtype(i, a)

    def _check_dtype(self, i: int, a: Any) -> None:
        if not isinstance(a, TensorDesc):
            dt = np.asarray(a).dtype
            if dt.name not in DTYPES:
                raise PyAscUsageError(
                    f"argument {i} of {self.fn.__name__}() holds {dt} elements; tensors are "
                    "float16, bfloat16 or float32",
                    caller_loc(),
                    "convert it first: x.astype(np.float32) (NumPy) or x.float() (torch); a "
                    "CompiledOp from pyasc_mlir.compile converts float and integer arrays to its "
                    "compiled dtype",
                )

    def _numpy_args(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """``torch.Tensor`` arguments (also inside tuple/list arguments) as NumPy arrays (see
        ``pyasc_mlir.torch.to_numpy``)."""

        def conv(i: int, a: Any) -> Any:
            if isinstance(a, tuple | list):
                return type(a)(
                    torch_to_numpy(x, f"argument {i}[{j}] of {self.fn.__name__}()")
                    for j, x in enumerate(a)
                )
            return torch_to_numpy(a, f"argument {i} of {self.fn.__name__}()")

        return tuple(conv(i, a) for i, a in enumerate(args))

    @user_facing
    def compile(self, *args: Any) -> CompiledOp:
        """Compile for these arguments (arrays, CPU tensors or ``TensorDesc``) without
        running."""
        return self._compile(args, bool(self.dynamic))

    def _compile(
        self, args: tuple[Any, ...], dynamic: bool, like: list[object] | None = None
    ) -> CompiledOp:
        """:meth:`compile`, as ``compile(dynamic=dynamic)``; ``like``: the descriptions of an
        earlier call, whose sizes > 1 replace this call's size-1 dims (see :func:`_widen`)."""
        args = self._numpy_args(args)
        self._check_call(args)
        descs: list[object] = [_desc(a) for a in args]
        if like is not None:
            descs = [_widen(d, w) for d, w in zip(descs, like, strict=True)]
        sig = (*(repr(d) for d in descs), dynamic)
        self._forget_if_globals_changed()
        if self.always_compile or sig not in self._compiled:
            with reads.recording() as log:
                self._compiled[sig] = compile(
                    self.fn,
                    descs,
                    platform=self.platform,
                    double_buffer=self.double_buffer,
                    cache=not self.always_compile,
                    tiling=self._tiling(descs),
                    dynamic=dynamic,
                )
                self.compilations += 1
                if not log.ran:  # a cache hit: run the frontend once, for what it reads
                    self._record_reads(descs, dynamic)
            self._watch.extend(log.reads)
        return self._compiled[sig]

    def _record_reads(self, descs: list[object], dynamic: bool) -> None:
        """Evaluate the operator in the frontend only (no passes, no g++), so that the
        recording around it sees the compile-time values it reads."""
        concrete, _ = pipeline.dynamic_request(self.fn, descs, dynamic)
        build_module(self.fn, list(concrete), self.fn.__name__)

    def _forget_if_globals_changed(self) -> None:
        if self._watch and reads.changed(self._watch):
            self._compiled.clear()
            self._fast.clear()
            self._dyn_ops.clear()
            self._ranks_seen.clear()
            self._static_ranks.clear()
            self._watch = []

    def _tiling(self, descs: list[object]) -> dict[str, int] | None:
        """The pinned tiling, or with ``autotune=True`` the winner of ``pyasc_mlir.autotune``
        (searched once per signature and cached; a search prints the winner and its pin)."""
        if not self.autotune:
            return self.tiling
        return tune(
            self.fn, descs, platform=self.platform, cache=not self.always_compile, verbose=True
        ).winner.knobs.pin

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """Keyword arguments to positional ones, in the function's parameter order."""
        try:
            bound = inspect.signature(self.fn).bind(*args, **kwargs)
        except TypeError as exc:
            raise PyAscUsageError(
                f"{self.fn.__name__}(): {exc}",
                caller_loc(),
                f"the signature is {self.fn.__name__}{_plain(self.fn)}",
            ) from None
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    @staticmethod
    def _call_key(
        args: tuple[Any, ...], rank_only: bool
    ) -> tuple[tuple[Any, ...] | None, list[np.ndarray]]:
        """A cheap per-call key and the tensor arguments (tuple/list arguments flattened), in
        one pass. The key holds shapes (``rank_only``: ranks, for ``dynamic=True``, whose
        static dims the compiled kernels check), dtypes and constant values (NumPy scalars
        too); it is ``None`` (and the list empty) for anything else: an array-like that is
        not an ``ndarray``, a tuple constant."""
        key: list[Any] = []
        arrays: list[np.ndarray] = []
        for a in args:
            if isinstance(a, np.ndarray):
                key.append((a.ndim if rank_only else a.shape, a.dtype.str))
                arrays.append(a)
            elif isinstance(a, (*_CONSTANTS, np.number, np.bool_)):
                key.append((type(a).__name__, a))
            elif _is_array_seq(a) and all(isinstance(x, np.ndarray) for x in a):
                key.append(tuple((x.ndim if rank_only else x.shape, x.dtype.str) for x in a))
                arrays.extend(a)
            else:
                return None, []
        return tuple(key), arrays

    def _dynamic_op(
        self,
        key: tuple[Any, ...],
        args: tuple[Any, ...],
        arrays: list[np.ndarray],
        like: list[object] | None = None,
    ) -> CompiledOp:
        """``dynamic=True``: a kernel compiled for these ranks and dtypes (``key``) whose
        static dims fit these arrays (compiled on a miss: the first call, or new static
        dims)."""
        shapes = tuple(a.shape for a in arrays)
        ops = self._dyn_ops.setdefault(key, [])
        for op in ops:
            if op.accepts(shapes):
                return op
        widened = self._widened_op(args, like) if like is not None else None
        if widened is not None and widened.accepts(shapes):
            op = widened
        else:  # no earlier call, widened shapes that do not compile, a size-1 dim that broadcasts
            op = self._compile(args, True)
        ops.append(op)
        return op

    def _widened_op(self, args: tuple[Any, ...], like: list[object]) -> CompiledOp | None:
        """The dynamic kernel of these arguments with their size-1 dims widened to an earlier
        call's sizes (:func:`_widen`), or ``None`` when those shapes do not compile together
        (a size-1 dim that must match another argument's dim, as the K of a concatenation
        feeding a matmul): the caller then compiles these shapes as they are."""
        try:
            return self._compile(args, True, like)
        except PyAscError:
            return None

    def _auto_op(self, args: tuple[Any, ...], arrays: list[np.ndarray]) -> CompiledOp:
        """Automatic dynamic shapes (``dynamic=None``), for shapes without a kernel yet: the
        first shapes of these ranks compile statically, later ones as ``dynamic=True`` (or
        statically again when the operator cannot be dynamic)."""
        rank, _ = self._call_key(args, rank_only=True)
        assert rank is not None  # the shape key of these arguments was not None either
        if rank in self._static_ranks or (
            rank not in self._ranks_seen and rank not in self._dyn_ops
        ):
            op = self._compile(args, False)  # checks the arguments first
            self._ranks_seen[rank] = [_desc(a) for a in self._numpy_args(args)]
            return op
        op = self._dynamic_op(rank, args, arrays, self._ranks_seen.get(rank))
        if not op.dynamic:  # no dynamic recipe: per-shape static kernels from now on
            self._static_ranks.add(rank)
            self._dyn_ops.pop(rank, None)
        return op

    @user_facing
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            args = self._bind(args, kwargs)
        if self.grad_mode and grad_torch.wants_grad(args):
            bound = self._bind(args, {})  # defaults too: the backward takes every argument
            return grad_torch.apply(self, self.fn, bound, self._vjps, self.grad_strategy)
        given = args
        tensors = uses_tensors(given)  # torch.Tensor or pa.Tensor arguments
        if tensors:
            args = self._numpy_args(args)
        key: tuple[Any, ...] | None = None
        self._forget_if_globals_changed()
        if not self.always_compile:
            key, arrays = self._call_key(args, rank_only=self.dynamic is True)
        if self.dynamic is True and key is not None:
            op = self._dynamic_op(key, args, arrays)
        else:
            cached = self._fast.get(key) if key is not None else None
            if cached is None:
                auto = key is not None and self.dynamic is None
                cached = self._auto_op(args, arrays) if auto else self.compile(*args)
                if key is not None:
                    if len(self._fast) > 4096:
                        self._fast.clear()
                    self._fast[key] = cached
            op = cached
            if key is None:
                arrays = _flat_arrays(args)
        result = op._call(arrays, self.backend)
        return same_kind_as(given, result) if tensors else result


def _widen(desc: object, like: object) -> object:
    """``desc`` with each size-1 dim that is larger in ``like`` (an earlier call's description
    of the same argument) at that size: ``compile(dynamic=True)`` makes only dims > 1 dynamic
    (a size-1 dim may broadcast), so a first shape change to one row still gives a kernel that
    takes every row count."""
    if isinstance(desc, tuple) and isinstance(like, tuple) and len(desc) == len(like):
        return tuple(_widen(d, w) for d, w in zip(desc, like, strict=True))
    if not isinstance(desc, TensorDesc) or not isinstance(like, TensorDesc):
        return desc
    if len(desc.shape) != len(like.shape):
        return desc
    shape = [
        w if d == 1 and w is not None and w > 1 else d
        for d, w in zip(desc.shape, like.shape, strict=True)
    ]
    return TensorDesc(shape, desc.dtype)


def _plain(fn: Callable[..., Any]) -> str:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return "(...)"
    return str(
        sig.replace(
            parameters=[
                p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()
            ],
            return_annotation=inspect.Signature.empty,
        )
    )


def jit(
    fn: Callable[..., Any] | None = None,
    *,
    backend: str = "cpu",
    platform: str = DEFAULT_PLATFORM,
    double_buffer: bool = True,
    always_compile: bool = False,
    autotune: bool = False,
    tiling: dict[str, int] | None = None,
    dynamic: bool | None = None,
    grad_mode: bool = False,
    grad_strategy: str = "auto",
) -> Any:
    """Decorator: ``@jit`` or ``@jit(backend="interp")``. See ``JitFunction``.

    ``grad_mode=True``: called on ``torch.Tensor`` s that require grad, the results get a
    ``grad_fn`` whose backward runs the compiled backward kernels (``pa.vjp``;
    :mod:`pyasc_mlir.grad_torch`; double backward is a ``PyAscUsageError``);
    ``grad_strategy``: ``"auto"`` (the cost model chooses per signature), ``"recompute"``
    or ``"save"`` (the forward also returns its saved statistics, kept for the backward; see
    :mod:`pyasc_mlir.grad_strategy`).

    ``dynamic=True`` compiles one kernel per ranks and dtypes (and per value of the dims the
    kernel needs static: reduced and other inner dims, size-1 dims): a call with new leading
    dims only computes the host tiling, no lowering and no g++ (see ``compile(dynamic=...)``).
    ``None`` (default): static kernels until the first shape change of a rank, then as
    ``True`` (automatic dynamic shapes, see ``JitFunction``); ``False``: static kernels only.

    ``autotune=True`` searches tile, blockDim and buffers per signature by the cost model
    (``pyasc_mlir.autotune``; the winner is cached and printed with its pin);
    ``tiling={"tile": 24, "block_dim": 40, "buffers": 2}`` pins them (see ``compile``).

    Raises:
        PyAscUsageError: both ``autotune`` and ``tiling``, a malformed ``tiling``, an
            unknown ``grad_strategy``, or one other than ``"auto"`` without ``grad_mode``.
    """

    def wrap(f: Callable[..., Any]) -> JitFunction:
        return JitFunction(
            f,
            backend,
            platform,
            double_buffer,
            always_compile,
            autotune=autotune,
            tiling=tiling,
            dynamic=dynamic,
            grad_mode=grad_mode,
            grad_strategy=grad_strategy,
        )

    return wrap(fn) if fn is not None else wrap


operator = jit


class Op(OpBase):
    """Class form of an operator: subclass with ``inputs``/``outputs`` lists of ``TensorDesc``
    (``None`` = any size), optionally ``version``, and a ``forward`` method written like a
    ``@jit`` function (see :mod:`pyasc_mlir.op_class`).

    ``pa.compile(MyOp, inputs=[...], output_dir=...)`` or ``MyOp.compile(...)`` compiles it;
    ``MyOp()(*arrays)`` compiles the declared inputs once and runs; when they cannot be
    compiled with their ``None`` dims dynamic (a matmul, a reduced dim), it compiles the
    arrays' shapes instead, once per shape.
    """

    _compiled_op: ClassVar[CompiledOp | dict[str, CompiledOp]]
    """Set per subclass on its first call: the declared compile, or the per-shape ones."""

    @classmethod
    @user_facing
    def compile(
        cls,
        output_dir: str | Path | None = None,
        inputs: list[object] | None = None,
        **options: Any,
    ) -> CompiledOp:
        """``pa.compile(cls, inputs, output_dir=output_dir, platform=cls.platform,
        **options)`` (``inputs``: default the declared ones)."""
        options.setdefault("platform", cls.platform)
        return compile(cls, inputs, output_dir=output_dir, **options)

    @user_facing
    def __call__(self, *arrays: Any) -> Any:
        cls = type(self)
        if "_compiled_op" not in vars(cls):  # per class, not inherited
            try:
                cls._compiled_op = cls.compile()
            except PyAscError:
                if all(None not in d.shape for d in cls.inputs):
                    raise  # static declarations: a real error
                cls._compiled_op = {}  # the None dims cannot be dynamic: compile per shape
        ops = cls._compiled_op
        if isinstance(ops, CompiledOp):
            return ops(*arrays)
        descs: list[object] = [
            TensorDesc.of(np.asarray(torch_to_numpy(a, f"argument {i} of {cls.__name__}()")))
            for i, a in enumerate(arrays)
        ]
        sig = repr(descs)
        if sig not in ops:
            ops[sig] = cls.compile(inputs=descs)
        return ops[sig](*arrays)
