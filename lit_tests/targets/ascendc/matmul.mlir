// RUN: pyasc-opt %s -p asc-double-buffer,asc-buffer-alloc,convert-asc-to-ascendc -t ascendc | filecheck %s

// One asc.mmad becomes one registered Matmul object (high-level Ascend C Matmul API).

func.func @mm(%a: tensor<33x40xf16>, %b: tensor<33x70xf16>) -> tensor<40x70xf32> {
  %0 = asc.launch @mm_kernel<2 : i64> (%a, %b) : (tensor<33x40xf16>, tensor<33x70xf16>) -> tensor<40x70xf32>
  func.return %0 : tensor<40x70xf32>
}
func.func @mm_kernel(%ga: memref<1320xf16, #asc.scope<gm>>, %gb: memref<2310xf16, #asc.scope<gm>>, %gc: memref<2800xf32, #asc.scope<gm>>) attributes {asc.kernel,
    asc.loc = "mm.py:3:5", asc.platform = "910B2",
    asc.tiling = {units = 9 : i64, block_dim = 2 : i64}} {
  %bid = asc.block_idx
  %units = asc.tiling_field "units"
  %nb = asc.tiling_field "block_dim"
  %TM = arith.constant 16 : index
  %TN = arith.constant 32 : index
  %NT = arith.constant 3 : index
  %M = arith.constant 40 : index
  %N = arith.constant 70 : index
  %K = arith.constant 33 : index
  %lda = arith.constant 40 : index
  %ldb = arith.constant 70 : index
  %ls = arith.constant 32 : index
  %z = arith.constant 0 : index
  scf.for %u = %bid to %units step %nb {
      %mi = arith.divsi %u, %NT : index
      %ni = arith.remsi %u, %NT : index
      %r0 = arith.muli %mi, %TM : index
      %c0 = arith.muli %ni, %TN : index
      %r0K = arith.muli %r0, %lda : index
      %c0K = arith.muli %c0, %ldb : index
      %mleft = arith.subi %M, %r0 : index
      %nleft = arith.subi %N, %c0 : index
      %mlt = arith.cmpi slt, %mleft, %TM : index
      %mrows = arith.select %mlt, %mleft, %TM : index
      %nlt = arith.cmpi slt, %nleft, %TN : index
      %ncols = arith.select %nlt, %nleft, %TN : index
      %d = asc.alloc "tmp" {buffers = 1 : i64} : memref<512xf32, #asc.scope<ub>>
      asc.mmad %d, %ga[%r0], %gb[%c0] m %mrows n %ncols k %K lda %lda ldb %ldb ls %ls
          {max_m = 16 : i64, max_n = 32 : i64, max_k = 33 : i64, transpose_a = true, transpose_b = false} : memref<512xf32, #asc.scope<ub>>, memref<1320xf16, #asc.scope<gm>>, memref<2310xf16, #asc.scope<gm>>
      %cnt = arith.muli %mrows, %ls : index
      asc.vscalar "muls" %d, %d, 2.0, %cnt : memref<512xf32, #asc.scope<ub>>, memref<512xf32, #asc.scope<ub>>
      %r0N = arith.muli %r0, %N : index
      %coff = arith.addi %r0N, %c0 : index
      %gap = arith.subi %N, %ncols : index
      asc.copy_out %d[%z] -> %gc[%coff] blocks %mrows x %ncols
          gap %gap stride %ls : memref<512xf32, #asc.scope<ub>>, memref<2800xf32, #asc.scope<gm>>
  }
  func.return
}

// CHECK: #include "kernel_operator.h"
// CHECK-NEXT: #include "lib/matmul_intf.h"
// CHECK: int64_t mm0_baseM;
// CHECK: extern "C" __global__ __aicore__ void mm_kernel(
// CHECK: Matmul<MatmulType<TPosition::GM, CubeFormat::ND, half, true>, MatmulType<TPosition::GM, CubeFormat::ND, half, false>,
// CHECK-NEXT: MatmulType<TPosition::VECIN, CubeFormat::ND, float>, MatmulType<TPosition::GM, CubeFormat::ND, float>> [[MM:mm[0-9]+]];
// CHECK-NEXT: TCubeTiling [[T:mm0Tiling[0-9]+]] = {};
// CHECK-NEXT: [[T]].usedCoreNum = static_cast<int32_t>(tiling.mm0_usedCoreNum);
// CHECK: [[T]].baseM = static_cast<int32_t>(tiling.mm0_baseM);
// CHECK: [[T]].dbL0C = static_cast<int32_t>(tiling.mm0_dbL0C);
// CHECK-NEXT: KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_1);
// CHECK-NEXT: SetSysWorkspace(workspace);
// CHECK-NEXT: REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), [[MM]], &[[T]]);
// CHECK-NEXT: TBuf<TPosition::VECIN>
// CHECK: for (int64_t
// CHECK: [[MM]].SetTensorA(t{{[0-9]+}}, true);
// CHECK: [[MM]].SetTensorB(t{{[0-9]+}}, false);
// CHECK-NEXT: [[MM]].SetTail((int)v{{[0-9]+}}, (int)v{{[0-9]+}}, (int)v{{[0-9]+}});
// CHECK-NEXT: [[MM]].Iterate();
// CHECK-NEXT: [[MM]].GetTensorC(t{{[0-9]+}}, 0, true);
// CHECK-NEXT: SetFlag<HardEvent::MTE2_V>
// CHECK: Muls(
// CHECK: DataCopyPad(
// CHECK: }
// CHECK: [[MM]].End();
