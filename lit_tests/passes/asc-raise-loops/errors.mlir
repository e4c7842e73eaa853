// RUN: pyasc-opt %s -p asc-raise-loops --split-input-file --verify-diagnostics | filecheck %s
// RUN: not pyasc-opt %s -p asc-raise-loops --split-input-file 2>&1 | filecheck %s --check-prefix=EXIT

// What stays an error (nests that cannot be raised run as scalar loops: fallback.mlir):
// reading a local array that is never written, at the user's source line.
// Reading an uninitialised local array.
// CHECK: k.py:12:9: error: this loop nest cannot be raised to vector ops: an element is read before it is written
// EXIT: k.py:12:9: error: this loop nest cannot be raised to vector ops
// EXIT-NOT: Traceback
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

