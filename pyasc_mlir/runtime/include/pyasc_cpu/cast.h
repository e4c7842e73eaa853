// pyasc_cpu/cast.h -- Cast (count form) of the clean-room CPU runtime, with the round modes
// the Atlas A2 (910B) documents per type pair (included by kernel_operator.h after the vector
// helpers).
//
// Source: Ascend C API reference, "Cast" (精度转换): Table "精度转换规则" (rounding rules) and
// Table "Atlas A2 训练系列产品/Atlas A2 推理系列产品 Cast指令参数说明" (supported src/dst pairs and
// roundMode values). A pair or mode outside that table throws cpu::Error naming both; the same
// table is enforced for every platform build (docs/CPU_RUNTIME.md, "Cast").
#ifndef PYASC_CPU_CAST_H
#define PYASC_CPU_CAST_H

namespace AscendC {
namespace cpu {
namespace detail {

template <class T>
constexpr bool kIsCastType = kIsFloat<T> || std::is_same_v<T, bfloat16_t> ||
                             std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> ||
                             std::is_same_v<T, int16_t> || std::is_same_v<T, int32_t>;

// Bit m is set when RoundMode m is documented for the pair.
constexpr uint8_t kModeNone = 1u << static_cast<int>(RoundMode::CAST_NONE);
constexpr uint8_t kModeOdd = 1u << static_cast<int>(RoundMode::CAST_ODD);
constexpr uint8_t kModesRounding = (1u << static_cast<int>(RoundMode::CAST_RINT)) |
                                   (1u << static_cast<int>(RoundMode::CAST_FLOOR)) |
                                   (1u << static_cast<int>(RoundMode::CAST_CEIL)) |
                                   (1u << static_cast<int>(RoundMode::CAST_ROUND)) |
                                   (1u << static_cast<int>(RoundMode::CAST_TRUNC));

// Round modes documented for Cast from S to D on the Atlas A2 (0: the pair is not supported).
template <class D, class S> constexpr uint8_t kCastModes = 0;
template <> constexpr uint8_t kCastModes<int32_t, half> = kModesRounding;
template <> constexpr uint8_t kCastModes<int16_t, half> = kModesRounding;
template <> constexpr uint8_t kCastModes<float, half> = kModeNone;
template <> constexpr uint8_t kCastModes<int8_t, half> = kModesRounding | kModeNone;
template <> constexpr uint8_t kCastModes<uint8_t, half> = kModesRounding | kModeNone;
template <> constexpr uint8_t kCastModes<float, float> = kModesRounding;
template <> constexpr uint8_t kCastModes<int32_t, float> = kModesRounding;
template <> constexpr uint8_t kCastModes<half, float> = kModesRounding | kModeOdd | kModeNone;
template <> constexpr uint8_t kCastModes<int16_t, float> = kModesRounding;
template <> constexpr uint8_t kCastModes<bfloat16_t, float> = kModesRounding;
template <> constexpr uint8_t kCastModes<float, bfloat16_t> = kModeNone;
template <> constexpr uint8_t kCastModes<int32_t, bfloat16_t> = kModesRounding;
template <> constexpr uint8_t kCastModes<half, uint8_t> = kModeNone;
template <> constexpr uint8_t kCastModes<half, int8_t> = kModeNone;
template <> constexpr uint8_t kCastModes<half, int16_t> = kModesRounding | kModeNone;
template <> constexpr uint8_t kCastModes<float, int16_t> = kModeNone;
template <> constexpr uint8_t kCastModes<float, int32_t> = kModesRounding | kModeNone;
template <> constexpr uint8_t kCastModes<int16_t, int32_t> = kModeNone;

template <class T> constexpr const char* kTypeName = "?";
template <> constexpr const char* kTypeName<half> = "half";
template <> constexpr const char* kTypeName<float> = "float";
template <> constexpr const char* kTypeName<bfloat16_t> = "bfloat16_t";
template <> constexpr const char* kTypeName<int8_t> = "int8_t";
template <> constexpr const char* kTypeName<uint8_t> = "uint8_t";
template <> constexpr const char* kTypeName<int16_t> = "int16_t";
template <> constexpr const char* kTypeName<int32_t> = "int32_t";

constexpr const char* kRoundModeNames[] = {"CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL",
                                           "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};

// Throw unless the Atlas A2 documents Cast from S to D with `mode`.
template <class D, class S>
inline void CheckCastSupported(RoundMode mode) {
  const int m = static_cast<int>(mode);
  if (m < 0 || m > static_cast<int>(RoundMode::CAST_ODD))
    Fail("Cast: ", m, " is not a RoundMode");
  constexpr uint8_t modes = kCastModes<D, S>;
  if constexpr (std::is_same_v<S, int32_t> && std::is_same_v<D, half>) {
    Fail("Cast: int32_t -> half ignores the round mode and scales by SetDeqScale(half), which "
         "the CPU runtime does not model");
  } else if constexpr (modes == 0) {
    Fail("Cast: ", kTypeName<S>, " -> ", kTypeName<D>, " is not supported on the Atlas A2 "
         "(910B)");
  } else if (!(modes & (1u << m))) {
    std::string ok;
    for (int k = 0; k <= static_cast<int>(RoundMode::CAST_ODD); ++k)
      if (modes & (1u << k)) ok += std::string(ok.empty() ? "" : ", ") + kRoundModeNames[k];
    Fail("Cast: ", kTypeName<S>, " -> ", kTypeName<D>, " with RoundMode::", kRoundModeNames[m],
         " is not supported on the Atlas A2 (910B) (supported: ", ok, ")");
  }
}

// Round a double to an integral double per mode. NONE/RINT: nearest, ties to even; FLOOR; CEIL;
// ROUND: nearest, ties away from zero; TRUNC: toward zero; ODD: the odd neighbour when inexact.
inline double RoundIntegral(double x, RoundMode m) {
  if (!std::isfinite(x)) return x;
  double r;
  switch (m) {
    case RoundMode::CAST_FLOOR: r = std::floor(x); break;
    case RoundMode::CAST_CEIL: r = std::ceil(x); break;
    case RoundMode::CAST_ROUND: r = std::round(x); break;
    case RoundMode::CAST_TRUNC: r = std::trunc(x); break;
    case RoundMode::CAST_ODD: {
      r = std::trunc(x);
      if (r != x && std::fmod(r, 2.0) == 0.0) r += x > 0 ? 1.0 : -1.0;
      break;
    }
    case RoundMode::CAST_NONE:
    case RoundMode::CAST_RINT:
    default: {
      const double f = std::floor(x), diff = x - f;  // exact for |x| < 2^52; else diff == 0
      if (diff > 0.5) r = f + 1.0;
      else if (diff < 0.5) r = f;
      else r = std::fmod(f, 2.0) == 0.0 ? f : f + 1.0;
      break;
    }
  }
  return r == 0.0 ? std::copysign(0.0, x) : r;
}

// Round a double to a binary floating-point format with P significand bits (incl. the implicit
// one), minimum normal exponent EMIN and maximum exponent EMAX, per mode (IEEE semantics incl.
// subnormals). Overflow: to infinity when the mode rounds away from zero in that direction
// (NONE/RINT/ROUND, FLOOR for negatives, CEIL for positives), else to the largest finite value.
template <int P, int EMIN, int EMAX>
inline double RoundToFormat(double x, RoundMode m) {
  if (!std::isfinite(x) || x == 0.0) return x;
  int e;
  std::frexp(x, &e);                              // |x| = f * 2^e, f in [0.5, 1)
  const int lead = e - 1 > EMIN ? e - 1 : EMIN;   // exponent of the leading bit (or EMIN)
  const double q = std::ldexp(1.0, lead - (P - 1));  // one unit in the last place
  double r = RoundIntegral(x / q, m) * q;            // x / q is exact (power-of-two scale)
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - P), EMAX);
  if (std::fabs(r) > max_finite) {
    bool to_inf;
    switch (m) {
      case RoundMode::CAST_FLOOR: to_inf = x < 0; break;
      case RoundMode::CAST_CEIL: to_inf = x > 0; break;
      case RoundMode::CAST_TRUNC:
      case RoundMode::CAST_ODD: to_inf = false; break;
      default: to_inf = true; break;
    }
    const double big = to_inf ? std::numeric_limits<double>::infinity() : max_finite;
    r = x > 0 ? big : -big;
  }
  return r;
}

template <class S>
inline double ToDouble(S v) { return static_cast<double>(v); }
inline double ToDouble(half v) { return static_cast<double>(static_cast<float>(v)); }
inline double ToDouble(bfloat16_t v) { return static_cast<double>(static_cast<float>(v)); }

// Convert an exactly representable double to D, rounding per mode. Integer targets saturate to
// the type's range; NaN becomes 0.
template <class D>
inline D FromDouble(double x, RoundMode m) {
  if constexpr (std::is_same_v<D, half>) {
    return static_cast<half>(static_cast<float>(RoundToFormat<11, -14, 15>(x, m)));
  } else if constexpr (std::is_same_v<D, bfloat16_t>) {
    return bfloat16_t(static_cast<float>(RoundToFormat<8, -126, 127>(x, m)));  // exact
  } else if constexpr (std::is_same_v<D, float>) {
    return static_cast<float>(RoundToFormat<24, -126, 127>(x, m));
  } else {
    if (std::isnan(x)) return D(0);
    const double r = RoundIntegral(x, m);
    if (r <= static_cast<double>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
    if (r >= static_cast<double>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(r);
  }
}

}  // namespace detail
}  // namespace cpu

// Cast(dst, src, mode, count): dst[i] = round(src[i]) per mode for the type pairs and modes of
// the Atlas A2 table above (others throw Error). CAST_NONE is CAST_RINT (nearest, ties to even)
// where precision is lost; exact conversions ignore it. float -> float rounds to an integral
// value. Integer results saturate; NaN -> 0. Float results overflow per IEEE (RoundToFormat).
template <class D, class S>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, RoundMode mode,
                 int64_t count) {
  static_assert(cpu::detail::kIsCastType<D> && cpu::detail::kIsCastType<S>,
                "Cast: unsupported element type (half, float, bfloat16_t, int8, uint8, int16, "
                "int32)");
  cpu::detail::CheckCastSupported<D, S>(mode);
  D* d = cpu::detail::CheckUB("Cast", "dst", dst, count);
  const S* s = cpu::detail::CheckUB("Cast", "src", src, count);
  if constexpr (cpu::kMemcheck) cpu::mc::Elementwise(dst, count, src);
  [[maybe_unused]] const bool nearest = mode == RoundMode::CAST_NONE || mode == RoundMode::CAST_RINT;
  if constexpr (std::is_same_v<S, half> && std::is_same_v<D, float>) {
    cpu::detail::H2F(s, d, count);  // exact
    return;
  } else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, half>) {
    if (nearest) {
      cpu::detail::F2H(s, d, count);
      return;
    }
  } else if constexpr (std::is_same_v<S, D>) {
    for (int64_t i = 0; i < count; ++i)
      d[i] = static_cast<D>(cpu::detail::RoundIntegral(cpu::detail::ToDouble(s[i]), mode));
    return;
  }
  for (int64_t i = 0; i < count; ++i)
    d[i] = cpu::detail::FromDouble<D>(cpu::detail::ToDouble(s[i]), mode);
}

}  // namespace AscendC

#endif  // PYASC_CPU_CAST_H
