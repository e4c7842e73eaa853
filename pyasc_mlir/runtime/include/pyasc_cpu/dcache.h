// pyasc_cpu/dcache.h -- the scalar data cache (DCache) of each AI core and
// DataCacheCleanAndInvalid. Included by kernel_operator.h after GlobalTensor.
//
// Sources (public Ascend C API reference, "DataCacheCleanAndInvalid" and
// "GlobalTensor::SetValue"): inside an AI core both the scalar unit and the DMA units access
// Global Memory. DMA (DataCopy, DataCopyPad) has no cache-coherence problem; the scalar unit
// (GlobalTensor::GetValue/SetValue) goes through the core's own Data Cache, written back to GM
// by 64-byte cache lines. So: data another core may have changed must be read after a
// DataCacheCleanAndInvalid; data written with SetValue that must be seen at once (by another
// core, or by DMA) must be written out with it. Forms:
//   template <typename T, CacheLine entireType, DcciDst dcciDst>
//   void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst);        (Atlas A2/A3)
//   template <typename T, CacheLine entireType>
//   void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst);        (GM coherence only)
//   template <typename T, CacheLine entireType, DcciDst dcciDst>
//   void DataCacheCleanAndInvalid(const LocalTensor<T>& dst);         (reserved)
// CacheLine::SINGLE_CACHE_LINE: the one 64-byte line holding dst's address;
// ENTIRE_DATA_CACHE: the whole data cache (dst ignored; documented as slow). DcciDst:
// CACHELINE_ALL acts as CACHELINE_OUT (coherence with GM); CACHELINE_UB and CACHELINE_ATOMIC
// are reserved, not supported.
//
// CPU model: the reserved forms and values are refused (cpu::Error). Memory-check builds
// (-DPYASC_MEMCHECK=1) track, per launch, every GM line a scalar access touched: which block
// holds it dirty (SetValue not yet written out) and how often GM changed under it (a DMA write,
// or a write-out). Each block remembers the lines in its cache and the GM version it saw.
// Reported (cpu::Error naming both blocks, the byte address and the API to call):
// * GetValue by block c of a line block b != c holds dirty (b's value may not have left b's cache);
// * GetValue by block c of a line c cached before GM changed under it (a stale read: invalidate
//   it first);
// * a DMA read (GM->UB DataCopy/DataCopyPad) of a line some block holds dirty (DMA reads GM);
// * SetValue by block c into a line block b != c holds dirty (the write-backs of one line by two
//   cores overwrite each other: keep cores' scalar writes a cache line apart).
// Not modelled: whether the end of a kernel writes the caches back (the host sees every write),
// a DMA write into a line a core holds dirty, cache capacity (no line is evicted).
#ifndef PYASC_CPU_DCACHE_H
#define PYASC_CPU_DCACHE_H

#include <cstdio>
#include <unordered_map>

