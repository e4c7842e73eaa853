// RUN: not pyasc-opt %s -p asc-flash-attention,asc-fuse 2>&1 | filecheck %s

// No pass lowers asc.flash_attention to a kernel yet: asc-fuse refuses it at the user's line
// (never a traceback, never a module that still holds the op after the pipeline).
// CHECK-NOT: Traceback
// CHECK: a.py:3:7: error: asc.flash_attention has no kernel lowering yet
// CHECK-NEXT: hint: run the pipeline without asc-flash-attention
func.func @plain(%q: tensor<5x8xf32>, %k: tensor<9x8xf32>, %v: tensor<9x4xf32>) -> tensor<5x4xf32> {
  %o = asc.flash_attention %q, %k, %v {scale = 1.0 : f64, block_kv = #builtin.int<4>, asc.loc = "a.py:3:7"} : (tensor<5x8xf32>, tensor<9x8xf32>, tensor<9x4xf32>) -> tensor<5x4xf32>
  func.return %o : tensor<5x4xf32>
}
