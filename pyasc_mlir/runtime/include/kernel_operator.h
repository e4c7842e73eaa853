// kernel_operator.h -- clean-room CPU implementation of the Ascend C API subset that the
// pyasc-mlir emitter prints (docs/CPU_RUNTIME.md is the contract).
//
// Written from the public Ascend C documentation (summarised in shared/ASCEND_FACTS.md) only.
// No code from CANN-licensed repositories was used.
//
// Build: g++ -std=c++17 -O2 -shared -fPIC -I<this dir> <pyasc_mlir.platform.header_defines()>
//   (-DPYASC_UB_BYTES=... -DPYASC_UB_USABLE=... -DPYASC_L1_BYTES=... -DPYASC_L0A_BYTES=...
//    -DPYASC_L0B_BYTES=... -DPYASC_L0C_BYTES=... -DPYASC_DATA_BLOCK_BYTES=...
//    -DPYASC_REPEAT_BYTES=... -DPYASC_CUBE_FRACTAL=... -DPYASC_ND_STRIDE_MAX=...): the header
//   holds no hardware number.
//
// Model
// -----
// * Blocks (cores) run one at a time (pyasc_run_grid runs a launch, switching blocks only at
//   a cross-core barrier: pyasc_cpu/grid.h, sync_all.h). Each thread has one UB arena of PYASC_UB_BYTES bytes,
//   zeroed (0xFF in memory-check builds) at the start of every block (cpu::ResetUB). TPipe
//   hands out buffers from offset 0 upward, each rounded up to 32 B, bounded by PYASC_UB_USABLE.
// * LocalTensor<T> = (UB byte offset, element count). Element access, vector ops and copies check
//   that they stay inside the tensor they were given and inside the arena; vector ops and copies
//   require 32-byte aligned UB operands. Violations throw AscendC::cpu::Error naming the API, the
//   operand, its offset and its size.
// * GlobalTensor<T> = (host pointer, element count); accesses outside [0, size) throw unless they
//   stay inside a host allocation registered by the launcher (pyasc_cpu/gm_alloc.h).
// * Pipes, events and barriers are no-ops: execution is sequential. In memory-check builds they
//   order the pipes of the race detector (pyasc_cpu/race.h).
// * Vector ops compute on raw pointers; checks happen once per call, never per element. half
//   (_Float16) lanes are computed in float and rounded to nearest-even once per operation, which
//   is the correctly rounded fp16 result for + - * / sqrt.
//
// Implemented subset (namespace AscendC unless noted)
// ---------------------------------------------------
//   macros: __global__ __aicore__ __gm__ GM_ADDR; types: half (global), TPosition, QuePosition,
//   TQue, TBuf, TPipe, LocalTensor, GlobalTensor, TEventID, HardEvent, pipe_t (global: PIPE_S,
//   PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL), RoundMode, CMPMODE, SELMODE,
//   DataCopyExtParams, DataCopyPadExtParams.
//   calls: TPipe::InitBuffer (TQue, TBuf), TPipe::FetchEventID, TQue::AllocTensor/EnQue/DeQue/
//   FreeTensor, TBuf::Get, LocalTensor::operator[]/GetValue/SetValue/GetSize/GetPhyAddr/
//   ReinterpretCast, GlobalTensor::SetGlobalBuffer/operator[]/GetValue/SetValue/GetSize/
//   GetPhyAddr, DataCopy, DataCopyPad, Add Sub Mul Div Max Min, Exp Ln Abs Sqrt Rsqrt Reciprocal Sin Cos
//   Relu, Adds Muls Maxs Mins, Duplicate, CreateVecIndex, Cast, Compare, Select, ReduceSum ReduceMax ReduceMin,
//   GetBlockIdx, GetBlockNum, GetTPipePtr, SetFlag, WaitFlag, PipeBarrier.
//   CPU-only (AscendC::cpu): Error, AccessError, SetBlock, ResetUB, LastError, LastErrorKind,
//   RunBlock, PYASC_CPU_ENTRY, PYASC_LOC.
//   In pyasc_cpu/: bfloat16_t (bf16.h); kernel qualifiers, KERNEL_TASK_TYPE_DEFAULT, ASSERT,
//   EVENT_ID*, SetFlag/WaitFlag/PipeBarrier, InitSocState (qualifiers.h, core_state.h); Cast
//   with the Atlas A2 pair/mode table (cast.h); the level-0 (mask/repeat) vector forms,
//   SetVectorMask/SetMaskCount/SetMaskNorm/ResetMask, LeakyRelu (vector_level0.h);
//   DataCopy with DataCopyParams, the copy/queue limits, SetPadValue (copy.h); LocalMemAllocator
//   (allocator.h); GM accesses past SetGlobalBuffer's size inside the host allocation (gm_alloc.h);
//   the MIX model (AIV blocks per kernel type), GetSubBlockIdx, GetTaskRation, SetSysWorkspace,
//   GetSysWorkSpacePtr (mix.h); the high-level Matmul API, TCubeTiling, REGIST_MATMUL_OBJ,
//   matmul:: (matmul.h); Compare (count, level-0, register), Compares, CompareScalar,
//   GetCmpMask, SetCmpMask, Select in every SELMODE (compare_select.h, select.h).
//
// Source locations: PYASC_LOC("file.py:12:5"); (printed by the emitter before API calls)
// records the user's source location; every cpu::Error message then ends with " at file:12:5".
// Real Ascend toolchains do not define PYASC_LOC; the emitted kernel.cpp defines it as nothing
// when the header did not.
//
// Non-finite constants: PYASC_F32_BITS(0xff800000u) is the float with that IEEE-754 bit pattern
// (-inf here); the emitter prints inf/-inf/NaN constants this way, as C++ has no literal for
// them (kernel.cpp falls back to __builtin_bit_cast where the header does not define it).
//
// Memory check (-DPYASC_MEMCHECK=1, a separately cached library): UB starts every block filled
// with 0xFF bytes (NaN in fp16/fp32, -1 in integers) and a shadow map holds one "defined" bit
// per UB bit, all clear at the block start. Writes define bits, elementwise ops propagate
// definedness lane by lane, and UB->GM copies, reductions (over their count) and GetValue throw
// AccessError("... read of uninitialised UB ...") on undefined data (docs/CPU_RUNTIME.md,
// "Memory check").

#ifndef PYASC_KERNEL_OPERATOR_H
#define PYASC_KERNEL_OPERATOR_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#ifdef PYASC_CPU_TRACE  // `pyasc cpu-run` builds: call stacks of errors (backtrace)
#include <execinfo.h>
#endif

// fp16 <-> fp32 bulk conversions use F16C on x86 CPUs that have it (checked at run time);
// -DPYASC_NO_F16C forces the portable path.
#if (defined(__x86_64__) || defined(__i386__)) && !defined(PYASC_NO_F16C)
#include <immintrin.h>
#define PYASC_X86 1
#endif

#if !defined(PYASC_UB_BYTES) || !defined(PYASC_UB_USABLE) || !defined(PYASC_L1_BYTES) ||     \
    !defined(PYASC_L0A_BYTES) || !defined(PYASC_L0B_BYTES) || !defined(PYASC_L0C_BYTES) ||  \
    !defined(PYASC_DATA_BLOCK_BYTES) || !defined(PYASC_REPEAT_BYTES) ||                       \
    !defined(PYASC_CUBE_FRACTAL) || !defined(PYASC_ND_STRIDE_MAX)
#error "kernel_operator.h needs the hardware numbers as -D flags: pyasc_mlir.platform.header_defines()"
#endif
#ifndef PYASC_MEMCHECK
#define PYASC_MEMCHECK 0
#endif
#if PYASC_MEMCHECK && !defined(PYASC_UB_FILL)
#define PYASC_UB_FILL 0xFF
#endif

// ---------------------------------------------------------------------------------------------
// Qualifiers and basic types
// ---------------------------------------------------------------------------------------------
#define __global__
#define __aicore__
#define __gm__
#define GM_ADDR __gm__ uint8_t*

using half = _Float16;
#include "pyasc_cpu/bf16.h"  // bfloat16_t

namespace pyasc {
// The float whose IEEE-754 binary32 encoding is `bits` (memcpy: no union, no aliasing issue).
inline float f32_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
}  // namespace pyasc
#define PYASC_F32_BITS(bits) ::pyasc::f32_bits(static_cast<uint32_t>(bits))

// Hardware pipes (used as PipeBarrier<PIPE_V>()).
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL };

