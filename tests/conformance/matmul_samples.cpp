// Conformance samples: the high-level Matmul API as the public Matmul samples use it (written
// here from the Ascend C API documentation, docs/CPU_RUNTIME.md "Matmul"): a MIX 1:2 kernel
// with C in GM whose vector blocks split M (IterateAll, or Iterate + GetTensorC in both write
// modes), a Matmul + LeakyRelu epilogue with C through a VECIN queue, the bias, and the
// refused forms. The TCubeTiling travels in the tiling struct and is copied field by field,
// as kernel-launch samples do.
#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"
#include "lib/matmul_intf.h"

namespace mm_samples {

struct Tiling {
  int32_t mode;      // gm kernel: 0 IterateAll, 1 GetTensorC(gm) at place, 2 sequential
  int32_t bias;      // SetBias when 1
  float alpha;       // LeakyRelu slope
  int32_t refuse;    // refusal case (refuse kernel)
  int32_t seq;       // gm kernel, sequential mode: C elements of each vector block
  int32_t cube[33];  // AscendC::tiling::TCubeTiling, field by field
};

inline void CopyTiling(AscendC::tiling::TCubeTiling* dst, const Tiling& t) {
  static_assert(sizeof(AscendC::tiling::TCubeTiling) == sizeof(t.cube), "TCubeTiling layout");
  std::memcpy(dst, t.cube, sizeof(t.cube));
}

using AType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using BType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using BiasType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;

// C in GM; vector block i of GetBlockNum() * GetTaskRation() takes rows [i * rowsPer, ...).
class MatmulGmKernel {
 public:
  __aicore__ inline bool Init(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace,
                              const Tiling& t) {
    CopyTiling(&tiling, t);
    mode_ = t.mode;
    bias_ = t.bias;
    SetSysWorkspace(workspace);
    if (GetSysWorkSpacePtr() == nullptr) return false;
    const int32_t blocks = static_cast<int32_t>(GetBlockNum() * GetTaskRation());
    const int32_t per = (tiling.M + blocks - 1) / blocks;
    const int32_t first = static_cast<int32_t>(GetBlockIdx()) * per;
    rows_ = std::min(per, tiling.M - first);
    if (rows_ <= 0) return false;
    aGlobal.SetGlobalBuffer((__gm__ half*)a + first * tiling.Ka,
                            static_cast<uint64_t>(rows_) * tiling.Ka);
    bGlobal.SetGlobalBuffer((__gm__ half*)b, static_cast<uint64_t>(tiling.Kb) * tiling.N);
    biasGlobal.SetGlobalBuffer((__gm__ float*)bias, tiling.N);
    const uint64_t cSize = mode_ == 2 ? static_cast<uint64_t>(blocks) * t.seq
                                      : static_cast<uint64_t>(rows_) * tiling.N;
    cGlobal.SetGlobalBuffer((__gm__ float*)c + (mode_ == 2 ? 0 : first * tiling.N), cSize);
    seqBase_ = static_cast<uint64_t>(GetBlockIdx()) * t.seq;
    return true;
  }
  __aicore__ inline void Process() {
    matmulObj.SetTensorA(aGlobal);
    matmulObj.SetTensorB(bGlobal);
    if (bias_) matmulObj.SetBias(biasGlobal);
    matmulObj.SetTail(rows_, tiling.N, tiling.Ka);
    if (mode_ == 0) {
      matmulObj.IterateAll(cGlobal);
    } else if (mode_ == 1) {
      while (matmulObj.Iterate()) matmulObj.GetTensorC(cGlobal);
    } else {
      while (matmulObj.template Iterate<true>())
        matmulObj.template GetTensorC<true>(cGlobal[seqBase_], 0, true);
    }
    matmulObj.End();
  }

  matmul::Matmul<AType, BType, matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>,
                 BiasType>
      matmulObj;
  AscendC::tiling::TCubeTiling tiling;

