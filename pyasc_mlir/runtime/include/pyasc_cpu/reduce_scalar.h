// pyasc_cpu/reduce_scalar.h -- ReduceSum / ReduceMax / ReduceMin (one result in dst[0], the
// index in dst[1]) in the count form ("tensor前n个数据计算") and the level-0 forms ("tensor高维切分
// 计算": mask / bit mask, repeatTime, srcRepStride), the sharedTmpBuffer size checks, and the
// accessors GetReduceRepeatSumSpr / GetReduceMaxMinCount (included by pyasc_cpu/reduce.h).
//
// Sources: the ReduceSum, ReduceMax, ReduceMin, GetReduceRepeatSumSpr and GetReduceMaxMinCount
// pages of the Ascend C API reference (Atlas A2). Documented facts used:
//  * sum order: count form = tree within each repeat, repeat results added in order ("方式二");
//    level-0 form = tree within each repeat and a tree over the repeat results ("方式一");
//  * sharedTmpBuffer minimum (elements; E = 32 B / sizeof(T), R = 256 B / sizeof(T),
//    F = repeatTime, or count / R (at least 1) for the count form):
//    ReduceSum: ceil(F / E) * E; ReduceMax/Min without index: ceil(2F / E) * E; with index:
//    the sum of the three rounds' aligned outputs (see MaxMinWork);
//  * several extremes: the index of the first; half: indices up to 65535 only;
//  * the index is stored as the bits of dst[1] (uint16_t for half, uint32_t for float);
//  * GetReduceRepeatSumSpr only after the count-form ReduceSum; GetReduceMaxMinCount(value,
//    index) cannot give an accurate index on the Atlas A2 (refused here; the value form works).
#ifndef PYASC_CPU_REDUCE_SCALAR_H
#define PYASC_CPU_REDUCE_SCALAR_H

#include <cmath>
#include <limits>
#include <vector>

