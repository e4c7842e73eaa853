// pyasc_cpu/compare_select.h -- Compare, Compares/CompareScalar, GetCmpMask/SetCmpMask and
// Select of the clean-room CPU runtime (included by kernel_operator.h after vector_level0.h).
//
// Sources (public Ascend C API reference, asc-devkit docs/api/context/*.md): "Compare",
// "Compare（结果存入寄存器）", "CompareScalar" / "Compares", "GetCmpMask(ISASI)",
// "SetCmpMask(ISASI)", "Select"; the CCE intrinsic pages "vcmpv", "vcmpvs", "vsel" (what one
// repeat writes, where the CMPMASK register is read). Nothing here is from CANN-licensed code.
//
// Model (Atlas A2 / 910B; docs/CPU_RUNTIME.md "Compare / Select"):
//  * Mask bits: lane i is bit i % 8 of byte i / 8 (little endian, LSB first). A repeat covers
//    L = 256 / sizeof(T) lanes (128 for half, 64 for float and int32_t).
//  * Compare/Compares to a tensor: T half/float (every CMPMODE) or int32_t (CMPMODE::EQ only),
//    dst U int8_t/uint8_t (Compares: uint8_t). Count form: count * sizeof(T) must be a multiple
//    of 256 bytes. Level-0 forms: the mask argument and isSetMask are reserved on the A2 (no
//    effect: the instruction has no mask), so every lane of every repeat is compared; repeat r
//    writes bytes [r*L/8, (r+1)*L/8) of dst (dst strides do not apply), the sources follow
//    their block/repeat strides. There is no partial repeat.
//  * Compare (register form, no dst): one repeat, the mask selects the lanes; writes the 128-bit
//    CMPMASK register: active lanes get their bit, every other bit is 0 and, in memory-check
//    builds, undefined (the documentation does not say what they hold).
//  * GetCmpMask(dst) stores the 16 register bytes at dst; SetCmpMask(src) loads 16 bytes from
//    src (16-byte aligned operands, as documented).
//  * Select: T half/float, selMask U uint8_t/uint16_t/uint32_t/uint64_t (read as bytes).
//    dst = bit ? src0 : src1 (or the scalar), copied bit for bit (NaN payloads kept).
//    VSEL_CMPMASK_SPR (mode 0): every repeat uses bits [0, L) of selMask (count form: lane i
//    uses bit i % L); VSEL_TENSOR_SCALAR_MODE (1) / VSEL_TENSOR_TENSOR_MODE (2): selMask is
//    consumed contiguously, lane k of repeat r uses bit r*L + k. Level-0 forms: the mask
//    (isSetMask is reserved: the mask argument always applies and is written into the mask
//    register) selects lanes, masked-off lanes keep dst. Forms without a mask argument read
//    the mask register (SetVectorMask) and CMPMASK: mode 0 its bits, mode 1 the scalar (its low
//    16/32 bits), mode 2 the UB address of selMask (SetCmpMask of a tensor whose first 8 bytes
//    hold selMask.GetPhyAddr(), or its low 32 bits as NPU kernels store it).
// Refused (cpu::Error, naming the API): the types and type/mode pairs not documented for the A2
// (at run time, so that one kernel can test every pair), repeatTime outside [0, 255], the mask
// ranges of the level-0 pages, operands outside their tensors (AccessError), misaligned
// operands, a CMPMASK that holds no UB address for mode 2.
#ifndef PYASC_CPU_COMPARE_SELECT_H
#define PYASC_CPU_COMPARE_SELECT_H

#include <cstring>
#include <type_traits>

#include "core_state.h"
#include "vector_level0.h"

