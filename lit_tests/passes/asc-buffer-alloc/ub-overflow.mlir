// RUN: not pyasc-opt %s -p asc-buffer-alloc 2>&1 | filecheck %s --check-prefix=ERR
// RUN: pyasc-opt %s -p 'asc-buffer-alloc{platform="310P3"}' | filecheck %s --check-prefix=P310

// Two copies of a 96 KiB input queue (196608 B) exceed the 188160 B a 910B2 kernel may use
// (192 KiB - 256 B system - 8 KiB reserve) but fit a 310P3 (256 KiB UB: 253696 B usable).
// The error names the kernel, its source line, every buffer, and exits 1 without a traceback.

// ERR:      k.py:7:1: error: kernel big_in needs 197120 bytes of UB but 188160 are usable (in buffer 2 x 98304 B; out buffer 1 x 512 B; compute arena 0 B for 0 scratch buffers)
// ERR-NEXT: hint: use a smaller tile (asc-tile) or disable double buffering
// ERR-NOT:  Traceback

// P310-LABEL: func.func @big_in(
// P310-SAME:      asc.calc_base = 197120 : i64, asc.calc_bytes = 0 : i64, asc.ub_bytes = 197120 : i64
// P310:           asc.alloc "in" {buffers = 2 : i64, offset = 0 : i64} : memref<24576xf32, #asc.scope<ub>>
// P310:           asc.alloc "out" {buffers = 1 : i64, offset = 196608 : i64} : memref<128xf32, #asc.scope<ub>>
func.func @big_in(%gx: memref<24576xf32, #asc.scope<gm>>, %gy: memref<1xf32, #asc.scope<gm>>) attributes {asc.kernel, asc.loc = "k.py:7:1"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c24576 = arith.constant 24576 : index
  %in = asc.alloc "in" {buffers = 2 : i64} : memref<24576xf32, #asc.scope<ub>>
  asc.copy_in %gx[%c0] -> %in[%c0] blocks %c1 x %c24576 gap %c0 stride %c24576 : memref<24576xf32, #asc.scope<gm>>, memref<24576xf32, #asc.scope<ub>>
  %out = asc.alloc "out" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  asc.vreduce "sum" "last" %out, %in, %in rows %c1 m %c1 len %c24576 ls %c24576 : memref<128xf32, #asc.scope<ub>>, memref<24576xf32, #asc.scope<ub>>, memref<24576xf32, #asc.scope<ub>>
  asc.copy_out %out[%c0] -> %gy[%c0] blocks %c1 x %c1 gap %c0 stride %c16 : memref<128xf32, #asc.scope<ub>>, memref<1xf32, #asc.scope<gm>>
  func.return
}
