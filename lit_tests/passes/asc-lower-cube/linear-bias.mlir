// RUN: pyasc-opt %s -p asc-lower-cube | filecheck %s

// A [513, 100] x [17, 100]^T matmul (f16 operands, f32 accumulation) with a bias epilogue.
// Output blocks: the largest candidate fitting UB is 128 x 32, halved while fewer than 24
// units (cube cores of 910B2) exist: 16 x 32 -> ceil(513/16) = 33 units over 24 cores.
// CHECK-LABEL: func.func @lin(
// CHECK-NEXT:    %{{.*}} = asc.launch @lin_kernel<24 : i64> (%x, %w, %b)

// CHECK-LABEL: func.func @lin_kernel(
// CHECK-SAME:      %[[A:[0-9]+]]: memref<51300xf16, #asc.scope<gm>>, %[[B:[0-9]+]]: memref<1700xf16, #asc.scope<gm>>, %[[BIAS:[0-9]+]]: memref<17xf32, #asc.scope<gm>>, %[[Y:[0-9]+]]: memref<8721xf32, #asc.scope<gm>>)
// CHECK-SAME:      asc.tiling = {units = 33 : i64, block_dim = 24 : i64, units_per_core = 1 : i64, units_rem = 9 : i64, tile_units = 1 : i64, batch = 1 : i64, m = 513 : i64, n = 17 : i64, k = 100 : i64, tile_m = 16 : i64, tile_n = 32 : i64}

// Unit u is row block u: m0 = 16 u, rows = min(16, 513 - m0), columns = min(32, 17).
// CHECK:         scf.for %[[U:[0-9]+]] =
// CHECK:           %[[M0:[0-9]+]] = arith.muli %[[U]], %[[C16:[0-9]+]] : index
// CHECK:           %[[ROWS:[0-9]+]] = arith.select
// CHECK:           %[[COLS:[0-9]+]] = arith.select

// The bias is one row of the block's columns; A is read from GM at row m0 (row stride 100);
// B (transposed, [N, K]) from column 0.
// CHECK:           %[[BUF:[0-9]+]] = asc.alloc "in" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
// CHECK:           asc.copy_in %[[BIAS]][%{{.*}}] -> %[[BUF]][%{{.*}}] blocks %{{.*}} x %[[COLS]]
// CHECK:           %[[C:[0-9]+]] = asc.alloc "out" {buffers = 1 : i64} : memref<512xf32, #asc.scope<ub>>
// CHECK-NEXT:      asc.mmad %[[C]], %[[A]][%{{.*}}], %[[B]][%{{.*}}] m %[[ROWS]] n %[[COLS]] k %[[K:[0-9]+]] lda %[[K]] ldb %[[K]] ls %{{.*}} {max_m = 16 : i64, max_n = 32 : i64, max_k = 100 : i64, transpose_a = false, transpose_b = true}

// The epilogue runs in place on the matmul's block, which is then copied out (row gap 17 - n).
// CHECK:           asc.vbroadcast %[[BB:[0-9]+]], %[[BUF]] rows %[[ROWS]]
// CHECK:           asc.vbinary "add" %[[C]], %[[C]], %[[BB]]
// CHECK:           asc.copy_out %[[C]][%{{.*}}] -> %[[Y]][%{{.*}}] blocks %[[ROWS]] x %[[COLS]] gap
func.func @lin(%x: tensor<513x100xf16>, %w: tensor<17x100xf16>, %b: tensor<17xf32>) -> tensor<513x17xf32> {
  %r = asc.fusion(%x, %w, %b) : (tensor<513x100xf16>, tensor<17x100xf16>, tensor<17xf32>) -> tensor<513x17xf32> {
  ^bb0(%a: tensor<513x100xf16>, %bw: tensor<17x100xf16>, %c: tensor<17xf32>):
    %m = asc.matmul %a, %bw {transpose_a = false, transpose_b = true} : (tensor<513x100xf16>, tensor<17x100xf16>) -> tensor<513x17xf32>
    %cb = asc.broadcast %c : tensor<17xf32> -> tensor<513x17xf32>
    %y = asc.binary "add" %m, %cb : tensor<513x17xf32>
    asc.yield %y : tensor<513x17xf32>
  }
  func.return %r : tensor<513x17xf32>
}
