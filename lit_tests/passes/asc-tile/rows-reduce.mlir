// RUN: pyasc-opt %s -p asc-tile | filecheck %s

// Rows mode: a softmax over the last axis of 1000 rows x 40 f32. The outer axis (1000 rows) is
// split over 48 vector cores (910B2): 1000 = 48 * 20 + 40, so cores 0..39 take 21 rows and
// cores 40..47 take 20; tiles hold up to 21 rows. Each UB row slot is 40 rounded up to 16
// = 48 elements; a 21-row tile is 21 * 48 = 1008 -> 1024 elements (multiple of 128); a
// per-row value (reduction result) keeps one 16-element slot per row: 21 * 16 = 336 -> 384.

// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT:    %[[Y:.*]] = asc.launch @softmax_kernel<48 : i64> (%x) : (tensor<1000x40xf32>) -> tensor<1000x40xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<1000x40xf32>

// CHECK-LABEL: func.func @softmax_kernel(
// CHECK-SAME:      %[[GX:[0-9]+]]: memref<40000xf32, #asc.scope<gm>>, %[[GY:[0-9]+]]: memref<40000xf32, #asc.scope<gm>>)
// CHECK-SAME:      attributes {asc.kernel, asc.tiling = {units = 1000 : i64, block_dim = 48 : i64, units_per_core = 20 : i64, units_rem = 40 : i64, tile_units = 21 : i64, rows = 1000 : i64, m = 1 : i64, l = 40 : i64, chunk_len = 40 : i64}, asc.platform = "910B2"} {

// Core b starts at b * units_per_core + min(b, units_rem) and takes one more unit if b < rem.
// CHECK-NEXT:    %[[B:[0-9]+]] = asc.block_idx
// CHECK-NEXT:    %[[PER:[0-9]+]] = asc.tiling_field "units_per_core"
// CHECK-NEXT:    %[[REM:[0-9]+]] = asc.tiling_field "units_rem"
// CHECK-NEXT:    %[[STEP:[0-9]+]] = asc.tiling_field "tile_units"
// CHECK-NEXT:    %[[BP:[0-9]+]] = arith.muli %[[B]], %[[PER]] : index
// CHECK-NEXT:    %[[LT:[0-9]+]] = arith.cmpi slt, %[[B]], %[[REM]] : index
// CHECK-NEXT:    %[[MIN:[0-9]+]] = arith.select %[[LT]], %[[B]], %[[REM]] : index
// CHECK-NEXT:    %[[START:[0-9]+]] = arith.addi %[[BP]], %[[MIN]] : index
// CHECK-NEXT:    %[[LT2:[0-9]+]] = arith.cmpi slt, %[[B]], %[[REM]] : index
// CHECK-NEXT:    %[[ONE:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[ZERO:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[EXTRA:[0-9]+]] = arith.select %[[LT2]], %[[ONE]], %[[ZERO]] : index
// CHECK-NEXT:    %[[CNT:[0-9]+]] = arith.addi %[[PER]], %[[EXTRA]] : index
// CHECK-NEXT:    %[[END:[0-9]+]] = arith.addi %[[START]], %[[CNT]] : index
// CHECK-NEXT:    scf.for %[[U:[0-9]+]] = %[[START]] to %[[END]] step %[[STEP]] {

// The last tile of a core may be short: n = min(tile_units, end - u).
// CHECK-NEXT:      %[[LEFT:[0-9]+]] = arith.subi %[[END]], %[[U]] : index
// CHECK-NEXT:      %[[C:[0-9]+]] = arith.cmpi slt, %[[STEP]], %[[LEFT]] : index
// CHECK-NEXT:      %[[N:[0-9]+]] = arith.select %[[C]], %[[STEP]], %[[LEFT]] : index

// Copy-in: n blocks of 40 elements, GM rows contiguous (gap 0), UB rows 48 apart.
// CHECK-NEXT:      %[[IN:[0-9]+]] = asc.alloc "in" {buffers = 1 : i64} : memref<1024xf32, #asc.scope<ub>>
// CHECK-NEXT:      %[[C40:[0-9]+]] = arith.constant 40 : index
// CHECK-NEXT:      %[[OFF:[0-9]+]] = arith.muli %[[U]], %[[C40]] : index
// CHECK-NEXT:      %[[C0:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:      %[[C48:[0-9]+]] = arith.constant 48 : index
// CHECK-NEXT:      asc.copy_in %[[GX]][%[[OFF]]] -> %[[IN]][%[[C0]]] blocks %[[N]] x %[[C40]] gap %[[C0]] stride %[[C48]] : memref<40000xf32, #asc.scope<gm>>, memref<1024xf32, #asc.scope<ub>>

