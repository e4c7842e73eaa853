"""Special values for the fuzzer: NaN, +-inf, +-0, fp16 subnormals and the fp16 overflow edge.

With special values on (``pyasc fuzz`` by default, ``--no-special`` turns them off) an input
may carry one class of :data:`INPUT_CLASSES` -- a few of its elements replaced by values of that
class (:func:`sprinkle`) -- and constants are also drawn from :data:`SPECIAL_CONSTS`
(``float("-inf")`` in ``pa.where(mask, x, float("-inf"))``, ``x * -0.0``, ``x + 65504.0``).

The reference semantics (:mod:`pyasc_mlir.fuzzing.evaluator`) are PyTorch's and IEEE 754's: NaN
propagates through every arithmetic op, ``maximum`` / ``minimum`` / ``relu`` and every
reduction; ``maximum(-0, +0) = +0``, ``minimum(-0, +0) = -0`` (IEEE 754-2019
``maximum``/``minimum``), ``relu(-0) = -0`` (``torch.relu``), ``abs(-0) = +0``, ``-(+0) = -0``,
odd functions keep the sign of zero (``tanh``, ``sin``, ``erf``, ``x ** 3``), ``x - x = +0``,
``x * 0`` has the sign of ``x`` (``NaN`` for an infinite ``x``), comparisons with NaN are false
(``!=`` true), a cast keeps NaN, inf and the sign of zero and rounds to nearest even (``65520``
and above become ``inf`` in float16). One case is left undefined: the sign of a sum (or mean)
whose terms are all ``-0`` (IEEE addition gives ``-0``, an accumulator started at ``+0`` --
NumPy, PyTorch -- gives ``+0``); any zero passes there.

A value whose IEEE class (NaN, +inf, -inf, +0, -0) the reference knows for certain is checked
for exactly that class in every stage (:func:`classes`); the stages are compared with each
other bit for bit on NaN-ness and the sign of zero (:mod:`pyasc_mlir.fuzzing.verdicts`).
"""

from __future__ import annotations

import math

import numpy as np

F16_TINY = 2.0**-24
"""The smallest fp16 subnormal (5.96e-8)."""
F16_MAX = 65504.0
"""The largest finite fp16 value; ``65520`` (half-way to ``2**16``) rounds to inf."""

INPUT_CLASSES = ("zero", "nan", "inf", "sub", "edge", "mix")
"""The classes an input may carry, simplest first (``none``, no special values, precedes them
in the generator)."""

_VALUES = {
    "zero": (0.0, -0.0),
    "nan": (math.nan,),
    "inf": (math.inf, -math.inf),
    "sub": (F16_TINY, -F16_TINY, 3 * F16_TINY, 1023 * F16_TINY, -1023 * F16_TINY, 2.0**-15),
}
_EDGE = {
    "float16": (F16_MAX, -F16_MAX, 65472.0, 32768.0),
    "float32": (F16_MAX, -F16_MAX, 65519.99609375, 65520.0, -65520.0, 65536.0, 65504.5),
}
_FRACTION = {"nan": 1 / 64, "inf": 1 / 32}
"""Share of the elements replaced (default 1/8): NaN and inf spread through reductions."""

SPECIAL_CONSTS = (-math.inf, math.inf, math.nan, -0.0, F16_MAX, 65520.0, F16_TINY, -F16_MAX)
"""Constants drawn in addition to the generator's ordinary ones."""


def class_values(cls: str, dtype: str) -> tuple[float, ...]:
    """The values an input of ``dtype`` with special class ``cls`` gets (``ValueError`` for an
    unknown class)."""
    if cls == "edge":
        return _EDGE[dtype]
    if cls == "mix":
        return tuple(v for c in ("zero", "nan", "inf", "sub") for v in _VALUES[c]) + _EDGE[dtype]
    if cls in _VALUES:
        return _VALUES[cls]
    raise ValueError(f"unknown special-value class {cls!r}")


def finite_extent(cls: str, dtype: str) -> tuple[float, float]:
    """The smallest and largest finite value ``cls`` puts into an input (``(0, 0)`` if none):
    the generator's value interval covers them."""
    fin = [v for v in class_values(cls, dtype) if math.isfinite(v)]
    return (min(fin), max(fin)) if fin else (0.0, 0.0)


def sprinkle(x: np.ndarray, cls: str, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """``x`` (float64, any shape) with some elements -- 1/8 of them (NaN 1/64, inf 1/32), at
    least one -- replaced by values of ``cls``, at positions and with values drawn from
    ``rng``."""
    out = np.array(x, np.float64, copy=True)
    flat = out.reshape(-1)
    if flat.size == 0:
        return out
    k = max(1, round(flat.size * _FRACTION.get(cls, 1 / 8)))
    pos = rng.choice(flat.size, size=k, replace=False)
    vals = np.asarray(class_values(cls, dtype), np.float64)
    flat[pos] = vals[rng.integers(0, len(vals), size=k)]
    return out


def is_special(v: np.ndarray) -> np.ndarray:
    """NaN, an infinity or a zero (of either sign), elementwise."""
    v = np.asarray(v)
    return ~np.isfinite(v) | (v == 0)


CLASS_NAMES = ("finite", "NaN", "+inf", "-inf", "+0", "-0")
"""The names of the codes :func:`classes` returns."""


def classes(v: np.ndarray) -> np.ndarray:
    """The IEEE class code of each element (an index into :data:`CLASS_NAMES`): 0 finite
    non-zero, 1 NaN, 2 +inf, 3 -inf, 4 +0, 5 -0."""
    v = np.asarray(v, np.float64)
    neg = np.signbit(v)
    code = np.zeros(v.shape, np.int8)
    code[np.isnan(v)] = 1
    code[np.isposinf(v)] = 2
    code[np.isneginf(v)] = 3
    code[(v == 0) & ~neg] = 4
    code[(v == 0) & neg] = 5
    return code


def class_name(x: float) -> str:
    """``NaN``, ``+inf``, ``-inf``, ``+0``, ``-0`` or the number (9 digits)."""
    c = int(classes(np.asarray(x)))
    return CLASS_NAMES[c] if c else f"{x:.9g}"
