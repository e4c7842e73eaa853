// Conformance kernels in the style of the public Ascend C samples, written here from the
// Ascend C documentation (no sample code copied): "DataCopyPad + Adds" (rows of an unaligned
// width moved with DataCopyPad, one Adds per tile), an "unaligned Abs" (a total length that is
// not a DataBlock multiple, double buffered, DataCopyPad in and out) and a kernel that sizes its
// queues from the UB size the host's GetCoreMemSize(CoreMemType::UB) reports.
#include "kernel_operator.h"

namespace samples {
constexpr int32_t BUFFER_NUM = 2;

struct PadAddsTiling {
  uint32_t rows;        // total rows
  uint32_t cols;        // elements per row (any width)
  uint32_t tileRows;    // rows per tile
  int32_t dtype;        // 0 half, 1 float
  float scalar;         // Adds operand
};

template <typename T>
class KernelPadAdds {
 public:
  __aicore__ inline KernelPadAdds() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const PadAddsTiling& t) {
    cols = t.cols;
    colsAligned = (cols * sizeof(T) + 31) / 32 * 32 / sizeof(T);
    tileRows = t.tileRows;
    scalar = static_cast<T>(t.scalar);
    const uint32_t perCore = (t.rows + AscendC::GetBlockNum() - 1) / AscendC::GetBlockNum();
    const uint32_t first = perCore * AscendC::GetBlockIdx();
    rows = first >= t.rows ? 0 : (t.rows - first < perCore ? t.rows - first : perCore);
    xGm.SetGlobalBuffer((__gm__ T*)x + first * cols, rows * cols);
    yGm.SetGlobalBuffer((__gm__ T*)y + first * cols, rows * cols);
    pipe.InitBuffer(inQueueX, BUFFER_NUM, tileRows * colsAligned * sizeof(T));
    pipe.InitBuffer(outQueueY, BUFFER_NUM, tileRows * colsAligned * sizeof(T));
  }
  __aicore__ inline void Process() {
    for (uint32_t r = 0; r < rows; r += tileRows) {
      const uint32_t n = rows - r < tileRows ? rows - r : tileRows;
      CopyIn(r, n);
      Compute(n);
      CopyOut(r, n);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint32_t r, uint32_t n) {
    AscendC::LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
    AscendC::DataCopyExtParams copyParams{static_cast<uint16_t>(n),
                                          static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
    AscendC::DataCopyPadExtParams<T> padParams{true, 0, 0, static_cast<T>(0)};
    AscendC::DataCopyPad(xLocal, xGm[r * cols], copyParams, padParams);
    inQueueX.EnQue(xLocal);
  }
  __aicore__ inline void Compute(uint32_t n) {
    AscendC::LocalTensor<T> xLocal = inQueueX.DeQue<T>();
    AscendC::LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
    AscendC::Adds(yLocal, xLocal, scalar, n * colsAligned);
    outQueueY.EnQue<T>(yLocal);
    inQueueX.FreeTensor(xLocal);
  }
  __aicore__ inline void CopyOut(uint32_t r, uint32_t n) {
    AscendC::LocalTensor<T> yLocal = outQueueY.DeQue<T>();
    AscendC::DataCopyExtParams copyParams{static_cast<uint16_t>(n),
                                          static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
    AscendC::DataCopyPad(yGm[r * cols], yLocal, copyParams);
    outQueueY.FreeTensor(yLocal);
  }

  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueX;
  AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQueueY;
  AscendC::GlobalTensor<T> xGm, yGm;
  uint32_t rows = 0, cols = 0, colsAligned = 0, tileRows = 0;
  T scalar;
};

struct AbsTiling {
  uint32_t totalLength;  // elements, any count
  uint32_t tileLength;   // elements per tile (a DataBlock multiple)
  int32_t dtype;         // 0 half, 1 float
};

template <typename T>
class KernelAbsUnaligned {
 public:
  __aicore__ inline KernelAbsUnaligned() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR z, const AbsTiling& t) {
    const uint32_t perCore = (t.totalLength + GetBlockNum() - 1) / GetBlockNum();
    const uint32_t first = perCore * GetBlockIdx();
    length = first >= t.totalLength ? 0
             : (t.totalLength - first < perCore ? t.totalLength - first : perCore);
    tileLength = t.tileLength;
    xGm.SetGlobalBuffer((__gm__ T*)x + first, length);
    zGm.SetGlobalBuffer((__gm__ T*)z + first, length);
    pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(T));
    pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(T));
  }
  __aicore__ inline void Process() {
    for (uint32_t o = 0; o < length; o += tileLength) {
      const uint32_t n = length - o < tileLength ? length - o : tileLength;
      AscendC::LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
      AscendC::DataCopyExtParams ext{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
      AscendC::DataCopyPad(xLocal, xGm[o], ext, AscendC::DataCopyPadExtParams<T>{false, 0, 0, 0});
      inQueueX.EnQue(xLocal);
      xLocal = inQueueX.DeQue<T>();
      AscendC::LocalTensor<T> zLocal = outQueueZ.AllocTensor<T>();
      const uint32_t aligned = (n * sizeof(T) + 31) / 32 * 32 / sizeof(T);
      AscendC::Abs(zLocal, xLocal, aligned);  // the padding lanes are computed and not stored
      outQueueZ.EnQue(zLocal);
      inQueueX.FreeTensor(xLocal);
      zLocal = outQueueZ.DeQue<T>();
      AscendC::DataCopyPad(zGm[o], zLocal, ext);
      outQueueZ.FreeTensor(zLocal);
    }
  }

 private:
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueueX;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueueZ;
  AscendC::GlobalTensor<T> xGm, zGm;
  uint32_t length = 0, tileLength = 0;
};

struct UbTiling {
  uint64_t ubSize;       // GetCoreMemSize(CoreMemType::UB) on the host
  uint32_t totalLength;  // float elements, a DataBlock multiple
};
}  // namespace samples

