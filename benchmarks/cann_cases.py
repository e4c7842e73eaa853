"""The published Ascend 910B2 cases of hicann/cann-bench that the cost model is checked against
(``benchmarks/data/cann_bench_910b2.json``: shapes, dtypes, attributes, published device times,
which rows are lower bounds), and each case written as a pyasc operator from its math.

Every time this module models is MODELED (``pyasc_mlir.cost_model``); every published time is a
measurement on a 910B2 (or a lower bound, where the data says so).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyasc_mlir as pa
from pyasc_mlir import cost_model, pipeline
from pyasc_mlir.emitter import kernels
from pyasc_mlir.platform import get_platform

DATA = Path(__file__).resolve().parent / "data" / "cann_bench_910b2.json"
PLATFORM = json.loads(DATA.read_text())["hardware"]
"""The SoC the published times were measured on (the data file names it)."""


@dataclass(frozen=True, eq=False)
class Case:
    """One published case. ``published_us``: device time (µs) of the built-in on a 910B2;
    ``lower_bound``: the row is the publication's cap, so the real time is at least this;
    ``upper_bound``: a host-timed figure, so the device time is at most this."""

    op: str
    case: int
    shapes: list[list[int]]
    dtype: str
    attrs: dict[str, Any]
    published_us: float
    t_hw_us: float
    lower_bound: bool
    upper_bound: bool = False

    @property
    def label(self) -> str:
        dims = " ".join("x".join(map(str, s)) for s in self.shapes)
        return f"{self.op}#{self.case} {dims} {self.dtype}"


def load_cases() -> list[Case]:
    """Every case of the data file."""
    doc = json.loads(DATA.read_text())
    return [Case(**c) for c in doc["cases"]]


def source() -> dict[str, str]:
    """Where the data file's numbers come from."""
    return json.loads(DATA.read_text())["source"]


# ------------------------------------------------------------------ the operators, from their math


def _exp(c: Case) -> Callable[..., Any]:
    base, scale, shift = c.attrs["base"], c.attrs["scale"], c.attrs["shift"]
    ln_base = 1.0 if base == -1.0 else math.log(base)  # base -1: natural exponent

    def exp_op(x):
        return pa.exp((x * scale + shift) * ln_base)

    return exp_op


def _gelu(c: Case) -> Callable[..., Any]:
    approximate = c.attrs.get("approximate", "none")  # the built-in: torch's gelu

    def gelu(x):
        return pa.gelu(x, approximate=approximate)

    return gelu


def _softmax(c: Case) -> Callable[..., Any]:
    d = c.attrs["dim"]

    def softmax(x):
        e = pa.exp(x - pa.max(x, axis=d, keepdim=True))
        return e / pa.sum(e, axis=d, keepdim=True)

    return softmax


def _rms_norm(c: Case) -> Callable[..., Any]:
    eps = c.attrs["epsilon"]

    def rms_norm(x, w):
        return x * pa.rsqrt(pa.mean(x * x, axis=-1, keepdim=True) + eps) * w

    return rms_norm


def _swi_glu(c: Case) -> Callable[..., Any]:
    rank = len(c.shapes[0])
    d = c.attrs["dim"] % rank
    half = c.shapes[0][d] // 2
    lo = tuple([slice(None)] * d + [slice(0, half)])
    hi = tuple([slice(None)] * d + [slice(half, 2 * half)])

    def swi_glu(x):
        a = x[lo]
        return a * pa.sigmoid(a) * x[hi]

    return swi_glu


def _sigmoid(c: Case) -> Callable[..., Any]:
    def sigmoid(x):
        return pa.sigmoid(x)

    return sigmoid


def _maximum(c: Case) -> Callable[..., Any]:
    def maximum(x, y):
        return pa.maximum(x, y)

    return maximum


def _mish(c: Case) -> Callable[..., Any]:
    def mish(x):
        return x * pa.tanh(pa.softplus(x))

    return mish


def _attention(c: Case) -> Callable[..., Any]:
    d = c.shapes[0][3]
    scale = 1.0 / math.sqrt(d)

    def attention(q, k, v):
        s = pa.matmul(q.transpose(1, 2), k.transpose(1, 2), transpose_b=True) * scale
        e = pa.exp(s - s.max(-1, keepdim=True))
        return ((e / e.sum(-1, keepdim=True)) @ v.transpose(1, 2)).transpose(1, 2)

    def attention_causal(q, k, v):
        heads = [x.transpose(1, 2) for x in (q, k, v)]
        out = pa.scaled_dot_product_attention(*heads, is_causal=True, scale=scale)
        return out.transpose(1, 2)

    return attention_causal if c.attrs.get("is_causal") else attention


def _gemm(c: Case) -> Callable[..., Any]:
    def gemm(a, b):
        return a @ b

    return gemm


def extra_inputs(c: Case) -> list[list[int]]:
    """Inputs our operator takes beyond the case's tensors: none (causal attention takes
    ``is_causal=True``, as the built-in takes a flag)."""
    del c
    return []


OPERATORS: dict[str, Callable[[Case], Callable[..., Any]]] = {
    "attention": _attention,
    "gemm": _gemm,
    "sigmoid": _sigmoid,
    "exp": _exp,
    "maximum": _maximum,
    "gelu": _gelu,
    "mish": _mish,
    "softmax": _softmax,
    "rms_norm": _rms_norm,
    "swi_glu": _swi_glu,
}


def walks(c: Case) -> list[cost_model.KernelWalk]:
    """Lower the case's operator (no g++) and walk its kernels for the cost model.

    Raises:
        PyAscError: the operator does not compile for this case (dtype, shape, UB).
    """
    fn = OPERATORS[c.op](c)
    descs = [pa.TensorDesc(tuple(s), c.dtype) for s in [*c.shapes, *extra_inputs(c)]]
    stages, _, _ = pipeline.lower(fn, descs, fn.__name__, PLATFORM, True)
    plat = get_platform(PLATFORM)
    return [cost_model.walk_kernel(k, plat) for k in kernels(stages["ascendc"])]