namespace AscendC {

enum class CacheLine { SINGLE_CACHE_LINE, ENTIRE_DATA_CACHE };
enum class DcciDst { CACHELINE_ALL, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

namespace cpu {
namespace dcache {

constexpr uintptr_t kLineBytes = 64;  // documented DCache line (GlobalTensor::SetValue)

struct Line {
  int64_t dirty_by = -1;  // block holding unwritten SetValue data (-1: none)
  uint64_t version = 0;   // GM changes (DMA writes, write-outs) of this line
};

// Per launch: every line a scalar access or a DMA write touched, and per block its cache.
struct Launch {
  std::unordered_map<uintptr_t, Line> lines;
  std::unordered_map<int64_t, std::unordered_map<uintptr_t, uint64_t>> cached;  // block -> line
};

// Shared by the blocks of one launch (only one block runs at a time: pyasc_cpu/grid.h).
__attribute__((visibility("hidden"))) inline Launch& Current() {
  static Launch l;
  return l;
}

inline void Reset() {
  Current().lines.clear();
  Current().cached.clear();
}

inline uintptr_t LineOf(const void* p) {
  return reinterpret_cast<uintptr_t>(p) & ~(kLineBytes - 1);
}

inline std::string Hex(uintptr_t a) {
  char buf[24];  // "0x" and 16 hex digits
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
  return buf;
}

constexpr const char* kFix =
    "DataCacheCleanAndInvalid<T, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>";

inline void OnScalar(const char* api, const void* p, bool write) {
  if constexpr (!kMemcheck) return;
  Launch& L = Current();
  const int64_t me = State().idx;
  const uintptr_t a = LineOf(p);
  Line& line = L.lines[a];
  auto& mine = L.cached[me];
  if (line.dirty_by >= 0 && line.dirty_by != me) {
    if (write)
      Fail(api, ": block ", me, " writes GM cache line ", Hex(a), " that block ", line.dirty_by,
           " holds unwritten in its data cache: two cores' write-backs of one 64-byte line "
           "overwrite each other (keep the GM that different cores write with SetValue a cache "
           "line apart, or write it out with ", kFix, " before the other core writes)");
    Fail(api, ": block ", me, " reads GM cache line ", Hex(a), " that block ", line.dirty_by,
         " wrote with SetValue and did not write out: on the NPU the value may still be in block ",
         line.dirty_by, "'s data cache (the writer calls ", kFix, " after its SetValue)");
  }
  auto seen = mine.find(a);
  if (!write && seen != mine.end() && seen->second != line.version && line.dirty_by != me)
    Fail(api, ": block ", me, " reads GM cache line ", Hex(a),
         " from its data cache, but GM changed since it cached the line (another core or a DMA "
         "wrote it): the value may be stale (call ", kFix, " on it before reading data other "
         "cores change)");
  mine[a] = line.version;
  if (write) line.dirty_by = me;
}

// A DMA access of GM bytes [p, p + bytes).
inline void OnDma(const char* api, const void* p, uint64_t bytes, bool write) {
  if constexpr (!kMemcheck) return;
  if (bytes == 0) return;
  Launch& L = Current();
  const uintptr_t first = LineOf(p);
  const uintptr_t last = LineOf(static_cast<const uint8_t*>(p) + bytes - 1);
  for (uintptr_t a = first; a <= last; a += kLineBytes) {
    auto it = L.lines.find(a);
    if (it == L.lines.end()) {
      if (write) L.lines[a].version = 1;
      continue;
    }
    if (!write && it->second.dirty_by >= 0)
      Fail(api, ": block ", State().idx, " copies GM cache line ", Hex(a), " that block ",
           it->second.dirty_by, " wrote with SetValue and did not write out: DMA reads GM, not "
           "the data cache (call ", kFix, " after the SetValue)");
    if (write) ++it->second.version;
  }
}

// Write out and invalidate line `a` of the running block's cache.
inline void CleanLine(uintptr_t a) {
  Launch& L = Current();
  const int64_t me = State().idx;
  auto it = L.lines.find(a);
  if (it != L.lines.end() && it->second.dirty_by == me) {
    it->second.dirty_by = -1;
    ++it->second.version;
  }
  L.cached[me].erase(a);
}

inline void CleanAll() {
  Launch& L = Current();
  const int64_t me = State().idx;
  for (auto& [a, line] : L.lines)
    if (line.dirty_by == me) {
      line.dirty_by = -1;
      ++line.version;
    }
  L.cached[me].clear();
}

template <class T>
inline void Dcci(const char* api, CacheLine entire, const GlobalTensor<T>& dst) {
  if (entire == CacheLine::SINGLE_CACHE_LINE && dst.CpuPtr() == nullptr)
    Fail(api, ": the GlobalTensor has no buffer (SINGLE_CACHE_LINE needs the line's address)");
  if constexpr (!kMemcheck) return;
  if (entire == CacheLine::ENTIRE_DATA_CACHE)
    CleanAll();
  else
    CleanLine(LineOf(dst.CpuPtr()));
}

}  // namespace dcache
}  // namespace cpu

template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
  constexpr const char* api = "DataCacheCleanAndInvalid(GlobalTensor)";
  if constexpr (dcciDst == DcciDst::CACHELINE_UB || dcciDst == DcciDst::CACHELINE_ATOMIC)
    cpu::Fail(api, ": DcciDst::",
              dcciDst == DcciDst::CACHELINE_UB ? "CACHELINE_UB" : "CACHELINE_ATOMIC",
              " is a reserved value, not supported (documented): use DcciDst::CACHELINE_OUT");
  cpu::dcache::Dcci(api, entireType, dst);
}

template <typename T, CacheLine entireType>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
  cpu::dcache::Dcci("DataCacheCleanAndInvalid(GlobalTensor)", entireType, dst);
}

template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const LocalTensor<T>&) {
  cpu::Fail("DataCacheCleanAndInvalid(LocalTensor): a reserved form, not supported (documented); "
            "the data cache holds GM lines: pass a GlobalTensor");
}

}  // namespace AscendC

#endif  // PYASC_CPU_DCACHE_H
