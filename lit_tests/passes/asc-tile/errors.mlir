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

// A reduced middle axis too long for UB whole: the [M, L] = [2000, 100] part no longer has to
// fit, the kernel walks it in column strips of 16 (tile_plan.py _fit_columns; values checked
// in tests/test_softmax_column_chunks.py).
// CHECK: func.func @mid_too_long_kernel{{.*}}m = 2000 : i64, l = 100 : i64, chunk_len = 16 : i64
func.func @mid_too_long(%x: tensor<4x2000x100xf32>) -> tensor<4x1x100xf32> {
  %y = asc.fusion(%x) {asc.loc = "k.py:20:3"} : (tensor<4x2000x100xf32>) -> tensor<4x1x100xf32> {
  ^bb0(%a: tensor<4x2000x100xf32>):
    %s = asc.reduce "sum" %a {axes = array<i64: 1>, keepdim = true} : tensor<4x2000x100xf32> -> tensor<4x1x100xf32>
    asc.yield %s : tensor<4x1x100xf32>
  }
  func.return %y : tensor<4x1x100xf32>
}
