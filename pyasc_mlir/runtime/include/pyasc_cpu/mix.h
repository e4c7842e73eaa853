// pyasc_cpu/mix.h -- the split-core (AIC/AIV) model of the clean-room CPU runtime and the
// system workspace (included by kernel_operator.h before pyasc_cpu/matmul.h).
//
// Sources (public Ascend C API reference): GetBlockIdx (index ranges when AIC and AIV start
// together: AIV in [0, 2 * NumBlocks) at 1:2, [0, NumBlocks) at 1:1), GetSubBlockIdx (the
// vector core of an AI Core), GetTaskRation / GetTaskRatio (the per-kernel-type table: AIV 2
// under KERNEL_TYPE_MIX_AIC_1_2, 1 otherwise), SetSysWorkSpace / GetSysWorkSpacePtr (the
// system workspace that Matmul and other high-level APIs need; its size is
// GetLibApiWorkSpaceSize() on the host), "设置Kernel类型" (KERNEL_TASK_TYPE_DEFAULT).
//
// Model: the CPU runs the vector (AIV) side of a kernel, block after block; the Cube (AIC)
// side of the high-level Matmul API is computed inside the vector block's Matmul calls. A
// launch of N blocks runs N vector blocks, or 2N when the kernel declares
// KERNEL_TYPE_MIX_AIC_1_2 (the runner reads pyasc_task_ratio() after block 0); GetBlockNum()
// is N either way. Block indices a declared type does not have are errors
// (cpu::CheckBlockRange).
#ifndef PYASC_CPU_MIX_H
#define PYASC_CPU_MIX_H

#include "core_state.h"

namespace AscendC {

// Vector core of this block within its AI Core: GetBlockIdx() % 2 under
// KERNEL_TYPE_MIX_AIC_1_2, 0 otherwise.
inline int64_t GetSubBlockIdx() {
  return cpu::State().idx % cpu::AivRatio(cpu::DeclaredKernelType());
}

// Vector cores per AI Core of the declared kernel type (documented table, AIV row).
inline int64_t GetTaskRation() { return cpu::AivRatio(cpu::DeclaredKernelType()); }
inline int64_t GetTaskRatio() { return GetTaskRation(); }

// The system workspace of this block (null until set; reset at every block start). A null
// pointer is accepted (samples test GetSysWorkSpacePtr() == nullptr and return); the Matmul
// API refuses to run without one (REGIST_MATMUL_OBJ).
inline void SetSysWorkspace(GM_ADDR workspace) { cpu::Core().sys_workspace = workspace; }
inline void SetSysWorkSpace(GM_ADDR workspace) { SetSysWorkspace(workspace); }
inline GM_ADDR GetSysWorkSpacePtr() { return cpu::Core().sys_workspace; }

}  // namespace AscendC

// Visible at global scope as in the real headers.
using AscendC::GetSubBlockIdx;
using AscendC::GetSysWorkSpacePtr;
using AscendC::GetTaskRatio;
using AscendC::GetTaskRation;
using AscendC::SetSysWorkspace;
using AscendC::SetSysWorkSpace;

#endif  // PYASC_CPU_MIX_H