namespace AscendC {
namespace cpu {
namespace cs {

constexpr uint64_t kCmpMaskBytes = 16;  // the CMPMASK register: 128 bits
constexpr uint64_t kCmpMaskAlign = 16;  // GetCmpMask / SetCmpMask operand alignment

template <class T> constexpr const char* kName = "an unsupported type";
template <> constexpr const char* kName<half> = "half";
template <> constexpr const char* kName<float> = "float";
template <> constexpr const char* kName<bfloat16_t> = "bfloat16_t";
template <> constexpr const char* kName<int8_t> = "int8_t";
template <> constexpr const char* kName<uint8_t> = "uint8_t";
template <> constexpr const char* kName<int16_t> = "int16_t";
template <> constexpr const char* kName<uint16_t> = "uint16_t";
template <> constexpr const char* kName<int32_t> = "int32_t";
template <> constexpr const char* kName<uint32_t> = "uint32_t";
template <> constexpr const char* kName<int64_t> = "int64_t";
template <> constexpr const char* kName<uint64_t> = "uint64_t";

inline const char* ModeName(CMPMODE m) {
  static const char* const names[] = {"LT", "GT", "EQ", "LE", "GE", "NE"};
  const int i = static_cast<int>(m);
  return i >= 0 && i < 6 ? names[i] : "?";
}

inline const char* SelName(SELMODE m) {
  static const char* const names[] = {"VSEL_CMPMASK_SPR", "VSEL_TENSOR_SCALAR_MODE",
                                      "VSEL_TENSOR_TENSOR_MODE"};
  const int i = static_cast<int>(m);
  return i >= 0 && i < 3 ? names[i] : "?";
}

// T of Compare/Compares on the A2: half and float with every CMPMODE, int32_t with EQ only.
template <class T>
inline void CheckCmpType(const char* api, CMPMODE mode) {
  const int m = static_cast<int>(mode);
  if (m < 0 || m > 5) Fail(api, ": ", m, " is not a CMPMODE");
  if constexpr (std::is_same_v<T, int32_t>) {
    if (mode != CMPMODE::EQ)
      Fail(api, ": int32_t supports only CMPMODE::EQ on the Atlas A2 (910B), got CMPMODE::",
           ModeName(mode));
  } else if constexpr (!detail::kIsFloat<T>) {
    Fail(api, ": ", kName<T>, " sources are not supported on the Atlas A2 (910B) (supported: "
         "half, float with every CMPMODE; int32_t with CMPMODE::EQ)");
  }
}

// dst element type of Compare (int8_t, uint8_t) / Compares (uint8_t).
template <class U>
inline void CheckCmpDst(const char* api, bool uint8Only) {
  const bool ok = std::is_same_v<U, uint8_t> || (!uint8Only && std::is_same_v<U, int8_t>);
  if (!ok)
    Fail(api, ": a dst of ", kName<U>, " is not supported on the Atlas A2 (910B) (supported: ",
         uint8Only ? "uint8_t" : "int8_t, uint8_t", ")");
}

// The register form compares half or float only.
template <class T>
inline void CheckRegType(const char* api, CMPMODE mode) {
  CheckCmpType<T>(api, mode);
  if constexpr (!detail::kIsFloat<T>)
    Fail(api, ": the register form (no dst) supports half and float on the Atlas A2 (910B), "
         "not ", kName<T>);
}

template <class T, class U>
inline void CheckSelTypes(const char* api) {
  if constexpr (!detail::kIsFloat<T>)
    Fail(api, ": ", kName<T>, " is not supported on the Atlas A2 (910B) (supported: half, "
         "float)");
  constexpr bool maskOk = std::is_same_v<U, uint8_t> || std::is_same_v<U, uint16_t> ||
                          std::is_same_v<U, uint32_t> || std::is_same_v<U, uint64_t>;
  if constexpr (!maskOk)
    Fail(api, ": a selMask of ", kName<U>, " is not supported (supported: uint8_t, uint16_t, "
         "uint32_t, uint64_t)");
}

template <class L>
inline bool Cmp(L x, L y, CMPMODE m) {
  switch (m) {  // IEEE comparisons: NaN is unordered (only NE is true), +0 == -0
    case CMPMODE::LT: return x < y;
    case CMPMODE::GT: return x > y;
    case CMPMODE::EQ: return x == y;
    case CMPMODE::LE: return x <= y;
    case CMPMODE::GE: return x >= y;
    default: return x != y;
  }
}

inline bool Bit(const uint8_t* m, int64_t i) { return (m[i >> 3] >> (i & 7)) & 1; }
inline void PutBit(uint8_t* m, int64_t i, bool v) {
  const uint8_t b = static_cast<uint8_t>(1u << (i & 7));
  m[i >> 3] = v ? static_cast<uint8_t>(m[i >> 3] | b) : static_cast<uint8_t>(m[i >> 3] & ~b);
}

// Shadow bit i of the UB bytes at `off` (memory check).
inline bool ShBit(uint64_t off, int64_t i) { return Bit(mc::Sh(off), i); }
inline void PutShBit(uint64_t off, int64_t i, bool ok) { PutBit(mc::Sh(off), i, ok); }

// The CMPMASK register of this core (value and, for memory check, defined bits).
inline uint8_t* Reg() { return Core().cmp_mask; }
inline uint8_t* RegDefined() { return Core().cmp_mask_defined; }

// A GetCmpMask / SetCmpMask operand: allocated, 16-byte aligned, holding the 16 register bytes.
template <class T>
inline uint8_t* RegOperand(const char* api, const char* role, const LocalTensor<T>& t) {
  if (!t.CpuValid()) Fail(api, ": ", role, " LocalTensor was never allocated");
  if (t.CpuOffset() % kCmpMaskAlign != 0)
    FailAccess(api, ": ", role, " UB offset ", t.CpuOffset(), " is not ", kCmpMaskAlign,
               "-byte aligned");
  if (t.CpuSize() * sizeof(T) < kCmpMaskBytes)
    FailAccess(api, ": ", role, " LocalTensor at UB offset ", t.CpuOffset(), " holds ",
               t.CpuSize() * sizeof(T), " bytes; the CMPMASK register is ", kCmpMaskBytes,
               " bytes");
  race::OnOperand(api, role, t.CpuOffset(), kCmpMaskBytes);
  return reinterpret_cast<uint8_t*>(t.CpuPtr());
}

// Operand strides of a compare (dst strides do not apply: bits are written contiguously).
struct CmpOperand {
  const uint8_t* base;  // host pointer of the source
  uint64_t off;         // its UB offset (memory check)
  l0::Stride stride;
};

// Compare `repeats` full repeats of src0 with src1 (or the scalar when src1 is null) into the
// bit sink `put(bit index, value, defined)`.
template <class T, class Put>
inline void CompareRepeats(const l0::Plan& p, const CmpOperand& a, const CmpOperand* b,
                           T scalar, CMPMODE mode, Put put) {
  using L = typename detail::Lane<T>::type;
  const T* pa = reinterpret_cast<const T*>(a.base);
  const T* pb = b ? reinterpret_cast<const T*>(b->base) : nullptr;
  for (int64_t r = 0; r < p.repeats; ++r) {
    const int64_t n = l0::LanesOf(p, r);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t k = p.lanes[static_cast<size_t>(i)];
      const int64_t ea = l0::Elem<T>(a.stride, r, k);
      const int64_t eb = b ? l0::Elem<T>(b->stride, r, k) : 0;
      const L y = b ? static_cast<L>(pb[eb]) : static_cast<L>(scalar);
      bool ok = true;
      if constexpr (kMemcheck)
        ok = mc::ElemDefined<T>(a.off, ea) && (!b || mc::ElemDefined<T>(b->off, eb));
      put(r * l0::kLanes<T> + k, Cmp(static_cast<L>(pa[ea]), y, mode), ok);
    }
  }
}

// Level-0 Compare/Compares into dst: all lanes of `repeatTime` repeats (mask reserved).
template <class T, class U>
inline void CompareToTensor(const char* api, const LocalTensor<U>& dst,
                            const LocalTensor<T>& src0, const LocalTensor<T>* src1, T scalar,
                            CMPMODE mode, int64_t repeatTime, l0::Stride s0, l0::Stride s1) {
  const l0::Plan p = l0::PlanFromBits<T>(~0ull, ~0ull, repeatTime);
  const CmpOperand a{reinterpret_cast<const uint8_t*>(
                         detail::CheckUB(api, src1 ? "src0" : "src", src0, l0::Extent<T>(p, s0))),
                     src0.CpuOffset(), s0};
  CmpOperand b{nullptr, 0, s1};
  if (src1) {
    b.base = reinterpret_cast<const uint8_t*>(
        detail::CheckUB(api, "src1", *src1, l0::Extent<T>(p, s1)));
    b.off = src1->CpuOffset();
  }
  const uint64_t bytes = static_cast<uint64_t>(repeatTime) * l0::kLanes<T> / 8;
  uint8_t* m = detail::CheckUBBytes(api, "dst", dst, bytes);
  CompareRepeats<T>(p, a, src1 ? &b : nullptr, scalar, mode, [&](int64_t i, bool v, bool ok) {
    PutBit(m, i, v);
    if constexpr (kMemcheck) PutShBit(dst.CpuOffset(), i, ok);
  });
}

// Count form: count * sizeof(T) must fill whole 256-byte repeats.
template <class T>
inline int64_t CountRepeats(const char* api, int64_t count) {
  detail::CheckCount(api, count);
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  if (bytes % kRepeatBytes != 0)
    Fail(api, ": count ", count, " * ", sizeof(T), " bytes = ", bytes,
         " is not a multiple of ", kRepeatBytes, " bytes (the documented count alignment)");
  return static_cast<int64_t>(bytes / kRepeatBytes);
}

// Register-form Compare: one repeat with the lanes of `p` into CMPMASK.
template <class T>
inline void CompareToRegister(const char* api, const l0::Plan& p, const LocalTensor<T>& src0,
                              const LocalTensor<T>& src1, CMPMODE mode, l0::Stride s0,
                              l0::Stride s1) {
  if (p.repeats > 1)
    Fail(api, ": the register form computes one repeat (", l0::kLanes<T>, " lanes); the "
         "Counter-mode mask of ", Core().mask_low, " elements needs ", p.repeats);
  const CmpOperand a{reinterpret_cast<const uint8_t*>(
                         detail::CheckUB(api, "src0", src0, l0::Extent<T>(p, s0))),
                     src0.CpuOffset(), s0};
  const CmpOperand b{reinterpret_cast<const uint8_t*>(
                         detail::CheckUB(api, "src1", src1, l0::Extent<T>(p, s1))),
                     src1.CpuOffset(), s1};
  std::memset(Reg(), 0, kCmpMaskBytes);
  std::memset(RegDefined(), 0, kCmpMaskBytes);
  CompareRepeats<T>(p, a, &b, T(0), mode, [&](int64_t i, bool v, bool ok) {
    PutBit(Reg(), i, v);
    PutBit(RegDefined(), i, ok);
  });
}

}  // namespace cs
}  // namespace cpu

