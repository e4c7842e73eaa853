// RUN: pyasc-opt %s --split-input-file --verify-diagnostics
// RUN: not pyasc-opt %s --split-input-file 2>&1 | filecheck %s

// Tile-level ops whose constant offsets, counts or strides are out of range do not verify:
// negative values, blocks or counts past the end of a buffer, UB offsets and block strides
// that are not whole 32-byte DataBlocks. Run-time values are checked by the interpreter.

// CHECK-NOT: Traceback
// CHECK: tile-bounds.mlir:[[# @LINE + 5]]:3: error: Operation does not verify: asc.vunary: count 257 exceeds the 256 elements of the destination buffer
func.func @vunary_count(%a: memref<512xf32, #asc.scope<ub>>) {
  %c257 = arith.constant 257 : index
  %d = asc.alloc "tmp" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
  // expected-error @+1 {{asc.vunary: count 257 exceeds the 256 elements of the destination buffer}}
  asc.vunary "exp" %d, %a, %c257 : memref<256xf32, #asc.scope<ub>>, memref<512xf32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: tile-bounds.mlir:[[# @LINE + 4]]:3: error: Operation does not verify: asc.vbinary: count -1 is negative
func.func @vbinary_negative(%a: memref<256xf16, #asc.scope<ub>>) {
  %m1 = arith.constant -1 : index
  // expected-error @+1 {{asc.vbinary: count -1 is negative}}
  asc.vbinary "add" %a, %a, %a, %m1 : memref<256xf16, #asc.scope<ub>>, memref<256xf16, #asc.scope<ub>>, memref<256xf16, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: error: Operation does not verify: asc.vcompare: count 512 exceeds the 256 elements of the mask buffer
func.func @vcompare_mask(%a: memref<512xf32, #asc.scope<ub>>, %m: memref<256xi1, #asc.scope<ub>>) {
  %c512 = arith.constant 512 : index
  // expected-error @+1 {{count 512 exceeds the 256 elements of the mask buffer}}
  asc.vcompare "lt" %m, %a, %a, %c512 : memref<256xi1, #asc.scope<ub>>, memref<512xf32, #asc.scope<ub>>, memref<512xf32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: error: Operation does not verify: asc.vdup: count 4097 exceeds the 4096 elements of the destination buffer
func.func @vdup_count(%d: memref<4096xf16, #asc.scope<ub>>) {
  %c4097 = arith.constant 4097 : index
  // expected-error @+1 {{count 4097 exceeds the 4096}}
  asc.vdup %d, 1.0, %c4097 : memref<4096xf16, #asc.scope<ub>>
  func.return
}

// -----

// 7 blocks of 33 f32 from GM offset 300, 33 + 7 = 40 apart: the last block ends at element
// 300 + 6 x 40 + 33 = 573 > 513.
// CHECK: error: Operation does not verify: asc.copy_in: the GM blocks end at element 573 (offset 300 + (7 - 1) x stride 40 + length 33), past the 513 elements of the GM buffer
func.func @copy_in_gm_end(%g: memref<513xf32, #asc.scope<gm>>) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %c33 = arith.constant 33 : index
  %c40 = arith.constant 40 : index
  %c300 = arith.constant 300 : index
  %u = asc.alloc "in" {buffers = 1 : i64} : memref<512xf32, #asc.scope<ub>>
  // expected-error @+1 {{the GM blocks end at element 573}}
  asc.copy_in %g[%c300] -> %u[%c0] blocks %c7 x %c33 gap %c7 stride %c40 : memref<513xf32, #asc.scope<gm>>, memref<512xf32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: error: Operation does not verify: asc.copy_out: the UB blocks end at element 264 (offset 8 + (1 - 1) x stride 256 + length 256), past the 256 elements of the UB buffer
func.func @copy_out_ub_end(%g: memref<4097xf32, #asc.scope<gm>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  %u = asc.alloc "out" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
  // expected-error @+1 {{the UB blocks end at element 264}}
  asc.copy_out %u[%c8] -> %g[%c0] blocks %c1 x %c256 gap %c0 stride %c256 : memref<256xf32, #asc.scope<ub>>, memref<4097xf32, #asc.scope<gm>>
  func.return
}

// -----

// UB offset 4 f32 = 16 bytes: not a DataBlock boundary.
// CHECK: error: Operation does not verify: asc.copy_in: UB offset 4 (16 bytes) is not a multiple of the 32-byte DataBlock
func.func @copy_in_ub_misaligned(%g: memref<64xf32, #asc.scope<gm>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : index
  %u = asc.alloc "in" {buffers = 1 : i64} : memref<64xf32, #asc.scope<ub>>
  // expected-error @+1 {{UB offset 4 (16 bytes) is not a multiple of the 32-byte DataBlock}}
  asc.copy_in %g[%c0] -> %u[%c4] blocks %c1 x %c7 gap %c0 stride %c7 : memref<64xf32, #asc.scope<gm>>, memref<64xf32, #asc.scope<ub>>
  func.return
}

// -----

// Blocks of 33 fp16 pad to 48 elements in UB: a stride of 40 (80 bytes) is neither whole
// DataBlocks nor long enough; 32 (64 bytes) is aligned but too short.
// CHECK: error: Operation does not verify: asc.copy_in: UB block stride 40 (80 bytes) is not a multiple of the 32-byte DataBlock
// CHECK: error: Operation does not verify: asc.copy_in: UB block stride 32 is shorter than a block of 33 elements padded to the DataBlock (48)
func.func @copy_in_ub_stride(%g: memref<1024xf16, #asc.scope<gm>>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c33 = arith.constant 33 : index
  %c40 = arith.constant 40 : index
  %u = asc.alloc "in" {buffers = 1 : i64} : memref<256xf16, #asc.scope<ub>>
  // expected-error @+1 {{UB block stride 40 (80 bytes) is not a multiple of the 32-byte DataBlock}}
  asc.copy_in %g[%c0] -> %u[%c0] blocks %c4 x %c33 gap %c0 stride %c40 : memref<1024xf16, #asc.scope<gm>>, memref<256xf16, #asc.scope<ub>>
  // expected-error @+1 {{UB block stride 32 is shorter than a block of 33 elements padded to the DataBlock (48)}}
  asc.copy_in %g[%c0] -> %u[%c0] blocks %c4 x %c33 gap %c0 stride %c32 : memref<1024xf16, #asc.scope<gm>>, memref<256xf16, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: error: Operation does not verify: asc.copy_in: gm_offset -16 is negative
func.func @copy_in_negative(%g: memref<64xf32, #asc.scope<gm>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %m16 = arith.constant -16 : index
  %u = asc.alloc "in" {buffers = 1 : i64} : memref<64xf32, #asc.scope<ub>>
  // expected-error @+1 {{gm_offset -16 is negative}}
  asc.copy_in %g[%m16] -> %u[%c0] blocks %c1 x %c8 gap %c0 stride %c8 : memref<64xf32, #asc.scope<gm>>, memref<64xf32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: error: Operation does not verify: asc.vreduce: len 40 exceeds the row stride ls 32
func.func @vreduce_len(%s: memref<1024xf32, #asc.scope<ub>>, %d: memref<512xf32, #asc.scope<ub>>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c40 = arith.constant 40 : index
  // expected-error @+1 {{len 40 exceeds the row stride ls 32}}
  asc.vreduce "sum" "last" %d, %s, %s rows %c1 m %c1 len %c40 ls %c32 : memref<512xf32, #asc.scope<ub>>, memref<1024xf32, #asc.scope<ub>>, memref<1024xf32, #asc.scope<ub>>
  func.return
}

// -----

// Values known only at run time are not checked here (the interpreter checks them), and
// in-range constants verify.
func.func @in_range(%g: memref<513xf32, #asc.scope<gm>>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %u = asc.alloc "in" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
  asc.copy_in %g[%c256] -> %u[%c0] blocks %c16 x %c7 gap %c0 stride %c16 : memref<513xf32, #asc.scope<gm>>, memref<256xf32, #asc.scope<ub>>
  asc.vunary "exp" %u, %u, %n : memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>
  asc.vunary "exp" %u, %u, %c256 : memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>
  func.return
}
