// pyasc_cpu/race.h -- the pipe-synchronisation race detector of the CPU runtime (memory-check
// builds only: -DPYASC_MEMCHECK=1; -DPYASC_RACE_CHECK=0 switches it off there). Included by
// kernel_operator.h once the block state and cpu::Fail exist. docs/CPU_RUNTIME.md, "Race
// detector", is the contract.
//
// Model (sources: the Ascend C programming guide, "更底层的编程方式" / lower-level programming
// (atlas_ascendc_10_00019): EnQue/DeQue/AllocTensor/FreeTensor wrap MTE2_V, V_MTE3, V_MTE2 and
// MTE3_V; the SetFlag/WaitFlag and PipeBarrier pages of the API reference; the best-practice
// page "Reusing VECIN and VECOUT for Movement Operators": a UB->UB DataCopy is a vector
// instruction):
// * A core runs its instructions on independent pipes: MTE2 (GM->UB copies), V (vector ops and
//   UB->UB copies), MTE3 (UB->GM copies), S (scalar GetValue/SetValue), and M/MTE1/FIX (cube;
//   they never touch UB here). Each pipe executes its own instructions in program order.
// * Cross-pipe order exists only through synchronisation, tracked with one vector clock per
//   pipe: SetFlag<X_Y>(id) takes X's clock, WaitFlag<X_Y>(id) merges it into Y's;
//   PipeBarrier<PIPE_ALL> merges every clock into every pipe; the TQue calls are their
//   documented implicit flags (VECIN: EnQue = SetFlag<MTE2_V>, DeQue = WaitFlag<MTE2_V>,
//   FreeTensor = SetFlag<V_MTE2>, the next AllocTensor of that buffer = WaitFlag<V_MTE2>;
//   VECOUT: V_MTE3 and MTE3_V likewise).
// * A scalar read (GetValue) is complete when it returns (the scalar unit waits for the value
//   before it issues the next instruction): it needs an X_S flag after a write by X, but later
//   writes need no flag after it. A scalar write (SetValue) needs S_X before pipe X reads it.
// * The synchronous Matmul API (GetTensorC) waits for every earlier access and completes before
//   it returns.
// * Every UB byte remembers its last writer and its last reader per pipe (an access record:
//   pipe, clock, API, operand, tensor offset, source location). An access of pipe Q conflicts
//   with an earlier access of pipe P != Q (at least one a write) unless Q's clock covers it:
//   RAW, WAR and WAW are reported as AccessError naming both APIs, pipes, the UB byte, the block,
//   both source locations and the flag that would order them.
// Not modelled: ordering inside one pipe (a missing PipeBarrier<PIPE_V> between dependent
// vector instructions is not reported), GM hazards (MTE3 then MTE2 on one GM address), the
// cube pipes' L1/L0 buffers, blocks racing on GM.
#ifndef PYASC_CPU_RACE_H
#define PYASC_CPU_RACE_H

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#ifndef PYASC_RACE_CHECK
#define PYASC_RACE_CHECK PYASC_MEMCHECK
#endif

