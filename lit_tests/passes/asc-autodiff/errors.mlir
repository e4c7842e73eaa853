// RUN: not pyasc-opt %s -p 'asc-autodiff{function=nope}' 2>&1 | filecheck %s --check-prefix=NAME

// A function option naming no function is an error (no traceback).
// NAME: error: asc-autodiff: no function @nope to differentiate (the module has ['attn', 'f'])
// NAME-NOT: Traceback
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = asc.unary "exp" %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// RUN: not pyasc-opt %s -p 'asc-autodiff{function=attn}' 2>&1 | filecheck %s --check-prefix=RULE
// An op without a derivative rule (the fused attention: forward-only) is an error at the user's line, with a hint.
// RULE-NOT: Traceback
// RULE: a.py:3:7: error: asc-autodiff: asc.flash_attention has no derivative rule
// RULE-NEXT: hint: write attention as softmax(q @ k.transpose(-1, -2) * scale + mask) @ v to differentiate it (pa.scaled_dot_product_attention is forward-only)
func.func @attn(%q: tensor<5x8xf32>, %k: tensor<9x8xf32>, %v: tensor<9x4xf32>) -> tensor<5x4xf32> {
  %o = asc.flash_attention %q, %k, %v {scale = 1.0 : f64, block_kv = #builtin.int<4>, asc.loc = "a.py:3:7"} : (tensor<5x8xf32>, tensor<9x8xf32>, tensor<9x4xf32>) -> tensor<5x4xf32>
  func.return %o : tensor<5x4xf32>
}