// max over each row: results 16 elements apart; work buffer of one row slot.
// CHECK-NEXT:      %[[MAX:[0-9]+]] = asc.alloc "tmp" {buffers = 1 : i64} : memref<384xf32, #asc.scope<ub>>
// CHECK-NEXT:      %[[WORK:[0-9]+]] = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
// CHECK-NEXT:      %[[C1:[0-9]+]] = arith.constant 1 : index
// CHECK-NEXT:      asc.vreduce "max" "last" %[[MAX]], %[[IN]], %[[WORK]] rows %[[N]] m %[[C1]] len %[[C40]] ls %[[C48]]
// The broadcast max lands in the copy-out buffer; sub, exp and the final div then run in place
// on it (each intermediate dies at the op that overwrites it), so the tile needs one full-size
// scratch buffer (the broadcast sum) besides the queues.
// CHECK-NEXT:      %[[OUT:[0-9]+]] = asc.alloc "out" {buffers = 1 : i64} : memref<1024xf32, #asc.scope<ub>>
// CHECK-NEXT:      asc.vbroadcast %[[OUT]], %[[MAX]] rows %[[N]] m %[[C1]] ls %[[C48]] {src_rows = true, src_m = false, src_l = false}

// Vector ops run on round_up(n * 48, 128) elements.
// CHECK-NEXT:      %[[NL:[0-9]+]] = arith.muli %[[N]], %[[C48]] : index
// CHECK-NEXT:      %[[C127:[0-9]+]] = arith.constant 127 : index
// CHECK-NEXT:      %[[T1:[0-9]+]] = arith.addi %[[NL]], %[[C127]] : index
// CHECK-NEXT:      %[[C128:[0-9]+]] = arith.constant 128 : index
// CHECK-NEXT:      %[[T2:[0-9]+]] = arith.divsi %[[T1]], %[[C128]] : index
// CHECK-NEXT:      %[[COUNT:[0-9]+]] = arith.muli %[[T2]], %[[C128]] : index
// CHECK-NEXT:      asc.vbinary "sub" %[[OUT]], %[[IN]], %[[OUT]], %[[COUNT]]
// CHECK-NEXT:      asc.vunary "exp" %[[OUT]], %[[OUT]], %[[COUNT]]
// CHECK-NEXT:      %[[SUM:[0-9]+]] = asc.alloc "tmp" {buffers = 1 : i64} : memref<384xf32, #asc.scope<ub>>
// CHECK-NEXT:      %[[WORK2:[0-9]+]] = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
// CHECK-NEXT:      asc.vreduce "sum" "last" %[[SUM]], %[[OUT]], %[[WORK2]] rows %[[N]] m %[[C1]] len %[[C40]] ls %[[C48]]
// CHECK-NEXT:      %[[SUMB:[0-9]+]] = asc.alloc "tmp" {buffers = 1 : i64} : memref<1024xf32, #asc.scope<ub>>
// CHECK-NEXT:      asc.vbroadcast %[[SUMB]], %[[SUM]] rows %[[N]] m %[[C1]] ls %[[C48]] {src_rows = true, src_m = false, src_l = false}
// CHECK-NEXT:      asc.vbinary "div" %[[OUT]], %[[OUT]], %[[SUMB]], %[[COUNT]]
// CHECK-NEXT:      %[[OFF2:[0-9]+]] = arith.muli %[[U]], %[[C40]] : index
// CHECK-NEXT:      asc.copy_out %[[OUT]][%[[C0]]] -> %[[GY]][%[[OFF2]]] blocks %[[N]] x %[[C40]] gap %[[C0]] stride %[[C48]] : memref<1024xf32, #asc.scope<ub>>, memref<40000xf32, #asc.scope<gm>>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @softmax(%x: tensor<1000x40xf32>) -> tensor<1000x40xf32> {
  %r = asc.fusion(%x) : (tensor<1000x40xf32>) -> tensor<1000x40xf32> {
  ^bb0(%a: tensor<1000x40xf32>):
    %m = asc.reduce "max" %a {axes = array<i64: 1>, keepdim = true} : tensor<1000x40xf32> -> tensor<1000x1xf32>
    %mb = asc.broadcast %m : tensor<1000x1xf32> -> tensor<1000x40xf32>
    %d = asc.binary "sub" %a, %mb : tensor<1000x40xf32>
    %e = asc.unary "exp" %d : tensor<1000x40xf32>
    %s = asc.reduce "sum" %e {axes = array<i64: 1>, keepdim = true} : tensor<1000x40xf32> -> tensor<1000x1xf32>
    %sb = asc.broadcast %s : tensor<1000x1xf32> -> tensor<1000x40xf32>
    %y = asc.binary "div" %e, %sb : tensor<1000x40xf32>
    asc.yield %y : tensor<1000x40xf32>
  }
  func.return %r : tensor<1000x40xf32>
}

