// pyasc_cpu/gather_mask.h -- GatherMask (+ GatherMaskParams) and GetGatherMaskRemainCount of
// the clean-room CPU runtime (included by kernel_operator.h after pyasc_cpu/reduce.h).
//
// Source: the GatherMask page of the Ascend C API reference (Atlas A2 column). Model:
//  * A gather mask selects (bit 1) elements of src0; the selected elements are written to dst
//    one after another (dst[0], dst[1], ...), across all repeats, in repeat and lane order; the
//    rest of dst is left alone. rsvdCnt (and GetGatherMaskRemainCount()) = elements written.
//  * Lane k of repeat r reads src0 element r*src0RepeatStride*E + (k/E)*src0BlockStride*E + k%E
//    (E = 32 B / sizeof(T); strides in 32-byte DataBlocks).
//  * reduceMode = false (Normal): repeatTimes repeats of 256 / sizeof(T) lanes (mask ignored).
//    reduceMode = true (Counter, the A2's "配置方式一"): repeatTimes repeats of `mask` lanes each
//    (mask in [1, 2^32 - 1]). After the call the mask unit is in Normal mode (documented: a
//    kernel in Counter mode must set it again).
//  * Built-in patterns (src1Pattern 1..7, the same for every repeat; lane k selected when):
//    1: k even, 2: k odd, 3: k % 4 == 0, 4: k % 4 == 1, 5: k % 4 == 2, 6: k % 4 == 3, 7: always.
//    src1RepeatStride must be 0 with them ("不支持配置src1RepeatStride").
//  * User pattern (LocalTensor<U>, U = uint16_t for 16-bit T, uint32_t for 32-bit T): lane k of
//    repeat r uses bit k of the pattern bits starting at byte r * src1RepeatStride * 32 (bit i of
//    the bits = bit i % W of element i / W, W = bit width of U, LSB first); consumed
//    continuously within a repeat.
//  * T: half, bfloat16_t, uint16_t, int16_t, float, uint32_t, int32_t; bits are moved unchanged
//    (NaN payloads, -0 and subnormals included).
//  * Memory check: a written dst element is defined iff its src0 element is; the pattern bits
//    the call consumes must be defined (else AccessError).
// GatherMaskMode / defaultGatherMaskMode: the documented reserved template parameter (its
// enumerators are not documented; one value, DEFAULT). defaultGahterMaskMode is the spelling
// of older pages.
#ifndef PYASC_CPU_GATHER_MASK_H
#define PYASC_CPU_GATHER_MASK_H

#include <vector>

#include "vector_level0.h"

