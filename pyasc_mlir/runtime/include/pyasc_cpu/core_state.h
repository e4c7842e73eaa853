// pyasc_cpu/core_state.h -- per-block control state of the modelled core (included by
// kernel_operator.h after the cpu::State() block state): the declared kernel type and the vector
// mask registers. Reset at every block start (RunBlock calls ResetCoreState).
//
// Sources (public Ascend C API reference): "设置Kernel类型" (KERNEL_TASK_TYPE_DEFAULT, enum
// KernelMetaType), SetVectorMask / SetMaskCount / SetMaskNorm / ResetMask (MaskMode).
#ifndef PYASC_CPU_CORE_STATE_H
#define PYASC_CPU_CORE_STATE_H

#include <cstdint>

// Kernel types (documented enumerators and order).
enum KernelMetaType {
  KERNEL_TYPE_AIV_ONLY,
  KERNEL_TYPE_AIC_ONLY,
  KERNEL_TYPE_MIX_AIV_1_0,
  KERNEL_TYPE_MIX_AIC_1_0,
  KERNEL_TYPE_MIX_AIC_1_1,
  KERNEL_TYPE_MIX_AIC_1_2,
  KERNEL_TYPE_AICORE,
  KERNEL_TYPE_VECTORCORE,
  KERNEL_TYPE_MIX_AICORE,
  KERNEL_TYPE_MIX_VECTOR_CORE,
  KERNEL_TYPE_MAX
};

namespace AscendC {

// Mask mode of the vector unit: Normal (per-repeat lane mask) or Counter (total element count).
enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };

namespace cpu {

// Control state of one core for the current block.
struct CoreState {
  bool kernel_type_declared = false;
  KernelMetaType kernel_type = KERNEL_TYPE_AIV_ONLY;  // meaningful when declared
  MaskMode mask_mode = MaskMode::NORMAL;
  uint64_t mask_high = ~0ull;  // Normal: lanes 64..127; Counter: 0
  uint64_t mask_low = ~0ull;   // Normal: lanes 0..63; Counter: the element count
  uint8_t* sys_workspace = nullptr;  // SetSysWorkspace (pyasc_cpu/mix.h); null until set
  uint8_t cmp_mask[16] = {};          // CMPMASK register (pyasc_cpu/compare_select.h)
  uint8_t cmp_mask_defined[16] = {};  // its defined bits (memory check): none at block start
  // What the reduction / GatherMask accessors return (pyasc_cpu/reduce_scalar.h,
  // gather_mask.h): the last count-form ReduceSum, ReduceMax/Min, GatherMask of the block.
  bool reduce_sum_set = false;
  float reduce_sum = 0.0f;
  bool reduce_extreme_set = false;
  float reduce_extreme = 0.0f;
  bool gather_mask_set = false;
  uint64_t gather_mask_remain = 0;
  int64_t sync_passed = 0;  // SyncAll barriers passed (pyasc_cpu/sync_all.h)
};

// Hidden visibility for the same reason as State(): every kernel library keeps its own.
__attribute__((visibility("hidden"))) inline CoreState& Core() {
  static thread_local CoreState s;
  return s;
}

// The state at a block start: no kernel type declared, Normal mode, full mask.
inline void ResetCoreState() { Core() = CoreState{}; }

// The kernel type the running kernel declared with KERNEL_TASK_TYPE_DEFAULT, or
// KERNEL_TYPE_MAX when it declared none in this block.
inline KernelMetaType DeclaredKernelType() {
  return Core().kernel_type_declared ? Core().kernel_type : KERNEL_TYPE_MAX;
}

// Vector (AIV) blocks per launched block under a kernel type: 2 for KERNEL_TYPE_MIX_AIC_1_2,
// 1 otherwise (the AIV row of the documented GetTaskRation table; undeclared counts as 1).
inline int64_t AivRatio(KernelMetaType t) { return t == KERNEL_TYPE_MIX_AIC_1_2 ? 2 : 1; }

inline const char* KernelTypeName(KernelMetaType t) {
  static const char* const names[] = {
      "KERNEL_TYPE_AIV_ONLY", "KERNEL_TYPE_AIC_ONLY", "KERNEL_TYPE_MIX_AIV_1_0",
      "KERNEL_TYPE_MIX_AIC_1_0", "KERNEL_TYPE_MIX_AIC_1_1", "KERNEL_TYPE_MIX_AIC_1_2",
      "KERNEL_TYPE_AICORE", "KERNEL_TYPE_VECTORCORE", "KERNEL_TYPE_MIX_AICORE",
      "KERNEL_TYPE_MIX_VECTOR_CORE", "no kernel type"};
  return names[t];
}

// The block index must be one this block's kernel type has: [0, NumBlocks) in general,
// [0, 2 * NumBlocks) on the vector side of KERNEL_TYPE_MIX_AIC_1_2 ("GetBlockIdx" page).
inline void CheckBlockRange(const char* api) {
  const KernelMetaType t = DeclaredKernelType();
  const int64_t ratio = AivRatio(t);
  if (State().idx >= ratio * State().num)
    Fail(api, ": block ", State().idx, " of a ", State().num, "-block launch does not exist for ",
         KernelTypeName(t), ": vector block indices run to ", ratio * State().num - 1,
         " (only KERNEL_TYPE_MIX_AIC_1_2 has vector blocks up to 2 * NumBlocks - 1)");
}

// AIV ratio of the kernel type the last finished block declared (pyasc_task_ratio(): the
// runner launches ratio * NumBlocks vector blocks).
__attribute__((visibility("hidden"))) inline int& LastRatio() {
  static thread_local int r = 1;
  return r;
}
inline int LastTaskRatio() { return LastRatio(); }

// At the end of a block: its index must exist for its declared type; record the ratio.
inline void FinishBlock() {
  CheckBlockRange("kernel");
  LastRatio() = static_cast<int>(AivRatio(DeclaredKernelType()));
}

}  // namespace cpu
}  // namespace AscendC

#endif  // PYASC_CPU_CORE_STATE_H
