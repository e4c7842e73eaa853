// RUN: pyasc-opt %s -p asc-raise-loops | filecheck %s
// A store inside a loop its index does not name, of the form s[i] = s[i] op f, is a
// reduction over that loop: the initial state combined with asc.reduce.

// Row sums into a zero-filled array: the zero fill is dropped.
// CHECK-LABEL: func.func @rowsum
// CHECK-NOT:     asc_loop.
// CHECK:         %[[S:.*]] = asc.reduce "sum" %x {axes = array<i64: 1>, keepdim = false} : tensor<4x9xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[S]] : tensor<4xf32>
func.func @rowsum(%x: tensor<4x9xf32>) -> tensor<4xf32> {
  %s = asc_loop.alloc fill 0.0 : f64 : memref<4xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
  ^bb0(%i: index):
    asc_loop.for #builtin.int<0> to #builtin.int<9> step #builtin.int<1> {
    ^bb1(%j: index):
      %acc = asc_loop.load %s[%i] : memref<4xf32>
      %v = asc_loop.load %x[%i, %j] : tensor<4x9xf32>
      %n = asc_loop.binary "add" %acc, %v
      asc_loop.store %n, %s[%i] : memref<4xf32>
      asc_loop.yield
    }
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %s : memref<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// A row max from a -inf fill keeps the combination with the initial state.
// CHECK-LABEL: func.func @rowmax
// CHECK:         %[[I:.*]] = asc.constant 0xfff0000000000000 : f64 -> tensor<4xf16>
// CHECK:         %[[M:.*]] = asc.reduce "max" %{{.*}} {axes = array<i64: 1>, keepdim = false} : tensor<4x9xf32> -> tensor<4xf32>
// CHECK:         asc.binary "max" %{{.*}}, %[[M]] : tensor<4xf32>
func.func @rowmax(%x: tensor<4x9xf16>) -> tensor<4xf16> {
  %s = asc_loop.alloc fill 0xFFF0000000000000 : f64 : memref<4xf16>
  asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
  ^bb0(%i: index):
    asc_loop.for #builtin.int<0> to #builtin.int<9> step #builtin.int<1> {
    ^bb1(%j: index):
      %acc = asc_loop.load %s[%i] : memref<4xf16>
      %v = asc_loop.load %x[%i, %j] : tensor<4x9xf16>
      %n = asc_loop.binary "max" %acc, %v
      asc_loop.store %n, %s[%i] : memref<4xf16>
      asc_loop.yield
    }
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %s : memref<4xf16> -> tensor<4xf16>
  func.return %r : tensor<4xf16>
}

// A scalar variable outside every loop (s = 0.0; for i: s += x[i]) is a one-element tensor:
// the full reduction keeps its dim, and a later map reads it broadcast.
// CHECK-LABEL: func.func @centered
// CHECK:         %[[S:.*]] = asc.reduce "sum" %x {axes = array<i64: 0>, keepdim = true} : tensor<6xf32> -> tensor<1xf32>
// CHECK:         %[[B:.*]] = asc.broadcast %[[S]] : tensor<1xf32> -> tensor<6xf32>
// CHECK-NEXT:    asc.binary "sub" %x, %[[B]] : tensor<6xf32>
func.func @centered(%x: tensor<6xf32>) -> tensor<6xf32> {
  %s = asc_loop.alloc : memref<f32>
  %zero = asc_loop.const 0.0 : f64
  asc_loop.store %zero, %s[] : memref<f32>
  asc_loop.for #builtin.int<0> to #builtin.int<6> step #builtin.int<1> {
  ^bb0(%i: index):
    %acc = asc_loop.load %s[] : memref<f32>
    %v = asc_loop.load %x[%i] : tensor<6xf32>
    %n = asc_loop.binary "add" %acc, %v
    asc_loop.store %n, %s[] : memref<f32>
    asc_loop.yield
  }
  %y = asc_loop.alloc : memref<6xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<6> step #builtin.int<1> {
  ^bb0(%i: index):
    %v = asc_loop.load %x[%i] : tensor<6xf32>
    %t = asc_loop.load %s[] : memref<f32>
    %d = asc_loop.binary "sub" %v, %t
    asc_loop.store %d, %y[%i] : memref<6xf32>
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %y : memref<6xf32> -> tensor<6xf32>
  func.return %r : tensor<6xf32>
}
