// pyasc_cpu/vector_level0.h -- the mask / repeat ("tensor高维切分计算", level 0) forms of the
// vector API of the clean-room CPU runtime, the vector-mask registers, LeakyRelu and the count
// forms with an explicit isSetMask (included by kernel_operator.h after the count forms).
//
// Sources (public Ascend C API reference): "基础API通用说明" (repeat times, block stride and
// repeat stride in 32-byte DataBlocks, mask), BinaryRepeatParams, UnaryRepeatParams, the pages
// of Add/Sub/Mul/Div/Max/Min, Exp/Ln/Abs/Sqrt/Rsqrt/Reciprocal/Relu, Adds/Muls/Maxs/Mins,
// LeakyRelu, Duplicate, SetVectorMask, SetMaskCount, SetMaskNorm, ResetMask.
//
// Model. A repeat covers 8 DataBlocks of 32 bytes (256 / sizeof(T) lanes: 128 for 16-bit, 64 for
// 32-bit types). Lane k of repeat r of an operand with block stride b and repeat stride R (both
// in DataBlocks) is element r*R*E + (k/E)*b*E + k%E, E = 32 / sizeof(T). Active lanes:
//   * Normal mode, mask (uint64_t): lanes [0, mask), mask in [1, lanes]; mask[] (uint64_t[2]):
//     lane k active iff bit k%64 of mask[k/64] (32-bit types read mask[0] only); every repeat of
//     repeatTime in [0, 255] uses the same lanes.
//   * Counter mode (SetMaskCount): the mask is the total element count N; repeats are
//     ceil(N / lanes), the last one partial; repeatTime is ignored.
//   * isSetMask = true uses the mask argument and writes it into the mask register;
//     isSetMask = false reads the register (SetVectorMask), the argument must be
//     MASK_PLACEHOLDER.
// Masked-off lanes keep their value (and, in memory-check builds, their definedness). Every
// operand must be allocated, 32-byte aligned and hold every element an active lane touches.
// Each repeat reads all its source lanes before it writes its destination lanes; repeats run
// in order. Numerics are those of the count forms (half lanes in float, one rounding per op).
#ifndef PYASC_CPU_VECTOR_LEVEL0_H
#define PYASC_CPU_VECTOR_LEVEL0_H

#include <array>
#include <vector>

#include "core_state.h"

// Largest repeatTime of a level-0 call (the parameter is a uint8_t in Ascend C).
#if !defined(PYASC_MAX_REPEAT) || !defined(PYASC_MAX_REPEAT_STRIDE) || !defined(PYASC_MAX_BLOCK_STRIDE)
#error "vector_level0.h needs the mask/repeat limits as -D flags: pyasc_mlir.platform.header_defines()"
#endif

namespace AscendC {

// The mask argument of a level-0 call made with isSetMask = false.
constexpr uint64_t MASK_PLACEHOLDER = 0;

// Address strides of a two-source level-0 call: block strides within a repeat and repeat
// strides between repeats, in 32-byte DataBlocks. blockNumber, repeatStrideMode and
// strideSizeMode are reserved (documented defaults).
struct BinaryRepeatParams {
  BinaryRepeatParams() = default;
  BinaryRepeatParams(uint8_t dstBlkStrideIn, uint8_t src0BlkStrideIn, uint8_t src1BlkStrideIn,
                     uint8_t dstRepStrideIn, uint8_t src0RepStrideIn, uint8_t src1RepStrideIn)
      : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn),
        src1BlkStride(src1BlkStrideIn), dstRepStride(dstRepStrideIn),
        src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
  uint32_t blockNumber = 8;
  uint8_t dstBlkStride = 1;
  uint8_t src0BlkStride = 1;
  uint8_t src1BlkStride = 1;
  uint8_t dstRepStride = 8;
  uint8_t src0RepStride = 8;
  uint8_t src1RepStride = 8;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
};