namespace AscendC {

enum class TPosition { GM, VECIN, VECOUT, VECCALC, MAX };
using QuePosition = TPosition;

// Event pairs: producer pipe _ consumer pipe.
enum class HardEvent { MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3,
                       M_V, V_M, V_V, MTE3_MTE1, MTE1_MTE3, MTE1_V, MTE2_M, M_MTE2, V_MTE1,
                       M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3,
                       MTE3_S, MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3 };
using TEventID = int8_t;

enum class RoundMode { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC,
                       CAST_ODD };
enum class CMPMODE { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

template <class T> class LocalTensor;
class TPipe;

// ---------------------------------------------------------------------------------------------
// CPU runtime state and error reporting
// ---------------------------------------------------------------------------------------------
namespace cpu {

constexpr uint64_t kUbBytes = PYASC_UB_BYTES;
constexpr uint64_t kUbUsable = PYASC_UB_USABLE;
constexpr uint64_t kBlock = PYASC_DATA_BLOCK_BYTES;  // DataBlock: UB alignment, DataCopy unit
constexpr uint64_t kRepeatBytes = PYASC_REPEAT_BYTES;  // bytes one vector repeat processes
constexpr int32_t kFractal = PYASC_CUBE_FRACTAL;       // Cube fractal edge (elements)
constexpr bool kMemcheck = PYASC_MEMCHECK != 0;  // shadow "defined" tracking of UB
static_assert(kUbUsable <= kUbBytes, "PYASC_UB_USABLE must not exceed PYASC_UB_BYTES");

// Every runtime check failure is thrown as this type.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Memory access violations (out of bounds, misaligned, read of uninitialised UB) are this
// subclass; pyasc_last_error_kind() then returns 1.
class AccessError : public Error {
 public:
  using Error::Error;
};

namespace detail {
inline void Append(std::string& s, const char* v) { s += v; }
inline void Append(std::string& s, const std::string& v) { s += v; }
inline void Append(std::string& s, char v) { s += v; }
template <class V>
inline std::enable_if_t<std::is_integral_v<V>> Append(std::string& s, V v) {
  s += std::to_string(v);
}
template <class V>
inline std::enable_if_t<std::is_floating_point_v<V>> Append(std::string& s, V v) {
  s += std::to_string(v);
}
}  // namespace detail

// Concatenate message pieces (strings and numbers).
template <class... A>
inline std::string Cat(const A&... a) {
  std::string s;
  (detail::Append(s, a), ...);
  return s;
}

inline uint64_t RoundUp32(uint64_t x) { return (x + kBlock - 1) / kBlock * kBlock; }

// Per-thread block state: current block, block count, UB arena, current TPipe, last error,
// current source location (PYASC_LOC) and, in memory-check builds, the UB shadow map (one
// "defined" bit per UB bit).
struct BlockState {
  int64_t idx = 0;
  int64_t num = 1;
  uint8_t* ub = nullptr;
  uint8_t* shadow = nullptr;
  TPipe* pipe = nullptr;
  const char* loc = nullptr;
  std::string last_error;
  int last_error_kind = 0;
  BlockState() {
    ub = static_cast<uint8_t*>(std::aligned_alloc(64, (kUbBytes + 127) / 64 * 64));
    if (ub == nullptr) throw std::bad_alloc();
    std::memset(ub, 0, kUbBytes);
    if (kMemcheck) {
      shadow = static_cast<uint8_t*>(std::calloc(kUbBytes, 1));
      if (shadow == nullptr) throw std::bad_alloc();
    }
  }
  ~BlockState() {
    std::free(ub);
    std::free(shadow);
  }
  BlockState(const BlockState&) = delete;
  BlockState& operator=(const BlockState&) = delete;
};

// Hidden visibility: every kernel library keeps its own state. (A default-visibility inline
// function's static is an STB_GNU_UNIQUE symbol, which the dynamic linker shares between all
// loaded libraries, so one library's UB arena and shadow map, sized by its own PYASC_UB_BYTES
// and PYASC_MEMCHECK, would serve every other library in the process.)
__attribute__((visibility("hidden"))) inline BlockState& State() {
  static thread_local BlockState s;
  return s;
}

// Append " at <file:line:col>" when a source location was recorded (PYASC_LOC).
inline std::string WithLoc(std::string s) {
  const char* loc = State().loc;
  if (loc != nullptr && *loc != '\0') {
    s += " at ";
    s += loc;
  }
  return s;
}

// -DPYASC_CPU_TRACE (`pyasc cpu-run`, built with -g): the return addresses of the call stack
// of the last Fail/FailAccess, which the runner maps to the kernel's file:line (addr2line).
struct ErrorTrace {
  void* pc[64];
  int n = 0;
};
__attribute__((visibility("hidden"))) inline ErrorTrace& LastTrace() {
  static thread_local ErrorTrace t;
  return t;
}
inline void CaptureTrace() {
#ifdef PYASC_CPU_TRACE
  LastTrace().n = backtrace(LastTrace().pc, 64);
#endif
}

template <class... A>
[[noreturn]] inline void Fail(const A&... a) {
  CaptureTrace();
  throw Error(WithLoc(Cat(a...)));
}

// A memory access violation (AccessError).
template <class... A>
[[noreturn]] inline void FailAccess(const A&... a) {
  CaptureTrace();
  throw AccessError(WithLoc(Cat(a...)));
}

// Most vector (AIV) blocks per launched block: 2 (KERNEL_TYPE_MIX_AIC_1_2, "GetBlockIdx" and
// "GetTaskRation" pages); pyasc_cpu/core_state.h checks each block against the declared type.
constexpr int64_t kMaxTaskRatio = 2;

// Set the current block index and block count (GetBlockIdx()/GetBlockNum()). `num` is the
// launched block count (NumBlocks); a vector-side index may run to kMaxTaskRatio * num - 1
// (MIX 1:2), which the block's declared kernel type must allow (cpu::FinishBlock).
inline void SetBlock(int64_t idx, int64_t num) {
  if (num <= 0 || idx < 0 || idx >= kMaxTaskRatio * num)
    Fail("SetBlock: block ", idx, " of ", num, " is invalid");
  State().idx = idx;
  State().num = num;
}

// Per-block state of pyasc_cpu/copy.h (the SetPadValue register, LocalMemAllocator use),
// reset at every block start; defined there.
inline void ResetCopyState();
inline void CheckNoStaticAllocator(const char* api);

// Reset this thread's UB arena: zero-filled (or PYASC_UB_FILL bytes if defined; 0xFF in
// memory-check builds), no TPipe, no source location, nothing defined in the shadow map.
namespace race {
inline void Reset();  // pyasc_cpu/race.h
}  // namespace race
inline void ResetUB() {
#ifdef PYASC_UB_FILL
  std::memset(State().ub, PYASC_UB_FILL, kUbBytes);
#else
  std::memset(State().ub, 0, kUbBytes);
#endif
  if (kMemcheck) std::memset(State().shadow, 0, kUbBytes);
  race::Reset();
  State().pipe = nullptr;
  State().loc = nullptr;
  ResetCopyState();
}

inline uint8_t* UB() { return State().ub; }

// Message of the last error caught by RunBlock (empty if none).
inline const char* LastError() { return State().last_error.c_str(); }
// Kind of that error: 0 other, 1 memory access (AccessError).
inline int LastErrorKind() { return State().last_error_kind; }

}  // namespace cpu
}  // namespace AscendC

// Record the user source location of the next API calls ("file.py:12:5"; a string literal).
#define PYASC_LOC(LOC) (::AscendC::cpu::State().loc = (LOC))

#include "pyasc_cpu/gm_alloc.h"  // host allocations: GM accesses past SetGlobalBuffer's size
#include "pyasc_cpu/race.h"  // pipe-synchronisation race detector (memory-check builds)

namespace AscendC {

// ---------------------------------------------------------------------------------------------
// LocalTensor: a view of UB = (arena byte offset, element count)
// ---------------------------------------------------------------------------------------------
template <class T>
class LocalTensor {
 public:
  LocalTensor() = default;

  // A view starting `offset` elements later (offset == size gives an empty view).
  LocalTensor<T> operator[](int64_t offset) const {
    Valid("LocalTensor::operator[]");
    if (offset < 0 || static_cast<uint64_t>(offset) > size_)
      cpu::FailAccess("LocalTensor::operator[]: offset ", offset,
                      " out of range for tensor at UB offset ", off_, " with ", size_, " elements");
    return LocalTensor<T>(off_ + static_cast<uint64_t>(offset) * sizeof(T),
                          size_ - static_cast<uint64_t>(offset));
  }

  T GetValue(int64_t i) const {
    Index("LocalTensor::GetValue", i);
    cpu::race::OnScalar("LocalTensor::GetValue", off_, off_ + static_cast<uint64_t>(i) * sizeof(T),
                        sizeof(T), false);
    if constexpr (cpu::kMemcheck) {
      const uint8_t* sh = cpu::State().shadow + off_ + static_cast<uint64_t>(i) * sizeof(T);
      for (size_t k = 0; k < sizeof(T); ++k)
        if (sh[k] != 0xFF)
          cpu::FailAccess("LocalTensor::GetValue: read of uninitialised UB: element ", i,
                          " (UB offset ", off_ + static_cast<uint64_t>(i) * sizeof(T),
                          ") of the tensor at UB offset ", off_,
                          " was never written in this block");
    }
    T v;
    std::memcpy(&v, cpu::UB() + off_ + static_cast<uint64_t>(i) * sizeof(T), sizeof(T));
    return v;
  }

