// RUN: pyasc-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The op round-trips and its verifier rejects shapes that are not attention.
// CHECK: asc.flash_attention %q, %k, %v mask %m : tensor<9xf32> {scale = 2.500000e-01 : f64, block_kv = #builtin.int<16>} : (tensor<2x5x8xf32>, tensor<2x9x8xf32>, tensor<2x9x4xf32>) -> tensor<2x5x4xf32>
func.func @ok(%q: tensor<2x5x8xf32>, %k: tensor<2x9x8xf32>, %v: tensor<2x9x4xf32>, %m: tensor<9xf32>) -> tensor<2x5x4xf32> {
  %o = asc.flash_attention %q, %k, %v mask %m : tensor<9xf32> {scale = 0.25 : f64, block_kv = #builtin.int<16>} : (tensor<2x5x8xf32>, tensor<2x9x8xf32>, tensor<2x9x4xf32>) -> tensor<2x5x4xf32>
  func.return %o : tensor<2x5x4xf32>
}

// -----

func.func @bad_d(%q: tensor<5x8xf32>, %k: tensor<9x7xf32>, %v: tensor<9x4xf32>) -> tensor<5x4xf32> {
  // expected-error @+1 {{do not form attention}}
  %o = asc.flash_attention %q, %k, %v {scale = 1.0 : f64, block_kv = #builtin.int<16>} : (tensor<5x8xf32>, tensor<9x7xf32>, tensor<9x4xf32>) -> tensor<5x4xf32>
  func.return %o : tensor<5x4xf32>
}

// -----

func.func @bad_mask(%q: tensor<5x8xf32>, %k: tensor<9x8xf32>, %v: tensor<9x4xf32>, %m: tensor<5x8xf32>) -> tensor<5x4xf32> {
  // expected-error @+1 {{mask must be f32 and broadcast to [5, 9]}}
  %o = asc.flash_attention %q, %k, %v mask %m : tensor<5x8xf32> {scale = 1.0 : f64, block_kv = #builtin.int<16>} : (tensor<5x8xf32>, tensor<9x8xf32>, tensor<9x4xf32>) -> tensor<5x4xf32>
  func.return %o : tensor<5x4xf32>
}

// -----

func.func @bad_block(%q: tensor<5x8xf32>, %k: tensor<9x8xf32>, %v: tensor<9x4xf32>) -> tensor<5x4xf32> {
  // expected-error @+1 {{block_kv must be >= 1}}
  %o = asc.flash_attention %q, %k, %v {scale = 1.0 : f64, block_kv = #builtin.int<0>} : (tensor<5x8xf32>, tensor<9x8xf32>, tensor<9x4xf32>) -> tensor<5x4xf32>
  func.return %o : tensor<5x4xf32>
}
