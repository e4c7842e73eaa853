// RUN: pyasc-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// One case per verifier error of the asc dialect, in file order. Each CHECK matches the
// annotation xDSL prints under the offending op, so it also pins which op is rejected.

// ==== tensor level ====

// CHECK: Operation does not verify: asc.unary: unknown unary kind 'foo'; expected one of neg, exp, log, sqrt, rsqrt, abs, relu, reciprocal, sin, cos, sigmoid, tanh, erf, gelu, softplus
func.func @bad_unary_kind(%x: tensor<4xf32>) {
  %y = asc.unary "foo" %x : tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.unary: operand must be a tensor of f16, bf16 or f32, got tensor<4xi32>
func.func @unary_int_tensor(%x: tensor<4xi32>) {
  %y = asc.unary "exp" %x : tensor<4xi32>
  func.return
}

// -----

// CHECK: Operation does not verify: result 'result' at position 0 does not verify:
// CHECK-NEXT: attribute tensor<4xf32> expected from variable 'T', but got tensor<4xf16>
func.func @unary_result_type(%x: tensor<4xf32>) {
  %y = "asc.unary"(%x) <{kind = "exp"}> : (tensor<4xf32>) -> tensor<4xf16>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.binary: unknown binary kind 'pow'; expected one of add, sub, mul, div, max, min
func.func @bad_binary_kind(%x: tensor<4xf32>) {
  %y = asc.binary "pow" %x, %x : tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: operand 'rhs' at position 1 does not verify:
// CHECK-NEXT: attribute tensor<4xf32> expected from variable 'T', but got tensor<4xf16>
func.func @binary_mismatched_types(%x: tensor<4xf32>, %z: tensor<4xf16>) {
  %y = "asc.binary"(%x, %z) <{kind = "add"}> : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.compare: unknown predicate 'foo'; expected one of lt, gt, eq, le, ge, ne
func.func @bad_predicate(%x: tensor<4xf32>) {
  %y = asc.compare "foo" %x, %x : tensor<4xf32> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.compare: result must be an i1 tensor of the operand shape
func.func @compare_result_not_mask(%x: tensor<4xf32>) {
  %y = asc.compare "lt" %x, %x : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.select: condition must be an i1 tensor of shape [4]
func.func @select_cond_not_i1(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  %y = asc.select %c, %x, %x : tensor<4xf32>, tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.select: condition must be an i1 tensor of shape [4]
func.func @select_cond_shape(%c: tensor<5xi1>, %x: tensor<4xf32>) {
  %y = asc.select %c, %x, %x : tensor<5xi1>, tensor<4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.cast: shapes must match
func.func @cast_shape(%x: tensor<4xf32>) {
  %y = asc.cast %x : tensor<4xf32> -> tensor<8xf16>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.cast: result must be a tensor of f16, bf16 or f32, got tensor<4xi32>
func.func @cast_to_int(%x: tensor<4xf32>) {
  %y = asc.cast %x : tensor<4xf32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.broadcast: cannot broadcast [4] to [3, 5]
func.func @bad_broadcast(%x: tensor<4xf32>) {
  %y = asc.broadcast %x : tensor<4xf32> -> tensor<3x5xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.broadcast: cannot broadcast [3, 4] to [1, 4]
func.func @broadcast_shrinks(%x: tensor<3x4xf32>) {
  %y = asc.broadcast %x : tensor<3x4xf32> -> tensor<1x4xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.broadcast: dtype must not change
func.func @broadcast_dtype(%x: tensor<4xf32>) {
  %y = asc.broadcast %x : tensor<4xf32> -> tensor<3x4xf16>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.reduce: unknown reduce kind 'prod'; expected one of sum, max, min, mean, var
func.func @bad_reduce_kind(%x: tensor<4x8xf32>) {
  %y = asc.reduce "prod" %x {axes = array<i64: 1>, keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.reduce: axes [2] must be sorted, unique and in [0, 2)
func.func @reduce_axis_out_of_range(%x: tensor<4x8xf32>) {
  %y = asc.reduce "sum" %x {axes = array<i64: 2>, keepdim = true} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.reduce: axes [1, 0] must be sorted, unique and in [0, 2)
func.func @reduce_axes_unsorted(%x: tensor<4x8xf32>) {
  %y = asc.reduce "sum" %x {axes = array<i64: 1, 0>, keepdim = true} : tensor<4x8xf32> -> tensor<1x1xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.reduce: axes [1, 1] must be sorted, unique and in [0, 2)
func.func @reduce_axes_repeated(%x: tensor<4x8xf32>) {
  %y = asc.reduce "sum" %x {axes = array<i64: 1, 1>, keepdim = true} : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.reduce: axes [] must be sorted, unique and in [0, 2)
func.func @reduce_no_axes(%x: tensor<4x8xf32>) {
  %y = asc.reduce "sum" %x {axes = array<i64>, keepdim = true} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.reduce: result type must be tensor<4xf32>
func.func @reduce_result_keepdim(%x: tensor<4x8xf32>) {
  %y = asc.reduce "sum" %x {axes = array<i64: 1>, keepdim = false} : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.reshape: tensor<4x8xf32> and tensor<30xf32> differ in dtype or element count
func.func @reshape_count(%x: tensor<4x8xf32>) {
  %y = asc.reshape %x : tensor<4x8xf32> -> tensor<30xf32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.constant: result must be a tensor of f16, bf16 or f32, got tensor<4xi32>
func.func @constant_int() {
  %y = asc.constant 1.0 : f64 -> tensor<4xi32>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.fusion: block arguments must match the inputs
func.func @fusion_args(%x: tensor<4xf32>) {
  %y = asc.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf16>):
    %e = asc.unary "exp" %a : tensor<4xf16>
    asc.yield %e : tensor<4xf16>
  }
  func.return
}

// -----

// CHECK: Operation does not verify: asc.fusion: asc.yield must give the results' types
func.func @fusion_yield(%x: tensor<4xf32>) {
  %y = asc.fusion(%x) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf32>):
    %e = asc.unary "exp" %a : tensor<4xf32>
    asc.yield %e : tensor<4xf32>
  }
  func.return
}

// -----

// CHECK: Operation does not verify: 'asc.yield' expects parent op 'asc.fusion'
func.func @yield_outside_fusion(%x: tensor<4xf32>) {
  asc.yield %x : tensor<4xf32>
}

// -----

// ==== tile level ====

// CHECK: Operation does not verify: asc.alloc: unknown role 'scratch'; expected one of in, out, tmp, const
func.func @alloc_role() {
  %a = asc.alloc "scratch" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  func.return
}

// -----

// 100 x f16 = 200 bytes: not a whole number of 32-byte DataBlocks.
// CHECK: Operation does not verify: asc.alloc: UB buffer of 200 bytes is not a multiple of the 32-byte DataBlock
func.func @alloc_not_32b_multiple() {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<100xf16, #asc.scope<ub>>
  func.return
}

// -----

// 128 x i1 = 16 bytes (masks are bits).
// CHECK: Operation does not verify: asc.alloc: UB buffer of 16 bytes is not a multiple of the 32-byte DataBlock
func.func @alloc_mask_16b() {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xi1, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.alloc: UB offset 48 is not 32-byte aligned
func.func @alloc_misaligned_offset() {
  %a = asc.alloc "tmp" {buffers = 1 : i64, offset = 48 : i64} : memref<128xf16, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.alloc: buffers must be 1..4
func.func @alloc_buffers() {
  %a = asc.alloc "in" {buffers = 5 : i64} : memref<128xf16, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.alloc: result must be a flat UB buffer memref<N x T, #asc.scope<ub>>, got memref<128xf16, #asc.scope<gm>>
func.func @alloc_in_gm() {
  %a = asc.alloc "in" {buffers = 1 : i64} : memref<128xf16, #asc.scope<gm>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.alloc: result must be a flat UB buffer memref<N x T, #asc.scope<ub>>, got memref<8x16xf16, #asc.scope<ub>>
func.func @alloc_not_flat() {
  %a = asc.alloc "in" {buffers = 1 : i64} : memref<8x16xf16, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.copy_in: GM and UB dtypes differ
func.func @copy_in_dtypes(%g: memref<64xf32, #asc.scope<gm>>, %i: index) {
  %a = asc.alloc "in" {buffers = 1 : i64} : memref<128xf16, #asc.scope<ub>>
  asc.copy_in %g[%i] -> %a[%i] blocks %i x %i gap %i stride %i : memref<64xf32, #asc.scope<gm>>, memref<128xf16, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.copy_in: GM operand must be a GM buffer, got memref<64xf32, #asc.scope<ub>>
func.func @copy_in_from_ub(%g: memref<64xf32, #asc.scope<ub>>, %i: index) {
  %a = asc.alloc "in" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  asc.copy_in %g[%i] -> %a[%i] blocks %i x %i gap %i stride %i : memref<64xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.copy_out: UB operand must be a flat UB buffer memref<N x T, #asc.scope<ub>>, got memref<64xf32, #asc.scope<gm>>
func.func @copy_out_gm_to_gm(%g: memref<64xf32, #asc.scope<gm>>, %i: index) {
  asc.copy_out %g[%i] -> %g[%i] blocks %i x %i gap %i stride %i : memref<64xf32, #asc.scope<gm>>, memref<64xf32, #asc.scope<gm>>
  func.return
}

// -----

// Composites have no vector instruction: asc-decompose must expand them first.
// CHECK: Operation does not verify: asc.vunary: unknown vector unary kind 'sigmoid'; expected one of neg, exp, log, sqrt, rsqrt, abs, relu, reciprocal, sin, cos
func.func @vunary_composite(%i: index) {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  asc.vunary "sigmoid" %a, %a, %i : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.vbinary: operands must share one dtype
func.func @vbinary_mixed_dtypes(%i: index) {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  %b = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf16, #asc.scope<ub>>
  asc.vbinary "add" %a, %a, %b, %i : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf16, #asc.scope<ub>>
  func.return
}

// -----

// A vector op across scopes.
// CHECK: Operation does not verify: asc.vbinary: operand must be a flat UB buffer memref<N x T, #asc.scope<ub>>, got memref<128xf32, #asc.scope<gm>>
func.func @vbinary_gm_operand(%i: index, %g: memref<128xf32, #asc.scope<gm>>) {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  asc.vbinary "add" %a, %a, %g, %i : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<gm>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.vscalar: unknown scalar kind 'add'; expected one of adds, muls, maxs, mins
func.func @vscalar_kind(%i: index) {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  asc.vscalar "add" %a, %a, 1.0 : f64, %i : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.vdup: destination must be a flat UB buffer memref<N x T, #asc.scope<ub>>, got memref<128xf32, #asc.scope<gm>>
func.func @vdup_gm(%i: index, %g: memref<128xf32, #asc.scope<gm>>) {
  asc.vdup %g, 1.0 : f64, %i : memref<128xf32, #asc.scope<gm>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.vcast: unknown round mode 'nearest'; expected one of none, rint, floor, ceil, round, trunc, odd
func.func @vcast_round(%i: index) {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  %b = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf16, #asc.scope<ub>>
  asc.vcast "nearest" %b, %a, %i : memref<128xf16, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.vcompare: mask must be an i1 buffer
func.func @vcompare_mask(%i: index) {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  asc.vcompare "lt" %a, %a, %a, %i : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.vselect: mask must be an i1 buffer
func.func @vselect_mask(%i: index) {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  asc.vselect %a, %a, %a, %a, %i : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.vreduce: unknown reduce kind 'mean'; expected one of sum, max, min
func.func @vreduce_kind(%i: index) {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  asc.vreduce "mean" "last" %a, %a, %a rows %i m %i len %i ls %i : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.vreduce: unknown reduce axis 'first'; expected one of last, mid
func.func @vreduce_axis(%i: index) {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  asc.vreduce "sum" "first" %a, %a, %a rows %i m %i len %i ls %i : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.vreduce: operands must be float buffers
func.func @vreduce_int(%i: index) {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xi32, #asc.scope<ub>>
  asc.vreduce "sum" "last" %a, %a, %a rows %i m %i len %i ls %i : memref<128xi32, #asc.scope<ub>>, memref<128xi32, #asc.scope<ub>>, memref<128xi32, #asc.scope<ub>>
  func.return
}

// -----

// CHECK: Operation does not verify: asc.vbroadcast: dtypes differ
func.func @vbroadcast_dtypes(%i: index) {
  %a = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  %b = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf16, #asc.scope<ub>>
  asc.vbroadcast %a, %b rows %i m %i ls %i {src_rows = true, src_m = false, src_l = false} : memref<128xf32, #asc.scope<ub>>, memref<128xf16, #asc.scope<ub>>
  func.return
}

// -----

// An unknown memory scope is rejected while parsing the type.
// CHECK: #asc.scope: unknown scope 'vram'; expected one of gm, ub, l1, l0a, l0b, l0c
func.func @bad_scope(%x: memref<16xf32, #asc.scope<vram>>) {
  func.return
}
