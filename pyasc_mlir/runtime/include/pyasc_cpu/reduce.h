// pyasc_cpu/reduce.h -- the per-repeat / per-DataBlock / pairwise reduction instructions of
// the clean-room CPU runtime and the level-0 (mask / repeat) forms of ReduceSum/Max/Min
// (included by kernel_operator.h after its count-form ReduceSum/Max/Min).
//
// Sources (public Ascend C API reference, Atlas A2): the pages of WholeReduceSum,
// WholeReduceMax, WholeReduceMin (ReduceOrder), BlockReduceSum/Max/Min, PairReduceSum,
// ReduceSum / ReduceMax / ReduceMin (sharedTmpBuffer sizes, "方式一/方式二" sum orders, first index
// on ties, half index limit), GetReduceRepeatSumSpr, GetReduceMaxMinCount, "如何使用归约计算API".
//
// Model (docs/CPU_RUNTIME.md, "Reductions"): active lanes come from the mask exactly as in the
// level-0 vector forms (pyasc_cpu/vector_level0.h: contiguous / bit mask, isSetMask, Counter
// mode); src lane k of repeat r is element r*srcRepStride*E + (k/E)*srcBlkStride*E + k%E
// (E = 32 B / sizeof(T)). Lanes are computed in float; every addition is rounded to T.
//  * Sums: a binary tree over the lanes (adjacent pairs, level by level; masked-off lanes are
//    +0). WholeReduceSum and BlockReduceSum on half saturate a finite sum that overflows to
//    +-65504 (documented: "计算结果大于65504时结果保存为65504"); PairReduceSum and the ReduceSum
//    forms are IEEE.
//  * Max / min: the fold of the elementwise VMax/VMin (NaN if any active lane is NaN; a zero
//    result is +0 for max / -0 for min if any lane is that zero); the index is the first
//    active lane equal to the result (the first NaN for a NaN result), stored as the bits of an
//    unsigned integer of sizeof(T) bytes (uint32_t for ORDER_ONLY_INDEX).
//  * Memory check: a result is defined iff every active lane it reads is (propagation); the
//    level-0 ReduceSum/Max/Min (scalar results) report an undefined active lane.
#ifndef PYASC_CPU_REDUCE_H
#define PYASC_CPU_REDUCE_H

#include <cmath>
#include <vector>

#include "vector_level0.h"

