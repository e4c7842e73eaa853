"""The op table: one record per elementwise and reduction op kind of the ``asc`` dialect.

Every fact about an op kind lives in its :class:`OpRecord`, and every consumer derives from the
table: the ``pyasc_mlir`` marker functions and the AST frontend (spellings, compile-time
folding), the ``asc`` verifiers (kind lists), the ``ascendc`` dialect (Ascend C call names),
the three interpreter levels (NumPy semantics), ``asc-decompose`` (composites), the cost model
(vector cycles) and the fuzzer (value ranges, error bounds). Adding an elementwise op is adding
a record here (and, when it names a new Ascend C call, that call to the CPU
``kernel_operator.h``); ``tests/test_opset.py`` checks that every consumer knows every record.

Numerics ("opmath"): tensor-level elementwise ops compute on float32 values (an f16 operand is
widened first) and the interpreter rounds the result once to the result dtype. A record's
``numpy`` function is the op computed in the dtype it is given; it serves every level unless a
level's override (``reference``, ``tile_numpy``, ``ascendc_numpy``) says otherwise -- e.g. the
composites are evaluated in float64 and rounded once (correctly rounded in practice).

Only NumPy and the standard library are imported, so the dialects can import the table.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from pyasc_mlir.dialects import opset_special as special
from pyasc_mlir.dialects.opset_fuzz import (
    abs_interval,
    erf_error,
    exp_error,
    gelu_error,
    gelu_interval,
    libm_error,
    log_error,
    recip_error,
    rsqrt_error,
    sigmoid_error,
    softplus_error,
    sqrt_error,
    tanh_error,
    unit_range,
)
from pyasc_mlir.dialects.opset_numerics import (
    decompose_erf,
    decompose_gelu,
    decompose_sigmoid,
    decompose_softplus,
    decompose_tanh,
    erf,
    gelu64,
    sigmoid64,
    softplus64,
    tanh64,
)

__all__ = [
    "BINARY",
    "CALL_FORMS",
    "CATEGORIES",
    "COMPARE",
    "DTYPE_MASK",
    "DTYPE_SAME",
    "RECORDS",
    "REDUCE",
    "SCALAR",
    "UNARY",
    "AscendCCall",
    "Builder",
    "FuzzModel",
    "OpRecord",
    "by_call",
    "by_category",
    "elementwise_functions",
]

CATEGORIES = ("unary", "binary", "scalar", "compare", "reduce")
"""Op categories: tensor-level ``asc.unary``/``asc.binary``/``asc.compare``/``asc.reduce``
kinds; ``scalar`` kinds exist at tile level only (``asc.vscalar``: a tensor and an immediate)."""
DTYPE_SAME = "same"
"""Dtype rule: f16 or f32 operands of one type; the result has that type. Under opmath the
frontend computes in f32 and the result's logical dtype is f16 iff every tensor operand is f16."""
DTYPE_MASK = "mask"
"""Dtype rule: f16 or f32 operands of one type; the result is an ``i1`` mask."""
CALL_FORMS = ("count", "scalar", "reduce", "cmpmode")
"""Ascend C call forms: ``count`` = ``Name(dst, src..., count)``; ``scalar`` =
``Name(dst, src, (T)scalar, count)``; ``reduce`` = ``Name(dst, src, work, count)``;
``cmpmode`` = ``Compare(dst, src0, src1, CMPMODE::Name, count)`` (the name is the mode)."""


class Builder(Protocol):
    """What a decomposition builds IR with (``asc-decompose`` passes an ``OpInserter``)."""

    def const(self, value: float, like: Any) -> Any:
        """A splat ``asc.constant`` of the type of ``like``."""

    def unary(self, kind: str, x: Any) -> Any:
        """``asc.unary kind x``."""

    def binary(self, kind: str, a: Any, b: Any) -> Any:
        """``asc.binary kind a, b``."""

    def binary_const(self, kind: str, a: Any, value: float) -> Any:
        """``asc.binary kind a, splat(value)``."""

    def compare(self, predicate: str, a: Any, b: Any) -> Any:
        """``asc.compare predicate a, b`` (an i1 mask)."""

    def select(self, cond: Any, a: Any, b: Any) -> Any:
        """``asc.select cond, a, b``."""


