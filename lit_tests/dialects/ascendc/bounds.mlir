// RUN: pyasc-opt %s --split-input-file --verify-diagnostics
// RUN: not pyasc-opt %s --split-input-file 2>&1 | filecheck %s

// ascendc ops whose constant counts or offsets are out of range do not verify. LocalTensor
// types carry no size, so counts are checked for sign (a DataCopy count that is not whole
// DataBlocks is legal: the hardware rounds it down) and TBuf offsets against the TBuf.

// CHECK-NOT: Traceback
// CHECK: bounds.mlir:[[# @LINE + 6]]:3: error: Operation does not verify: ascendc.data_copy: count -33 is negative
func.func @data_copy_count(%g: memref<64xf32, #asc.scope<gm>>, %q: !ascendc.queue) {
  %c33 = arith.constant -33 : index
  %gt = ascendc.global_buffer %g : memref<64xf32, #asc.scope<gm>> -> !ascendc.global_tensor<f32>
  %t = ascendc.alloc_tensor %q : !ascendc.local_tensor<f32>
  // expected-error @+1 {{ascendc.data_copy: count -33 is negative}}
  ascendc.data_copy %t, %gt, %c33 : !ascendc.local_tensor<f32>, !ascendc.global_tensor<f32>
  func.return
}

// -----

// CHECK: error: Operation does not verify: ascendc.vec_unary: count -8 is negative
func.func @vec_unary_negative(%t: !ascendc.local_tensor<f16>) {
  %m8 = arith.constant -8 : index
  // expected-error @+1 {{ascendc.vec_unary: count -8 is negative}}
  ascendc.vec_unary "Exp" %t, %t, %m8 : !ascendc.local_tensor<f16>
  func.return
}

// -----

// CHECK: error: Operation does not verify: ascendc.tbuf_get: offset 256 (byte 1024) is past the end of the 1024-byte TBuf
func.func @tbuf_offset() {
  %b = ascendc.init_tbuf 1024 : i64
  // expected-error @+1 {{offset 256 (byte 1024) is past the end of the 1024-byte TBuf}}
  %t = ascendc.tbuf_get %b[256 : i64] : !ascendc.local_tensor<f32>
  func.return
}

// -----

// CHECK: error: Operation does not verify: ascendc.subview: offset -1 is negative
func.func @subview_negative(%t: !ascendc.local_tensor<f32>) {
  %m1 = arith.constant -1 : index
  // expected-error @+1 {{ascendc.subview: offset -1 is negative}}
  %v = ascendc.subview %t[%m1] : !ascendc.local_tensor<f32> -> !ascendc.local_tensor<f32>
  func.return
}

// -----

// CHECK: error: Operation does not verify: ascendc.tiling_field: kernel @k has no asc.tiling attribute, so it has no tiling field 'units'
func.func @k() attributes {asc.kernel} {
  // expected-error @+1 {{kernel @k has no asc.tiling attribute, so it has no tiling field 'units'}}
  %u = ascendc.tiling_field "units"
  func.return
}