namespace AscendC {
namespace cpu {
namespace red {

inline int64_t CeilTo(int64_t n, int64_t unit) { return (n + unit - 1) / unit * unit; }

// First-round repeats of the count form: count / R, at least 1 (documented).
template <class T>
inline int64_t CountRepeats(int64_t count) {
  const int64_t f = count / kLanes<T>;
  return f < 1 ? 1 : f;
}

// Documented sharedTmpBuffer minimum (elements) of ReduceMax/ReduceMin for F first-round repeats.
template <class T>
inline int64_t MaxMinWork(int64_t f, bool calIndex) {
  const int64_t e = kPerBlock<T>, r = kLanes<T>;
  const int64_t out1 = 2 * f, a = CeilTo(out1, e);
  if (!calIndex || out1 <= 2) return a;
  const int64_t out2 = CeilTo(out1, r) / r * 2, b = CeilTo(out2, e);
  if (out2 <= 2) return a + b;
  const int64_t out3 = CeilTo(out2, r) / r * 2;
  return a + b + CeilTo(out3, e);
}

template <class T>
inline void CheckWork(const char* api, const LocalTensor<T>& work, int64_t need) {
  if (!work.CpuValid()) Fail(api, ": sharedTmpBuffer LocalTensor was never allocated");
  if (static_cast<uint64_t>(need) > work.CpuSize())
    FailAccess(api, ": sharedTmpBuffer holds ", work.CpuSize(), " elements (",
               work.CpuSize() * sizeof(T), " bytes); the documented minimum for this call is ",
               need, " elements (", static_cast<uint64_t>(need) * sizeof(T), " bytes)");
  detail::CheckUB(api, "sharedTmpBuffer", work, 0);
}

// Round every float to the nearest half and back (fp16 accumulation step).
inline void RoundThroughHalf(float* v, int64_t n) {
  half h[detail::kChunk];
  for (int64_t o = 0; o < n; o += detail::kChunk) {
    const int64_t m = n - o < detail::kChunk ? n - o : detail::kChunk;
    detail::F2H(v + o, h, m);
    detail::H2F(h, v + o, m);
  }
}

// Count-form ReduceSum order: the data is split into 256-byte repeats (R elements; the last
// zero-padded to R). Within a repeat a binary tree adds adjacent pairs level by level
// (v[i] = v[2i] + v[2i+1], R -> R/2 -> ... -> 1). The repeat results are then added in repeat
// order: ((r0 + r1) + r2) + ... Every addition is rounded to T.
template <class T>
inline T TreeSum(const T* s, int64_t count) {
  constexpr int64_t R = kLanes<T>;
  const int64_t reps = (count + R - 1) / R;
  std::vector<float> v(static_cast<size_t>(reps * R), 0.0f);
  if constexpr (std::is_same_v<T, half>) detail::H2F(s, v.data(), count);
  else std::memcpy(v.data(), s, static_cast<size_t>(count) * sizeof(float));
  for (int64_t width = R; width > 1; width /= 2) {
    const int64_t half_w = width / 2;
    for (int64_t r = 0; r < reps; ++r) {
      float* in = v.data() + r * width;
      float* out = v.data() + r * half_w;
      for (int64_t i = 0; i < half_w; ++i) out[i] = in[2 * i] + in[2 * i + 1];
    }
    if constexpr (std::is_same_v<T, half>) RoundThroughHalf(v.data(), reps * half_w);
  }
  float acc = v[0];
  for (int64_t r = 1; r < reps; ++r) acc = AddT<T, false>(acc, v[static_cast<size_t>(r)]);
  return static_cast<T>(acc);
}

// Level-0 ReduceSum over the repeat results: groups of R (the last zero-padded to R), each
// summed by the binary tree, until one value is left.
template <class T>
inline float TreeOfRepeats(std::vector<float> v) {
  constexpr int64_t R = kLanes<T>;
  while (v.size() > 1) {
    const int64_t groups = (static_cast<int64_t>(v.size()) + R - 1) / R;
    std::vector<float> next(static_cast<size_t>(groups));
    for (int64_t g = 0; g < groups; ++g) {
      float w[R];
      for (int64_t k = 0; k < R; ++k) {
        const size_t i = static_cast<size_t>(g * R + k);
        w[k] = i < v.size() ? v[i] : 0.0f;
      }
      next[static_cast<size_t>(g)] = Tree<T, false>(w, R);
    }
    v.swap(next);
  }
  return v.empty() ? 0.0f : v[0];
}

// The fold of VMax/VMin over `n` values (order-free: NaN if any is NaN, else the extreme; a zero
// result is +0 (max) / -0 (min) if any value is that zero) and the position of the first value
// equal to the result (the first NaN for a NaN result).
template <bool kMax>
inline float Fold(const float* x, int64_t n, int64_t& at) {
  float best = x[0];
  at = 0;
  for (int64_t i = 1; i < n; ++i) {
    const float next = kMax ? detail::VMax(best, x[i]) : detail::VMin(best, x[i]);
    const bool moved = std::isnan(next) ? !std::isnan(best) : (kMax ? x[i] > best : x[i] < best);
    best = next;
    if (moved) at = i;
  }
  return best;
}

template <class T>
inline void CheckHalfIndex(const char* api, bool calIndex, int64_t extent) {
  constexpr int64_t kMaxIndex = std::numeric_limits<uint16_t>::max();
  if (std::is_same_v<T, half> && calIndex && extent > kMaxIndex + 1)
    Fail(api, ": calIndex with half data supports indices up to ", kMaxIndex, " only; the call "
         "covers ", extent, " elements");
}

// Writes the extreme (and its index) and records it for GetReduceMaxMinCount.
template <class T>
inline void StoreExtreme(T* d, const LocalTensor<T>& dst, float v, int64_t at, bool calIndex) {
  d[0] = static_cast<T>(v);
  if (calIndex) d[1] = IndexAsT<T>(at);
  if constexpr (kMemcheck) mc::Define(dst.CpuOffset(), (calIndex ? 2 : 1) * sizeof(T));
  Core().reduce_extreme_set = true;
  Core().reduce_extreme = static_cast<float>(static_cast<T>(v));
}

template <bool kMax, class T>
inline void CountExtreme(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                         const LocalTensor<T>& work, int64_t count, bool calIndex) {
  static_assert(detail::kIsFloat<T>, "ReduceMax/ReduceMin: needs half or float");
  if (count <= 0) Fail(api, ": count must be positive, got ", count);
  CheckHalfIndex<T>(api, calIndex, count);
  T* d = CheckUBAt(api, "dst", dst, calIndex ? 2 : 1, calIndex ? 2 * sizeof(T) : sizeof(T));
  const T* s = detail::CheckUB(api, "src", src, count);
  CheckWork(api, work, MaxMinWork<T>(CountRepeats<T>(count), calIndex));
  if constexpr (kMemcheck)
    mc::RequireDefined(api, "src", src, 0, static_cast<uint64_t>(count) * sizeof(T));
  std::vector<float> x(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) x[static_cast<size_t>(i)] = static_cast<float>(s[i]);
  int64_t at = 0;
  const float v = Fold<kMax>(x.data(), count, at);
  StoreExtreme(d, dst, v, at, calIndex);
}

// Lane plan of the level-0 ReduceSum/Max/Min: Normal mode, repeatTime in [0, INT32_MAX]
// (documented: larger than the usual 255), srcBlkStride 1.
template <class T, bool isSetMask>
inline l0::Plan LongPlan(const char* api, int32_t mask, int32_t repeatTime) {
  if (repeatTime < 0) Fail(api, ": negative repeatTime ", repeatTime);
  if (Core().mask_mode == MaskMode::COUNTER)
    Fail(api, ": the level-0 form is modelled in Normal mode only (call SetMaskNorm)");
  uint64_t hi = 0, lo = 0;
  if constexpr (isSetMask) {
    if (mask < 1)
      Fail(api, ": mask ", mask, " is outside [1, ", kLanes<T>, "] for ", sizeof(T) * 8,
           "-bit elements");
    l0::ContiguousBits<T>(api, static_cast<uint64_t>(mask), hi, lo);
    Core().mask_high = hi;
    Core().mask_low = lo;
  } else {
    if (mask != 0) Fail(api, ": isSetMask = false takes the mask from SetVectorMask; pass "
                        "MASK_PLACEHOLDER, not ", mask);
    hi = sizeof(T) == 4 ? 0 : Core().mask_high;
    lo = Core().mask_low;
    l0::CheckBits<T>(api, hi, lo);
  }
  return l0::PlanFromBits<T>(hi, lo, repeatTime);
}
template <class T, bool isSetMask>
inline l0::Plan LongPlan(const char* api, const uint64_t* mask, int32_t repeatTime) {
  if (repeatTime < 0) Fail(api, ": negative repeatTime ", repeatTime);
  if (Core().mask_mode == MaskMode::COUNTER)
    Fail(api, ": the level-0 form is modelled in Normal mode only (call SetMaskNorm)");
  if (mask == nullptr) Fail(api, ": null mask array");
  uint64_t hi = sizeof(T) == 4 ? 0 : mask[1], lo = mask[0];
  if constexpr (!isSetMask) {
    hi = sizeof(T) == 4 ? 0 : Core().mask_high;
    lo = Core().mask_low;
  }
  l0::CheckBits<T>(api, hi, lo);
  if constexpr (isSetMask) {
    Core().mask_high = hi;
    Core().mask_low = lo;
  }
  return l0::PlanFromBits<T>(hi, lo, repeatTime);
}

// Values and element offsets of every active lane, repeat-major; reports undefined lanes.
template <class T>
inline void Collect(const char* api, const l0::Plan& p, const LocalTensor<T>& src,
                    int32_t srcRepStride, std::vector<float>& v, std::vector<int64_t>& off) {
  if (srcRepStride < 0) Fail(api, ": negative srcRepStride ", srcRepStride);
  const l0::Stride st{1, srcRepStride};
  const T* s = detail::CheckUB(api, "src", src, l0::Extent<T>(p, st));
  for (int64_t r = 0; r < p.repeats; ++r)
    for (int64_t i = 0; i < l0::LanesOf(p, r); ++i) {
      const int64_t e = l0::Elem<T>(st, r, p.lanes[static_cast<size_t>(i)]);
      if constexpr (kMemcheck)
        if (!l0::LaneDefined(src, e))
          FailAccess(api, ": read of uninitialised UB: src element ", e, " (UB offset ",
                     src.CpuOffset() + static_cast<uint64_t>(e) * sizeof(T),
                     ", repeat ", r, ") was never written in this block");
      v.push_back(static_cast<float>(s[e]));
      off.push_back(e);
    }
}

template <class T, bool isSetMask, class M>
inline void Level0Sum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                      const LocalTensor<T>& work, M mask, int32_t repeatTime,
                      int32_t srcRepStride) {
  static_assert(detail::kIsFloat<T>, "ReduceSum: needs half or float");
  const char* api = "ReduceSum";
  const l0::Plan p = LongPlan<T, isSetMask>(api, mask, repeatTime);
  T* d = CheckUBAt(api, "dst", dst, 1, sizeof(T));
  CheckWork(api, work, CeilTo(repeatTime, kPerBlock<T>));
  std::vector<float> v;
  std::vector<int64_t> off;
  Collect(api, p, src, srcRepStride, v, off);
  std::vector<float> sums(static_cast<size_t>(p.repeats));
  size_t next = 0;
  for (int64_t r = 0; r < p.repeats; ++r) {
    float w[kLanes<T>];
    for (int64_t k = 0; k < kLanes<T>; ++k) w[k] = 0.0f;
    for (int64_t i = 0; i < l0::LanesOf(p, r); ++i) w[p.lanes[static_cast<size_t>(i)]] = v[next++];
    sums[static_cast<size_t>(r)] = Tree<T, false>(w, kLanes<T>);
  }
  d[0] = static_cast<T>(TreeOfRepeats<T>(sums));
  if constexpr (kMemcheck) mc::Define(dst.CpuOffset(), sizeof(T));
  Core().reduce_sum_set = false;  // GetReduceRepeatSumSpr: count form only
}

template <bool kMax, class T, class M>
inline void Level0Extreme(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                          const LocalTensor<T>& work, M mask, int32_t repeatTime,
                          int32_t srcRepStride, bool calIndex) {
  static_assert(detail::kIsFloat<T>, "ReduceMax/ReduceMin: needs half or float");
  const l0::Plan p = LongPlan<T, true>(api, mask, repeatTime);
  if (p.repeats == 0) Fail(api, ": repeatTime 0 leaves no element to reduce");
  CheckHalfIndex<T>(api, calIndex, l0::Extent<T>(p, l0::Stride{1, srcRepStride}));
  T* d = CheckUBAt(api, "dst", dst, calIndex ? 2 : 1, calIndex ? 2 * sizeof(T) : sizeof(T));
  CheckWork(api, work, MaxMinWork<T>(repeatTime, calIndex));
  std::vector<float> v;
  std::vector<int64_t> off;
  Collect(api, p, src, srcRepStride, v, off);
  int64_t at = 0;
  const float best = Fold<kMax>(v.data(), static_cast<int64_t>(v.size()), at);
  StoreExtreme(d, dst, best, off[static_cast<size_t>(at)], calIndex);
}

}  // namespace red
}  // namespace cpu

