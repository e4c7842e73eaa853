// RUN: pyasc-opt %s --split-input-file --verify-diagnostics
// RUN: not pyasc-opt %s --split-input-file 2>&1 | filecheck %s

// The hard SyncAll() needs a nonzero GM workspace (documented: the workspace size must not be
// 0), declared by the kernel's asc.workspace_bytes; GM workspace views are DataBlock aligned and
// inside that size.

// CHECK-NOT: Traceback
// CHECK: sync-all.mlir:[[# @LINE + 3]]:3: error: Operation does not verify: ascendc.sync_all: the hard SyncAll() needs a nonzero GM workspace, but kernel @no_workspace's asc.workspace_bytes has none
func.func @no_workspace() attributes {asc.kernel} {
  // expected-error @+1 {{kernel @no_workspace's asc.workspace_bytes has none}}
  ascendc.sync_all
  func.return
}

// -----

// CHECK: error: Operation does not verify: ascendc.sync_all: {{.*}}asc.workspace_bytes is 0
func.func @zero_workspace() attributes {asc.kernel, asc.workspace_bytes = 0 : i64} {
  // expected-error @+1 {{asc.workspace_bytes is 0}}
  ascendc.sync_all
  func.return
}

// -----

// CHECK: error: Operation does not verify: ascendc.workspace: bytes [64, 192) of the workspace exceed kernel @too_small's asc.workspace_bytes = 128
func.func @too_small() attributes {asc.kernel, asc.workspace_bytes = 128 : i64} {
  // expected-error @+1 {{bytes [64, 192) of the workspace exceed kernel @too_small's asc.workspace_bytes = 128}}
  %w = ascendc.workspace [64, 32] : !ascendc.global_tensor<f32>
  func.return
}

// -----

// CHECK: error: Operation does not verify: ascendc.workspace: offset 16 must be a non-negative multiple of 32 bytes
func.func @misaligned() attributes {asc.kernel, asc.workspace_bytes = 128 : i64} {
  // expected-error @+1 {{offset 16 must be a non-negative multiple of 32 bytes}}
  %w = ascendc.workspace [16, 4] : !ascendc.global_tensor<f16>
  func.return
}
