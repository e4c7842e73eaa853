"""pyasc-mlir: write an Ascend NPU operator as a Python function, get a fused, tiled,
double-buffered Ascend C kernel, checked on the CPU before it meets hardware.

Quick start::

    import numpy as np
    import pyasc_mlir as pa

    @pa.jit
    def rmsnorm(x, w, eps=1e-6):
        return x * pa.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w

    y = rmsnorm(np.random.rand(8, 384).astype(np.float16), np.ones(384, np.float16))
"""

from pyasc_mlir import driver, version
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
from pyasc_mlir.ops import *  # noqa: F403
from pyasc_mlir.ops import __all__ as _ops_all
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
