// RUN: pyasc-opt %s -p asc-fuse | filecheck %s

// Every function's tensor-level asc ops become ONE asc.fusion: its inputs are the values
// defined outside (read from GM once), its results the values used outside (written once).

// The decomposed layer-norm-like example: reduction, broadcasts, elementwise, constants.
// CHECK-LABEL: func.func @ln(
// CHECK-NEXT:    %[[F:.*]] = asc.fusion(%x, %w) {asc.loc = "ln.py:5:4"} : (tensor<4x40xf32>, tensor<40xf32>) -> tensor<4x40xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: tensor<4x40xf32>, %[[W:.*]]: tensor<40xf32>):
// CHECK-NEXT:      %[[S:.*]] = asc.reduce "sum" %[[X]] {asc.loc = "ln.py:5:4", axes = array<i64: 1>, keepdim = true} : tensor<4x40xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %[[C:.*]] = asc.constant 2.500000e-02 : f64 -> tensor<4x1xf32>
// CHECK-NEXT:      %s = asc.binary "mul" %[[S]], %[[C]] : tensor<4x1xf32>
// CHECK-NEXT:      %sb = asc.broadcast %s : tensor<4x1xf32> -> tensor<4x40xf32>
// CHECK-NEXT:      %d = asc.binary "sub" %[[X]], %sb : tensor<4x40xf32>
// CHECK-NEXT:      %wb = asc.broadcast %[[W]] : tensor<40xf32> -> tensor<4x40xf32>
// CHECK-NEXT:      %y = asc.binary "mul" %d, %wb : tensor<4x40xf32>
// CHECK-NEXT:      %n = asc.unary "neg" %y : tensor<4x40xf32>
// CHECK-NEXT:      %e = asc.unary "exp" %n : tensor<4x40xf32>
// CHECK-NEXT:      %one = asc.constant 1.000000e+00 : f64 -> tensor<4x40xf32>
// CHECK-NEXT:      %p = asc.binary "add" %e, %one : tensor<4x40xf32>
// CHECK-NEXT:      %r = asc.unary "reciprocal" %p : tensor<4x40xf32>
// CHECK-NEXT:      asc.yield %r : tensor<4x40xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[F]] : tensor<4x40xf32>
// CHECK-NEXT:  }
func.func @ln(%x: tensor<4x40xf32>, %w: tensor<40xf32>) -> tensor<4x40xf32> {
  %0 = asc.reduce "sum" %x {axes = array<i64: 1>, keepdim = true, asc.loc = "ln.py:5:4"} : tensor<4x40xf32> -> tensor<4x1xf32>
  %1 = asc.constant 2.500000e-02 : f64 -> tensor<4x1xf32>
  %s = asc.binary "mul" %0, %1 : tensor<4x1xf32>
  %sb = asc.broadcast %s : tensor<4x1xf32> -> tensor<4x40xf32>
  %d = asc.binary "sub" %x, %sb : tensor<4x40xf32>
  %wb = asc.broadcast %w : tensor<40xf32> -> tensor<4x40xf32>
  %y = asc.binary "mul" %d, %wb : tensor<4x40xf32>
  %n = asc.unary "neg" %y : tensor<4x40xf32>
  %e = asc.unary "exp" %n : tensor<4x40xf32>
  %one = asc.constant 1.000000e+00 : f64 -> tensor<4x40xf32>
  %p = asc.binary "add" %e, %one : tensor<4x40xf32>
  %r = asc.unary "reciprocal" %p : tensor<4x40xf32>
  func.return %r : tensor<4x40xf32>
}

// The group's results follow the function's results, in return order (the launcher passes the
// result buffers in that order), and a value returned twice is written twice; an input used
// twice is passed once; a value only used inside (%t) stays inside.
// CHECK-LABEL: func.func @multi_out(
// CHECK-NEXT:    %[[B:.*]], %[[A1:.*]], %[[A2:.*]] = asc.fusion(%x, %z) : (tensor<16xf16>, tensor<16xf16>) -> (tensor<16xf16>, tensor<16xf16>, tensor<16xf16>) {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: tensor<16xf16>, %[[Z:.*]]: tensor<16xf16>):
// CHECK-NEXT:      %a = asc.unary "exp" %[[X]] : tensor<16xf16>
// CHECK-NEXT:      %t = asc.binary "add" %a, %[[X]] : tensor<16xf16>
// CHECK-NEXT:      %b = asc.binary "max" %t, %[[Z]] : tensor<16xf16>
// CHECK-NEXT:      asc.yield %b, %a, %a : tensor<16xf16>, tensor<16xf16>, tensor<16xf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[B]], %[[A1]], %[[A2]] : tensor<16xf16>, tensor<16xf16>, tensor<16xf16>
func.func @multi_out(%x: tensor<16xf16>, %z: tensor<16xf16>) -> (tensor<16xf16>, tensor<16xf16>, tensor<16xf16>) {
  %a = asc.unary "exp" %x : tensor<16xf16>
  %t = asc.binary "add" %a, %x : tensor<16xf16>
  %b = asc.binary "max" %t, %z : tensor<16xf16>
  func.return %b, %a, %a : tensor<16xf16>, tensor<16xf16>, tensor<16xf16>
}

// A kernel (asc.kernel) is never fused.
// CHECK-LABEL: func.func @already_kernel(
// CHECK-SAME:      attributes {asc.kernel}
// CHECK-NEXT:    %a = asc.unary "exp" %x : tensor<16xf32>
// CHECK-NEXT:    func.return
func.func @already_kernel(%x: tensor<16xf32>) attributes {asc.kernel} {
  %a = asc.unary "exp" %x : tensor<16xf32>
  func.return
}

// A function that returns its input unchanged still gets a kernel: one that copies it (the
// launcher always writes fresh result buffers).
// CHECK-LABEL: func.func @nothing(
// CHECK-NEXT:    %[[F:.*]] = asc.fusion(%x) : (tensor<16xf32>) -> tensor<16xf32> {
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: tensor<16xf32>):
// CHECK-NEXT:      asc.yield %[[X]] : tensor<16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[F]] : tensor<16xf32>
func.func @nothing(%x: tensor<16xf32>) -> tensor<16xf32> {
  func.return %x : tensor<16xf32>
}
