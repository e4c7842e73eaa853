// Conformance sample: z = LeakyRelu(x + y, alpha) written as public Ascend C vector samples are
// (multi-core split with GetBlockIdx, TPipe + TQue double buffering, CopyIn/Compute/CopyOut),
// computing with the level-0 (mask/repeat) forms: full repeats with a contiguous mask, the last
// partial repeat with a smaller mask; unaligned tails move with DataCopyPad.
// Written here from the Ascend C API documentation; built by tests/test_conformance_level0.py.
#include "kernel_operator.h"

namespace add_leaky {

constexpr int32_t BUFFER_NUM = 2;
constexpr int32_t TILE = 1024;  // elements per tile

struct TilingData {
  uint32_t totalLength;  // elements
  float alpha;
};

template <typename T>
class KernelAddLeaky {
 public:
  __aicore__ inline KernelAddLeaky() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const TilingData& t) {
    const uint32_t blocks = AscendC::GetBlockNum();
    const uint32_t per = (t.totalLength + blocks - 1) / blocks;
    start_ = per * AscendC::GetBlockIdx();
    length_ = start_ >= t.totalLength ? 0 : (t.totalLength - start_ < per ? t.totalLength - start_ : per);
    alpha_ = static_cast<T>(t.alpha);
    xGm_.SetGlobalBuffer((__gm__ T*)x + start_, length_);
    yGm_.SetGlobalBuffer((__gm__ T*)y + start_, length_);
    zGm_.SetGlobalBuffer((__gm__ T*)z + start_, length_);
    pipe_.InitBuffer(inQueueX_, BUFFER_NUM, TILE * sizeof(T));
    pipe_.InitBuffer(inQueueY_, BUFFER_NUM, TILE * sizeof(T));
    pipe_.InitBuffer(outQueueZ_, BUFFER_NUM, TILE * sizeof(T));
  }
  __aicore__ inline void Process() {
    const uint32_t tiles = (length_ + TILE - 1) / TILE;
    for (uint32_t i = 0; i < tiles; i++) {
      const uint32_t n = i + 1 == tiles ? length_ - i * TILE : TILE;
      CopyIn(i, n);
      Compute(n);
      CopyOut(i, n);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint32_t i, uint32_t n) {
    AscendC::LocalTensor<T> xLocal = inQueueX_.AllocTensor<T>();
    AscendC::LocalTensor<T> yLocal = inQueueY_.AllocTensor<T>();
    AscendC::DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    AscendC::DataCopyPadExtParams<T> pad{true, 0, 0, static_cast<T>(0)};
    AscendC::DataCopyPad(xLocal, xGm_[i * TILE], p, pad);
    AscendC::DataCopyPad(yLocal, yGm_[i * TILE], p, pad);
    inQueueX_.EnQue(xLocal);
    inQueueY_.EnQue(yLocal);
  }
  __aicore__ inline void Compute(uint32_t n) {
    constexpr uint32_t lanes = 256 / sizeof(T);
    AscendC::LocalTensor<T> xLocal = inQueueX_.DeQue<T>();
    AscendC::LocalTensor<T> yLocal = inQueueY_.DeQue<T>();
    AscendC::LocalTensor<T> zLocal = outQueueZ_.AllocTensor<T>();
    const uint32_t full = n / lanes, rest = n % lanes;
    if (full > 0) {
      AscendC::Add(zLocal, xLocal, yLocal, lanes, full, {1, 1, 1, 8, 8, 8});
      AscendC::PipeBarrier<PIPE_V>();
      AscendC::LeakyRelu(zLocal, zLocal, alpha_, lanes, full, {1, 1, 8, 8});
    }
    if (rest > 0) {
      const uint32_t off = full * lanes;
      AscendC::Add(zLocal[off], xLocal[off], yLocal[off], rest, 1, {1, 1, 1, 8, 8, 8});
      AscendC::PipeBarrier<PIPE_V>();
      AscendC::LeakyRelu(zLocal[off], zLocal[off], alpha_, rest, 1, {1, 1, 8, 8});
    }
    outQueueZ_.EnQue<T>(zLocal);
    inQueueX_.FreeTensor(xLocal);
    inQueueY_.FreeTensor(yLocal);
  }
  __aicore__ inline void CopyOut(uint32_t i, uint32_t n) {
    AscendC::LocalTensor<T> zLocal = outQueueZ_.DeQue<T>();
    AscendC::DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    AscendC::DataCopyPad(zGm_[i * TILE], zLocal, p);
    outQueueZ_.FreeTensor(zLocal);
  }

  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX_, inQueueY_;
  AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueZ_;
  AscendC::GlobalTensor<T> xGm_, yGm_, zGm_;
  uint32_t start_ = 0, length_ = 0;
  T alpha_;
};

}  // namespace add_leaky

extern "C" __global__ __aicore__ __vector__ void add_leaky_half(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                                                 GM_ADDR workspace,
                                                                 GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  add_leaky::KernelAddLeaky<half> op;
  op.Init(x, y, z, *reinterpret_cast<const add_leaky::TilingData*>(tiling));
  op.Process();
}

extern "C" __global__ __aicore__ __vector__ void add_leaky_float(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                                                  GM_ADDR workspace,
                                                                  GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  add_leaky::KernelAddLeaky<float> op;
  op.Init(x, y, z, *reinterpret_cast<const add_leaky::TilingData*>(tiling));
  op.Process();
}