 private:
  AscendC::GlobalTensor<half> aGlobal, bGlobal;
  AscendC::GlobalTensor<float> biasGlobal, cGlobal;
  int32_t mode_ = 0, bias_ = 0, rows_ = 0;
  uint64_t seqBase_ = 0;
};

// C to UB (VECIN queue), LeakyRelu on each [baseM, baseN] block, then out to its place in C.
class MatmulLeakyKernel {
 public:
  __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace,
                              const Tiling& t) {
    CopyTiling(&tiling, t);
    alpha_ = t.alpha;
    bias_ = t.bias;
    SetSysWorkspace(workspace);
    aGlobal.SetGlobalBuffer((__gm__ half*)a, static_cast<uint64_t>(tiling.M) * tiling.Ka);
    bGlobal.SetGlobalBuffer((__gm__ half*)b, static_cast<uint64_t>(tiling.Kb) * tiling.N);
    biasGlobal.SetGlobalBuffer((__gm__ float*)bias, tiling.N);
    cGlobal.SetGlobalBuffer((__gm__ float*)c, static_cast<uint64_t>(tiling.M) * tiling.N);
  }
  __aicore__ inline void Process(AscendC::TPipe* pipe) {
    pipe->InitBuffer(reluOutQueue_, 1, tiling.baseM * tiling.baseN * sizeof(float));
    matmulObj.SetTensorA(aGlobal);
    matmulObj.SetTensorB(bGlobal);
    if (bias_) matmulObj.SetBias(biasGlobal);
    const int32_t mBlocks = (tiling.singleCoreM + tiling.baseM - 1) / tiling.baseM;
    int32_t round = 0;
    while (matmulObj.template Iterate<true>()) {
      AscendC::LocalTensor<float> out = reluOutQueue_.AllocTensor<float>();
      matmulObj.template GetTensorC<true>(out, false, true);
      AscendC::LeakyRelu(out, out, alpha_, tiling.baseM * tiling.baseN);
      // A VECIN queue's EnQue/DeQue order MTE2 before V; the copy out (MTE3) of what the
      // vector unit wrote needs V_MTE3 (pyasc_cpu/race.h).
      AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
      AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
      reluOutQueue_.EnQue(out);
      CopyOut(reluOutQueue_.DeQue<float>(), round % mBlocks, round / mBlocks);
      ++round;
    }
    matmulObj.End();
  }

  matmul::Matmul<AType, BType,
                 matmul::MatmulType<AscendC::TPosition::VECIN, CubeFormat::ND, float>, BiasType>
      matmulObj;
  AscendC::tiling::TCubeTiling tiling;

 private:
  __aicore__ inline void CopyOut(const AscendC::LocalTensor<float>& out, int32_t mi, int32_t ni) {
    const int32_t r0 = mi * tiling.baseM, c0 = ni * tiling.baseN;
    const int32_t rows = std::min(tiling.baseM, tiling.M - r0);
    const int32_t cols = std::min(tiling.baseN, tiling.N - c0);
    const uint32_t len = cols * sizeof(float);
    const uint32_t ubGap = (tiling.baseN * sizeof(float) - (len + 31) / 32 * 32) / 32;
    AscendC::DataCopyExtParams p{static_cast<uint16_t>(rows), len, ubGap,
                                 static_cast<uint32_t>((tiling.N - cols) * sizeof(float)), 0};
    AscendC::DataCopyPad(cGlobal[r0 * tiling.N + c0], out, p);
    // The next round's LeakyRelu (V) overwrites what MTE3 copies out here.
    AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID0);
    reluOutQueue_.FreeTensor(out);
  }
  AscendC::TQue<AscendC::TPosition::VECIN, 1> reluOutQueue_;
  AscendC::GlobalTensor<half> aGlobal, bGlobal;
  AscendC::GlobalTensor<float> biasGlobal, cGlobal;
  float alpha_ = 0;
  int32_t bias_ = 0;
};

}  // namespace mm_samples

