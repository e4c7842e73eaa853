// RUN: pyasc-opt %s -p asc-decompose | filecheck %s

// Composite unary ops expand into asc primitives; the source location is copied onto every
// new op, and primitives are left alone.

// sigmoid(x) = 1 / (1 + exp(-x))
// CHECK-LABEL: func.func @sigmoid(
// CHECK-NEXT:    %[[N:.*]] = asc.unary "neg" %x {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[E:.*]] = asc.unary "exp" %[[N]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %[[ONE:.*]] = asc.constant 1.000000e+00 : f64 {asc.loc = "k.py:3:4"} -> tensor<4x40xf32>
// CHECK-NEXT:    %[[D:.*]] = asc.binary "add" %[[E]], %[[ONE]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    %y = asc.unary "reciprocal" %[[D]] {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
// CHECK-NEXT:    func.return %y : tensor<4x40xf32>
func.func @sigmoid(%x: tensor<4x40xf32>) -> tensor<4x40xf32> {
  %y = asc.unary "sigmoid" %x {asc.loc = "k.py:3:4"} : tensor<4x40xf32>
  func.return %y : tensor<4x40xf32>
}

// tanh(x) = 2 * sigmoid(2x) - 1
// CHECK-LABEL: func.func @tanh(
// CHECK-NEXT:    %[[C2:.*]] = asc.constant 2.000000e+00 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[X2:.*]] = asc.binary "mul" %x, %[[C2]] : tensor<8xf16>
// CHECK-NEXT:    %[[N:.*]] = asc.unary "neg" %[[X2]] : tensor<8xf16>
// CHECK-NEXT:    %[[E:.*]] = asc.unary "exp" %[[N]] : tensor<8xf16>
// CHECK-NEXT:    %[[C1:.*]] = asc.constant 1.000000e+00 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[D:.*]] = asc.binary "add" %[[E]], %[[C1]] : tensor<8xf16>
// CHECK-NEXT:    %[[S:.*]] = asc.unary "reciprocal" %[[D]] : tensor<8xf16>
// CHECK-NEXT:    %[[C2B:.*]] = asc.constant 2.000000e+00 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %[[S2:.*]] = asc.binary "mul" %[[S]], %[[C2B]] : tensor<8xf16>
// CHECK-NEXT:    %[[C1B:.*]] = asc.constant 1.000000e+00 : f64 -> tensor<8xf16>
// CHECK-NEXT:    %y = asc.binary "sub" %[[S2]], %[[C1B]] : tensor<8xf16>
// CHECK-NEXT:    func.return %y : tensor<8xf16>
func.func @tanh(%x: tensor<8xf16>) -> tensor<8xf16> {
  %y = asc.unary "tanh" %x : tensor<8xf16>
  func.return %y : tensor<8xf16>
}

// erf: Abramowitz & Stegun 7.1.26, t = 1/(1 + p|x|), Horner in t, times exp(-x^2), odd in x.
// CHECK-LABEL: func.func @erf(
// CHECK-NEXT:    %[[AX:.*]] = asc.unary "abs" %x : tensor<8xf32>
// CHECK-NEXT:    %[[P:.*]] = asc.constant 0.32759110000000002 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[PX:.*]] = asc.binary "mul" %[[AX]], %[[P]] : tensor<8xf32>
// CHECK-NEXT:    %[[ONE:.*]] = asc.constant 1.000000e+00 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[DEN:.*]] = asc.binary "add" %[[PX]], %[[ONE]] : tensor<8xf32>
// CHECK-NEXT:    %[[T:.*]] = asc.unary "reciprocal" %[[DEN]] : tensor<8xf32>
// CHECK-NEXT:    %[[A5:.*]] = asc.constant 1.0614054289999999 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[M5:.*]] = asc.binary "mul" %[[A5]], %[[T]] : tensor<8xf32>
// CHECK-NEXT:    %[[A4:.*]] = asc.constant -1.453152027 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[H4:.*]] = asc.binary "add" %[[M5]], %[[A4]] : tensor<8xf32>
// CHECK-NEXT:    %[[M4:.*]] = asc.binary "mul" %[[H4]], %[[T]] : tensor<8xf32>
// CHECK-NEXT:    %[[A3:.*]] = asc.constant 1.4214137410000001 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[H3:.*]] = asc.binary "add" %[[M4]], %[[A3]] : tensor<8xf32>
// CHECK-NEXT:    %[[M3:.*]] = asc.binary "mul" %[[H3]], %[[T]] : tensor<8xf32>
// CHECK-NEXT:    %[[A2:.*]] = asc.constant -0.28449673599999997 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[H2:.*]] = asc.binary "add" %[[M3]], %[[A2]] : tensor<8xf32>
// CHECK-NEXT:    %[[M2:.*]] = asc.binary "mul" %[[H2]], %[[T]] : tensor<8xf32>
// CHECK-NEXT:    %[[A1:.*]] = asc.constant 0.25482959199999999 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[H1:.*]] = asc.binary "add" %[[M2]], %[[A1]] : tensor<8xf32>
// CHECK-NEXT:    %[[POLY:.*]] = asc.binary "mul" %[[H1]], %[[T]] : tensor<8xf32>
// CHECK-NEXT:    %[[XX:.*]] = asc.binary "mul" %x, %x : tensor<8xf32>
// CHECK-NEXT:    %[[NXX:.*]] = asc.unary "neg" %[[XX]] : tensor<8xf32>
// CHECK-NEXT:    %[[G:.*]] = asc.unary "exp" %[[NXX]] : tensor<8xf32>
// CHECK-NEXT:    %[[ONE2:.*]] = asc.constant 1.000000e+00 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[PG:.*]] = asc.binary "mul" %[[POLY]], %[[G]] : tensor<8xf32>
// CHECK-NEXT:    %[[Y:.*]] = asc.binary "sub" %[[ONE2]], %[[PG]] : tensor<8xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = asc.constant 0.000000e+00 : f64 -> tensor<8xf32>
// CHECK-NEXT:    %[[NEG:.*]] = asc.compare "lt" %x, %[[ZERO]] : tensor<8xf32> -> tensor<8xi1>
// CHECK-NEXT:    %[[NY:.*]] = asc.unary "neg" %[[Y]] : tensor<8xf32>
// CHECK-NEXT:    %y = asc.select %[[NEG]], %[[NY]], %[[Y]] : tensor<8xi1>, tensor<8xf32>
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
