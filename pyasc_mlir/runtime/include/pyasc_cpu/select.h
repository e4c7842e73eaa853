// pyasc_cpu/select.h -- Select in every documented SELMODE and form (included by
// compare_select.h; the model and the sources are described there and in docs/CPU_RUNTIME.md,
// "Compare / Select"). Written from the public Ascend C documentation only.
#ifndef PYASC_CPU_SELECT_H
#define PYASC_CPU_SELECT_H

#include <cstring>
#include <string>

namespace AscendC {
namespace cpu {
namespace cs {

// Where the selection bits of a Select come from.
struct SelBits {
  const uint8_t* bits = nullptr;  // bit i = lane i
  uint64_t off = 0;               // UB offset of `bits` (memory check; unused for the register)
  bool reg = false;               // bits are CMPMASK (mode 0 without a mask argument)
  bool perRepeat = true;          // modes 1 and 2: repeat r uses bits [r*L, (r+1)*L)
};

template <class T>
inline int64_t SelIndex(const SelBits& s, int64_t r, int32_t k) {
  return s.perRepeat ? r * l0::kLanes<T> + k : k;
}

// Bits of selMask a plan reads (1 + the largest index).
template <class T>
inline int64_t SelExtent(const l0::Plan& p, bool perRepeat) {
  if (p.repeats == 0 || p.lanes.empty() || p.last == 0) return 0;
  const int32_t lastLane = p.lanes[static_cast<size_t>(p.last - 1)];
  if (perRepeat) return (p.repeats - 1) * l0::kLanes<T> + lastLane + 1;
  return (p.repeats > 1 ? p.lanes.back() : lastLane) + 1;
}

inline void CheckSelMode(const char* api, SELMODE m) {
  const int i = static_cast<int>(m);
  if (i < 0 || i > 2) Fail(api, ": ", i, " is not a SELMODE");
}

// Forms with a tensor src1: SELMODE 0 or 2.
inline void CheckTensorMode(const char* api, SELMODE m) {
  CheckSelMode(api, m);
  if (m == SELMODE::VSEL_TENSOR_SCALAR_MODE)
    Fail(api, ": SELMODE::VSEL_TENSOR_SCALAR_MODE takes a scalar src1, not a tensor (the "
         "two-tensor forms take SELMODE::VSEL_CMPMASK_SPR or VSEL_TENSOR_TENSOR_MODE)");
}

// Forms with a scalar src1: SELMODE 1 only.
inline void CheckScalarMode(const char* api, SELMODE m) {
  CheckSelMode(api, m);
  if (m != SELMODE::VSEL_TENSOR_SCALAR_MODE)
    Fail(api, ": a scalar src1 needs SELMODE::VSEL_TENSOR_SCALAR_MODE, got SELMODE::",
         SelName(m));
}

// selMask given as a tensor: allocated, aligned, holding the bits the plan reads.
template <class T, class U>
inline SelBits TensorBits(const char* api, const l0::Plan& p, const LocalTensor<U>& selMask,
                          SELMODE mode) {
  SelBits s;
  s.perRepeat = mode != SELMODE::VSEL_CMPMASK_SPR;
  const uint64_t bytes = static_cast<uint64_t>(SelExtent<T>(p, s.perRepeat) + 7) / 8;
  s.bits = detail::CheckUBBytes(api, "selMask", selMask, bytes);
  s.off = selMask.CpuOffset();
  return s;
}

// Memory check: the first n bytes of CMPMASK must have been set.
inline void RequireRegDefined(const char* api, uint64_t n, const char* what) {
  if constexpr (kMemcheck) {
    for (uint64_t i = 0; i < n; ++i)
      if (RegDefined()[i] != 0xFF)
        FailAccess(api, ": read of an undefined CMPMASK register (", what, "): byte ", i,
                   " was never set in this block (SetCmpMask or a register Compare)");
  }
}

inline std::string Hex(uint64_t v) {
  static const char* const digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}

// Mode 2 without a mask argument: CMPMASK holds the UB address of selMask, as the host
// pointer GetPhyAddr() returns (8 bytes) or its low 32 bits (what NPU kernels store).
template <class T>
inline SelBits RegisterAddressBits(const char* api, const l0::Plan& p) {
  uint64_t v = 0;
  std::memcpy(&v, Reg(), sizeof v);
  const uint64_t base = reinterpret_cast<uintptr_t>(UB());
  uint64_t off = 0;
  if (v >= base && v - base < PYASC_UB_BYTES) {
    RequireRegDefined(api, 8, "the selMask address");
    off = v - base;
  } else if (static_cast<uint32_t>(static_cast<uint32_t>(v) - static_cast<uint32_t>(base)) <
             PYASC_UB_BYTES) {
    RequireRegDefined(api, 4, "the selMask address");
    off = static_cast<uint32_t>(static_cast<uint32_t>(v) - static_cast<uint32_t>(base));
  } else {
    Fail(api, ": SELMODE::VSEL_TENSOR_TENSOR_MODE without a mask argument reads the address of "
         "selMask from CMPMASK, which holds ", Hex(v), ", not a UB address "
         "(SetCmpMask a tensor whose first 8 bytes hold selMask.GetPhyAddr())");
  }
  if (off % kBlock != 0)
    FailAccess(api, ": the selMask address in CMPMASK (UB offset ", off, ") is not ", kBlock,
               "-byte aligned");
  const uint64_t bytes = static_cast<uint64_t>(SelExtent<T>(p, true) + 7) / 8;
  if (off + bytes > PYASC_UB_BYTES)
    FailAccess(api, ": selMask at UB offset ", off, " (from CMPMASK): ", bytes,
               " bytes exceed the UB");
  SelBits s;
  s.bits = UB() + off;
  s.off = off;
  return s;
}

// dst lanes = sel bit ? src0 : (src1 or the scalar), bit for bit. Each repeat reads its
// sources before writing; masked-off lanes keep dst.
template <class T>
inline void SelectLanes(const char* api, const l0::Plan& p, const LocalTensor<T>& dst,
                        l0::Stride ds, const LocalTensor<T>& src0, l0::Stride s0,
                        const LocalTensor<T>* src1, l0::Stride s1, T scalar, bool scalarOk,
                        const SelBits& sel) {
  T* d = detail::CheckUB(api, "dst", dst, l0::Extent<T>(p, ds));
  const T* a = detail::CheckUB(api, "src0", src0, l0::Extent<T>(p, s0));
  const T* b = src1 ? detail::CheckUB(api, "src1", *src1, l0::Extent<T>(p, s1)) : nullptr;
  T out[l0::kLanes<T>];
  bool ok[l0::kLanes<T>];
  for (int64_t r = 0; r < p.repeats; ++r) {
    const int64_t n = l0::LanesOf(p, r);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t k = p.lanes[static_cast<size_t>(i)];
      const int64_t bit = SelIndex<T>(sel, r, k);
      const bool pick = Bit(sel.bits, bit);
      const int64_t ea = l0::Elem<T>(s0, r, k), eb = b ? l0::Elem<T>(s1, r, k) : 0;
      std::memcpy(&out[i], pick ? &a[ea] : (b ? &b[eb] : &scalar), sizeof(T));
      if constexpr (kMemcheck) {
        const bool bitOk = sel.reg ? Bit(RegDefined(), bit) : ShBit(sel.off, bit);
        const bool srcOk = pick ? mc::ElemDefined<T>(src0.CpuOffset(), ea)
                                : (b ? mc::ElemDefined<T>(src1->CpuOffset(), eb) : scalarOk);
        ok[i] = bitOk && srcOk;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t e = l0::Elem<T>(ds, r, p.lanes[static_cast<size_t>(i)]);
      std::memcpy(&d[e], &out[i], sizeof(T));
      if constexpr (kMemcheck) l0::SetLaneDefined(dst, e, ok[i]);
    }
  }
}

inline l0::Stride Dst(const BinaryRepeatParams& q) { return {q.dstBlkStride, q.dstRepStride}; }
inline l0::Stride Src0(const BinaryRepeatParams& q) {
  return {q.src0BlkStride, q.src0RepStride};
}
inline l0::Stride Src1(const BinaryRepeatParams& q) {
  return {q.src1BlkStride, q.src1RepStride};
}
constexpr l0::Stride kDense{1, 8};

// The plan of a level-0 Select with a mask argument (isSetMask is reserved: the argument
// always applies and is written into the mask register).
template <class T, class M>
inline l0::Plan SelectPlan(const char* api, M mask, int32_t repeatTime) {
  return l0::MaskPlan<T, true>(api, mask, repeatTime);
}

}  // namespace cs
}  // namespace cpu

// ---- count forms ----

// Select(dst, selMask, src0, src1, selMode, count): SELMODE::VSEL_TENSOR_TENSOR_MODE: dst[i] =
// bit i ? src0[i] : src1[i]; SELMODE::VSEL_CMPMASK_SPR: bit i % (256 / sizeof(T)). Any count.
template <class T, class U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                   const LocalTensor<T>& src0, const LocalTensor<T>& src1, SELMODE selMode,
                   int64_t count) {
  cpu::cs::CheckSelTypes<T, U>("Select");
  cpu::cs::CheckTensorMode("Select", selMode);
  cpu::detail::CheckCount("Select", count);
  const cpu::l0::Plan p = cpu::l0::PlanFromCount<T>(static_cast<uint64_t>(count));
  const cpu::cs::SelBits s = cpu::cs::TensorBits<T>("Select", p, selMask, selMode);
  cpu::cs::SelectLanes<T>("Select", p, dst, cpu::cs::kDense, src0, cpu::cs::kDense, &src1,
                          cpu::cs::kDense, T(0), true, s);
}