// ---- Compare ----

// Compare(dst, src0, src1, cmpMode, count): bit i of dst = src0[i] <cmpMode> src1[i] for
// i < count; count * sizeof(T) a multiple of 256 bytes; writes count / 8 bytes of dst.
template <class T, class U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0,
                    const LocalTensor<T>& src1, CMPMODE cmpMode, int64_t count) {
  cpu::cs::CheckCmpType<T>("Compare", cmpMode);
  cpu::cs::CheckCmpDst<U>("Compare", false);
  const int64_t reps = cpu::cs::CountRepeats<T>("Compare", count);
  const cpu::l0::Stride s{1, 8};
  cpu::cs::CompareToTensor<T>("Compare", dst, src0, &src1, T(0), cmpMode, reps, s, s);
}

// Level-0 Compare(dst, src0, src1, cmpMode, mask | mask[], repeatTime, BinaryRepeatParams):
// every lane of repeatTime repeats (mask and isSetMask are reserved on the A2).
template <class T, class U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0,
                    const LocalTensor<T>& src1, CMPMODE cmpMode, const uint64_t mask[],
                    int32_t repeatTime, const BinaryRepeatParams& q) {
  (void)mask;
  cpu::cs::CheckCmpType<T>("Compare", cmpMode);
  cpu::cs::CheckCmpDst<U>("Compare", false);
  cpu::l0::CheckRepeat("Compare", repeatTime);
  cpu::cs::CompareToTensor<T>("Compare", dst, src0, &src1, T(0), cmpMode, repeatTime,
                              {q.src0BlkStride, q.src0RepStride},
                              {q.src1BlkStride, q.src1RepStride});
}
template <class T, class U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0,
                    const LocalTensor<T>& src1, CMPMODE cmpMode, uint64_t mask,
                    int32_t repeatTime, const BinaryRepeatParams& q) {
  const uint64_t bits[2] = {mask, 0};
  Compare<T, U, isSetMask>(dst, src0, src1, cmpMode, bits, repeatTime, q);
}

