// RUN: pyasc-opt %s -p asc-buffer-alloc | filecheck %s

// KNOWN BUG (passes/buffer_alloc.py, pack): two tmp buffers in different blocks are never
// treated as overlapping (`b.parent is a.parent`), so %k, allocated before the tile loop and
// read in every iteration, gets the same offset as %t inside the loop: the first iteration
// overwrites %k (and reads and writes the same UB bytes in one vbinary). asc-tile does not
// emit tmp buffers outside the loop today, so this is latent for generated IR, but the pass
// accepts this input. Expected: disjoint offsets, arena 2048 B. Remove the XFAIL once fixed.

// CHECK-LABEL: func.func @k(
// CHECK-SAME:      asc.calc_base = 4096 : i64, asc.calc_bytes = 2048 : i64, asc.ub_bytes = 6144 : i64
// CHECK:         %k = asc.alloc "tmp" {buffers = 1 : i64, offset = {{[0-9]+}} : i64}
// CHECK:         %t = asc.alloc "tmp" {buffers = 1 : i64, offset = {{[0-9]+}} : i64}
func.func @k(%gx: memref<1024xf32, #asc.scope<gm>>, %gy: memref<1024xf32, #asc.scope<gm>>) attributes {asc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %k = asc.alloc "tmp" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
  asc.vdup %k, 2.0 : f64, %c256 : memref<256xf32, #asc.scope<ub>>
  scf.for %u = %c0 to %c1024 step %c256 {
    %in = asc.alloc "in" {buffers = 2 : i64} : memref<256xf32, #asc.scope<ub>>
    asc.copy_in %gx[%u] -> %in[%c0] blocks %c1 x %c256 gap %c0 stride %c256 : memref<1024xf32, #asc.scope<gm>>, memref<256xf32, #asc.scope<ub>>
    %t = asc.alloc "tmp" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
    asc.vbinary "mul" %t, %in, %k, %c256 : memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>
    %out = asc.alloc "out" {buffers = 2 : i64} : memref<256xf32, #asc.scope<ub>>
    asc.vunary "exp" %out, %t, %c256 : memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>
    asc.copy_out %out[%c0] -> %gy[%u] blocks %c1 x %c256 gap %c0 stride %c256 : memref<256xf32, #asc.scope<ub>>, memref<1024xf32, #asc.scope<gm>>
  }
  func.return
}
