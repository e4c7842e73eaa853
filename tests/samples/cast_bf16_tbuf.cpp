// Sample family "Cast through a TBuf with bf16" (written here from the public Ascend C
// documentation: Cast and its Atlas A2 round-mode table, TBuf, bfloat16_t): z = bf16(x + y)
// for bfloat16_t x, y. The vector unit has no bf16 Add, so both inputs are cast up to float
// in TBuf scratch buffers (CAST_NONE, exact), added in float and cast back with CAST_RINT.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct CastTilingData {
  uint32_t totalLength;  // elements; a multiple of 16 * blockDim
  uint32_t tileLength;   // elements per tile; divides the core's share, a multiple of 16
};

class KernelAddBf16 {
 public:
  __aicore__ inline KernelAddBf16() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const CastTilingData& t) {
    blockLength_ = t.totalLength / AscendC::GetBlockNum();
    tileLength_ = t.tileLength;
    const uint32_t start = blockLength_ * AscendC::GetBlockIdx();
    xGm_.SetGlobalBuffer((__gm__ bfloat16_t*)x + start, blockLength_);
    yGm_.SetGlobalBuffer((__gm__ bfloat16_t*)y + start, blockLength_);
    zGm_.SetGlobalBuffer((__gm__ bfloat16_t*)z + start, blockLength_);
    pipe_.InitBuffer(inQueueX_, BUFFER_NUM, tileLength_ * sizeof(bfloat16_t));
    pipe_.InitBuffer(inQueueY_, BUFFER_NUM, tileLength_ * sizeof(bfloat16_t));
    pipe_.InitBuffer(outQueueZ_, BUFFER_NUM, tileLength_ * sizeof(bfloat16_t));
    pipe_.InitBuffer(xFloat_, tileLength_ * sizeof(float));
    pipe_.InitBuffer(yFloat_, tileLength_ * sizeof(float));
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < blockLength_ / tileLength_; i++) {
      CopyIn(i);
      Compute();
      CopyOut(i);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint32_t i) {
    AscendC::LocalTensor<bfloat16_t> xLocal = inQueueX_.AllocTensor<bfloat16_t>();
    AscendC::LocalTensor<bfloat16_t> yLocal = inQueueY_.AllocTensor<bfloat16_t>();
    AscendC::DataCopy(xLocal, xGm_[i * tileLength_], tileLength_);
    AscendC::DataCopy(yLocal, yGm_[i * tileLength_], tileLength_);
    inQueueX_.EnQue(xLocal);
    inQueueY_.EnQue(yLocal);
  }
  __aicore__ inline void Compute() {
    AscendC::LocalTensor<bfloat16_t> xLocal = inQueueX_.DeQue<bfloat16_t>();
    AscendC::LocalTensor<bfloat16_t> yLocal = inQueueY_.DeQue<bfloat16_t>();
    AscendC::LocalTensor<bfloat16_t> zLocal = outQueueZ_.AllocTensor<bfloat16_t>();
    AscendC::LocalTensor<float> xf = xFloat_.Get<float>();
    AscendC::LocalTensor<float> yf = yFloat_.Get<float>();
    AscendC::Cast(xf, xLocal, AscendC::RoundMode::CAST_NONE, tileLength_);
    AscendC::Cast(yf, yLocal, AscendC::RoundMode::CAST_NONE, tileLength_);
    AscendC::Add(xf, xf, yf, tileLength_);
    AscendC::Cast(zLocal, xf, AscendC::RoundMode::CAST_RINT, tileLength_);
    outQueueZ_.EnQue(zLocal);
    inQueueX_.FreeTensor(xLocal);
    inQueueY_.FreeTensor(yLocal);
  }
  __aicore__ inline void CopyOut(uint32_t i) {
    AscendC::LocalTensor<bfloat16_t> zLocal = outQueueZ_.DeQue<bfloat16_t>();
    AscendC::DataCopy(zGm_[i * tileLength_], zLocal, tileLength_);
    outQueueZ_.FreeTensor(zLocal);
  }

  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueX_, inQueueY_;
  AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQueueZ_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> xFloat_, yFloat_;
  AscendC::GlobalTensor<bfloat16_t> xGm_, yGm_, zGm_;
  uint32_t blockLength_ = 0, tileLength_ = 0;
};

extern "C" __global__ __aicore__ void add_bf16(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                               GM_ADDR tiling) {
  KernelAddBf16 op;
  op.Init(x, y, z, *(__gm__ CastTilingData*)tiling);
  op.Process();
}
