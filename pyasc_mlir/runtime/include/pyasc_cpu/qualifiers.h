// pyasc_cpu/qualifiers.h -- kernel qualifiers and macros, event ids and pipe synchronisation of
// the clean-room CPU runtime (included by kernel_operator.h once TPipe, GetBlockIdx and
// GetBlockNum exist).
//
// Sources (public Ascend C API reference): kernel function qualifiers (__global__, __aicore__,
// __vector__, __cube__, __mix__), "设置Kernel类型" (KERNEL_TASK_TYPE_DEFAULT), ASSERT,
// SetFlag/WaitFlag (eventID range 0-7 on Atlas A2), PipeBarrier, InitSocState.
#ifndef PYASC_CPU_QUALIFIERS_H
#define PYASC_CPU_QUALIFIERS_H

#include <cstdio>
#include <string>

#include "core_state.h"

// Number of event ids per HardEvent (Atlas A2 / A3 and Atlas inference AI Core: 0-7).
#ifndef PYASC_EVENT_ID_NUM
#error "qualifiers.h needs PYASC_EVENT_ID_NUM as a -D flag: pyasc_mlir.platform.header_defines()"
#endif

// Kernel-kind qualifiers (which cores run the function) and the Matmul workspace parameter
// qualifier: no effect on the CPU. __mix__(aic, aiv) names the cube:vector ratio.
#define __vector__
#define __cube__
#define __mix__(aic, aiv)
#define __kfc_workspace__

// Event ids of SetFlag / WaitFlag.
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6,
               EVENT_ID7 };

namespace AscendC {
namespace cpu {

// KERNEL_TASK_TYPE_DEFAULT: record the declared type for this block. A second declaration with
// another type in the same block is an error.
template <KernelMetaType kType>
inline void DeclareKernelType() {
  static_assert(kType >= KERNEL_TYPE_AIV_ONLY && kType < KERNEL_TYPE_MAX,
                "KERNEL_TASK_TYPE_DEFAULT: not a kernel type (KERNEL_TYPE_MAX is a bound)");
  CoreState& c = Core();
  if (c.kernel_type_declared && c.kernel_type != kType)
    Fail("KERNEL_TASK_TYPE_DEFAULT: kernel type ", static_cast<int>(kType),
         " declared after type ", static_cast<int>(c.kernel_type), " in the same block");
  c.kernel_type_declared = true;
  c.kernel_type = kType;
  CheckBlockRange("KERNEL_TASK_TYPE_DEFAULT");
}

// ASSERT(expr[, fmt, args...]): throws Error naming the expression, file and line (and the
// formatted message when given) when expr is false.
inline void AssertFailed(const char* text, const char* file, int line, const std::string& msg) {
  Fail("ASSERT(", text, ") failed at ", file, ":", line, msg.empty() ? "" : ": ", msg);
}
inline std::string AssertMessage() { return {}; }
template <class... A>
inline std::string AssertMessage(const char* fmt, const A&... a) {
  char buf[512];
  if constexpr (sizeof...(A) == 0) {
    std::snprintf(buf, sizeof buf, "%s", fmt);
  } else {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"
    std::snprintf(buf, sizeof buf, fmt, a...);
#pragma GCC diagnostic pop
  }
  return buf;
}

// An event id must be in [0, PYASC_EVENT_ID_NUM).
inline void CheckEventId(const char* api, int32_t id) {
  if (id < 0 || id >= PYASC_EVENT_ID_NUM)
    Fail(api, ": eventID ", id, " is outside [0, ", PYASC_EVENT_ID_NUM - 1, "]");
}

}  // namespace cpu

// Synchronisation between the pipes of one core: only the event id is checked (execution is
// sequential on the CPU).
// In memory-check builds they order the pipes of the race detector (pyasc_cpu/race.h).
template <HardEvent evt>
inline void SetFlag(int32_t eventID) {
  cpu::CheckEventId("SetFlag", eventID);
  cpu::race::OnSetFlag(evt, eventID);
}
template <HardEvent evt>
inline void WaitFlag(int32_t eventID) {
  cpu::CheckEventId("WaitFlag", eventID);
  cpu::race::OnWaitFlag(evt, eventID);
}
template <pipe_t pipe>
inline void PipeBarrier() {
  if constexpr (pipe == PIPE_ALL) cpu::race::OnBarrierAll();
}

// Initialise the core's control state (Normal mask mode, full vector mask).
inline void InitSocState() {
  cpu::Core().mask_mode = MaskMode::NORMAL;
  cpu::Core().mask_high = cpu::Core().mask_low = ~0ull;
}

}  // namespace AscendC

// Statement inside the kernel: declare the kernel type (a KernelMetaType enumerator; anything
// else does not compile).
#define KERNEL_TASK_TYPE_DEFAULT(value) ::AscendC::cpu::DeclareKernelType<(value)>()

#define ASSERT(expr, ...)                                                                   \
  do {                                                                                      \
    if (!(expr))                                                                            \
      ::AscendC::cpu::AssertFailed(#expr, __FILE__, __LINE__,                               \
                                   ::AscendC::cpu::AssertMessage(__VA_ARGS__));             \
  } while (0)

// Names the real headers make visible outside namespace AscendC.
using AscendC::GetBlockIdx;
using AscendC::GetBlockNum;
using AscendC::GetTPipePtr;
using AscendC::InitSocState;

#endif  // PYASC_CPU_QUALIFIERS_H
