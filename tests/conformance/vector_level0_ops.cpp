// Conformance kernel: every level-0 (mask/repeat) form of Add/Sub/Mul/Div/Max/Min,
// Exp/Ln/Abs/Sqrt/Rsqrt/Reciprocal/Relu, Adds/Muls/Maxs/Mins, LeakyRelu and Duplicate, in each
// mask form (contiguous, bit mask, mask register in Normal mode, Counter mode), half and float.
// The tiling selects op, form, dtype, repeatTime and strides; x and y are loaded into UB, the
// destination is pre-filled (or left untouched, to test definedness in memory-check builds)
// and copied to o. Written here from the Ascend C API documentation.
#include "kernel_operator.h"

namespace l0_ops {

struct Tiling {
  int32_t op;          // 0-5 Add Sub Mul Div Max Min, 10-16 Exp Ln Abs Sqrt Rsqrt Reciprocal Relu,
                       // 20-24 Adds Muls Maxs Mins LeakyRelu, 30 Duplicate, 40-44 count forms
                       // with isSetMask = false (Adds Muls Maxs Mins LeakyRelu)
  int32_t dt;          // 0 half, 1 float
  int32_t form;        // 0 contiguous mask, 1 bit mask, 2 SetVectorMask(bits) + isSetMask=false,
                       // 3 SetVectorMask(len) + isSetMask=false, 4 Counter mode + register,
                       // 5 Counter mode + isSetMask=true contiguous mask; refused uses:
                       // 6 isSetMask=false with `mask` instead of MASK_PLACEHOLDER,
                       // 7 Counter mode + bit mask with isSetMask=true
  int32_t repeat;
  int32_t size;        // elements of every UB buffer (a multiple of 128)
  int32_t fill;        // 1: pre-fill dst with `fillValue`
  int32_t strides[6];  // dstBlk, src0Blk, src1Blk, dstRep, src0Rep, src1Rep
  uint64_t mask;       // contiguous lanes / Counter element count / SetVectorMask len
  uint64_t bits[2];
  float scalar;
  float fillValue;
  int32_t inputs;      // elements of x and y to load (the rest of their buffers stays untouched)
  int32_t pad;
};

template <class T>
struct Run {
  const Tiling& t;
  AscendC::LocalTensor<T> d, a, b;

  AscendC::BinaryRepeatParams Bin() const {
    return AscendC::BinaryRepeatParams(t.strides[0], t.strides[1], t.strides[2], t.strides[3],
                                       t.strides[4], t.strides[5]);
  }
  AscendC::UnaryRepeatParams Un() const {
    return AscendC::UnaryRepeatParams(t.strides[0], t.strides[1], t.strides[3], t.strides[4]);
  }

  // Set up the mask registers for forms 2-5.
  void Registers() const {
    if (t.form == 2) AscendC::SetVectorMask<T, AscendC::MaskMode::NORMAL>(t.bits[1], t.bits[0]);
    if (t.form == 3) AscendC::SetVectorMask<T, AscendC::MaskMode::NORMAL>((int32_t)t.mask);
    if (t.form == 4 || t.form == 5 || t.form == 7) AscendC::SetMaskCount();
    if (t.form == 4) AscendC::SetVectorMask<T, AscendC::MaskMode::COUNTER>(0, t.mask);
  }

