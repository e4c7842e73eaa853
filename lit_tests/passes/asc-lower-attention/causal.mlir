// RUN: pyasc-opt %s -p asc-fuse,asc-lower-attention | filecheck %s

// Causal attention (top-left aligned, torch's is_causal): q [40, 8], k [24, 8], v [24, 4], f32.
// Key blocks of 32 (block_kv); causal caps the query block at the key block: 32 rows, two
// units (rows 0..31 and 32..39). Per unit at row m0: the unmasked loop over the keys
// [0, min(m0, 24)) in ceil(min(m0, 24) / 32) blocks, then ONE diagonal block of
// min(rows, 24 - m0) keys at m0 (0 or 1 trips), masked by the f16 tile built once per kernel.
// CHECK-LABEL: func.func @causal_kernel(
// CHECK-SAME:      tile_m = 32 : i64, tile_n = 4 : i64, block_kv = 32 : i64

// The diagonal tile, before the unit loop: row ramp (16 per row, scaled to r), column ramp,
// c - r, then min((c - r - 0.5) * -inf, 0) and kept in f16.
// CHECK:         %[[MASK:[0-9]+]] = asc.alloc "tmp" {{.*}} : memref<1024xf16, #asc.scope<ub>>
// CHECK:         asc.vindex %[[ROWS:[0-9]+]], 0.000000e+00 : f64, %{{.*}} : memref<512xf32
// CHECK-NEXT:    asc.vscalar "muls" %[[ROWS]], %[[ROWS]], 6.250000e-02
// CHECK:         asc.vindex %[[COLS:[0-9]+]], 0.000000e+00 : f64, %{{.*}} : memref<128xf32
// CHECK-NEXT:    asc.vbroadcast %[[D:[0-9]+]], %[[COLS]] {{.*}}src_rows = false, src_m = false, src_l = true}
// CHECK-NEXT:    asc.vbroadcast %[[R:[0-9]+]], %[[ROWS]] {{.*}}src_rows = true, src_m = false, src_l = false}
// CHECK-NEXT:    asc.vbinary "sub" %[[D]], %[[D]], %[[R]]
// CHECK-NEXT:    asc.vscalar "adds" %[[D]], %[[D]], -5.000000e-01
// CHECK-NEXT:    asc.vscalar "muls" %[[D]], %[[D]], 0xfff0000000000000
// CHECK-NEXT:    asc.vscalar "mins" %[[D]], %[[D]], 0.000000e+00
// CHECK-NEXT:    asc.vcast "rint" %[[MASK]], %[[D]]
// CHECK:         scf.for %[[U:[0-9]+]] =

// The unmasked keys: extent min(m0, 24), trips (extent + 31) / 32.
// CHECK:           %[[SKV:[0-9]+]] = arith.constant {{.*}} 24 : index
// CHECK-NEXT:      arith.cmpi slt, %[[M0:[0-9]+]], %[[SKV]]
// CHECK-NEXT:      %[[EXT:[0-9]+]] = arith.select
// CHECK:           %[[TRIPS:[0-9]+]] = arith.divsi
// CHECK:           %[[LEFT:[0-9]+]] = arith.subi %[[SKV]], %[[M0]]
// Diagonal trips min(1, max(0, 24 - m0)).
// CHECK:           arith.select %{{.*}}, %[[LEFT]],
// CHECK:           %[[DIAG:[0-9]+]] = arith.select
// Diagonal keys min(rows, 24 - m0).
// CHECK-NEXT:      arith.cmpi slt, %{{.*}}, %[[LEFT]]
// CHECK-NEXT:      %[[DLEN:[0-9]+]] = arith.select
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[TRIPS]] step
// CHECK:             asc.mmad %[[S:[0-9]+]],
// CHECK-NEXT:        asc.vscalar "muls" %[[S]], %[[S]], 5.000000e-01
// CHECK-NOT:         asc.vcast "none" %{{.*}}, %[[MASK]]
// CHECK:             asc.vreduce "max" "last"
// CHECK:           }
// The diagonal block: its scores plus the mask (cast to f32 in the scratch tile).
// CHECK:           scf.for %{{.*}} = %{{.*}} to %[[DIAG]] step
// CHECK:             asc.mmad %[[S]], %{{.*}} m %{{.*}} n %[[DLEN]]
// CHECK-NEXT:        asc.vscalar "muls" %[[S]], %[[S]], 5.000000e-01
// CHECK-NEXT:        asc.vcast "none" %[[BC:[0-9]+]], %[[MASK]]
// CHECK-NEXT:        asc.vbinary "add" %[[S]], %[[S]], %[[BC]]
// CHECK:             asc.vreduce "max" "last"
// CHECK:           }
// CHECK:           asc.vbinary "div"
func.func @causal(%q: tensor<40x8xf32>, %k: tensor<24x8xf32>, %v: tensor<24x4xf32>) -> tensor<40x4xf32> {
  %o = asc.flash_attention %q, %k, %v {scale = 0.5 : f64, block_kv = #builtin.int<32>, causal, asc.loc = "a.py:3:7"} : (tensor<40x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>) -> tensor<40x4xf32>
  func.return %o : tensor<40x4xf32>
}
