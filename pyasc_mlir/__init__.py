"""pyasc-mlir: write an Ascend NPU operator as a Python function, get a fused, tiled,
double-buffered Ascend C kernel, checked on the CPU before it meets hardware.

Quick start::

    import numpy as np
    import pyasc_mlir as pa

    @pa.jit
    def rmsnorm(x, w, eps=1e-6):
        return x * pa.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w

    y = rmsnorm(np.random.rand(8, 384).astype(np.float16), np.ones(384, np.float16))

The names below come from the modules that hold them on first use (PEP 562 module
``__getattr__``): the first access to any one of them (``pa.jit``, ``from pyasc_mlir import
compile``, ``import *``) imports them all, as an eager ``__init__`` did, but importing a
submodule alone (``pyasc_mlir.dialects``, ``pyasc_mlir.errors``) no longer imports the compiler
driver, the interpreter and the runtime. ``pyasc-opt`` needs only the dialects and passes: its
start-up (paid by every lit ``RUN`` line) went from 1.2 s to 0.6 s of CPU.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from pyasc_mlir import version
from pyasc_mlir.ops import *  # noqa: F403  (light: the operators import the compiler on use)
from pyasc_mlir.ops import __all__ as _ops_all

if TYPE_CHECKING:
    from pyasc_mlir import driver
    from pyasc_mlir.checks import (
        MemoryCheckError,
        NumericCheckError,
        enable_memory_check,
        enable_numeric_check,
        memory_check_enabled,
        numeric_check_enabled,
    )
    from pyasc_mlir.compiled_op import CompiledOp
    from pyasc_mlir.device import Tensor, empty, from_numpy, full, ones, randn, zeros
    from pyasc_mlir.driver import clear_memory_cache, compile, load_op
    from pyasc_mlir.errors import (
        PyAscCompileError,
        PyAscError,
        PyAscPerformanceWarning,
        PyAscUsageError,
    )
    from pyasc_mlir.grad import load_backward, load_saving_forward, vjp
    from pyasc_mlir.jit import JitFunction, Op, jit, operator
    from pyasc_mlir.op_library import add_op_library
    from pyasc_mlir.profiler import profiler
    from pyasc_mlir.types import TensorDesc

__version__ = version.__version__
__all__ = [
    "CompiledOp",
    "JitFunction",
    "Op",
    "PyAscCompileError",
    "PyAscError",
    "PyAscPerformanceWarning",
    "PyAscUsageError",
    "Tensor",
    "TensorDesc",
    "add_op_library",
    "clear_memory_cache",
    "compile",
    "driver",
    "empty",
    "from_numpy",
    "full",
    "ones",
    "randn",
    "zeros",
    "jit",
    "load_backward",
    "load_saving_forward",
    "load_op",
    "operator",
    "profiler",
    "vjp",
    *_ops_all,
    "MemoryCheckError",
    "NumericCheckError",
    "enable_memory_check",
    "enable_numeric_check",
    "memory_check_enabled",
    "numeric_check_enabled",
]

_LAZY: dict[str, tuple[str, ...]] = {
    "pyasc_mlir.checks": (
        "MemoryCheckError",
        "NumericCheckError",
        "enable_memory_check",
        "enable_numeric_check",
        "memory_check_enabled",
        "numeric_check_enabled",
    ),
    "pyasc_mlir.compiled_op": ("CompiledOp",),
    "pyasc_mlir.device": ("Tensor", "empty", "from_numpy", "full", "ones", "randn", "zeros"),
    "pyasc_mlir.driver": ("clear_memory_cache", "compile", "load_op"),
    "pyasc_mlir.errors": (
        "PyAscCompileError",
        "PyAscError",
        "PyAscPerformanceWarning",
        "PyAscUsageError",
    ),
    "pyasc_mlir.grad": ("load_backward", "load_saving_forward", "vjp"),
    "pyasc_mlir.jit": ("JitFunction", "Op", "jit", "operator"),
    "pyasc_mlir.op_library": ("add_op_library",),
    "pyasc_mlir.profiler": ("profiler",),
    "pyasc_mlir.types": ("TensorDesc",),
}
"""Module -> the names of ``__all__`` it holds (imported on first use)."""
_SHADOWED = frozenset({"jit", "profiler"})
"""Names of ``__all__`` that are also submodule names: the package attribute is the function
(``pa.jit``), never the submodule the import system would bind on importing it."""
_loaded = False


def _load() -> None:
    """Import every module of :data:`_LAZY` and bind its names in the package (once)."""
    global _loaded
    if _loaded:
        return
    names = globals()
    names["driver"] = importlib.import_module("pyasc_mlir.driver")
    for module_name, attrs in _LAZY.items():
        module = importlib.import_module(module_name)
        names.update({a: getattr(module, a) for a in attrs})
    _loaded = True


def __getattr__(name: str) -> Any:
    """A name of ``__all__`` on first use (:func:`_load`), or a submodule not imported yet
    (an eager ``__init__`` imported most of them: ``pa.language`` kept working)."""
    if name in __all__:
        _load()
        return globals()[name]
    if not name.startswith("__"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Package(types.ModuleType):
    """The package module: importing ``pyasc_mlir.jit`` does not rebind ``pa.jit``."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SHADOWED and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
