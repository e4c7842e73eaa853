// RUN: pyasc-opt %s -p asc-tile --split-input-file --verify-diagnostics | filecheck %s
// RUN: not pyasc-opt %s -p asc-tile --split-input-file 2>&1 | filecheck %s --check-prefix=EXIT

// Kernels asc-tile cannot build are errors at the user's source line, not crashes.

// x + b (b broadcast over axes 0 and 1) keeps axes 1 and 2 apart, so reducing axis 0 leaves
// two non-reduced axes inside the reduced part.
// CHECK: k.py:10:6: error: this reduction leaves more than one non-reduced dimension inside the reduced part of the tensor; a single kernel cannot tile it
// CHECK-NEXT: hint: reduce over trailing dimensions (e.g. axis=-1), or over one axis followed only by the last one
// EXIT: k.py:10:6: error: this reduction leaves more than one non-reduced dimension
// EXIT-NOT: Traceback
func.func @bad_reduce(%x: tensor<4x5x7xf32>, %b: tensor<7xf32>) -> tensor<1x5x7xf32> {
  %y = asc.fusion(%x, %b) {asc.loc = "k.py:9:2"} : (tensor<4x5x7xf32>, tensor<7xf32>) -> tensor<1x5x7xf32> {
  ^bb0(%a: tensor<4x5x7xf32>, %c: tensor<7xf32>):
    %cb = asc.broadcast %c : tensor<7xf32> -> tensor<4x5x7xf32>
    %z = asc.binary "add" %a, %cb : tensor<4x5x7xf32>
    %s = asc.reduce "max" %z {axes = array<i64: 0>, keepdim = true, asc.loc = "k.py:10:6"} : tensor<4x5x7xf32> -> tensor<1x5x7xf32>
    asc.yield %s : tensor<1x5x7xf32>
  }
  func.return %y : tensor<1x5x7xf32>
}

// -----

// A reduced middle axis too long for UB: the [M, L] = [2000, 100] part is held whole (row
// passes, tile_row_passes.py, only chunk a reduced trailing axis; a 200000-element row sum now
// compiles: row-passes.mlir). Input once (1024000 B), 512 B output.
// CHECK: k.py:20:3: error: the fused kernel needs 1024512 bytes of UB for the smallest tile, but only 188160 bytes are usable on this platform (buffers: in 1x1024000 B, out 1x512 B; tmp buffers whose lifetimes do not overlap share space)
// CHECK-NEXT: hint: reduce over fewer elements per row or split the operator
func.func @mid_too_long(%x: tensor<4x2000x100xf32>) -> tensor<4x1x100xf32> {
  %y = asc.fusion(%x) {asc.loc = "k.py:20:3"} : (tensor<4x2000x100xf32>) -> tensor<4x1x100xf32> {
  ^bb0(%a: tensor<4x2000x100xf32>):
    %s = asc.reduce "sum" %a {axes = array<i64: 1>, keepdim = true} : tensor<4x2000x100xf32> -> tensor<4x1x100xf32>
    asc.yield %s : tensor<4x1x100xf32>
  }
  func.return %y : tensor<4x1x100xf32>
}
