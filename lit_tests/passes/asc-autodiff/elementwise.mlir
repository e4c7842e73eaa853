// RUN: pyasc-opt %s -p asc-autodiff | filecheck %s

// y = exp(x) * x: the backward takes (x, dy), recomputes the forward and returns
// dx = dy * x * exp(x) + dy * exp(x) (the two uses of x accumulate; rules: dialects/opset_grad.py).
// CHECK-LABEL: func.func @f(
// CHECK-LABEL: func.func @f_backward(%x: tensor<7xf32>, %d_out0: tensor<7xf32>) -> tensor<7xf32> attributes {asc.backward = "recompute", asc.backward_of = "f"} {
// CHECK-NEXT:    %[[E:.*]] = asc.unary "exp" %x : tensor<7xf32>
// CHECK-NEXT:    %[[GE:.*]] = asc.binary "mul" %d_out0, %x : tensor<7xf32>
// CHECK-NEXT:    %[[GX:.*]] = asc.binary "mul" %d_out0, %[[E]] : tensor<7xf32>
// CHECK-NEXT:    %[[D:.*]] = asc.binary "mul" %[[GE]], %[[E]] : tensor<7xf32>
// CHECK-NEXT:    %[[S:.*]] = asc.binary "add" %[[GX]], %[[D]] : tensor<7xf32>
// CHECK-NEXT:    func.return %[[S]] : tensor<7xf32>
func.func @f(%x: tensor<7xf32>) -> tensor<7xf32> {
  %e = asc.unary "exp" %x : tensor<7xf32>
  %y = asc.binary "mul" %e, %x : tensor<7xf32>
  func.return %y : tensor<7xf32>
}

// f16: cotangents are f32 (dy widened once), the gradient is cast back to f16 on return;
// a comparison carries no gradient (where(): the condition gets none).
// CHECK-LABEL: func.func @g_backward(%x: tensor<4xf16>, %d_out0: tensor<4xf16>) -> tensor<4xf16>
// CHECK:         %[[W:.*]] = asc.cast %d_out0 : tensor<4xf16> -> tensor<4xf32>
// CHECK:         %[[Z:.*]] = asc.constant 0.000000e+00 : f64 -> tensor<4xf32>
// CHECK-NEXT:    %[[T:.*]] = asc.select %{{.*}}, %[[W]], %[[Z]] : tensor<4xi1>, tensor<4xf32>
// CHECK:         %[[R:.*]] = asc.cast %{{.*}} : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT:    func.return %[[R]] : tensor<4xf16>
func.func @g(%x: tensor<4xf16>) -> tensor<4xf16> {
  %w = asc.cast %x : tensor<4xf16> -> tensor<4xf32>
  %z = asc.constant 0.0 : f64 -> tensor<4xf32>
  %c = asc.compare "gt" %w, %z : tensor<4xf32> -> tensor<4xi1>
  %s = asc.select %c, %w, %z : tensor<4xi1>, tensor<4xf32>
  %y = asc.cast %s : tensor<4xf32> -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}
