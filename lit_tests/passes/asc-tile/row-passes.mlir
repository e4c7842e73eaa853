// RUN: pyasc-opt %s -p asc-tile --split-input-file | filecheck %s

// Row passes (passes/tile_row_passes.py): a sum over rows of 200000 f32 does not fit UB whole
// (800256 B per row slot), so each row (one work unit, 4 rows over 4 cores) is walked in chunks:
// an accumulator starts at -0 (the identity of +), each chunk's partial ReduceSum over its
// `min(chunk, 200000 - c0)` elements is added to it, and the row's sum is copied out once.
// CHECK-LABEL: func.func @row_sum_kernel
// CHECK-SAME: units = 4 : i64
// CHECK-SAME: l = 200000 : i64, chunk_len = [[CHUNK:[0-9]+]] : i64
// CHECK: scf.for %[[ROW:[0-9]+]] =
// CHECK: %[[ACC:[0-9]+]] = asc.alloc "out"
// CHECK: asc.vdup %[[ACC]], -0.000000e+00
// CHECK: scf.for %[[C0:[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} {
// CHECK: %[[REST:[0-9]+]] = arith.subi %{{[0-9]+}}, %[[C0]]
// CHECK: %[[LEN:[0-9]+]] = arith.select
// CHECK: asc.copy_in %{{[0-9]+}}[%{{[0-9]+}}] -> %[[IN:[0-9]+]][%{{[0-9]+}}] blocks %{{[0-9]+}} x %[[LEN]]
// CHECK: asc.vreduce "sum" "last" %[[PART:[0-9]+]], %[[IN]], %{{[0-9]+}} rows %{{[0-9]+}} m %{{[0-9]+}} len %[[LEN]]
// CHECK: asc.vbinary "add" %[[ACC]], %[[ACC]], %[[PART]]
// CHECK: } {asc.tile_loop = "pass 0"
// CHECK: asc.copy_out %[[ACC]]
func.func @row_sum(%x: tensor<4x200000xf32>) -> tensor<4x1xf32> {
  %y = asc.fusion(%x) {asc.loc = "k.py:20:3"} : (tensor<4x200000xf32>) -> tensor<4x1xf32> {
  ^bb0(%a: tensor<4x200000xf32>):
    %s = asc.reduce "sum" %a {axes = array<i64: 1>, keepdim = true} : tensor<4x200000xf32> -> tensor<4x1xf32>
    asc.yield %s : tensor<4x1xf32>
  }
  func.return %y : tensor<4x1xf32>
}

// -----

// Add + RMSNorm returning both the sum h and the norm (f16 in, f32 inside): two passes per
// row. Pass 0 computes h = x + r chunk by chunk, copies h out and accumulates sum(h*h); then
// rsqrt(mean + eps) once per row; pass 1 re-reads x and r (h is recomputed, not re-read), and
// copies the norm out.
// CHECK-LABEL: func.func @add_rms_kernel
// CHECK: scf.for
// CHECK: asc.vdup %[[ACC2:[0-9]+]], -0.000000e+00
// CHECK: scf.for
// CHECK-COUNT-2: asc.copy_in
// CHECK: asc.vreduce "sum" "last"
// CHECK: asc.vbinary "add" %[[ACC2]], %[[ACC2]]
// CHECK: asc.copy_out
// CHECK: } {asc.tile_loop = "pass 0"
// CHECK: asc.vunary "rsqrt"
// CHECK: scf.for
// CHECK-COUNT-3: asc.copy_in
// CHECK: asc.copy_out
// CHECK: } {asc.tile_loop = "pass 1"
// CHECK-NOT: scf.for
// CHECK: func.return
func.func @add_rms(%x: tensor<4x16384xf16>, %r: tensor<4x16384xf16>, %w: tensor<16384xf16>) -> (tensor<4x16384xf16>, tensor<4x16384xf16>) attributes {asc.loc = "k.py:2:1"} {
  %0, %1 = asc.fusion(%x, %r, %w) {asc.loc = "k.py:3:9"} : (tensor<4x16384xf16>, tensor<4x16384xf16>, tensor<16384xf16>) -> (tensor<4x16384xf16>, tensor<4x16384xf16>) {
  ^bb0(%2: tensor<4x16384xf16>, %3: tensor<4x16384xf16>, %4: tensor<16384xf16>):
    %5 = asc.cast %2 {asc.loc = "k.py:3:9"} : tensor<4x16384xf16> -> tensor<4x16384xf32>
    %6 = asc.cast %3 {asc.loc = "k.py:3:9"} : tensor<4x16384xf16> -> tensor<4x16384xf32>
    %h = asc.binary "add" %5, %6 {asc.loc = "k.py:3:9"} : tensor<4x16384xf32>
    %7 = asc.binary "mul" %h, %h {asc.loc = "k.py:4:36"} : tensor<4x16384xf32>
    %8 = asc.reduce "sum" %7 {asc.loc = "k.py:4:28", axes = array<i64: 1>, keepdim = true} : tensor<4x16384xf32> -> tensor<4x1xf32>
    %9 = asc.constant 6.103515625e-05 : f64 {asc.loc = "k.py:4:28"} -> tensor<4x1xf32>
    %10 = asc.binary "mul" %8, %9 {asc.loc = "k.py:4:28"} : tensor<4x1xf32>
    %11 = asc.constant 1.000000e-06 : f64 {asc.loc = "k.py:4:28"} -> tensor<4x1xf32>
    %12 = asc.binary "add" %10, %11 {asc.loc = "k.py:4:28"} : tensor<4x1xf32>
    %13 = asc.unary "rsqrt" %12 {asc.loc = "k.py:4:19"} : tensor<4x1xf32>
    %14 = asc.broadcast %13 {asc.loc = "k.py:4:15"} : tensor<4x1xf32> -> tensor<4x16384xf32>
    %15 = asc.binary "mul" %h, %14 {asc.loc = "k.py:4:15"} : tensor<4x16384xf32>
    %16 = asc.cast %4 {asc.loc = "k.py:4:15"} : tensor<16384xf16> -> tensor<16384xf32>
    %17 = asc.broadcast %16 {asc.loc = "k.py:4:15"} : tensor<16384xf32> -> tensor<4x16384xf32>
    %18 = asc.binary "mul" %15, %17 {asc.loc = "k.py:4:15"} : tensor<4x16384xf32>
    %19 = asc.cast %h {asc.loc = "k.py:4:12"} : tensor<4x16384xf32> -> tensor<4x16384xf16>
    %20 = asc.cast %18 {asc.loc = "k.py:4:15"} : tensor<4x16384xf32> -> tensor<4x16384xf16>
    asc.yield %19, %20 : tensor<4x16384xf16>, tensor<4x16384xf16>
  }
  func.return {asc.loc = "k.py:4:5"} %0, %1 : tensor<4x16384xf16>, tensor<4x16384xf16>
}
