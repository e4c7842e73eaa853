// RUN: pyasc-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// One case per verifier error of asc.transpose, asc.concat and asc.slice.

// CHECK: Operation does not verify: asc.transpose: perm [0, 0] is not a permutation of 0..1
func.func @bad_perm(%x: tensor<4x5xf32>) {
  %y = asc.transpose %x {perm = array<i64: 0, 0>} : tensor<4x5xf32> -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.transpose: result shape must be [5, 4] for perm [1, 0], got [4, 5]
func.func @bad_transpose_shape(%x: tensor<4x5xf32>) {
  %y = asc.transpose %x {perm = array<i64: 1, 0>} : tensor<4x5xf32> -> tensor<4x5xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.transpose: dtype must not change (f32 -> f16)
func.func @transpose_dtype(%x: tensor<4x5xf32>) {
  %y = asc.transpose %x {perm = array<i64: 1, 0>} : tensor<4x5xf32> -> tensor<5x4xf16>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.concat: shapes [[4, 5], [2, 6]] do not concatenate along axis 0
func.func @concat_dims(%x: tensor<4x5xf32>, %y: tensor<2x6xf32>) {
  %c = asc.concat %x, %y {axis = 0 : i64} : tensor<4x5xf32>, tensor<2x6xf32> -> tensor<6x5xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.concat: result shape must be [6, 5], got [7, 5]
func.func @concat_result(%x: tensor<4x5xf32>, %y: tensor<2x5xf32>) {
  %c = asc.concat %x, %y {axis = 0 : i64} : tensor<4x5xf32>, tensor<2x5xf32> -> tensor<7x5xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.concat: shapes [[4, 5], [2, 5]] do not concatenate along axis 2
func.func @concat_axis(%x: tensor<4x5xf32>, %y: tensor<2x5xf32>) {
  %c = asc.concat %x, %y {axis = 2 : i64} : tensor<4x5xf32>, tensor<2x5xf32> -> tensor<6x5xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.slice: box offsets [3, 0] sizes [2, 5] is not inside shape [4, 5]
func.func @slice_outside(%x: tensor<4x5xf32>) {
  %s = asc.slice %x {offsets = array<i64: 3, 0>, sizes = array<i64: 2, 5>} : tensor<4x5xf32> -> tensor<2x5xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.slice: result shape must be [2, 5]
func.func @slice_result(%x: tensor<4x5xf32>) {
  %s = asc.slice %x {offsets = array<i64: 1, 0>, sizes = array<i64: 2, 5>} : tensor<4x5xf32> -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.slice: offsets and sizes need 2 entries (one per dim)
func.func @slice_rank(%x: tensor<4x5xf32>) {
  %s = asc.slice %x {offsets = array<i64: 1>, sizes = array<i64: 2>} : tensor<4x5xf32> -> tensor<2xf32>
  func.return
}
