// RUN: pyasc-opt %s -p asc-flash-attention | filecheck %s

// softmax(q k^T * scale + mask) v, as the frontend builds it (f16 operands: the f32
// probabilities are cast back before the second matmul), becomes ONE asc.flash_attention;
// the mask operand is the value before its broadcast, the head transposes stay.
// CHECK-LABEL: func.func @causal_f16(
// CHECK-NEXT:    %[[Q:.*]] = asc.transpose %q
// CHECK-NEXT:    %[[K:.*]] = asc.transpose %k
// CHECK-NEXT:    %[[M:.*]] = asc.cast %mask : tensor<7x7xf16> -> tensor<7x7xf32>
// CHECK-NEXT:    %[[V:.*]] = asc.transpose %v
// CHECK-NEXT:    %[[O:.*]] = asc.flash_attention %[[Q]], %[[K]], %[[V]] mask %[[M]] : tensor<7x7xf32> {asc.loc = "a.py:6:13", scale = 1.250000e-01 : f64, block_kv = #builtin.int<128>} : (tensor<1x2x7x16xf16>, tensor<1x2x7x16xf16>, tensor<1x2x7x16xf16>) -> tensor<1x2x7x16xf32>
// CHECK-NEXT:    %[[T:.*]] = asc.transpose %[[O]]
// CHECK-NEXT:    %[[C:.*]] = asc.cast %[[T]]
// CHECK-NEXT:    func.return %[[C]]
func.func @causal_f16(%q: tensor<1x7x2x16xf16>, %k: tensor<1x7x2x16xf16>, %v: tensor<1x7x2x16xf16>, %mask: tensor<7x7xf16>) -> tensor<1x7x2x16xf16> {
  %0 = asc.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<1x7x2x16xf16> -> tensor<1x2x7x16xf16>
  %1 = asc.transpose %k {perm = array<i64: 0, 2, 1, 3>} : tensor<1x7x2x16xf16> -> tensor<1x2x7x16xf16>
  %2 = asc.matmul %0, %1 {transpose_a = false, transpose_b = true} : (tensor<1x2x7x16xf16>, tensor<1x2x7x16xf16>) -> tensor<1x2x7x7xf32>
  %3 = asc.constant 1.250000e-01 : f64 -> tensor<1x2x7x7xf32>
  %4 = asc.binary "mul" %2, %3 : tensor<1x2x7x7xf32>
  %5 = asc.cast %mask : tensor<7x7xf16> -> tensor<7x7xf32>
  %6 = asc.broadcast %5 : tensor<7x7xf32> -> tensor<1x2x7x7xf32>
  %s = asc.binary "add" %4, %6 : tensor<1x2x7x7xf32>
  %7 = asc.reduce "max" %s {axes = array<i64: 3>, keepdim = true} : tensor<1x2x7x7xf32> -> tensor<1x2x7x1xf32>
  %8 = asc.broadcast %7 : tensor<1x2x7x1xf32> -> tensor<1x2x7x7xf32>
  %9 = asc.binary "sub" %s, %8 : tensor<1x2x7x7xf32>
  %e = asc.unary "exp" %9 : tensor<1x2x7x7xf32>
  %10 = asc.reduce "sum" %e {axes = array<i64: 3>, keepdim = true} : tensor<1x2x7x7xf32> -> tensor<1x2x7x1xf32>
  %11 = asc.broadcast %10 : tensor<1x2x7x1xf32> -> tensor<1x2x7x7xf32>
  %12 = asc.binary "div" %e, %11 : tensor<1x2x7x7xf32>
  %13 = asc.transpose %v {perm = array<i64: 0, 2, 1, 3>} : tensor<1x7x2x16xf16> -> tensor<1x2x7x16xf16>
  %14 = asc.cast %12 : tensor<1x2x7x7xf32> -> tensor<1x2x7x7xf16>
  %15 = asc.matmul %14, %13 {transpose_a = false, transpose_b = false, asc.loc = "a.py:6:13"} : (tensor<1x2x7x7xf16>, tensor<1x2x7x16xf16>) -> tensor<1x2x7x16xf32>
  %16 = asc.transpose %15 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x7x16xf32> -> tensor<1x7x2x16xf32>
  %17 = asc.cast %16 : tensor<1x7x2x16xf32> -> tensor<1x7x2x16xf16>
  func.return %17 : tensor<1x7x2x16xf16>
}