  void SetValue(int64_t i, T v) const {
    Index("LocalTensor::SetValue", i);
    cpu::race::OnScalar("LocalTensor::SetValue", off_, off_ + static_cast<uint64_t>(i) * sizeof(T),
                        sizeof(T), true);
    if constexpr (cpu::kMemcheck)
      std::memset(cpu::State().shadow + off_ + static_cast<uint64_t>(i) * sizeof(T), 0xFF,
                  sizeof(T));
    std::memcpy(cpu::UB() + off_ + static_cast<uint64_t>(i) * sizeof(T), &v, sizeof(T));
  }

  // Element count of this tensor (or view).
  uint32_t GetSize() const { return static_cast<uint32_t>(size_); }

  // Host address of element 0 (the CPU stand-in for the UB physical address).
  T* GetPhyAddr() const { return reinterpret_cast<T*>(cpu::UB() + off_); }

  // The same bytes viewed as U (element count = bytes / sizeof(U)).
  template <class U>
  LocalTensor<U> ReinterpretCast() const {
    Valid("LocalTensor::ReinterpretCast");
    return LocalTensor<U>(off_, size_ * sizeof(T) / sizeof(U));
  }

  // ---- CPU internals ----
  LocalTensor(uint64_t off, uint64_t size) : off_(off), size_(size), valid_(true) {
    if (off + size * sizeof(T) > cpu::kUbBytes)
      cpu::FailAccess("LocalTensor: [", off, ", ", off + size * sizeof(T),
                      ") bytes exceeds the ", cpu::kUbBytes, "-byte UB");
  }
  uint64_t CpuOffset() const { return off_; }
  uint64_t CpuSize() const { return size_; }
  bool CpuValid() const { return valid_; }
  T* CpuPtr() const { return reinterpret_cast<T*>(cpu::UB() + off_); }

 private:
  void Valid(const char* api) const {
    if (!valid_) cpu::Fail(api, ": LocalTensor was never allocated");
  }
  void Index(const char* api, int64_t i) const {
    Valid(api);
    if (i < 0 || static_cast<uint64_t>(i) >= size_)
      cpu::FailAccess(api, ": index ", i, " out of range for tensor at UB offset ", off_,
                      " with ", size_, " elements");
  }
  uint64_t off_ = 0;
  uint64_t size_ = 0;
  bool valid_ = false;
};

// ---------------------------------------------------------------------------------------------
// GlobalTensor: (host pointer, element count)
// ---------------------------------------------------------------------------------------------
namespace cpu {
namespace dcache {
inline void OnScalar(const char* api, const void* p, bool write);  // pyasc_cpu/dcache.h
}  // namespace dcache
}  // namespace cpu

template <class T>
class GlobalTensor {
 public:
  GlobalTensor() = default;

  // Wrap `size` elements at `buffer`; accesses outside [0, size) throw.
  void SetGlobalBuffer(__gm__ T* buffer, uint64_t size) {
    if (buffer == nullptr && size > 0)
      cpu::Fail("GlobalTensor::SetGlobalBuffer: null pointer with size ", size);
    ptr_ = buffer;
    size_ = size;
  }
  // Without a size nothing can be bounds-checked (the size is taken as unlimited).
  void SetGlobalBuffer(__gm__ T* buffer) { SetGlobalBuffer(buffer, kUnknown); }

  // A view `offset` elements later. Past the SetGlobalBuffer size it is allowed while it stays
  // inside the host allocation (pyasc_cpu/gm_alloc.h); the view then has size 0.
  GlobalTensor<T> operator[](uint64_t offset) const {
    if (offset > size_ &&
        !cpu::AllowPastGlobalSize("GlobalTensor::operator[]", "the", ptr_, size_ * sizeof(T),
                                  offset * sizeof(T)))
      cpu::FailAccess("GlobalTensor::operator[]: offset ", offset, " out of range for ", size_,
                      " elements");
    GlobalTensor<T> g;
    g.ptr_ = ptr_ + offset;
    g.size_ = size_ == kUnknown ? kUnknown : (offset > size_ ? 0 : size_ - offset);
    return g;
  }

  T GetValue(uint64_t i) const {
    Index("GlobalTensor::GetValue", i);
    if constexpr (cpu::kMemcheck) cpu::dcache::OnScalar("GlobalTensor::GetValue", ptr_ + i, false);
    return ptr_[i];
  }
  void SetValue(uint64_t i, T v) const {
    Index("GlobalTensor::SetValue", i);
    if constexpr (cpu::kMemcheck) cpu::dcache::OnScalar("GlobalTensor::SetValue", ptr_ + i, true);
    ptr_[i] = v;
  }
  uint64_t GetSize() const { return size_; }
  __gm__ T* GetPhyAddr() const { return ptr_; }

  // ---- CPU internals ----
  static constexpr uint64_t kUnknown = std::numeric_limits<uint64_t>::max();
  T* CpuPtr() const { return ptr_; }
  uint64_t CpuSize() const { return size_; }

 private:
  void Index(const char* api, uint64_t i) const {
    if (ptr_ == nullptr) cpu::Fail(api, ": GlobalTensor has no buffer");
    if (i >= size_ &&
        !cpu::AllowPastGlobalSize(api, "the", ptr_, size_ * sizeof(T), (i + 1) * sizeof(T)))
      cpu::FailAccess(api, ": index ", i, " out of range for ", size_, " elements");
  }
  T* ptr_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace AscendC
#include "pyasc_cpu/dcache.h"  // the cores' scalar data caches, DataCacheCleanAndInvalid
namespace AscendC {

// ---------------------------------------------------------------------------------------------
// TPipe / TQue / TBuf
// ---------------------------------------------------------------------------------------------
namespace cpu {
// Bookkeeping of one TQue: `num` buffers of `len` bytes starting at UB offset `base`.
struct QueState {
  enum Slot : uint8_t { kFree, kAllocated, kQueued };
  bool init = false;
  uint64_t base = 0, len = 0;
  std::vector<Slot> slots;
  uint64_t next = 0;  // round-robin allocation cursor
  struct Item { uint64_t off, bytes; };
  std::deque<Item> fifo;

  // Index of the buffer that contains UB byte offset `off`, or throws.
  uint64_t SlotOf(const char* api, uint64_t off) const {
    if (!init) Fail(api, ": queue was not initialised with TPipe::InitBuffer");
    if (len == 0 || off < base || off >= base + len * slots.size())
      Fail(api, ": tensor at UB offset ", off, " does not belong to this queue (buffers at [",
           base, ", ", base + len * slots.size(), "))");
    return (off - base) / len;
  }
};
}  // namespace cpu

// A queue of `num` UB buffers (set by TPipe::InitBuffer). `depth` is how many EnQue may happen
// in a row without a DeQue ("TQue" page: n consecutive EnQue need depth n; depth 0 is the
// in-place case and is not bounded here): one more EnQue throws. AllocTensor goes round-robin
// over the buffers; allocating a buffer that was not freed yet (more live tensors than `num`)
// throws, DeQue on an empty queue throws, EnQue/FreeTensor of a tensor of another queue throws.
template <TPosition pos, int32_t depth = 1, auto mask = 0>
class TQue {
  static_assert(depth >= 0, "TQue: depth must not be negative");

 public:
  TQue() = default;
  TQue(const TQue&) = delete;
  TQue& operator=(const TQue&) = delete;

  template <class T>
  LocalTensor<T> AllocTensor() {
    if (!st_.init) cpu::Fail("TQue::AllocTensor: queue was not initialised with TPipe::InitBuffer");
    const uint64_t k = st_.next;
    if (st_.slots[k] != cpu::QueState::kFree)
      cpu::Fail("TQue::AllocTensor: buffer ", k, " of ", st_.slots.size(), " (UB offset ",
                st_.base + k * st_.len, ") was not freed yet");
    st_.slots[k] = cpu::QueState::kAllocated;
    st_.next = (k + 1) % st_.slots.size();
    cpu::race::OnQueue(pos, st_.base + k * st_.len, cpu::race::kAlloc);
    return LocalTensor<T>(st_.base + k * st_.len, st_.len / sizeof(T));
  }

  template <class T>
  bool EnQue(const LocalTensor<T>& t) {
    if (!t.CpuValid()) cpu::Fail("TQue::EnQue: LocalTensor was never allocated");
    const uint64_t k = st_.SlotOf("TQue::EnQue", t.CpuOffset());
    if (st_.slots[k] != cpu::QueState::kAllocated)
      cpu::Fail("TQue::EnQue: buffer ", k, " (UB offset ", t.CpuOffset(),
                ") is not an allocated tensor of this queue");
    if (depth > 0 && st_.fifo.size() >= static_cast<size_t>(depth))
      cpu::Fail("TQue::EnQue: ", depth, " tensors are already enqueued and the queue's depth is ",
                depth, " (the depth template argument bounds consecutive EnQue without DeQue; ",
                "declare TQue<..., ", depth + 1, "> or DeQue first)");
    st_.slots[k] = cpu::QueState::kQueued;
    st_.fifo.push_back({t.CpuOffset(), t.CpuSize() * sizeof(T)});
    cpu::race::OnQueue(pos, st_.base + k * st_.len, cpu::race::kEnQue);
    return true;
  }

