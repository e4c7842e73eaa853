// RUN: pyasc-opt %s -p asc-tile | filecheck %s

// Outer-product broadcast [4,1,7] + [1,5,1] -> [4,5,7]: the iteration axes stay 4 x 5 x 7
// (no two can be coalesced). Outer rows = 4 * 5 = 20 (< 48 cores; a chunk would hold the whole
// 7-element row, so plain rows mode: 20 units on 20 cores, one row per tile). Each input is
// gathered row by row from its own GM layout: a (row g) starts at ((g div 5) mod 4) * 7; b
// (row g) is the single element (g mod 5), stored in a 16-element slot.

// CHECK-LABEL: func.func @outer(
// CHECK-NEXT:    %{{.*}} = asc.launch @outer_kernel<20 : i64> (%a, %b) : (tensor<4x1x7xf32>, tensor<1x5x1xf32>) -> tensor<4x5x7xf32>

// CHECK-LABEL: func.func @outer_kernel(
// CHECK-SAME:      %[[GA:[0-9]+]]: memref<28xf32, #asc.scope<gm>>, %[[GB:[0-9]+]]: memref<5xf32, #asc.scope<gm>>, %[[GO:[0-9]+]]: memref<140xf32, #asc.scope<gm>>)
// CHECK-SAME:      asc.tiling = {units = 20 : i64, block_dim = 20 : i64, units_per_core = 1 : i64, units_rem = 0 : i64, tile_units = 1 : i64, rows = 20 : i64, m = 1 : i64, l = 7 : i64, chunk_len = 7 : i64}
// CHECK:         scf.for %[[U:[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} {
// CHECK:           %[[IA:[0-9]+]] = asc.alloc "in" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
// CHECK:           scf.for %[[R:[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} {
// CHECK-NEXT:        %[[G:[0-9]+]] = arith.addi %[[U]], %[[R]] : index
// CHECK-NEXT:        %[[C5:[0-9]+]] = arith.constant 5 : index
// CHECK-NEXT:        %[[Q:[0-9]+]] = arith.divsi %[[G]], %[[C5]] : index
// CHECK-NEXT:        %[[C4:[0-9]+]] = arith.constant 4 : index
// CHECK-NEXT:        %[[I0:[0-9]+]] = arith.remsi %[[Q]], %[[C4]] : index
// CHECK-NEXT:        %[[C7:[0-9]+]] = arith.constant 7 : index
// CHECK-NEXT:        %{{[0-9]+}} = arith.muli %[[I0]], %[[C7]] : index
// CHECK:             asc.copy_in %[[GA]][%{{[0-9]+}}] -> %[[IA]][%{{[0-9]+}}] blocks %{{[0-9]+}} x %[[C7]]
// CHECK:           %[[IB:[0-9]+]] = asc.alloc "in" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
// CHECK:           scf.for
// CHECK:             %[[I1:[0-9]+]] = arith.remsi %{{[0-9]+}}, %{{[0-9]+}} : index
// CHECK:             asc.copy_in %[[GB]][%{{[0-9]+}}] -> %[[IB]]
// CHECK:           asc.vbroadcast %{{[0-9]+}}, %[[IB]] {{.*}} {src_rows = true, src_m = false, src_l = false}
// CHECK:           asc.vbinary "add"
// CHECK:           asc.copy_out {{.*}} -> %[[GO]]

func.func @outer(%a: tensor<4x1x7xf32>, %b: tensor<1x5x1xf32>) -> tensor<4x5x7xf32> {
  %r = asc.fusion(%a, %b) : (tensor<4x1x7xf32>, tensor<1x5x1xf32>) -> tensor<4x5x7xf32> {
  ^bb0(%x: tensor<4x1x7xf32>, %y: tensor<1x5x1xf32>):
    %xb = asc.broadcast %x : tensor<4x1x7xf32> -> tensor<4x5x7xf32>
    %yb = asc.broadcast %y : tensor<1x5x1xf32> -> tensor<4x5x7xf32>
    %s = asc.binary "add" %xb, %yb : tensor<4x5x7xf32>
    asc.yield %s : tensor<4x5x7xf32>
  }
  func.return %r : tensor<4x5x7xf32>
}

