"""Example operators, each written from its math, with an independent NumPy reference.

Every module ``m`` exposes:

* the kernel function(s), plain Python over tensors (``import pyasc_mlir as pa``);
* ``KERNEL``: the module's main kernel; ``VARIANTS`` (optional): case name -> overrides
  ``{"kernel", "reference", "consts", "shapes"}`` for modules with several kernels or
  compile-time configurations (``gelu``: erf/tanh forms; ``norm_family``: layer/rms/instance);
* ``reference(*arrays, **consts)``: float64 NumPy, rounded to the input dtype;
* ``make_inputs(rng, dtype, shape=..., **consts)``: a tuple of input arrays;
* ``SHAPES``: shapes of the first input used in tests; ``CONSTS``: compile-time arguments
  (by parameter name); ``REDUCTION``: whether fp32 is checked at the reduction tolerance.

``ALL`` lists ``(name, module)``; :func:`cases` expands the modules into :class:`Case`
objects, one per kernel configuration, which is what the tests and the demo iterate over.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import (
    conditional_scale,
    gelu,
    masked_sum,
    norm_family,
    residual_layernorm,
    rmsnorm,
    silu_mul,
    softmax,
)

ALL: list[tuple[str, types.ModuleType]] = [
    ("residual_layernorm", residual_layernorm),
    ("rmsnorm", rmsnorm),
    ("softmax", softmax),
    ("gelu", gelu),
    ("silu_mul", silu_mul),
    ("masked_sum", masked_sum),
    ("norm_family", norm_family),
    ("conditional_scale", conditional_scale),
]

FP16_TOL = 1e-3
BF16_TOL = 8e-3
"""bfloat16 results: rtol = atol = 8e-3 (the fp16 rule scaled by the 8x coarser ulp)."""
FP32_TOL = 1e-5
FP32_REDUCTION_TOL = 1e-4


def tolerance(dtype: Any, reduction: bool) -> float:
    """rtol = atol for a result of ``dtype`` (see ``shared/ASCEND_FACTS.md``)."""
    if np.dtype(dtype) == np.float16:
        return FP16_TOL
    if np.dtype(dtype).name == "bfloat16":  # 8 significant bits (float16: 11)
        return BF16_TOL
    return FP32_REDUCTION_TOL if reduction else FP32_TOL


def excess_error(got: np.ndarray, ref: np.ndarray, rtol: float) -> float:
    """``max(|got - ref| - rtol * |ref|)`` over elements, in float64; ``inf`` where the
    shapes differ or ``got`` has a NaN/Inf that ``ref`` does not. Within tolerance when
    ``<= atol``."""
    g = np.asarray(got, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64)
    if g.shape != r.shape:
        return float("inf")
    if g.size == 0:
        return 0.0
    bad = ~np.isfinite(g) & ~((g == r) | (np.isnan(g) & np.isnan(r)))
    if bad.any():
        return float("inf")
    with np.errstate(invalid="ignore"):
        diff = np.where(np.isfinite(r), np.abs(g - r) - rtol * np.abs(r), 0.0)
    return float(diff.max())


def max_abs_error(got: np.ndarray, ref: np.ndarray) -> float:
    """``max |got - ref|`` in float64 (``inf`` for a shape mismatch)."""
    g = np.asarray(got, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64)
    if g.shape != r.shape:
        return float("inf")
    return float(np.max(np.abs(g - r))) if g.size else 0.0


def within_tolerance(got: np.ndarray, ref: np.ndarray, tol: float) -> bool:
    """rtol = atol = ``tol``: ``max(|got - ref| - tol*|ref|) <= tol``."""
    return excess_error(got, ref, tol) <= tol


@dataclass(frozen=True)
class Case:
    """One kernel configuration of an example module."""

    name: str
    module: types.ModuleType
    kernel: Callable[..., Any]
    reference_fn: Callable[..., Any]
    consts: dict[str, Any] = field(default_factory=dict)
    shapes: tuple[tuple[int, ...], ...] = ()
    reduction: bool = False

    @property
    def params(self) -> list[str]:
        """The kernel's parameter names, in order."""
        return list(inspect.signature(self.kernel).parameters)

    @property
    def tensor_params(self) -> list[str]:
        """Parameters that are tensors (all but the compile-time constants)."""
        return [p for p in self.params if p not in self.consts]

    def make_inputs(
        self, rng: np.random.Generator, dtype: Any, shape: tuple[int, ...] | None = None
    ) -> tuple[np.ndarray, ...]:
        """Random inputs (``shape`` of the first input; default the module's default)."""
        kw = dict(self.consts)
        if shape is not None:
            kw["shape"] = tuple(shape)
        return tuple(self.module.make_inputs(rng, np.dtype(dtype), **kw))

    def reference(self, *arrays: np.ndarray) -> np.ndarray:
        """The NumPy reference on ``arrays`` with this case's constants."""
        return self.reference_fn(*arrays, **self.consts)

    def args(self, values: list[Any]) -> list[Any]:
        """Interleave tensor ``values`` (in order) with the compile-time constants, in the
        kernel's parameter order."""
        it = iter(values)
        out = [self.consts[p] if p in self.consts else next(it) for p in self.params]
        rest = list(it)
        if rest:
            raise ValueError(f"{self.name}: {len(rest)} tensor argument(s) too many")
        return out

    def tolerance(self, dtype: Any) -> float:
        return tolerance(dtype, self.reduction)