  template <class T>
  LocalTensor<T> DeQue() {
    if (!st_.init) cpu::Fail("TQue::DeQue: queue was not initialised with TPipe::InitBuffer");
    if (st_.fifo.empty()) cpu::Fail("TQue::DeQue: queue is empty");
    const auto item = st_.fifo.front();
    st_.fifo.pop_front();
    st_.slots[(item.off - st_.base) / st_.len] = cpu::QueState::kAllocated;
    cpu::race::OnQueue(pos, st_.base + (item.off - st_.base) / st_.len * st_.len, cpu::race::kDeQue);
    return LocalTensor<T>(item.off, item.bytes / sizeof(T));
  }

  template <class T>
  void FreeTensor(const LocalTensor<T>& t) {
    if (!t.CpuValid()) cpu::Fail("TQue::FreeTensor: LocalTensor was never allocated");
    const uint64_t k = st_.SlotOf("TQue::FreeTensor", t.CpuOffset());
    if (st_.slots[k] == cpu::QueState::kFree)
      cpu::Fail("TQue::FreeTensor: buffer ", k, " (UB offset ", t.CpuOffset(),
                ") is already free");
    if (st_.slots[k] == cpu::QueState::kQueued)
      cpu::Fail("TQue::FreeTensor: buffer ", k, " (UB offset ", t.CpuOffset(),
                ") is still enqueued (DeQue it first)");
    st_.slots[k] = cpu::QueState::kFree;
    cpu::race::OnQueue(pos, st_.base + k * st_.len, cpu::race::kFree);
  }

 private:
  friend class TPipe;
  cpu::QueState st_;
};

// Scratch UB without queue semantics.
template <TPosition pos = TPosition::VECCALC>
class TBuf {
 public:
  TBuf() = default;
  TBuf(const TBuf&) = delete;
  TBuf& operator=(const TBuf&) = delete;

  // The whole buffer as LocalTensor<T>.
  template <class T>
  LocalTensor<T> Get() {
    if (!init_) cpu::Fail("TBuf::Get: buffer was not initialised with TPipe::InitBuffer");
    return LocalTensor<T>(base_, len_ / sizeof(T));
  }
  // The first `count` elements of the buffer.
  template <class T>
  LocalTensor<T> Get(uint32_t count) {
    if (!init_) cpu::Fail("TBuf::Get: buffer was not initialised with TPipe::InitBuffer");
    if (static_cast<uint64_t>(count) * sizeof(T) > len_)
      cpu::Fail("TBuf::Get: ", count, " elements of ", sizeof(T), " bytes exceed the ", len_,
                "-byte buffer");
    return LocalTensor<T>(base_, count);
  }

 private:
  friend class TPipe;
  bool init_ = false;
  uint64_t base_ = 0, len_ = 0;
};

// Hands out UB from offset 0 upward, every buffer rounded up to 32 B, bounded by
// PYASC_UB_USABLE. The most recently constructed TPipe of the block is GetTPipePtr().
class TPipe {
 public:
  TPipe() {
    cpu::CheckNoStaticAllocator("TPipe");
    cpu::State().pipe = this;
  }
  ~TPipe() {
    if (cpu::State().pipe == this) cpu::State().pipe = nullptr;
  }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  // `num` buffers of `len` bytes each (len rounded up to 32).
  template <TPosition P, int32_t D, auto M>
  void InitBuffer(TQue<P, D, M>& que, int64_t num, int64_t len) {
    if (num <= 0 || len < 0)
      cpu::Fail("TPipe::InitBuffer: invalid queue buffer count ", num, " or length ", len);
    // num is a uint8_t; all queue buffers of a kernel together at most PYASC_MAX_QUE_BUFFERS
    // (InitBuffer page: "一个kernel中所有的buffer num之和不能超过64").
    if (num > std::numeric_limits<uint8_t>::max())
      cpu::Fail("TPipe::InitBuffer: buffer count ", num, " does not fit the uint8_t num");
    if (que_buffers_ + num > PYASC_MAX_QUE_BUFFERS)
      cpu::Fail("TPipe::InitBuffer: ", que_buffers_ + num, " queue buffers in this kernel; at ",
                "most ", PYASC_MAX_QUE_BUFFERS, " are allowed (sum of every InitBuffer num)");
    que_buffers_ += num;
    const uint64_t l = cpu::RoundUp32(static_cast<uint64_t>(len));
    que.st_.base = Take(static_cast<uint64_t>(num) * l);
    regions_.push_back({que.st_.base, static_cast<uint64_t>(num) * l, P});
    que.st_.len = l;
    que.st_.slots.assign(static_cast<size_t>(num), cpu::QueState::kFree);
    que.st_.next = 0;
    que.st_.fifo.clear();
    que.st_.init = true;
  }

  // One buffer of `len` bytes (rounded up to 32).
  template <TPosition P>
  void InitBuffer(TBuf<P>& buf, int64_t len) {
    if (len < 0) cpu::Fail("TPipe::InitBuffer: invalid buffer length ", len);
    const uint64_t l = cpu::RoundUp32(static_cast<uint64_t>(len));
    buf.base_ = Take(l);
    buf.len_ = l;
    regions_.push_back({buf.base_, l, P});
    buf.init_ = true;
  }

  // Event ids are handed out round-robin; synchronisation is a no-op on the CPU (memory-check
  // builds: the race detector's ordering, pyasc_cpu/race.h).
  TEventID FetchEventID(HardEvent) { return static_cast<TEventID>(event_++ & 7); }
  template <HardEvent evt>
  TEventID FetchEventID() { return FetchEventID(evt); }

  // Release all buffers (subsequent InitBuffer starts at offset 0 again).
  void Reset() {
    cursor_ = 0;
    que_buffers_ = 0;
    regions_.clear();
  }
  void Destroy() { Reset(); }

  // UB bytes handed out so far.
  uint64_t CpuUsedBytes() const { return cursor_; }
  // Hand out `bytes` (the Matmul library's UB share on coupled-core platforms).
  uint64_t CpuTake(uint64_t bytes) { return Take(bytes); }
  // The TPosition of the TQue/TBuf holding UB byte `off` (false when no buffer of this pipe
  // holds it).
  bool CpuPositionOf(uint64_t off, TPosition& pos) const {
    for (const auto& r : regions_)
      if (off >= r.base && off < r.base + r.len) {
        pos = r.pos;
        return true;
      }
    return false;
  }

