// RUN: pyasc-opt %s -p asc-raise-loops | filecheck %s
// Contractions become asc.matmul (the Cube): the textbook triple loop with a scalar
// accumulator (a rank-0 array expanded over i, j) and the C[i, j] += A[i, k] * B[k, j] form.

// CHECK-LABEL: func.func @textbook
// CHECK-NOT:     asc_loop.
// CHECK:         %[[M:.*]] = asc.matmul %a, %b {transpose_a = false, transpose_b = false} : (tensor<3x4xf16>, tensor<4x5xf16>) -> tensor<3x5xf32>
// CHECK-NEXT:    %[[C:.*]] = asc.cast %[[M]] : tensor<3x5xf32> -> tensor<3x5xf16>
// CHECK-NEXT:    func.return %[[C]] : tensor<3x5xf16>
func.func @textbook(%a: tensor<3x4xf16>, %b: tensor<4x5xf16>) -> tensor<3x5xf16> {
  %c = asc_loop.alloc : memref<3x5xf16>
  asc_loop.for #builtin.int<0> to #builtin.int<3> step #builtin.int<1> {
  ^bb0(%i: index):
    asc_loop.for #builtin.int<0> to #builtin.int<5> step #builtin.int<1> {
    ^bb1(%j: index):
      %acc = asc_loop.alloc : memref<f32>
      %zero = asc_loop.const 0.0 : f64
      asc_loop.store %zero, %acc[] : memref<f32>
      asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
      ^bb2(%k: index):
        %s = asc_loop.load %acc[] : memref<f32>
        %x = asc_loop.load %a[%i, %k] : tensor<3x4xf16>
        %y = asc_loop.load %b[%k, %j] : tensor<4x5xf16>
        %p = asc_loop.binary "mul" %x, %y
        %n = asc_loop.binary "add" %s, %p
        asc_loop.store %n, %acc[] : memref<f32>
        asc_loop.yield
      }
      %r = asc_loop.load %acc[] : memref<f32>
      asc_loop.store %r, %c[%i, %j] : memref<3x5xf16>
      asc_loop.yield
    }
    asc_loop.yield
  }
  %t = asc_loop.to_tensor %c : memref<3x5xf16> -> tensor<3x5xf16>
  func.return %t : tensor<3x5xf16>
}

// Loop order i, k, j and B read as b[j, k] (a transposed operand).
// CHECK-LABEL: func.func @accumulate_bt
// CHECK:         %[[M:.*]] = asc.matmul %a, %b {transpose_a = false, transpose_b = true} : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    func.return %[[M]] : tensor<3x5xf32>
func.func @accumulate_bt(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) -> tensor<3x5xf32> {
  %c = asc_loop.alloc fill 0.0 : f64 : memref<3x5xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<3> step #builtin.int<1> {
  ^bb0(%i: index):
    asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
    ^bb1(%k: index):
      asc_loop.for #builtin.int<0> to #builtin.int<5> step #builtin.int<1> {
      ^bb2(%j: index):
        %s = asc_loop.load %c[%i, %j] : memref<3x5xf32>
        %x = asc_loop.load %a[%i, %k] : tensor<3x4xf32>
        %y = asc_loop.load %b[%j, %k] : tensor<5x4xf32>
        %p = asc_loop.binary "mul" %x, %y
        %n = asc_loop.binary "add" %s, %p
        asc_loop.store %n, %c[%i, %j] : memref<3x5xf32>
        asc_loop.yield
      }
      asc_loop.yield
    }
    asc_loop.yield
  }
  %t = asc_loop.to_tensor %c : memref<3x5xf32> -> tensor<3x5xf32>
  func.return %t : tensor<3x5xf32>
}