// Select(dst, selMask, src0, scalar, SELMODE::VSEL_TENSOR_SCALAR_MODE, count): dst[i] = bit i ?
// src0[i] : scalar.
template <class T, class U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                   const LocalTensor<T>& src0, const typename cpu::detail::Identity<T>::type& src1,
                   SELMODE selMode, int64_t count) {
  cpu::cs::CheckSelTypes<T, U>("Select");
  cpu::cs::CheckScalarMode("Select", selMode);
  cpu::detail::CheckCount("Select", count);
  const cpu::l0::Plan p = cpu::l0::PlanFromCount<T>(static_cast<uint64_t>(count));
  const cpu::cs::SelBits s = cpu::cs::TensorBits<T>("Select", p, selMask, selMode);
  cpu::cs::SelectLanes<T>("Select", p, dst, cpu::cs::kDense, src0, cpu::cs::kDense, nullptr,
                          cpu::cs::kDense, static_cast<T>(src1), true, s);
}

// ---- level-0 forms: mask (contiguous | bit mask), repeatTime, BinaryRepeatParams ----

#define PYASC_SELECT_L0(MASK_T)                                                                  \
  template <class T, class U, bool isSetMask = true>                                            \
  inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,                 \
                     const LocalTensor<T>& src0, const LocalTensor<T>& src1, SELMODE selMode,  \
                     MASK_T mask, int32_t repeatTime, const BinaryRepeatParams& q) {            \
    cpu::cs::CheckSelTypes<T, U>("Select");                                                     \
    cpu::cs::CheckTensorMode("Select", selMode);                                                \
    const cpu::l0::Plan p = cpu::cs::SelectPlan<T>("Select", mask, repeatTime);                 \
    const cpu::cs::SelBits s = cpu::cs::TensorBits<T>("Select", p, selMask, selMode);           \
    cpu::cs::SelectLanes<T>("Select", p, dst, cpu::cs::Dst(q), src0, cpu::cs::Src0(q), &src1,  \
                            cpu::cs::Src1(q), T(0), true, s);                                   \
  }                                                                                             \
  template <class T, class U, bool isSetMask = true>                                            \
  inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,                 \
                     const LocalTensor<T>& src0,                                                \
                     const typename cpu::detail::Identity<T>::type& src1, SELMODE selMode,     \
                     MASK_T mask, int32_t repeatTime, const BinaryRepeatParams& q) {            \
    cpu::cs::CheckSelTypes<T, U>("Select");                                                     \
    cpu::cs::CheckScalarMode("Select", selMode);                                                \
    const cpu::l0::Plan p = cpu::cs::SelectPlan<T>("Select", mask, repeatTime);                 \
    const cpu::cs::SelBits s = cpu::cs::TensorBits<T>("Select", p, selMask, selMode);           \
    cpu::cs::SelectLanes<T>("Select", p, dst, cpu::cs::Dst(q), src0, cpu::cs::Src0(q), nullptr, \
                            cpu::cs::Src1(q), static_cast<T>(src1), true, s);                   \
  }

