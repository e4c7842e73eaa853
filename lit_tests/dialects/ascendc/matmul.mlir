// RUN: pyasc-opt %s -p asc-double-buffer,asc-buffer-alloc,convert-asc-to-ascendc | pyasc-opt | filecheck %s
// RUN: pyasc-opt %s -p asc-double-buffer,asc-buffer-alloc,convert-asc-to-ascendc --print-op-generic | pyasc-opt | filecheck %s

// The Matmul ops print and parse back.

func.func @mm(%a: tensor<20x30xf32>, %b: tensor<40x30xf32>) -> tensor<20x40xf32> {
  %0 = asc.launch @mm_kernel<2 : i64> (%a, %b) : (tensor<20x30xf32>, tensor<40x30xf32>) -> tensor<20x40xf32>
  func.return %0 : tensor<20x40xf32>
}
func.func @mm_kernel(%ga: memref<600xf32, #asc.scope<gm>>, %gb: memref<1200xf32, #asc.scope<gm>>, %gc: memref<800xf32, #asc.scope<gm>>) attributes {asc.kernel,
    asc.loc = "mm.py:3:5", asc.platform = "910B2",
    asc.tiling = {units = 2 : i64, block_dim = 2 : i64}} {
  %bid = asc.block_idx
  %units = asc.tiling_field "units"
  %nb = asc.tiling_field "block_dim"
  %TM = arith.constant 16 : index
  %TN = arith.constant 48 : index
  %NT = arith.constant 1 : index
  %M = arith.constant 20 : index
  %N = arith.constant 40 : index
  %K = arith.constant 30 : index
  %lda = arith.constant 30 : index
  %ldb = arith.constant 30 : index
  %ls = arith.constant 48 : index
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
      %d = asc.alloc "out" {buffers = 1 : i64} : memref<768xf32, #asc.scope<ub>>
      asc.mmad %d, %ga[%r0K], %gb[%c0K] m %mrows n %ncols k %K lda %lda ldb %ldb ls %ls
          {max_m = 16 : i64, max_n = 48 : i64, max_k = 30 : i64, transpose_a = false, transpose_b = true} : memref<768xf32, #asc.scope<ub>>, memref<600xf32, #asc.scope<gm>>, memref<1200xf32, #asc.scope<gm>>
      %r0N = arith.muli %r0, %N : index
      %coff = arith.addi %r0N, %c0 : index
      %gap = arith.subi %N, %ncols : index
      asc.copy_out %d[%z] -> %gc[%coff] blocks %mrows x %ncols
          gap %gap stride %ls : memref<768xf32, #asc.scope<ub>>, memref<800xf32, #asc.scope<gm>>
  }
  func.return
}

// CHECK: %[[MM:.*]] = ascendc.matmul_object {{.*}}transpose_a = false, transpose_b = true} : !ascendc.matmul<f32>
// CHECK-NEXT: %[[T:.*]] = ascendc.cube_tiling "mm0"
// CHECK-NEXT: ascendc.kernel_type "MIX_AIC_1_1"
// CHECK-NEXT: ascendc.set_sys_workspace
// CHECK-NEXT: ascendc.regist_matmul %[[MM]], %[[T]] {{.*}}: !ascendc.matmul<f32>, !ascendc.cube_tiling
// CHECK-NEXT: ascendc.init_queue "VECIN"
// CHECK: ascendc.alloc_tensor
// CHECK: ascendc.matmul_set_tensor_a %[[MM]], %{{.*}} {{.*}}transpose = false} {{.*}}: !ascendc.matmul<f32>, !ascendc.global_tensor<f32>
// CHECK-NEXT: ascendc.subview
// CHECK-NEXT: ascendc.matmul_set_tensor_b %[[MM]], %{{.*}} {{.*}}transpose = true} {{.*}}: !ascendc.matmul<f32>, !ascendc.global_tensor<f32>
// CHECK-NEXT: ascendc.matmul_set_tail %[[MM]], %{{.*}}, %{{.*}}, %{{.*}} {{.*}}: !ascendc.matmul<f32>
// CHECK-NEXT: ascendc.matmul_iterate %[[MM]] {{.*}}: !ascendc.matmul<f32>
// CHECK-NEXT: ascendc.matmul_get_tensor_c %[[MM]], %{{.*}} {{.*}}: !ascendc.matmul<f32>, !ascendc.local_tensor<f32>
// CHECK: ascendc.enque
// CHECK: ascendc.matmul_end %[[MM]] {{.*}}: !ascendc.matmul<f32>
