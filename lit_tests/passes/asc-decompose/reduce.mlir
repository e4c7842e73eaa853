// RUN: pyasc-opt %s -p asc-decompose | filecheck %s

// mean = sum * (1/n); var = sum((x - mean)^2) * 1/(n - correction) (two passes, never
// E[x^2] - E[x]^2); keepdim = false becomes keepdim = true + asc.reshape.

// CHECK-LABEL: func.func @mean(
// CHECK-NEXT:    %[[S:.*]] = asc.reduce "sum" %x {axes = array<i64: 1>, keepdim = true} : tensor<4x40xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[INV:.*]] = asc.constant 2.500000e-02 : f64 -> tensor<4x1xf32>
// CHECK-NEXT:    %[[M:.*]] = asc.binary "mul" %[[S]], %[[INV]] : tensor<4x1xf32>
// CHECK-NEXT:    %y = asc.reshape %[[M]] : tensor<4x1xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %y : tensor<4xf32>
func.func @mean(%x: tensor<4x40xf32>) -> tensor<4xf32> {
  %y = asc.reduce "mean" %x {axes = array<i64: 1>, keepdim = false} : tensor<4x40xf32> -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// Sample variance over two axes: n = 15, divisor 14.
// CHECK-LABEL: func.func @var(
// CHECK-NEXT:    %[[S:.*]] = asc.reduce "sum" %x {axes = array<i64: 1, 2>, keepdim = true} : tensor<2x3x5xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[INV:.*]] = asc.constant 0.066666666666666666 : f64 -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = asc.binary "mul" %[[S]], %[[INV]] : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[MB:.*]] = asc.broadcast %[[M]] : tensor<2x1x1xf32> -> tensor<2x3x5xf32>
// CHECK-NEXT:    %[[D:.*]] = asc.binary "sub" %x, %[[MB]] : tensor<2x3x5xf32>
// CHECK-NEXT:    %[[D2:.*]] = asc.binary "mul" %[[D]], %[[D]] : tensor<2x3x5xf32>
// CHECK-NEXT:    %[[SS:.*]] = asc.reduce "sum" %[[D2]] {axes = array<i64: 1, 2>, keepdim = true} : tensor<2x3x5xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[INV2:.*]] = asc.constant 0.071428571428571425 : f64 -> tensor<2x1x1xf32>
// CHECK-NEXT:    %y = asc.binary "mul" %[[SS]], %[[INV2]] : tensor<2x1x1xf32>
// CHECK-NEXT:    func.return %y : tensor<2x1x1xf32>
func.func @var(%x: tensor<2x3x5xf32>) -> tensor<2x1x1xf32> {
  %y = asc.reduce "var" %x {axes = array<i64: 1, 2>, keepdim = true, correction = #builtin.int<1>} : tensor<2x3x5xf32> -> tensor<2x1x1xf32>
  func.return %y : tensor<2x1x1xf32>
}

// Population variance (correction 0), keepdim = false: divisor n = 8, then a reshape.
// CHECK-LABEL: func.func @var_population(
// CHECK:         asc.constant 1.250000e-01 : f64 -> tensor<4x1xf16>
// CHECK:         %[[SS:.*]] = asc.reduce "sum" %{{.*}} {axes = array<i64: 1>, keepdim = true} : tensor<4x8xf16> -> tensor<4x1xf16>
// CHECK-NEXT:    %[[INV2:.*]] = asc.constant 1.250000e-01 : f64 -> tensor<4x1xf16>
// CHECK-NEXT:    %[[V:.*]] = asc.binary "mul" %[[SS]], %[[INV2]] : tensor<4x1xf16>
// CHECK-NEXT:    %y = asc.reshape %[[V]] : tensor<4x1xf16> -> tensor<4xf16>
func.func @var_population(%x: tensor<4x8xf16>) -> tensor<4xf16> {
  %y = asc.reduce "var" %x {axes = array<i64: 1>, keepdim = false, correction = #builtin.int<0>} : tensor<4x8xf16> -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}

// CHECK-LABEL: func.func @max_nokeep(
// CHECK-NEXT:    %[[R:.*]] = asc.reduce "max" %x {axes = array<i64: 1>, keepdim = true} : tensor<4x40xf16> -> tensor<4x1xf16>
// CHECK-NEXT:    %y = asc.reshape %[[R]] : tensor<4x1xf16> -> tensor<4xf16>
// CHECK-NEXT:    func.return %y : tensor<4xf16>
func.func @max_nokeep(%x: tensor<4x40xf16>) -> tensor<4xf16> {
  %y = asc.reduce "max" %x {axes = array<i64: 1>, keepdim = false} : tensor<4x40xf16> -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}

// sum/max/min with keepdim = true are primitives: unchanged.
// CHECK-LABEL: func.func @primitive(
// CHECK-NEXT:    %s = asc.reduce "min" %x {axes = array<i64: 0, 1>, keepdim = true} : tensor<4x40xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    func.return %s : tensor<1x1xf32>
func.func @primitive(%x: tensor<4x40xf32>) -> tensor<1x1xf32> {
  %s = asc.reduce "min" %x {axes = array<i64: 0, 1>, keepdim = true} : tensor<4x40xf32> -> tensor<1x1xf32>
  func.return %s : tensor<1x1xf32>
}
