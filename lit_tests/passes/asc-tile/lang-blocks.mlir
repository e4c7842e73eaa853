// RUN: pyasc-opt %s -p asc-tile --split-input-file --verify-diagnostics | filecheck %s
// RUN: not pyasc-opt %s -p asc-tile --split-input-file 2>&1 | filecheck %s --check-prefix=EXIT

// The kernel language's explicit tiles: a blocked vector nest (`for i in lang.range(0, N,
// 256)` with 256-element local buffers) reaches asc-tile as an ordinary fusion with the
// person's block on the function (asc.lang_blocks). The automatic choice would be 128
// elements per chunk (1000 elements, 40 cores); the block pins 256: 4 chunks, the last one
// 1000 - 3 * 256 = 232 elements (the tail).

// CHECK-LABEL: func.func @badd_kernel(
// CHECK-SAME:      asc.tiling = {units = 4 : i64, block_dim = 4 : i64, units_per_core = 1 : i64, units_rem = 0 : i64, tile_units = 1 : i64, rows = 1 : i64, m = 1 : i64, l = 1000 : i64, chunk_len = 256 : i64}
func.func @badd(%a: tensor<1000xf16>, %b: tensor<1000xf16>) -> tensor<1000xf16> attributes {asc.lang_blocks = "{\22vector\22: {\22elems\22: 256, \22loc\22: \22k.py:11:5\22}}"} {
  %r = asc.fusion(%a, %b) : (tensor<1000xf16>, tensor<1000xf16>) -> tensor<1000xf16> {
  ^bb0(%x: tensor<1000xf16>, %y: tensor<1000xf16>):
    %s = asc.binary "add" %x, %y : tensor<1000xf16>
    asc.yield %s : tensor<1000xf16>
  }
  func.return %r : tensor<1000xf16>
}

// -----

// A block that is not a whole number of 128-element chunks is an error at the blocked loop.
// CHECK: k.py:11:5: error: a vector block of 100 elements: this kernel's tiles hold a multiple of 128 elements
// CHECK-NEXT: hint: pick a block of a multiple of 128 elements (e.g. 128)
// EXIT: k.py:11:5: error: a vector block of 100 elements
// EXIT-NOT: Traceback
func.func @odd(%a: tensor<1000xf16>) -> tensor<1000xf16> attributes {asc.lang_blocks = "{\22vector\22: {\22elems\22: 100, \22loc\22: \22k.py:11:5\22}}"} {
  %r = asc.fusion(%a) : (tensor<1000xf16>) -> tensor<1000xf16> {
  ^bb0(%x: tensor<1000xf16>):
    %s = asc.unary "abs" %x : tensor<1000xf16>
    asc.yield %s : tensor<1000xf16>
  }
  func.return %r : tensor<1000xf16>
}
