// Sample family "LeakyRelu" (written here from the public Ascend C documentation: LeakyRelu,
// TQue, DataCopy): y = x >= 0 ? x : alpha * x for half and float, one class template, the
// slope and sizes in a tiling struct. Double-buffered, multi-core; lengths are multiples of
// one DataBlock per tile.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct LeakyReluTilingData {
  uint32_t totalLength;
  uint32_t tileNum;
  float alpha;
};

template <typename T>
class KernelLeakyRelu {
 public:
  __aicore__ inline KernelLeakyRelu() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const LeakyReluTilingData& t) {
    blockLength_ = t.totalLength / AscendC::GetBlockNum();
    tileNum_ = t.tileNum;
    tileLength_ = blockLength_ / tileNum_ / BUFFER_NUM;
    alpha_ = static_cast<T>(t.alpha);
    xGm_.SetGlobalBuffer((__gm__ T*)x + blockLength_ * AscendC::GetBlockIdx(), blockLength_);
    yGm_.SetGlobalBuffer((__gm__ T*)y + blockLength_ * AscendC::GetBlockIdx(), blockLength_);
    pipe_.InitBuffer(inQueueX_, BUFFER_NUM, tileLength_ * sizeof(T));
    pipe_.InitBuffer(outQueueY_, BUFFER_NUM, tileLength_ * sizeof(T));
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < tileNum_ * BUFFER_NUM; i++) {
      AscendC::LocalTensor<T> xLocal = inQueueX_.template AllocTensor<T>();
      AscendC::DataCopy(xLocal, xGm_[i * tileLength_], tileLength_);
      inQueueX_.EnQue(xLocal);
      xLocal = inQueueX_.template DeQue<T>();
      AscendC::LocalTensor<T> yLocal = outQueueY_.template AllocTensor<T>();
      AscendC::LeakyRelu(yLocal, xLocal, alpha_, tileLength_);
      outQueueY_.EnQue(yLocal);
      inQueueX_.FreeTensor(xLocal);
      yLocal = outQueueY_.template DeQue<T>();
      AscendC::DataCopy(yGm_[i * tileLength_], yLocal, tileLength_);
      outQueueY_.FreeTensor(yLocal);
    }
  }

 private:
  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueX_;
  AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQueueY_;
  AscendC::GlobalTensor<T> xGm_, yGm_;
  uint32_t blockLength_ = 0, tileNum_ = 0, tileLength_ = 0;
  T alpha_;
};

extern "C" __global__ __aicore__ void leakyrelu_half(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  KernelLeakyRelu<half> op;
  op.Init(x, y, *(__gm__ LeakyReluTilingData*)tiling);
  op.Process();
}

extern "C" __global__ __aicore__ void leakyrelu_float(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  KernelLeakyRelu<float> op;
  op.Init(x, y, *(__gm__ LeakyReluTilingData*)tiling);
  op.Process();
}
