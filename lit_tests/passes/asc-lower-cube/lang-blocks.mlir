// RUN: pyasc-opt %s -p asc-lower-cube --split-input-file --verify-diagnostics | filecheck %s
// RUN: not pyasc-opt %s -p asc-lower-cube --split-input-file 2>&1 | filecheck %s --check-prefix=EXIT

// The kernel language's blocked matmul (`for i in lang.range(0, M, 32)`, `j` by 64, `k` by
// 32, buffers ta [32, 32], tb [32, 64], tc [32, 64]) reaches asc-lower-cube as an ordinary
// matmul fusion with the person's blocks on the function (asc.lang_blocks): the output blocks
// are 32 x 64 (tile_m x tile_n, baseM x baseN of the Matmul tiling) and the asc.mmad carries
// base_k = 32 (baseK). 33 x 513 = ceil(33/32) * ceil(513/64) = 2 * 9 = 18 blocks, the tails
// included.

// CHECK-LABEL: func.func @bmm_kernel(
// CHECK-SAME:      asc.tiling = {units = 18 : i64, block_dim = 18 : i64, units_per_core = 1 : i64, units_rem = 0 : i64, tile_units = 1 : i64, batch = 1 : i64, m = 33 : i64, n = 513 : i64, k = 65 : i64, tile_m = 32 : i64, tile_n = 64 : i64}
// CHECK:         asc.mmad
// CHECK-SAME:      max_m = 32 : i64, max_n = 64 : i64, max_k = 65 : i64, base_k = 32 : i64
func.func @bmm(%a: tensor<33x65xf16>, %b: tensor<65x513xf16>) -> tensor<33x513xf16> attributes {asc.lang_blocks = "{\22cube\22: {\22m\22: 32, \22n\22: 64, \22k\22: 32, \22loc\22: \22k.py:12:5\22}}"} {
  %r = asc.fusion(%a, %b) : (tensor<33x65xf16>, tensor<65x513xf16>) -> tensor<33x513xf16> {
  ^bb0(%x: tensor<33x65xf16>, %y: tensor<65x513xf16>):
    %m = asc.matmul %x, %y {transpose_a = false, transpose_b = false} : (tensor<33x65xf16>, tensor<65x513xf16>) -> tensor<33x513xf32>
    %c = asc.cast %m : tensor<33x513xf32> -> tensor<33x513xf16>
    asc.yield %c : tensor<33x513xf16>
  }
  func.return %r : tensor<33x513xf16>
}

// -----

// Cube blocks are multiples of the 16 x 16 fractal.
// CHECK: k.py:12:5: error: the Cube block BM = 24 is not a multiple of 16
// CHECK-NEXT: hint: Cube blocks (baseM/baseN/baseK) are multiples of 16: use 32
// EXIT: k.py:12:5: error: the Cube block BM = 24
// EXIT-NOT: Traceback
func.func @odd(%a: tensor<33x65xf16>, %b: tensor<65x513xf16>) -> tensor<33x513xf16> attributes {asc.lang_blocks = "{\22cube\22: {\22m\22: 24, \22n\22: 64, \22k\22: 32, \22loc\22: \22k.py:12:5\22}}"} {
  %r = asc.fusion(%a, %b) : (tensor<33x65xf16>, tensor<65x513xf16>) -> tensor<33x513xf16> {
  ^bb0(%x: tensor<33x65xf16>, %y: tensor<65x513xf16>):
    %m = asc.matmul %x, %y {transpose_a = false, transpose_b = false} : (tensor<33x65xf16>, tensor<65x513xf16>) -> tensor<33x513xf32>
    %c = asc.cast %m : tensor<33x513xf32> -> tensor<33x513xf16>
    asc.yield %c : tensor<33x513xf16>
  }
  func.return %r : tensor<33x513xf16>
}
