// RUN: pyasc-opt %s -p asc-flash-attention | filecheck %s

// Chains the pass must leave alone: the probabilities are also returned (the S x S matrix
// is a result), and a softmax over another axis.
// CHECK-LABEL: func.func @probs_used(
// CHECK-NOT:     asc.flash_attention
// CHECK:         asc.matmul %p, %v
// CHECK:         func.return %o, %p
func.func @probs_used(%q: tensor<5x8xf32>, %k: tensor<9x8xf32>, %v: tensor<9x4xf32>) -> (tensor<5x4xf32>, tensor<5x9xf32>) {
  %s = asc.matmul %q, %k {transpose_a = false, transpose_b = true} : (tensor<5x8xf32>, tensor<9x8xf32>) -> tensor<5x9xf32>
  %0 = asc.reduce "max" %s {axes = array<i64: 1>, keepdim = true} : tensor<5x9xf32> -> tensor<5x1xf32>
  %1 = asc.broadcast %0 : tensor<5x1xf32> -> tensor<5x9xf32>
  %2 = asc.binary "sub" %s, %1 : tensor<5x9xf32>
  %e = asc.unary "exp" %2 : tensor<5x9xf32>
  %3 = asc.reduce "sum" %e {axes = array<i64: 1>, keepdim = true} : tensor<5x9xf32> -> tensor<5x1xf32>
  %4 = asc.broadcast %3 : tensor<5x1xf32> -> tensor<5x9xf32>
  %p = asc.binary "div" %e, %4 : tensor<5x9xf32>
  %o = asc.matmul %p, %v {transpose_a = false, transpose_b = false} : (tensor<5x9xf32>, tensor<9x4xf32>) -> tensor<5x4xf32>
  func.return %o, %p : tensor<5x4xf32>, tensor<5x9xf32>
}

// CHECK-LABEL: func.func @softmax_axis0(
// CHECK-NOT:     asc.flash_attention
// CHECK:         func.return
func.func @softmax_axis0(%q: tensor<9x8xf32>, %k: tensor<9x8xf32>, %v: tensor<9x4xf32>) -> tensor<9x4xf32> {
  %s = asc.matmul %q, %k {transpose_a = false, transpose_b = true} : (tensor<9x8xf32>, tensor<9x8xf32>) -> tensor<9x9xf32>
  %0 = asc.reduce "max" %s {axes = array<i64: 0>, keepdim = true} : tensor<9x9xf32> -> tensor<1x9xf32>
  %1 = asc.broadcast %0 : tensor<1x9xf32> -> tensor<9x9xf32>
  %2 = asc.binary "sub" %s, %1 : tensor<9x9xf32>
  %e = asc.unary "exp" %2 : tensor<9x9xf32>
  %3 = asc.reduce "sum" %e {axes = array<i64: 0>, keepdim = true} : tensor<9x9xf32> -> tensor<1x9xf32>
  %4 = asc.broadcast %3 : tensor<1x9xf32> -> tensor<9x9xf32>
  %p = asc.binary "div" %e, %4 : tensor<9x9xf32>
  %o = asc.matmul %p, %v {transpose_a = false, transpose_b = false} : (tensor<9x9xf32>, tensor<9x4xf32>) -> tensor<9x4xf32>
  func.return %o : tensor<9x4xf32>
}
