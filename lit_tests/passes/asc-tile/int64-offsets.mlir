// RUN: pyasc-opt %s -p asc-fuse,asc-tile,asc-double-buffer,asc-buffer-alloc | filecheck %s

// Compile-only: 2^31 + 64 f16 elements (4 GiB + 128 B) plus a constant. Every size and offset
// beyond int32 must survive: tiling fields are i64, GM offsets are computed in index type
// (64-bit) from the tiling struct, never folded to 32 bits.
// Chunk: the largest multiple of 128 elements whose 2 x in + 2 x out f16 buffers fit the
// 188160 usable UB bytes: 23424 (4 * 46848 = 187392 B; 23552 would need 188416 B).
// Units: ceil(2147483712 / 23424) = 91679 = 48 * 1909 + 47; the last chunk is 18240 elements.

// CHECK-LABEL: func.func @big(
// CHECK-NEXT:    %{{.*}} = asc.launch @big_kernel<48 : i64> (%x) : (tensor<2147483712xf16>) -> tensor<2147483712xf16>

// CHECK-LABEL: func.func @big_kernel(
// CHECK-SAME:      %[[GX:[0-9]+]]: memref<2147483712xf16, #asc.scope<gm>>, %[[GY:[0-9]+]]: memref<2147483712xf16, #asc.scope<gm>>)
// CHECK-SAME:      asc.tiling = {units = 91679 : i64, block_dim = 48 : i64, units_per_core = 1909 : i64, units_rem = 47 : i64, tile_units = 1 : i64, rows = 1 : i64, m = 1 : i64, l = 2147483712 : i64, chunk_len = 23424 : i64}
// CHECK-SAME:      asc.calc_base = 187392 : i64, asc.calc_bytes = 0 : i64, asc.ub_bytes = 187392 : i64
// CHECK:         scf.for %[[U:[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} {
// CHECK-NEXT:      %[[CH:[0-9]+]] = arith.constant 91679 : index
// CHECK-NEXT:      %{{[0-9]+}} = arith.divsi %[[U]], %[[CH]] : index
// CHECK-NEXT:      %[[K:[0-9]+]] = arith.remsi %[[U]], %[[CH]] : index
// CHECK-NEXT:      %[[T:[0-9]+]] = arith.constant 23424 : index
// CHECK-NEXT:      %[[C0E:[0-9]+]] = arith.muli %[[K]], %[[T]] : index
// CHECK-NEXT:      %[[L:[0-9]+]] = arith.constant 2147483712 : index
// CHECK-NEXT:      %[[LEFT:[0-9]+]] = arith.subi %[[L]], %[[C0E]] : index
// CHECK-NEXT:      %[[LT:[0-9]+]] = arith.cmpi slt, %[[T]], %[[LEFT]] : index
// CHECK-NEXT:      %[[LEN:[0-9]+]] = arith.select %[[LT]], %[[T]], %[[LEFT]] : index
// CHECK-NEXT:      %[[IN:[0-9]+]] = asc.alloc "in" {buffers = 2 : i64, offset = 0 : i64} : memref<23424xf16, #asc.scope<ub>>
// CHECK:           asc.copy_in %[[GX]][%[[OFF:[0-9]+]]] -> %[[IN]][%{{[0-9]+}}] blocks %{{[0-9]+}} x %[[LEN]] gap %{{[0-9]+}} stride %[[T]] : memref<2147483712xf16, #asc.scope<gm>>, memref<23424xf16, #asc.scope<ub>>
// CHECK-NEXT:      %[[OUT:[0-9]+]] = asc.alloc "out" {buffers = 2 : i64, offset = 93696 : i64} : memref<23424xf16, #asc.scope<ub>>
// The constant add becomes one Adds on the chunk.
// CHECK:           asc.vscalar "adds" %[[OUT]], %[[IN]], 1.000000e+00 : f64, %{{[0-9]+}}
// CHECK:           asc.copy_out %[[OUT]][%{{[0-9]+}}] -> %[[GY]][%{{[0-9]+}}] blocks %{{[0-9]+}} x %[[LEN]] gap %{{[0-9]+}} stride %[[T]] : memref<23424xf16, #asc.scope<ub>>, memref<2147483712xf16, #asc.scope<gm>>
func.func @big(%x: tensor<2147483712xf16>) -> tensor<2147483712xf16> {
  %c = asc.constant 1.0 : f64 -> tensor<2147483712xf16>
  %y = asc.binary "add" %x, %c : tensor<2147483712xf16>
  func.return %y : tensor<2147483712xf16>
}
