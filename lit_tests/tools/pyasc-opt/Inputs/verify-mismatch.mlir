// Inputs of verify-diagnostics.mlir: annotations that do not match.

func.func @wrong_text(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown unary kind 'fooo'}}
  %y = asc.unary "foo" %x : tensor<4xf32>
  func.return
}

// -----

func.func @missing(%x: tensor<4xf32>) {
  // expected-error @+1 {{this never happens}}
  %y = asc.unary "exp" %x : tensor<4xf32>
  func.return
}

// -----

func.func @unexpected(%x: tensor<4xf32>) {
  %y = asc.unary "bar" %x : tensor<4xf32>
  func.return
}

func.func @wrong_line() { // expected-error @-1 {{at line 23}}
  func.return
}