def _module_cases(name: str, module: types.ModuleType) -> list[Case]:
    base = {
        "kernel": module.KERNEL,
        "reference": module.reference,
        "consts": dict(getattr(module, "CONSTS", {})),
        "shapes": module.SHAPES,
    }
    variants = getattr(module, "VARIANTS", None) or {name: {}}
    out = []
    for case_name, over in variants.items():
        spec = {**base, **over}
        out.append(
            Case(
                case_name,
                module,
                spec["kernel"],
                spec["reference"],
                dict(spec["consts"]),
                tuple(tuple(s) for s in spec["shapes"]),
                bool(getattr(module, "REDUCTION", False)),
            )
        )
    return out


def cases() -> list[Case]:
    """Every kernel configuration of every example, in ``ALL`` order."""
    return [c for name, module in ALL for c in _module_cases(name, module)]


def get_case(name: str) -> Case:
    """The case called ``name`` (e.g. ``"gelu_tanh"``, ``"norm_family.rms"``)."""
    for c in cases():
        if c.name == name:
            return c
    raise KeyError(f"no example case {name!r}; known: {', '.join(c.name for c in cases())}")


__all__ = [
    "ALL",
    "Case",
    "cases",
    "get_case",
    "tolerance",
    "excess_error",
    "max_abs_error",
    "within_tolerance",
    "FP16_TOL",
    "BF16_TOL",
    "FP32_TOL",
    "FP32_REDUCTION_TOL",
]


E2E_CONFIGS: list[tuple[str, str, tuple[int, ...]]] = [
    ("residual_layernorm", "float32", (5, 513)),
    ("rmsnorm", "float16", (3, 4097)),
    ("softmax", "float32", (3, 4097)),
    ("softmax", "float16", (100, 33)),  # several rows per tile and a tail of rows per core
    ("gelu_erf", "float16", (4, 7)),
    ("gelu_tanh", "float32", (100, 33)),
    ("silu_mul", "float16", (2, 4097)),  # long rows without a reduction: split into chunks
    ("masked_sum", "float32", (2, 5, 33)),
    ("norm_family.layer", "float16", (6, 1)),
    ("norm_family.rms", "float32", (101, 7)),
    ("norm_family.instance", "float16", (2, 5, 513)),
    ("norm_family.instance_trailing", "float16", (2, 3, 33)),
    ("conditional_scale", "float32", (7, 1)),
]
"""One compiled configuration per example, shared by the end-to-end and check-mode tests;
together they cover row tails 1, 7, 33, 513 and 4097 in both dtypes, chunk mode, several rows
per tile, and middle-axis and trailing-axis reductions."""
