// RUN: pyasc-opt %s -p asc-to-ascendc -t ascendc | filecheck %s

func.func @ln(%x: tensor<4x40xf32>, %w: tensor<40xf32>) -> tensor<4x40xf32> {
  %s = asc.reduce "mean" %x {axes = array<i64: 1>, keepdim = true} : tensor<4x40xf32> -> tensor<4x1xf32>
  %sb = asc.broadcast %s : tensor<4x1xf32> -> tensor<4x40xf32>
  %d = asc.binary "sub" %x, %sb : tensor<4x40xf32>
  %wb = asc.broadcast %w : tensor<40xf32> -> tensor<4x40xf32>
  %y = asc.binary "mul" %d, %wb : tensor<4x40xf32>
  func.return %y : tensor<4x40xf32>
}

// CHECK: #include "kernel_operator.h"
// CHECK: struct LnKernelTilingData {
// CHECK-NEXT:     int64_t units;
// CHECK-NEXT:     int64_t block_dim;
// CHECK: extern "C" __global__ __aicore__ void ln_kernel(GM_ADDR arg0, GM_ADDR arg1, GM_ADDR arg2, GM_ADDR workspace, GM_ADDR tilingGm)
// CHECK: TPipe pipe;
// CHECK: gm{{[0-9]+}}.SetGlobalBuffer((__gm__ float*)arg0, 160LL);
// CHECK: TQue<TPosition::VECIN, 1> [[INQ:que[0-9]+]];
// CHECK-NEXT: pipe.InitBuffer([[INQ]], 2, 512);
// CHECK: TQue<TPosition::VECOUT, 1> [[OUTQ:que[0-9]+]];
// CHECK-NEXT: pipe.InitBuffer([[OUTQ]], 2, 512);
// CHECK: TBuf<TPosition::VECIN>{{.*}}
// CHECK: GetBlockIdx()
// CHECK: tiling.units_per_core
// CHECK: DataCopyPad({{.*}}DataCopyPadExtParams<float>{false, 0, 0, 0});
// CHECK: for (int64_t
// CHECK: [[INQ]].AllocTensor<float>()
// CHECK: DataCopyPad(
// CHECK: [[INQ]].EnQue(
// CHECK: [[INQ]].DeQue<float>()
// CHECK: ReduceSum(
// CHECK: Muls(
// CHECK: GetValue(
// CHECK: Duplicate(
// CHECK: Sub(
// CHECK: Mul(
// CHECK: [[OUTQ]].EnQue(
// CHECK: DataCopyPad(t{{[0-9]+}}, t{{[0-9]+}}, DataCopyExtParams
// CHECK: [[OUTQ]].FreeTensor(
// CHECK: [[INQ]].FreeTensor(