namespace AscendC {

// Where WholeReduceMax/Min store the value and the index of each repeat (documented values).
enum class ReduceOrder : uint8_t {
  ORDER_VALUE_INDEX = 0,  // [value, index]
  ORDER_INDEX_VALUE,      // [index, value]
  ORDER_ONLY_VALUE,       // [value]
  ORDER_ONLY_INDEX        // [index] (a uint32_t per repeat)
};

namespace cpu {
namespace red {

template <class T>
constexpr int64_t kLanes = l0::kLanes<T>;
template <class T>
constexpr int64_t kPerBlock = l0::kPerBlock<T>;
constexpr int64_t kBlocksPerRepeat = static_cast<int64_t>(kRepeatBytes / kBlock);
// Largest finite fp16 value (IEEE binary16): the saturation value of the documented
// WholeReduceSum / BlockReduceSum half sums.
constexpr float kHalfMax = 65504.0f;

// A UB operand that needs only `align`-byte alignment (dst of the per-repeat reductions).
template <class T>
inline T* CheckUBAt(const char* api, const char* role, const LocalTensor<T>& t, int64_t count,
                    uint64_t align) {
  if (!t.CpuValid()) Fail(api, ": ", role, " LocalTensor was never allocated");
  if (t.CpuOffset() % align != 0)
    FailAccess(api, ": ", role, " UB offset ", t.CpuOffset(), " is not ", align,
               "-byte aligned");
  if (static_cast<uint64_t>(count) > t.CpuSize())
    FailAccess(api, ": ", role, " LocalTensor at UB offset ", t.CpuOffset(), " holds ",
               t.CpuSize(), " elements (", t.CpuSize() * sizeof(T), " bytes), the call writes ",
               count, " elements (", static_cast<uint64_t>(count) * sizeof(T), " bytes)");
  race::OnOperand(api, role, t.CpuOffset(), static_cast<uint64_t>(count) * sizeof(T));
  return t.CpuPtr();
}

// The lane plan of a contiguous-mask call (an int32_t mask in these APIs).
template <class T, bool isSetMask>
inline l0::Plan MaskPlan(const char* api, int32_t mask, int32_t repeatTime) {
  if (isSetMask && mask < 1)
    Fail(api, ": mask ", mask, " is outside [1, ", kLanes<T>, "] for ", sizeof(T) * 8,
         "-bit elements");
  return l0::MaskPlan<T, isSetMask>(api, static_cast<uint64_t>(static_cast<uint32_t>(mask)),
                                    repeatTime);
}
template <class T, bool isSetMask>
inline l0::Plan MaskPlan(const char* api, const uint64_t* mask, int32_t repeatTime) {
  return l0::MaskPlan<T, isSetMask>(api, mask, repeatTime);
}

inline void CheckStride(const char* api, const char* what, int64_t v) {
  if (v < 0 || v > PYASC_MAX_REPEAT_STRIDE)
    Fail(api, ": ", what, " ", v, " is outside [0, ", PYASC_MAX_REPEAT_STRIDE, "]");
}

// The active lanes of repeat r of src: their values (float), lane numbers and definedness.
template <class T>
struct RepeatLanes {
  float v[kLanes<T>];
  int32_t lane[kLanes<T>];
  bool ok[kLanes<T>];
  bool active[kLanes<T>];
  int64_t n = 0;
};

template <class T>
inline void Gather(const l0::Plan& p, const T* s, const LocalTensor<T>& src, const l0::Stride& st,
                   int64_t r, RepeatLanes<T>& out) {
  out.n = l0::LanesOf(p, r);
  for (int64_t k = 0; k < kLanes<T>; ++k) out.active[k] = false;
  for (int64_t i = 0; i < out.n; ++i) {
    const int32_t k = p.lanes[static_cast<size_t>(i)];
    const int64_t e = l0::Elem<T>(st, r, k);
    out.v[i] = static_cast<float>(s[e]);
    out.lane[i] = k;
    out.active[k] = true;
    out.ok[i] = !kMemcheck || l0::LaneDefined(src, e);
  }
}

// a + b rounded to T; with kSat, a half sum of finite operands that overflows is +-65504.
template <class T, bool kSat>
inline float AddT(float a, float b) {
  const float s = a + b;
  if constexpr (std::is_same_v<T, half>) {
    float h = static_cast<float>(static_cast<half>(s));
    if (kSat && std::isinf(h) && !std::isinf(a) && !std::isinf(b)) h = std::copysign(kHalfMax, h);
    return h;
  } else {
    return s;
  }
}

// Binary tree over v[0, n) (n a power of two): adjacent pairs, level by level.
template <class T, bool kSat>
inline float Tree(float* v, int64_t n) {
  for (int64_t w = n; w > 1; w /= 2)
    for (int64_t i = 0; i < w / 2; ++i) v[i] = AddT<T, kSat>(v[2 * i], v[2 * i + 1]);
  return v[0];
}

// Sum of lanes [lo, lo + width) of one repeat (masked-off lanes +0) in the tree order.
template <class T, bool kSat>
inline float LaneSum(const RepeatLanes<T>& g, const float* byLane, int64_t lo, int64_t width) {
  float v[kLanes<T>];
  for (int64_t k = 0; k < width; ++k) v[k] = g.active[lo + k] ? byLane[lo + k] : 0.0f;
  return Tree<T, kSat>(v, width);
}

// Extreme of the active lanes with index [lo, lo + width) of one repeat; `at` gets the lane.
template <bool kMax, class T>
inline bool LaneExtreme(const RepeatLanes<T>& g, int64_t lo, int64_t width, float& best,
                        int32_t& at, bool& ok) {
  bool any = false;
  ok = true;
  for (int64_t i = 0; i < g.n; ++i) {
    const int32_t k = g.lane[i];
    if (k < lo || k >= lo + width) continue;
    ok = ok && g.ok[i];
    const float x = g.v[i];
    if (!any) {
      best = x;
      at = k;
      any = true;
      continue;
    }
    const float next = kMax ? detail::VMax(best, x) : detail::VMin(best, x);
    const bool moved = std::isnan(next) ? !std::isnan(best) : (kMax ? x > best : x < best);
    best = next;
    if (moved) at = k;
  }
  return any;
}

template <class T>
inline void SetDefined(const LocalTensor<T>& t, uint64_t byteOff, uint64_t n, bool ok) {
  if constexpr (kMemcheck)
    std::memset(mc::Sh(t.CpuOffset() + byteOff), ok ? 0xFF : 0, static_cast<size_t>(n));
}

// Index bits of `idx` as a T (uint16_t for half, uint32_t for float).
template <class T>
inline T IndexAsT(int64_t idx) {
  T out;
  if constexpr (sizeof(T) == 2) {
    const uint16_t v = static_cast<uint16_t>(idx);
    std::memcpy(&out, &v, 2);
  } else {
    const uint32_t v = static_cast<uint32_t>(idx);
    std::memcpy(&out, &v, 4);
  }
  return out;
}

// ---- WholeReduceSum / WholeReduceMax / WholeReduceMin ----

template <class T, bool isSetMask, class M>
inline void WholeSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, M mask,
                     int32_t repeatTime, int32_t dstRepStride, int32_t srcBlkStride,
                     int32_t srcRepStride) {
  static_assert(detail::kIsFloat<T>, "WholeReduceSum: needs half or float");
  const char* api = "WholeReduceSum";
  CheckStride(api, "dstRepStride", dstRepStride);
  CheckStride(api, "srcRepStride", srcRepStride);
  if (srcBlkStride < 0 || srcBlkStride > PYASC_MAX_BLOCK_STRIDE)
    Fail(api, ": srcBlkStride ", srcBlkStride, " is outside [0, ", PYASC_MAX_BLOCK_STRIDE, "]");
  const l0::Plan p = MaskPlan<T, isSetMask>(api, mask, repeatTime);
  const l0::Stride st{srcBlkStride, srcRepStride};
  const T* s = detail::CheckUB(api, "src", src, l0::Extent<T>(p, st));
  T* d = CheckUBAt(api, "dst", dst, p.repeats ? (p.repeats - 1) * dstRepStride + 1 : 0,
                   sizeof(T));
  std::vector<T> out(static_cast<size_t>(p.repeats));
  std::vector<uint8_t> ok(static_cast<size_t>(p.repeats), 1);
  RepeatLanes<T> g;
  float byLane[kLanes<T>];
  for (int64_t r = 0; r < p.repeats; ++r) {
    Gather(p, s, src, st, r, g);
    for (int64_t i = 0; i < g.n; ++i) {
      byLane[g.lane[i]] = g.v[i];
      ok[r] = ok[r] && g.ok[i];
    }
    out[r] = static_cast<T>(LaneSum<T, true>(g, byLane, 0, kLanes<T>));
  }
  for (int64_t r = 0; r < p.repeats; ++r) {  // every repeat reads before any writes
    d[r * dstRepStride] = out[r];
    SetDefined(dst, static_cast<uint64_t>(r * dstRepStride) * sizeof(T), sizeof(T), ok[r]);
  }
}

template <bool kMax, class T, bool isSetMask, class M>
inline void WholeExtreme(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                         M mask, int32_t repeatTime, int32_t dstRepStride, int32_t srcBlkStride,
                         int32_t srcRepStride, ReduceOrder order) {
  static_assert(detail::kIsFloat<T>, "WholeReduceMax/WholeReduceMin: needs half or float");
  CheckStride(api, "dstRepStride", dstRepStride);
  CheckStride(api, "srcRepStride", srcRepStride);
  if (srcBlkStride < 0 || srcBlkStride > PYASC_MAX_BLOCK_STRIDE)
    Fail(api, ": srcBlkStride ", srcBlkStride, " is outside [0, ", PYASC_MAX_BLOCK_STRIDE, "]");
  const int o = static_cast<int>(order);
  if (o < 0 || o > static_cast<int>(ReduceOrder::ORDER_ONLY_INDEX))
    Fail(api, ": unknown ReduceOrder ", o);
  const l0::Plan p = MaskPlan<T, isSetMask>(api, mask, repeatTime);
  const l0::Stride st{srcBlkStride, srcRepStride};
  const T* s = detail::CheckUB(api, "src", src, l0::Extent<T>(p, st));
  // Result unit (bytes) and the alignment of dst: value + index 2*sizeof(T), value sizeof(T),
  // index only a uint32_t (documented dstRepStride units and dst alignments).
  const bool onlyValue = order == ReduceOrder::ORDER_ONLY_VALUE;
  const bool onlyIndex = order == ReduceOrder::ORDER_ONLY_INDEX;
  const uint64_t unit = onlyValue ? sizeof(T) : (onlyIndex ? sizeof(uint32_t) : 2 * sizeof(T));
  const uint64_t need = p.repeats ? static_cast<uint64_t>((p.repeats - 1) * dstRepStride) * unit + unit : 0;
  uint8_t* d = reinterpret_cast<uint8_t*>(
      CheckUBAt(api, "dst", dst, static_cast<int64_t>((need + sizeof(T) - 1) / sizeof(T)),
                onlyValue ? sizeof(T) : unit));
  struct Res { float v; int32_t at; bool ok; };
  std::vector<Res> res(static_cast<size_t>(p.repeats));
  RepeatLanes<T> g;
  for (int64_t r = 0; r < p.repeats; ++r) {
    Gather(p, s, src, st, r, g);
    Res& x = res[static_cast<size_t>(r)];
    LaneExtreme<kMax>(g, 0, kLanes<T>, x.v, x.at, x.ok);
  }
  for (int64_t r = 0; r < p.repeats; ++r) {
    const Res& x = res[static_cast<size_t>(r)];
    const uint64_t at = static_cast<uint64_t>(r * dstRepStride) * unit;
    const T v = static_cast<T>(x.v), i = IndexAsT<T>(x.at);
    if (onlyIndex) {
      const uint32_t u = static_cast<uint32_t>(x.at);
      std::memcpy(d + at, &u, sizeof(u));
    } else if (onlyValue) {
      std::memcpy(d + at, &v, sizeof(T));
    } else {
      const bool vi = order == ReduceOrder::ORDER_VALUE_INDEX;
      std::memcpy(d + at, vi ? &v : &i, sizeof(T));
      std::memcpy(d + at + sizeof(T), vi ? &i : &v, sizeof(T));
    }
    SetDefined(dst, at, unit, x.ok);
  }
}

// ---- BlockReduceSum/Max/Min (per DataBlock) and PairReduceSum ----

// kind: 0 sum, 1 max, 2 min. Writes dst[r*dstRepStride*8 + b] for every DataBlock b of repeat
// r that has an active lane (a DataBlock without one is left alone).
template <int kind, class T, bool isSetMask, class M>
inline void BlockReduce(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                        int32_t repeatTime, M mask, int32_t dstRepStride, int32_t srcBlkStride,
                        int32_t srcRepStride) {
  static_assert(detail::kIsFloat<T>, "BlockReduceSum/Max/Min: needs half or float");
  CheckStride(api, "dstRepStride", dstRepStride);
  CheckStride(api, "srcRepStride", srcRepStride);
  if (srcBlkStride < 0 || srcBlkStride > PYASC_MAX_BLOCK_STRIDE)
    Fail(api, ": srcBlkStride ", srcBlkStride, " is outside [0, ", PYASC_MAX_BLOCK_STRIDE, "]");
  const l0::Plan p = MaskPlan<T, isSetMask>(api, mask, repeatTime);
  const l0::Stride st{srcBlkStride, srcRepStride};
  const T* s = detail::CheckUB(api, "src", src, l0::Extent<T>(p, st));
  const int64_t per = kBlocksPerRepeat;  // results per repeat (the dstRepStride unit)
  // dst alignment: 16 B for half, 32 B for float (8 results of one repeat).
  T* d = CheckUBAt(api, "dst", dst, p.repeats ? (p.repeats - 1) * dstRepStride * per + per : 0,
                   static_cast<uint64_t>(per) * sizeof(T));
  struct Res { T v; bool ok; bool any; };
  std::vector<Res> res(static_cast<size_t>(p.repeats * per));
  RepeatLanes<T> g;
  float byLane[kLanes<T>];
  for (int64_t r = 0; r < p.repeats; ++r) {
    Gather(p, s, src, st, r, g);
    for (int64_t i = 0; i < g.n; ++i) byLane[g.lane[i]] = g.v[i];
    for (int64_t b = 0; b < per; ++b) {
      Res& x = res[static_cast<size_t>(r * per + b)];
      float v = 0.0f;
      int32_t at = 0;
      x.any = LaneExtreme<kind == 1>(g, b * kPerBlock<T>, kPerBlock<T>, v, at, x.ok);
      if (kind == 0) v = LaneSum<T, true>(g, byLane, b * kPerBlock<T>, kPerBlock<T>);
      x.v = static_cast<T>(v);
    }
  }
  for (int64_t r = 0; r < p.repeats; ++r)
    for (int64_t b = 0; b < per; ++b) {
      const Res& x = res[static_cast<size_t>(r * per + b)];
      if (!x.any) continue;
      const int64_t e = r * dstRepStride * per + b;
      d[e] = x.v;
      SetDefined(dst, static_cast<uint64_t>(e) * sizeof(T), sizeof(T), x.ok);
    }
}

// PairReduceSum: result j of repeat r (lanes 2j, 2j+1) at dst[r*dstRepStride*(lanes/2) + j];
// a pair with one active lane gives that lane's value, a pair with none is left alone.
template <class T, bool isSetMask, class M>
inline void PairReduce(const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t repeatTime,
                       M mask, int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride) {
  static_assert(detail::kIsFloat<T>, "PairReduceSum: needs half or float");
  const char* api = "PairReduceSum";
  CheckStride(api, "dstRepStride", dstRepStride);
  CheckStride(api, "srcRepStride", srcRepStride);
  if (srcBlkStride < 0 || srcBlkStride > PYASC_MAX_BLOCK_STRIDE)
    Fail(api, ": srcBlkStride ", srcBlkStride, " is outside [0, ", PYASC_MAX_BLOCK_STRIDE, "]");
  const l0::Plan p = MaskPlan<T, isSetMask>(api, mask, repeatTime);
  const l0::Stride st{srcBlkStride, srcRepStride};
  const T* s = detail::CheckUB(api, "src", src, l0::Extent<T>(p, st));
  const int64_t per = kLanes<T> / 2;
  T* d = CheckUBAt(api, "dst", dst, p.repeats ? (p.repeats - 1) * dstRepStride * per + per : 0,
                   kBlock);
  struct Res { T v; bool ok; bool any; };
  std::vector<Res> res(static_cast<size_t>(p.repeats * per));
  RepeatLanes<T> g;
  float byLane[kLanes<T>];
  bool okLane[kLanes<T>];
  for (int64_t r = 0; r < p.repeats; ++r) {
    Gather(p, s, src, st, r, g);
    for (int64_t i = 0; i < g.n; ++i) {
      byLane[g.lane[i]] = g.v[i];
      okLane[g.lane[i]] = g.ok[i];
    }
    for (int64_t j = 0; j < per; ++j) {
      Res& x = res[static_cast<size_t>(r * per + j)];
      const bool a = g.active[2 * j], b = g.active[2 * j + 1];
      x.any = a || b;
      x.ok = (!a || okLane[2 * j]) && (!b || okLane[2 * j + 1]);
      const float v = a && b ? AddT<T, false>(byLane[2 * j], byLane[2 * j + 1])
                             : (a ? byLane[2 * j] : byLane[2 * j + 1]);
      x.v = x.any ? static_cast<T>(v) : T{};
    }
  }
  for (int64_t r = 0; r < p.repeats; ++r)
    for (int64_t j = 0; j < per; ++j) {
      const Res& x = res[static_cast<size_t>(r * per + j)];
      if (!x.any) continue;
      const int64_t e = r * dstRepStride * per + j;
      d[e] = x.v;
      SetDefined(dst, static_cast<uint64_t>(e) * sizeof(T), sizeof(T), x.ok);
    }
}

}  // namespace red
}  // namespace cpu