namespace AscendC {
namespace cpu {
namespace race {

constexpr bool kOn = PYASC_MEMCHECK && PYASC_RACE_CHECK;

// Pipes. kSync: the synchronous high-level API (ordered with everything).
enum Pipe : uint8_t { kS = 0, kV, kM, kMte1, kMte2, kMte3, kFix, kNumPipes, kSync = kNumPipes };

inline const char* PipeName(uint8_t p) {
  static const char* const names[] = {"PIPE_S",    "PIPE_V",    "PIPE_M",   "PIPE_MTE1",
                                      "PIPE_MTE2", "PIPE_MTE3", "PIPE_FIX", "synchronous"};
  return names[p <= kSync ? p : kSync];
}
// The HardEvent spelling of a pipe ("MTE2", "V", ...).
inline const char* EventName(uint8_t p) {
  static const char* const names[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX", "?"};
  return names[p <= kSync ? p : kSync];
}

// The (producer, consumer) pipes of a HardEvent.
inline std::pair<Pipe, Pipe> EventPipes(HardEvent e) {
  switch (e) {
    case HardEvent::MTE2_MTE1: return {kMte2, kMte1};
    case HardEvent::MTE1_MTE2: return {kMte1, kMte2};
    case HardEvent::MTE1_M: return {kMte1, kM};
    case HardEvent::M_MTE1: return {kM, kMte1};
    case HardEvent::MTE2_V: return {kMte2, kV};
    case HardEvent::V_MTE2: return {kV, kMte2};
    case HardEvent::MTE3_V: return {kMte3, kV};
    case HardEvent::V_MTE3: return {kV, kMte3};
    case HardEvent::M_V: return {kM, kV};
    case HardEvent::V_M: return {kV, kM};
    case HardEvent::V_V: return {kV, kV};
    case HardEvent::MTE3_MTE1: return {kMte3, kMte1};
    case HardEvent::MTE1_MTE3: return {kMte1, kMte3};
    case HardEvent::MTE1_V: return {kMte1, kV};
    case HardEvent::MTE2_M: return {kMte2, kM};
    case HardEvent::M_MTE2: return {kM, kMte2};
    case HardEvent::V_MTE1: return {kV, kMte1};
    case HardEvent::M_FIX: return {kM, kFix};
    case HardEvent::FIX_M: return {kFix, kM};
    case HardEvent::MTE3_MTE2: return {kMte3, kMte2};
    case HardEvent::MTE2_MTE3: return {kMte2, kMte3};
    case HardEvent::S_V: return {kS, kV};
    case HardEvent::V_S: return {kV, kS};
    case HardEvent::S_MTE2: return {kS, kMte2};
    case HardEvent::MTE2_S: return {kMte2, kS};
    case HardEvent::S_MTE3: return {kS, kMte3};
    case HardEvent::MTE3_S: return {kMte3, kS};
    case HardEvent::MTE2_FIX: return {kMte2, kFix};
    case HardEvent::FIX_MTE2: return {kFix, kMte2};
    case HardEvent::FIX_S: return {kFix, kS};
    case HardEvent::M_S: return {kM, kS};
    case HardEvent::FIX_MTE3: return {kFix, kMte3};
  }
  return {kS, kS};
}

// The pipe of a UB access by API name (the names the header's checks pass): copies from GM are
// MTE2, copies to GM MTE3, the Matmul API synchronous, everything else the vector unit.
inline Pipe PipeOfApi(const char* api) {
  if (std::strncmp(api, "Matmul", 6) == 0) return kSync;
  if (std::strstr(api, "GM->") != nullptr) return kMte2;
  if (std::strstr(api, "->GM") != nullptr) return kMte3;
  return kV;
}

// A write operand is named "dst..." (dst, dstMask, dstLocal), "work" or "C" (Matmul's C).
inline bool IsWriteRole(const char* role) {
  return std::strncmp(role, "dst", 3) == 0 || std::strcmp(role, "work") == 0 ||
         std::strcmp(role, "C") == 0;
}

using Clock = std::array<uint64_t, kNumPipes>;  // one entry per pipe

struct Access {
  uint8_t pipe;
  bool write;
  uint64_t epoch;  // the pipe's own clock at the access
  const char* api;
  const char* role;
  const char* loc;
  uint64_t tensor_off;
};

// Per-block detector state (reset with the UB arena).
struct RaceState {
  bool ready = false;
  Clock clock[kNumPipes];         // clock[q][p]: the last epoch of pipe p that q is ordered after
  std::vector<Access> recs;       // this block's access records: id base + 1 + index
  uint32_t base = 0, next = 0;    // ids <= base are earlier blocks' (none); next: the last id
  std::vector<uint32_t> writer;   // per UB byte: last write
  std::vector<uint32_t> reader_v, reader_mte3;  // per UB byte: last read by V / MTE3
  std::map<std::pair<int, int32_t>, std::deque<Clock>> flags;  // (HardEvent, id) -> SetFlags
  std::map<uint64_t, Clock> enqued, freed;  // TQue buffer (UB offset) -> implicit flag
};

__attribute__((visibility("hidden"))) inline RaceState& R() {
  static thread_local RaceState s;
  return s;
}

// Forget everything (block start). The per-byte ids are not cleared: ids up to `base` (the
// earlier blocks') read as "no access"; they are zeroed only when the ids would wrap.
inline void Reset() {
  if constexpr (!kOn) return;
  RaceState& r = R();
  if (!r.ready || r.next > 0xF0000000u) {
    r.writer.assign(kUbBytes, 0);
    r.reader_v.assign(kUbBytes, 0);
    r.reader_mte3.assign(kUbBytes, 0);
    r.ready = true;
    r.next = 0;
  }
  r.base = r.next;
  for (auto& c : r.clock) c.fill(0);
  r.recs.clear();
  r.flags.clear();
  r.enqued.clear();
  r.freed.clear();
}

inline void Join(Clock& into, const Clock& from) {
  for (size_t p = 0; p < into.size(); ++p)
    if (from[p] > into[p]) into[p] = from[p];
}

// Is access `a` ordered before the next instruction of pipe q?
inline bool Ordered(const Access& a, uint8_t q) {
  return a.pipe == q || a.pipe == kSync || q == kSync || R().clock[q][a.pipe] >= a.epoch;
}

inline std::string Where(const Access& a) {
  return a.loc != nullptr && *a.loc != '\0' ? Cat(" at ", a.loc) : std::string(" (no location)");
}

// The synchronisation that would order `first` before pipe `second`.
inline std::string Needed(uint8_t first, uint8_t second) {
  std::string s = Cat("SetFlag/WaitFlag<HardEvent::", EventName(first), "_", EventName(second),
                      ">");
  if (first == kMte2 && second == kV) s += " (or EnQue/DeQue of a TQue<TPosition::VECIN>)";
  if (first == kV && second == kMte3) s += " (or EnQue/DeQue of a TQue<TPosition::VECOUT>)";
  if (first == kV && second == kMte2) s += " (or FreeTensor/AllocTensor of a TQue<TPosition::VECIN>)";
  if (first == kMte3 && second == kV) s += " (or FreeTensor/AllocTensor of a TQue<TPosition::VECOUT>)";
  return s + " or PipeBarrier<PIPE_ALL>()";
}

[[noreturn]] inline void Report(const char* kind, const Access& prev, const Access& cur,
                                uint64_t byte) {
  const char* what = std::strcmp(kind, "RAW") == 0   ? "read after write"
                     : std::strcmp(kind, "WAR") == 0 ? "write after read"
                                                     : "write after write";
  FailAccess(cur.api, ": data race (", kind, ", ", what, ") on UB byte ", byte,
             " (offset ", byte - cur.tensor_off, " of the ", cur.role, " LocalTensor at UB offset ",
             cur.tensor_off, ") in block ", State().idx, ": ", cur.api, " ",
             cur.write ? "writes" : "reads", " it on ", PipeName(cur.pipe), ", but ", prev.api,
             " ", prev.write ? "wrote" : "read", " it (", prev.role,
             " LocalTensor at UB offset ", prev.tensor_off, ") on ", PipeName(prev.pipe),
             Where(prev), " with no synchronisation in between; hint: add ",
             Needed(prev.pipe, cur.pipe), " between that call and this call");
}

// Record the access of UB bytes [off, off + n) by `api` (operand `role`, tensor at tensor_off)
// and report a conflict with an unordered earlier access.
inline void OnAccess(const char* api, const char* role, uint64_t tensor_off, uint64_t off,
                     uint64_t n, bool write, uint8_t pipe) {
  if constexpr (!kOn) return;
  if (n == 0) return;
  RaceState& r = R();
  if (!r.ready) Reset();
  if (off + n > kUbBytes) return;  // the bounds checks report this
  uint64_t epoch = 0;
  if (pipe < kNumPipes) epoch = ++r.clock[pipe][pipe];
  const Access cur{pipe, write, epoch, api, role, State().loc, tensor_off};
  const uint32_t base = r.base;
  uint32_t last = base;
  const uint32_t* w = r.writer.data();
  if (pipe != kSync) {
    for (uint64_t b = off; b < off + n; ++b) {  // RAW (reads) / WAW (writes)
      if (w[b] <= base || w[b] == last) continue;
      last = w[b];
      const Access& prev = r.recs[last - base - 1];
      if (!Ordered(prev, pipe)) Report(write ? "WAW" : "RAW", prev, cur, b);
    }
    if (write) {  // WAR: readers of another pipe
      for (const std::vector<uint32_t>* rd : {&r.reader_v, &r.reader_mte3}) {
        const uint32_t* p = rd->data();
        last = base;
        for (uint64_t b = off; b < off + n; ++b) {
          if (p[b] <= base || p[b] == last) continue;
          last = p[b];
          const Access& prev = r.recs[last - base - 1];
          if (!Ordered(prev, pipe)) Report("WAR", prev, cur, b);
        }
      }
    }
  }
  if (pipe == kSync) {  // it waited for every earlier access: later ones need not
    std::fill(r.reader_v.begin() + off, r.reader_v.begin() + off + n, 0u);
    std::fill(r.reader_mte3.begin() + off, r.reader_mte3.begin() + off + n, 0u);
    if (!write) return;
  }
  // A scalar read is complete at once: nothing to remember. Other pipes record the access.
  if (!write && pipe == kS) return;
  if (!write && pipe != kV && pipe != kMte3) return;
  r.recs.push_back(cur);
  const uint32_t id = ++r.next;
  uint32_t* dst = write ? r.writer.data() : (pipe == kV ? r.reader_v.data() : r.reader_mte3.data());
  std::fill(dst + off, dst + off + n, id);
}

// The hook of the header's UB operand checks: `count` bytes from the tensor start.
inline void OnOperand(const char* api, const char* role, uint64_t tensor_off, uint64_t bytes) {
  if constexpr (!kOn) return;
  OnAccess(api, role, tensor_off, tensor_off, bytes, IsWriteRole(role), PipeOfApi(api));
}

// Scalar access of one element (LocalTensor::GetValue / SetValue).
inline void OnScalar(const char* api, uint64_t tensor_off, uint64_t off, uint64_t n, bool write) {
  if constexpr (!kOn) return;
  OnAccess(api, write ? "dst" : "src", tensor_off, off, n, write, kS);
}

// SetFlag<X_Y>(id) / WaitFlag<X_Y>(id).
inline void OnSetFlag(HardEvent e, int32_t id) {
  if constexpr (!kOn) return;
  if (!R().ready) Reset();
  R().flags[{static_cast<int>(e), id}].push_back(R().clock[EventPipes(e).first]);
}
inline void OnWaitFlag(HardEvent e, int32_t id) {
  if constexpr (!kOn) return;
  if (!R().ready) Reset();
  const auto pipes = EventPipes(e);
  auto& q = R().flags[{static_cast<int>(e), id}];
  if (q.empty())
    Fail("WaitFlag<HardEvent::", EventName(pipes.first), "_", EventName(pipes.second), ">(", id,
         "): no SetFlag<HardEvent::", EventName(pipes.first), "_", EventName(pipes.second), ">(",
         id, ") is pending in block ", State().idx,
         ": the pipe would wait forever on the hardware; hint: SetFlag before WaitFlag");
  Join(R().clock[pipes.second], q.front());
  q.pop_front();
}

// PipeBarrier<PIPE_ALL>: every pipe waits for every other. (A barrier of one pipe orders that
// pipe with itself, which the model already assumes.)
inline void OnBarrierAll() {
  if constexpr (!kOn) return;
  RaceState& r = R();
  if (!r.ready) Reset();
  Clock all{};
  for (const auto& c : r.clock) Join(all, c);
  for (auto& c : r.clock) c = all;
}

// The implicit flags of a TQue at position `pos` (VECIN: MTE2 -> V, VECOUT: V -> MTE3).
inline bool QueuePipes(TPosition pos, Pipe& producer, Pipe& consumer) {
  if (pos == TPosition::VECIN) {
    producer = kMte2;
    consumer = kV;
    return true;
  }
  if (pos == TPosition::VECOUT) {
    producer = kV;
    consumer = kMte3;
    return true;
  }
  return false;
}

// EnQue: SetFlag<producer_consumer>; DeQue: WaitFlag on the consumer; FreeTensor:
// SetFlag<consumer_producer>; AllocTensor: WaitFlag on the producer (when the buffer was freed).
inline void OnQueue(TPosition pos, uint64_t buffer_off, int event) {
  if constexpr (!kOn) return;
  Pipe prod, cons;
  if (!QueuePipes(pos, prod, cons)) return;
  RaceState& r = R();
  if (!r.ready) Reset();
  switch (event) {
    case 0: r.enqued[buffer_off] = r.clock[prod]; break;  // EnQue
    case 1: {                                              // DeQue
      auto it = r.enqued.find(buffer_off);
      if (it != r.enqued.end()) {
        Join(r.clock[cons], it->second);
        r.enqued.erase(it);
      }
      break;
    }
    case 2: r.freed[buffer_off] = r.clock[cons]; break;  // FreeTensor
    default: {                                           // AllocTensor
      auto it = r.freed.find(buffer_off);
      if (it != r.freed.end()) {
        Join(r.clock[prod], it->second);
        r.freed.erase(it);
      }
    }
  }
}
constexpr int kEnQue = 0, kDeQue = 1, kFree = 2, kAlloc = 3;

}  // namespace race
}  // namespace cpu
}  // namespace AscendC

#endif  // PYASC_CPU_RACE_H
