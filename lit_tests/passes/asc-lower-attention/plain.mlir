// RUN: pyasc-opt %s -p asc-fuse,asc-lower-attention | filecheck %s

// softmax(q k^T * 0.5) v as ONE kernel: q [5, 8], k [9, 8], v [9, 4], f32. Query blocks of 16
// rows (Sq = 5 rounded up), key blocks of 16 (block_kv 4 rounded up to the Cube's 16): one unit,
// one key block with 9 keys. The launch's second result is the P workspace (1 core x 16 x 16),
// nothing else: no 5 x 9 score buffer in GM.
// CHECK-LABEL: func.func @plain(
// CHECK-NEXT:    %{{.*}}, %{{.*}} = asc.launch @plain_kernel<1 : i64> (%q, %k, %v) {{.*}} -> (tensor<5x4xf32>, tensor<256xf32>)
// CHECK-NOT:     tensor<5x9xf32>

// CHECK-LABEL: func.func @plain_kernel(
// CHECK-SAME:      %[[Q:[0-9]+]]: memref<40xf32, #asc.scope<gm>>, %[[K:[0-9]+]]: memref<72xf32, #asc.scope<gm>>, %[[V:[0-9]+]]: memref<36xf32, #asc.scope<gm>>, %[[O:[0-9]+]]: memref<20xf32, #asc.scope<gm>>, %[[WS:[0-9]+]]: memref<256xf32, #asc.scope<gm>>)
// CHECK-SAME:      tile_m = 16 : i64, tile_n = 4 : i64, block_kv = 16 : i64

// Running max from -FLT_MAX, running sum and accumulator from 0, then the key-block loop.
// CHECK:           asc.vdup %[[M:[0-9]+]], -3.4028234663852886e+38
// CHECK:           asc.vdup %[[L:[0-9]+]], 0.0
// CHECK:           asc.vdup %[[ACC:[0-9]+]], 0.0
// CHECK:           scf.for
// S = Q K_j^T on the Cube (K read transposed from GM), scaled, row max over the block's keys.
// CHECK:             asc.mmad %[[S:[0-9]+]], %[[Q]][%{{.*}}], %[[K]][%{{.*}}] m %{{.*}} n %[[KL:[0-9]+]] k %{{.*}} {{.*}}transpose_a = false, transpose_b = true}
// CHECK:             asc.vscalar "muls" %[[S]], %[[S]], 5.000000e-01
// CHECK:             asc.vreduce "max" "last" %[[MB:[0-9]+]], %[[S]], %{{.*}} len %[[KL]]
// CHECK:             asc.vbinary "max" %[[MN:[0-9]+]], %[[M]], %[[MB]]
// CHECK:             asc.vbinary "sub" %[[A:[0-9]+]], %[[M]], %[[MN]]
// CHECK:             asc.vunary "exp" %[[A]], %[[A]]
// CHECK:             asc.vbinary "sub" %[[S]], %[[S]]
// CHECK:             asc.vunary "exp" %[[S]], %[[S]]
// CHECK:             asc.vreduce "sum" "last" %[[MB]], %[[S]]
// CHECK:             asc.vbinary "mul" %[[L]], %[[L]], %[[A]]
// CHECK:             asc.vbinary "add" %[[L]], %[[L]], %[[MB]]
// CHECK:             asc.vbinary "mul" %[[ACC]], %[[ACC]]
// P to this core's workspace block, then P V_j on the Cube, accumulated.
// CHECK:             asc.copy_out %[[S]][%{{.*}}] -> %[[WS]][%[[WOFF:[0-9]+]]] blocks %{{.*}} x %[[KL]]
// CHECK:             asc.mmad %[[PV:[0-9]+]], %[[WS]][%[[WOFF]]], %[[V]][%{{.*}}] m %{{.*}} n %{{.*}} k %[[KL]]
// CHECK:             asc.vbinary "add" %[[ACC]], %[[ACC]], %[[PV]]
// CHECK:             asc.vcopy %[[M]], %[[MN]]
// CHECK:           }
// O / l, copied out.
// CHECK:           asc.vbinary "div" %[[ACC]], %[[ACC]]
// CHECK:           asc.copy_out %[[ACC]][%{{.*}}] -> %[[O]]
func.func @plain(%q: tensor<5x8xf32>, %k: tensor<9x8xf32>, %v: tensor<9x4xf32>) -> tensor<5x4xf32> {
  %o = asc.flash_attention %q, %k, %v {scale = 0.5 : f64, block_kv = #builtin.int<4>, asc.loc = "a.py:3:7"} : (tensor<5x8xf32>, tensor<9x8xf32>, tensor<9x4xf32>) -> tensor<5x4xf32>
  func.return %o : tensor<5x4xf32>
}
