// RUN: pyasc-opt %s -p asc-lower-layout | filecheck %s

// A 2-D transpose moves the last dim: output row r (7 elements) gathers input column r, whose
// elements are 33 apart. One unit per output row, 33 units on 33 cores. The gather copies 7
// one-element blocks with GM gap 32 into 16-element UB slots (every UB block starts on a
// 32-byte DataBlock), then writes 7 one-element blocks to consecutive GM elements.

// CHECK-LABEL: func.func @t(
// CHECK-NEXT:    %[[R:.*]] = asc.launch @t_kernel<33 : i64> (%x) : (tensor<7x33xf16>) -> tensor<33x7xf16>
// CHECK-NEXT:    func.return %[[R]] : tensor<33x7xf16>

// CHECK-LABEL: func.func @t_kernel(
// CHECK-SAME:      memref<231xf16, #asc.scope<gm>>, %[[OUT:[0-9]+]]: memref<231xf16, #asc.scope<gm>>)
// CHECK-SAME:      attributes {asc.kernel, asc.tiling = {units = 33 : i64, block_dim = 33 : i64, units_per_core = 1 : i64, units_rem = 0 : i64
// CHECK:         scf.for
// CHECK:           %[[IN:[0-9]+]] = asc.alloc "in" {buffers = 1 : i64} : memref<128xf16, #asc.scope<ub>>
// CHECK-NEXT:      %[[OB:[0-9]+]] = asc.alloc "out" {buffers = 1 : i64} : memref<128xf16, #asc.scope<ub>>
// CHECK-NEXT:      %[[GAP:[0-9]+]] = arith.constant 32 : index
// CHECK-NEXT:      %[[SLOT:[0-9]+]] = arith.constant 16 : index
// CHECK-NEXT:      asc.copy_in %0[%{{[0-9]+}}] -> %[[IN]][%{{[0-9]+}}] blocks %[[N:[0-9]+]] x %{{[0-9]+}} gap %[[GAP]] stride %[[SLOT]]
// CHECK:           asc.vcopy %[[OB]], %[[IN]], %{{[0-9]+}}
// CHECK-NEXT:      asc.copy_out %[[OB]][%{{[0-9]+}}] -> %[[OUT]][%{{[0-9]+}}] blocks %[[N]] x %{{[0-9]+}} gap %{{[0-9]+}} stride %[[SLOT]]
// CHECK-NOT:     asc.transpose

func.func @t(%x: tensor<7x33xf16>) -> tensor<33x7xf16> {
  %f = asc.fusion(%x) : (tensor<7x33xf16>) -> tensor<33x7xf16> {
  ^bb0(%a: tensor<7x33xf16>):
    %t = asc.transpose %a {perm = array<i64: 1, 0>} : tensor<7x33xf16> -> tensor<33x7xf16>
    asc.yield %t : tensor<33x7xf16>
  }
  func.return %f : tensor<33x7xf16>
}
