// pyasc_cpu/sync_all.h -- SyncAll, the cross-core barrier of Ascend C, on the launch scheduler
// of pyasc_cpu/grid.h (included by kernel_operator.h after it).
//
// Sources (public Ascend C API reference, "SyncAll"):
// * Soft sync: template <bool isAIVOnly = true> void SyncAll(const GlobalTensor<int32_t>&
//   gmWorkspace, const LocalTensor<int32_t>& ubWorkspace, const int32_t usedCores = 0).
//   gmWorkspace is shared by all cores (one state flag per core) and must hold at least
//   cores * 32 bytes, zero-initialised (on the host, or by every core for the whole buffer);
//   ubWorkspace is the core's own (VECIN/VECCALC/VECOUT), at least cores * 32 bytes;
//   usedCores: how many cores synchronise, at most the launch's blockDim, 0 = all cores;
//   isAIVOnly = false is not supported by the soft form.
// * Hard sync: template <bool isAIVOnly = true> void SyncAll(). isAIVOnly = false synchronises
//   the Vector and the Cube cores of a fused kernel; the tiling's workspace size must not be 0.
// * The launch's blockDim must not exceed the AI cores that run it, else the framework
//   schedules several rounds and the kernel hangs.
//
// CPU model: the calling block waits until `usedCores` blocks (the first ones; all vector
// blocks when 0 or in the hard form) arrived, running the others meanwhile (grid.h). Checks,
// each a cpu::Error naming the block: the launch runs block by block (pyasc_run_block, not
// pyasc_run_grid) with more than one block to wait for; usedCores negative or above the
// launch's vector blocks; a block past usedCores calling it; blocks that arrive at one barrier
// with different counts or forms; a barrier that can never complete (grid.h); the hard form
// without a GM workspace; more vector blocks than PYASC_AIV_CORES (when that is given). The soft
// form checks both workspace sizes; it stores the number of barriers the core has passed into
// int32 element 8 * blockIdx of gmWorkspace (its 32-byte flag) and into ubWorkspace[0..8), and
// refuses a flag that is not the previous count (a workspace that was not zeroed, or that the
// kernel wrote). Memory-check builds: SyncAll orders every pipe of the core (PIPE_ALL before and
// after) and defines the 32 UB bytes it writes.
#ifndef PYASC_CPU_SYNC_ALL_H
#define PYASC_CPU_SYNC_ALL_H

#ifndef PYASC_AIV_CORES
#define PYASC_AIV_CORES 0  // unknown: not checked
#endif