// Address strides of a one-source level-0 call (same units; blockNumber, repeatStrideMode,
// strideSizeMode and halfBlock are reserved).
struct UnaryRepeatParams {
  UnaryRepeatParams() = default;
  UnaryRepeatParams(uint16_t dstBlkStrideIn, uint16_t srcBlkStrideIn, uint8_t dstRepStrideIn,
                    uint8_t srcRepStrideIn)
      : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn),
        dstRepStride(dstRepStrideIn), srcRepStride(srcRepStrideIn) {}
  uint32_t blockNumber = 8;
  uint16_t dstBlkStride = 1;
  uint16_t srcBlkStride = 1;
  uint8_t dstRepStride = 8;
  uint8_t srcRepStride = 8;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
  bool halfBlock = false;
};

// ---- mask registers ----

// Counter mode: the mask is the element count of the whole computation.
inline void SetMaskCount() { cpu::Core().mask_mode = MaskMode::COUNTER; }
// Normal mode (the default): the mask selects lanes of every repeat.
inline void SetMaskNorm() { cpu::Core().mask_mode = MaskMode::NORMAL; }
// Restore the full mask (every lane).
inline void ResetMask() { cpu::Core().mask_high = cpu::Core().mask_low = ~0ull; }

namespace cpu {
namespace l0 {

template <class T>
constexpr int64_t kLanes = static_cast<int64_t>(kRepeatBytes / sizeof(T));
template <class T>
constexpr int64_t kPerBlock = static_cast<int64_t>(kBlock / sizeof(T));

// Lane bits (high: lanes 64..127) of a contiguous Normal-mode mask of `n` lanes.
template <class T>
inline void ContiguousBits(const char* api, uint64_t n, uint64_t& high, uint64_t& low) {
  if (n < 1 || n > static_cast<uint64_t>(kLanes<T>))
    Fail(api, ": mask ", n, " is outside [1, ", kLanes<T>, "] for ", sizeof(T) * 8,
         "-bit elements");
  low = n >= 64 ? ~0ull : (1ull << n) - 1;
  high = n <= 64 ? 0 : (n >= 128 ? ~0ull : (1ull << (n - 64)) - 1);
}

// Check a Normal-mode bit mask for T (32-bit types use the low word only).
template <class T>
inline void CheckBits(const char* api, uint64_t high, uint64_t low) {
  if (sizeof(T) == 4 && high != 0)
    Fail(api, ": the high mask word must be 0 for 32-bit elements, got ", high);
  if (high == 0 && low == 0) Fail(api, ": the bit mask selects no lane");
}

// Which lanes of which repeats a call processes.
struct Plan {
  int64_t repeats = 0;          // repeats processed
  std::vector<int32_t> lanes;   // active lanes of a full repeat, ascending
  int64_t last = 0;             // how many of `lanes` the last repeat processes
};

template <class T>
inline Plan PlanFromBits(uint64_t high, uint64_t low, int64_t repeats) {
  Plan p;
  p.repeats = repeats;
  for (int32_t k = 0; k < kLanes<T>; ++k)
    if (((k < 64 ? low : high) >> (k & 63)) & 1) p.lanes.push_back(k);
  p.last = static_cast<int64_t>(p.lanes.size());
  return p;
}

template <class T>
inline Plan PlanFromCount(uint64_t n) {
  Plan p;
  p.repeats = static_cast<int64_t>((n + kLanes<T> - 1) / kLanes<T>);
  for (int32_t k = 0; k < kLanes<T>; ++k) p.lanes.push_back(k);
  p.last = n == 0 ? 0 : static_cast<int64_t>(n - static_cast<uint64_t>(p.repeats - 1) * kLanes<T>);
  return p;
}

inline void CheckRepeat(const char* api, int64_t repeatTime) {
  if (repeatTime < 0 || repeatTime > PYASC_MAX_REPEAT)
    Fail(api, ": repeatTime ", repeatTime, " is outside [0, ", PYASC_MAX_REPEAT, "]");
}

// The plan of a call with a contiguous mask argument.
template <class T, bool isSetMask>
inline Plan MaskPlan(const char* api, uint64_t mask, int64_t repeatTime) {
  CoreState& c = Core();
  if constexpr (isSetMask) {
    if (c.mask_mode == MaskMode::COUNTER) {
      c.mask_high = 0;
      c.mask_low = mask;
      return PlanFromCount<T>(mask);
    }
    CheckRepeat(api, repeatTime);
    ContiguousBits<T>(api, mask, c.mask_high, c.mask_low);
    return PlanFromBits<T>(c.mask_high, c.mask_low, repeatTime);
  } else {
    if (mask != MASK_PLACEHOLDER)
      Fail(api, ": isSetMask = false takes the mask from SetVectorMask; pass MASK_PLACEHOLDER, "
           "not ", mask);
    if (c.mask_mode == MaskMode::COUNTER) return PlanFromCount<T>(c.mask_low);
    CheckRepeat(api, repeatTime);
    CheckBits<T>(api, sizeof(T) == 4 ? 0 : c.mask_high, c.mask_low);
    return PlanFromBits<T>(sizeof(T) == 4 ? 0 : c.mask_high, c.mask_low, repeatTime);
  }
}

// The plan of a call with a bit-mask argument (uint64_t[2]; 32-bit types read mask[0] only).
template <class T, bool isSetMask>
inline Plan MaskPlan(const char* api, const uint64_t* mask, int64_t repeatTime) {
  CoreState& c = Core();
  if (c.mask_mode == MaskMode::COUNTER) {
    if constexpr (isSetMask)
      Fail(api, ": the bit-mask form needs Normal mode (SetMaskNorm); Counter mode takes an "
           "element count");
    return PlanFromCount<T>(c.mask_low);
  }
  CheckRepeat(api, repeatTime);
  if constexpr (isSetMask) {
    if (mask == nullptr) Fail(api, ": null mask array");
    const uint64_t high = sizeof(T) == 4 ? 0 : mask[1];
    CheckBits<T>(api, high, mask[0]);
    c.mask_high = high;
    c.mask_low = mask[0];
  }
  const uint64_t high = sizeof(T) == 4 ? 0 : c.mask_high;
  CheckBits<T>(api, high, c.mask_low);
  return PlanFromBits<T>(high, c.mask_low, repeatTime);
}

// Strides of one operand, in DataBlocks.
struct Stride {
  int64_t blk;
  int64_t rep;
};

template <class T>
inline int64_t Elem(const Stride& s, int64_t r, int32_t k) {
  return r * s.rep * kPerBlock<T> + (k / kPerBlock<T>) * s.blk * kPerBlock<T> + k % kPerBlock<T>;
}

// Elements an operand needs (1 + the largest element an active lane touches; strides >= 0 make
// the index grow with the repeat and the lane).
template <class T>
inline int64_t Extent(const Plan& p, const Stride& s) {
  if (p.repeats == 0 || p.lanes.empty() || p.last == 0) return 0;
  int64_t e = Elem<T>(s, p.repeats - 1, p.lanes[static_cast<size_t>(p.last - 1)]) + 1;
  if (p.repeats > 1) e = std::max(e, Elem<T>(s, p.repeats - 2, p.lanes.back()) + 1);
  return e;
}

// Lanes of repeat r.
inline int64_t LanesOf(const Plan& p, int64_t r) {
  return r + 1 == p.repeats ? p.last : static_cast<int64_t>(p.lanes.size());
}

template <class T>
inline bool LaneDefined(const LocalTensor<T>& t, int64_t e) {
  return mc::ElemDefined<T>(t.CpuOffset(), e);
}
template <class T>
inline void SetLaneDefined(const LocalTensor<T>& t, int64_t e, bool ok) {
  std::memset(mc::Sh(t.CpuOffset() + static_cast<uint64_t>(e) * sizeof(T)), ok ? 0xFF : 0,
              sizeof(T));
}

// dst lanes = f(src lanes) repeat by repeat; `srcs` are (tensor, stride) pairs of T.
template <class T, size_t N, class F>
inline void Apply(const char* api, const Plan& p, const LocalTensor<T>& dst, const Stride& ds,
                  const std::array<const LocalTensor<T>*, N>& srcs,
                  const std::array<Stride, N>& ss, F f) {
  static const char* const kRoles[] = {"src0", "src1"};
  T* d = detail::CheckUB(api, "dst", dst, Extent<T>(p, ds));
  std::array<const T*, N> s{};
  for (size_t i = 0; i < N; ++i)
    s[i] = detail::CheckUB(api, N == 1 ? "src" : kRoles[i], *srcs[i], Extent<T>(p, ss[i]));
  T in[N == 0 ? 1 : N][kLanes<T>]{};
  T out[kLanes<T>];
  bool ok[kLanes<T>];
  for (int64_t r = 0; r < p.repeats; ++r) {
    const int64_t n = LanesOf(p, r);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t k = p.lanes[static_cast<size_t>(i)];
      ok[i] = true;
      for (size_t j = 0; j < N; ++j) {
        const int64_t e = Elem<T>(ss[j], r, k);
        in[j][i] = s[j][e];
        if constexpr (kMemcheck) ok[i] = ok[i] && LaneDefined(*srcs[j], e);
      }
    }
    f(out, in, n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t e = Elem<T>(ds, r, p.lanes[static_cast<size_t>(i)]);
      d[e] = out[i];
      if constexpr (kMemcheck) SetLaneDefined(dst, e, ok[i]);
    }
  }
}

}  // namespace l0
}  // namespace cpu

