// RUN: pyasc-opt %s -p asc-to-tile --print-between-passes | filecheck %s --check-prefix=EXPAND
// RUN: pyasc-opt %s -p 'asc-to-tile{platform="310P3"},cse' | filecheck %s --check-prefix=P310
// RUN: not pyasc-opt %s -p asc-nope 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not pyasc-opt %s -p 'asc-to-tile{stages=2}' 2>&1 | filecheck %s --check-prefix=BADOPT
// RUN: not pyasc-opt %s -p 'asc-tile{buffers="two"}' 2>&1 | filecheck %s --check-prefix=BADTYPE

// A named pipeline in -p expands to its passes, so the IR is verified (and can be printed)
// between them; options given to a pipeline reach every member pass that declares them.

// EXPAND:      IR after asc-decompose:
// EXPAND:        asc.unary "exp"
// EXPAND:      IR after asc-fuse:
// EXPAND:        asc.fusion(%x)
// EXPAND:      IR after asc-lower-layout:
// EXPAND:      IR after asc-lower-cube:
// EXPAND-NOT:  IR after
// EXPAND:        asc.launch @f_kernel<45 : i64> (%x)
// EXPAND:      asc.platform = "910B2"

// Every value spans both axes, so 1000 x 40 coalesces into one axis of 40000 elements, cut
// into chunks: on 910B2, ceil(40000 / 48) = 834 -> 896 elements, 45 units; on the 310P3's
// 8 vector cores, 5000 -> 5120 elements, 8 units. cse then reuses the `block_idx < units_rem`
// comparison instead of computing it twice.
// P310:       asc.launch @f_kernel<8 : i64> (%x)
// P310:       asc.tiling = {units = 8 : i64, block_dim = 8 : i64, units_per_core = 1 : i64, units_rem = 0 : i64, tile_units = 1 : i64, rows = 1 : i64, m = 1 : i64, l = 40000 : i64, chunk_len = 5120 : i64}, asc.platform = "310P3"
// P310:       %[[B:[0-9]+]] = asc.block_idx
// P310:       %[[REM:[0-9]+]] = asc.tiling_field "units_rem"
// P310:       %[[LT:[0-9]+]] = arith.cmpi slt, %[[B]], %[[REM]] : index
// P310-NEXT:  arith.select %[[LT]], %[[B]], %[[REM]] : index
// P310-NOT:   arith.cmpi
// P310:       arith.select %[[LT]], %{{[0-9]+}}, %{{[0-9]+}} : index
// P310:       scf.for

// UNKNOWN:      unknown pass or pipeline 'asc-nope'; passes: {{.*}}asc-decompose, asc-fuse, asc-lower-layout, asc-lower-cube, asc-tile, asc-double-buffer, asc-buffer-alloc{{.*}}; pipelines: asc-to-tile, asc-to-ascendc
// UNKNOWN-NOT:  Traceback
// BADOPT:       pipeline 'asc-to-tile' has no pass taking option(s) stages
// BADTYPE:      invalid options for pass 'asc-tile': Incompatible types: given ('two',), expected <class 'int'>
func.func @f(%x: tensor<1000x40xf16>) -> tensor<1000x40xf16> {
  %y = asc.unary "sigmoid" %x : tensor<1000x40xf16>
  func.return %y : tensor<1000x40xf16>
}
