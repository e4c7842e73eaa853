// RUN: pyasc-opt %s | pyasc-opt | filecheck %s
// RUN: pyasc-opt %s --print-op-generic | pyasc-opt | filecheck %s
// RUN: pyasc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The data-movement ops asc.transpose, asc.concat and asc.slice print in their custom form,
// parse back to the same text, and their generic form parses back too.

// CHECK-LABEL: func.func @layout(
func.func @layout(%x: tensor<4x40xf32>, %y: tensor<2x40xf32>, %h: tensor<2x3x5xf16>) -> (tensor<40x4xf32>, tensor<6x40xf32>, tensor<1x2x5xf16>, tensor<5x2x3xf16>) {
  // CHECK-NEXT: %t = asc.transpose %x {perm = array<i64: 1, 0>} : tensor<4x40xf32> -> tensor<40x4xf32>
  %t = asc.transpose %x {perm = array<i64: 1, 0>} : tensor<4x40xf32> -> tensor<40x4xf32>
  // CHECK-NEXT: %c = asc.concat %x, %y {axis = 0 : i64} : tensor<4x40xf32>, tensor<2x40xf32> -> tensor<6x40xf32>
  %c = asc.concat %x, %y {axis = 0 : i64} : tensor<4x40xf32>, tensor<2x40xf32> -> tensor<6x40xf32>
  // CHECK-NEXT: %s = asc.slice %h {offsets = array<i64: 1, 1, 0>, sizes = array<i64: 1, 2, 5>} : tensor<2x3x5xf16> -> tensor<1x2x5xf16>
  %s = asc.slice %h {offsets = array<i64: 1, 1, 0>, sizes = array<i64: 1, 2, 5>} : tensor<2x3x5xf16> -> tensor<1x2x5xf16>
  // CHECK-NEXT: %p = asc.transpose %h {perm = array<i64: 2, 0, 1>} : tensor<2x3x5xf16> -> tensor<5x2x3xf16>
  %p = asc.transpose %h {perm = array<i64: 2, 0, 1>} : tensor<2x3x5xf16> -> tensor<5x2x3xf16>
  // CHECK-NEXT: func.return %t, %c, %s, %p
  func.return %t, %c, %s, %p : tensor<40x4xf32>, tensor<6x40xf32>, tensor<1x2x5xf16>, tensor<5x2x3xf16>
}

// GENERIC: "asc.transpose"(%{{.*}}) <{perm = array<i64: 1, 0>}> : (tensor<4x40xf32>) -> tensor<40x4xf32>
// GENERIC: "asc.concat"(%{{.*}}, %{{.*}}) <{axis = 0 : i64}> : (tensor<4x40xf32>, tensor<2x40xf32>) -> tensor<6x40xf32>
// GENERIC: "asc.slice"(%{{.*}}) <{offsets = array<i64: 1, 1, 0>, sizes = array<i64: 1, 2, 5>}> : (tensor<2x3x5xf16>) -> tensor<1x2x5xf16>
