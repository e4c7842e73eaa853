// pyasc_cpu/gm_alloc.h -- the host allocations behind GM pointers, and the rule for a GM access
// past the size a GlobalTensor was given (included by kernel_operator.h; written here from the
// Ascend C documentation of GlobalTensor::SetGlobalBuffer, no CANN code).
//
// On the hardware `SetGlobalBuffer(ptr, size)` only records a size; a read or write past it that
// stays inside the memory the host allocated is not an error. So the CPU runtime refuses a GM
// access only when it leaves every host allocation the launcher registered
// (pyasc_gm_register, called by pyasc_mlir.runtime.cpu.CpuKernel.run for every GM argument and
// the workspace). An access past the SetGlobalBuffer size but inside an allocation
//   * runs silently in a normal build;
//   * is recorded as a report in a memory-check build (pyasc_gm_report_count/pyasc_gm_report;
//     CpuKernel.run turns each into a GlobalBoundsWarning), never an error.
// When no allocation is registered (a library driven by hand), the SetGlobalBuffer size is the
// bound, as before: any access past it throws AccessError.
#ifndef PYASC_CPU_GM_ALLOC_H
#define PYASC_CPU_GM_ALLOC_H

namespace AscendC {
namespace cpu {

struct GmAllocations {
  struct Range {
    uintptr_t begin, end;
  };
  std::vector<Range> ranges;
  std::vector<std::string> reports;
};

// Hidden visibility for the same reason as State(): one registry per kernel library.
__attribute__((visibility("hidden"))) inline GmAllocations& GmAllocs() {
  static thread_local GmAllocations g;
  return g;
}

// Most memory-check reports kept per launch (later ones are counted, not stored).
constexpr size_t kMaxGmReports = 64;

// True when [p, p + bytes) lies inside one registered host allocation.
inline bool InHostAllocation(const void* p, uint64_t bytes) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(p);
  for (const auto& r : GmAllocs().ranges)
    if (b >= r.begin && b <= r.end && bytes <= r.end - b) return true;
  return false;
}

// Throws when host allocations are registered and [p, p + bytes) leaves all of them: a GM
// access inside the SetGlobalBuffer size but past the memory the host gave (a size larger than
// the buffer behind it) would corrupt host memory on the CPU and fault or corrupt GM on the NPU.
inline void RequireInHostAllocation(const char* api, const char* role, const void* p,
                                    uint64_t bytes) {
  if (GmAllocs().ranges.empty() || InHostAllocation(p, bytes)) return;
  FailAccess(api, ": ", role, " GlobalTensor access of ", bytes,
             " bytes leaves every buffer the host passed (the size given to SetGlobalBuffer is "
             "larger than the GM buffer behind it)");
}
// An access of `end` bytes from `base` that exceeds the `size_bytes` given to SetGlobalBuffer:
// allowed (true) when inside a host allocation (memory-check builds record a report), refused
// (false) otherwise.
inline bool AllowPastGlobalSize(const char* api, const char* role, const void* base,
                                uint64_t size_bytes, uint64_t end) {
  if (!InHostAllocation(base, end)) return false;
  if (kMemcheck) {
    auto& reps = GmAllocs().reports;
    if (reps.size() < kMaxGmReports)
      reps.push_back(WithLoc(Cat(api, ": ", role, " GlobalTensor was given ", size_bytes,
                                 " bytes by SetGlobalBuffer, access up to byte ", end,
                                 " is past it (inside the host allocation: allowed on the "
                                 "hardware) in block ", State().idx)));
  }
  return true;
}

}  // namespace cpu
}  // namespace AscendC

// Registry entry points, defined once per library by the PYASC_CPU_ENTRY / PYASC_CPU_LAST_ERROR
// macros: reset before a launch, register each host buffer, read the memory-check reports.
#define PYASC_CPU_GM_ENTRIES()                                                                 \
  extern "C" void pyasc_gm_reset() {                                                          \
    ::AscendC::cpu::GmAllocs().ranges.clear();                                                 \
    ::AscendC::cpu::GmAllocs().reports.clear();                                                \
  }                                                                                            \
  extern "C" void pyasc_gm_register(const void* p, uint64_t bytes) {                          \
    const uintptr_t b = reinterpret_cast<uintptr_t>(p);                                        \
    if (p != nullptr) ::AscendC::cpu::GmAllocs().ranges.push_back({b, b + bytes});             \
  }                                                                                            \
  extern "C" int64_t pyasc_gm_report_count() {                                                \
    return static_cast<int64_t>(::AscendC::cpu::GmAllocs().reports.size());                    \
  }                                                                                            \
  extern "C" const char* pyasc_gm_report(int64_t i) {                                         \
    const auto& r = ::AscendC::cpu::GmAllocs().reports;                                        \
    return i >= 0 && static_cast<size_t>(i) < r.size() ? r[i].c_str() : "";                    \
  }

#endif  // PYASC_CPU_GM_ALLOC_H