// Reduction over a middle axis ([6, 8, 40] f16, axis 1): rows = 6, M = 8, L = 40; one row per
// core; the "mid" reduce adds the 8 slots of 48 elements of each row.
// CHECK-LABEL: func.func @mid_kernel(
// CHECK-SAME:      %[[GX:[0-9]+]]: memref<1920xf16, #asc.scope<gm>>, %[[GY:[0-9]+]]: memref<240xf16, #asc.scope<gm>>)
// CHECK-SAME:      asc.tiling = {units = 6 : i64, block_dim = 6 : i64, units_per_core = 1 : i64, units_rem = 0 : i64, tile_units = 1 : i64, rows = 6 : i64, m = 8 : i64, l = 40 : i64, chunk_len = 40 : i64}
// CHECK:           %[[IN:[0-9]+]] = asc.alloc "in" {buffers = 1 : i64} : memref<384xf16, #asc.scope<ub>>
// CHECK-NEXT:      %[[C320:[0-9]+]] = arith.constant 320 : index
// CHECK-NEXT:      %[[OFF:[0-9]+]] = arith.muli %[[U:[0-9]+]], %[[C320]] : index
// CHECK-NEXT:      %[[C8:[0-9]+]] = arith.constant 8 : index
// CHECK-NEXT:      %[[NB:[0-9]+]] = arith.muli %[[N:[0-9]+]], %[[C8]] : index
// CHECK-NEXT:      %[[C0:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:      %[[C40:[0-9]+]] = arith.constant 40 : index
// CHECK-NEXT:      %[[C48:[0-9]+]] = arith.constant 48 : index
// CHECK-NEXT:      asc.copy_in %[[GX]][%[[OFF]]] -> %[[IN]][%[[C0]]] blocks %[[NB]] x %[[C40]] gap %[[C0]] stride %[[C48]]
// CHECK-NEXT:      %[[OUT:[0-9]+]] = asc.alloc "out" {buffers = 1 : i64} : memref<128xf16, #asc.scope<ub>>
// CHECK-NEXT:      asc.vreduce "sum" "mid" %[[OUT]], %[[IN]], %[[IN]] rows %[[N]] m %[[C8]] len %[[C48]] ls %[[C48]]
// CHECK-NEXT:      %[[OFF2:[0-9]+]] = arith.muli %[[U]], %[[C40]] : index
// CHECK-NEXT:      asc.copy_out %[[OUT]][%[[C0]]] -> %[[GY]][%[[OFF2]]] blocks %[[N]] x %[[C40]] gap %[[C0]] stride %[[C48]]
func.func @mid(%x: tensor<6x8x40xf16>) -> tensor<6x1x40xf16> {
  %y = asc.fusion(%x) : (tensor<6x8x40xf16>) -> tensor<6x1x40xf16> {
  ^bb0(%a: tensor<6x8x40xf16>):
    %s = asc.reduce "sum" %a {axes = array<i64: 1>, keepdim = true} : tensor<6x8x40xf16> -> tensor<6x1x40xf16>
    asc.yield %s : tensor<6x1x40xf16>
  }
  func.return %y : tensor<6x1x40xf16>
}
