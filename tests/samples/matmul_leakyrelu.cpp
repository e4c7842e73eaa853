// Sample family "Matmul + LeakyRelu" (written here from the public Ascend C documentation:
// the Matmul API with C at TPosition::VECIN, Iterate, GetTensorC with enSequentialWrite,
// LeakyRelu, DataCopyPad UB->GM): c = leakyrelu(a @ b + bias, ALPHA) with a [M, K] half,
// b [K, N] half, bias [N] float, c [M, N] float. MIX 1:1; block i computes rows
// [i * singleCoreM, ...) one [baseM, baseN] block at a time (M first) and writes each block to
// its place in C with a strided DataCopyPad (ragged right and bottom edges included).
#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"
#include "lib/matmul_intf.h"

#ifndef ALPHA
#define ALPHA 0.001f
#endif

using AType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using BType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using CType = matmul::MatmulType<AscendC::TPosition::VECIN, CubeFormat::ND, float>;
using BiasType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;

class MatmulLeakyReluKernel {
 public:
  __aicore__ inline bool Init(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c) {
    first_ = static_cast<int32_t>(GetBlockIdx()) * tiling.singleCoreM;
    rows_ = std::min(tiling.singleCoreM, tiling.M - first_);
    if (rows_ <= 0) return false;
    aGlobal_.SetGlobalBuffer((__gm__ half*)a + first_ * tiling.Ka,
                             static_cast<uint64_t>(rows_) * tiling.Ka);
    bGlobal_.SetGlobalBuffer((__gm__ half*)b, static_cast<uint64_t>(tiling.Kb) * tiling.N);
    biasGlobal_.SetGlobalBuffer((__gm__ float*)bias, tiling.N);
    cGlobal_.SetGlobalBuffer((__gm__ float*)c + first_ * tiling.N,
                             static_cast<uint64_t>(rows_) * tiling.N);
    return true;
  }
  __aicore__ inline void Process(AscendC::TPipe* pipe) {
    pipe->InitBuffer(reluOutQueue_, 1, tiling.baseM * tiling.baseN * sizeof(float));
    matmulObj.SetTensorA(aGlobal_);
    matmulObj.SetTensorB(bGlobal_);
    matmulObj.SetBias(biasGlobal_);
    matmulObj.SetTail(rows_, tiling.N, tiling.Ka);
    const int32_t mBlocks = (rows_ + tiling.baseM - 1) / tiling.baseM;
    int32_t k = 0;
    while (matmulObj.template Iterate<true>()) {
      AscendC::LocalTensor<float> out = reluOutQueue_.AllocTensor<float>();
      matmulObj.template GetTensorC<true>(out, false, true);
      AscendC::LeakyRelu(out, out, static_cast<float>(ALPHA), tiling.baseM * tiling.baseN);
      reluOutQueue_.EnQue(out);
      CopyOut(k % mBlocks, k / mBlocks);
      ++k;
    }
    matmulObj.End();
  }

  matmul::Matmul<AType, BType, CType, BiasType> matmulObj;
  TCubeTiling tiling;

 private:
  __aicore__ inline void CopyOut(int32_t mi, int32_t ni) {
    AscendC::LocalTensor<float> out = reluOutQueue_.DeQue<float>();
    const int32_t r0 = mi * tiling.baseM, c0 = ni * tiling.baseN;
    const int32_t rows = std::min(tiling.baseM, rows_ - r0);
    const int32_t cols = std::min(tiling.baseN, tiling.N - c0);
    const uint32_t len = cols * sizeof(float);
    const uint32_t ubGap = (tiling.baseN * sizeof(float) - (len + 31) / 32 * 32) / 32;
    AscendC::DataCopyExtParams p{static_cast<uint16_t>(rows), len, ubGap,
                                 static_cast<uint32_t>((tiling.N - cols) * sizeof(float)), 0};
    // C lands in VECIN (the Matmul API's position), whose queue orders only MTE2 -> V: MTE3 waits
    // for LeakyRelu, and the next tile's vector work for this copy out.
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopyPad(cGlobal_[r0 * tiling.N + c0], out, p);
    AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
    reluOutQueue_.FreeTensor(out);
  }

  AscendC::TQue<AscendC::TPosition::VECIN, 1> reluOutQueue_;
  AscendC::GlobalTensor<half> aGlobal_, bGlobal_;
  AscendC::GlobalTensor<float> biasGlobal_, cGlobal_;
  int32_t first_ = 0, rows_ = 0;
};

extern "C" __global__ __aicore__ void matmul_leakyrelu_custom(GM_ADDR a, GM_ADDR b,
                                                              GM_ADDR bias, GM_ADDR c,
                                                              GM_ADDR workspace,
                                                              GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_1);
  AscendC::TPipe pipe;
  MatmulLeakyReluKernel op;
  SetSysWorkspace(workspace);
  op.tiling = *reinterpret_cast<__gm__ TCubeTiling*>(tiling);
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), op.matmulObj, &op.tiling);
  if (op.Init(a, b, bias, c)) op.Process(&pipe);
}