namespace AscendC {
namespace cpu {
namespace sync {

constexpr int64_t kFlagInts = kBlock / sizeof(int32_t);  // one 32-byte flag per core

// Barriers this block has passed (reset at every block start with the core state).
inline int64_t& Passed() { return Core().sync_passed; }

// The vector blocks of the running launch (outside pyasc_run_grid: this block's launch).
inline int64_t LaunchBlocks() {
  const grid::Launch* L = grid::Current();
  if (L != nullptr && L->total > 0) return L->total;
  return State().num * AivRatio(DeclaredKernelType());
}

// Blocks a SyncAll with `used_cores` waits for; checks the count against the launch.
inline int64_t Expected(const char* api, int64_t used_cores) {
  const int64_t total = LaunchBlocks();
  if (used_cores < 0) Fail(api, ": usedCores ", used_cores, " is negative (0 means all cores)");
  if (used_cores > total)
    Fail(api, ": usedCores ", used_cores, " exceeds the ", total,
         " vector blocks of the launch (documented: at most the launch's blockDim)");
  const int64_t want = used_cores == 0 ? total : used_cores;
  if (State().idx >= want)
    Fail(api, ": block ", State().idx, " is not one of the ", want,
         " blocks this barrier synchronises (usedCores = ", used_cores,
         "): only blocks 0..", want - 1, " may call it");
  if (PYASC_AIV_CORES > 0 && total > PYASC_AIV_CORES)
    Fail(api, ": the launch runs ", total, " vector blocks on ", PYASC_AIV_CORES,
         " vector cores: blocks beyond the cores run in a later round and a cross-core "
         "barrier hangs (documented: blockDim must not exceed the cores)");
  return want;
}

// Wait until `want` blocks arrived (see the file comment).
inline void Arrive(const char* api, int64_t want, bool soft) {
  grid::Launch* L = grid::Current();
  const int64_t me = State().idx;
  if (L == nullptr) {
    if (want == 1) return;  // a barrier of one block
    Fail(api, ": block ", me, " runs alone (pyasc_run_block): its barrier waits for ", want,
         " blocks, which run one after another here and cannot wait for each other; launch "
         "the kernel with pyasc_run_grid (CpuKernel.run does)");
  }
  std::unique_lock<std::mutex> lk(L->m);
  grid::LearnTotal(*L);
  if (L->expected != 0 && (L->expected != want || L->expected_soft != soft))
    Fail(api, ": block ", me, " arrives at a barrier of ", want, " blocks (",
         soft ? "soft" : "hard", " sync) while blocks ", grid::BlockList(L->waiting),
         " wait at one of ", L->expected, " (", L->expected_soft ? "soft" : "hard",
         " sync): every block must call the same SyncAll");
  if (L->expected == 0) {
    L->expected = want;
    L->expected_soft = soft;
    L->wait_loc = State().loc;
  }
  L->waiting.push_back(me);
  if (static_cast<int64_t>(L->waiting.size()) == want) {
    for (int64_t w : L->waiting)
      if (w != me) L->ready.push_back(w);
    L->waiting.clear();
    L->expected = 0;
    ++L->rounds;
    return;
  }
  grid::Pass(*L, false);
  L->cv.wait(lk, [&] { return L->baton == me || L->abort; });
  if (L->baton != me)
    Fail(api, ": block ", me, " was waiting at the barrier when the launch ended (",
         L->error, ")");
}

}  // namespace sync
}  // namespace cpu

// Hard sync: every vector block of the launch (isAIVOnly = false: the Cube side too, which the
// CPU computes inside the vector blocks).
template <bool isAIVOnly = true>
inline void SyncAll() {
  const char* api = isAIVOnly ? "SyncAll<true>()" : "SyncAll<false>()";
  cpu::race::OnBarrierAll();
  const int64_t want = cpu::sync::Expected(api, 0);
  const cpu::grid::Launch* L = cpu::grid::Current();
  if (L != nullptr && L->workspace == nullptr && want > 1)
    cpu::Fail(api, ": hard sync in a launch without a GM workspace: the tiling's workspace ",
              "size must not be 0 (documented for the hard SyncAll)");
  cpu::sync::Arrive(api, want, false);
  ++cpu::sync::Passed();
  cpu::race::OnBarrierAll();
}

// Soft sync through a GM workspace (one 32-byte flag per core) and a UB workspace.
template <bool isAIVOnly = true>
inline void SyncAll(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace,
                    const int32_t usedCores = 0) {
  static_assert(isAIVOnly, "SyncAll: the soft sync form does not support isAIVOnly = false");
  const char* api = "SyncAll(gmWorkspace, ubWorkspace)";
  cpu::race::OnBarrierAll();
  const int64_t want = cpu::sync::Expected(api, usedCores);
  const int64_t ints = want * cpu::sync::kFlagInts;
  int32_t* gm = cpu::detail::CheckGM(api, "gmWorkspace", gmWorkspace, static_cast<uint64_t>(ints));
  int32_t* ub = cpu::detail::CheckUB(api, "dstUbWorkspace", ubWorkspace, ints);
  if (gmWorkspace.CpuSize() != GlobalTensor<int32_t>::kUnknown &&
      gmWorkspace.CpuSize() < static_cast<uint64_t>(ints))
    cpu::FailAccess(api, ": gmWorkspace holds ", gmWorkspace.CpuSize() * 4, " bytes, ", want,
                    " cores need at least ", want * cpu::kBlock, " (cores * 32 bytes)");
  const int64_t me = cpu::State().idx;
  int32_t* flag = gm + me * cpu::sync::kFlagInts;
  const int64_t passed = cpu::sync::Passed();
  if (*flag != static_cast<int32_t>(passed))
    cpu::Fail(api, ": block ", me, "'s flag in gmWorkspace (int32 element ",
              me * cpu::sync::kFlagInts, ") holds ", *flag, ", expected ", passed,
              " (the barriers it passed): gmWorkspace must be zero-initialised before the "
              "first SyncAll and written by SyncAll only");
  *flag = static_cast<int32_t>(passed + 1);
  for (int64_t k = 0; k < cpu::sync::kFlagInts; ++k) ub[k] = static_cast<int32_t>(passed + 1);
  if constexpr (cpu::kMemcheck) cpu::mc::Define(ubWorkspace.CpuOffset(), cpu::kBlock);
  cpu::sync::Arrive(api, want, true);
  ++cpu::sync::Passed();
  cpu::race::OnBarrierAll();
}

}  // namespace AscendC

using AscendC::SyncAll;

#endif  // PYASC_CPU_SYNC_ALL_H
