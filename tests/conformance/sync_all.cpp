// Cross-core SyncAll kernels (written here from the SyncAll page of the Ascend C API reference;
// tests/test_conformance_sync_all.py drives them).
//
// rotate_kernel: block b writes 8 floats (b + 1) * 10 + k to x[8b..8b+8), synchronises, then
// copies block (b + 1) % n's 8 values into y[8b..). The copies go through a VECIN / VECOUT
// queue pair (DataCopy), so the memory-check build checks the pipes around SyncAll too.
// Tiling (int64): mode, used_cores, rounds.
//   mode 0: soft sync (gmWorkspace = argument ws, ubWorkspace from a TBuf, usedCores)
//   mode 1: hard sync SyncAll<true>()
//   mode 2: no SyncAll at all (the result is then schedule-dependent)
//   mode 3: soft sync, but the last block returns before it
//   mode 4: soft sync, block 0 calls it once more at the end
//   mode 5: soft sync, block 0 passes usedCores = 2 while the others pass 0
//   mode 6: hard sync under KERNEL_TYPE_MIX_AIC_1_2 (2 * blockDim vector blocks)
// With rounds = r > 1 the exchange repeats: round j reads block (b + 1) % n's round-(j - 1)
// result, so y ends with x of block (b + r) % n.
#include "kernel_operator.h"

using namespace AscendC;

namespace sync_all {
struct Tiling {
  int64_t mode;
  int64_t used_cores;
  int64_t rounds;
};
constexpr int32_t kVals = 8;  // one 32-byte DataBlock of floats per block

class Rotate {
 public:
  __aicore__ inline void Run(GM_ADDR x, GM_ADDR y, GM_ADDR ws, const Tiling& t) {
    const int64_t n = GetBlockNum() * GetTaskRation();
    const int64_t b = GetBlockIdx();
    xg_.SetGlobalBuffer((__gm__ float*)x, n * kVals);
    yg_.SetGlobalBuffer((__gm__ float*)y, n * kVals);
    wg_.SetGlobalBuffer((__gm__ int32_t*)ws, n * kVals);
    pipe_.InitBuffer(in_, 1, kVals * sizeof(float));
    pipe_.InitBuffer(out_, 1, kVals * sizeof(float));
    pipe_.InitBuffer(work_, n * 32);
    LocalTensor<float> o = out_.AllocTensor<float>();
    CreateVecIndex(o, static_cast<float>((b + 1) * 10), kVals);  // (b + 1) * 10 + k
    out_.EnQue(o);
    o = out_.DeQue<float>();
    DataCopy(xg_[b * kVals], o, kVals);
    out_.FreeTensor(o);
    if (t.mode == 3 && b == n - 1) return;
    const int64_t rounds = t.rounds > 0 ? t.rounds : 1;
    for (int64_t r = 0; r < rounds; ++r) {
      Barrier(t, b);
      LocalTensor<float> i = in_.AllocTensor<float>();
      DataCopy(i, (r % 2 == 0 ? xg_ : yg_)[((b + 1) % n) * kVals], kVals);
      in_.EnQue(i);
      i = in_.DeQue<float>();
      LocalTensor<float> w = out_.AllocTensor<float>();
      DataCopy(w, i, kVals);
      in_.FreeTensor(i);
      out_.EnQue(w);
      w = out_.DeQue<float>();
      if (rounds > 1) Barrier(t, b);  // everyone has read before anyone overwrites
      DataCopy((r % 2 == 0 ? yg_ : xg_)[b * kVals], w, kVals);
      out_.FreeTensor(w);
    }
    if (t.mode == 4 && b == 0) Barrier(t, b);
  }

 private:
  __aicore__ inline void Barrier(const Tiling& t, int64_t b) {
    if (t.mode == 2) return;
    if (t.mode == 1 || t.mode == 6) {
      SyncAll<true>();
      return;
    }
    const int32_t used = t.mode == 5 && b == 0 ? 2 : static_cast<int32_t>(t.used_cores);
    SyncAll(wg_, work_.Get<int32_t>(), used);
  }
  TPipe pipe_;
  TQue<QuePosition::VECIN, 1> in_;
  TQue<QuePosition::VECOUT, 1> out_;
  TBuf<TPosition::VECCALC> work_;
  GlobalTensor<float> xg_, yg_;
  GlobalTensor<int32_t> wg_;
};
}  // namespace sync_all

extern "C" __global__ __aicore__ void rotate_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR ws,
                                                    GM_ADDR workspace, GM_ADDR tiling) {
  const auto& t = *reinterpret_cast<const sync_all::Tiling*>(tiling);
  if (t.mode == 6) KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  sync_all::Rotate op;
  op.Run(x, y, ws, t);
}
