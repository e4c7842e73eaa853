// RUN: pyasc-opt %s -p asc-tile | filecheck %s
// RUN: pyasc-opt %s -p 'asc-tile{nan_guards=false}' | filecheck %s --check-prefix=BARE

// NaN guards (passes/nan_guard.py, docs/CPU_RUNTIME.md "NaN guards"): the defined NaN and
// signed-zero results of maximum, relu and a row max must not depend on the instruction.
// maximum(a, b): r = Max(a, b); s = a + b (the max of a +-0 tie: -0 only if both are -0);
// where a == b and a == 0 take s; then a NaN operand wins (Compare(x, x, NE) + Select).
// relu(x): Select(x < +0, +0, x), no Relu call (NaN and -0 compare false and pass).
// row max: r = ReduceMax; r - ReduceSum(isnan(x) ? x : +0) (NaN, or r exactly).
// One +0 buffer per tile and layout serves every guard.

// CHECK-LABEL: func.func @g_kernel(
// CHECK:         scf.for
// CHECK:           %[[A:[0-9]+]] = asc.alloc "in"
// CHECK:           %[[B:[0-9]+]] = asc.alloc "in"
// CHECK:           %[[M:[0-9]+]] = asc.alloc "out"
// CHECK:           asc.vbinary "max" %[[M]], %[[A]], %[[B]], %[[N:[0-9]+]]
// CHECK-NEXT:      %[[MASK:[0-9]+]] = asc.alloc "tmp" {{.*}} : memref<{{[0-9]+}}xi1, #asc.scope<ub>>
// CHECK-NEXT:      %[[S:[0-9]+]] = asc.alloc "tmp"
// CHECK-NEXT:      asc.vbinary "add" %[[S]], %[[A]], %[[B]], %[[N]]
// CHECK-NEXT:      asc.vcompare "eq" %[[MASK]], %[[A]], %[[B]], %[[N]]
// CHECK-NEXT:      asc.vselect %[[S]], %[[MASK]], %[[S]], %[[M]], %[[N]]
// CHECK-NEXT:      %[[Z:[0-9]+]] = asc.alloc "tmp"
// CHECK-NEXT:      asc.vdup %[[Z]], 0.000000e+00 : f64, %[[N]]
// CHECK-NEXT:      asc.vcompare "eq" %[[MASK]], %[[A]], %[[Z]], %[[N]]
// CHECK-NEXT:      asc.vselect %[[M]], %[[MASK]], %[[S]], %[[M]], %[[N]]
// CHECK-NEXT:      asc.vcompare "ne" %[[MASK]], %[[A]], %[[A]], %[[N]]
// CHECK-NEXT:      asc.vselect %[[M]], %[[MASK]], %[[A]], %[[M]], %[[N]]
// CHECK-NEXT:      asc.vcompare "ne" %[[MASK]], %[[B]], %[[B]], %[[N]]
// CHECK-NEXT:      asc.vselect %[[M]], %[[MASK]], %[[B]], %[[M]], %[[N]]
// CHECK-NEXT:      %[[R:[0-9]+]] = asc.alloc "out"
// CHECK-NEXT:      %[[RM:[0-9]+]] = asc.alloc "tmp"
// CHECK-NEXT:      asc.vcompare "lt" %[[RM]], %[[A]], %[[Z]], %[[N]]
// CHECK-NEXT:      asc.vselect %[[R]], %[[RM]], %[[Z]], %[[A]], %[[N]]
// CHECK-NOT:       asc.vunary "relu"
// CHECK:           %[[X:[0-9]+]] = asc.alloc "out"
// CHECK-NEXT:      %[[W:[0-9]+]] = asc.alloc "tmp"
// CHECK:           asc.vreduce "max" "last" %[[X]], %[[A]], %[[W]]
// CHECK:           %[[T:[0-9]+]] = asc.alloc "tmp"
// CHECK-NEXT:      %[[TM:[0-9]+]] = asc.alloc "tmp"
// CHECK-NEXT:      asc.vcompare "ne" %[[TM]], %[[A]], %[[A]], %[[N]]
// CHECK-NEXT:      asc.vselect %[[T]], %[[TM]], %[[A]], %[[Z]], %[[N]]
// CHECK-NEXT:      %[[SUM:[0-9]+]] = asc.alloc "tmp"
// CHECK-NEXT:      asc.vreduce "sum" "last" %[[SUM]], %[[T]], %[[W]]
// CHECK-NEXT:      asc.vbinary "sub" %[[X]], %[[X]], %[[SUM]]

// Without guards: the bare instructions.
// BARE-LABEL: func.func @g_kernel(
// BARE:         asc.vbinary "max"
// BARE-NEXT:    asc.alloc "out"
// BARE-NEXT:    asc.vunary "relu"
// BARE-NOT:     asc.vcompare
// BARE:         asc.vreduce "max" "last"
// BARE-NOT:     asc.vreduce "sum"
// BARE-NOT:     asc.vcompare
func.func @g(%x: tensor<8x40xf32>, %y: tensor<8x40xf32>) -> (tensor<8x40xf32>, tensor<8x40xf32>, tensor<8x1xf32>) {
  %0:3 = asc.fusion(%x, %y) : (tensor<8x40xf32>, tensor<8x40xf32>) -> (tensor<8x40xf32>, tensor<8x40xf32>, tensor<8x1xf32>) {
  ^bb0(%a: tensor<8x40xf32>, %b: tensor<8x40xf32>):
    %m = asc.binary "max" %a, %b : tensor<8x40xf32>
    %r = asc.unary "relu" %a : tensor<8x40xf32>
    %s = asc.reduce "max" %a {axes = array<i64: 1>, keepdim = true} : tensor<8x40xf32> -> tensor<8x1xf32>
    asc.yield %m, %r, %s : tensor<8x40xf32>, tensor<8x40xf32>, tensor<8x1xf32>
  }
  func.return %0#0, %0#1, %0#2 : tensor<8x40xf32>, tensor<8x40xf32>, tensor<8x1xf32>
}
