// RUN: pyasc-opt %s | pyasc-opt | filecheck %s
// RUN: pyasc-opt %s --print-op-generic | pyasc-opt | filecheck %s
// RUN: pyasc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Every asc op, at tensor level and at tile level, prints in its custom form, parses back
// to the same text, and its generic form parses back too.

// CHECK-LABEL: func.func @tensor_level(
// CHECK-SAME:      %x: tensor<4x40xf32>, %w: tensor<40xf32>, %h: tensor<4x40xf16>
func.func @tensor_level(%x: tensor<4x40xf32>, %w: tensor<40xf32>, %h: tensor<4x40xf16>) -> (tensor<4x40xf32>, tensor<4xf32>, tensor<160xf32>, tensor<4x40xf16>, tensor<1x1xf32>) {
  // CHECK-NEXT: %c = asc.constant 1.500000e+00 : f64 -> tensor<4x40xf32>
  %c = asc.constant 1.5 : f64 -> tensor<4x40xf32>
  // CHECK-NEXT: %u = asc.unary "exp" %x : tensor<4x40xf32>
  %u = asc.unary "exp" %x : tensor<4x40xf32>
  // CHECK-NEXT: %sg = asc.unary "sigmoid" %u : tensor<4x40xf32>
  %sg = asc.unary "sigmoid" %u : tensor<4x40xf32>
  // CHECK-NEXT: %b = asc.binary "div" %sg, %c : tensor<4x40xf32>
  %b = asc.binary "div" %sg, %c : tensor<4x40xf32>
  // CHECK-NEXT: %m = asc.compare "ge" %b, %x : tensor<4x40xf32> -> tensor<4x40xi1>
  %m = asc.compare "ge" %b, %x : tensor<4x40xf32> -> tensor<4x40xi1>
  // CHECK-NEXT: %s = asc.select %m, %b, %x : tensor<4x40xi1>, tensor<4x40xf32>
  %s = asc.select %m, %b, %x : tensor<4x40xi1>, tensor<4x40xf32>
  // CHECK-NEXT: %hc = asc.cast %s : tensor<4x40xf32> -> tensor<4x40xf16>
  %hc = asc.cast %s : tensor<4x40xf32> -> tensor<4x40xf16>
  // CHECK-NEXT: %ha = asc.binary "max" %hc, %h : tensor<4x40xf16>
  %ha = asc.binary "max" %hc, %h : tensor<4x40xf16>
  // CHECK-NEXT: %wb = asc.broadcast %w : tensor<40xf32> -> tensor<4x40xf32>
  %wb = asc.broadcast %w : tensor<40xf32> -> tensor<4x40xf32>
  // CHECK-NEXT: %r = asc.reduce "sum" %wb {axes = array<i64: 1>, keepdim = false} : tensor<4x40xf32> -> tensor<4xf32>
  %r = asc.reduce "sum" %wb {axes = array<i64: 1>, keepdim = false} : tensor<4x40xf32> -> tensor<4xf32>
  // CHECK-NEXT: %v = asc.reduce "var" %x {axes = array<i64: 0, 1>, keepdim = true, correction = #builtin.int<1>} : tensor<4x40xf32> -> tensor<1x1xf32>
  %v = asc.reduce "var" %x {axes = array<i64: 0, 1>, keepdim = true, correction = #builtin.int<1>} : tensor<4x40xf32> -> tensor<1x1xf32>
  // CHECK-NEXT: %rs = asc.reshape %s : tensor<4x40xf32> -> tensor<160xf32>
  %rs = asc.reshape %s : tensor<4x40xf32> -> tensor<160xf32>
  // CHECK-NEXT: %f = asc.fusion(%x, %w) {asc.loc = "ln.py:3:8"} : (tensor<4x40xf32>, tensor<40xf32>) -> tensor<4x40xf32> {
  // CHECK-NEXT: ^bb0(%fx: tensor<4x40xf32>, %fw: tensor<40xf32>):
  // CHECK-NEXT:   %fb = asc.broadcast %fw : tensor<40xf32> -> tensor<4x40xf32>
  // CHECK-NEXT:   %fm = asc.binary "mul" %fx, %fb : tensor<4x40xf32>
  // CHECK-NEXT:   asc.yield %fm : tensor<4x40xf32>
  // CHECK-NEXT: }
  %f = asc.fusion(%x, %w) {asc.loc = "ln.py:3:8"} : (tensor<4x40xf32>, tensor<40xf32>) -> tensor<4x40xf32> {
  ^bb0(%fx: tensor<4x40xf32>, %fw: tensor<40xf32>):
    %fb = asc.broadcast %fw : tensor<40xf32> -> tensor<4x40xf32>
    %fm = asc.binary "mul" %fx, %fb : tensor<4x40xf32>
    asc.yield %fm : tensor<4x40xf32>
  }
  // CHECK-NEXT: %l = asc.launch @tile_level<4 : i64> (%x, %w) : (tensor<4x40xf32>, tensor<40xf32>) -> tensor<4x40xf32>
  %l = asc.launch @tile_level<4 : i64> (%x, %w) : (tensor<4x40xf32>, tensor<40xf32>) -> tensor<4x40xf32>
  // CHECK-NEXT: func.return %l, %r, %rs, %ha, %v : tensor<4x40xf32>, tensor<4xf32>, tensor<160xf32>, tensor<4x40xf16>, tensor<1x1xf32>
  func.return %l, %r, %rs, %ha, %v : tensor<4x40xf32>, tensor<4xf32>, tensor<160xf32>, tensor<4x40xf16>, tensor<1x1xf32>
}

// CHECK-LABEL: func.func @tile_level(
// CHECK-SAME:      %gx: memref<160xf32, #asc.scope<gm>>, %gw: memref<40xf32, #asc.scope<gm>>, %gy: memref<160xf32, #asc.scope<gm>>)
// CHECK-SAME:      attributes {asc.kernel, asc.tiling = {tile_units = 1 : i64}}
func.func @tile_level(%gx: memref<160xf32, #asc.scope<gm>>, %gw: memref<40xf32, #asc.scope<gm>>, %gy: memref<160xf32, #asc.scope<gm>>) attributes {asc.kernel, asc.tiling = {tile_units = 1 : i64}} {
  // CHECK-NEXT: %bi = asc.block_idx
  %bi = asc.block_idx
  // CHECK-NEXT: %bn = asc.block_num
  %bn = asc.block_num
  // CHECK-NEXT: %tu = asc.tiling_field "tile_units"
  %tu = asc.tiling_field "tile_units"
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c40 = arith.constant 40 : index
  %c48 = arith.constant 48 : index
  %c128 = arith.constant 128 : index
  // CHECK:      %in = asc.alloc "in" {buffers = 2 : i64, offset = 0 : i64} : memref<128xf32, #asc.scope<ub>>
  %in = asc.alloc "in" {buffers = 2 : i64, offset = 0 : i64} : memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: %cw = asc.alloc "const" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  %cw = asc.alloc "const" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: %t0 = asc.alloc "tmp" {buffers = 1 : i64, offset = 1536 : i64} : memref<128xf32, #asc.scope<ub>>
  %t0 = asc.alloc "tmp" {buffers = 1 : i64, offset = 1536 : i64} : memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: %t1 = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  %t1 = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: %mk = asc.alloc "tmp" {buffers = 1 : i64} : memref<256xi1, #asc.scope<ub>>
  %mk = asc.alloc "tmp" {buffers = 1 : i64} : memref<256xi1, #asc.scope<ub>>
  // CHECK-NEXT: %hf = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf16, #asc.scope<ub>>
  %hf = asc.alloc "tmp" {buffers = 1 : i64} : memref<128xf16, #asc.scope<ub>>
  // CHECK-NEXT: %out = asc.alloc "out" {buffers = 2 : i64} : memref<128xf32, #asc.scope<ub>>
  %out = asc.alloc "out" {buffers = 2 : i64} : memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.copy_in %gw[%c0] -> %cw[%c0] blocks %c1 x %c40 gap %c0 stride %c48 : memref<40xf32, #asc.scope<gm>>, memref<128xf32, #asc.scope<ub>>
  asc.copy_in %gw[%c0] -> %cw[%c0] blocks %c1 x %c40 gap %c0 stride %c48 : memref<40xf32, #asc.scope<gm>>, memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.copy_in %gx[%bi] -> %in[%c0] blocks %tu x %c40 gap %c0 stride %c48 : memref<160xf32, #asc.scope<gm>>, memref<128xf32, #asc.scope<ub>>
  asc.copy_in %gx[%bi] -> %in[%c0] blocks %tu x %c40 gap %c0 stride %c48 : memref<160xf32, #asc.scope<gm>>, memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.vunary "sqrt" %t0, %in, %c128 : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  asc.vunary "sqrt" %t0, %in, %c128 : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.vbinary "add" %t1, %t0, %cw, %c128 : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  asc.vbinary "add" %t1, %t0, %cw, %c128 : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.vscalar "maxs" %t1, %t1, 2.500000e-01 : f64, %c128 : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  asc.vscalar "maxs" %t1, %t1, 0.25 : f64, %c128 : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.vdup %t0, -3.000000e+00 : f64, %c128 : memref<128xf32, #asc.scope<ub>>
  asc.vdup %t0, -3.0 : f64, %c128 : memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.vcompare "lt" %mk, %t1, %t0, %c128 : memref<256xi1, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  asc.vcompare "lt" %mk, %t1, %t0, %c128 : memref<256xi1, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.vselect %t0, %mk, %t1, %t0, %c128 : memref<128xf32, #asc.scope<ub>>, memref<256xi1, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  asc.vselect %t0, %mk, %t1, %t0, %c128 : memref<128xf32, #asc.scope<ub>>, memref<256xi1, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.vcast "rint" %hf, %t0, %c128 : memref<128xf16, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  asc.vcast "rint" %hf, %t0, %c128 : memref<128xf16, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.vcast "none" %t0, %hf, %c128 : memref<128xf32, #asc.scope<ub>>, memref<128xf16, #asc.scope<ub>>
  asc.vcast "none" %t0, %hf, %c128 : memref<128xf32, #asc.scope<ub>>, memref<128xf16, #asc.scope<ub>>
  // CHECK-NEXT: asc.vreduce "sum" "last" %t1, %t0, %in rows %tu m %c1 len %c40 ls %c48 : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  asc.vreduce "sum" "last" %t1, %t0, %in rows %tu m %c1 len %c40 ls %c48 : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.vreduce "max" "mid" %t1, %t0, %t0 rows %c1 m %c1 len %c48 ls %c48 : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  asc.vreduce "max" "mid" %t1, %t0, %t0 rows %c1 m %c1 len %c48 ls %c48 : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.vbroadcast %t0, %t1 rows %tu m %c1 ls %c48 {src_rows = true, src_m = false, src_l = false} : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  asc.vbroadcast %t0, %t1 rows %tu m %c1 ls %c48 {src_rows = true, src_m = false, src_l = false} : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.vcopy %out, %t0, %c128 : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  asc.vcopy %out, %t0, %c128 : memref<128xf32, #asc.scope<ub>>, memref<128xf32, #asc.scope<ub>>
  // CHECK-NEXT: asc.copy_out %out[%c0] -> %gy[%bi] blocks %tu x %c40 gap %c0 stride %c48 {asc.loc = "ln.py:4:4"} : memref<128xf32, #asc.scope<ub>>, memref<160xf32, #asc.scope<gm>>
  asc.copy_out %out[%c0] -> %gy[%bi] blocks %tu x %c40 gap %c0 stride %c48 {asc.loc = "ln.py:4:4"} : memref<128xf32, #asc.scope<ub>>, memref<160xf32, #asc.scope<gm>>
  // CHECK-NEXT: func.return
  func.return
}

// Every memory scope parses and prints.
// CHECK-LABEL: func.func @scopes(
// CHECK-SAME: %a: memref<16xf16, #asc.scope<gm>>, %b: memref<16xf16, #asc.scope<ub>>, %c: memref<16xf16, #asc.scope<l1>>, %d: memref<16xf16, #asc.scope<l0a>>, %e: memref<16xf16, #asc.scope<l0b>>, %f: memref<16xf32, #asc.scope<l0c>>
func.func @scopes(%a: memref<16xf16, #asc.scope<gm>>, %b: memref<16xf16, #asc.scope<ub>>, %c: memref<16xf16, #asc.scope<l1>>, %d: memref<16xf16, #asc.scope<l0a>>, %e: memref<16xf16, #asc.scope<l0b>>, %f: memref<16xf32, #asc.scope<l0c>>) {
  func.return
}

// The generic form spells properties out.
// GENERIC: "asc.constant"() <{value = 1.500000e+00 : f64}> : () -> tensor<4x40xf32>
// GENERIC: "asc.reduce"(%{{.*}}) <{kind = "var", axes = array<i64: 0, 1>, keepdim = true, correction = #builtin.int<1>}> : (tensor<4x40xf32>) -> tensor<1x1xf32>
// GENERIC: "asc.alloc"() <{role = "in", buffers = 2 : i64, offset = 0 : i64}> : () -> memref<128xf32, #asc.scope<ub>>
// GENERIC: "asc.copy_in"(%gw, %cw, %c0, %c0, %c1, %c40, %c0, %c48) : (memref<40xf32, #asc.scope<gm>>, memref<128xf32, #asc.scope<ub>>, index, index, index, index, index, index) -> ()
