// Sample family "Sub" (written here from the public Ascend C documentation): z = x - y in
// float, the length and tile size in a tiling struct read from GM, each core's share cut into
// double-buffered tiles, the last tile of a core shorter (its length a multiple of 8 floats,
// one 32-byte DataBlock, as DataCopy moves whole DataBlocks).
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

struct SubTilingData {
  uint32_t totalLength;  // floats; a multiple of 8 * blockDim
  uint32_t tileLength;   // floats per tile; a multiple of 8
};

class KernelSub {
 public:
  __aicore__ inline KernelSub() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const SubTilingData& t) {
    blockLength_ = t.totalLength / GetBlockNum();
    tileLength_ = t.tileLength;
    const uint64_t start = static_cast<uint64_t>(blockLength_) * GetBlockIdx();
    xGm_.SetGlobalBuffer((__gm__ float*)x + start, blockLength_);
    yGm_.SetGlobalBuffer((__gm__ float*)y + start, blockLength_);
    zGm_.SetGlobalBuffer((__gm__ float*)z + start, blockLength_);
    pipe_.InitBuffer(inQueueX_, BUFFER_NUM, tileLength_ * sizeof(float));
    pipe_.InitBuffer(inQueueY_, BUFFER_NUM, tileLength_ * sizeof(float));
    pipe_.InitBuffer(outQueueZ_, BUFFER_NUM, tileLength_ * sizeof(float));
  }
  __aicore__ inline void Process() {
    const uint32_t tiles = (blockLength_ + tileLength_ - 1) / tileLength_;
    for (uint32_t i = 0; i < tiles; i++) {
      const uint32_t len = i + 1 < tiles ? tileLength_ : blockLength_ - i * tileLength_;
      CopyIn(i, len);
      Compute(len);
      CopyOut(i, len);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint32_t i, uint32_t len) {
    LocalTensor<float> xLocal = inQueueX_.AllocTensor<float>();
    LocalTensor<float> yLocal = inQueueY_.AllocTensor<float>();
    DataCopy(xLocal, xGm_[i * tileLength_], len);
    DataCopy(yLocal, yGm_[i * tileLength_], len);
    inQueueX_.EnQue(xLocal);
    inQueueY_.EnQue(yLocal);
  }
  __aicore__ inline void Compute(uint32_t len) {
    LocalTensor<float> xLocal = inQueueX_.DeQue<float>();
    LocalTensor<float> yLocal = inQueueY_.DeQue<float>();
    LocalTensor<float> zLocal = outQueueZ_.AllocTensor<float>();
    Sub(zLocal, xLocal, yLocal, len);
    outQueueZ_.EnQue<float>(zLocal);
    inQueueX_.FreeTensor(xLocal);
    inQueueY_.FreeTensor(yLocal);
  }
  __aicore__ inline void CopyOut(uint32_t i, uint32_t len) {
    LocalTensor<float> zLocal = outQueueZ_.DeQue<float>();
    DataCopy(zGm_[i * tileLength_], zLocal, len);
    outQueueZ_.FreeTensor(zLocal);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX_, inQueueY_;
  TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueZ_;
  GlobalTensor<float> xGm_, yGm_, zGm_;
  uint32_t blockLength_ = 0, tileLength_ = 0;
};

extern "C" __global__ __aicore__ void sub_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                                 GM_ADDR tiling) {
  SubTilingData t;
  t.totalLength = ((__gm__ uint32_t*)tiling)[0];  // copied field by field, as samples do
  t.tileLength = ((__gm__ uint32_t*)tiling)[1];
  KernelSub op;
  op.Init(x, y, z, t);
  op.Process();
}