namespace AscendC {

enum class GatherMaskMode : uint8_t { DEFAULT = 0 };
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::DEFAULT;
constexpr GatherMaskMode defaultGahterMaskMode = GatherMaskMode::DEFAULT;

// Address strides of GatherMask (documented fields and order).
struct GatherMaskParams {
  GatherMaskParams() = default;
  GatherMaskParams(uint8_t src0BlockStrideIn, uint16_t repeatTimesIn, uint16_t src0RepeatStrideIn,
                   uint8_t src1RepeatStrideIn)
      : src0BlockStride(src0BlockStrideIn), repeatTimes(repeatTimesIn),
        src0RepeatStride(src0RepeatStrideIn), src1RepeatStride(src1RepeatStrideIn) {}
  uint8_t src0BlockStride = 1;
  uint16_t repeatTimes = 0;
  uint16_t src0RepeatStride = 0;
  uint8_t src1RepeatStride = 0;
};

namespace cpu {
namespace gm {

template <class T>
constexpr bool kIsType = std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t> ||
                         std::is_same_v<T, uint16_t> || std::is_same_v<T, int16_t> ||
                         std::is_same_v<T, float> || std::is_same_v<T, uint32_t> ||
                         std::is_same_v<T, int32_t>;

inline bool BuiltIn(uint8_t pattern, int64_t k) {
  switch (pattern) {
    case 1: return k % 2 == 0;
    case 2: return k % 2 == 1;
    case 7: return true;
    default: return k % 4 == pattern - 3;  // 3..6
  }
}

// Bit source: a built-in pattern (bits == nullptr) or the bytes of a user pattern tensor.
struct Pattern {
  uint8_t builtIn = 0;
  const uint8_t* bits = nullptr;
  uint64_t ubOffset = 0;  // UB offset of the user pattern (memory check)
  uint64_t repStrideBytes = 0;
  bool Selected(int64_t r, int64_t k) const {
    if (bits == nullptr) return BuiltIn(builtIn, k);
    const uint64_t bit = r * repStrideBytes * 8 + static_cast<uint64_t>(k);
    return (bits[bit / 8] >> (bit % 8)) & 1;
  }
  bool Defined(int64_t r, int64_t k) const {
    if (bits == nullptr) return true;
    const uint64_t bit = r * repStrideBytes * 8 + static_cast<uint64_t>(k);
    return (mc::Sh(ubOffset)[bit / 8] >> (bit % 8)) & 1;
  }
};

template <class T>
inline void Run(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const Pattern& pat,
                bool reduceMode, uint32_t mask, const GatherMaskParams& q, uint64_t& rsvdCnt) {
  static_assert(kIsType<T>, "GatherMask: unsupported element type");
  const char* api = "GatherMask";
  const int64_t lanes = reduceMode ? static_cast<int64_t>(mask) : l0::kLanes<T>;
  if (reduceMode && mask == 0) Fail(api, ": Counter mode (reduceMode = true) needs mask >= 1");
  const int64_t reps = q.repeatTimes;
  const l0::Stride st{q.src0BlockStride, q.src0RepeatStride};
  int64_t extent = 0;
  for (int64_t r = 0; r < reps && lanes > 0; ++r)
    extent = std::max(extent, l0::Elem<T>(st, r, static_cast<int32_t>(lanes - 1)) + 1);
  const T* s = detail::CheckUB(api, "src0", src0, extent);
  std::vector<int64_t> picked;
  for (int64_t r = 0; r < reps; ++r)
    for (int64_t k = 0; k < lanes; ++k) {
      if constexpr (kMemcheck)
        if (!pat.Defined(r, k))
          FailAccess(api, ": read of uninitialised UB: bit ", k, " of repeat ", r,
                     " of the src1Pattern LocalTensor at UB offset ", pat.ubOffset,
                     " was never written in this block");
      if (pat.Selected(r, k)) picked.push_back(l0::Elem<T>(st, r, static_cast<int32_t>(k)));
    }
  const int64_t n = static_cast<int64_t>(picked.size());
  T* d = detail::CheckUB(api, "dst", dst, n);
  std::vector<T> vals(static_cast<size_t>(n));
  std::vector<uint8_t> ok(static_cast<size_t>(n), 1);
  for (int64_t i = 0; i < n; ++i) {
    vals[static_cast<size_t>(i)] = s[picked[static_cast<size_t>(i)]];
    if constexpr (kMemcheck) ok[static_cast<size_t>(i)] = l0::LaneDefined(src0, picked[static_cast<size_t>(i)]);
  }
  for (int64_t i = 0; i < n; ++i) {
    d[i] = vals[static_cast<size_t>(i)];
    if constexpr (kMemcheck) l0::SetLaneDefined(dst, i, ok[static_cast<size_t>(i)] != 0);
  }
  rsvdCnt = static_cast<uint64_t>(n);
  Core().gather_mask_set = true;
  Core().gather_mask_remain = rsvdCnt;
  Core().mask_mode = MaskMode::NORMAL;  // documented: the call leaves Normal mode behind
}

}  // namespace gm
}  // namespace cpu

// GatherMask<T, U, mode>(dst, src0, src1Pattern tensor, reduceMode, mask, params, rsvdCnt).
template <class T, class U, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                       const LocalTensor<U>& src1Pattern, const bool reduceMode,
                       const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                       uint64_t& rsvdCnt) {
  static_assert(std::is_same_v<U, std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>>,
                "GatherMask: src1Pattern must be uint16_t for 16-bit T and uint32_t for 32-bit T");
  const GatherMaskParams& q = gatherMaskParams;
  const int64_t lanes = reduceMode ? static_cast<int64_t>(mask) : cpu::l0::kLanes<T>;
  const int64_t reps = q.repeatTimes;
  const uint64_t bytes = reps == 0 ? 0
                                   : static_cast<uint64_t>(reps - 1) * q.src1RepeatStride *
                                             cpu::kBlock + (static_cast<uint64_t>(lanes) + 7) / 8;
  cpu::gm::Pattern pat;
  pat.bits = cpu::detail::CheckUBBytes("GatherMask", "src1Pattern", src1Pattern, bytes);
  pat.ubOffset = src1Pattern.CpuOffset();
  pat.repStrideBytes = static_cast<uint64_t>(q.src1RepeatStride) * cpu::kBlock;
  cpu::gm::Run(dst, src0, pat, reduceMode, mask, q, rsvdCnt);
}

// GatherMask<T, mode>(dst, src0, src1Pattern 1..7, reduceMode, mask, params, rsvdCnt).
template <class T, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                       const uint8_t src1Pattern, const bool reduceMode, const uint32_t mask,
                       const GatherMaskParams& gatherMaskParams, uint64_t& rsvdCnt) {
  if (src1Pattern < 1 || src1Pattern > 7)
    cpu::Fail("GatherMask: built-in src1Pattern ", static_cast<int>(src1Pattern),
              " is outside [1, 7]");
  if (gatherMaskParams.src1RepeatStride != 0)
    cpu::Fail("GatherMask: src1RepeatStride ", static_cast<int>(gatherMaskParams.src1RepeatStride),
              " with a built-in src1Pattern (documented as not configurable: use 0)");
  cpu::gm::Pattern pat;
  pat.builtIn = src1Pattern;
  cpu::gm::Run(dst, src0, pat, reduceMode, mask, gatherMaskParams, rsvdCnt);
}

// GetGatherMaskRemainCount(): the elements the last GatherMask of this block kept (its rsvdCnt).
inline int64_t GetGatherMaskRemainCount() {
  if (!cpu::Core().gather_mask_set)
    cpu::Fail("GetGatherMaskRemainCount: no GatherMask ran in this block");
  return static_cast<int64_t>(cpu::Core().gather_mask_remain);
}

}  // namespace AscendC

#endif  // PYASC_CPU_GATHER_MASK_H
