// RUN: pyasc-opt %s -p asc-fuse | filecheck %s --check-prefix=FUSE
// RUN: pyasc-opt %s -p asc-fuse,asc-lower-layout,asc-tile | filecheck %s

// Slices of a kernel input are read in place (GM views): CANN-form SwiGLU on [7, 66] is ONE
// fusion whose only input is x; asc-tile copies each half straight from x's buffer, one block
// of 33 elements per row, rows 66 elements apart (gap 33), the second half from element 33.
// FUSE-LABEL: func.func @swiglu(
// FUSE-NEXT:    asc.fusion(%x) : (tensor<7x66xf32>) -> tensor<7x33xf32> {
// FUSE-NEXT:    ^{{.*}}(%[[X:.*]]: tensor<7x66xf32>):
// FUSE-NEXT:      %a = asc.slice %[[X]] {offsets = array<i64: 0, 0>, sizes = array<i64: 7, 33>}
// FUSE-NEXT:      %b = asc.slice %[[X]] {offsets = array<i64: 0, 33>, sizes = array<i64: 7, 33>}
// FUSE-NOT:     asc.fusion
// FUSE:         func.return

// CHECK-LABEL: func.func @swiglu_kernel(%{{.*}}: memref<462xf32, #asc.scope<gm>>, %{{.*}}: memref<231xf32, #asc.scope<gm>>)
// CHECK:         %[[ROW:.*]] = arith.constant 66 : index
// CHECK:         %[[A:.*]] = arith.muli %{{.*}}, %[[ROW]] : index
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[AOFF:.*]] = arith.addi %[[Z]], %[[A]] : index
// CHECK-NEXT:    %[[H:.*]] = arith.constant 33 : index
// CHECK-NEXT:    %[[SLOT:.*]] = arith.constant 48 : index
// CHECK-NEXT:    asc.copy_in %{{.*}}[%[[AOFF]]] -> %{{.*}}[%[[Z]]] blocks %{{.*}} x %[[H]] gap %[[H]] stride %[[SLOT]]
// CHECK:         %[[B:.*]] = arith.muli %{{.*}}, %[[ROW]] : index
// CHECK-NEXT:    %[[BOFF:.*]] = arith.addi %[[H]], %[[B]] : index
// CHECK-NEXT:    asc.copy_in %{{.*}}[%[[BOFF]]] -> %{{.*}}[%[[Z]]] blocks %{{.*}} x %[[H]] gap %[[H]] stride %[[SLOT]]
// CHECK-NOT:     asc.copy_in
// CHECK:         asc.copy_out
// CHECK-NOT:     func.func @swiglu_kernel_
func.func @swiglu(%x: tensor<7x66xf32>) -> tensor<7x33xf32> {
  %a = asc.slice %x {offsets = array<i64: 0, 0>, sizes = array<i64: 7, 33>} : tensor<7x66xf32> -> tensor<7x33xf32>
  %b = asc.slice %x {offsets = array<i64: 0, 33>, sizes = array<i64: 7, 33>} : tensor<7x66xf32> -> tensor<7x33xf32>
  %s = asc.unary "exp" %a : tensor<7x33xf32>
  %t = asc.binary "mul" %a, %s : tensor<7x33xf32>
  %y = asc.binary "mul" %t, %b : tensor<7x33xf32>
  func.return %y : tensor<7x33xf32>
}

// A column of [5, 2] is every other element (no contiguous run to copy): a data-movement
// kernel of its own, placed before the vector kernel that reads its result.
// FUSE-LABEL: func.func @column(
// FUSE-NEXT:    %[[C:.*]] = asc.fusion(%x) : (tensor<5x2xf32>) -> tensor<5x1xf32> {
// FUSE-NEXT:    ^{{.*}}(%[[X2:.*]]: tensor<5x2xf32>):
// FUSE-NEXT:      %c = asc.slice %[[X2]]
// FUSE-NEXT:      asc.yield %c
// FUSE-NEXT:    }
// FUSE-NEXT:    asc.fusion(%y, %[[C]])
func.func @column(%x: tensor<5x2xf32>, %y: tensor<5x1xf32>) -> tensor<5x1xf32> {
  %e = asc.unary "exp" %y : tensor<5x1xf32>
  %c = asc.slice %x {offsets = array<i64: 0, 1>, sizes = array<i64: 5, 1>} : tensor<5x2xf32> -> tensor<5x1xf32>
  %r = asc.binary "add" %e, %c : tensor<5x1xf32>
  func.return %r : tensor<5x1xf32>
}
