// Conformance kernels for the API forms no other kernel uses (written here from the Ascend C
// API reference: GlobalTensor::SetGlobalBuffer / GetSize, LocalTensor::GetSize /
// ReinterpretCast, TBuf::Get(count), TPipe::FetchEventID<evt>() / Reset / Destroy,
// GetTaskRatio, SetSysWorkSpace, Matmul::SetOrgShape (both forms) / SetSingleShape /
// DisableBias). Run through `pyasc cpu-run` by tests/test_conformance_api_forms.py.
#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"
#include "lib/matmul_intf.h"

// info[0..7]: GM size, TBuf::Get(count) size, whole TBuf size, task ratio, workspace seen,
// event id in range, reused UB offset after Destroy (0), after Reset (0).
extern "C" __global__ __aicore__ void api_tensor_forms(GM_ADDR x, GM_ADDR z, GM_ADDR info) {
  using namespace AscendC;
  __gm__ int32_t* out = (__gm__ int32_t*)info;
  GlobalTensor<float> xGm;
  GlobalTensor<int32_t> zGm, unsized;
  xGm.SetGlobalBuffer((__gm__ float*)x, 64);
  zGm.SetGlobalBuffer((__gm__ int32_t*)z, 64);
  unsized.SetGlobalBuffer((__gm__ int32_t*)info);  // no size: the kernel owns the bound
  out[0] = static_cast<int32_t>(xGm.GetSize());
  TPipe pipe;
  TBuf<TPosition::VECIN> buf;
  pipe.InitBuffer(buf, 64 * sizeof(float));
  LocalTensor<float> part = buf.Get<float>(16);
  out[1] = static_cast<int32_t>(part.GetSize());
  LocalTensor<float> all = buf.Get<float>();
  out[2] = static_cast<int32_t>(all.GetSize());
  out[3] = static_cast<int32_t>(GetTaskRatio());
  SetSysWorkSpace(x);
  out[4] = GetSysWorkSpacePtr() == x ? 1 : 0;
  DataCopy(all, xGm, 64);
  const TEventID id = GetTPipePtr()->FetchEventID<HardEvent::MTE2_V>();
  out[5] = id >= 0 && id < 8 ? 1 : 0;
  SetFlag<HardEvent::MTE2_V>(id);
  WaitFlag<HardEvent::MTE2_V>(id);
  LocalTensor<int32_t> bits = all.ReinterpretCast<int32_t>();
  Adds(bits, bits, 1, 64);  // the float bit patterns, plus one, as integers
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(zGm, bits, 64);
  pipe.Destroy();  // every buffer released: the next InitBuffer starts at UB offset 0 again
  TBuf<TPosition::VECCALC> again;
  pipe.InitBuffer(again, 32);
  out[6] = static_cast<int32_t>(again.Get<float>().GetPhyAddr() - all.GetPhyAddr());
  pipe.Reset();
  TBuf<TPosition::VECCALC> third;
  pipe.InitBuffer(third, 32);
  out[7] = static_cast<int32_t>(third.Get<float>().GetPhyAddr() - all.GetPhyAddr());
  unsized.SetValue(8, 1234);  // through the unsized GlobalTensor
}

using AType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using BType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using CType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;
using BiasType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;

// mode 0: SetOrgShape(M, N, K) + SetSingleShape(m, n, K): the top-left [m, n] of a @ b at its
// place in c (row stride N). mode 1: SetOrgShape(M, N, K, K), SetBias then DisableBias: the
// whole a @ b without bias. shape = {mode, m, n}.
extern "C" __global__ __aicore__ void api_matmul_forms(GM_ADDR a, GM_ADDR b, GM_ADDR bias,
                                                       GM_ADDR c, GM_ADDR workspace,
                                                       GM_ADDR tilingGm, GM_ADDR shape) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_1);
  const __gm__ int32_t* s = (const __gm__ int32_t*)shape;
  AscendC::TPipe pipe;
  TCubeTiling tiling = *(__gm__ TCubeTiling*)tilingGm;
  matmul::Matmul<AType, BType, CType, BiasType> mm;
  SetSysWorkspace(workspace);
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
  AscendC::GlobalTensor<half> aGm, bGm;
  AscendC::GlobalTensor<float> biasGm, cGm;
  aGm.SetGlobalBuffer((__gm__ half*)a, tiling.M * tiling.Ka);
  bGm.SetGlobalBuffer((__gm__ half*)b, tiling.Kb * tiling.N);
  biasGm.SetGlobalBuffer((__gm__ float*)bias, tiling.N);
  cGm.SetGlobalBuffer((__gm__ float*)c, tiling.M * tiling.N);
  mm.SetTensorA(aGm);
  mm.SetTensorB(bGm);
  if (s[0] == 0) {
    mm.SetOrgShape(tiling.M, tiling.N, tiling.Ka);
    mm.SetSingleShape(s[1], s[2], tiling.Ka);
  } else {
    mm.SetOrgShape(tiling.M, tiling.N, tiling.Ka, tiling.Kb);
    mm.SetBias(biasGm);
    mm.DisableBias();
  }
  mm.IterateAll(cGm);
  mm.End();
}
