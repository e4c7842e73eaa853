// RUN: pyasc-opt %s -p asc-autodiff | filecheck %s

// y = x * w, w broadcast over the rows: dw sums dy * x over the leading (row) dims on the
// Cube (g^T @ ones, float32 accumulation, deterministic), after the vector work; dx = dy * w.
// The ones column has g's leading shape (made by the vector kernel that makes g, in its
// iteration space) and is read by the Cube as [rows, 1] through a reshape.
// CHECK-LABEL: func.func @f_backward(%x: tensor<2x5x8xf32>, %w: tensor<8xf32>, %d_out0: tensor<2x5x8xf32>) -> (tensor<2x5x8xf32>, tensor<8xf32>)
// CHECK-NEXT:    %[[B:.*]] = asc.broadcast %w : tensor<8xf32> -> tensor<2x5x8xf32>
// CHECK-NEXT:    %[[GX:.*]] = asc.binary "mul" %d_out0, %[[B]] : tensor<2x5x8xf32>
// CHECK-NEXT:    %[[GW:.*]] = asc.binary "mul" %d_out0, %x : tensor<2x5x8xf32>
// CHECK-NEXT:    %[[F:.*]] = asc.reshape %[[GW]] : tensor<2x5x8xf32> -> tensor<10x8xf32>
// CHECK-NEXT:    %[[C:.*]] = asc.constant 1.000000e+00 : f64 -> tensor<2x5x1xf32>
// CHECK-NEXT:    %[[O:.*]] = asc.reshape %[[C]] : tensor<2x5x1xf32> -> tensor<10x1xf32>
// CHECK-NEXT:    %[[M:.*]] = asc.matmul %[[F]], %[[O]] {transpose_a = true, transpose_b = false} : (tensor<10x8xf32>, tensor<10x1xf32>) -> tensor<8x1xf32>
// CHECK-NEXT:    %[[R:.*]] = asc.reshape %[[M]] : tensor<8x1xf32> -> tensor<1x1x8xf32>
// CHECK-NEXT:    %[[DW:.*]] = asc.reshape %[[R]] : tensor<1x1x8xf32> -> tensor<8xf32>
// CHECK-NEXT:    func.return %[[GX]], %[[DW]] : tensor<2x5x8xf32>, tensor<8xf32>
func.func @f(%x: tensor<2x5x8xf32>, %w: tensor<8xf32>) -> tensor<2x5x8xf32> {
  %b = asc.broadcast %w : tensor<8xf32> -> tensor<2x5x8xf32>
  %y = asc.binary "mul" %x, %b : tensor<2x5x8xf32>
  func.return %y : tensor<2x5x8xf32>
}

// A broadcast along the trailing dim sums on the vector unit (a row reduction).
// CHECK-LABEL: func.func @g_backward(%x: tensor<3x1xf32>, %d_out0: tensor<3x6xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    %[[S:.*]] = asc.reduce "sum" %d_out0 {axes = array<i64: 1>, keepdim = true} : tensor<3x6xf32> -> tensor<3x1xf32>
// CHECK-NEXT:    func.return %[[S]] : tensor<3x1xf32>
func.func @g(%x: tensor<3x1xf32>) -> tensor<3x6xf32> {
  %y = asc.broadcast %x : tensor<3x1xf32> -> tensor<3x6xf32>
  func.return %y : tensor<3x6xf32>
}