// WholeReduceSum<T, isSetMask>(dst, src, mask | mask[], repeatTime, dstRepStride, srcBlkStride,
// srcRepStride): dst[r * dstRepStride] = the tree sum of the active lanes of repeat r.
template <class T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                           const int32_t repeatTime, const int32_t dstRepStride,
                           const int32_t srcBlkStride, const int32_t srcRepStride) {
  cpu::red::WholeSum<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride,
                                   srcRepStride);
}
template <class T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                           const uint64_t mask[], const int32_t repeatTime,
                           const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride) {
  cpu::red::WholeSum<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride,
                                   srcRepStride);
}

// WholeReduceMax/Min<T, isSetMask>(dst, src, mask | mask[], repeatTime, dstRepStride,
// srcBlkStride, srcRepStride, order = ORDER_VALUE_INDEX): per repeat the extreme of its active
// lanes and the lane index (inside the repeat) of its first occurrence, stored per `order`.
#define PYASC_WHOLE_EXTREME(NAME, KMAX)                                                         \
  template <class T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,   \
                   const int32_t repeatTime, const int32_t dstRepStride,                        \
                   const int32_t srcBlkStride, const int32_t srcRepStride,                      \
                   ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {                        \
    cpu::red::WholeExtreme<KMAX, T, isSetMask>(#NAME, dst, src, mask, repeatTime, dstRepStride, \
                                               srcBlkStride, srcRepStride, order);              \
  }                                                                                             \
  template <class T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], \
                   const int32_t repeatTime, const int32_t dstRepStride,                        \
                   const int32_t srcBlkStride, const int32_t srcRepStride,                      \
                   ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {                        \
    cpu::red::WholeExtreme<KMAX, T, isSetMask>(#NAME, dst, src, mask, repeatTime, dstRepStride, \
                                               srcBlkStride, srcRepStride, order);              \
  }