// SetVectorMask<T, mode>(maskHigh, maskLow): Normal: the lane bits (16-bit types: maskHigh
// lanes 64..127, not both 0; 32-bit types: maskHigh must be 0, maskLow not 0). Counter: maskHigh
// must be 0, maskLow is the element count.
template <class T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow) {
  if constexpr (mode == MaskMode::COUNTER) {
    if (maskHigh != 0) cpu::Fail("SetVectorMask: maskHigh must be 0 in Counter mode, got ", maskHigh);
  } else {
    cpu::l0::CheckBits<T>("SetVectorMask", maskHigh, maskLow);
  }
  cpu::Core().mask_high = maskHigh;
  cpu::Core().mask_low = maskLow;
}

// SetVectorMask<T, mode>(len): Normal: the first len lanes (len in [1, 256 / sizeof(T)]);
// Counter: len elements in total.
template <class T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(int32_t len) {
  if constexpr (mode == MaskMode::COUNTER) {
    if (len < 0) cpu::Fail("SetVectorMask: negative element count ", len);
    cpu::Core().mask_high = 0;
    cpu::Core().mask_low = static_cast<uint64_t>(len);
  } else {
    cpu::l0::ContiguousBits<T>("SetVectorMask", len < 0 ? 0 : static_cast<uint64_t>(len),
                               cpu::Core().mask_high, cpu::Core().mask_low);
  }
}

