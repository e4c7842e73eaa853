// RUN: pyasc-opt %s -p asc-tile | filecheck %s

// Chunk mode: a 1-D elementwise op of 13243 f32 has one row, fewer rows than the 48 cores,
// so the row is cut into chunks. Chunk = ceil(13243 / 48) = 276 rounded up to 128 elements
// = 384 (1536 B: a whole number of 32 B DataBlocks, so every full chunk starts 32 B-aligned
// in GM and copies with plain DataCopy). 13243 = 34 * 384 + 187: 35 units on 35 cores, one
// each; the last chunk is 187 elements (748 B), hence the min() on the copy length.

// CHECK-LABEL: func.func @add_relu(
// CHECK-NEXT:    %[[Y:.*]] = asc.launch @add_relu_kernel<35 : i64> (%x, %y) : (tensor<13243xf32>, tensor<13243xf32>) -> tensor<13243xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<13243xf32>

// CHECK-LABEL: func.func @add_relu_kernel(
// CHECK-SAME:      %[[GX:[0-9]+]]: memref<13243xf32, #asc.scope<gm>>, %[[GY:[0-9]+]]: memref<13243xf32, #asc.scope<gm>>, %[[GO:[0-9]+]]: memref<13243xf32, #asc.scope<gm>>)
// CHECK-SAME:      attributes {asc.kernel, asc.tiling = {units = 35 : i64, block_dim = 35 : i64, units_per_core = 1 : i64, units_rem = 0 : i64, tile_units = 1 : i64, rows = 1 : i64, m = 1 : i64, l = 13243 : i64, chunk_len = 384 : i64}, asc.platform = "910B2"} {
// CHECK:         scf.for %[[U:[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} {

// Unit u is chunk (u mod 35) of row (u div 35); the chunk starts at c0 = (u mod 35) * 384 and
// holds min(384, 13243 - c0) elements.
// CHECK-NEXT:      %[[C35:[0-9]+]] = arith.constant 35 : index
// CHECK-NEXT:      %{{[0-9]+}} = arith.divsi %[[U]], %[[C35]] : index
// CHECK-NEXT:      %[[K:[0-9]+]] = arith.remsi %[[U]], %[[C35]] : index
// CHECK-NEXT:      %[[C384:[0-9]+]] = arith.constant 384 : index
// CHECK-NEXT:      %[[C0E:[0-9]+]] = arith.muli %[[K]], %[[C384]] : index
// CHECK-NEXT:      %[[L:[0-9]+]] = arith.constant 13243 : index
// CHECK-NEXT:      %[[LEFT:[0-9]+]] = arith.subi %[[L]], %[[C0E]] : index
// CHECK-NEXT:      %[[LT:[0-9]+]] = arith.cmpi slt, %[[C384]], %[[LEFT]] : index
// CHECK-NEXT:      %[[LEN:[0-9]+]] = arith.select %[[LT]], %[[C384]], %[[LEFT]] : index

// Two inputs, each one block of LEN elements from GM offset c0 into a 384-element buffer.
// CHECK-NEXT:      %[[IA:[0-9]+]] = asc.alloc "in" {buffers = 1 : i64} : memref<384xf32, #asc.scope<ub>>
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:      %[[OA:[0-9]+]] = arith.addi %[[Z]], %[[C0E]] : index
// CHECK-NEXT:      %[[ONE:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:      asc.copy_in %[[GX]][%[[OA]]] -> %[[IA]][%[[Z]]] blocks %[[ONE]] x %[[LEN]] gap %[[Z]] stride %[[C384]] : memref<13243xf32, #asc.scope<gm>>, memref<384xf32, #asc.scope<ub>>
// CHECK-NEXT:      %[[IB:[0-9]+]] = asc.alloc "in" {buffers = 1 : i64} : memref<384xf32, #asc.scope<ub>>
// CHECK-NEXT:      %[[OB:[0-9]+]] = arith.addi %[[Z]], %[[C0E]] : index
// CHECK-NEXT:      asc.copy_in %[[GY]][%[[OB]]] -> %[[IB]][%[[Z]]] blocks %[[ONE]] x %[[LEN]] gap %[[Z]] stride %[[C384]] : memref<13243xf32, #asc.scope<gm>>, memref<384xf32, #asc.scope<ub>>

// Vector ops always run on the whole 384-element chunk (3 repeats of 128). relu runs in place
// on the add's buffer (the add's result dies there), which becomes the copy-out buffer.
// CHECK-NEXT:      %[[OUT:[0-9]+]] = asc.alloc "out" {buffers = 1 : i64} : memref<384xf32, #asc.scope<ub>>
// CHECK-NEXT:      %[[C127:[0-9]+]] = arith.constant 127 : index
// CHECK-NEXT:      %[[T1:[0-9]+]] = arith.addi %[[C384]], %[[C127]] : index
// CHECK-NEXT:      %[[C128:[0-9]+]] = arith.constant 128 : index
// CHECK-NEXT:      %[[T2:[0-9]+]] = arith.divsi %[[T1]], %[[C128]] : index
// CHECK-NEXT:      %[[CNT:[0-9]+]] = arith.muli %[[T2]], %[[C128]] : index
// CHECK-NEXT:      asc.vbinary "add" %[[OUT]], %[[IA]], %[[IB]], %[[CNT]]
// relu is Select(x < +0, +0, x) (NaN guard, passes/nan_guard.py): a +0 buffer, a mask.
// CHECK-NEXT:      %[[ZB:[0-9]+]] = asc.alloc "tmp" {buffers = 1 : i64} : memref<384xf32, #asc.scope<ub>>
// CHECK-NEXT:      asc.vdup %[[ZB]], 0.000000e+00 : f64, %[[CNT]]
// CHECK-NEXT:      %[[MK:[0-9]+]] = asc.alloc "tmp" {buffers = 1 : i64} : memref<512xi1, #asc.scope<ub>>
// CHECK-NEXT:      asc.vcompare "lt" %[[MK]], %[[OUT]], %[[ZB]], %[[CNT]]
// CHECK-NEXT:      asc.vselect %[[OUT]], %[[MK]], %[[ZB]], %[[OUT]], %[[CNT]]

// Copy-out writes exactly LEN elements (no write past the end of the tensor).
// CHECK-NEXT:      %[[OO:[0-9]+]] = arith.addi %[[Z]], %[[C0E]] : index
// CHECK-NEXT:      asc.copy_out %[[OUT]][%[[Z]]] -> %[[GO]][%[[OO]]] blocks %[[ONE]] x %[[LEN]] gap %[[Z]] stride %[[C384]] : memref<384xf32, #asc.scope<ub>>, memref<13243xf32, #asc.scope<gm>>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @add_relu(%x: tensor<13243xf32>, %y: tensor<13243xf32>) -> tensor<13243xf32> {
  %r = asc.fusion(%x, %y) : (tensor<13243xf32>, tensor<13243xf32>) -> tensor<13243xf32> {
  ^bb0(%a: tensor<13243xf32>, %b: tensor<13243xf32>):
    %s = asc.binary "add" %a, %b : tensor<13243xf32>
    %e = asc.unary "relu" %s : tensor<13243xf32>
    asc.yield %e : tensor<13243xf32>
  }
  func.return %r : tensor<13243xf32>
}
