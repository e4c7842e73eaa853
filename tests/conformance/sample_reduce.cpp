// Sample-style kernel: ReduceSum, ReduceMax and ReduceMin (count form, "tensor前n个数据计算")
// of `count` unaligned elements, the max / min with their index (calIndex = true). The
// sharedTmpBuffer is sized with the documented formula of ReduceMax with index (the largest of
// the three). Outputs: sum at y[0], [max, index] at y[E], [min, index] at y[2E] (E elements
// per 32-byte DataBlock). Written here from the Ascend C API documentation (ReduceSum /
// ReduceMax / ReduceMin pages), in the style of the public samples.
#include "kernel_operator.h"

namespace {

struct ReduceTiling {
  int32_t dt;  // 0 half, 1 float
  int32_t count;
  int32_t pad0;
  int32_t pad1;
};

__aicore__ inline int32_t RoundUp(int32_t a, int32_t b) { return (a + b - 1) / b; }

template <typename T>
class KernelReduce {
 public:
  __aicore__ inline KernelReduce() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ReduceTiling& tiling) {
    count = tiling.count;
    xGm.SetGlobalBuffer((__gm__ T*)x, count);
    yGm.SetGlobalBuffer((__gm__ T*)y, 3 * kPerBlock);
    pipe.InitBuffer(inQueueX, 1, RoundUp(count * sizeof(T), 32) * 32);
    pipe.InitBuffer(outQueueY, 1, 3 * 32);
    pipe.InitBuffer(workBuf, WorkSize() * sizeof(T));
  }
  __aicore__ inline void Process() {
    AscendC::LocalTensor<T> xLocal = inQueueX.AllocTensor<T>();
    AscendC::DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};
    AscendC::DataCopyPad(xLocal, xGm, copyParams, AscendC::DataCopyPadExtParams<T>{false, 0, 0, 0});
    inQueueX.EnQue(xLocal);
    xLocal = inQueueX.DeQue<T>();
    AscendC::LocalTensor<T> yLocal = outQueueY.AllocTensor<T>();
    AscendC::LocalTensor<T> work = workBuf.Get<T>();
    AscendC::Duplicate(yLocal, static_cast<T>(0), 3 * kPerBlock);
    AscendC::ReduceSum<T>(yLocal, xLocal, work, count);
    AscendC::ReduceMax<T>(yLocal[kPerBlock], xLocal, work, count, true);
    AscendC::ReduceMin<T>(yLocal[2 * kPerBlock], xLocal, work, count, true);
    outQueueY.EnQue<T>(yLocal);
    inQueueX.FreeTensor(xLocal);
    yLocal = outQueueY.DeQue<T>();
    AscendC::DataCopy(yGm, yLocal, 3 * kPerBlock);
    outQueueY.FreeTensor(yLocal);
  }

 private:
  // The documented sharedTmpBuffer minimum of ReduceMax with calIndex, in elements.
  __aicore__ inline int32_t WorkSize() const {
    const int32_t perRepeat = 256 / sizeof(T);
    int32_t firstMaxRepeat = count / perRepeat;
    if (firstMaxRepeat < 1) firstMaxRepeat = 1;
    const int32_t iter1OutputCount = firstMaxRepeat * 2;
    const int32_t iter2AlignStart = RoundUp(iter1OutputCount, kPerBlock) * kPerBlock;
    const int32_t iter2OutputCount = RoundUp(iter1OutputCount, perRepeat) * 2;
    const int32_t iter3AlignStart = RoundUp(iter2OutputCount, kPerBlock) * kPerBlock;
    const int32_t iter3OutputCount = RoundUp(iter2OutputCount, perRepeat) * 2;
    const int32_t iter3AlignEnd = RoundUp(iter3OutputCount, kPerBlock) * kPerBlock;
    return iter2AlignStart + iter3AlignStart + iter3AlignEnd;
  }

  static constexpr int32_t kPerBlock = 32 / sizeof(T);
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueueX;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueueY;
  AscendC::TBuf<AscendC::TPosition::VECCALC> workBuf;
  AscendC::GlobalTensor<T> xGm, yGm;
  int32_t count = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void reduce_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace,
                                                    GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  const auto& t = *reinterpret_cast<const ReduceTiling*>(tiling);
  if (t.dt == 0) {
    KernelReduce<half> op;
    op.Init(x, y, t);
    op.Process();
  } else {
    KernelReduce<float> op;
    op.Init(x, y, t);
    op.Process();
  }
}
