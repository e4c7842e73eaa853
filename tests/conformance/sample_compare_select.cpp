// Conformance sample: Compare + Select written as public Ascend C vector samples are (multi-core
// split with GetBlockIdx, TPipe + TQue double buffering, CopyIn/Compute/CopyOut, unaligned tails
// through DataCopyPad). Variant 0: z = x < y ? x : y (Compare LT, Select
// VSEL_TENSOR_TENSOR_MODE); variant 1: z = x >= thr ? x : fill (Compares GE, Select
// VSEL_TENSOR_SCALAR_MODE). Compare needs a count that fills 256-byte repeats: a tile's count is
// rounded up to whole repeats (the lanes past the data compare stale UB; their bits select
// lanes that are never copied out). Written here from the Ascend C API documentation; built by
// tests/test_conformance_compare.py.
#include "kernel_operator.h"

namespace sample_cmpsel {

constexpr int32_t BUFFER_NUM = 2;
constexpr int32_t TILE = 1024;  // elements per tile (whole repeats for half and float)

struct TilingData {
  uint32_t totalLength;  // elements
  uint32_t variant;
  float threshold;
  float fill;
};

template <typename T>
class KernelCmpSel {
 public:
  __aicore__ inline KernelCmpSel() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const TilingData& t) {
    const uint32_t blocks = AscendC::GetBlockNum();
    const uint32_t per = (t.totalLength + blocks - 1) / blocks;
    start_ = per * AscendC::GetBlockIdx();
    length_ = start_ >= t.totalLength ? 0 : (t.totalLength - start_ < per ? t.totalLength - start_ : per);
    variant_ = t.variant;
    threshold_ = static_cast<T>(t.threshold);
    fill_ = static_cast<T>(t.fill);
    xGm_.SetGlobalBuffer((__gm__ T*)x + start_, length_);
    yGm_.SetGlobalBuffer((__gm__ T*)y + start_, length_);
    zGm_.SetGlobalBuffer((__gm__ T*)z + start_, length_);
    pipe_.InitBuffer(inQueueX_, BUFFER_NUM, TILE * sizeof(T));
    pipe_.InitBuffer(inQueueY_, BUFFER_NUM, TILE * sizeof(T));
    pipe_.InitBuffer(outQueueZ_, BUFFER_NUM, TILE * sizeof(T));
    pipe_.InitBuffer(maskBuf_, TILE / 8);
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
    AscendC::DataCopyPadExtParams<T> pad{false, 0, 0, static_cast<T>(0)};
    AscendC::DataCopyPad(xLocal, xGm_[i * TILE], p, pad);
    AscendC::DataCopyPad(yLocal, yGm_[i * TILE], p, pad);
    inQueueX_.EnQue(xLocal);
    inQueueY_.EnQue(yLocal);
  }
  __aicore__ inline void Compute(uint32_t n) {
    constexpr uint32_t lanes = 256 / sizeof(T);
    const uint32_t aligned = (n + lanes - 1) / lanes * lanes;
    AscendC::LocalTensor<T> xLocal = inQueueX_.DeQue<T>();
    AscendC::LocalTensor<T> yLocal = inQueueY_.DeQue<T>();
    AscendC::LocalTensor<T> zLocal = outQueueZ_.AllocTensor<T>();
    AscendC::LocalTensor<uint8_t> mask = maskBuf_.Get<uint8_t>();
    if (variant_ == 0) {
      AscendC::Compare(mask, xLocal, yLocal, AscendC::CMPMODE::LT, aligned);
      AscendC::PipeBarrier<PIPE_V>();
      AscendC::Select(zLocal, mask, xLocal, yLocal, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    } else {
      AscendC::Compares(mask, xLocal, threshold_, AscendC::CMPMODE::GE, aligned);
      AscendC::PipeBarrier<PIPE_V>();
      AscendC::Select(zLocal, mask, xLocal, fill_, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
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
  AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueX_, inQueueY_;
  AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQueueZ_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> maskBuf_;
  AscendC::GlobalTensor<T> xGm_, yGm_, zGm_;
  uint32_t start_ = 0, length_ = 0, variant_ = 0;
  T threshold_{}, fill_{};
};

}  // namespace sample_cmpsel

extern "C" __global__ __aicore__ void sample_cmpsel_half(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                                         GM_ADDR workspace, GM_ADDR tiling) {
  sample_cmpsel::KernelCmpSel<half> op;
  op.Init(x, y, z, *reinterpret_cast<const sample_cmpsel::TilingData*>(tiling));
  op.Process();
}

extern "C" __global__ __aicore__ void sample_cmpsel_float(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                                          GM_ADDR workspace, GM_ADDR tiling) {
  sample_cmpsel::KernelCmpSel<float> op;
  op.Init(x, y, z, *reinterpret_cast<const sample_cmpsel::TilingData*>(tiling));
  op.Process();
}
