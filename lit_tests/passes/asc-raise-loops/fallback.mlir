// RUN: pyasc-opt %s -p asc-raise-loops --split-input-file 2>/dev/null | filecheck %s
// RUN: pyasc-opt %s -p asc-raise-loops --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=WARN

// Nests asc-raise-loops cannot raise become asc_loop.nest ops (scalar loops, lowered by
// asc-lower-loops), with a located PyAscPerformanceWarning that says why.


// A strided loop.
// WARN: k.py:3:5: warning: this loop nest cannot be raised to vector ops, so it runs as scalar loops on one core (GetValue/SetValue, slow): the loop runs range(0, 7, 2); strided loops are not raised
// WARN: hint: to get a fast vector kernel write the nest as an elementwise map
// CHECK-LABEL: func.func @offset
// CHECK: %[[R:.*]] = asc_loop.nest(%{{.*}}) {
// CHECK-NEXT: ^{{.*}}(%{{.*}}: memref<7xf32>):
// CHECK-NEXT: %[[C:.*]] = asc_loop.alloc fill 0.000000e+00 : f64 : memref<7xf32>
// CHECK: asc_loop.for #builtin.int<0> to #builtin.int<7> step #builtin.int<2>
// CHECK: asc_loop.nest_yield %[[C]] : memref<7xf32>
// CHECK: func.return %[[R]]
func.func @offset(%a: tensor<7xf32>) -> tensor<7xf32> {
  %c = asc_loop.alloc fill 0.0 : f64 : memref<7xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<7> step #builtin.int<2> {
  ^bb0(%i: index):
    %x = asc_loop.load %a[%i] : tensor<7xf32>
    asc_loop.store %x, %c[%i] : memref<7xf32>
    asc_loop.yield
  } {asc.loc = "k.py:3:5"}
  %r = asc_loop.to_tensor %c : memref<7xf32> -> tensor<7xf32>
  func.return %r : tensor<7xf32>
}

// -----

// A transpose in place: y[i, j] is written while y[j, i] is read (iterations depend on
// each other).
// WARN: k.py:8:9: warning: {{.*}}: the nest reads or writes one array at different indices (a dependence between iterations)
// CHECK-LABEL: func.func @in_place
// CHECK: asc_loop.nest() {
// CHECK: asc_loop.alloc fill 1.000000e+00
func.func @in_place(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = asc_loop.alloc fill 1.0 : f64 : memref<4x4xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
  ^bb0(%i: index):
    asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
    ^bb1(%j: index):
      %x = asc_loop.load %y[%j, %i] {asc.loc = "k.py:8:13"} : memref<4x4xf32>
      asc_loop.store %x, %y[%i, %j] {asc.loc = "k.py:8:9"} : memref<4x4xf32>
      asc_loop.yield
    }
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %y : memref<4x4xf32> -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}



// Half of the array written by the loop.
// WARN: k.py:14:9: warning: {{.*}}: the loops do not cover the array (a partial write)
// CHECK-LABEL: func.func @partial
// CHECK: asc_loop.nest(%a) {
// CHECK: asc_loop.nest_yield
// CHECK-NEXT: } {{.*}}: (tensor<4xf32>) -> tensor<8xf32>
func.func @partial(%a: tensor<4xf32>) -> tensor<8xf32> {
  %y = asc_loop.alloc fill 0.0 : f64 : memref<8xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
  ^bb0(%i: index):
    %x = asc_loop.load %a[%i] : tensor<4xf32>
    asc_loop.store %x, %y[%i] {asc.loc = "k.py:14:9"} : memref<8xf32>
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %y : memref<8xf32> -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}



// Two different reductions into one array inside one loop are not separable.
// WARN: k.py:21:9: warning: {{.*}}: the reduced array is also read or written inside the reduction's loop
// CHECK-LABEL: func.func @mixed_reductions
// CHECK: asc_loop.nest(%x) {
// CHECK: asc_loop.nest_yield
// CHECK-NEXT: } : (tensor<4x9xf32>) -> tensor<4xf32>
func.func @mixed_reductions(%x: tensor<4x9xf32>) -> tensor<4xf32> {
  %s = asc_loop.alloc fill 0.0 : f64 : memref<4xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
  ^bb0(%i: index):
    asc_loop.for #builtin.int<0> to #builtin.int<9> step #builtin.int<1> {
    ^bb1(%j: index):
      %a = asc_loop.load %s[%i] : memref<4xf32>
      %v = asc_loop.load %x[%i, %j] : tensor<4x9xf32>
      %n = asc_loop.binary "add" %a, %v
      asc_loop.store %n, %s[%i] : memref<4xf32>
      %b = asc_loop.load %s[%i] {asc.loc = "k.py:21:9"} : memref<4xf32>
      %m = asc_loop.binary "max" %b, %v
      asc_loop.store %m, %s[%i] : memref<4xf32>
      asc_loop.yield
    }
    asc_loop.yield
  }
  %r = asc_loop.to_tensor %s : memref<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// A triangular loop (for j in range(i + 1)): its bound is an outer loop variable.
// WARN: k.py:30:5: warning: {{.*}}: the loop's bound is an outer loop variable (a triangular loop)
// CHECK-LABEL: func.func @triangular
// CHECK: asc_loop.nest(%x) {
// CHECK: asc_loop.for #builtin.int<0> to #builtin.int<4> bound %{{.*}} step #builtin.int<1>
func.func @triangular(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = asc_loop.alloc fill 0.0 : f64 : memref<4xf32>
  asc_loop.for #builtin.int<0> to #builtin.int<4> step #builtin.int<1> {
  ^bb0(%i: index):
    %c1 = arith.constant 1 : index
    %n = arith.addi %i, %c1 : index
    asc_loop.for #builtin.int<0> to #builtin.int<4> bound %n step #builtin.int<1> {
    ^bb1(%j: index):
      %a = asc_loop.load %y[%i] : memref<4xf32>
      %b = asc_loop.load %x[%j] : tensor<4xf32>
      %s = asc_loop.binary "add" %a, %b
      asc_loop.store %s, %y[%i] : memref<4xf32>
      asc_loop.yield
    }
    asc_loop.yield
  } {asc.loc = "k.py:30:5"}
  %r = asc_loop.to_tensor %y : memref<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