// ---- level-0 forms ----
namespace cpu {
namespace l0 {

// dst = f(src0, src1) over the active lanes (f: elementwise, as in the count forms).
template <class T, bool isSetMask, class M, class F>
inline void Binary(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, M mask, int32_t repeatTime,
                   const BinaryRepeatParams& q, F f) {
  const Plan p = MaskPlan<T, isSetMask>(api, mask, repeatTime);
  const Stride ds{q.dstBlkStride, q.dstRepStride};
  const std::array<Stride, 2> ss{Stride{q.src0BlkStride, q.src0RepStride},
                                 Stride{q.src1BlkStride, q.src1RepStride}};
  Apply<T, 2>(api, p, dst, ds, {&src0, &src1}, ss,
              [&](T* o, const T (*in)[kLanes<T>], int64_t n) {
                detail::Map2(o, in[0], in[1], n, f);
              });
}

// dst = f(src) over the active lanes.
template <class T, bool isSetMask, class M, class F>
inline void Unary(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src, M mask,
                  int32_t repeatTime, const UnaryRepeatParams& q, F f) {
  const Plan p = MaskPlan<T, isSetMask>(api, mask, repeatTime);
  const Stride ds{q.dstBlkStride, q.dstRepStride};
  const std::array<Stride, 1> ss{Stride{q.srcBlkStride, q.srcRepStride}};
  Apply<T, 1>(api, p, dst, ds, {&src}, ss,
              [&](T* o, const T (*in)[kLanes<T>], int64_t n) { detail::Map1(o, in[0], n, f); });
}

// dst = value over the active lanes (Duplicate).
template <class T, bool isSetMask, class M>
inline void Fill(const char* api, const LocalTensor<T>& dst, T value, M mask, int32_t repeatTime,
                 int32_t blkStride, int32_t repStride) {
  if (blkStride < 0 || blkStride > PYASC_MAX_BLOCK_STRIDE)
    Fail(api, ": dstBlockStride ", blkStride, " is outside [0, ", PYASC_MAX_BLOCK_STRIDE, "]");
  if (repStride < 0 || repStride > PYASC_MAX_REPEAT_STRIDE)
    Fail(api, ": dstRepeatStride ", repStride, " is outside [0, ", PYASC_MAX_REPEAT_STRIDE, "]");
  const Plan p = MaskPlan<T, isSetMask>(api, mask, repeatTime);
  Apply<T, 0>(api, p, dst, Stride{blkStride, repStride}, {}, {},
              [&](T* o, const T (*)[kLanes<T>], int64_t n) {
                for (int64_t i = 0; i < n; ++i) o[i] = value;
              });
}

// Elements processed by a count-form call: `count`, or with isSetMask = false the Counter-mode
// element count of the mask register.
template <bool isSetMask>
inline int64_t CountOf(const char* api, int64_t count) {
  if constexpr (isSetMask) {
    return count;
  } else {
    if (Core().mask_mode != MaskMode::COUNTER)
      Fail(api, ": the count form with isSetMask = false takes the element count from "
           "SetVectorMask in Counter mode (call SetMaskCount first)");
    return static_cast<int64_t>(Core().mask_low);
  }
}

template <class T>
constexpr bool kIsDuplicateType = detail::kIsVec<T> || std::is_same_v<T, bfloat16_t> ||
                                  std::is_same_v<T, uint16_t> || std::is_same_v<T, uint32_t>;

}  // namespace l0
}  // namespace cpu

