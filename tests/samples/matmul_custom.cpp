// Sample family "Matmul high-level API, C in GM" (written here from the public Ascend C
// documentation: MatmulType, Matmul, REGIST_MATMUL_OBJ, SetTensorA/B, SetBias, SetTail,
// IterateAll, End, TCubeTiling, SetSysWorkspace / GetSysWorkSpacePtr, KERNEL_TASK_TYPE_DEFAULT,
// GetTaskRation): c = a @ b (+ bias), a [M, K] half, b [K, N] half, bias [N] float, c [M, N]
// float. A MIX 1:2 kernel: its 2 * blockDim vector blocks take singleCoreM rows each.
#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"
#include "lib/matmul_intf.h"

using AType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using BType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using CType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;
using BiasType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;

__aicore__ inline void CopyTiling(TCubeTiling* tiling, GM_ADDR tilingGm) {
  uint32_t* dst = reinterpret_cast<uint32_t*>(tiling);
  const __gm__ uint32_t* src = reinterpret_cast<const __gm__ uint32_t*>(tilingGm);
  for (size_t i = 0; i < sizeof(TCubeTiling) / sizeof(uint32_t); i++) dst[i] = src[i];
}

class MatmulKernel {
 public:
  __aicore__ inline bool Init(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c) {
    const int32_t first = static_cast<int32_t>(GetBlockIdx()) * tiling.singleCoreM;
    rows_ = std::min(tiling.singleCoreM, tiling.M - first);
    if (rows_ <= 0) return false;  // more vector blocks than row slices
    aGlobal_.SetGlobalBuffer((__gm__ half*)a + first * tiling.Ka,
                             static_cast<uint64_t>(rows_) * tiling.Ka);
    bGlobal_.SetGlobalBuffer((__gm__ half*)b, static_cast<uint64_t>(tiling.Kb) * tiling.N);
    biasGlobal_.SetGlobalBuffer((__gm__ float*)bias, tiling.N);
    cGlobal_.SetGlobalBuffer((__gm__ float*)c + first * tiling.N,
                             static_cast<uint64_t>(rows_) * tiling.N);
    return true;
  }
  __aicore__ inline void Process() {
    matmulObj.SetTensorA(aGlobal_);
    matmulObj.SetTensorB(bGlobal_);
    if (tiling.isBias) matmulObj.SetBias(biasGlobal_);
    matmulObj.SetTail(rows_, tiling.N, tiling.Ka);
    matmulObj.IterateAll(cGlobal_);
    matmulObj.End();
  }

  matmul::Matmul<AType, BType, CType, BiasType> matmulObj;
  TCubeTiling tiling;

 private:
  AscendC::GlobalTensor<half> aGlobal_, bGlobal_;
  AscendC::GlobalTensor<float> biasGlobal_, cGlobal_;
  int32_t rows_ = 0;
};

extern "C" __global__ __aicore__ void matmul_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias,
                                                    GM_ADDR c, GM_ADDR workspace,
                                                    GM_ADDR tilingGm) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  SetSysWorkspace(workspace);
  if (GetSysWorkSpacePtr() == nullptr) return;
  AscendC::TPipe pipe;
  MatmulKernel op;
  CopyTiling(&op.tiling, tilingGm);
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), op.matmulObj, &op.tiling);
  if (op.Init(a, b, bias, c)) op.Process();
}