// No scale, no mask, f32 (the constant on the left of the mul is matched too, see below).
// CHECK-LABEL: func.func @plain_f32(
// CHECK-NEXT:    %[[O:.*]] = asc.flash_attention %q, %k, %v {scale = 1.000000e+00 : f64, block_kv = #builtin.int<128>} : (tensor<3x5x8xf32>, tensor<3x9x8xf32>, tensor<3x9x4xf32>) -> tensor<3x5x4xf32>
// CHECK-NEXT:    func.return %[[O]]
func.func @plain_f32(%q: tensor<3x5x8xf32>, %k: tensor<3x9x8xf32>, %v: tensor<3x9x4xf32>) -> tensor<3x5x4xf32> {
  %s = asc.matmul %q, %k {transpose_a = false, transpose_b = true} : (tensor<3x5x8xf32>, tensor<3x9x8xf32>) -> tensor<3x5x9xf32>
  %0 = asc.reduce "max" %s {axes = array<i64: 2>, keepdim = true} : tensor<3x5x9xf32> -> tensor<3x5x1xf32>
  %1 = asc.broadcast %0 : tensor<3x5x1xf32> -> tensor<3x5x9xf32>
  %2 = asc.binary "sub" %s, %1 : tensor<3x5x9xf32>
  %e = asc.unary "exp" %2 : tensor<3x5x9xf32>
  %3 = asc.reduce "sum" %e {axes = array<i64: 2>, keepdim = true} : tensor<3x5x9xf32> -> tensor<3x5x1xf32>
  %4 = asc.broadcast %3 : tensor<3x5x1xf32> -> tensor<3x5x9xf32>
  %p = asc.binary "div" %e, %4 : tensor<3x5x9xf32>
  %o = asc.matmul %p, %v {transpose_a = false, transpose_b = false} : (tensor<3x5x9xf32>, tensor<3x9x4xf32>) -> tensor<3x5x4xf32>
  func.return %o : tensor<3x5x4xf32>
}

// Scale on the left, mask on the left, mask not broadcast (already the scores' shape).
// CHECK-LABEL: func.func @operands_swapped(
// CHECK-NEXT:    %[[O:.*]] = asc.flash_attention %q, %k, %v mask %m : tensor<2x1x4xf32> {scale = 5.000000e-01 : f64, block_kv = #builtin.int<128>}
// CHECK-NEXT:    func.return %[[O]]
func.func @operands_swapped(%q: tensor<2x1x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %m: tensor<2x1x4xf32>) -> tensor<2x1x8xf32> {
  %s0 = asc.matmul %q, %k {transpose_a = false, transpose_b = true} : (tensor<2x1x8xf32>, tensor<2x4x8xf32>) -> tensor<2x1x4xf32>
  %c = asc.constant 5.000000e-01 : f64 -> tensor<2x1x4xf32>
  %s1 = asc.binary "mul" %c, %s0 : tensor<2x1x4xf32>
  %s = asc.binary "add" %m, %s1 : tensor<2x1x4xf32>
  %0 = asc.reduce "max" %s {axes = array<i64: 2>, keepdim = true} : tensor<2x1x4xf32> -> tensor<2x1x1xf32>
  %1 = asc.broadcast %0 : tensor<2x1x1xf32> -> tensor<2x1x4xf32>
  %2 = asc.binary "sub" %s, %1 : tensor<2x1x4xf32>
  %e = asc.unary "exp" %2 : tensor<2x1x4xf32>
  %3 = asc.reduce "sum" %e {axes = array<i64: 2>, keepdim = true} : tensor<2x1x4xf32> -> tensor<2x1x1xf32>
  %4 = asc.broadcast %3 : tensor<2x1x1xf32> -> tensor<2x1x4xf32>
  %p = asc.binary "div" %e, %4 : tensor<2x1x4xf32>
  %o = asc.matmul %p, %v {transpose_a = false, transpose_b = false} : (tensor<2x1x4xf32>, tensor<2x4x8xf32>) -> tensor<2x1x8xf32>
  func.return %o : tensor<2x1x8xf32>
}