extern "C" __global__ __aicore__ void matmul_gm_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias,
                                                       GM_ADDR c, GM_ADDR info,
                                                       GM_ADDR workspace, GM_ADDR tilingGm) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  const auto& t = *reinterpret_cast<const mm_samples::Tiling*>(tilingGm);
  auto* out = reinterpret_cast<int32_t*>(info) + 4 * GetBlockIdx();
  out[0] = static_cast<int32_t>(GetBlockIdx());
  out[1] = static_cast<int32_t>(GetSubBlockIdx());
  out[2] = static_cast<int32_t>(GetBlockNum());
  out[3] = static_cast<int32_t>(GetTaskRation());
  AscendC::TPipe pipe;
  mm_samples::MatmulGmKernel op;
  SetSysWorkspace(workspace);  // kernel-launch mode without HAVE_WORKSPACE: set it first
  mm_samples::CopyTiling(&op.tiling, t);
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), op.matmulObj, &op.tiling);
  if (op.Init(a, b, bias, c, workspace, t)) op.Process();
}

extern "C" __global__ __aicore__ void matmul_leaky_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias,
                                                          GM_ADDR c, GM_ADDR workspace,
                                                          GM_ADDR tilingGm) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_1);
  const auto& t = *reinterpret_cast<const mm_samples::Tiling*>(tilingGm);
  AscendC::TPipe pipe;
  mm_samples::MatmulLeakyKernel op;
  SetSysWorkspace(workspace);
  CopyTiling(&op.tiling, t);
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), op.matmulObj, &op.tiling);
  op.Init(a, b, bias, c, workspace, t);
  op.Process(&pipe);
}

// Refused forms, one per t.refuse (docs/CPU_RUNTIME.md, "Matmul" / "MIX kernels").
extern "C" __global__ __aicore__ void matmul_refuse_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias,
                                                           GM_ADDR c, GM_ADDR workspace,
                                                           GM_ADDR tilingGm) {
  const auto& t = *reinterpret_cast<const mm_samples::Tiling*>(tilingGm);
  using namespace AscendC;
  if (t.refuse == 5) KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  if (t.refuse == 6) {  // a 1:2 split that assumes GetBlockIdx() < GetBlockNum()
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)c, GetBlockNum());
    g.SetValue(GetBlockIdx(), 1.0f);
    return;
  }
  TPipe pipe;
  mm_samples::MatmulLeakyKernel op;  // C in VECIN
  if (t.refuse != 1) SetSysWorkspace(workspace);
  mm_samples::CopyTiling(&op.tiling, t);
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), op.matmulObj, &op.tiling);
  GlobalTensor<half> ga, gb;
  ga.SetGlobalBuffer((__gm__ half*)a, static_cast<uint64_t>(op.tiling.M) * op.tiling.Ka);
  gb.SetGlobalBuffer((__gm__ half*)b, static_cast<uint64_t>(op.tiling.Kb) * op.tiling.N);
  GlobalTensor<float> gbias;
  gbias.SetGlobalBuffer((__gm__ float*)bias, op.tiling.N);
  TBuf<TPosition::VECCALC> calc;
  TBuf<TPosition::VECIN> in;
  pipe.InitBuffer(calc, op.tiling.baseM * op.tiling.baseN * sizeof(float));
  pipe.InitBuffer(in, op.tiling.M * op.tiling.N * sizeof(float));
  op.matmulObj.SetTensorA(ga);
  op.matmulObj.SetTensorB(gb);
  switch (t.refuse) {
    case 3:  // GetTensorC into a VECCALC buffer
      op.matmulObj.Iterate();
      op.matmulObj.GetTensorC(calc.Get<float>(), 0, true);
      break;
    case 4:  // GM straight into a VECCALC buffer
      DataCopy(calc.Get<half>(), ga, 16);
      break;
    case 7: op.matmulObj.SetBias(gbias); break;  // the tiling has isBias = 0
    case 8: op.matmulObj.Iterate<false>(); break;
    case 9:  // GetTensorC at place into UB: singleN floats not whole 32-byte blocks
      op.matmulObj.Iterate();
      op.matmulObj.GetTensorC(in.Get<float>(), 0, false);
      break;
    case 10:  // at place into UB with aligned rows: accepted (the contrast of case 9)
      while (op.matmulObj.Iterate()) op.matmulObj.GetTensorC(in.Get<float>(), 0, false);
      {
        GlobalTensor<float> gc;
        gc.SetGlobalBuffer((__gm__ float*)c, op.tiling.M * op.tiling.N);
        DataCopy(gc, in.Get<float>(), op.tiling.M * op.tiling.N);
      }
      break;
    default: break;
  }
  op.matmulObj.End();
}
