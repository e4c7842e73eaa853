// RUN: pyasc-opt %s -p asc-decompose | filecheck %s

// Composite unary ops expand into asc primitives; the source location is copied onto every
// new op, and primitives are left alone. The formulas and coefficients are those of
// dialects/opset_numerics.py (docs/DESIGN.md, "Numerics").

// sigmoid: e = exp(-|x|), u = 1 + e; e / u for x < 0, 1 / u otherwise
// CHECK-LABEL: func.func @sigmoid(
// CHECK-NEXT:    %[[V0:.*]] = asc.unary "abs" %x {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V1:.*]] = asc.unary "neg" %[[V0]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V2:.*]] = asc.unary "exp" %[[V1]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V3:.*]] = asc.constant 1.000000e+00 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V4:.*]] = asc.binary "add" %[[V2]], %[[V3]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V5:.*]] = asc.constant 0.000000e+00 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[V6:.*]] = asc.compare "lt" %x, %[[V5]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32> -> tensor<4x40xi1>
// CHECK-NEXT:    %[[V7:.*]] = asc.binary "div" %[[V2]], %[[V4]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[V8:.*]] = asc.unary "reciprocal" %[[V4]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %y = asc.select %[[V6]], %[[V7]], %[[V8]] {asc.loc = "k.py:3:4"} : tensor<4x40xi1>, tensor<4x40xf32>
// CHECK-NEXT:    func.return %y : tensor<4x40xf32>
func.func @sigmoid(%x: tensor<4x40xf32>) -> tensor<4x40xf32> {
  %y = asc.unary "sigmoid" %x {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
  func.return %y : tensor<4x40xf32>
}

// tanh: |x| < 0.625: x (1 + s P(s)), s = x*x; else (1 - e) / (1 + e), e = exp(-2|x|), signed
// CHECK-LABEL: func.func @tanh(
// CHECK-NEXT:    %[[V0:.*]] = asc.binary "mul" %x, %x : tensor<8xf16>
// CHECK-NEXT:    %[[V1:.*]] = asc.constant -0.0057049528695642948 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[V2:.*]] = asc.binary "mul" %[[V1]], %[[V0]] : tensor<8xf16>
// CHECK-NEXT:    %[[V3:.*]] = asc.constant 0.020639054477214813 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[V4:.*]] = asc.binary "add" %[[V2]], %[[V3]] : tensor<8xf16>
// CHECK-NEXT:    %[[V5:.*]] = asc.binary "mul" %[[V4]], %[[V0]] : tensor<8xf16>
// CHECK-NEXT:    %[[V6:.*]] = asc.constant -0.053739704191684723 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[V7:.*]] = asc.binary "add" %[[V5]], %[[V6]] : tensor<8xf16>
// CHECK-NEXT:    %[[V8:.*]] = asc.binary "mul" %[[V7]], %[[V0]] : tensor<8xf16>
// CHECK-NEXT:    %[[V9:.*]] = asc.constant 0.13331441581249237 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[V10:.*]] = asc.binary "add" %[[V8]], %[[V9]] : tensor<8xf16>
// CHECK-NEXT:    %[[V11:.*]] = asc.binary "mul" %[[V10]], %[[V0]] : tensor<8xf16>
// CHECK-NEXT:    %[[V12:.*]] = asc.constant -0.33333280682563782 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[V13:.*]] = asc.binary "add" %[[V11]], %[[V12]] : tensor<8xf16>
// CHECK-NEXT:    %[[V14:.*]] = asc.binary "mul" %[[V0]], %[[V13]] : tensor<8xf16>
// CHECK-NEXT:    %[[V15:.*]] = asc.constant 1.000000e+00 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[V16:.*]] = asc.binary "add" %[[V14]], %[[V15]] : tensor<8xf16>
// CHECK-NEXT:    %[[V17:.*]] = asc.binary "mul" %x, %[[V16]] : tensor<8xf16>
// CHECK-NEXT:    %[[V18:.*]] = asc.unary "abs" %x : tensor<8xf16>
// CHECK-NEXT:    %[[V19:.*]] = asc.constant -2.000000e+00 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[V20:.*]] = asc.binary "mul" %[[V18]], %[[V19]] : tensor<8xf16>
// CHECK-NEXT:    %[[V21:.*]] = asc.unary "exp" %[[V20]] : tensor<8xf16>
// CHECK-NEXT:    %[[V22:.*]] = asc.constant 1.000000e+00 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[V23:.*]] = asc.binary "sub" %[[V22]], %[[V21]] : tensor<8xf16>
// CHECK-NEXT:    %[[V24:.*]] = asc.constant 1.000000e+00 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[V25:.*]] = asc.binary "add" %[[V21]], %[[V24]] : tensor<8xf16>
// CHECK-NEXT:    %[[V26:.*]] = asc.binary "div" %[[V23]], %[[V25]] : tensor<8xf16>
// CHECK-NEXT:    %[[V27:.*]] = asc.constant 6.250000e-01 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[V28:.*]] = asc.compare "lt" %[[V18]], %[[V27]] : tensor<8xf16> -> tensor<8xi1>
// CHECK-NEXT:    %[[V29:.*]] = asc.constant 0.000000e+00 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[V30:.*]] = asc.compare "lt" %x, %[[V29]] : tensor<8xf16> -> tensor<8xi1>
// CHECK-NEXT:    %[[V31:.*]] = asc.unary "neg" %[[V26]] : tensor<8xf16>
// CHECK-NEXT:    %[[V32:.*]] = asc.select %[[V30]], %[[V31]], %[[V26]] : tensor<8xi1>, tensor<8xf16>
// CHECK-NEXT:    %y = asc.select %[[V28]], %[[V17]], %[[V32]] : tensor<8xi1>, tensor<8xf16>
// CHECK-NEXT:    func.return %y : tensor<8xf16>
func.func @tanh(%x: tensor<8xf16>) -> tensor<8xf16> {
  %y = asc.unary "tanh" %x : tensor<8xf16>
  func.return %y : tensor<8xf16>
}

// erf: |x| < 1: x + x Y(x*x); else 1 - t Q(t) exp(-x*x), t = 1 / (1 + 0.47 |x|), signed
// CHECK-LABEL: func.func @erf(
// CHECK-NEXT:    %[[V0:.*]] = asc.binary "mul" %x, %x : tensor<8xf32>
// CHECK-NEXT:    %[[V1:.*]] = asc.constant 7.8538469097111374e-05 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V2:.*]] = asc.binary "mul" %[[V1]], %[[V0]] : tensor<8xf32>
// CHECK-NEXT:    %[[V3:.*]] = asc.constant -0.00080101890489459038 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V4:.*]] = asc.binary "add" %[[V2]], %[[V3]] : tensor<8xf32>
// CHECK-NEXT:    %[[V5:.*]] = asc.binary "mul" %[[V4]], %[[V0]] : tensor<8xf32>
// CHECK-NEXT:    %[[V6:.*]] = asc.constant 0.00518832728266716 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V7:.*]] = asc.binary "add" %[[V5]], %[[V6]] : tensor<8xf32>
// CHECK-NEXT:    %[[V8:.*]] = asc.binary "mul" %[[V7]], %[[V0]] : tensor<8xf32>
// CHECK-NEXT:    %[[V9:.*]] = asc.constant -0.026853810995817184 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V10:.*]] = asc.binary "add" %[[V8]], %[[V9]] : tensor<8xf32>
// CHECK-NEXT:    %[[V11:.*]] = asc.binary "mul" %[[V10]], %[[V0]] : tensor<8xf32>
// CHECK-NEXT:    %[[V12:.*]] = asc.constant 0.11283585429191589 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V13:.*]] = asc.binary "add" %[[V11]], %[[V12]] : tensor<8xf32>
// CHECK-NEXT:    %[[V14:.*]] = asc.binary "mul" %[[V13]], %[[V0]] : tensor<8xf32>
// CHECK-NEXT:    %[[V15:.*]] = asc.constant -0.37612625956535339 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V16:.*]] = asc.binary "add" %[[V14]], %[[V15]] : tensor<8xf32>
// CHECK-NEXT:    %[[V17:.*]] = asc.binary "mul" %[[V16]], %[[V0]] : tensor<8xf32>
// CHECK-NEXT:    %[[V18:.*]] = asc.constant 0.12837916612625122 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V19:.*]] = asc.binary "add" %[[V17]], %[[V18]] : tensor<8xf32>
// CHECK-NEXT:    %[[V20:.*]] = asc.binary "mul" %x, %[[V19]] : tensor<8xf32>
// CHECK-NEXT:    %[[V21:.*]] = asc.binary "add" %x, %[[V20]] : tensor<8xf32>
// CHECK-NEXT:    %[[V22:.*]] = asc.unary "abs" %x : tensor<8xf32>
// CHECK-NEXT:    %[[V23:.*]] = asc.constant 4.700000e-01 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V24:.*]] = asc.binary "mul" %[[V22]], %[[V23]] : tensor<8xf32>
// CHECK-NEXT:    %[[V25:.*]] = asc.constant 1.000000e+00 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V26:.*]] = asc.binary "add" %[[V24]], %[[V25]] : tensor<8xf32>
// CHECK-NEXT:    %[[V27:.*]] = asc.unary "reciprocal" %[[V26]] : tensor<8xf32>
// CHECK-NEXT:    %[[V28:.*]] = asc.constant -0.11161327362060547 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V29:.*]] = asc.binary "mul" %[[V28]], %[[V27]] : tensor<8xf32>
// CHECK-NEXT:    %[[V30:.*]] = asc.constant 0.16197839379310608 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V31:.*]] = asc.binary "add" %[[V29]], %[[V30]] : tensor<8xf32>
// CHECK-NEXT:    %[[V32:.*]] = asc.binary "mul" %[[V31]], %[[V27]] : tensor<8xf32>
// CHECK-NEXT:    %[[V33:.*]] = asc.constant 0.21350419521331787 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V34:.*]] = asc.binary "add" %[[V32]], %[[V33]] : tensor<8xf32>
// CHECK-NEXT:    %[[V35:.*]] = asc.binary "mul" %[[V34]], %[[V27]] : tensor<8xf32>
// CHECK-NEXT:    %[[V36:.*]] = asc.constant 0.19220487773418427 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V37:.*]] = asc.binary "add" %[[V35]], %[[V36]] : tensor<8xf32>
// CHECK-NEXT:    %[[V38:.*]] = asc.binary "mul" %[[V37]], %[[V27]] : tensor<8xf32>
// CHECK-NEXT:    %[[V39:.*]] = asc.constant 0.28018465638160706 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V40:.*]] = asc.binary "add" %[[V38]], %[[V39]] : tensor<8xf32>
// CHECK-NEXT:    %[[V41:.*]] = asc.binary "mul" %[[V40]], %[[V27]] : tensor<8xf32>
// CHECK-NEXT:    %[[V42:.*]] = asc.constant 0.26335784792900085 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V43:.*]] = asc.binary "add" %[[V41]], %[[V42]] : tensor<8xf32>
// CHECK-NEXT:    %[[V44:.*]] = asc.binary "mul" %[[V43]], %[[V27]] : tensor<8xf32>
// CHECK-NEXT:    %[[V45:.*]] = asc.unary "neg" %[[V0]] : tensor<8xf32>
// CHECK-NEXT:    %[[V46:.*]] = asc.unary "exp" %[[V45]] : tensor<8xf32>
// CHECK-NEXT:    %[[V47:.*]] = asc.binary "mul" %[[V44]], %[[V46]] : tensor<8xf32>
// CHECK-NEXT:    %[[V48:.*]] = asc.constant 1.000000e+00 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V49:.*]] = asc.binary "sub" %[[V48]], %[[V47]] : tensor<8xf32>
// CHECK-NEXT:    %[[V50:.*]] = asc.constant 1.000000e+00 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V51:.*]] = asc.compare "lt" %[[V22]], %[[V50]] : tensor<8xf32> -> tensor<8xi1>
// CHECK-NEXT:    %[[V52:.*]] = asc.constant 0.000000e+00 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[V53:.*]] = asc.compare "lt" %x, %[[V52]] : tensor<8xf32> -> tensor<8xi1>
// CHECK-NEXT:    %[[V54:.*]] = asc.unary "neg" %[[V49]] : tensor<8xf32>
// CHECK-NEXT:    %[[V55:.*]] = asc.select %[[V53]], %[[V54]], %[[V49]] : tensor<8xi1>, tensor<8xf32>
// CHECK-NEXT:    %y = asc.select %[[V51]], %[[V21]], %[[V55]] : tensor<8xi1>, tensor<8xf32>
// CHECK-NEXT:    func.return %y : tensor<8xf32>
func.func @erf(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = asc.unary "erf" %x : tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// Primitive unary kinds are not touched.
// CHECK-LABEL: func.func @primitives(
// CHECK-NEXT:    %a = asc.unary "rsqrt" %x : tensor<4xf32>
// CHECK-NEXT:    %b = asc.unary "neg" %a : tensor<4xf32>
// CHECK-NEXT:    %c = asc.unary "relu" %b : tensor<4xf32>
// CHECK-NEXT:    func.return %c : tensor<4xf32>
func.func @primitives(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = asc.unary "rsqrt" %x : tensor<4xf32>
  %b = asc.unary "neg" %a : tensor<4xf32>
  %c = asc.unary "relu" %b : tensor<4xf32>
  func.return %c : tensor<4xf32>
}
