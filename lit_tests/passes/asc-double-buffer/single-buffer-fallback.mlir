// RUN: pyasc-opt %s -p asc-decompose,asc-fuse,asc-tile,asc-double-buffer,asc-buffer-alloc | filecheck %s

// A 20000-element f32 row fits UB only single-buffered (input 80384 B + reduction work
// 80384 B; double-buffered the input alone would need 160768 B more than the 188160 usable
// minus the work buffer). asc-tile falls back to one buffer and records it; asc-double-buffer
// then keeps one copy instead of overflowing.

func.func @rowsum(%x: tensor<3x20000xf32>) -> tensor<3x1xf32> {
  %s = asc.reduce "sum" %x {axes = array<i64: 1>, keepdim = true} : tensor<3x20000xf32> -> tensor<3x1xf32>
  func.return %s : tensor<3x1xf32>
}

// CHECK: func.func @rowsum_kernel
// CHECK-SAME: asc.max_buffers = 1 : i64
// CHECK: asc.alloc "in" {buffers = 1 : i64, offset = 0 : i64} : memref<20096xf32, #asc.scope<ub>>
// CHECK: asc.alloc "out" {buffers = 1 : i64
