// RUN: pyasc-opt %s -p asc-raise-loops --split-input-file --verify-diagnostics | filecheck %s
// RUN: not pyasc-opt %s -p asc-raise-loops --split-input-file 2>&1 | filecheck %s --check-prefix=EXIT

// Nests asc-raise-loops cannot raise are errors at the user's source line that say why.

// A strided loop.
// CHECK: k.py:3:5: error: this loop nest cannot be raised to vector ops: the loop runs range(0, 7, 2); strided loops are not raised
// CHECK-NEXT: hint: write the nest as an elementwise map
// EXIT: k.py:3:5: error: this loop nest cannot be raised to vector ops
// EXIT-NOT: Traceback
func.func @offset(%a: tensor<7xf32>) -> tensor<7xf32> {
  %c = asc_loop.alloc fill 0.0 : f64 : memref<7xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<7> step #builtin.int<2> {
  ^bb0(%i: index):
    %x = asc_loop.load %a[%i] : tensor<7xf32>
    asc_loop.store %x, %c[%i] : memref<7xf32>
    asc_loop.yield
  } {asc.loc = "k.py:3:5"}
  %r = asc_loop.to_tensor %c : memref<7xf32> -> tensor<7xf32>
  func.return %r : tensor<7xf32>
}

// -----

// A transpose in place: y[i, j] is written while y[j, i] is read (iterations depend on
// each other).
// CHECK: k.py:8:9: error: this loop nest cannot be raised to vector ops: the nest reads or writes one array at different indices (a dependence between iterations)
func.func @in_place(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = asc_loop.alloc fill 1.0 : f64 : memref<4x4xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
  ^bb0(%i: index):
    asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
    ^bb1(%j: index):
      %x = asc_loop.load %y[%j, %i] {asc.loc = "k.py:8:13"} : memref<4x4xf32>
      asc_loop.store %x, %y[%i, %j] {asc.loc = "k.py:8:9"} : memref<4x4xf32>
      asc_loop.yield
    }
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %y : memref<4x4xf32> -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}

// -----

// Reading an uninitialised local array.
// CHECK: k.py:12:9: error: this loop nest cannot be raised to vector ops: an element is read before it is written
func.func @uninitialised(%a: tensor<4xf32>) -> tensor<4xf32> {
  %y = asc_loop.alloc : memref<4xf32>
  %z = asc_loop.alloc : memref<4xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
  ^bb0(%i: index):
    %x = asc_loop.load %y[%i] {asc.loc = "k.py:12:9"} : memref<4xf32>
    asc_loop.store %x, %z[%i] : memref<4xf32>
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %z : memref<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Half of the array written by the loop.
// CHECK: k.py:14:9: error: this loop nest cannot be raised to vector ops: the loops do not cover the array (a partial write)
func.func @partial(%a: tensor<4xf32>) -> tensor<8xf32> {
  %y = asc_loop.alloc fill 0.0 : f64 : memref<8xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
  ^bb0(%i: index):
    %x = asc_loop.load %a[%i] : tensor<4xf32>
    asc_loop.store %x, %y[%i] {asc.loc = "k.py:14:9"} : memref<8xf32>
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %y : memref<8xf32> -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// -----

// Two different reductions into one array inside one loop are not separable.
// CHECK: k.py:21:9: error: this loop nest cannot be raised to vector ops: the reduced array is also read or written inside the reduction's loop
func.func @mixed_reductions(%x: tensor<4x9xf32>) -> tensor<4xf32> {
  %s = asc_loop.alloc fill 0.0 : f64 : memref<4xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
  ^bb0(%i: index):
    asc_loop.for #builtin.int<0> to #builtin.int<9> step #builtin.int<1> {
    ^bb1(%j: index):
      %a = asc_loop.load %s[%i] : memref<4xf32>
      %v = asc_loop.load %x[%i, %j] : tensor<4x9xf32>
      %n = asc_loop.binary "add" %a, %v
      asc_loop.store %n, %s[%i] : memref<4xf32>
      %b = asc_loop.load %s[%i] {asc.loc = "k.py:21:9"} : memref<4xf32>
      %m = asc_loop.binary "max" %b, %v
      asc_loop.store %m, %s[%i] : memref<4xf32>
      asc_loop.yield
    }
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %s : memref<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