 private:
  uint64_t Take(uint64_t bytes) {
    const uint64_t need = cursor_ + bytes;
    if (need > cpu::kUbUsable)
      cpu::Fail("TPipe::InitBuffer: UB overflow: need ", need, " bytes, usable ", cpu::kUbUsable);
    const uint64_t off = cursor_;
    cursor_ = need;
    return off;
  }
  struct Region {
    uint64_t base, len;
    TPosition pos;
  };
  std::vector<Region> regions_;
  uint64_t cursor_ = 0;
  int64_t que_buffers_ = 0;  // sum of the num of every InitBuffer(que, num, len)
  uint32_t event_ = 0;
};

inline TPipe* GetTPipePtr() {
  TPipe* p = cpu::State().pipe;
  if (p == nullptr) cpu::Fail("GetTPipePtr: no TPipe exists in this block");
  return p;
}

inline int64_t GetBlockIdx() { return cpu::State().idx; }
inline int64_t GetBlockNum() { return cpu::State().num; }


// ---------------------------------------------------------------------------------------------
// Checks and element helpers
// ---------------------------------------------------------------------------------------------
namespace cpu {
namespace detail {

// Checks a UB operand of a vector op / copy and returns its host pointer: allocated, 32-byte
// aligned UB offset, and `count` elements inside the tensor.
template <class T>
inline T* CheckUB(const char* api, const char* role, const LocalTensor<T>& t, int64_t count) {
  if (!t.CpuValid()) Fail(api, ": ", role, " LocalTensor was never allocated");
  if (t.CpuOffset() % kBlock != 0)
    FailAccess(api, ": ", role, " UB offset ", t.CpuOffset(), " is not ", kBlock,
               "-byte aligned");
  if (count < 0) Fail(api, ": negative count ", count);
  if (static_cast<uint64_t>(count) > t.CpuSize())
    FailAccess(api, ": ", role, " LocalTensor at UB offset ", t.CpuOffset(), " holds ",
               t.CpuSize(), " elements (", t.CpuSize() * sizeof(T), " bytes), access of ",
               count, " elements (", static_cast<uint64_t>(count) * sizeof(T),
               " bytes) exceeds it");
  race::OnOperand(api, role, t.CpuOffset(), static_cast<uint64_t>(count) * sizeof(T));
  return t.CpuPtr();
}

// Same for a UB byte range [begin, end) relative to the tensor start.
template <class T>
inline uint8_t* CheckUBBytes(const char* api, const char* role, const LocalTensor<T>& t,
                             uint64_t end) {
  if (!t.CpuValid()) Fail(api, ": ", role, " LocalTensor was never allocated");
  if (t.CpuOffset() % kBlock != 0)
    FailAccess(api, ": ", role, " UB offset ", t.CpuOffset(), " is not ", kBlock,
               "-byte aligned");
  if (end > t.CpuSize() * sizeof(T))
    FailAccess(api, ": ", role, " LocalTensor at UB offset ", t.CpuOffset(), " holds ",
               t.CpuSize() * sizeof(T), " bytes, access up to byte ", end, " exceeds it");
  race::OnOperand(api, role, t.CpuOffset(), end);
  return reinterpret_cast<uint8_t*>(t.CpuPtr());
}

template <class T>
inline T* CheckGM(const char* api, const char* role, const GlobalTensor<T>& g, uint64_t count) {
  if (count == 0) return g.CpuPtr();
  if (g.CpuPtr() == nullptr) Fail(api, ": ", role, " GlobalTensor has no buffer");
  if (count > g.CpuSize() &&
      !AllowPastGlobalSize(api, role, g.CpuPtr(), g.CpuSize() * sizeof(T), count * sizeof(T)))
    FailAccess(api, ": ", role, " GlobalTensor holds ", g.CpuSize(), " elements, access of ",
               count, " elements exceeds it");
  RequireInHostAllocation(api, role, g.CpuPtr(), count * sizeof(T));
  return g.CpuPtr();
}

template <class T>
inline uint8_t* CheckGMBytes(const char* api, const char* role, const GlobalTensor<T>& g,
                             uint64_t end) {
  if (end == 0) return reinterpret_cast<uint8_t*>(g.CpuPtr());
  if (g.CpuPtr() == nullptr) Fail(api, ": ", role, " GlobalTensor has no buffer");
  if (g.CpuSize() != GlobalTensor<T>::kUnknown && end > g.CpuSize() * sizeof(T) &&
      !AllowPastGlobalSize(api, role, g.CpuPtr(), g.CpuSize() * sizeof(T), end))
    FailAccess(api, ": ", role, " GlobalTensor holds ", g.CpuSize() * sizeof(T),
               " bytes, access up to byte ", end, " exceeds it");
  RequireInHostAllocation(api, role, g.CpuPtr(), end);
  if constexpr (kMemcheck) dcache::OnDma(api, g.CpuPtr(), end, role[0] == 'd');
  return reinterpret_cast<uint8_t*>(g.CpuPtr());
}

// A copy from GM lands in VECIN (or VECOUT) UB: the documented DataCopy / DataCopyPad paths are
// GM->VECIN (DataCopy) and GM->VECIN/VECOUT (DataCopyPad); a VECCALC buffer of the current TPipe
// as the destination is refused. (UB->GM from a VECCALC TBuf stays accepted: samples do it.)
template <class T>
inline void CheckGmPath(const char* api, const char* role, const LocalTensor<T>& t) {
  TPosition pos;
  if (t.CpuValid() && State().pipe != nullptr && State().pipe->CpuPositionOf(t.CpuOffset(), pos) &&
      pos == TPosition::VECCALC)
    Fail(api, ": ", role, " at UB offset ", t.CpuOffset(), " is in a TPosition::VECCALC buffer; ",
         "a copy from GM lands in TPosition::VECIN or VECOUT (use a TQue or TBuf of ",
         "TPosition::VECIN)");
}

inline void CheckCount(const char* api, int64_t count) {
  if (count < 0) Fail(api, ": negative count ", count);
}

}  // namespace detail

// ---- Memory check: the UB shadow map (used only when kMemcheck) ----
// One shadow byte per UB byte holds that byte's "defined" bits (0xFF: all written since the
// block started). Elements are defined when all their bytes are 0xFF; mask bits (Compare/Select
// masks) are tracked bit by bit.
namespace mc {
inline uint8_t* Sh(uint64_t off) { return State().shadow + off; }

// Mark UB bytes [off, off + n) written.
inline void Define(uint64_t off, uint64_t n) {
  if (n) std::memset(Sh(off), 0xFF, static_cast<size_t>(n));
}

// Copy the shadow of n bytes (UB->UB copies).
inline void CopyShadow(uint64_t dst, uint64_t src, uint64_t n) {
  if (n) std::memmove(Sh(dst), Sh(src), static_cast<size_t>(n));
}

// Index (from off) of the first byte in [off, off + n) with an undefined bit, or n.
inline uint64_t FirstUndefined(uint64_t off, uint64_t n) {
  const uint8_t* s = Sh(off);
  for (uint64_t i = 0; i < n; ++i)
    if (s[i] != 0xFF) return i;
  return n;
}

template <class T>
inline bool ElemDefined(uint64_t off, int64_t i) {
  const uint8_t* s = Sh(off + static_cast<uint64_t>(i) * sizeof(T));
  for (size_t k = 0; k < sizeof(T); ++k)
    if (s[k] != 0xFF) return false;
  return true;
}

inline bool BitDefined(uint64_t off, int64_t i) { return (Sh(off)[i >> 3] >> (i & 7)) & 1; }

// Throw "read of uninitialised UB" unless bytes [begin, begin + n) of t are all defined.
template <class T>
inline void RequireDefined(const char* api, const char* role, const LocalTensor<T>& t,
                           uint64_t begin, uint64_t n, const char* what = "") {
  const uint64_t k = FirstUndefined(t.CpuOffset() + begin, n);
  if (k < n) {
    const uint64_t b = begin + k;
    FailAccess(api, ": read of uninitialised UB: ", role, what, " byte ", b, " (element ",
               b / sizeof(T), ", UB offset ", t.CpuOffset() + b, ") of the LocalTensor at UB "
               "offset ", t.CpuOffset(), " was never written in this block");
  }
}

// dst element i (i < n) is defined iff element i of every source is (valgrind-style
// propagation through elementwise ops). Reads every source shadow before writing dst.
template <class D, class... S>
inline void Elementwise(const LocalTensor<D>& dst, int64_t n, const LocalTensor<S>&... src) {
  if (n <= 0) return;
  const uint64_t un = static_cast<uint64_t>(n);
  if (((FirstUndefined(src.CpuOffset(), un * sizeof(S)) == un * sizeof(S)) && ...)) {
    Define(dst.CpuOffset(), un * sizeof(D));
    return;
  }
  std::vector<uint8_t> ok(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ok[i] = (ElemDefined<S>(src.CpuOffset(), i) && ...);
  for (int64_t i = 0; i < n; ++i)
    std::memset(Sh(dst.CpuOffset() + static_cast<uint64_t>(i) * sizeof(D)), ok[i] ? 0xFF : 0,
                sizeof(D));
}
}  // namespace mc

namespace detail {

// --- fp16 <-> fp32 bulk conversion (F16C when the CPU has it, else the compiler's) ---
#ifdef PYASC_X86
__attribute__((target("avx,f16c"))) inline void H2FF16C(const half* s, float* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))));
  for (; i < n; ++i) d[i] = static_cast<float>(s[i]);
}
__attribute__((target("avx,f16c"))) inline void F2HF16C(const float* s, half* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) d[i] = static_cast<half>(s[i]);
}
inline bool HasF16C() {
  static const bool v = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  }();
  return v;
}
#endif

// half -> float (exact).
inline void H2F(const half* s, float* d, int64_t n) {
#ifdef PYASC_X86
  if (HasF16C()) return H2FF16C(s, d, n);
#endif
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(s[i]);
}
// float -> half, round to nearest even.
inline void F2H(const float* s, half* d, int64_t n) {
#ifdef PYASC_X86
  if (HasF16C()) return F2HF16C(s, d, n);
#endif
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<half>(s[i]);
}

constexpr int64_t kChunk = 512;  // half lanes are converted in chunks of this many elements

// Compute type of a lane: half computes in float (rounded back once per op), small integers
// in a wider integer so that the C++ arithmetic is defined (results wrap on narrowing).
template <class T> struct Lane { using type = T; };
template <> struct Lane<half> { using type = float; };
template <> struct Lane<int8_t> { using type = int32_t; };
template <> struct Lane<uint8_t> { using type = int32_t; };
template <> struct Lane<int16_t> { using type = int32_t; };
template <> struct Lane<uint16_t> { using type = int32_t; };
template <> struct Lane<int32_t> { using type = int64_t; };
template <> struct Lane<uint32_t> { using type = int64_t; };

template <class T>
constexpr bool kIsFloat = std::is_same_v<T, half> || std::is_same_v<T, float>;
template <class T>
constexpr bool kIsVec = kIsFloat<T> || std::is_same_v<T, int16_t> || std::is_same_v<T, int32_t>;

// Special values of Max/Min/Maxs/Mins/Relu/Abs/ReduceMax/ReduceMin (docs/CPU_RUNTIME.md,
// "Special values"), on compute lanes (float for half and float, wide integers otherwise):
// NaN if either operand is NaN; a +-0 tie gives +0 for max and -0 for min (IEEE 754-2019
// maximum/minimum: the AND / OR of the bit patterns of equal operands); Relu: +0 where
// x < 0, else x (NaN and -0 pass); Abs: the sign bit cleared. The Ascend C documentation does
// not state the NaN or signed-zero behaviour of these instructions on the Atlas A2: this is
// the project's defined semantics, the same as the interpreters' (dialects/opset_special.py).
//
// PYASC_HW_NAN_MODEL_DROP (a TEST-ONLY model of unknown hardware, never the default): with
// -DPYASC_HW_NAN_MODEL_DROP=1 these instructions instead drop NaN (the other operand wins, a
// row max/min skips its NaNs), get every +-0 tie wrong (max: -0 if either is -0; min: +0 if
// either is +0) and Relu is the naive `x > 0 ? x : 0` (NaN -> +0, -0 -> +0). The NaN guards
// the compiler emits (docs/CPU_RUNTIME.md, "NaN guards") must give the defined result anyway;
// tests/test_nan_guards.py builds kernels with it.
#if defined(PYASC_HW_NAN_MODEL_DROP) && PYASC_HW_NAN_MODEL_DROP
template <bool kMax, class L>
inline L VExtreme(L x, L y) {
  if constexpr (std::is_floating_point_v<L>) {
    if (std::isnan(x)) return y;
    if (std::isnan(y)) return x;
    if (x == y) {
      uint32_t bx, by;
      static_assert(sizeof(L) == 4, "float lanes");
      std::memcpy(&bx, &x, 4);
      std::memcpy(&by, &y, 4);
      const uint32_t r = kMax ? (bx | by) : (bx & by);
      L out;
      std::memcpy(&out, &r, 4);
      return out;
    }
  }
  return kMax ? (x > y ? x : y) : (x < y ? x : y);
}
template <class L>
inline L VRelu(L x) { return x > 0 ? x : L(0); }
#else
template <bool kMax, class L>
inline L VExtreme(L x, L y) {
  if constexpr (std::is_floating_point_v<L>) {
    if (std::isnan(x)) return x;
    if (std::isnan(y)) return y;
    if (x == y) {
      uint32_t bx, by;
      static_assert(sizeof(L) == 4, "float lanes");
      std::memcpy(&bx, &x, 4);
      std::memcpy(&by, &y, 4);
      const uint32_t r = kMax ? (bx & by) : (bx | by);
      L out;
      std::memcpy(&out, &r, 4);
      return out;
    }
  }
  return kMax ? (x > y ? x : y) : (x < y ? x : y);
}
template <class L>
inline L VRelu(L x) { return x < 0 ? L(0) : x; }
#endif
template <class L>
inline L VMax(L x, L y) { return VExtreme<true>(x, y); }
template <class L>
inline L VMin(L x, L y) { return VExtreme<false>(x, y); }
template <class L>
inline L VAbs(L x) {
  if constexpr (std::is_floating_point_v<L>) return std::fabs(x);
  else return x < 0 ? -x : x;
}

// The element loops below are compiled with the vectorizer on (plain -O2 in g++ 12 only
// vectorizes loops without runtime alias checks or epilogues).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

// d[i] = f(a[i]) for i < n.
template <class T, class F>
inline void Map1(T* d, const T* a, int64_t n, F f) {
  if constexpr (std::is_same_v<T, half>) {
    float fa[kChunk];
    for (int64_t o = 0; o < n; o += kChunk) {
      const int64_t m = n - o < kChunk ? n - o : kChunk;
      H2F(a + o, fa, m);
      for (int64_t i = 0; i < m; ++i) fa[i] = f(fa[i]);
      F2H(fa, d + o, m);
    }
  } else {
    using L = typename Lane<T>::type;
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(f(static_cast<L>(a[i])));
  }
}

// d[i] = f(a[i], b[i]) for i < n.
template <class T, class F>
inline void Map2(T* d, const T* a, const T* b, int64_t n, F f) {
  if constexpr (std::is_same_v<T, half>) {
    float fa[kChunk], fb[kChunk];
    for (int64_t o = 0; o < n; o += kChunk) {
      const int64_t m = n - o < kChunk ? n - o : kChunk;
      H2F(a + o, fa, m);
      H2F(b + o, fb, m);
      for (int64_t i = 0; i < m; ++i) fa[i] = f(fa[i], fb[i]);
      F2H(fa, d + o, m);
    }
  } else {
    using L = typename Lane<T>::type;
    for (int64_t i = 0; i < n; ++i)
      d[i] = static_cast<T>(f(static_cast<L>(a[i]), static_cast<L>(b[i])));
  }
}

}  // namespace detail
}  // namespace cpu

}  // namespace AscendC

