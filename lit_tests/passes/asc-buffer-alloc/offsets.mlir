// RUN: pyasc-opt %s -p asc-buffer-alloc | filecheck %s

// UB layout from offset 0: copy-in/copy-out queues (buffers x aligned size), then const
// buffers, then the compute arena (asc.calc_base) where tmp buffers share space when their
// live ranges (alloc .. last use, in program order) do not overlap; first fit, largest first.
//
//   in    256 x f32 = 1024 B x 2 ->    0 .. 2048
//   out   256 x f32 = 1024 B x 2 -> 2048 .. 4096
//   const 128 x f16 =  256 B     -> 4096 .. 4352 = calc_base
//   arena (relative): t4 2048 B first at 0; t1 dies before t4 is allocated, so it shares 0;
//   t2 overlaps t1 -> 1024; t3 overlaps t1, t2 and t4 -> 2048; the 256-bit mask (32 B)
//   overlaps t3 and t4 -> 3072. Arena 3104 B; total 4352 + 3104 = 7456 B.

// CHECK-LABEL: func.func @k(
// CHECK-SAME:      attributes {asc.kernel, asc.calc_base = 4352 : i64, asc.calc_bytes = 3104 : i64, asc.ub_bytes = 7456 : i64}
// CHECK:         %w = asc.alloc "const" {buffers = 1 : i64, offset = 4096 : i64} : memref<128xf16, #asc.scope<ub>>
// CHECK:         %in = asc.alloc "in" {buffers = 2 : i64, offset = 0 : i64} : memref<256xf32, #asc.scope<ub>>
// CHECK:         %t1 = asc.alloc "tmp" {buffers = 1 : i64, offset = 4352 : i64} : memref<256xf32, #asc.scope<ub>>
// CHECK:         %t2 = asc.alloc "tmp" {buffers = 1 : i64, offset = 5376 : i64} : memref<256xf32, #asc.scope<ub>>
// CHECK:         %t3 = asc.alloc "tmp" {buffers = 1 : i64, offset = 6400 : i64} : memref<256xf32, #asc.scope<ub>>
// CHECK:         %t4 = asc.alloc "tmp" {buffers = 1 : i64, offset = 4352 : i64} : memref<512xf32, #asc.scope<ub>>
// CHECK:         %m = asc.alloc "tmp" {buffers = 1 : i64, offset = 7424 : i64} : memref<256xi1, #asc.scope<ub>>
// CHECK:         %out = asc.alloc "out" {buffers = 2 : i64, offset = 2048 : i64} : memref<256xf32, #asc.scope<ub>>
func.func @k(%gx: memref<1024xf32, #asc.scope<gm>>, %gw: memref<128xf16, #asc.scope<gm>>, %gy: memref<1024xf32, #asc.scope<gm>>) attributes {asc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %w = asc.alloc "const" {buffers = 1 : i64} : memref<128xf16, #asc.scope<ub>>
  asc.copy_in %gw[%c0] -> %w[%c0] blocks %c1 x %c128 gap %c0 stride %c128 : memref<128xf16, #asc.scope<gm>>, memref<128xf16, #asc.scope<ub>>
  scf.for %u = %c0 to %c1024 step %c256 {
    %in = asc.alloc "in" {buffers = 2 : i64} : memref<256xf32, #asc.scope<ub>>
    asc.copy_in %gx[%u] -> %in[%c0] blocks %c1 x %c256 gap %c0 stride %c256 : memref<1024xf32, #asc.scope<gm>>, memref<256xf32, #asc.scope<ub>>
    %t1 = asc.alloc "tmp" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
    asc.vunary "exp" %t1, %in, %c256 : memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>
    %t2 = asc.alloc "tmp" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
    asc.vunary "abs" %t2, %in, %c256 : memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>
    %t3 = asc.alloc "tmp" {buffers = 1 : i64} : memref<256xf32, #asc.scope<ub>>
    asc.vbinary "add" %t3, %t1, %t2, %c256 : memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>
    %t4 = asc.alloc "tmp" {buffers = 1 : i64} : memref<512xf32, #asc.scope<ub>>
    asc.vdup %t4, 0.0 : f64, %c256 : memref<512xf32, #asc.scope<ub>>
    %m = asc.alloc "tmp" {buffers = 1 : i64} : memref<256xi1, #asc.scope<ub>>
    asc.vcompare "gt" %m, %t3, %in, %c256 : memref<256xi1, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>
    %out = asc.alloc "out" {buffers = 2 : i64} : memref<256xf32, #asc.scope<ub>>
    asc.vselect %out, %m, %t3, %t4, %c256 : memref<256xf32, #asc.scope<ub>>, memref<256xi1, #asc.scope<ub>>, memref<256xf32, #asc.scope<ub>>, memref<512xf32, #asc.scope<ub>>
    asc.copy_out %out[%c0] -> %gy[%u] blocks %c1 x %c256 gap %c0 stride %c256 : memref<256xf32, #asc.scope<ub>>, memref<1024xf32, #asc.scope<gm>>
  }
  func.return
}

// Functions that are not kernels are left alone.
// CHECK-LABEL: func.func @host(
// CHECK-NOT:     asc.ub_bytes
// CHECK-NEXT:    func.return
func.func @host(%x: tensor<16xf32>) -> tensor<16xf32> {
  func.return %x : tensor<16xf32>
}
