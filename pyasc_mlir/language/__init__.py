"""The kernel language: explicit-loop kernels compiled to the same fused, tiled Ascend C as
the tensor frontend (``import pyasc_mlir.language as lang``).

Example::

    import pyasc_mlir.language as lang

    @lang.kernel
    def vector_add(a: lang.float16[N], b: lang.float16[N]) -> lang.float16[N]:
        c = lang.empty_like(a)
        for i in range(N):
            c[i] = a[i] + b[i]
        return c

Dims (``N``) are names bound at the call; the annotations are read from the source, so bare
names need not exist in the module (or import them: ``from pyasc_mlir.language import M, N``).
Scalars inside a kernel compute in float32 (fp16 elements are widened on load and rounded on
store), as in the tensor frontend. See README "Kernel language".
"""

from pyasc_mlir.checks import enable_memory_check, enable_numeric_check
from pyasc_mlir.language import math
from pyasc_mlir.language.builtins import (
    abs,
    cast,
    cos,
    empty,
    empty_like,
    erf,
    exp,
    full,
    log,
    maximum,
    minimum,
    neg,
    ones,
    range,
    reciprocal,
    relu,
    rsqrt,
    scope,
    sigmoid,
    sin,
    softplus,
    sqrt,
    tanh,
    zeros,
)
from pyasc_mlir.language.kernel import LangKernel, Vectorized, kernel, vectorize
from pyasc_mlir.language.parallel import ParallelKernel, allreduce, distributed_range, parallel
from pyasc_mlir.language.tiles import global_buffer, load_2d, local_buffer, store_2d
from pyasc_mlir.language.types import (
    ArraySpec,
    Dim,
    DType,
    Tensor,
    bfloat16,
    float16,
    float32,
    int32,
)
from pyasc_mlir.language.variants import FusionWarning, cube_kernel, fused_kernel
from pyasc_mlir.profiler import profiler

B, D, H, K, L, M, N, P, S, T = (Dim(n) for n in "BDHKLMNPST")

__all__ = [
    "ArraySpec",
    "B",
    "D",
    "DType",
    "Dim",
    "FusionWarning",
    "H",
    "K",
    "L",
    "LangKernel",
    "Vectorized",
    "M",
    "N",
    "P",
    "ParallelKernel",
    "S",
    "T",
    "Tensor",
    "abs",
    "allreduce",
    "bfloat16",
    "cast",
    "cos",
    "distributed_range",
    "cube_kernel",
    "empty",
    "empty_like",
    "enable_memory_check",
    "enable_numeric_check",
    "erf",
    "exp",
    "float16",
    "float32",
    "full",
    "global_buffer",
    "fused_kernel",
    "int32",
    "kernel",
    "load_2d",
    "local_buffer",
    "log",
    "math",
    "maximum",
    "minimum",
    "neg",
    "ones",
    "parallel",
    "profiler",
    "range",
    "reciprocal",
    "relu",
    "rsqrt",
    "scope",
    "sigmoid",
    "sin",
    "softplus",
    "sqrt",
    "store_2d",
    "tanh",
    "vectorize",
    "zeros",
]