@dataclass(frozen=True)
class AscendCCall:
    """The Ascend C API call an op kind lowers to: ``name`` (e.g. ``"Exp"``; for ``cmpmode``
    the ``CMPMODE`` enumerator) and ``form`` (one of :data:`CALL_FORMS`)."""

    name: str
    form: str = "count"


@dataclass(frozen=True)
class FuzzModel:
    """What the fuzzer (``pyasc_mlir.fuzzing``) knows about a unary function.

    ``name``: the fuzzer's spelling. ``interval(lo, hi)``: the value range of the result for
    inputs in ``[lo, hi]``. ``error(v, e)``: the float64 reference ``r`` of the values ``v`` and
    a first-order bound on the error of an fp32 evaluation given operand errors ``e`` (arrays;
    units in :mod:`pyasc_mlir.dialects.opset_numerics`). ``positive``: defined for positive
    inputs only (the fuzzer guards the operand). ``max_input``: the largest input bound the
    fuzzer feeds (exp overflows fp32 above ~88).
    """

    name: str
    interval: Callable[[float, float], tuple[float, float]]
    error: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
    positive: bool = False
    max_input: float = math.inf


@dataclass(frozen=True)
class OpRecord:
    """One op kind. See the module docstring for how each field is used.

    ``kind``: the asc kind (``asc.unary "exp"``) or compare predicate. ``category``: one of
    :data:`CATEGORIES`. ``arity``: tensor operands. ``doc``: the ``pyasc_mlir.<function>``
    docstring. ``dtype_rule``: :data:`DTYPE_SAME` or :data:`DTYPE_MASK`. ``function``,
    ``methods``, ``py_operator``: frontend spellings (``pa.exp``, ``x.exp()``, ``-x``).
    ``py_fold``: the Python function the frontend folds a compile-time constant with.
    ``numpy``: the op in the dtype it is given; ``reference`` / ``tile_numpy`` /
    ``ascendc_numpy`` override it for the tensor-level interpreter (on float32 values, result
    rounded once by the caller), the tile level (``f(src, out=dst)`` on UB buffers) and the
    ascendc level (on compute lanes: f16 widened to f32). ``composite``: expanded by
    ``asc-decompose`` (``decompose(builder, x)`` for unary composites) and never reaches the
    vector unit. ``call``: the Ascend C call, ``None`` for composites (and ``neg``, which
    ``asc-tile`` lowers to ``Muls`` by -1). ``repeat_cycles``: vector-pipe cycles per 256-byte
    repeat (cost model; 1 for every op: ASCEND_FACTS.md). ``fuzz``: the fuzzer's model.
    """

    kind: str
    category: str
    arity: int
    doc: str = ""
    dtype_rule: str = DTYPE_SAME
    function: str | None = None
    methods: tuple[str, ...] = ()
    py_operator: str | None = None
    py_fold: Callable[[float], float] | None = None
    numpy: Callable[..., Any] | None = None
    reference: Callable[..., Any] | None = None
    tile_numpy: Callable[..., Any] | None = None
    ascendc_numpy: Callable[..., Any] | None = None
    composite: bool = False
    decompose: Callable[[Builder, Any], Any] | None = None
    call: AscendCCall | None = None
    repeat_cycles: int = 1
    fuzz: FuzzModel | None = None

    def tensor_impl(self) -> Callable[..., Any] | None:
        """The tensor-level semantics on float32 operands (before rounding to the result)."""
        return self.reference or self.numpy

    def tile_impl(self) -> Callable[..., Any] | None:
        """The tile-level semantics ``f(*srcs, out=dst)`` on UB buffers (``None``: composite)."""
        if self.tile_numpy is not None:
            return self.tile_numpy
        f = self.numpy
        if f is None or self.composite or isinstance(f, np.ufunc):
            return f

        def into(*srcs: np.ndarray, out: np.ndarray) -> np.ndarray:
            out[...] = f(*srcs)
            return out

        return into

    def ascendc_impl(self) -> Callable[..., Any] | None:
        """The ascendc-level semantics on compute lanes (``None``: no Ascend C call)."""
        if self.call is None:
            return None
        return self.ascendc_numpy or self.numpy


