// RUN: not pyasc-opt %s --split-input-file -t ascendc 2>&1 | filecheck %s
// RUN: not pyasc-opt %s --split-input-file -p asc-buffer-alloc,convert-asc-to-ascendc -t ascendc 2>&1 | filecheck %s --check-prefix=LOWERED

// `-t ascendc` prints ascendc-level kernels only: IR that is not lowered, or a kernel without
// its tiling struct, is an error at the offending op, not an empty or broken kernel.

// CHECK-NOT:  Traceback
// CHECK:      pyasc-opt: error: -t ascendc: the module has no kernel (a func.func with the asc.kernel attribute) to emit
// CHECK-NEXT: hint: lower tensor-level IR first: -p asc-to-ascendc
func.func @tensor_level(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = asc.unary "exp" %x : tensor<16xf32>
  func.return %e : tensor<16xf32>
}

// -----

// The tile-level kernel is not lowered: the first asc op is reported where it is.
// CHECK:      target-ascendc.mlir:[[# @LINE + 11]]:3: error: -t ascendc: 'asc.alloc' is not lowered to the ascendc dialect
// CHECK-NEXT:   %in = asc.alloc "in" {buffers = 1 : i64, offset = 0 : i64} : memref<256xf32, #asc.scope<ub>>
// CHECK-NEXT:   ^
// CHECK-NEXT: hint: run -p convert-asc-to-ascendc (after asc-buffer-alloc), or -p asc-to-ascendc from the tensor level
// LOWERED:    target-ascendc.mlir:[[# @LINE + 3]]:1: error: -t ascendc: kernel @k has no asc.tiling attribute (its tiling struct)
// LOWERED-NEXT: func.func @k(
// LOWERED:    hint: kernels get asc.tiling from asc-tile, asc-lower-layout or asc-lower-cube; hand-written kernels need asc.tiling = {...}
func.func @k(%gx: memref<256xf32, #asc.scope<gm>>, %gy: memref<256xf32, #asc.scope<gm>>) attributes {asc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %in = asc.alloc "in" {buffers = 1 : i64, offset = 0 : i64} : memref<256xf32, #asc.scope<ub>>
  asc.copy_in %gx[%c0] -> %in[%c0] blocks %c1 x %c256 gap %c0 stride %c256 : memref<256xf32, #asc.scope<gm>>, memref<256xf32, #asc.scope<ub>>
  %out = asc.alloc "out" {buffers = 1 : i64, offset = 1024 : i64} : memref<256xf32, #asc.scope<ub>>
  asc.vunary "exp" %out, %in, %c256 : memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>
  asc.copy_out %out[%c0] -> %gy[%c0] blocks %c1 x %c256 gap %c0 stride %c256 : memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<gm>>
  func.return
}

// -----

// A tiling field the kernel's struct does not have is a verifier error.
// CHECK:      target-ascendc.mlir:[[# @LINE + 5]]:3: error: Operation does not verify: asc.tiling_field: kernel @k2 has no tiling field 'units_rem' (its asc.tiling has: units)
// CHECK-NEXT:   %r = asc.tiling_field "units_rem"
// CHECK-NEXT:   ^
// LOWERED:    target-ascendc.mlir:[[# @LINE + 2]]:3: error: Operation does not verify: asc.tiling_field: kernel @k2 has no tiling field 'units_rem'
func.func @k2(%gx: memref<256xf32, #asc.scope<gm>>) attributes {asc.kernel, asc.tiling = {units = 1 : i64}} {
  %r = asc.tiling_field "units_rem"
  func.return
}
