// RUN: pyasc-opt %s -p asc-fuse,asc-lower-attention,asc-double-buffer,asc-buffer-alloc,convert-asc-to-ascendc | filecheck %s

// f16 attention with an f16 mask (cast to f32 by the frontend): ONE MIX kernel, the mask's
// cast runs in UB on each mask block. Two Matmul objects (S = Q K^T with K transposed, P V),
// the P workspace (f16) as the last kernel argument, the syncs the key loop needs.
// CHECK-LABEL: func.func @masked(
// CHECK-NEXT:    %{{.*}}, %{{.*}} = asc.launch @masked_kernel<1 : i64> (%q, %k, %v, %mask) {{.*}} -> (tensor<5x16xf32>, tensor<256xf16>)
// CHECK-NOT:     asc.launch

// CHECK-LABEL: func.func @masked_kernel(
// CHECK:         %[[QG:[0-9]+]] = ascendc.global_buffer %0
// CHECK:         %[[MG:[0-9]+]] = ascendc.global_buffer %3
// CHECK:         %[[WS:[0-9]+]] = ascendc.global_buffer %5 {{.*}} -> !ascendc.global_tensor<f16>
// CHECK:         %[[MM0:[0-9]+]] = ascendc.matmul_object {{.*}}transpose_a = false, transpose_b = true}
// CHECK:         %[[MM1:[0-9]+]] = ascendc.matmul_object {{.*}}transpose_a = false, transpose_b = false}
// CHECK:         ascendc.kernel_type "MIX_AIC_1_1"
// CHECK-NEXT:    ascendc.set_sys_workspace
// CHECK-NEXT:    ascendc.regist_matmul %[[MM0]], %{{.*}}, %[[MM1]], %{{.*}}

// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             ascendc.matmul_iterate %[[MM0]]
// CHECK:             ascendc.matmul_get_tensor_c %[[MM0]], %[[S:[0-9]+]]
// CHECK:             ascendc.sync "MTE2_V"
// CHECK:             ascendc.vec_scalar "Muls" %[[S]], %[[S]], 2.500000e-01
// The mask block's TBuf was read by the vector unit in the previous iteration: V_MTE2 first.
// CHECK:             ascendc.sync "V_MTE2"
// CHECK:             ascendc.data_copy_pad %[[MB:[0-9]+]], %{{[0-9]+}}
// CHECK:             ascendc.sync "MTE2_V"
// CHECK:             ascendc.cast "CAST_NONE" %[[MF:[0-9]+]], %[[MB]]
// CHECK:             ascendc.vec_binary "Add" %[[S]], %[[S]], %[[MF]]
// CHECK:             ascendc.reduce "ReduceMax"
// CHECK:             ascendc.vec_unary "Exp"
// CHECK:             ascendc.reduce "ReduceSum"
// P (rounded to f16) to the workspace, then the Cube reads it: MTE3 before the Matmul.
// CHECK:             ascendc.cast "CAST_RINT" %[[P:[0-9]+]], %[[S]]
// CHECK:             ascendc.sync "V_MTE3"
// CHECK:             ascendc.data_copy_pad %{{[0-9]+}}, %[[P]]
// CHECK:             ascendc.sync "MTE3_V"
// CHECK:             ascendc.sync "MTE3_MTE2"
// CHECK:             ascendc.matmul_set_tensor_a %[[MM1]]
// CHECK:             ascendc.matmul_iterate %[[MM1]]
// CHECK:             ascendc.vec_binary "Add"
// CHECK:           }
// CHECK:           ascendc.vec_binary "Div"
// CHECK:         ascendc.matmul_end %[[MM0]]
// CHECK:         ascendc.matmul_end %[[MM1]]
func.func @masked(%q: tensor<5x16xf16>, %k: tensor<40x16xf16>, %v: tensor<40x16xf16>, %mask: tensor<5x40xf16>) -> tensor<5x16xf32> {
  %m = asc.cast %mask {asc.loc = "a.py:2:7"} : tensor<5x40xf16> -> tensor<5x40xf32>
  %o = asc.flash_attention %q, %k, %v mask %m : tensor<5x40xf32> {scale = 0.25 : f64, block_kv = #builtin.int<16>, asc.loc = "a.py:3:7"} : (tensor<5x16xf16>, tensor<40x16xf16>, tensor<40x16xf16>) -> tensor<5x16xf32>
  func.return %o : tensor<5x16xf32>
}
