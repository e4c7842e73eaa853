// RUN: pyasc-opt %s -t ascendc | filecheck %s
// RUN: pyasc-opt %s | pyasc-opt -t ascendc | filecheck %s

// A multi-core kernel: each block writes its partial into the GM workspace, the hard SyncAll()
// orders the cores, block 0 copies every partial out, the others copy their own (scf.if with
// an else). The workspace view prints as a GlobalTensor at workspace + offset.

func.func @k(%out: memref<32xf32>) attributes {asc.kernel, asc.tiling = {block_dim = 4 : i64}, asc.workspace_bytes = 128 : i64} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %one = arith.constant 1.0 : f32
  %ws = ascendc.workspace [0, 32] : !ascendc.global_tensor<f32>
  %hi = ascendc.workspace [64, 16] : !ascendc.global_tensor<f32>
  %go = ascendc.global_buffer %out : memref<32xf32> -> !ascendc.global_tensor<f32>
  %b = ascendc.init_tbuf 128 {position = "VECIN"}
  %t = ascendc.tbuf_get %b[0] : !ascendc.local_tensor<f32>
  %i = ascendc.get_block_idx
  ascendc.duplicate %t, %one, %c8 : !ascendc.local_tensor<f32>, f32
  ascendc.sync "V_MTE3"
  %off = arith.muli %i, %c8 : index
  %slot = ascendc.subview %ws[%off] : !ascendc.global_tensor<f32> -> !ascendc.global_tensor<f32>
  ascendc.data_copy %slot, %t, %c8 : !ascendc.global_tensor<f32>, !ascendc.local_tensor<f32>
  ascendc.sync_all
  %first = arith.cmpi eq, %i, %c0 : index
  scf.if %first {
    ascendc.data_copy %t, %ws, %c32 : !ascendc.local_tensor<f32>, !ascendc.global_tensor<f32>
  } else {
    ascendc.data_copy %t, %slot, %c8 : !ascendc.local_tensor<f32>, !ascendc.global_tensor<f32>
  }
  func.return
}

// CHECK:      extern "C" __global__ __aicore__ void k(GM_ADDR arg0, GM_ADDR workspace, GM_ADDR tilingGm)
// CHECK:      GlobalTensor<float> [[WS:ws[0-9]+]];
// CHECK-NEXT: [[WS]].SetGlobalBuffer((__gm__ float*)(workspace + 0), 32LL);
// CHECK:      GlobalTensor<float> [[HI:ws[0-9]+]];
// CHECK-NEXT: [[HI]].SetGlobalBuffer((__gm__ float*)(workspace + 64), 16LL);
// CHECK:      DataCopy(
// CHECK-NEXT: SyncAll();
// CHECK-NEXT: bool [[C:v[0-9]+]] = v{{[0-9]+}} == v{{[0-9]+}};
// CHECK-NEXT: if ([[C]]) {
// CHECK:        DataCopy(t{{[0-9]+}}, [[WS]], v{{[0-9]+}});
// CHECK-NEXT: } else {
// CHECK:        DataCopy(
// CHECK-NEXT: }
// CHECK-NEXT: }
