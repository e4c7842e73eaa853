// RUN: pyasc-opt %s -p asc-decompose | filecheck %s

// GELU, erf form (dialects/opset_numerics.py decompose_gelu; docs/DESIGN.md, "Numerics"):
// t = 1/(1 + 0.3|x|), h = t R(t) exp(-x*x/2) = Phi(-|x|) (degree-7 R by Horner), then
// x * (x < 0 ? h : 1 - h): one branch, 27 vector ops.
// CHECK-LABEL: func.func @gelu(
// CHECK-NEXT:    %[[V0:.*]] = asc.unary "abs" %x {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V1:.*]] = asc.constant 3.000000e-01 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V2:.*]] = asc.binary "mul" %[[V0]], %[[V1]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V3:.*]] = asc.constant 1.000000e+00 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V4:.*]] = asc.binary "add" %[[V2]], %[[V3]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V5:.*]] = asc.unary "reciprocal" %[[V4]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V6:.*]] = asc.binary "mul" %x, %x {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V7:.*]] = asc.constant -5.000000e-01 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V8:.*]] = asc.binary "mul" %[[V6]], %[[V7]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V9:.*]] = asc.unary "exp" %[[V8]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V10:.*]] = asc.constant 0.035675212740898132 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V11:.*]] = asc.binary "mul" %[[V10]], %[[V5]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V12:.*]] = asc.constant -0.15720485150814056 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V13:.*]] = asc.binary "add" %[[V11]], %[[V12]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V14:.*]] = asc.binary "mul" %[[V13]], %[[V5]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V15:.*]] = asc.constant 0.20635642111301422 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V16:.*]] = asc.binary "add" %[[V14]], %[[V15]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V17:.*]] = asc.binary "mul" %[[V16]], %[[V5]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V18:.*]] = asc.constant -0.053686182945966721 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V19:.*]] = asc.binary "add" %[[V17]], %[[V18]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V20:.*]] = asc.binary "mul" %[[V19]], %[[V5]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V21:.*]] = asc.constant 0.12856288254261017 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V22:.*]] = asc.binary "add" %[[V20]], %[[V21]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V23:.*]] = asc.binary "mul" %[[V22]], %[[V5]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V24:.*]] = asc.constant 0.099913142621517181 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V25:.*]] = asc.binary "add" %[[V23]], %[[V24]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V26:.*]] = asc.binary "mul" %[[V25]], %[[V5]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V27:.*]] = asc.constant 0.12075401097536087 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V28:.*]] = asc.binary "add" %[[V26]], %[[V27]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V29:.*]] = asc.binary "mul" %[[V28]], %[[V5]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V30:.*]] = asc.constant 0.11962929368019104 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V31:.*]] = asc.binary "add" %[[V29]], %[[V30]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V32:.*]] = asc.binary "mul" %[[V31]], %[[V5]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V33:.*]] = asc.binary "mul" %[[V32]], %[[V9]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V34:.*]] = asc.constant 0.000000e+00 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V35:.*]] = asc.compare "lt" %x, %[[V34]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32> -> tensor<4x40xi1>
// CHECK-NEXT:    %[[V36:.*]] = asc.constant 1.000000e+00 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V37:.*]] = asc.binary "sub" %[[V36]], %[[V33]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V38:.*]] = asc.select %[[V35]], %[[V33]], %[[V37]] {asc.loc = "k.py:3:4"} : tensor<4x40xi1>, tensor<4x40xf32>
// CHECK-NEXT:    %y = asc.binary "mul" %x, %[[V38]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    func.return %y : tensor<4x40xf32>
func.func @gelu(%x: tensor<4x40xf32>) -> tensor<4x40xf32> {
  %y = asc.unary "gelu" %x {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
  func.return %y : tensor<4x40xf32>
}
