"""The benchmark workloads: the seed shapes of the issue, smaller ``--quick`` shapes, inputs,
and the op-by-op NumPy / PyTorch baselines each CPU-build time is compared against.

Every workload is attempted; one the compiler rejects is reported as "not supported yet" with
the compiler's own message (never replaced by something else).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import pyasc_mlir as pa
from benchmarks import ops
from examples import residual_layernorm as _rln
from examples import rmsnorm as _rms
from examples import silu_mul as _silu
from examples import softmax as _sm

Shape = tuple[int, ...]


@dataclass
class Workload:
    """One operator at its benchmark shapes.

    Attributes:
        key: short id used in results.json.
        title: human name for the tables.
        fn: the Python operator handed to ``pyasc_mlir.compile``.
        seed_shape: the issue's shape (used for compile time and the modeled NPU time in both
            modes, and for CPU-build timing in the full run).
        quick_shape: CPU-build / NumPy timing shape in ``--quick`` mode.
        interp_shape, interp_quick_shape: the moderate shape for interpreter throughput.
        descs: shape -> the ``compile`` argument list (TensorDescs and constants).
        make_inputs: (rng, shape) -> the runtime arrays.
        numpy_native: op-by-op NumPy in the tensors' own dtype (what a NumPy user writes).
        numpy_opmath: op-by-op NumPy computing in float32 and rounding once (the kernel's
            numerics).
        torch_ops: op-by-op PyTorch eager (CPU), or None.
        reference: float64 reference for the accuracy check.
        shape_note: how the seed shape was chosen.
    """

    key: str
    title: str
    fn: Callable[..., Any]
    seed_shape: Shape
    quick_shape: Shape
    interp_shape: Shape
    interp_quick_shape: Shape
    descs: Callable[[Shape], list[Any]]
    make_inputs: Callable[[np.random.Generator, Shape], tuple[np.ndarray, ...]]
    numpy_native: Callable[..., np.ndarray]
    numpy_opmath: Callable[..., np.ndarray]
    torch_ops: Callable[..., Any] | None
    reference: Callable[..., np.ndarray]
    shape_note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def shape(self, quick: bool) -> Shape:
        return self.quick_shape if quick else self.seed_shape

    def elements(self, shape: Shape) -> int:
        """Elements of the main (first) tensor input, the unit of the throughput figures."""
        first = next(d for d in self.descs(shape) if isinstance(d, pa.TensorDesc))
        return int(np.prod(first.shape))


F16 = "float16"
LN_EPS = _rln.CONSTS["eps"]
RMS_EPS = _rms.CONSTS["eps"]


def _f32(*a: np.ndarray) -> list[np.ndarray]:
    return [np.asarray(x, np.float32) for x in a]


# -- residual + LayerNorm ---------------------------------------------------------------------
def _rln_descs(s: Shape) -> list[Any]:
    return [pa.TensorDesc(s, F16)] * 2 + [pa.TensorDesc((s[-1],), F16)] * 2 + [LN_EPS]


def _rln_np(x, r, w, b, eps=LN_EPS):
    h = x + r
    d = h - h.mean(-1, keepdims=True)
    var = (d * d).mean(-1, keepdims=True)
    return d / np.sqrt(var + x.dtype.type(eps)) * w + b


def _rln_np32(x, r, w, b):
    return _rln_np(*_f32(x, r, w, b)).astype(x.dtype)


def _rln_torch(torch, x, r, w, b):
    return torch.nn.functional.layer_norm(x + r, (x.shape[-1],), w, b, LN_EPS)


# -- RMSNorm ----------------------------------------------------------------------------------
def _rms_descs(s: Shape) -> list[Any]:
    return [pa.TensorDesc(s, F16), pa.TensorDesc((s[-1],), F16), RMS_EPS]


def _rms_np(x, w, eps=RMS_EPS):
    ms = (x * x).mean(-1, keepdims=True)
    return x / np.sqrt(ms + x.dtype.type(eps)) * w


def _rms_np32(x, w):
    return _rms_np(*_f32(x, w)).astype(x.dtype)


def _rms_torch(torch, x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + RMS_EPS) * w


# -- softmax ----------------------------------------------------------------------------------
def _sm_np(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _sm_np32(x):
    return _sm_np(np.asarray(x, np.float32)).astype(x.dtype)


# -- SwiGLU (two matmuls + biases + SiLU gate: one Cube kernel) and its elementwise gate ----
def _swiglu_descs(s: Shape) -> list[Any]:
    m, k, n = s
    w, b = pa.TensorDesc((k, n), F16), pa.TensorDesc((n,), F16)
    return [pa.TensorDesc((m, k), F16), w, b, w, b]


def _swiglu_inputs(rng: np.random.Generator, s: Shape) -> tuple[np.ndarray, ...]:
    m, k, n = s
    scale = 1.0 / np.sqrt(k)
    return (
        rng.normal(0, 1, (m, k)).astype(np.float16),
        rng.normal(0, scale, (k, n)).astype(np.float16),
        rng.normal(0, 0.1, (n,)).astype(np.float16),
        rng.normal(0, scale, (k, n)).astype(np.float16),
        rng.normal(0, 0.1, (n,)).astype(np.float16),
    )


def _swiglu_np(x, w, bg, v, bu):
    g = x @ w + bg
    return g / (1 + np.exp(-g)) * (x @ v + bu)


def _swiglu_np32(x, w, bg, v, bu):
    return _swiglu_np(*_f32(x, w, bg, v, bu)).astype(x.dtype)


def _swiglu_ref(*a):
    return _swiglu_np(*(np.asarray(t, np.float64) for t in a)).astype(a[0].dtype)


def _swiglu_torch(torch, x, w, bg, v, bu):
    return torch.nn.functional.silu(x @ w + bg) * (x @ v + bu)


def _silu_np(a, b):
    return a / (1 + np.exp(-a)) * b


def _silu_np32(a, b):
    return _silu_np(*_f32(a, b)).astype(a.dtype)


# -- sine / cosine ----------------------------------------------------------------------------
def _unary_inputs(rng: np.random.Generator, s: Shape) -> tuple[np.ndarray, ...]:
    return (rng.uniform(-np.pi, np.pi, s).astype(np.float16),)


def _one_desc(s: Shape) -> list[Any]:
    return [pa.TensorDesc(s, F16)]


WORKLOADS: list[Workload] = [
    Workload(
        "residual_layernorm",
        "residual + LayerNorm",
        _rln.residual_layernorm,
        (8, 1024, 1024),
        (8, 64, 1024),
        (64, 1024),
        (16, 1024),
        _rln_descs,
        lambda rng, s: _rln.make_inputs(rng, np.float16, s),
        _rln_np,
        _rln_np32,
        _rln_torch,
        _rln.reference,
        "the issue's seed shape, fp16",
    ),
    Workload(
        "rmsnorm",
        "RMSNorm",
        _rms.rmsnorm,
        (4, 512, 4096),
        (2, 32, 4096),
        (16, 4096),
        (4, 4096),
        _rms_descs,
        lambda rng, s: _rms.make_inputs(rng, np.float16, s),
        _rms_np,
        _rms_np32,
        _rms_torch,
        _rms.reference,
        "[B, S, H] = [4, 512, 4096] (LLaMA-7B hidden size), fp16",
    ),
    Workload(
        "softmax",
        "softmax (rows)",
        _sm.softmax,
        (8192, 1024),
        (512, 1024),
        (64, 1024),
        (16, 1024),
        _one_desc,
        lambda rng, s: _sm.make_inputs(rng, np.float16, s),
        _sm_np,
        _sm_np32,
        lambda torch, x: torch.softmax(x, -1),
        _sm.reference,
        "8192 rows of 1024 (the rows of the residual+LN seed), fp16",
    ),
    Workload(
        "swiglu",
        "SwiGLU [4, 512] x [512, 2048]",
        ops.swiglu,
        (4, 512, 2048),
        (4, 512, 2048),
        (4, 512, 2048),
        (4, 512, 2048),
        _swiglu_descs,
        _swiglu_inputs,
        _swiglu_np,
        _swiglu_np32,
        _swiglu_torch,
        _swiglu_ref,
        "x [4, 512], W and V [512, 2048], biases [2048], fp16 (shape = (M, K, N)); "
        "`g = x @ w + bg; y = g * sigmoid(g) * (x @ v + bu)`",
    ),
    Workload(
        "swiglu_gate",
        "SwiGLU gate silu(g) * u only",
        _silu.silu_mul,
        (4, 2048),
        (4, 2048),
        (4, 2048),
        (4, 2048),
        lambda s: [pa.TensorDesc(s, F16)] * 2,
        lambda rng, s: _silu.make_inputs(rng, np.float16, s),
        _silu_np,
        _silu_np32,
        lambda torch, a, b: torch.nn.functional.silu(a) * b,
        _silu.reference,
        "the elementwise half of SwiGLU on the [4, 2048] matmul outputs (matmul excluded)",
    ),
    Workload(
        "sine",
        "elementwise sine",
        ops.sine,
        (64, 128, 256),
        (16, 128, 256),
        (64, 128, 256),
        (16, 128, 256),
        _one_desc,
        _unary_inputs,
        np.sin,
        lambda x: np.sin(np.asarray(x, np.float32)).astype(x.dtype),
        lambda torch, x: torch.sin(x),
        lambda x: np.sin(np.asarray(x, np.float64)).astype(x.dtype),
        "[64, 128, 256], fp16",
    ),
    Workload(
        "cosine",
        "elementwise cosine",
        ops.cosine,
        (64, 128, 256),
        (16, 128, 256),
        (64, 128, 256),
        (16, 128, 256),
        _one_desc,
        _unary_inputs,
        np.cos,
        lambda x: np.cos(np.asarray(x, np.float32)).astype(x.dtype),
        lambda torch, x: torch.cos(x),
        lambda x: np.cos(np.asarray(x, np.float64)).astype(x.dtype),
        "[64, 128, 256], fp16",
    ),
]
BY_KEY = {w.key: w for w in WORKLOADS}