  template <bool kSet, class M>
  void Call(M mask) const {
    const T s = static_cast<T>(t.scalar);
    const int32_t r = t.repeat;
    switch (t.op) {
      case 0: AscendC::Add<T, kSet>(d, a, b, mask, r, Bin()); break;
      case 1: AscendC::Sub<T, kSet>(d, a, b, mask, r, Bin()); break;
      case 2: AscendC::Mul<T, kSet>(d, a, b, mask, r, Bin()); break;
      case 3: AscendC::Div<T, kSet>(d, a, b, mask, r, Bin()); break;
      case 4: AscendC::Max<T, kSet>(d, a, b, mask, r, Bin()); break;
      case 5: AscendC::Min<T, kSet>(d, a, b, mask, r, Bin()); break;
      case 10: AscendC::Exp<T, kSet>(d, a, mask, r, Un()); break;
      case 11: AscendC::Ln<T, kSet>(d, a, mask, r, Un()); break;
      case 12: AscendC::Abs<T, kSet>(d, a, mask, r, Un()); break;
      case 13: AscendC::Sqrt<T, kSet>(d, a, mask, r, Un()); break;
      case 14: AscendC::Rsqrt<T, kSet>(d, a, mask, r, Un()); break;
      case 15: AscendC::Reciprocal<T, kSet>(d, a, mask, r, Un()); break;
      case 16: AscendC::Relu<T, kSet>(d, a, mask, r, Un()); break;
      case 20: AscendC::Adds<T, kSet>(d, a, s, mask, r, Un()); break;
      case 21: AscendC::Muls<T, kSet>(d, a, s, mask, r, Un()); break;
      case 22: AscendC::Maxs<T, kSet>(d, a, s, mask, r, Un()); break;
      case 23: AscendC::Mins<T, kSet>(d, a, s, mask, r, Un()); break;
      case 24: AscendC::LeakyRelu<T, kSet>(d, a, s, mask, r, Un()); break;
      case 30: AscendC::Duplicate<T, kSet>(d, s, mask, r, t.strides[0], t.strides[3]); break;
      default: AscendC::cpu::Fail("test: bad op ", t.op);
    }
  }

  // Count forms with isSetMask = false: the count comes from the Counter-mode register.
  void CountForm() const {
    const T s = static_cast<T>(t.scalar);
    switch (t.op) {
      case 40: AscendC::Adds<T, false>(d, a, s, 1); break;
      case 41: AscendC::Muls<T, false>(d, a, s, 1); break;
      case 42: AscendC::Maxs<T, false>(d, a, s, 1); break;
      case 43: AscendC::Mins<T, false>(d, a, s, 1); break;
      case 44: AscendC::LeakyRelu<T, false>(d, a, s, 1); break;
      default: AscendC::cpu::Fail("test: bad count op ", t.op);
    }
  }

  void Go() const {
    Registers();
    if (t.op >= 40) {
      CountForm();
    } else if (t.form == 0 || t.form == 5) {
      Call<true>(t.mask);
    } else if (t.form == 6) {
      Call<false>(t.mask);
    } else if (t.form == 1 || t.form == 7) {
      uint64_t m[2] = {t.bits[0], t.bits[1]};
      Call<true>(m);
    } else {
      Call<false>(AscendC::MASK_PLACEHOLDER);
    }
    AscendC::SetMaskNorm();
    AscendC::ResetMask();
  }
};

template <class T>
void Kernel(GM_ADDR x, GM_ADDR y, GM_ADDR o, const Tiling& t) {
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::TPosition::VECIN> b0, b1, b2;  // GM <-> UB copies: VECIN (documented paths)
  pipe.InitBuffer(b0, t.size * sizeof(T));
  pipe.InitBuffer(b1, t.size * sizeof(T));
  pipe.InitBuffer(b2, t.size * sizeof(T));
  Run<T> run{t, b2.Get<T>(), b0.Get<T>(), b1.Get<T>()};
  AscendC::GlobalTensor<T> gx, gy, go;
  gx.SetGlobalBuffer((__gm__ T*)x, t.size);
  gy.SetGlobalBuffer((__gm__ T*)y, t.size);
  go.SetGlobalBuffer((__gm__ T*)o, t.size);
  AscendC::DataCopy(run.a, gx, t.inputs);
  AscendC::DataCopy(run.b, gy, t.inputs);
  // The vector unit waits for the copies in (MTE2), the copy out (MTE3) for the vector unit.
  AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
  AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
  if (t.fill) AscendC::Duplicate(run.d, static_cast<T>(t.fillValue), t.size);
  run.Go();
  AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
  AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
  AscendC::DataCopy(go, run.d, t.size);
}

}  // namespace l0_ops

extern "C" __global__ __aicore__ void l0_ops_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR o,
                                                    GM_ADDR workspace, GM_ADDR tiling) {
  const auto& t = *reinterpret_cast<const l0_ops::Tiling*>(tiling);
  if (t.dt == 0) l0_ops::Kernel<half>(x, y, o, t);
  else l0_ops::Kernel<float>(x, y, o, t);
}