// ReduceSum(dst, src, sharedTmpBuffer, count): dst[0] = sum of src[0, count) in the count-form
// order (TreeSum); GetReduceRepeatSumSpr<T>() returns it afterwards.
template <class T>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                      const LocalTensor<T>& work, int64_t count) {
  static_assert(cpu::detail::kIsFloat<T>, "ReduceSum: needs half or float");
  if (count <= 0) cpu::Fail("ReduceSum: count must be positive, got ", count);
  T* d = cpu::red::CheckUBAt("ReduceSum", "dst", dst, 1, sizeof(T));
  const T* s = cpu::detail::CheckUB("ReduceSum", "src", src, count);
  cpu::red::CheckWork("ReduceSum", work,
                      cpu::red::CeilTo(cpu::red::CountRepeats<T>(count), cpu::red::kPerBlock<T>));
  if constexpr (cpu::kMemcheck) {
    cpu::mc::RequireDefined("ReduceSum", "src", src, 0, static_cast<uint64_t>(count) * sizeof(T));
    cpu::mc::Define(dst.CpuOffset(), sizeof(T));
  }
  d[0] = cpu::red::TreeSum(s, count);
  cpu::Core().reduce_sum_set = true;
  cpu::Core().reduce_sum = static_cast<float>(d[0]);
}

