// RUN: pyasc-opt %s -p asc-fuse,asc-lower-layout | filecheck %s

// asc-fuse puts each data-movement op in its own fusion (never in a vector kernel);
// asc-lower-layout makes each a kernel. Concat along axis 0 of [2,40] and [3,40]: one part per
// input, rows kept whole (one contiguous block each way); 2 + 3 = 5 units. The slice of rows
// 1..2 is one part whose source starts at element 40.

// CHECK-LABEL: func.func @cs(
// CHECK-NEXT:    %[[C:.*]] = asc.launch @cs_kernel<5 : i64> (%x, %y) : (tensor<2x40xf32>, tensor<3x40xf32>) -> tensor<5x40xf32>
// CHECK-NEXT:    %[[S:.*]] = asc.launch @cs_kernel_1<2 : i64> (%[[C]]) : (tensor<5x40xf32>) -> tensor<2x40xf32>
// CHECK-NEXT:    func.return %[[S]] : tensor<2x40xf32>

// CHECK-LABEL: func.func @cs_kernel(
// CHECK-SAME:      asc.tiling = {units = 5 : i64, block_dim = 5 : i64
// CHECK-COUNT-2: asc.copy_in %{{[0-9]+}}[%{{[0-9]+}}] -> %{{[0-9]+}}[%{{[0-9]+}}] blocks %{{[0-9]+}} x %{{[0-9]+}} gap %{{[0-9]+}} stride %{{[0-9]+}} : memref<{{80|120}}xf32

// CHECK-LABEL: func.func @cs_kernel_1(
// CHECK:         arith.constant 40 : index
// CHECK:         asc.copy_in

func.func @cs(%x: tensor<2x40xf32>, %y: tensor<3x40xf32>) -> tensor<2x40xf32> {
  %c = asc.concat %x, %y {axis = 0 : i64} : tensor<2x40xf32>, tensor<3x40xf32> -> tensor<5x40xf32>
  %s = asc.slice %c {offsets = array<i64: 1, 0>, sizes = array<i64: 2, 40>} : tensor<5x40xf32> -> tensor<2x40xf32>
  func.return %s : tensor<2x40xf32>
}