// The same with 16 x 5 = 80 outer rows (>= 48 cores): rows mode, 2-row tiles. A partially
// broadcast input is gathered row by row: an scf.for over the n rows of the tile, row r of
// the tile (global row g = u + r) landing in UB slot r * 16.
// CHECK-LABEL: func.func @outer_rows_kernel(
// CHECK-SAME:      %[[GA:[0-9]+]]: memref<112xf32, #asc.scope<gm>>, %[[GB:[0-9]+]]: memref<5xf32, #asc.scope<gm>>, %[[GO:[0-9]+]]: memref<560xf32, #asc.scope<gm>>)
// CHECK-SAME:      asc.tiling = {units = 80 : i64, block_dim = 48 : i64, units_per_core = 1 : i64, units_rem = 32 : i64, tile_units = 2 : i64, rows = 80 : i64, m = 1 : i64, l = 7 : i64, chunk_len = 7 : i64}
// CHECK:         scf.for %[[U:[0-9]+]] = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} {
// CHECK:           %[[N:[0-9]+]] = arith.select %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : index
// CHECK-NEXT:      %[[IA:[0-9]+]] = asc.alloc "in" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
// CHECK-NEXT:      %[[Z:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:      %[[ONE:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:      scf.for %[[R:[0-9]+]] = %[[Z]] to %[[N]] step %[[ONE]] {
// CHECK-NEXT:        %[[G:[0-9]+]] = arith.addi %[[U]], %[[R]] : index
// CHECK-NEXT:        %[[C5:[0-9]+]] = arith.constant 5 : index
// CHECK-NEXT:        %[[Q:[0-9]+]] = arith.divsi %[[G]], %[[C5]] : index
// CHECK-NEXT:        %[[C16:[0-9]+]] = arith.constant 16 : index
// CHECK-NEXT:        %[[I0:[0-9]+]] = arith.remsi %[[Q]], %[[C16]] : index
// CHECK-NEXT:        %[[C7:[0-9]+]] = arith.constant 7 : index
// CHECK-NEXT:        %[[R0:[0-9]+]] = arith.muli %[[I0]], %[[C7]] : index
// CHECK-NEXT:        %[[Z2:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:        %[[OA:[0-9]+]] = arith.addi %[[Z2]], %[[R0]] : index
// CHECK-NEXT:        %[[UA:[0-9]+]] = arith.muli %[[R]], %[[C16]] : index
// CHECK-NEXT:        %[[ONE2:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:        asc.copy_in %[[GA]][%[[OA]]] -> %[[IA]][%[[UA]]] blocks %[[ONE2]] x %[[C7]] gap %[[Z2]] stride %[[C16]] : memref<112xf32, #asc.scope<gm>>, memref<128xf32, #asc.scope<ub>>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[IB:[0-9]+]] = asc.alloc "in" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
// CHECK-NEXT:      scf.for %[[R:[0-9]+]] = %[[Z]] to %[[N]] step %[[ONE]] {
// CHECK-NEXT:        %[[G:[0-9]+]] = arith.addi %[[U]], %[[R]] : index
// CHECK-NEXT:        %[[C1:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:        %[[Q:[0-9]+]] = arith.divsi %[[G]], %[[C1]] : index
// CHECK-NEXT:        %[[C5:[0-9]+]] = arith.constant 5 : index
// CHECK-NEXT:        %[[I1:[0-9]+]] = arith.remsi %[[Q]], %[[C5]] : index
// CHECK-NEXT:        %[[Z3:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:        %[[OB:[0-9]+]] = arith.addi %[[Z3]], %[[I1]] : index
// CHECK-NEXT:        %[[C16:[0-9]+]] = arith.constant 16 : index
// CHECK-NEXT:        %[[UB:[0-9]+]] = arith.muli %[[R]], %[[C16]] : index
// CHECK-NEXT:        asc.copy_in %[[GB]][%[[OB]]] -> %[[IB]][%[[UB]]] blocks %[[C1]] x %[[C1]] gap %[[Z3]] stride %[[C16]] : memref<5xf32, #asc.scope<gm>>, memref<128xf32, #asc.scope<ub>>
// CHECK-NEXT:      }
// The output spans all outer axes: n rows of 7 in one strided copy.
// CHECK:           %[[C7:[0-9]+]] = arith.constant 7 : index
// CHECK-NEXT:      %[[OO:[0-9]+]] = arith.muli %[[U]], %[[C7]] : index
// CHECK-NEXT:      asc.copy_out %{{[0-9]+}}[%[[Z]]] -> %[[GO]][%[[OO]]] blocks %[[N]] x %[[C7]] gap %[[Z]] stride %{{[0-9]+}} : memref<128xf32, #asc.scope<ub>>, memref<560xf32, #asc.scope<gm>>
func.func @outer_rows(%a: tensor<16x1x7xf32>, %b: tensor<1x5x1xf32>) -> tensor<16x5x7xf32> {
  %r = asc.fusion(%a, %b) : (tensor<16x1x7xf32>, tensor<1x5x1xf32>) -> tensor<16x5x7xf32> {
  ^bb0(%x: tensor<16x1x7xf32>, %y: tensor<1x5x1xf32>):
    %xb = asc.broadcast %x : tensor<16x1x7xf32> -> tensor<16x5x7xf32>
    %yb = asc.broadcast %y : tensor<1x5x1xf32> -> tensor<16x5x7xf32>
    %s = asc.binary "add" %xb, %yb : tensor<16x5x7xf32>
    asc.yield %s : tensor<16x5x7xf32>
  }
  func.return %r : tensor<16x5x7xf32>
}

// The same broadcast with rows of 4100 elements: chunk mode (rows >= 2048), one unit per
// (row, chunk): 3 chunks per row so 20 rows fill the 48 cores (ceil(4100 / 3) = 1367 rounded
// up to 1408); the gathered GM row offset gets the chunk start c0 added.
// CHECK-LABEL: func.func @outer_long_kernel(
// CHECK-SAME:      asc.tiling = {units = 60 : i64, block_dim = 48 : i64, units_per_core = 1 : i64, units_rem = 12 : i64, tile_units = 1 : i64, rows = 20 : i64, m = 1 : i64, l = 4100 : i64, chunk_len = 1408 : i64}
// CHECK:           arith.remsi
// CHECK:           asc.copy_in
// CHECK:           asc.vbroadcast {{.*}} {src_rows = true, src_m = false, src_l = false}
func.func @outer_long(%a: tensor<4x1x4100xf32>, %b: tensor<1x5x1xf32>) -> tensor<4x5x4100xf32> {
  %r = asc.fusion(%a, %b) : (tensor<4x1x4100xf32>, tensor<1x5x1xf32>) -> tensor<4x5x4100xf32> {
  ^bb0(%x: tensor<4x1x4100xf32>, %y: tensor<1x5x1xf32>):
    %xb = asc.broadcast %x : tensor<4x1x4100xf32> -> tensor<4x5x4100xf32>
    %yb = asc.broadcast %y : tensor<1x5x1xf32> -> tensor<4x5x4100xf32>
    %s = asc.binary "add" %xb, %yb : tensor<4x5x4100xf32>
    asc.yield %s : tensor<4x5x4100xf32>
  }
  func.return %r : tensor<4x5x4100xf32>
}