// Binary: Op<T, isSetMask>(dst, src0, src1, mask | mask[], repeatTime, BinaryRepeatParams).
#define PYASC_L0_BINARY(NAME, EXPR, FLOAT_ONLY)                                                 \
  template <class T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0,                      \
                   const LocalTensor<T>& src1, uint64_t mask, int32_t repeatTime,              \
                   const BinaryRepeatParams& q) {                                               \
    static_assert(cpu::detail::kIsVec<T>, #NAME ": unsupported element type");                \
    static_assert(!(FLOAT_ONLY) || cpu::detail::kIsFloat<T>, #NAME ": needs half or float");  \
    cpu::l0::Binary<T, isSetMask>(#NAME, dst, src0, src1, mask, repeatTime, q,                 \
                                  [](auto x, auto y) { return EXPR; });                         \
  }                                                                                             \
  template <class T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0,                      \
                   const LocalTensor<T>& src1, const uint64_t mask[], int32_t repeatTime,      \
                   const BinaryRepeatParams& q) {                                               \
    static_assert(cpu::detail::kIsVec<T>, #NAME ": unsupported element type");                \
    static_assert(!(FLOAT_ONLY) || cpu::detail::kIsFloat<T>, #NAME ": needs half or float");  \
    cpu::l0::Binary<T, isSetMask>(#NAME, dst, src0, src1, mask, repeatTime, q,                 \
                                  [](auto x, auto y) { return EXPR; });                         \
  }

PYASC_L0_BINARY(Add, x + y, false)
PYASC_L0_BINARY(Sub, x - y, false)
PYASC_L0_BINARY(Mul, x * y, false)
PYASC_L0_BINARY(Div, x / y, true)
PYASC_L0_BINARY(Max, cpu::detail::VMax(x, y), false)
PYASC_L0_BINARY(Min, cpu::detail::VMin(x, y), false)
#undef PYASC_L0_BINARY

// Unary: Op<T, isSetMask>(dst, src, mask | mask[], repeatTime, UnaryRepeatParams).
#define PYASC_L0_UNARY(NAME, EXPR, FLOAT_ONLY)                                                  \
  template <class T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,        \
                   int32_t repeatTime, const UnaryRepeatParams& q) {                            \
    static_assert(cpu::detail::kIsVec<T>, #NAME ": unsupported element type");                \
    static_assert(!(FLOAT_ONLY) || cpu::detail::kIsFloat<T>, #NAME ": needs half or float");  \
    cpu::l0::Unary<T, isSetMask>(#NAME, dst, src, mask, repeatTime, q,                         \
                                 [](auto x) { return EXPR; });                                  \
  }                                                                                             \
  template <class T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], \
                   int32_t repeatTime, const UnaryRepeatParams& q) {                            \
    static_assert(cpu::detail::kIsVec<T>, #NAME ": unsupported element type");                \
    static_assert(!(FLOAT_ONLY) || cpu::detail::kIsFloat<T>, #NAME ": needs half or float");  \
    cpu::l0::Unary<T, isSetMask>(#NAME, dst, src, mask, repeatTime, q,                         \
                                 [](auto x) { return EXPR; });                                  \
  }

// Same expressions (and numerics) as the count forms.
PYASC_L0_UNARY(Exp, std::exp(x), true)
PYASC_L0_UNARY(Ln, std::log(x), true)
PYASC_L0_UNARY(Abs, cpu::detail::VAbs(x), false)
PYASC_L0_UNARY(Sqrt, std::sqrt(x), true)
PYASC_L0_UNARY(Rsqrt, static_cast<decltype(x)>(1.0 / std::sqrt(static_cast<double>(x))), true)
PYASC_L0_UNARY(Reciprocal, decltype(x)(1) / x, true)
PYASC_L0_UNARY(Relu, cpu::detail::VRelu(x), false)
#undef PYASC_L0_UNARY

// Scalar: Op<T, isSetMask>(dst, src, scalar, mask | mask[], repeatTime, UnaryRepeatParams), and
// the count form with an explicit isSetMask: Op<T, isSetMask>(dst, src, scalar, count) (with
// isSetMask = false the count comes from the Counter-mode mask register).
#define PYASC_L0_SCALAR(NAME, EXPR, FLOAT_ONLY, COUNT_FORM)                                     \
  template <class T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                       \
                   const typename cpu::detail::Identity<T>::type& scalar, uint64_t mask,        \
                   int32_t repeatTime, const UnaryRepeatParams& q) {                            \
    static_assert(cpu::detail::kIsVec<T>, #NAME ": unsupported element type");                \
    static_assert(!(FLOAT_ONLY) || cpu::detail::kIsFloat<T>, #NAME ": needs half or float");  \
    const auto y = static_cast<typename cpu::detail::Lane<T>::type>(scalar);                   \
    cpu::l0::Unary<T, isSetMask>(#NAME, dst, src, mask, repeatTime, q,                         \
                                 [y](auto x) { return EXPR; });                                 \
  }                                                                                             \
  template <class T, bool isSetMask = true>                                                     \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                       \
                   const typename cpu::detail::Identity<T>::type& scalar, const uint64_t mask[], \
                   int32_t repeatTime, const UnaryRepeatParams& q) {                            \
    static_assert(cpu::detail::kIsVec<T>, #NAME ": unsupported element type");                \
    static_assert(!(FLOAT_ONLY) || cpu::detail::kIsFloat<T>, #NAME ": needs half or float");  \
    const auto y = static_cast<typename cpu::detail::Lane<T>::type>(scalar);                   \
    cpu::l0::Unary<T, isSetMask>(#NAME, dst, src, mask, repeatTime, q,                         \
                                 [y](auto x) { return EXPR; });                                 \
  }                                                                                             \
  template <class T, bool isSetMask COUNT_FORM>                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                       \
                   const typename cpu::detail::Identity<T>::type& scalar, int32_t count) {      \
    static_assert(cpu::detail::kIsVec<T>, #NAME ": unsupported element type");                \
    static_assert(!(FLOAT_ONLY) || cpu::detail::kIsFloat<T>, #NAME ": needs half or float");  \
    const int64_t n = cpu::l0::CountOf<isSetMask>(#NAME, count);                               \
    T* d = cpu::detail::CheckUB(#NAME, "dst", dst, n);                                         \
    const T* a = cpu::detail::CheckUB(#NAME, "src", src, n);                                   \
    const auto y = static_cast<typename cpu::detail::Lane<T>::type>(scalar);                   \
    if constexpr (cpu::kMemcheck) cpu::mc::Elementwise(dst, n, src);                           \
    cpu::detail::Map1(d, a, n, [y](auto x) { return EXPR; });                                  \
  }

// Adds/Muls/Maxs/Mins: the count form without isSetMask is in kernel_operator.h; this one needs
// isSetMask given explicitly (Adds<half, false>(...)). LeakyRelu: dst = x >= 0 ? x : x * scalar.
PYASC_L0_SCALAR(Adds, x + y, false, )
PYASC_L0_SCALAR(Muls, x * y, false, )
PYASC_L0_SCALAR(Maxs, cpu::detail::VMax(x, decltype(x)(y)), false, )
PYASC_L0_SCALAR(Mins, cpu::detail::VMin(x, decltype(x)(y)), false, )
PYASC_L0_SCALAR(LeakyRelu, (x >= 0 ? x : x * y), true, = true)
#undef PYASC_L0_SCALAR

// Duplicate<T, isSetMask>(dst, scalar, mask | mask[], repeatTime, dstBlockStride,
// dstRepeatStride): dst lanes = scalar (int16/uint16/half/bfloat16/int32/uint32/float).
template <class T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const typename cpu::detail::Identity<T>::type& scalar,
                      uint64_t mask, int32_t repeatTime, int32_t dstBlockStride,
                      int32_t dstRepeatStride) {
  static_assert(cpu::l0::kIsDuplicateType<T>, "Duplicate: unsupported element type");
  cpu::l0::Fill<T, isSetMask>("Duplicate", dst, scalar, mask, repeatTime, dstBlockStride,
                              dstRepeatStride);
}
template <class T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const typename cpu::detail::Identity<T>::type& scalar,
                      const uint64_t mask[], int32_t repeatTime, int32_t dstBlockStride,
                      int32_t dstRepeatStride) {
  static_assert(cpu::l0::kIsDuplicateType<T>, "Duplicate: unsupported element type");
  cpu::l0::Fill<T, isSetMask>("Duplicate", dst, scalar, mask, repeatTime, dstBlockStride,
                              dstRepeatStride);
}

}  // namespace AscendC

#endif  // PYASC_CPU_VECTOR_LEVEL0_H
