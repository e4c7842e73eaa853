// RUN: pyasc-opt %s -p asc-to-ascendc | pyasc-opt | filecheck %s
// RUN: pyasc-opt %s -p asc-to-ascendc --print-op-generic | pyasc-opt | filecheck %s

func.func @f(%x: tensor<3x33xf16>) -> tensor<3x33xf16> {
  %c = asc.constant 2.0 -> tensor<3x33xf16>
  %y = asc.binary "max" %x, %c : tensor<3x33xf16>
  func.return %y : tensor<3x33xf16>
}

// CHECK: ascendc.global_buffer %{{.*}} : memref<99xf16, #asc.scope<gm>> -> !ascendc.global_tensor<f16>
// CHECK: ascendc.init_queue "VECIN" 2 : i64
// CHECK: ascendc.get_block_idx
// CHECK: ascendc.tiling_field "units_per_core"
// CHECK: ascendc.alloc_tensor %{{.*}} : !ascendc.local_tensor<f16>
// CHECK: ascendc.data_copy_pad
// CHECK: ascendc.enque
// CHECK: ascendc.deque
// CHECK: ascendc.vec_scalar "Maxs" %{{.*}}, %{{.*}}, 2.000000e+00 : f64
// CHECK: ascendc.free_tensor
