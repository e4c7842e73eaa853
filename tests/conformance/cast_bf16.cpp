// Conformance sample: Cast through a TBuf, as public samples convert bf16 data: x (float) is
// cast to bfloat16_t with the tiling's round mode and written out as bf16 (o16), and the bf16
// result is cast back to float (o32). A second entry casts between any two of half, float,
// bfloat16_t, int32_t (codes 0-3) with any mode, to test the Atlas A2 pair/mode table.
// Written here from the Ascend C API documentation.
#include "kernel_operator.h"

namespace cast_bf16 {

struct Tiling {
  int32_t n;     // elements (a multiple of 16)
  int32_t mode;  // RoundMode
  int32_t src;   // dtype codes for cast_any: 0 half, 1 float, 2 bfloat16_t, 3 int32_t
  int32_t dst;
};

class KernelCastBf16 {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR o16, GM_ADDR o32, const Tiling& t) {
    t_ = t;
    xGm_.SetGlobalBuffer((__gm__ float*)x, t.n);
    o16Gm_.SetGlobalBuffer((__gm__ bfloat16_t*)o16, t.n);
    o32Gm_.SetGlobalBuffer((__gm__ float*)o32, t.n);
    pipe_.InitBuffer(inQueue_, 1, t.n * sizeof(float));
    pipe_.InitBuffer(outQueue_, 1, t.n * sizeof(float));
    pipe_.InitBuffer(bf16Buf_, t.n * sizeof(bfloat16_t));
  }
  __aicore__ inline void Process() {
    AscendC::LocalTensor<float> xLocal = inQueue_.AllocTensor<float>();
    AscendC::DataCopy(xLocal, xGm_, t_.n);
    inQueue_.EnQue(xLocal);
    xLocal = inQueue_.DeQue<float>();
    AscendC::LocalTensor<bfloat16_t> b = bf16Buf_.Get<bfloat16_t>();
    AscendC::Cast(b, xLocal, static_cast<AscendC::RoundMode>(t_.mode), t_.n);
    AscendC::LocalTensor<float> yLocal = outQueue_.AllocTensor<float>();
    AscendC::Cast(yLocal, b, AscendC::RoundMode::CAST_NONE, t_.n);
    outQueue_.EnQue(yLocal);
    inQueue_.FreeTensor(xLocal);
    yLocal = outQueue_.DeQue<float>();
    AscendC::DataCopy(o16Gm_, b, t_.n);
    AscendC::DataCopy(o32Gm_, yLocal, t_.n);
    outQueue_.FreeTensor(yLocal);
  }

 private:
  Tiling t_{};
  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueue_;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueue_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> bf16Buf_;
  AscendC::GlobalTensor<float> xGm_, o32Gm_;
  AscendC::GlobalTensor<bfloat16_t> o16Gm_;
};

template <class F>
void ByCode(int32_t code, F f) {
  switch (code) {
    case 0: f(half(0)); break;
    case 1: f(float(0)); break;
    case 2: f(bfloat16_t(0)); break;
    case 3: f(int32_t(0)); break;
    default: AscendC::cpu::Fail("test: bad dtype code ", code);
  }
}

template <class D, class S>
void CastAny(GM_ADDR x, GM_ADDR o, const Tiling& t) {
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::TPosition::VECIN> bs, bd;  // GM <-> UB copies: VECIN (documented paths)
  pipe.InitBuffer(bs, t.n * sizeof(S));
  pipe.InitBuffer(bd, t.n * sizeof(D));
  AscendC::GlobalTensor<S> gx;
  AscendC::GlobalTensor<D> go;
  gx.SetGlobalBuffer((__gm__ S*)x, t.n);
  go.SetGlobalBuffer((__gm__ D*)o, t.n);
  AscendC::LocalTensor<S> s = bs.Get<S>();
  AscendC::LocalTensor<D> d = bd.Get<D>();
  AscendC::DataCopy(s, gx, t.n);
  AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
  AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
  AscendC::Cast(d, s, static_cast<AscendC::RoundMode>(t.mode), t.n);
  AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
  AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
  AscendC::DataCopy(go, d, t.n);
}

}  // namespace cast_bf16

extern "C" __global__ __aicore__ void cast_bf16_kernel(GM_ADDR x, GM_ADDR o16, GM_ADDR o32,
                                                       GM_ADDR workspace, GM_ADDR tiling) {
  cast_bf16::KernelCastBf16 op;
  op.Init(x, o16, o32, *reinterpret_cast<const cast_bf16::Tiling*>(tiling));
  op.Process();
}

extern "C" __global__ __aicore__ void cast_any_kernel(GM_ADDR x, GM_ADDR o, GM_ADDR workspace,
                                                      GM_ADDR tiling) {
  const auto& t = *reinterpret_cast<const cast_bf16::Tiling*>(tiling);
  cast_bf16::ByCode(t.src, [&](auto s) {
    cast_bf16::ByCode(t.dst, [&](auto d) {
      cast_bf16::CastAny<decltype(d), decltype(s)>(x, o, t);
    });
  });
}
