// RUN: pyasc-opt %s -p asc-to-ascendc | pyasc-opt | filecheck %s
// RUN: pyasc-opt %s -p asc-to-ascendc --print-op-generic | pyasc-opt | filecheck %s

// Every ascendc op the conversion produces for a row-tiled kernel prints and parses back.
func.func @f(%x: tensor<64x33xf16>, %w: tensor<33xf16>) -> tensor<64x33xf16> {
  %wb = asc.broadcast %w : tensor<33xf16> -> tensor<64x33xf16>
  %s = asc.binary "add" %x, %wb : tensor<64x33xf16>
  %c = asc.constant 2.0 -> tensor<64x33xf16>
  %y = asc.binary "max" %s, %c : tensor<64x33xf16>
  func.return %y : tensor<64x33xf16>
}

// CHECK: ascendc.global_buffer %{{.*}} : memref<2112xf16, #asc.scope<gm>> -> !ascendc.global_tensor<f16>
// CHECK: ascendc.init_queue "VECIN" 2 : i64
// CHECK: ascendc.init_queue "VECOUT" 2 : i64
// CHECK: ascendc.init_tbuf
// CHECK: ascendc.get_block_idx
// CHECK: ascendc.tiling_field "units_per_core"
// CHECK: ascendc.tbuf_get
// CHECK: ascendc.data_copy_pad
// CHECK: ascendc.sync "MTE2_V"
// The weight's broadcast to a whole tile is loop-invariant: done once, before the tile loop.
// CHECK: ascendc.subview
// CHECK: ascendc.data_copy
// CHECK: scf.for
// CHECK: ascendc.alloc_tensor %{{.*}} : !ascendc.local_tensor<f16>
// CHECK: ascendc.data_copy_pad
// CHECK: ascendc.enque
// CHECK: ascendc.deque
// CHECK: ascendc.vec_binary "Add"
// CHECK: ascendc.vec_scalar "Maxs" %{{.*}}, %{{.*}}, 2.000000e+00 : f64
// CHECK: ascendc.free_tensor
