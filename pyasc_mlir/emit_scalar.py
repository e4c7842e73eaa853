"""C++ of the scalar-unit ``ascendc`` ops (``dialects/ascendc_scalar.py``): the statements
of the scalar-loop fallback kernels and the small prelude of math functions they call.

Every operation is computed in ``double`` from the ``float`` operands and rounded once to
``float`` (for + - * / that is the exact ``float`` operation; no FMA contraction can merge two
of them, each result is converted to ``float`` before its next use), the same as the
interpreter (``pyasc_mlir/interpreter/ascendc_scalar.py``), so the two agree bit for bit.
The scalar unit of an AI core has no transcendental instructions: ``std::exp`` and friends
stand for the software routines a device toolchain links (the CPU build uses the C library).
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from pyasc_mlir.dialects import ascendc_scalar as sc
from pyasc_mlir.dialects.ascendc_types import elem

__all__ = ["SCALAR_PRELUDE", "emit_scalar", "prelude"]

_ARITH = {"add": "+", "sub": "-", "mul": "*", "div": "/"}

SCALAR_PRELUDE = (
    "// Scalar-unit math of the scalar-loop kernels: float64, rounded once to float.",
    "#include <cmath>",
    "#include <cstdint>",
    "#include <cstring>",
    "static inline double pyasc_d(float x) { return static_cast<double>(x); }",
    "static inline float pyasc_s_neg(float x) { return -x; }",
    "static inline float pyasc_s_exp(float x) { return (float)std::exp(pyasc_d(x)); }",
    "static inline float pyasc_s_log(float x) { return (float)std::log(pyasc_d(x)); }",
    "static inline float pyasc_s_sqrt(float x) { return (float)std::sqrt(pyasc_d(x)); }",
    "static inline float pyasc_s_rsqrt(float x) { return (float)(1.0 / std::sqrt(pyasc_d(x))); }",
    "static inline float pyasc_s_abs(float x) { return (float)std::fabs(pyasc_d(x)); }",
    "static inline float pyasc_s_relu(float x) { return x < 0.0f ? 0.0f : x; }",
    "static inline float pyasc_s_reciprocal(float x) { return (float)(1.0 / pyasc_d(x)); }",
    "static inline float pyasc_s_sin(float x) { return (float)std::sin(pyasc_d(x)); }",
    "static inline float pyasc_s_cos(float x) { return (float)std::cos(pyasc_d(x)); }",
    "static inline float pyasc_s_tanh(float x) { return (float)std::tanh(pyasc_d(x)); }",
    "static inline float pyasc_s_erf(float x) { return (float)std::erf(pyasc_d(x)); }",
    "static inline float pyasc_s_sigmoid(float x) {",
    "  const double d = x, e = std::exp(-std::fabs(d));",
    "  return (float)(d >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e));",
    "}",
    "static inline float pyasc_s_gelu(float x) {",
    "  const double d = x;",
    "  double r = d * (0.5 * std::erfc(-d / std::sqrt(2.0)));",
    "  if (r == 0.5 * d && d != 0 && std::isfinite(d)) r = std::nextafter(r, INFINITY);",
    "  return (float)r;",
    "}",
    "static inline float pyasc_s_softplus(float x) {",
    "  const double d = x, m = d != d ? d : (d > 0.0 ? d : 0.0);",
    "  return (float)(m + std::log1p(std::exp(-std::fabs(d))));",
    "}",
    "static inline float pyasc_s_kahan(float a, float c, float e, float* comp) {",
    "  const float y = e - c, t = a + y;",
    "  *comp = std::isfinite(t) ? (t - a) - y : 0.0f;  // an infinite sum stays infinite",
    "  return t;",
    "}",
    "static inline float pyasc_s_extreme(float a, float b, bool is_max) {",
    "  if (a != a) return a;",
    "  if (b != b) return b;",
    "  if (a == b) {  // +-0: max keeps the sign only if both have it, min if either has",
    "    uint32_t ua, ub;",
    "    std::memcpy(&ua, &a, 4);",
    "    std::memcpy(&ub, &b, 4);",
    "    const uint32_t r = is_max ? (ua & ub) : (ua | ub);",
    "    float f;",
    "    std::memcpy(&f, &r, 4);",
    "    return f;",
    "  }",
    "  return (a > b) == is_max ? a : b;",
    "}",
)
"""The C++ functions the scalar ops call (printed once per ``kernel.cpp`` that has any)."""


def prelude(module: ModuleOp) -> list[str]:
    """:data:`SCALAR_PRELUDE` when ``module`` holds scalar ops, else nothing."""
    return list(SCALAR_PRELUDE) if any(isinstance(o, sc.SCALAR_OPS) for o in module.walk()) else []


def emit_scalar(p: Any, op: Operation) -> bool:
    """Print ``op`` with the kernel printer ``p`` (``emitter._KernelPrinter``) if it is a scalar
    op; ``False`` otherwise."""
    from pyasc_mlir.emitter import c_float, c_type

    n = p.name
    if isinstance(op, sc.ScalarGetOp):
        p.decl(op.result, f"(float){n(op.tensor)}.GetValue({n(op.index)})")
    elif isinstance(op, sc.ScalarSetOp):
        ty = c_type(elem(op.tensor.type))
        p.emit(f"{n(op.tensor)}.SetValue({n(op.index)}, ({ty}){n(op.value)});")
    elif isinstance(op, sc.ScalarConstOp):
        p.emit(f"const float {n(op.result)} = {c_float(float(op.value.value.data), 'float')};")
    elif isinstance(op, sc.ScalarUnaryOp):
        p.decl(op.result, f"pyasc_s_{op.kind.data}({n(op.input)})")
    elif isinstance(op, sc.ScalarBinaryOp):
        a, b, kind = n(op.lhs), n(op.rhs), op.kind.data
        if kind in _ARITH:
            p.decl(op.result, f"(float)(pyasc_d({a}) {_ARITH[kind]} pyasc_d({b}))")
        else:
            p.decl(op.result, f"pyasc_s_extreme({a}, {b}, {'true' if kind == 'max' else 'false'})")
    elif isinstance(op, sc.ScalarKahanOp):
        p.emit(f"float {n(op.new_comp)};")
        args = f"{n(op.acc)}, {n(op.comp)}, {n(op.value)}, &{n(op.new_comp)}"
        p.decl(op.new_acc, f"pyasc_s_kahan({args})")
    elif isinstance(op, sc.ScalarRoundOp):
        p.decl(op.result, f"(float)({c_type(op.dtype)}){n(op.input)}")
    else:
        return False
    return True