// Register form Compare(src0, src1, cmpMode, mask | mask[], BinaryRepeatParams): one repeat,
// the mask selects the lanes, the result goes to CMPMASK (read by GetCmpMask, Select mode 0).
template <class T, bool isSetMask = true>
inline void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                    const uint64_t mask[], const BinaryRepeatParams& q) {
  cpu::cs::CheckRegType<T>("Compare", cmpMode);
  const cpu::l0::Plan p = cpu::l0::MaskPlan<T, isSetMask>("Compare", mask, 1);
  cpu::cs::CompareToRegister<T>("Compare", p, src0, src1, cmpMode,
                                {q.src0BlkStride, q.src0RepStride},
                                {q.src1BlkStride, q.src1RepStride});
}
template <class T, bool isSetMask = true>
inline void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                    uint64_t mask, const BinaryRepeatParams& q) {
  cpu::cs::CheckRegType<T>("Compare", cmpMode);
  const cpu::l0::Plan p = cpu::l0::MaskPlan<T, isSetMask>("Compare", mask, 1);
  cpu::cs::CompareToRegister<T>("Compare", p, src0, src1, cmpMode,
                                {q.src0BlkStride, q.src0RepStride},
                                {q.src1BlkStride, q.src1RepStride});
}

// ---- Compares / CompareScalar (tensor vs scalar) ----