PYASC_SELECT_L0(uint64_t)
PYASC_SELECT_L0(const uint64_t*)
#undef PYASC_SELECT_L0

// ---- forms without a mask argument (SetVectorMask + SetCmpMask) ----

// Mode 1: Select(dst, selMask, src0, repeatTime, BinaryRepeatParams): the scalar is the low
// sizeof(T) bytes of CMPMASK (SetCmpMask of a tensor holding it), the lanes come from the
// mask register.
template <class T, class U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                   const LocalTensor<T>& src0, int32_t repeatTime, const BinaryRepeatParams& q) {
  cpu::cs::CheckSelTypes<T, U>("Select");
  const cpu::l0::Plan p =
      cpu::l0::MaskPlan<T, false>("Select", MASK_PLACEHOLDER, repeatTime);
  const cpu::cs::SelBits s =
      cpu::cs::TensorBits<T>("Select", p, selMask, SELMODE::VSEL_TENSOR_SCALAR_MODE);
  T scalar;
  std::memcpy(&scalar, cpu::cs::Reg(), sizeof(T));
  bool ok = true;
  if constexpr (cpu::kMemcheck)
    for (size_t i = 0; i < sizeof(T); ++i) ok = ok && cpu::cs::RegDefined()[i] == 0xFF;
  cpu::cs::SelectLanes<T>("Select", p, dst, cpu::cs::Dst(q), src0, cpu::cs::Src0(q), nullptr,
                          cpu::cs::Src1(q), scalar, ok, s);
}

