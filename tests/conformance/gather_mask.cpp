// Conformance kernel: GatherMask with the built-in src1Pattern values 1..7 and a user pattern
// tensor (uint16_t / uint32_t), reduceMode false (Normal) and true (Counter), GatherMaskParams
// strides, rsvdCnt and GetGatherMaskRemainCount, for half, bfloat16_t, uint16_t, int16_t, float,
// uint32_t, int32_t. Written here from the Ascend C API documentation.
#include "kernel_operator.h"

namespace gather_mask {

struct Tiling {
  int32_t dt;          // 0 half, 1 float, 2 uint16_t, 3 int16_t, 4 uint32_t, 5 int32_t, 6 bf16
  int32_t builtIn;     // 1..7 built-in pattern; 0 user pattern tensor
  int32_t reduceMode;  // 0 Normal, 1 Counter
  uint32_t mask;
  int32_t src0BlockStride;
  int32_t repeatTimes;
  int32_t src0RepeatStride;
  int32_t src1RepeatStride;
  int32_t size;        // elements of src0 and dst
  int32_t psize;       // elements of the pattern tensor
  int32_t pinputs;     // pattern elements loaded (the rest stays unwritten)
  int32_t fill;        // pre-fill dst with 0x7B bytes
  int32_t counterBefore;  // SetMaskCount() before the call
  int32_t accessorOnly;   // call GetGatherMaskRemainCount without a GatherMask
};

template <class T>
void Kernel(GM_ADDR x, GM_ADDR p, GM_ADDR o, GM_ADDR cnt, const Tiling& t) {
  using U = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> inSrc, inPat;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> outDst;
  pipe.InitBuffer(inSrc, 1, t.size * sizeof(T));
  pipe.InitBuffer(inPat, 1, t.psize * sizeof(U));
  pipe.InitBuffer(outDst, 1, t.size * sizeof(T));
  AscendC::GlobalTensor<T> gx, go;
  AscendC::GlobalTensor<U> gp;
  AscendC::GlobalTensor<uint64_t> gc;
  gx.SetGlobalBuffer((__gm__ T*)x, t.size);
  gp.SetGlobalBuffer((__gm__ U*)p, t.psize);
  go.SetGlobalBuffer((__gm__ T*)o, t.size);
  gc.SetGlobalBuffer((__gm__ uint64_t*)cnt, 3);

  AscendC::LocalTensor<T> src = inSrc.AllocTensor<T>();
  AscendC::LocalTensor<U> pat = inPat.AllocTensor<U>();
  AscendC::DataCopy(src, gx, t.size);
  AscendC::DataCopy(pat, gp, t.pinputs);
  inSrc.EnQue(src);
  inPat.EnQue(pat);
  src = inSrc.DeQue<T>();
  pat = inPat.DeQue<U>();
  AscendC::LocalTensor<T> dst = outDst.AllocTensor<T>();
  if (t.fill) AscendC::Duplicate(dst.template ReinterpretCast<uint16_t>(), uint16_t(0x7B7B),
                                 static_cast<int32_t>(t.size * sizeof(T) / 2));
  if (t.accessorOnly) {
    gc.SetValue(0, static_cast<uint64_t>(AscendC::GetGatherMaskRemainCount()));
    return;
  }
  if (t.counterBefore) AscendC::SetMaskCount();
  uint64_t rsvdCnt = 0;
  const AscendC::GatherMaskParams params{static_cast<uint8_t>(t.src0BlockStride),
                                         static_cast<uint16_t>(t.repeatTimes),
                                         static_cast<uint16_t>(t.src0RepeatStride),
                                         static_cast<uint8_t>(t.src1RepeatStride)};
  if (t.builtIn)  // the reserved mode template argument spelled out, as some samples do
    AscendC::GatherMask<T, AscendC::GatherMaskMode::DEFAULT>(
        dst, src, static_cast<uint8_t>(t.builtIn), t.reduceMode != 0, t.mask, params, rsvdCnt);
  else
    AscendC::GatherMask(dst, src, pat, t.reduceMode != 0, t.mask, params, rsvdCnt);
  gc.SetValue(0, rsvdCnt);
  gc.SetValue(1, static_cast<uint64_t>(AscendC::GetGatherMaskRemainCount()));
  // test probe (CPU only): the mask mode the call left behind (0 Normal, 1 Counter)
  gc.SetValue(2, static_cast<uint64_t>(AscendC::cpu::Core().mask_mode));
  outDst.EnQue(dst);
  dst = outDst.DeQue<T>();
  AscendC::DataCopy(go, dst, t.size);
  outDst.FreeTensor(dst);
  inSrc.FreeTensor(src);
  inPat.FreeTensor(pat);
}

}  // namespace gather_mask

extern "C" __global__ __aicore__ void gather_mask_kernel(GM_ADDR x, GM_ADDR p, GM_ADDR o,
                                                         GM_ADDR cnt, GM_ADDR workspace,
                                                         GM_ADDR tiling) {
  const auto& t = *reinterpret_cast<const gather_mask::Tiling*>(tiling);
  switch (t.dt) {
    case 0: gather_mask::Kernel<half>(x, p, o, cnt, t); break;
    case 1: gather_mask::Kernel<float>(x, p, o, cnt, t); break;
    case 2: gather_mask::Kernel<uint16_t>(x, p, o, cnt, t); break;
    case 3: gather_mask::Kernel<int16_t>(x, p, o, cnt, t); break;
    case 4: gather_mask::Kernel<uint32_t>(x, p, o, cnt, t); break;
    case 5: gather_mask::Kernel<int32_t>(x, p, o, cnt, t); break;
    default: gather_mask::Kernel<bfloat16_t>(x, p, o, cnt, t); break;
  }
}
