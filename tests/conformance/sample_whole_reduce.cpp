// Sample-style kernel: row sums of an unaligned [rows, cols] matrix with WholeReduceSum.
// DataCopyPad brings every row into UB padded to a 32-byte boundary (the padding is not
// written: isPad = false), one WholeReduceSum call sums each row over a contiguous mask of
// `cols` lanes (one repeat per row, srcRepStride = the padded row length in DataBlocks), and
// DataCopyPad writes the `rows` results back. Written here from the Ascend C API documentation
// (DataCopyPad, WholeReduceSum pages), in the style of the public samples.
#include "kernel_operator.h"

namespace {

struct WholeReduceTiling {
  int32_t dt;    // 0 half, 1 float
  int32_t rows;
  int32_t cols;  // at most 256 B / sizeof(T): one repeat per row
  int32_t pad;
};

template <typename T>
class KernelWholeReduceSum {
 public:
  __aicore__ inline KernelWholeReduceSum() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const WholeReduceTiling& tiling) {
    rows = tiling.rows;
    cols = tiling.cols;
    rowBlocks = (cols * sizeof(T) + 31) / 32;
    xGm.SetGlobalBuffer((__gm__ T*)x, rows * cols);
    yGm.SetGlobalBuffer((__gm__ T*)y, rows);
    pipe.InitBuffer(inQueueX, 1, rows * rowBlocks * 32);
    pipe.InitBuffer(outQueueY, 1, (rows * sizeof(T) + 31) / 32 * 32);
  }
  __aicore__ inline void Process() {
    CopyIn();
    Compute();
    CopyOut();
  }

 private:
  __aicore__ inline void CopyIn() {
    AscendC::LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
    AscendC::DataCopyExtParams copyParams{static_cast<uint16_t>(rows),
                                          static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
    AscendC::DataCopyPadExtParams<T> padParams{false, 0, 0, 0};
    AscendC::DataCopyPad(xLocal, xGm, copyParams, padParams);
    inQueueX.EnQue(xLocal);
  }
  __aicore__ inline void Compute() {
    AscendC::LocalTensor<T> xLocal = inQueueX.DeQue<T>();
    AscendC::LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
    AscendC::WholeReduceSum<T>(yLocal, xLocal, cols, rows, 1, 1, rowBlocks);
    outQueueY.EnQue<T>(yLocal);
    inQueueX.FreeTensor(xLocal);
  }
  __aicore__ inline void CopyOut() {
    AscendC::LocalTensor<T> yLocal = outQueueY.DeQue<T>();
    AscendC::DataCopyExtParams copyParams{1, static_cast<uint32_t>(rows * sizeof(T)), 0, 0, 0};
    AscendC::DataCopyPad(yGm, yLocal, copyParams);
    outQueueY.FreeTensor(yLocal);
  }

  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueueX;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueueY;
  AscendC::GlobalTensor<T> xGm, yGm;
  int32_t rows = 0, cols = 0, rowBlocks = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void whole_reduce_sum_custom(GM_ADDR x, GM_ADDR y,
                                                              GM_ADDR workspace, GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  const auto& t = *reinterpret_cast<const WholeReduceTiling*>(tiling);
  if (t.dt == 0) {
    KernelWholeReduceSum<half> op;
    op.Init(x, y, t);
    op.Process();
  } else {
    KernelWholeReduceSum<float> op;
    op.Init(x, y, t);
    op.Process();
  }
}
