// RUN: pyasc-opt %s -p asc-to-tile,asc-double-buffer,asc-buffer-alloc | filecheck %s
// RUN: not pyasc-opt %s -p 'asc-to-tile,asc-double-buffer{stages=3},asc-buffer-alloc' 2>&1 | filecheck %s --check-prefix=STAGES3
// RUN: pyasc-opt %s -p 'asc-to-tile{buffers=3},asc-double-buffer{stages=3},asc-buffer-alloc' | filecheck %s --check-prefix=TILE3

// The layer-norm-like example through the whole tile-level pipeline. One 40-element row per
// tile (4 rows on 4 cores); every buffer is 128 f32 = 512 B. Queues: in 2 x 512 at 0,
// out 2 x 512 at 1024; once-per-kernel buffers: the weight at 2048 and its broadcast to a
// whole tile (loop-invariant, hoisted before the tile loop) at 2560; the scratch arena starts
// at 3072. asc-tile computes in place where an operand dies (mean on the sum's buffer, the
// whole 1/(1 + exp(-y)) chain on the copy-out buffer), so the arena needs two 512 B slots: the
// sum/mean buffer and the reduction's work buffer.

// CHECK-LABEL: func.func @ln_kernel(
// CHECK-SAME:      asc.platform = "910B2", asc.calc_base = 3072 : i64, asc.calc_bytes = 1024 : i64, asc.ub_bytes = 4096 : i64
// CHECK:         %[[W:.*]] = asc.alloc "const" {buffers = 1 : i64, offset = 2048 : i64} : memref<128xf32, #asc.scope<ub>>
// CHECK:         %[[WB:.*]] = asc.alloc "const" {buffers = 1 : i64, offset = 2560 : i64} : memref<128xf32, #asc.scope<ub>>
// CHECK-NEXT:    asc.vbroadcast %[[WB]], %[[W]]
// CHECK:         scf.for
// CHECK:           %[[IN:.*]] = asc.alloc "in" {buffers = 2 : i64, offset = 0 : i64}
// CHECK:           %[[SUM:.*]] = asc.alloc "tmp" {buffers = 1 : i64, offset = 3072 : i64}
// CHECK-NEXT:      %[[WORK:.*]] = asc.alloc "tmp" {buffers = 1 : i64, offset = 3584 : i64}
// CHECK:           asc.vreduce "sum" "last" %[[SUM]], %[[IN]], %[[WORK]]
// CHECK:           asc.vscalar "muls" %[[SUM]], %[[SUM]], 2.500000e-02 : f64
// CHECK-NEXT:      %[[OUT:.*]] = asc.alloc "out" {buffers = 2 : i64, offset = 1024 : i64}
// CHECK-NEXT:      asc.vbroadcast %[[OUT]], %[[SUM]]
// CHECK:           asc.vbinary "sub" %[[OUT]], %[[IN]], %[[OUT]]
// CHECK-NEXT:      asc.vbinary "mul" %[[OUT]], %[[OUT]], %[[WB]]
// CHECK-NEXT:      asc.vscalar "muls" %[[OUT]], %[[OUT]], -1.000000e+00 : f64
// CHECK-NEXT:      asc.vunary "exp" %[[OUT]], %[[OUT]]
// CHECK-NEXT:      asc.vscalar "adds" %[[OUT]], %[[OUT]], 1.000000e+00 : f64
// CHECK-NEXT:      asc.vunary "reciprocal" %[[OUT]], %[[OUT]]
func.func @ln(%x: tensor<4x40xf32>, %w: tensor<40xf32>) -> tensor<4x40xf32> {
  %s = asc.reduce "mean" %x {axes = array<i64: 1>, keepdim = true} : tensor<4x40xf32> -> tensor<4x1xf32>
  %sb = asc.broadcast %s : tensor<4x1xf32> -> tensor<4x40xf32>
  %d = asc.binary "sub" %x, %sb : tensor<4x40xf32>
  %wb = asc.broadcast %w : tensor<40xf32> -> tensor<4x40xf32>
  %y = asc.binary "mul" %d, %wb : tensor<4x40xf32>
  %n = asc.unary "neg" %y : tensor<4x40xf32>
  %ex = asc.unary "exp" %n : tensor<4x40xf32>
  %one = asc.constant 1.0 : f64 -> tensor<4x40xf32>
  %den = asc.binary "add" %ex, %one : tensor<4x40xf32>
  %e = asc.unary "reciprocal" %den : tensor<4x40xf32>
  func.return %e : tensor<4x40xf32>
}

// A long elementwise row: asc-tile sizes chunks for 2 copies of each queue (21888 f16 =
// 43776 B; 4 x 43776 = 175104 B). Three copies then overflow, caught by asc-buffer-alloc;
// asc-tile{buffers=3} sizes for three: 15616 f16 (6 x 31232 = 187392 B <= 188160).
// CHECK-LABEL: func.func @long_kernel(
// CHECK-SAME:      chunk_len = 21888 : i64
// CHECK-SAME:      asc.calc_base = 175104 : i64, asc.calc_bytes = 0 : i64, asc.ub_bytes = 175104 : i64
// STAGES3:     error: kernel long_kernel needs 262656 bytes of UB but 188160 are usable (in buffer 3 x 43776 B; out buffer 3 x 43776 B; compute arena 0 B for 0 scratch buffers)
// STAGES3-NOT: Traceback
// TILE3-LABEL: func.func @long_kernel(
// TILE3-SAME:      chunk_len = 15616 : i64
// TILE3-SAME:      asc.ub_bytes = 187392 : i64
// TILE3:           asc.alloc "in" {buffers = 3 : i64, offset = 0 : i64} : memref<15616xf16, #asc.scope<ub>>
// TILE3:           asc.alloc "out" {buffers = 3 : i64, offset = 93696 : i64} : memref<15616xf16, #asc.scope<ub>>
func.func @long(%x: tensor<1048576xf16>) -> tensor<1048576xf16> {
  %c = asc.constant 1.0 : f64 -> tensor<1048576xf16>
  %y = asc.binary "add" %x, %c : tensor<1048576xf16>
  func.return %y : tensor<1048576xf16>
}
