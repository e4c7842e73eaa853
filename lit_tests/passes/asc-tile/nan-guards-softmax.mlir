// RUN: pyasc-opt %s -p asc-tile | filecheck %s

// The row max of a softmax only feeds exp(x - max) / sum(exp(x - max)): a NaN in a row makes
// the row's sum, so every result of the row, NaN whatever the max is, and the sign of a zero
// max only changes the sign of a zero x - max, which exp maps to 1. So no guard
// (nan_guard.guard_needed): one ReduceMax, one ReduceSum (the softmax's own), no Compare.

// CHECK-LABEL: func.func @softmax_kernel(
// CHECK:         asc.vreduce "max" "last"
// CHECK-NOT:     asc.vcompare
// CHECK:         asc.vreduce "sum" "last"
// CHECK-NOT:     asc.vreduce
// CHECK-NOT:     asc.vcompare
// CHECK:         func.return
func.func @softmax(%x: tensor<8x40xf32>) -> tensor<8x40xf32> {
  %r = asc.fusion(%x) : (tensor<8x40xf32>) -> tensor<8x40xf32> {
  ^bb0(%a: tensor<8x40xf32>):
    %m = asc.reduce "max" %a {axes = array<i64: 1>, keepdim = true} : tensor<8x40xf32> -> tensor<8x1xf32>
    %mb = asc.broadcast %m : tensor<8x1xf32> -> tensor<8x40xf32>
    %d = asc.binary "sub" %a, %mb : tensor<8x40xf32>
    %e = asc.unary "exp" %d : tensor<8x40xf32>
    %s = asc.reduce "sum" %e {axes = array<i64: 1>, keepdim = true} : tensor<8x40xf32> -> tensor<8x1xf32>
    %sb = asc.broadcast %s : tensor<8x1xf32> -> tensor<8x40xf32>
    %y = asc.binary "div" %e, %sb : tensor<8x40xf32>
    asc.yield %y : tensor<8x40xf32>
  }
  func.return %r : tensor<8x40xf32>
}
