// add_custom.cpp -- a hand-written Ascend C kernel, as a user writes one: z = x + y (half) on
// blockDim cores, each core's share cut into tiles that flow through double-buffered queues
// (CopyIn on MTE2, Compute on the vector unit, CopyOut on MTE3).
//
// Run it without CANN (README: "Debugging hand-written Ascend C without CANN"):
//   python -c "import numpy as np; r=np.random.default_rng(0); \
//     [np.save(n, r.standard_normal(16384).astype(np.float16)) for n in ('x', 'y')]"
//   pyasc cpu-run examples/ascendc/add_custom.cpp --entry add_custom --block-dim 8 \
//     x.npy y.npy 'z:float16[16384]' u32:16384,8
// The last argument is the tiling struct below (totalLength, tileNum) packed as two uint32.
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;  // two buffers per queue: copy-in overlaps compute

struct AddCustomTilingData {
  uint32_t totalLength;  // elements of x, y and z
  uint32_t tileNum;      // tiles per core (each processed in BUFFER_NUM halves)
};

class KernelAdd {
 public:
  __aicore__ inline KernelAdd() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength,
                              uint32_t tileNum) {
    blockLength = totalLength / AscendC::GetBlockNum();
    this->tileNum = tileNum;
    tileLength = blockLength / tileNum / BUFFER_NUM;
    const uint32_t start = blockLength * AscendC::GetBlockIdx();
    xGm.SetGlobalBuffer((__gm__ half*)x + start, blockLength);
    yGm.SetGlobalBuffer((__gm__ half*)y + start, blockLength);
    zGm.SetGlobalBuffer((__gm__ half*)z + start, blockLength);
    pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half));
    pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(half));
    pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(half));
  }
  __aicore__ inline void Process() {
    const int32_t loops = tileNum * BUFFER_NUM;
    for (int32_t i = 0; i < loops; i++) {
      CopyIn(i);
      Compute(i);
      CopyOut(i);
    }
  }

 private:
  __aicore__ inline void CopyIn(int32_t progress) {
    AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
    AscendC::LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
    AscendC::DataCopy(xLocal, xGm[progress * tileLength], tileLength);
    AscendC::DataCopy(yLocal, yGm[progress * tileLength], tileLength);
    inQueueX.EnQue(xLocal);
    inQueueY.EnQue(yLocal);
  }
  __aicore__ inline void Compute(int32_t progress) {
    AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
    AscendC::LocalTensor<half> yLocal = inQueueY.DeQue<half>();
    AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
    AscendC::Add(zLocal, xLocal, yLocal, tileLength);
    outQueueZ.EnQue<half>(zLocal);
    inQueueX.FreeTensor(xLocal);
    inQueueY.FreeTensor(yLocal);
  }
  __aicore__ inline void CopyOut(int32_t progress) {
    AscendC::LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
    AscendC::DataCopy(zGm[progress * tileLength], zLocal, tileLength);
    outQueueZ.FreeTensor(zLocal);
  }

  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
  AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQueueZ;
  AscendC::GlobalTensor<half> xGm, yGm, zGm;
  uint32_t blockLength = 0, tileNum = 0, tileLength = 0;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                                 GM_ADDR tiling) {
  const __gm__ AddCustomTilingData* t = (const __gm__ AddCustomTilingData*)tiling;
  KernelAdd op;
  op.Init(x, y, z, t->totalLength, t->tileNum);
  op.Process();
}

#ifndef ASCENDC_CPU_DEBUG
// Host launch on the NPU (the bisheng toolchain); left out of CPU builds.
void add_custom_do(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* y, uint8_t* z,
                   uint8_t* tiling) {
  add_custom<<<blockDim, nullptr, stream>>>(x, y, z, tiling);
}
#endif
