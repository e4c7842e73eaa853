// RUN: pyasc-opt %s -p asc-lower-loops | filecheck %s
// RUN: pyasc-opt %s -p 'asc-lower-loops{ub_budget=0}' | filecheck %s --check-prefix=GM

// A prefix sum (y[0] = x[0]; y[i] = y[i - 1] + x[i]) that asc-raise-loops left as scalar
// loops: one single-core kernel. Through UB: DataCopyPad GM->UB of exactly 28 bytes,
// MTE2_S, GetValue/SetValue in scf.for, S_MTE3, DataCopyPad UB->GM.
// CHECK:      %[[R:.*]] = asc.launch @prefix_loops_0<1 : i64> (%{{.*}}, %{{.*}}) {asc.loc = "k.py:4:5"} : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
// CHECK-NEXT: func.return %[[R]]
// CHECK:      func.func @prefix_loops_0(%{{.*}}: memref<7xf32, #asc.scope<gm>>, %{{.*}}: memref<7xf32, #asc.scope<gm>>, %{{.*}}: memref<7xf32, #asc.scope<gm>>)
// CHECK-SAME: asc.ub_bytes = 64 : i64
// CHECK-SAME: asc.kernel, asc.tiling = {block_dim = 1 : i64}
// CHECK:      ascendc.init_tbuf 64 : i64 {{.*}}position = "VECIN"
// CHECK:      %[[Y:.*]] = ascendc.tbuf_get %{{.*}}[0 : i64]
// CHECK:      %[[X:.*]] = ascendc.tbuf_get %{{.*}}[8 : i64]
// CHECK:      %[[B:.*]] = arith.constant {{.*}} 28 : index
// CHECK:      ascendc.data_copy_pad %[[Y]], %{{.*}}, %{{.*}}, %[[B]]
// CHECK:      ascendc.data_copy_pad %[[X]], %{{.*}}, %{{.*}}, %{{.*}}
// CHECK-NEXT: ascendc.sync "MTE2_S"
// CHECK:      scf.for
// CHECK:      ascendc.scalar_get %[[Y]][%{{.*}}] {{.*}}: !ascendc.local_tensor<f32>
// CHECK:      ascendc.scalar_get %[[X]][%{{.*}}]
// CHECK:      ascendc.scalar_binary "add"
// CHECK:      ascendc.scalar_set %{{.*}}, %[[Y]][%{{.*}}]
// CHECK:      ascendc.sync "S_MTE3"
// CHECK-NEXT: arith.constant
// CHECK:      ascendc.data_copy_pad %{{.*}}, %[[Y]]

// With no UB budget every array stays in global memory (GlobalTensor GetValue/SetValue); the output
// first a scalar copy of the input state.
// GM-NOT:   ascendc.init_tbuf
// GM-NOT:   ascendc.data_copy_pad
// GM:       %[[IN:[0-9]+]] = ascendc.global_buffer %{{.*}} : memref<7xf32, #asc.scope<gm>> -> !ascendc.global_tensor<f32>
// GM:       ascendc.global_buffer
// GM:       %[[OUT:[0-9]+]] = ascendc.global_buffer
// GM:       scf.for
// GM:       ascendc.scalar_get %[[IN]]
// GM:       ascendc.scalar_set %{{.*}}, %[[OUT]]
// GM:       scf.for
// GM:       ascendc.scalar_set %{{.*}}, %[[OUT]][%{{.*}}] {{.*}}: !ascendc.global_tensor<f32>
func.func @prefix(%x: tensor<7xf32>, %y0: tensor<7xf32>) -> tensor<7xf32> {
  %r = asc_loop.nest(%y0, %x) {
  ^bb0(%y: memref<7xf32>, %xa: memref<7xf32>):
    asc_loop.for #builtin.int<1> to #builtin.int<7> step #builtin.int<1> {
    ^bb1(%i: index):
      %c1 = arith.constant 1 : index
      %p = arith.subi %i, %c1 : index
      %a = asc_loop.load %y[%p] : memref<7xf32>
      %b = asc_loop.load %xa[%i] : memref<7xf32>
      %s = asc_loop.binary "add" %a, %b
      asc_loop.store %s, %y[%i] : memref<7xf32>
      asc_loop.yield
    }
    asc_loop.nest_yield %y : memref<7xf32>
  } {asc.loc = "k.py:4:5"} : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  func.return %r : tensor<7xf32>
}
