// RUN: pyasc-opt %s -p asc-double-buffer | filecheck %s --check-prefixes=CHECK,TWO
// RUN: pyasc-opt %s -p 'asc-double-buffer{enable=false}' | filecheck %s --check-prefixes=CHECK,ONE
// RUN: pyasc-opt %s -p 'asc-double-buffer{stages=3}' | filecheck %s --check-prefixes=CHECK,THREE

// Copy-in and copy-out queue buffers rotate `stages` copies (default 2; 1 when disabled);
// const and tmp buffers are never rotated. Nothing else changes.

// CHECK-LABEL: func.func @k(
// CHECK:         %[[C:.*]] = asc.alloc "const" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
// CHECK-NEXT:    asc.copy_in %gw[%c0] -> %[[C]][%c0]
// CHECK-NEXT:    scf.for
// TWO-NEXT:        %[[IN:.*]] = asc.alloc "in" {buffers = 2 : i64} : memref<256xf32, #asc.scope<ub>>
// ONE-NEXT:        %[[IN:.*]] = asc.alloc "in" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
// THREE-NEXT:      %[[IN:.*]] = asc.alloc "in" {buffers = 3 : i64} : memref<256xf32, #asc.scope<ub>>
// CHECK-NEXT:      asc.copy_in %gx[%{{.*}}] -> %[[IN]][%c0]
// CHECK-NEXT:      %[[T:.*]] = asc.alloc "tmp" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
// CHECK-NEXT:      asc.vbinary "add" %[[T]], %[[IN]], %[[C]], %c256
// TWO-NEXT:        %[[OUT:.*]] = asc.alloc "out" {buffers = 2 : i64, offset = 0 : i64} : memref<256xf32, #asc.scope<ub>>
// ONE-NEXT:        %[[OUT:.*]] = asc.alloc "out" {buffers = 1 : i64, offset = 0 : i64} : memref<256xf32, #asc.scope<ub>>
// THREE-NEXT:      %[[OUT:.*]] = asc.alloc "out" {buffers = 3 : i64, offset = 0 : i64} : memref<256xf32, #asc.scope<ub>>
// CHECK-NEXT:      asc.vunary "exp" %[[OUT]], %[[T]], %c256
// CHECK-NEXT:      asc.copy_out %[[OUT]][%c0] -> %gy[%{{.*}}]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @k(%gx: memref<1024xf32, #asc.scope<gm>>, %gw: memref<256xf32, #asc.scope<gm>>, %gy: memref<1024xf32, #asc.scope<gm>>) attributes {asc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %w = asc.alloc "const" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
  asc.copy_in %gw[%c0] -> %w[%c0] blocks %c1 x %c256 gap %c0 stride %c256 : memref<256xf32, #asc.scope<gm>>, memref<256xf32, #asc.scope<ub>>
  scf.for %u = %c0 to %c1024 step %c256 {
    %in = asc.alloc "in" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
    asc.copy_in %gx[%u] -> %in[%c0] blocks %c1 x %c256 gap %c0 stride %c256 : memref<1024xf32, #asc.scope<gm>>, memref<256xf32, #asc.scope<ub>>
    %t = asc.alloc "tmp" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
    asc.vbinary "add" %t, %in, %w, %c256 : memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>
    %out = asc.alloc "out" {buffers = 4 : i64, offset = 0 : i64} : memref<256xf32, #asc.scope<ub>>
    asc.vunary "exp" %out, %t, %c256 : memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>
    asc.copy_out %out[%c0] -> %gy[%u] blocks %c1 x %c256 gap %c0 stride %c256 : memref<256xf32, #asc.scope<ub>>, memref<1024xf32, #asc.scope<gm>>
  }
  func.return
}

// Tensor-level functions have no allocs: untouched.
// CHECK-LABEL: func.func @tensor_level(
// CHECK-NEXT:    %e = asc.unary "exp" %x : tensor<16xf32>
// CHECK-NEXT:    func.return %e : tensor<16xf32>
func.func @tensor_level(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = asc.unary "exp" %x : tensor<16xf32>
  func.return %e : tensor<16xf32>
}