extern "C" __global__ __aicore__ void pad_adds_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR workspace,
                                                      GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  const auto& t = *reinterpret_cast<const samples::PadAddsTiling*>(tiling);
  if (t.dtype == 0) {
    samples::KernelPadAdds<half> op;
    op.Init(x, y, t);
    op.Process();
  } else {
    samples::KernelPadAdds<float> op;
    op.Init(x, y, t);
    op.Process();
  }
}

extern "C" __global__ __aicore__ void abs_unaligned_kernel(GM_ADDR x, GM_ADDR z,
                                                           GM_ADDR workspace, GM_ADDR tiling) {
  const auto& t = *reinterpret_cast<const samples::AbsTiling*>(tiling);
  if (t.dtype == 0) {
    samples::KernelAbsUnaligned<half> op;
    op.Init(x, z, t);
    op.Process();
  } else {
    samples::KernelAbsUnaligned<float> op;
    op.Init(x, z, t);
    op.Process();
  }
}

// Two double-buffered queues that take the whole UB the host reported (each buffer a quarter,
// rounded down to a DataBlock), then a copy through them.
extern "C" __global__ __aicore__ void ub_full_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR workspace,
                                                     GM_ADDR tiling) {
  const auto& t = *reinterpret_cast<const samples::UbTiling*>(tiling);
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> inQ;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQ;
  const uint32_t bufBytes = static_cast<uint32_t>(t.ubSize / 4 / 32 * 32);
  pipe.InitBuffer(inQ, 2, bufBytes);
  pipe.InitBuffer(outQ, 2, bufBytes);
  AscendC::GlobalTensor<float> xGm, yGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, t.totalLength);
  yGm.SetGlobalBuffer((__gm__ float*)y, t.totalLength);
  const uint32_t tile = bufBytes / sizeof(float);
  for (uint32_t o = 0; o < t.totalLength; o += tile) {
    const uint32_t n = t.totalLength - o < tile ? t.totalLength - o : tile;
    auto a = inQ.AllocTensor<float>();
    AscendC::DataCopy(a, xGm[o], n);
    inQ.EnQue(a);
    a = inQ.DeQue<float>();
    auto b = outQ.AllocTensor<float>();
    AscendC::Muls(b, a, 2.0f, n);
    outQ.EnQue(b);
    inQ.FreeTensor(a);
    b = outQ.DeQue<float>();
    AscendC::DataCopy(yGm[o], b, n);
    outQ.FreeTensor(b);
  }
}
