// pyasc_cpu/bf16.h -- bfloat16_t for the clean-room CPU runtime (included by kernel_operator.h).
//
// Format (Ascend C Cast documentation, "bfloat16_t"): 1 sign bit, 8 exponent bits (bias 127, as
// float), 7 mantissa bits; exponent 0 encodes zero and subnormals, exponent 255 infinities
// (mantissa 0) and NaNs. Written from that description only.
#ifndef PYASC_CPU_BF16_H
#define PYASC_CPU_BF16_H

#include <cstdint>
#include <cstring>
#include <type_traits>

// A bfloat16 value stored as its 16 bits. Construction from any arithmetic value goes through
// float and rounds to nearest, ties to even (subnormals and overflow to infinity included, as
// IEEE rounding of the top 16 bits of a float); a NaN stays a NaN (quiet, sign kept). Reading it
// as float is exact.
struct bfloat16_t {
  uint16_t bits = 0;

  bfloat16_t() = default;
  template <class V, class = std::enable_if_t<std::is_arithmetic_v<V>>>
  bfloat16_t(V v) : bits(FromFloat(static_cast<float>(v))) {}  // NOLINT: implicit, as in Ascend C

  operator float() const {  // NOLINT: implicit, as in Ascend C
    const uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }

  // The value with exactly these 16 bits.
  static bfloat16_t FromBits(uint16_t b) {
    bfloat16_t v;
    v.bits = b;
    return v;
  }

  // Round a float to the nearest bfloat16 (ties to even); NaN -> quiet NaN with the same sign.
  static uint16_t FromFloat(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
    const uint32_t lsb = (u >> 16) & 1u;
    return static_cast<uint16_t>((u + 0x7FFFu + lsb) >> 16);
  }
};
static_assert(sizeof(bfloat16_t) == 2, "bfloat16_t must be 2 bytes");

#endif  // PYASC_CPU_BF16_H
