// Sample family "unaligned Abs" (written here from the public Ascend C documentation:
// DataCopyPad, DataCopyExtParams, DataCopyPadExtParams, Abs): z = |x| in half for a length
// that is not a multiple of the 16-element DataBlock. Each core takes ceil(total / blockDim)
// elements (the last core fewer); DataCopyPad moves exactly the valid bytes both ways and pads
// the UB copy up to a DataBlock.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

struct AbsTilingData {
  uint32_t totalLength;  // elements of x and z
  uint32_t tileLength;   // elements per tile (any; the UB buffers are padded to 32 bytes)
};

class KernelAbsUnaligned {
 public:
  __aicore__ inline KernelAbsUnaligned() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR z, const AbsTilingData& t) {
    const uint32_t per = (t.totalLength + GetBlockNum() - 1) / GetBlockNum();
    const uint32_t start = per * GetBlockIdx();
    length_ = start >= t.totalLength ? 0 : std::min(per, t.totalLength - start);
    tileLength_ = t.tileLength;
    xGm_.SetGlobalBuffer((__gm__ half*)x + start, length_);
    zGm_.SetGlobalBuffer((__gm__ half*)z + start, length_);
    const uint32_t padded = (tileLength_ * sizeof(half) + 31) / 32 * 32;
    pipe_.InitBuffer(inQueue_, BUFFER_NUM, padded);
    pipe_.InitBuffer(outQueue_, BUFFER_NUM, padded);
  }
  __aicore__ inline void Process() {
    for (uint32_t done = 0; done < length_; done += tileLength_) {
      const uint32_t len = std::min(tileLength_, length_ - done);
      CopyIn(done, len);
      Compute(len);
      CopyOut(done, len);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint32_t offset, uint32_t len) {
    AscendC::LocalTensor<half> xLocal = inQueue_.AllocTensor<half>();
    AscendC::DataCopyExtParams copy{1, static_cast<uint32_t>(len * sizeof(half)), 0, 0, 0};
    AscendC::DataCopyPadExtParams<half> pad{true, 0, 0, 0};
    AscendC::DataCopyPad(xLocal, xGm_[offset], copy, pad);
    inQueue_.EnQue(xLocal);
  }
  __aicore__ inline void Compute(uint32_t len) {
    AscendC::LocalTensor<half> xLocal = inQueue_.DeQue<half>();
    AscendC::LocalTensor<half> zLocal = outQueue_.AllocTensor<half>();
    AscendC::Abs(zLocal, xLocal, len);
    outQueue_.EnQue(zLocal);
    inQueue_.FreeTensor(xLocal);
  }
  __aicore__ inline void CopyOut(uint32_t offset, uint32_t len) {
    AscendC::LocalTensor<half> zLocal = outQueue_.DeQue<half>();
    AscendC::DataCopyExtParams copy{1, static_cast<uint32_t>(len * sizeof(half)), 0, 0, 0};
    AscendC::DataCopyPad(zGm_[offset], zLocal, copy);
    outQueue_.FreeTensor(zLocal);
  }

  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueue_;
  AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQueue_;
  AscendC::GlobalTensor<half> xGm_, zGm_;
  uint32_t length_ = 0, tileLength_ = 0;
};

extern "C" __global__ __aicore__ void abs_unaligned(GM_ADDR x, GM_ADDR z, GM_ADDR tiling) {
  AbsTilingData t = *(__gm__ AbsTilingData*)tiling;
  KernelAbsUnaligned op;
  op.Init(x, z, t);
  op.Process();
}