// ---------------------------------------------------------------------------------------------
// Data movement
// ---------------------------------------------------------------------------------------------
#include "pyasc_cpu/copy.h"       // DataCopyParams forms, SetPadValue, copy ranges
#include "pyasc_cpu/allocator.h"  // LocalMemAllocator

namespace AscendC {

// DataCopy(dst, src, count): moves count*sizeof(T) bytes rounded DOWN to a multiple of 32 bytes
// (documented hardware behaviour; unaligned tails need DataCopyPad). UB operands must be 32-byte
// aligned. Bounds are checked on the bytes actually moved.
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, int64_t count) {
  cpu::detail::CheckCount("DataCopy(GM->UB)", count);
  cpu::detail::CheckGmPath("DataCopy(GM->UB)", "dst", dst);
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T) / cpu::kBlock * cpu::kBlock;
  uint8_t* d = cpu::detail::CheckUBBytes("DataCopy(GM->UB)", "dst", dst, bytes);
  uint8_t* s = cpu::detail::CheckGMBytes("DataCopy(GM->UB)", "src", src, bytes);
  if constexpr (cpu::kMemcheck) cpu::mc::Define(dst.CpuOffset(), bytes);
  if (bytes) std::memmove(d, s, bytes);
}

template <class T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, int64_t count) {
  cpu::detail::CheckCount("DataCopy(UB->GM)", count);
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T) / cpu::kBlock * cpu::kBlock;
  uint8_t* s = cpu::detail::CheckUBBytes("DataCopy(UB->GM)", "src", src, bytes);
  uint8_t* d = cpu::detail::CheckGMBytes("DataCopy(UB->GM)", "dst", dst, bytes);
  if constexpr (cpu::kMemcheck) cpu::mc::RequireDefined("DataCopy(UB->GM)", "src", src, 0, bytes);
  if (bytes) std::memmove(d, s, bytes);
}

template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, int64_t count) {
  cpu::detail::CheckCount("DataCopy(UB->UB)", count);
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T) / cpu::kBlock * cpu::kBlock;
  uint8_t* d = cpu::detail::CheckUBBytes("DataCopy(UB->UB)", "dst", dst, bytes);
  uint8_t* s = cpu::detail::CheckUBBytes("DataCopy(UB->UB)", "src", src, bytes);
  if constexpr (cpu::kMemcheck) cpu::mc::CopyShadow(dst.CpuOffset(), src.CpuOffset(), bytes);
  if (bytes) std::memmove(d, s, bytes);
}

// DataCopyPad parameters. GM side in bytes, UB side in 32-byte blocks:
//   blockCount  number of blocks
//   blockLen    bytes per block (GM side; must be a multiple of sizeof(T))
//   srcStride   gap between blocks on the source side (GM->UB: bytes; UB->GM: 32-B blocks)
//   dstStride   gap between blocks on the destination side (GM->UB: 32-B blocks; UB->GM: bytes)
// A gap runs from the end of one block to the start of the next.
// blockCount is documented uint16_t in [0, 4095] (Atlas A2: the hardware burst count is 12 bits,
// CCE intrinsic page); held as uint32_t so a larger value is refused, not wrapped.
struct DataCopyExtParams {
  uint32_t blockCount = 1;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
  DataCopyExtParams() = default;
  DataCopyExtParams(uint32_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn,
                    uint32_t rsvIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn),
        rsv(rsvIn) {}
};

// Padding of GM->UB DataCopyPad, in elements: leftPadding elements before the data and the rest
// of the block (at least rightPadding elements) after it; they get paddingValue when isPad.
template <class T>
struct DataCopyPadExtParams {
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = T(0);
  DataCopyPadExtParams() = default;
  DataCopyPadExtParams(bool isPadIn, uint8_t leftPadIn, uint8_t rightPadIn, T padValueIn)
      : isPad(isPadIn), leftPadding(leftPadIn), rightPadding(rightPadIn),
        paddingValue(padValueIn) {}
};

namespace cpu {
// Ranges of DataCopyExtParams: blockCount [0, PYASC_MAX_BLOCK_COUNT], blockLen (bytes)
// [0, PYASC_MAX_PAD_BLOCK_LEN] (the 21-bit burst length of the padded GM<->UB move).
inline void CheckExtParams(const char* api, const DataCopyExtParams& p) {
  CheckRange(api, "blockCount", p.blockCount, 0, PYASC_MAX_BLOCK_COUNT);
  CheckRange(api, "blockLen", p.blockLen, 0, PYASC_MAX_PAD_BLOCK_LEN);
}
}  // namespace cpu

