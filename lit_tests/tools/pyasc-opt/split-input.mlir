// RUN: not pyasc-opt %s --split-input-file 2>&1 | filecheck %s

// With --split-input-file every chunk is processed: the errors of each chunk are reported,
// the chunks that are fine are printed, and the exit status is 1 if any chunk failed.

// CHECK-NOT:  Traceback
// CHECK:      split-input.mlir:[[# @LINE + 4]]:3: error: Operation does not verify: asc.unary: unknown unary kind 'foo'
// CHECK-NEXT:   %y = asc.unary "foo" %x : tensor<4xf32>
// CHECK-NEXT:   ^
func.func @first(%x: tensor<4xf32>) {
  %y = asc.unary "foo" %x : tensor<4xf32>
  func.return
}

// -----

// CHECK:      func.func @fine
func.func @fine(%x: tensor<4xf32>) {
  func.return
}

// -----

// CHECK:      split-input.mlir:[[# @LINE + 3]]:3: error: Operation does not verify: asc.binary: unknown binary kind 'pow'
// CHECK-NOT:  Traceback
func.func @third(%x: tensor<4xf32>) {
  %y = asc.binary "pow" %x, %x : tensor<4xf32>
  func.return
}

// -----

// CHECK:      split-input.mlir:[[# @LINE + 2]]:3: error: Operation asc.nope is not registered
func.func @fourth() {
  asc.nope
}