// Level-0 ReduceSum<T, isSetMask>(dst, src, sharedTmpBuffer, mask | mask[], repeatTime,
// srcRepStride): the active lanes of repeatTime repeats, tree within and across repeats.
template <class T, bool isSetMask = true>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                      const LocalTensor<T>& work, const int32_t mask, const int32_t repeatTime,
                      const int32_t srcRepStride) {
  cpu::red::Level0Sum<T, isSetMask>(dst, src, work, mask, repeatTime, srcRepStride);
}
template <class T, bool isSetMask = true>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                      const LocalTensor<T>& work, const uint64_t mask[], const int32_t repeatTime,
                      const int32_t srcRepStride) {
  cpu::red::Level0Sum<T, isSetMask>(dst, src, work, mask, repeatTime, srcRepStride);
}

// ReduceMax/ReduceMin(dst, src, sharedTmpBuffer, count[, calIndex]) and the level-0 forms
// (dst, src, sharedTmpBuffer, mask | mask[], repeatTime, srcRepStride[, calIndex]): dst[0] =
// the extreme; with calIndex dst[1] = the bits (uint16_t / uint32_t) of the index of its first
// occurrence (count form: in [0, count); level-0: the element offset from src).
#define PYASC_REDUCE_EXTREME(NAME, KMAX)                                                        \
  template <class T>                                                                            \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                       \
                   const LocalTensor<T>& work, int64_t count, bool calIndex = false) {          \
    cpu::red::CountExtreme<KMAX>(#NAME, dst, src, work, count, calIndex);                       \
  }                                                                                             \
  template <class T>                                                                            \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                       \
                   const LocalTensor<T>& work, const int32_t mask, const int32_t repeatTime,   \
                   const int32_t srcRepStride, bool calIndex = false) {                         \
    cpu::red::Level0Extreme<KMAX>(#NAME, dst, src, work, mask, repeatTime, srcRepStride,        \
                                  calIndex);                                                    \
  }                                                                                             \
  template <class T>                                                                            \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                       \
                   const LocalTensor<T>& work, const uint64_t mask[], const int32_t repeatTime, \
                   const int32_t srcRepStride, bool calIndex = false) {                         \
    cpu::red::Level0Extreme<KMAX>(#NAME, dst, src, work, mask, repeatTime, srcRepStride,        \
                                  calIndex);                                                    \
  }