// Modes 0 and 2: Select<T, selMode>(dst, src0, src1, repeatTime, BinaryRepeatParams): mode 0
// takes the selection bits from CMPMASK (SetCmpMask or a register Compare), mode 2 the address
// of selMask; the lanes come from the mask register.
template <class T, SELMODE selMode>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, int32_t repeatTime, const BinaryRepeatParams& q) {
  cpu::cs::CheckSelTypes<T, uint8_t>("Select");
  if (selMode == SELMODE::VSEL_TENSOR_SCALAR_MODE)
    cpu::Fail("Select: Select<T, SELMODE::VSEL_TENSOR_SCALAR_MODE>(dst, src0, src1, ...) is "
              "not a documented form (mode 1 without a mask argument is Select(dst, selMask, "
              "src0, repeatTime, repeatParams))");
  const cpu::l0::Plan p =
      cpu::l0::MaskPlan<T, false>("Select", MASK_PLACEHOLDER, repeatTime);
  cpu::cs::SelBits s;
  if (selMode == SELMODE::VSEL_CMPMASK_SPR) {
    s.bits = cpu::cs::Reg();
    s.reg = true;
    s.perRepeat = false;
  } else {
    s = cpu::cs::RegisterAddressBits<T>("Select", p);
  }
  cpu::cs::SelectLanes<T>("Select", p, dst, cpu::cs::Dst(q), src0, cpu::cs::Src0(q), &src1,
                          cpu::cs::Src1(q), T(0), true, s);
}

}  // namespace AscendC

#endif  // PYASC_CPU_SELECT_H
