// RUN: pyasc-opt %s -p asc-raise-loops | filecheck %s
// An elementwise loop (vector_add, with a bias broadcast along the outer loop) becomes
// tensor-level asc ops: loads widen to f32, the store rounds to the array's dtype.

// CHECK-LABEL: func.func @vadd
// CHECK-NOT:     asc_loop.
// CHECK:         %[[A:.*]] = asc.cast %a : tensor<7xf16> -> tensor<7xf32>
// CHECK-NEXT:    %[[B:.*]] = asc.cast %b : tensor<7xf16> -> tensor<7xf32>
// CHECK-NEXT:    %[[S:.*]] = asc.binary "add" %[[A]], %[[B]] : tensor<7xf32>
// CHECK-NEXT:    %[[C:.*]] = asc.cast %[[S]] : tensor<7xf32> -> tensor<7xf16>
// CHECK-NEXT:    func.return %[[C]] : tensor<7xf16>
func.func @vadd(%a: tensor<7xf16>, %b: tensor<7xf16>) -> tensor<7xf16> {
  %c = asc_loop.alloc : memref<7xf16>
  asc_loop.for #builtin.int<0> to #builtin.int<7> step #builtin.int<1> {
  ^bb0(%i: index):
    %x = asc_loop.load %a[%i] : tensor<7xf16>
    %y = asc_loop.load %b[%i] : tensor<7xf16>
    %s = asc_loop.binary "add" %x, %y
    asc_loop.store %s, %c[%i] : memref<7xf16>
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %c : memref<7xf16> -> tensor<7xf16>
  func.return %r : tensor<7xf16>
}

// A value that depends on the outer loop only (exp(b[i])) is computed once per row, then
// broadcast along the inner loop.
// CHECK-LABEL: func.func @bias_rows
// CHECK:         %[[E:.*]] = asc.unary "exp" %b : tensor<3xf32>
// CHECK-NEXT:    %[[R:.*]] = asc.reshape %[[E]] : tensor<3xf32> -> tensor<3x1xf32>
// CHECK-NEXT:    %[[BR:.*]] = asc.broadcast %[[R]] : tensor<3x1xf32> -> tensor<3x5xf32>
// CHECK-NEXT:    %[[M:.*]] = asc.binary "mul" %x, %[[BR]] : tensor<3x5xf32>
// CHECK-NEXT:    func.return %[[M]] : tensor<3x5xf32>
func.func @bias_rows(%x: tensor<3x5xf32>, %b: tensor<3xf32>) -> tensor<3x5xf32> {
  %y = asc_loop.alloc : memref<3x5xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<3> step #builtin.int<1> {
  ^bb0(%i: index):
    asc_loop.for #builtin.int<0> to #builtin.int<5> step #builtin.int<1> {
    ^bb1(%j: index):
      %v = asc_loop.load %x[%i, %j] : tensor<3x5xf32>
      %w = asc_loop.load %b[%i] : tensor<3xf32>
      %e = asc_loop.unary "exp" %w
      %m = asc_loop.binary "mul" %v, %e
      asc_loop.store %m, %y[%i, %j] : memref<3x5xf32>
      asc_loop.yield
    }
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %y : memref<3x5xf32> -> tensor<3x5xf32>
  func.return %r : tensor<3x5xf32>
}

// An offset index x[i + 1] and a loop over part of the axis read slices of the argument.
// CHECK-LABEL: func.func @forward_difference
// CHECK:         %[[HI:.*]] = asc.slice %x {offsets = array<i64: 1>, sizes = array<i64: 5>} : tensor<6xf32> -> tensor<5xf32>
// CHECK:         %[[LO:.*]] = asc.slice %x {offsets = array<i64: 0>, sizes = array<i64: 5>} : tensor<6xf32> -> tensor<5xf32>
// CHECK:         asc.binary "sub" %[[HI]], %[[LO]] : tensor<5xf32>
func.func @forward_difference(%x: tensor<6xf32>) -> tensor<5xf32> {
  %y = asc_loop.alloc : memref<5xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<5> step #builtin.int<1> {
  ^bb0(%i: index):
    %one = arith.constant 1 : index
    %i1 = arith.addi %i, %one : index
    %a = asc_loop.load %x[%i1] : tensor<6xf32>
    %b = asc_loop.load %x[%i] : tensor<6xf32>
    %d = asc_loop.binary "sub" %a, %b
    asc_loop.store %d, %y[%i] : memref<5xf32>
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %y : memref<5xf32> -> tensor<5xf32>
  func.return %r : tensor<5xf32>
}
