// RUN: not pyasc-opt %s -p 'asc-autodiff{function=nope}' 2>&1 | filecheck %s --check-prefix=NAME

// A function option naming no function is an error (no traceback).
// NAME: error: asc-autodiff: no function @nope to differentiate (the module has ['f'])
// NAME-NOT: Traceback
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = asc.unary "exp" %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