PYASC_REDUCE_EXTREME(ReduceMax, true)
PYASC_REDUCE_EXTREME(ReduceMin, false)
#undef PYASC_REDUCE_EXTREME

// GetReduceRepeatSumSpr<T>(): the result of the last count-form ReduceSum of this block.
template <class T>
inline T GetReduceRepeatSumSpr() {
  static_assert(cpu::detail::kIsFloat<T>, "GetReduceRepeatSumSpr: needs half or float");
  if (!cpu::Core().reduce_sum_set)
    cpu::Fail("GetReduceRepeatSumSpr: no count-form ReduceSum(dst, src, work, count) ran in this "
              "block since the last reduction (the accessor supports only that form)");
  return static_cast<T>(cpu::Core().reduce_sum);
}

// GetReduceMaxMinCount<T>(value): the extreme of the last ReduceMax/ReduceMin of this block.
template <class T>
inline void GetReduceMaxMinCount(T& maxMinValue) {
  static_assert(cpu::detail::kIsFloat<T>, "GetReduceMaxMinCount: needs half or float");
  if (!cpu::Core().reduce_extreme_set)
    cpu::Fail("GetReduceMaxMinCount: no ReduceMax/ReduceMin ran in this block");
  maxMinValue = static_cast<T>(cpu::Core().reduce_extreme);
}
// GetReduceMaxMinCount<T>(value, index): refused -- on the Atlas A2 the index it returns is
// documented as inaccurate (use ReduceMax/Min with calIndex, or WholeReduceMax/Min).
template <class T>
inline void GetReduceMaxMinCount(T& maxMinValue, T& maxMinIndex) {
  (void)maxMinValue;
  (void)maxMinIndex;
  cpu::Fail("GetReduceMaxMinCount(value, index): the Atlas A2 cannot return an accurate index "
            "(documented); read dst[1] of ReduceMax/ReduceMin with calIndex, or use "
            "WholeReduceMax/WholeReduceMin");
}

}  // namespace AscendC

#endif  // PYASC_CPU_REDUCE_SCALAR_H