// GM->UB. Block k is read from GM byte k*(blockLen + srcStride) and lands at UB byte
// k*(B + dstStride*32), where B = roundup32((leftPadding + rightPadding)*sizeof(T) + blockLen):
// leftPadding elements, then the blockLen data bytes, then padding up to B (rightPadding
// elements and the rest of the last DataBlock). The padding elements get paddingValue when
// isPad, the SetPadValue value when !isPad and SetPadValue was called in this block; otherwise
// (the documented "random" fill) UB keeps its previous contents there and, in memory-check
// builds, stays undefined.
template <class T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                        const DataCopyExtParams& p, const DataCopyPadExtParams<T>& pad) {
  const char* api = "DataCopyPad(GM->UB)";
  cpu::CheckExtParams(api, p);
  cpu::detail::CheckGmPath(api, "dst", dst);
  const T* fill = pad.isPad ? &pad.paddingValue : cpu::PadRegister<T>(api);
  const uint64_t n = p.blockCount, len = p.blockLen, sz = sizeof(T);
  if (len % sz != 0) cpu::Fail(api, ": blockLen ", len, " bytes is not a multiple of ", sz);
  const uint64_t left = pad.leftPadding * sz, right = pad.rightPadding * sz;
  if (left > cpu::kBlock || right > cpu::kBlock)
    cpu::Fail(api, ": leftPadding/rightPadding (", left, "/", right, " bytes) exceed ",
              cpu::kBlock, " bytes");
  const uint64_t ub_block = cpu::RoundUp32(left + len + right);
  const uint64_t ub_step = ub_block + static_cast<uint64_t>(p.dstStride) * cpu::kBlock;
  const uint64_t gm_step = len + p.srcStride;
  const uint64_t ub_end = n ? (n - 1) * ub_step + ub_block : 0;
  const uint64_t gm_end = n ? (n - 1) * gm_step + len : 0;
  uint8_t* d = cpu::detail::CheckUBBytes(api, "dst", dst, ub_end);
  const uint8_t* s = cpu::detail::CheckGMBytes(api, "src", src, len ? gm_end : 0);
  for (uint64_t k = 0; k < n; ++k) {
    uint8_t* db = d + k * ub_step;
    if constexpr (cpu::kMemcheck) {
      const uint64_t at = dst.CpuOffset() + k * ub_step;
      if (fill != nullptr) cpu::mc::Define(at, ub_block);
      else cpu::mc::Define(at + left, len);
    }
    if (len) std::memmove(db + left, s + k * gm_step, len);
    if (fill != nullptr) {
      T* e = reinterpret_cast<T*>(db);
      for (uint64_t i = 0; i < left / sz; ++i) e[i] = *fill;
      for (uint64_t i = (left + len) / sz; i < ub_block / sz; ++i) e[i] = *fill;
    }
  }
}

// UB->GM. Block k is read from UB byte k*(roundup32(blockLen) + srcStride*32) and exactly
// blockLen bytes are written at GM byte k*(blockLen + dstStride).
template <class T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                        const DataCopyExtParams& p) {
  const char* api = "DataCopyPad(UB->GM)";
  cpu::CheckExtParams(api, p);
  const uint64_t n = p.blockCount, len = p.blockLen;
  if (len % sizeof(T) != 0)
    cpu::Fail(api, ": blockLen ", len, " bytes is not a multiple of ", sizeof(T));
  const uint64_t ub_step = cpu::RoundUp32(len) + static_cast<uint64_t>(p.srcStride) * cpu::kBlock;
  const uint64_t gm_step = len + p.dstStride;
  const uint64_t ub_end = n && len ? (n - 1) * ub_step + len : 0;
  const uint64_t gm_end = n && len ? (n - 1) * gm_step + len : 0;
  const uint8_t* s = cpu::detail::CheckUBBytes(api, "src", src, ub_end);
  uint8_t* d = cpu::detail::CheckGMBytes(api, "dst", dst, gm_end);
  if (len == 0) return;
  if constexpr (cpu::kMemcheck) {
    for (uint64_t k = 0; k < n; ++k) {
      const std::string what = cpu::Cat(" block ", k, " of ", n, ",");
      cpu::mc::RequireDefined(api, "src", src, k * ub_step, len, what.c_str());
    }
  }
  for (uint64_t k = 0; k < n; ++k) std::memmove(d + k * gm_step, s + k * ub_step, len);
}