PYASC_WHOLE_EXTREME(WholeReduceMax, true)
PYASC_WHOLE_EXTREME(WholeReduceMin, false)
#undef PYASC_WHOLE_EXTREME

// BlockReduceSum/Max/Min<T, isSetMask>(dst, src, repeatTime, mask | mask[], dstRepStride,
// srcBlkStride, srcRepStride): one result per 32-byte DataBlock, 8 per repeat.
#define PYASC_BLOCK_REDUCE(NAME, KIND)                                                          \
  template <class T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                       \
                   const int32_t repeatTime, const int32_t mask, const int32_t dstRepStride,   \
                   const int32_t srcBlkStride, const int32_t srcRepStride) {                    \
    cpu::red::BlockReduce<KIND, T, isSetMask>(#NAME, dst, src, repeatTime, mask, dstRepStride,  \
                                              srcBlkStride, srcRepStride);                      \
  }                                                                                             \
  template <class T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                       \
                   const int32_t repeatTime, const uint64_t mask[], const int32_t dstRepStride, \
                   const int32_t srcBlkStride, const int32_t srcRepStride) {                    \
    cpu::red::BlockReduce<KIND, T, isSetMask>(#NAME, dst, src, repeatTime, mask, dstRepStride,  \
                                              srcBlkStride, srcRepStride);                      \
  }
PYASC_BLOCK_REDUCE(BlockReduceSum, 0)
PYASC_BLOCK_REDUCE(BlockReduceMax, 1)
PYASC_BLOCK_REDUCE(BlockReduceMin, 2)
#undef PYASC_BLOCK_REDUCE

// PairReduceSum<T, isSetMask>(dst, src, repeatTime, mask | mask[], dstRepStride, srcBlkStride,
// srcRepStride): adjacent pairs of each repeat, lanes/2 results per repeat.
template <class T, bool isSetMask = true>
inline void PairReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                          const int32_t repeatTime, const int32_t mask, const int32_t dstRepStride,
                          const int32_t srcBlkStride, const int32_t srcRepStride) {
  cpu::red::PairReduce<T, isSetMask>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride,
                                     srcRepStride);
}
template <class T, bool isSetMask = true>
inline void PairReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                          const int32_t repeatTime, const uint64_t mask[],
                          const int32_t dstRepStride, const int32_t srcBlkStride,
                          const int32_t srcRepStride) {
  cpu::red::PairReduce<T, isSetMask>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride,
                                     srcRepStride);
}

}  // namespace AscendC

#include "reduce_scalar.h"

#endif  // PYASC_CPU_REDUCE_H