# --------------------------------------------------------------------------- numerics


def _float64_then_round(f: np.ufunc) -> Callable[[np.ndarray], np.ndarray]:
    """``f`` in float64, rounded to fp32 and then to ``x``'s dtype: what the CPU runtime's
    C library ``expf``/``logf`` give (correctly rounded but in about 1e-4 of the cases;
    NumPy's own float32 ``exp``/``log`` are 2.4 / 3.2 ulp off)."""

    def lanes(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        with np.errstate(all="ignore"):
            return f(x.astype(np.float64)).astype(np.float32).astype(x.dtype, copy=False)

    lanes.__name__ = f"{f.__name__}_float64_then_round"
    return lanes


_exp = _float64_then_round(np.exp)
_log = _float64_then_round(np.log)


def _sigmoid_fold(v: float) -> float:
    """``sigmoid`` of a Python float without overflow (``exp(-|v|)`` never overflows)."""
    e = math.exp(-abs(v))
    return 1.0 / (1.0 + e) if v >= 0 else e / (1.0 + e)


def _relu(x: np.ndarray) -> np.ndarray:
    return special.relu(x)


def _rsqrt64(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(np.asarray(x, dtype=np.float64))


def _rsqrt_tile(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``Sqrt`` then ``Reciprocal`` in the buffer dtype (two roundings)."""
    np.sqrt(x, out=out)
    return np.reciprocal(out, out=out)


def _rsqrt_lanes(x: np.ndarray) -> np.ndarray:
    """``1/sqrt`` in float64, rounded to the lane type (then to ``T``), as the CPU runtime."""
    return (1.0 / np.sqrt(x.astype(np.float64))).astype(x.dtype)


# --------------------------------------------------------------------------- decompositions


def _softplus_fold(v: float) -> float:
    return max(v, 0.0) + math.log1p(math.exp(-abs(v)))


# --------------------------------------------------------------------------- the table


def _unary(kind: str, doc: str = "", **kw: Any) -> OpRecord:
    """A unary record whose ``pa.<kind>`` function and ``x.<kind>()`` method exist when it has
    a docstring."""
    if doc:
        kw.setdefault("function", kind)
        kw.setdefault("methods", (kind,))
    return OpRecord(kind, "unary", 1, doc, **kw)


def _binary(kind: str, call: str, numpy: Callable[..., Any], **kw: Any) -> OpRecord:
    return OpRecord(kind, "binary", 2, numpy=numpy, call=AscendCCall(call), **kw)


def _scalar(kind: str, call: str, numpy: Callable[..., Any]) -> OpRecord:
    return OpRecord(kind, "scalar", 1, numpy=numpy, call=AscendCCall(call, "scalar"))


def _compare(kind: str, symbol: str, numpy: np.ufunc) -> OpRecord:
    return OpRecord(
        kind,
        "compare",
        2,
        dtype_rule=DTYPE_MASK,
        py_operator=symbol,
        numpy=numpy,
        call=AscendCCall(kind.upper(), "cmpmode"),
    )


def _reduce(kind: str, call: str | None, **kw: Any) -> OpRecord:
    return OpRecord(
        kind,
        "reduce",
        1,
        function=kind,
        methods=(kind,),
        composite=call is None,
        call=None if call is None else AscendCCall(call, "reduce"),
        **kw,
    )


RECORDS: tuple[OpRecord, ...] = (
    # unary: vector kinds first, then the composites; functions keep this order
    _unary(
        "neg",
        py_operator="-",
        numpy=np.negative,
        fuzz=FuzzModel("neg", lambda lo, hi: (-hi, -lo), lambda v, e: (-v, e)),
    ),
    _unary(
        "exp",
        "Elementwise ``e**x``.",
        py_fold=math.exp,
        numpy=_exp,
        call=AscendCCall("Exp"),
        fuzz=FuzzModel(
            "exp", lambda lo, hi: (math.exp(lo), math.exp(hi)), exp_error, max_input=30.0
        ),
    ),
    _unary(
        "log",
        "Elementwise natural logarithm.",
        py_fold=math.log,
        numpy=_log,
        call=AscendCCall("Ln"),
        fuzz=FuzzModel(
            "log", lambda lo, hi: (math.log(lo), math.log(hi)), log_error, positive=True
        ),
    ),
    _unary(
        "sqrt",
        "Elementwise square root.",
        py_fold=math.sqrt,
        numpy=np.sqrt,
        call=AscendCCall("Sqrt"),
        fuzz=FuzzModel(
            "sqrt", lambda lo, hi: (math.sqrt(lo), math.sqrt(hi)), sqrt_error, positive=True
        ),
    ),
    _unary(
        "rsqrt",
        "Elementwise ``1 / sqrt(x)``.",
        py_fold=lambda v: 1.0 / math.sqrt(v),
        reference=_rsqrt64,
        tile_numpy=_rsqrt_tile,
        ascendc_numpy=_rsqrt_lanes,
        call=AscendCCall("Rsqrt"),
        fuzz=FuzzModel(
            "rsqrt",
            lambda lo, hi: (1 / math.sqrt(hi), 1 / math.sqrt(lo)),
            rsqrt_error,
            positive=True,
        ),
    ),
    _unary(
        "abs",
        "Elementwise absolute value (the builtin ``abs(x)`` works too): the sign "
        "bit cleared, so ``abs(-0.0) = +0.0`` and a NaN stays NaN.",
        py_fold=builtins.abs,
        numpy=np.abs,
        call=AscendCCall("Abs"),
        fuzz=FuzzModel("abs", abs_interval, lambda v, e: (np.abs(v), e)),
    ),
    _unary(
        "relu",
        "Elementwise ``max(x, 0)``: ``+0`` where ``x < 0``, else ``x``, so NaN "
        "stays NaN and ``relu(-0.0) = -0.0`` (as ``torch.relu``).",
        py_fold=lambda v: 0.0 if v < 0 else v,
        numpy=_relu,
        tile_numpy=special.relu,
        call=AscendCCall("Relu"),
        fuzz=FuzzModel(
            "relu",
            lambda lo, hi: (max(lo, 0.0), max(hi, 0.0)),
            lambda v, e: (np.where(v < 0, 0.0, v), e),  # relu(-0) = -0, NaN stays
        ),
    ),
    _unary(
        "reciprocal",
        numpy=np.reciprocal,
        call=AscendCCall("Reciprocal"),
        fuzz=FuzzModel("recip", lambda lo, hi: (1 / hi, 1 / lo), recip_error, positive=True),
    ),
    _unary(
        "sigmoid",
        "Elementwise ``1 / (1 + exp(-x))`` (f16/f32, any shape); within 3 fp32 "
        "ulps / 1 fp16 ulp everywhere, subnormal results included (docs/DESIGN.md, "
        "Numerics).",
        py_fold=_sigmoid_fold,
        reference=sigmoid64,
        composite=True,
        decompose=decompose_sigmoid,
        fuzz=FuzzModel("sigmoid", lambda lo, hi: (0.0, 1.0), sigmoid_error),
    ),
    _unary(
        "tanh",
        "Elementwise hyperbolic tangent (f16/f32, any shape); within 2 fp32 ulps / "
        "1 fp16 ulp everywhere, ``tanh(-0) = -0`` (docs/DESIGN.md, Numerics).",
        py_fold=math.tanh,
        reference=tanh64,
        composite=True,
        decompose=decompose_tanh,
        fuzz=FuzzModel("tanh", unit_range, tanh_error),
    ),
    _unary(
        "erf",
        "Elementwise Gauss error function (f16/f32, any shape); within 2 fp32 ulps / "
        "1 fp16 ulp everywhere, ``erf(-0) = -0`` (docs/DESIGN.md, Numerics).",
        py_fold=math.erf,
        reference=erf,
        composite=True,
        decompose=decompose_erf,
        fuzz=FuzzModel("erf", unit_range, erf_error),
    ),
    _unary(  # no pa.gelu of its own: pa.gelu (ops_torch) builds it for approximate="none"
        "gelu",
        reference=gelu64,
        composite=True,
        decompose=decompose_gelu,
        fuzz=FuzzModel("gelu", gelu_interval, gelu_error),
    ),
    _unary(
        "sin",
        "Elementwise sine (radians); Ascend C ``Sin``.",
        py_fold=math.sin,
        numpy=np.sin,
        call=AscendCCall("Sin"),
        fuzz=FuzzModel("sin", unit_range, libm_error(np.sin)),
    ),
    _unary(
        "cos",
        "Elementwise cosine (radians); Ascend C ``Cos``.",
        py_fold=math.cos,
        numpy=np.cos,
        call=AscendCCall("Cos"),
        fuzz=FuzzModel("cos", unit_range, libm_error(np.cos)),
    ),
    _unary(
        "softplus",
        "Elementwise ``log(1 + exp(x))``, computed without overflow.",
        methods=(),
        py_fold=_softplus_fold,
        reference=softplus64,
        composite=True,
        decompose=decompose_softplus,
        fuzz=FuzzModel(
            "softplus", lambda lo, hi: (_softplus_fold(lo), _softplus_fold(hi)), softplus_error
        ),
    ),
    # binary (broadcasts are explicit asc.broadcast ops)
    _binary("add", "Add", np.add, py_operator="+"),
    _binary("sub", "Sub", np.subtract, py_operator="-"),
    _binary("mul", "Mul", np.multiply, py_operator="*"),
    _binary("div", "Div", np.divide, py_operator="/"),
    _binary(
        "max",
        "Max",
        special.maximum,
        function="maximum",
        doc="Elementwise maximum "
        "of two tensors (or a tensor and a number), broadcast together. NaN if either "
        "operand is NaN; ``maximum(-0.0, +0.0) = +0.0`` in either order (IEEE 754-2019).",
    ),
    _binary(
        "min",
        "Min",
        special.minimum,
        function="minimum",
        doc="Elementwise minimum "
        "of two tensors (or a tensor and a number), broadcast together. NaN if either "
        "operand is NaN; ``minimum(-0.0, +0.0) = -0.0`` in either order (IEEE 754-2019).",
    ),
    # tile level: a buffer and an immediate
    _scalar("adds", "Adds", np.add),
    _scalar("muls", "Muls", np.multiply),
    _scalar("maxs", "Maxs", special.maximum),
    _scalar("mins", "Mins", special.minimum),
    # comparisons (the kind is the predicate)
    _compare("lt", "<", np.less),
    _compare("gt", ">", np.greater),
    _compare("eq", "==", np.equal),
    _compare("le", "<=", np.less_equal),
    _compare("ge", ">=", np.greater_equal),
    _compare("ne", "!=", np.not_equal),
    # reductions; mean and var are composites (sum-based, in asc-decompose)
    _reduce("sum", "ReduceSum"),
    # max/min: ``numpy(x, axis, keepdims)``, NaN if any element is NaN, a zero result +0
    # (max) / -0 (min) if any element is that zero (opset_special)
    _reduce("max", "ReduceMax", numpy=special.reduce_max),
    _reduce("min", "ReduceMin", numpy=special.reduce_min),
    _reduce("mean", None),
    _reduce("var", None),
)


def by_category(category: str) -> dict[str, OpRecord]:
    """The records of ``category`` (one of :data:`CATEGORIES`), by kind, in table order."""
    if category not in CATEGORIES:
        raise ValueError(
            f"unknown op category {category!r}; expected one of {', '.join(CATEGORIES)}"
        )
    return {r.kind: r for r in RECORDS if r.category == category}


UNARY = by_category("unary")
BINARY = by_category("binary")
SCALAR = by_category("scalar")
COMPARE = by_category("compare")
REDUCE = by_category("reduce")


_BY_CALL = {r.call.name: r for r in RECORDS if r.call is not None}


def by_call(name: str) -> OpRecord | None:
    """The record whose Ascend C call (or ``CMPMODE`` enumerator) is ``name``, if any."""
    return _BY_CALL.get(name)


def elementwise_functions() -> dict[str, OpRecord]:
    """The elementwise ``pyasc_mlir.<function>`` markers (unary, then binary), by name."""
    return {
        r.function: r
        for r in RECORDS
        if r.function is not None and r.category in ("unary", "binary")
    }