// ---------------------------------------------------------------------------------------------
// Vector ops, count form: the first `count` elements of every operand.
// ---------------------------------------------------------------------------------------------
#define PYASC_BINARY_OP(NAME, EXPR, FLOAT_ONLY)                                               \
  template <class T>                                                                            \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0,                      \
                   const LocalTensor<T>& src1, int64_t count) {                                \
    static_assert(cpu::detail::kIsVec<T>, #NAME ": unsupported element type");                \
    static_assert(!(FLOAT_ONLY) || cpu::detail::kIsFloat<T>, #NAME ": needs half or float");  \
    T* d = cpu::detail::CheckUB(#NAME, "dst", dst, count);                                     \
    const T* a = cpu::detail::CheckUB(#NAME, "src0", src0, count);                             \
    const T* b = cpu::detail::CheckUB(#NAME, "src1", src1, count);                             \
    if constexpr (cpu::kMemcheck) cpu::mc::Elementwise(dst, count, src0, src1);                \
    cpu::detail::Map2(d, a, b, count, [](auto x, auto y) { return EXPR; });                    \
  }

// dst = src0 op src1
PYASC_BINARY_OP(Add, x + y, false)
PYASC_BINARY_OP(Sub, x - y, false)
PYASC_BINARY_OP(Mul, x * y, false)
PYASC_BINARY_OP(Div, x / y, true)
PYASC_BINARY_OP(Max, cpu::detail::VMax(x, y), false)
PYASC_BINARY_OP(Min, cpu::detail::VMin(x, y), false)
#undef PYASC_BINARY_OP

#define PYASC_UNARY_OP(NAME, EXPR, FLOAT_ONLY)                                                \
  template <class T>                                                                            \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, int64_t count) {     \
    static_assert(cpu::detail::kIsVec<T>, #NAME ": unsupported element type");                \
    static_assert(!(FLOAT_ONLY) || cpu::detail::kIsFloat<T>, #NAME ": needs half or float");  \
    T* d = cpu::detail::CheckUB(#NAME, "dst", dst, count);                                     \
    const T* a = cpu::detail::CheckUB(#NAME, "src", src, count);                               \
    if constexpr (cpu::kMemcheck) cpu::mc::Elementwise(dst, count, src);                       \
    cpu::detail::Map1(d, a, count, [](auto x) { return EXPR; });                               \
  }

// dst = f(src), evaluated in float (fp16 and fp32 lanes) and rounded once to T: Sqrt and
// Reciprocal are correctly rounded; Exp/Ln use the C library's float functions (within 1 ulp);
// Rsqrt is 1/sqrt evaluated in double, then rounded.
PYASC_UNARY_OP(Exp, std::exp(x), true)
PYASC_UNARY_OP(Ln, std::log(x), true)
PYASC_UNARY_OP(Abs, cpu::detail::VAbs(x), false)
PYASC_UNARY_OP(Sqrt, std::sqrt(x), true)
PYASC_UNARY_OP(Rsqrt, static_cast<decltype(x)>(1.0 / std::sqrt(static_cast<double>(x))), true)
PYASC_UNARY_OP(Reciprocal, decltype(x)(1) / x, true)
PYASC_UNARY_OP(Relu, cpu::detail::VRelu(x), false)
// Sin/Cos (advanced math API, count form): the C library's float functions, rounded to T.
PYASC_UNARY_OP(Sin, std::sin(x), true)
PYASC_UNARY_OP(Cos, std::cos(x), true)
#undef PYASC_UNARY_OP

namespace cpu {
namespace detail {
template <class T> struct Identity { using type = T; };
}  // namespace detail
}  // namespace cpu

#define PYASC_SCALAR_OP(NAME, EXPR)                                                           \
  template <class T>                                                                            \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                       \
                   const typename cpu::detail::Identity<T>::type& scalar, int64_t count) {     \
    static_assert(cpu::detail::kIsVec<T>, #NAME ": unsupported element type");                \
    T* d = cpu::detail::CheckUB(#NAME, "dst", dst, count);                                     \
    const T* a = cpu::detail::CheckUB(#NAME, "src", src, count);                               \
    const auto y = static_cast<typename cpu::detail::Lane<T>::type>(scalar);                   \
    if constexpr (cpu::kMemcheck) cpu::mc::Elementwise(dst, count, src);                       \
    cpu::detail::Map1(d, a, count, [y](auto x) { return EXPR; });                              \
  }

// dst = src op scalar (scalar converted to T first).
PYASC_SCALAR_OP(Adds, x + y)
PYASC_SCALAR_OP(Muls, x * y)
PYASC_SCALAR_OP(Maxs, cpu::detail::VMax(x, decltype(x)(y)))
PYASC_SCALAR_OP(Mins, cpu::detail::VMin(x, decltype(x)(y)))
#undef PYASC_SCALAR_OP

// dst[i] = scalar for i < count.
template <class T>
inline void Duplicate(const LocalTensor<T>& dst, const typename cpu::detail::Identity<T>::type& scalar,
                      int64_t count) {
  T* d = cpu::detail::CheckUB("Duplicate", "dst", dst, count);
  if constexpr (cpu::kMemcheck) cpu::mc::Define(dst.CpuOffset(), static_cast<uint64_t>(count) * sizeof(T));
  const T v = scalar;
  for (int64_t i = 0; i < count; ++i) d[i] = v;
}

// dst[i] = firstValue + i for i < calCount (int16/int32/half/float; computed exactly, then
// converted to T).
template <class T>
inline void CreateVecIndex(const LocalTensor<T>& dst, const typename cpu::detail::Identity<T>::type& firstValue,
                           uint32_t calCount) {
  static_assert(std::is_same_v<T, int16_t> || std::is_same_v<T, int32_t> ||
                    std::is_same_v<T, half> || std::is_same_v<T, float>,
                "CreateVecIndex: unsupported element type");
  const int64_t count = calCount;
  T* d = cpu::detail::CheckUB("CreateVecIndex", "dst", dst, count);
  if constexpr (cpu::kMemcheck) cpu::mc::Define(dst.CpuOffset(), static_cast<uint64_t>(count) * sizeof(T));
  const double first = static_cast<double>(firstValue);
  for (int64_t i = 0; i < count; ++i) d[i] = static_cast<T>(first + static_cast<double>(i));
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

}  // namespace AscendC
// Qualifiers and macros, events and synchronisation, Cast, level-0 vector forms (pyasc_cpu/).
#include "pyasc_cpu/qualifiers.h"
#include "pyasc_cpu/cast.h"
#include "pyasc_cpu/vector_level0.h"
#include "pyasc_cpu/brcb.h"  // Brcb (BrcbRepeatParams)
// Compare, Compares, GetCmpMask/SetCmpMask, Select (pyasc_cpu/compare_select.h).
#include "pyasc_cpu/compare_select.h"

// Reductions (ReduceSum/Max/Min in every form, WholeReduce*, BlockReduce*, PairReduceSum, the
// accessors) and GatherMask (pyasc_cpu/).
#include "pyasc_cpu/reduce.h"
#include "pyasc_cpu/gather_mask.h"

// High-level Matmul API and the MIX (AIC/AIV) model (pyasc_cpu/).
#include "pyasc_cpu/mix.h"
#include "pyasc_cpu/matmul.h"

namespace AscendC {
// ---------------------------------------------------------------------------------------------
// Entry-point support for cpu_entry.cpp
// ---------------------------------------------------------------------------------------------
namespace cpu {
namespace detail {
template <class... A, size_t... I>
inline void Invoke(void (*kernel)(A...), uint8_t** args, std::index_sequence<I...>) {
  kernel(reinterpret_cast<A>(args[I])...);
}
}  // namespace detail

// Run one block of `kernel`: SetBlock, ResetUB, call it with args[0..nargs) (GM pointers, then
// workspace, then tiling). Returns 0 on success; 1 on any exception, whose message LastError()
// then returns.
template <class... A>
inline int RunBlock(void (*kernel)(A...), int64_t block_idx, int64_t block_num, uint8_t** args,
                    int64_t nargs) noexcept {
  try {
    State().last_error.clear();
    State().last_error_kind = 0;
    State().loc = nullptr;
    if (nargs != static_cast<int64_t>(sizeof...(A)))
      Fail("pyasc_run_block: kernel takes ", sizeof...(A), " arguments, got ", nargs);
    SetBlock(block_idx, block_num);
    if (block_idx == 0) dcache::Reset();  // a new launch
    ResetUB();
    ResetCoreState();
#ifdef HAVE_WORKSPACE  // the framework sets the system workspace: the kernel's workspace
    if (nargs >= 2) Core().sys_workspace = args[nargs - 2];  // argument (next to last)
#endif
    detail::Invoke(kernel, args, std::index_sequence_for<A...>{});
    FinishBlock();
    State().pipe = nullptr;
    State().loc = nullptr;
    return 0;
  } catch (const AccessError& e) {
    State().last_error = e.what();
    State().last_error_kind = 1;
  } catch (const Error& e) {
    State().last_error = e.what();
  } catch (const std::exception& e) {
    State().last_error = Cat("C++ exception: ", e.what());
  } catch (...) {
    State().last_error = "unknown C++ exception";
  }
  State().pipe = nullptr;
  State().loc = nullptr;
  return 1;
}

// RunBlock of a kernel whose type was erased (the launch scheduler's view of it).
template <class K>
inline int RunErased(void (*kernel)(), int64_t block_idx, int64_t block_num, uint8_t** args,
                     int64_t nargs) noexcept {
  return RunBlock(reinterpret_cast<K>(kernel), block_idx, block_num, args, nargs);
}

}  // namespace cpu
}  // namespace AscendC

// Cross-core synchronisation: the launch scheduler and SyncAll (pyasc_cpu/).
#include "pyasc_cpu/grid.h"
#include "pyasc_cpu/sync_all.h"

namespace AscendC {
namespace cpu {
// Run every block of one launch of `kernel` (pyasc_cpu/grid.h): 0, or 1 with the failing block
// in *failed and its message in LastError().
template <class... A>
inline int RunGridOf(void (*kernel)(A...), int64_t block_num, uint8_t** args, int64_t nargs,
                     int64_t* failed) noexcept {
  using K = void (*)(A...);
  return grid::RunGrid(&RunErased<K>, reinterpret_cast<void (*)()>(kernel), block_num, args,
                       nargs, failed);
}
}  // namespace cpu
}  // namespace AscendC

// Defines pyasc_run_block, pyasc_last_error and pyasc_last_error_kind (0 other, 1 memory
// access violation) for one kernel (declared before this macro):
//   extern "C" __global__ __aicore__ void my_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR workspace,
//                                                   GM_ADDR tiling);
//   PYASC_CPU_ENTRY(my_kernel)
#define PYASC_CPU_ENTRY(KERNEL)                                                                \
  extern "C" int pyasc_run_block(int64_t block_idx, int64_t block_num, uint8_t** args,        \
                                 int64_t nargs) {                                              \
    return ::AscendC::cpu::RunBlock(KERNEL, block_idx, block_num, args, nargs);                \
  }                                                                                            \
  extern "C" int pyasc_run_grid(int64_t block_num, uint8_t** args, int64_t nargs,              \
                                int64_t* failed) {                                             \
    return ::AscendC::cpu::RunGridOf(KERNEL, block_num, args, nargs, failed);                  \
  }                                                                                            \
  extern "C" const char* pyasc_last_error() { return ::AscendC::cpu::LastError(); }           \
  extern "C" int pyasc_last_error_kind() { return ::AscendC::cpu::LastErrorKind(); }          \
  extern "C" int pyasc_task_ratio() { return ::AscendC::cpu::LastTaskRatio(); }            \
  PYASC_CPU_GM_ENTRIES()

// Per-kernel entry, so several kernels can share one library (batch builds):
// pyasc_run_block_<KERNEL>; pyasc_last_error is shared and defined by PYASC_CPU_LAST_ERROR.
#define PYASC_CPU_ENTRY_NAMED(KERNEL)                                                          \
  extern "C" int pyasc_run_block_##KERNEL(int64_t block_idx, int64_t block_num,               \
                                          uint8_t** args, int64_t nargs) {                     \
    return ::AscendC::cpu::RunBlock(KERNEL, block_idx, block_num, args, nargs);                \
  }                                                                                            \
  extern "C" int pyasc_run_grid_##KERNEL(int64_t block_num, uint8_t** args, int64_t nargs,     \
                                         int64_t* failed) {                                    \
    return ::AscendC::cpu::RunGridOf(KERNEL, block_num, args, nargs, failed);                  \
  }
// The same entry, pyasc_run_block_<NAME>, running TARGET (a checked wrapper of kernel NAME).
#define PYASC_CPU_ENTRY_CHECKED(NAME, TARGET)                                                  \
  extern "C" int pyasc_run_block_##NAME(int64_t block_idx, int64_t block_num,                 \
                                        uint8_t** args, int64_t nargs) {                       \
    return ::AscendC::cpu::RunBlock(TARGET, block_idx, block_num, args, nargs);                \
  }                                                                                            \
  extern "C" int pyasc_run_grid_##NAME(int64_t block_num, uint8_t** args, int64_t nargs,       \
                                       int64_t* failed) {                                      \
    return ::AscendC::cpu::RunGridOf(TARGET, block_num, args, nargs, failed);                  \
  }
#define PYASC_CPU_LAST_ERROR()                                                                 \
  extern "C" const char* pyasc_last_error() { return ::AscendC::cpu::LastError(); }           \
  extern "C" int pyasc_last_error_kind() { return ::AscendC::cpu::LastErrorKind(); }          \
  extern "C" int pyasc_task_ratio() { return ::AscendC::cpu::LastTaskRatio(); }            \
  PYASC_CPU_GM_ENTRIES()

// A checked CPU entry (cpu_entry.cpp, emitted per kernel) refuses a launch the library was not
// compiled for: the block count or a tiling field differs from op.json's signature.
#define PYASC_LAUNCH_REFUSED(...) ::AscendC::cpu::Fail(__VA_ARGS__)

#endif  // PYASC_KERNEL_OPERATOR_H
