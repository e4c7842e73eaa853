// pyasc_cpu/grid.h -- the launch scheduler of the clean-room CPU runtime: the blocks of one
// launch run as cooperating threads, one at a time, so that blocks can wait for each other
// (SyncAll, pyasc_cpu/sync_all.h). Included by kernel_operator.h after cpu::RunBlock.
//
// Model (docs/CPU_RUNTIME.md, "Cross-core synchronisation"):
// * pyasc_run_grid runs every block of a launch (NumBlocks, or 2 * NumBlocks vector blocks under
//   KERNEL_TYPE_MIX_AIC_1_2). Exactly one block runs at any time: it holds the baton. Blocks
//   start in index order on the calling thread; a block runs until it returns or waits at a
//   barrier. Only then does the baton pass: to a block a barrier released (release order), else
//   to the next block not started yet (on a new thread when the current one is waiting, on the
//   same thread when it returned). The schedule is deterministic; all per-block state (UB,
//   cpu::State(), cpu::Core(), the race detector) is thread_local, so every block has its own.
// * A kernel that never waits runs exactly as through pyasc_run_block, block after block, on
//   the calling thread.
// * A barrier no other block can complete (every other block returned or waits, and none is
//   left to start) is an error naming the waiting and the returned blocks, never a hang.
// * The first error of a block ends the launch: blocks waiting at a barrier are woken and
//   unwound, blocks not started yet never run.
#ifndef PYASC_CPU_GRID_H
#define PYASC_CPU_GRID_H

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace AscendC {
namespace cpu {
namespace grid {

// One launch in flight.
struct Launch {
  std::mutex m;
  std::condition_variable cv;
  using AnyKernel = void (*)();
  int (*run)(AnyKernel kernel, int64_t idx, int64_t num, uint8_t** args, int64_t nargs) = nullptr;
  AnyKernel kernel = nullptr;
  uint8_t** args = nullptr;
  int64_t nargs = 0;
  int64_t num = 1;     // GetBlockNum()
  int64_t total = -1;  // vector blocks to run; known once block 0 declared its kernel type
  int64_t next = 1;    // the next block to start (block 0 starts with the launch)
  int64_t baton = 0;   // the block allowed to run (-1: none)
  std::vector<uint8_t> done;     // per block: returned (or failed)
  std::deque<int64_t> ready;     // released from a barrier, not resumed yet
  std::vector<int64_t> waiting;  // at the open barrier, in arrival order
  int64_t expected = 0;          // blocks the open barrier waits for (0: no barrier open)
  bool expected_soft = false;    // the open barrier's form (soft: usedCores given)
  int64_t rounds = 0;            // barriers completed
  const char* wait_loc = nullptr;  // source location of the first arrival at the open barrier
  bool abort = false;
  std::string error;
  int error_kind = 0;
  int64_t error_block = -1;
  ErrorTrace trace;  // the failing block's call stack (-DPYASC_CPU_TRACE)
  int live = 0;  // worker threads still running
  std::vector<std::thread> threads;
  const GmAllocations* gm = nullptr;  // the caller's registry (copied into every worker)
  uint8_t* workspace = nullptr;       // the launch's GM workspace argument (null: none)
};

// The launch this thread's block belongs to (null outside pyasc_run_grid).
__attribute__((visibility("hidden"))) inline Launch*& Current() {
  static thread_local Launch* l = nullptr;
  return l;
}

inline std::string BlockList(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s.empty() ? "none" : s;
}

inline void Abort(Launch& L, int64_t block, const std::string& msg, int kind) {
  if (L.error_block < 0) {
    L.error_block = block;
    L.error = msg;
    L.error_kind = kind;
  }
  L.abort = true;
  L.baton = -1;
  L.cv.notify_all();
}

// The error of a barrier that can never complete.
inline std::string DeadlockMessage(const Launch& L) {
  std::vector<int64_t> returned;
  for (int64_t b = 0; b < static_cast<int64_t>(L.done.size()); ++b)
    if (L.done[b]) returned.push_back(b);
  std::string s = Cat("SyncAll: the barrier can never complete: it waits for ", L.expected,
                      " blocks of a ", L.total, "-block launch, ", L.waiting.size(),
                      " arrived (blocks ", BlockList(L.waiting), "); blocks ",
                      BlockList(returned),
                      " returned without reaching it. Every block counted by the barrier must "
                      "call SyncAll the same number of times (on the NPU the waiting blocks hang)");
  if (L.wait_loc != nullptr && *L.wait_loc != '\0') s += Cat(" at ", L.wait_loc);
  return s;
}

inline void Worker(Launch* L, int64_t b);

// Hand the baton on (lock held). Returns the block the calling thread runs next (it returned
// and may take a block not started yet), or -1 (it waits, or nothing is left for it).
inline int64_t Pass(Launch& L, bool caller_free) {
  if (L.abort) return -1;
  if (!L.ready.empty()) {
    L.baton = L.ready.front();
    L.ready.pop_front();
    L.cv.notify_all();
    return -1;
  }
  if (L.next < L.total) {
    const int64_t b = L.next++;
    L.baton = b;
    if (caller_free) return b;
    ++L.live;
    L.threads.emplace_back(Worker, &L, b);
    return -1;
  }
  if (!L.waiting.empty()) {
    Abort(L, L.waiting.front(), DeadlockMessage(L), 0);
    return -1;
  }
  L.baton = -1;
  L.cv.notify_all();
  return -1;
}

// The vector blocks of the launch, from the running block's declared kernel type.
inline void LearnTotal(Launch& L) {
  if (L.total < 0) {
    L.total = L.num * AivRatio(DeclaredKernelType());
    L.done.assign(static_cast<size_t>(L.total), 0);
  }
}

// Run blocks on this thread, starting with `b`, until none is left for it.
inline void RunOn(Launch* L, int64_t b) {
  while (b >= 0) {
    {
      std::unique_lock<std::mutex> lk(L->m);
      L->cv.wait(lk, [&] { return L->baton == b || L->abort; });
      if (L->baton != b) return;  // aborted before it started
    }
    const int rc = L->run(L->kernel, b, L->num, L->args, L->nargs);
    std::unique_lock<std::mutex> lk(L->m);
    if (L->total < 0) {
      L->total = L->num * LastRatio();
      L->done.assign(static_cast<size_t>(L->total), 0);
    }
    if (b < static_cast<int64_t>(L->done.size())) L->done[b] = 1;
    if (L->gm != nullptr && &GmAllocs() != L->gm) {
      auto& mine = GmAllocs().reports;
      auto& theirs = const_cast<GmAllocations*>(L->gm)->reports;
      for (auto& r : mine)
        if (theirs.size() < kMaxGmReports) theirs.push_back(r);
      mine.clear();
    }
    if (rc != 0) {
      if (L->error_block < 0) L->trace = LastTrace();
      Abort(*L, b, State().last_error, State().last_error_kind);
      return;
    }
    b = Pass(*L, true);
  }
}

// A worker thread: the launch's GM registry, then blocks from `b` on.
inline void Worker(Launch* L, int64_t b) {
  Current() = L;
  if (L->gm != nullptr) GmAllocs().ranges = L->gm->ranges;
  RunOn(L, b);
  std::lock_guard<std::mutex> lk(L->m);
  --L->live;
  L->cv.notify_all();
}

// Run a whole launch (see the file comment). Returns 0, or 1 with the first failing block in
// *failed and its message in this thread's State().last_error.
inline int RunGrid(int (*run)(Launch::AnyKernel, int64_t, int64_t, uint8_t**, int64_t),
                   Launch::AnyKernel kernel,
                   int64_t block_num, uint8_t** args, int64_t nargs, int64_t* failed) {
  Launch L;
  L.run = run;
  L.kernel = kernel;
  L.args = args;
  L.nargs = nargs;
  L.num = block_num;
  L.gm = &GmAllocs();
  L.workspace = nargs >= 2 ? args[nargs - 2] : nullptr;
  if (block_num <= 0) {
    State().last_error = Cat("pyasc_run_grid: block_num must be >= 1, got ", block_num);
    State().last_error_kind = 0;
    if (failed != nullptr) *failed = 0;
    return 1;
  }
  Launch* outer = Current();
  Current() = &L;
  RunOn(&L, 0);
  std::vector<std::thread> threads;
  {
    std::unique_lock<std::mutex> lk(L.m);
    L.cv.wait(lk, [&] { return L.live == 0; });
    threads.swap(L.threads);
  }
  for (auto& t : threads) t.join();
  Current() = outer;
  LastRatio() = static_cast<int>(L.total > 0 ? L.total / L.num : 1);
  if (L.error_block < 0) return 0;
  State().last_error = L.error;
  State().last_error_kind = L.error_kind;
  LastTrace() = L.trace;
  if (failed != nullptr) *failed = L.error_block;
  return 1;
}

}  // namespace grid
}  // namespace cpu
}  // namespace AscendC

#endif  // PYASC_CPU_GRID_H