#define PYASC_CMP_SCALAR(NAME)                                                                  \
  template <class T, class U>                                                                   \
  inline void NAME(const LocalTensor<U>& dst, const LocalTensor<T>& src0,                      \
                   const typename cpu::detail::Identity<T>::type src1Scalar, CMPMODE cmpMode,  \
                   int64_t count) {                                                             \
    cpu::cs::CheckCmpType<T>(#NAME, cmpMode);                                                   \
    cpu::cs::CheckCmpDst<U>(#NAME, true);                                                       \
    const int64_t reps = cpu::cs::CountRepeats<T>(#NAME, count);                               \
    const cpu::l0::Stride s{1, 8};                                                              \
    cpu::cs::CompareToTensor<T>(#NAME, dst, src0, nullptr, src1Scalar, cmpMode, reps, s, s);  \
  }                                                                                             \
  template <class T, class U, bool isSetMask = true>                                            \
  inline void NAME(const LocalTensor<U>& dst, const LocalTensor<T>& src0,                      \
                   const typename cpu::detail::Identity<T>::type src1Scalar, CMPMODE cmpMode,  \
                   const uint64_t mask[], int32_t repeatTime, const UnaryRepeatParams& q) {    \
    (void)mask;                                                                                 \
    cpu::cs::CheckCmpType<T>(#NAME, cmpMode);                                                   \
    cpu::cs::CheckCmpDst<U>(#NAME, true);                                                       \
    cpu::l0::CheckRepeat(#NAME, repeatTime);                                                    \
    const cpu::l0::Stride s{q.srcBlkStride, q.srcRepStride};                                    \
    cpu::cs::CompareToTensor<T>(#NAME, dst, src0, nullptr, src1Scalar, cmpMode, repeatTime, s, \
                                s);                                                             \
  }                                                                                             \
  template <class T, class U, bool isSetMask = true>                                            \
  inline void NAME(const LocalTensor<U>& dst, const LocalTensor<T>& src0,                      \
                   const typename cpu::detail::Identity<T>::type src1Scalar, CMPMODE cmpMode,  \
                   uint64_t mask, int32_t repeatTime, const UnaryRepeatParams& q) {            \
    const uint64_t bits[2] = {mask, 0};                                                         \
    NAME<T, U, isSetMask>(dst, src0, src1Scalar, cmpMode, bits, repeatTime, q);                \
  }

// Compares(dst, src0, scalar, cmpMode, count | mask, repeatTime, UnaryRepeatParams): bit i of
// dst = src0[i] <cmpMode> scalar. CompareScalar is the older name of the same API.
PYASC_CMP_SCALAR(Compares)
PYASC_CMP_SCALAR(CompareScalar)
#undef PYASC_CMP_SCALAR

// ---- the CMPMASK register ----

// GetCmpMask(dst): the 16 bytes of CMPMASK (bit i = lane i of the last register Compare) at dst.
template <class T>
inline void GetCmpMask(const LocalTensor<T>& dst) {
  uint8_t* d = cpu::cs::RegOperand("GetCmpMask", "dst", dst);
  std::memcpy(d, cpu::cs::Reg(), cpu::cs::kCmpMaskBytes);
  if constexpr (cpu::kMemcheck)
    std::memcpy(cpu::mc::Sh(dst.CpuOffset()), cpu::cs::RegDefined(), cpu::cs::kCmpMaskBytes);
}

// SetCmpMask(src): load 16 bytes from src into CMPMASK (Select without a mask argument reads
// them: mode 0 the selection bits, mode 1 the scalar, mode 2 the address of selMask).
template <class T>
inline void SetCmpMask(const LocalTensor<T>& src) {
  const uint8_t* s = cpu::cs::RegOperand("SetCmpMask", "src", src);
  std::memcpy(cpu::cs::Reg(), s, cpu::cs::kCmpMaskBytes);
  if constexpr (cpu::kMemcheck)
    std::memcpy(cpu::cs::RegDefined(), cpu::mc::Sh(src.CpuOffset()), cpu::cs::kCmpMaskBytes);
}

}  // namespace AscendC

#include "select.h"

#endif  // PYASC_CPU_COMPARE_SELECT_H
