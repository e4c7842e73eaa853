"""``@jit`` / ``operator`` and the ``Op`` class form of the Python surface."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pyasc_mlir.driver import CompiledOp, compile
from pyasc_mlir.types import TensorDesc


class JitFunction:
    """A Python operator compiled on first call, once per signature.

    Array arguments (NumPy) become tensors; every other argument is a compile-time constant and
    part of the cache key. ``backend``: ``"cpu"`` (the CPU build of the emitted Ascend C) or
    ``"interp"`` (the IR interpreter).
    """

    def __init__(self, fn: Callable[..., Any], backend: str = "cpu", platform: str = "910B2",
                 double_buffer: bool = True, always_compile: bool = False):
        self.fn = fn
        self.backend = backend
        self.platform = platform
        self.double_buffer = double_buffer
        self.always_compile = always_compile
        self._compiled: dict[tuple, CompiledOp] = {}
        functools.update_wrapper(self, fn)

    def compile(self, *args: Any) -> CompiledOp:
        """Compile for these arguments (arrays or ``TensorDesc``) without running."""
        descs: list[object] = [
            a if isinstance(a, TensorDesc) else TensorDesc.of(np.asarray(a))
            if isinstance(a, np.ndarray) or hasattr(a, "__array__") else a for a in args]
        sig = tuple(repr(d) for d in descs)
        if self.always_compile or sig not in self._compiled:
            self._compiled[sig] = compile(self.fn, descs, platform=self.platform,
                                          double_buffer=self.double_buffer,
                                          cache=not self.always_compile)
        return self._compiled[sig]

    def __call__(self, *args: Any) -> Any:
        op = self.compile(*args)
        arrays = [a for a in args if isinstance(a, np.ndarray) or hasattr(a, "__array__")]
        return op(*arrays, backend=self.backend)


def jit(fn: Callable[..., Any] | None = None, *, backend: str = "cpu", platform: str = "910B2",
        double_buffer: bool = True, always_compile: bool = False) -> Any:
    """Decorator: ``@jit`` or ``@jit(backend="interp")``. See ``JitFunction``."""
    def wrap(f: Callable[..., Any]) -> JitFunction:
        return JitFunction(f, backend, platform, double_buffer, always_compile)
    return wrap(fn) if fn is not None else wrap


operator = jit


class Op:
    """Class form of an operator: subclass with ``inputs``/``outputs`` lists of ``TensorDesc``
    and a ``forward`` method written like a ``@jit`` function.

    ``MyOp.compile(output_dir=...)`` compiles it; ``MyOp()(*arrays)`` compiles once and runs.
    """

    inputs: list[TensorDesc] = []
    outputs: list[TensorDesc] = []
    platform = "910B2"

    def forward(self, *args: Any) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    @classmethod
    def compile(cls, output_dir: str | Path | None = None) -> CompiledOp:
        fwd = cls.forward
        op = compile(fwd, [cls, *cls.inputs], output_dir=output_dir, platform=cls.platform,
                     name=cls.__name__.lower())
        declared = [(tuple(d.shape), d.dtype) for d in cls.outputs]
        got = [(tuple(d.shape), d.dtype) for d in op.outputs]
        if declared and declared != got:
            from pyasc_mlir.errors import PyAscUsageError
            raise PyAscUsageError(f"{cls.__name__}.forward returns {got} but outputs declares "
                                  f"{declared}")
        return op

    def __call__(self, *arrays: Any) -> Any:
        if not hasattr(type(self), "_compiled_op"):
            type(self)._compiled_op = type(self).compile()
        return type(self)._compiled_op(*arrays)
