// Sample family "Cast with round modes" (written here from the public Ascend C documentation:
// Cast, RoundMode and the Atlas A2 table of pairs and modes): float -> int32_t and
// float -> half in the round mode the tiling names (RoundMode's documented order: 0 NONE,
// 1 RINT, 2 FLOOR, 3 CEIL, 4 ROUND, 5 TRUNC, 6 ODD). One tile per core.
#include "kernel_operator.h"

struct CastRoundTilingData {
  uint32_t blockLength;  // elements per core; a multiple of 16
  uint32_t roundMode;
};

template <typename D>
class KernelCastRound {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR z, const CastRoundTilingData& t) {
    n_ = t.blockLength;
    mode_ = static_cast<AscendC::RoundMode>(t.roundMode);
    xGm_.SetGlobalBuffer((__gm__ float*)x + n_ * AscendC::GetBlockIdx(), n_);
    zGm_.SetGlobalBuffer((__gm__ D*)z + n_ * AscendC::GetBlockIdx(), n_);
    pipe_.InitBuffer(inQueue_, 1, n_ * sizeof(float));
    pipe_.InitBuffer(outQueue_, 1, n_ * sizeof(D));
  }
  __aicore__ inline void Process() {
    AscendC::LocalTensor<float> xLocal = inQueue_.AllocTensor<float>();
    AscendC::DataCopy(xLocal, xGm_, n_);
    inQueue_.EnQue(xLocal);
    xLocal = inQueue_.DeQue<float>();
    AscendC::LocalTensor<D> zLocal = outQueue_.template AllocTensor<D>();
    AscendC::Cast(zLocal, xLocal, mode_, n_);
    outQueue_.EnQue(zLocal);
    inQueue_.FreeTensor(xLocal);
    zLocal = outQueue_.template DeQue<D>();
    AscendC::DataCopy(zGm_, zLocal, n_);
    outQueue_.FreeTensor(zLocal);
  }

 private:
  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueue_;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueue_;
  AscendC::GlobalTensor<float> xGm_;
  AscendC::GlobalTensor<D> zGm_;
  uint32_t n_ = 0;
  AscendC::RoundMode mode_ = AscendC::RoundMode::CAST_NONE;
};

extern "C" __global__ __aicore__ void cast_f32_s32(GM_ADDR x, GM_ADDR z, GM_ADDR tiling) {
  KernelCastRound<int32_t> op;
  op.Init(x, z, *(__gm__ CastRoundTilingData*)tiling);
  op.Process();
}

extern "C" __global__ __aicore__ void cast_f32_f16(GM_ADDR x, GM_ADDR z, GM_ADDR tiling) {
  KernelCastRound<half> op;
  op.Init(x, z, *(__gm__ CastRoundTilingData*)tiling);
  op.Process();
}
