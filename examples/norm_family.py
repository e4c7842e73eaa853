"""One normalisation operator, three variants chosen by a compile-time string.

* ``variant="layer"``: LayerNorm over the last axis,
  ``(x - mean) / sqrt(var + eps)`` with the population variance (``pa.var``);
* ``variant="rms"``: RMSNorm over the last axis, ``x / sqrt(mean(x^2) + eps)``;
* ``variant="instance"``: instance-style normalisation over the compile-time tuple ``axes``
  (e.g. ``axes=(1,)`` of a channels-last ``[N, HW, C]`` tensor: every (sample, channel) is
  normalised over its HW positions, a reduction over the second-to-last axis; or
  ``axes=(2,)`` of ``[N, C, HW]``, a reduction over the trailing axis).

All variants finish with ``y * weight + bias``. ``weight``/``bias`` are ``[H]`` for "layer"
and "rms", and per channel for "instance": ``x``'s shape without the batch axis, with the
normalised axes set to 1 (``[1, C]`` for ``[N, HW, C]``, ``[C, 1]`` for ``[N, C, HW]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import pyasc_mlir as pa

from ._common import f64, normal, round_to

VARIANT_NAMES = ("layer", "rms", "instance")
CONSTS = {"variant": "layer", "axes": (-1,), "eps": 1e-5}
SHAPES = [(4, 384), (1, 1), (5, 7), (3, 33), (2, 513)]
INSTANCE_SHAPES = [(2, 49, 32), (1, 1, 1), (3, 7, 33), (2, 33, 7)]
"""``[N, HW, C]`` shapes for ``variant="instance", axes=(1,)``."""
INSTANCE_TRAILING_SHAPES = [(2, 4, 49), (2, 3, 7), (1, 2, 513)]
"""``[N, C, HW]`` shapes for ``variant="instance", axes=(2,)``."""
REDUCTION = True


def norm_family(x, weight, bias, variant, axes, eps):
    if variant == "layer":
        mean = pa.mean(x, -1, keepdim=True)
        y = (x - mean) * pa.rsqrt(pa.var(x, -1, keepdim=True, unbiased=False) + eps)
    elif variant == "rms":
        y = x * pa.rsqrt(pa.mean(x**2, -1, keepdim=True) + eps)
    elif variant == "instance":
        d = x - x.mean(axes, keepdim=True)
        y = d * pa.rsqrt((d * d).mean(axes, keepdim=True) + eps)
    else:
        raise ValueError(f"unknown variant {variant!r}; use 'layer', 'rms' or 'instance'")
    return y * weight + bias


KERNEL = norm_family
VARIANTS = {
    "norm_family.layer": {"consts": {"variant": "layer", "axes": (-1,), "eps": 1e-5}},
    "norm_family.rms": {"consts": {"variant": "rms", "axes": (-1,), "eps": 1e-6}},
    "norm_family.instance": {
        "consts": {"variant": "instance", "axes": (1,), "eps": 1e-5},
        "shapes": INSTANCE_SHAPES,
    },
    "norm_family.instance_trailing": {
        "consts": {"variant": "instance", "axes": (2,), "eps": 1e-5},
        "shapes": INSTANCE_TRAILING_SHAPES,
    },
}
"""Case name -> compile-time constants (and shapes) of that configuration."""


def _norm_axes(ndim: int, variant: str, axes: tuple[int, ...]) -> tuple[int, ...]:
    if variant == "instance":
        return tuple(sorted(a % ndim for a in axes))
    return (ndim - 1,)


def reference(
    x: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray,
    variant: str = "layer",
    axes: tuple[int, ...] = (-1,),
    eps: float = 1e-5,
) -> np.ndarray:
    """float64 NumPy, rounded to ``x``'s dtype."""
    xs, w, b = f64(x, weight, bias)
    red = _norm_axes(xs.ndim, variant, axes)
    if variant == "rms":
        y = xs / np.sqrt(np.mean(xs * xs, axis=red, keepdims=True) + eps)
    elif variant in ("layer", "instance"):
        mu = np.mean(xs, axis=red, keepdims=True)
        y = (xs - mu) / np.sqrt(np.var(xs, axis=red, keepdims=True) + eps)
    else:
        raise ValueError(f"unknown variant {variant!r}")
    return round_to(y * w + b, x.dtype)


def param_shape(
    shape: tuple[int, ...], variant: str = "layer", axes: tuple[int, ...] = (-1,)
) -> tuple[int, ...]:
    """The shape of ``weight``/``bias`` for an ``x`` of ``shape``."""
    if variant != "instance":
        return (shape[-1],)
    red = _norm_axes(len(shape), variant, axes)
    return tuple(1 if i in red else d for i, d in enumerate(shape) if i > 0)


def make_inputs(
    rng: np.random.Generator,
    dtype: Any,
    shape: tuple[int, ...] = (4, 384),
    variant: str = "layer",
    axes: tuple[int, ...] = (-1,),
    **consts: Any,
) -> tuple[np.ndarray, ...]:
    """``(x, weight, bias)`` with per-channel offsets in ``x`` (what instance norm removes)."""
    pshape = param_shape(shape, variant, axes)
    offsets = rng.normal(0.0, 1.0, size=pshape)
    x = round_to(rng.normal(0.0, 1.0, size=shape) + offsets, dtype)
    return x, normal(rng, pshape, dtype, 0.1, 1.0), normal(rng, pshape, dtype, 0.1)
