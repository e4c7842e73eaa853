// Conformance kernels of the race detector (pyasc_cpu/race.h): y = 2 * x over two tiles per
// block, written as Ascend C samples are, once correctly synchronised and once with one
// synchronisation left out (in block `badBlock` only) for each hazard kind: through queue
// misuse (race_queue_kernel) and through a missing SetFlag/WaitFlag (race_flag_kernel).
// Written here from the Ascend C documentation (programming guide "lower-level programming":
// EnQue/DeQue/AllocTensor/FreeTensor stand for MTE2_V, V_MTE3, V_MTE2, MTE3_V); built by
// tests/test_race_detector.py. PYASC_LOC marks the lines the reports must name.
#include "kernel_operator.h"

namespace race_sync {

struct Tiling {
  int32_t op;        // the case (see each kernel)
  int32_t n;         // floats per tile (a multiple of 8)
  int32_t badBlock;  // the block that leaves the synchronisation out
};

constexpr float kScale = 2.0f;

// TQue<VECIN> -> Muls -> TQue<VECOUT>, single-buffered, two tiles.
//   0 correct; 1 no EnQue/DeQue of x (RAW MTE2 -> V); 2 no EnQue/DeQue of y (RAW V -> MTE3);
//   3 the next tile is copied into the dequeued x without FreeTensor/AllocTensor (WAR V ->
//   MTE2); 4 x is Duplicate'd (V) before the copy into it with no FreeTensor/AllocTensor in
//   between (WAW V -> MTE2); 5 the next tile's Muls writes the y MTE3 is copying out, without
//   FreeTensor/AllocTensor (WAR MTE3 -> V).
class QueueCase {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const Tiling& t) {
    t_ = t;
    bad_ = static_cast<int32_t>(AscendC::GetBlockIdx()) == t.badBlock;
    const uint64_t base = AscendC::GetBlockIdx() * 2ull * t.n;
    xGm_.SetGlobalBuffer((__gm__ float*)x + base, 2ull * t.n);
    yGm_.SetGlobalBuffer((__gm__ float*)y + base, 2ull * t.n);
    pipe_.InitBuffer(inQ_, 1, t.n * sizeof(float));
    pipe_.InitBuffer(outQ_, 1, t.n * sizeof(float));
  }
  __aicore__ inline void Process() {
    const int32_t op = bad_ ? t_.op : 0;
    if (op == 3) return Reuse();
    if (op == 5) return ReuseOut();
    for (int32_t i = 0; i < 2; ++i) {
      AscendC::LocalTensor<float> x = inQ_.AllocTensor<float>();
      if (op == 4) {
        PYASC_LOC("race_sync.py:40:5");
        AscendC::Duplicate(x, 0.0f, t_.n);
      }
      PYASC_LOC("race_sync.py:41:5");
      AscendC::DataCopy(x, xGm_[i * t_.n], t_.n);
      if (op != 1) {
        inQ_.EnQue(x);
        x = inQ_.DeQue<float>();
      }
      AscendC::LocalTensor<float> y = outQ_.AllocTensor<float>();
      PYASC_LOC("race_sync.py:42:5");
      AscendC::Muls(y, x, kScale, t_.n);
      if (op != 2) {
        outQ_.EnQue(y);
        y = outQ_.DeQue<float>();
      }
      PYASC_LOC("race_sync.py:43:5");
      AscendC::DataCopy(yGm_[i * t_.n], y, t_.n);
      outQ_.FreeTensor(y);
      inQ_.FreeTensor(x);
    }
  }

 private:
  __aicore__ inline void Reuse() {  // op 3
    AscendC::LocalTensor<float> x = inQ_.AllocTensor<float>();
    for (int32_t i = 0; i < 2; ++i) {
      PYASC_LOC("race_sync.py:41:5");
      AscendC::DataCopy(x, xGm_[i * t_.n], t_.n);
      inQ_.EnQue(x);
      x = inQ_.DeQue<float>();
      AscendC::LocalTensor<float> y = outQ_.AllocTensor<float>();
      PYASC_LOC("race_sync.py:42:5");
      AscendC::Muls(y, x, kScale, t_.n);
      outQ_.EnQue(y);
      y = outQ_.DeQue<float>();
      AscendC::DataCopy(yGm_[i * t_.n], y, t_.n);
      outQ_.FreeTensor(y);
    }
    inQ_.FreeTensor(x);
  }
  __aicore__ inline void ReuseOut() {  // op 5
    AscendC::LocalTensor<float> y = outQ_.AllocTensor<float>();
    for (int32_t i = 0; i < 2; ++i) {
      AscendC::LocalTensor<float> x = inQ_.AllocTensor<float>();
      AscendC::DataCopy(x, xGm_[i * t_.n], t_.n);
      inQ_.EnQue(x);
      x = inQ_.DeQue<float>();
      PYASC_LOC("race_sync.py:42:5");
      AscendC::Muls(y, x, kScale, t_.n);
      outQ_.EnQue(y);
      y = outQ_.DeQue<float>();
      PYASC_LOC("race_sync.py:43:5");
      AscendC::DataCopy(yGm_[i * t_.n], y, t_.n);
      inQ_.FreeTensor(x);
    }
    outQ_.FreeTensor(y);
  }

  Tiling t_{};
  bool bad_ = false;
  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> inQ_;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQ_;
  AscendC::GlobalTensor<float> xGm_, yGm_;
};

// TBuf<VECIN> buffers synchronised by hand, two tiles.
//   10 correct (SetFlag/WaitFlag MTE2_V, V_MTE3, MTE3_V, V_MTE2); 11 no WaitFlag<MTE2_V> (RAW);
//   12 no WaitFlag<V_MTE3> (RAW); 13 no WaitFlag<V_MTE2> before the second copy-in (WAR);
//   14 no WaitFlag<MTE3_V> before the second Muls (WAR); 15 PipeBarrier<PIPE_ALL> for every
//   flag (correct); 16 x[0] = 5 by SetValue, S_V synchronised (correct); 17 the same without
//   S_V (RAW S -> V); 18 y = the tile's sum, ReduceSum then GetValue after V_S (correct);
//   19 the same without V_S (RAW V -> S); 20 GetValue of the copied x without MTE2_S (RAW);
//   21 Duplicate over the copied x without MTE2_V (WAW MTE2 -> V); 22 WaitFlag with no SetFlag;
//   23, 24: 20 and 21 with their MTE2_S / MTE2_V (correct).
class FlagCase {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const Tiling& t) {
    t_ = t;
    bad_ = static_cast<int32_t>(AscendC::GetBlockIdx()) == t.badBlock;
    const uint64_t base = AscendC::GetBlockIdx() * 2ull * t.n;
    xGm_.SetGlobalBuffer((__gm__ float*)x + base, 2ull * t.n);
    yGm_.SetGlobalBuffer((__gm__ float*)y + base, 2ull * t.n);
    pipe_.InitBuffer(xBuf_, t.n * sizeof(float));
    pipe_.InitBuffer(yBuf_, t.n * sizeof(float));
    pipe_.InitBuffer(sumBuf_, 64);
  }
  __aicore__ inline void Process() {
    const int32_t op = t_.op;
    const int32_t mine = bad_ ? op : CorrectOf(op);
    AscendC::LocalTensor<float> x = xBuf_.Get<float>(), y = yBuf_.Get<float>();
    for (int32_t i = 0; i < 2; ++i) {
      if (i > 0) Sync<AscendC::HardEvent::V_MTE2>(mine, 13);
      PYASC_LOC("race_sync.py:51:5");
      AscendC::DataCopy(x, xGm_[i * t_.n], t_.n);
      if (mine == 20 || mine == 23) {
        Sync<AscendC::HardEvent::MTE2_S>(mine, 20);
        PYASC_LOC("race_sync.py:52:5");
        (void)x.GetValue(0);
      }
      if (mine == 21 || mine == 24) {
        Sync<AscendC::HardEvent::MTE2_V>(mine, 21);
        PYASC_LOC("race_sync.py:53:5");
        AscendC::Duplicate(x, 1.0f, t_.n);
      }
      Sync<AscendC::HardEvent::MTE2_V>(mine, 11);
      if (mine == 16 || mine == 17) {
        Sync<AscendC::HardEvent::V_S>(mine, -1);
        PYASC_LOC("race_sync.py:54:5");
        x.SetValue(0, 5.0f);
        Sync<AscendC::HardEvent::S_V>(mine, 17);
      }
      if (i > 0) Sync<AscendC::HardEvent::MTE3_V>(mine, 14);
      if (mine == 18 || mine == 19) {
        Sum(x, y, mine);
      } else {
        PYASC_LOC("race_sync.py:55:5");
        AscendC::Muls(y, x, kScale, t_.n);
      }
      Sync<AscendC::HardEvent::V_MTE3>(mine, 12);
      PYASC_LOC("race_sync.py:56:5");
      AscendC::DataCopy(yGm_[i * t_.n], y, t_.n);
    }
    if (mine == 22) AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID3);
  }

 private:
  // The correct case a block other than badBlock runs instead of `op`.
  static int32_t CorrectOf(int32_t op) {
    switch (op) {
      case 17: return 16;
      case 19: return 18;
      case 20: return 23;
      case 21: return 24;
      case 11: case 12: case 13: case 14: case 22: return 10;
      default: return op;
    }
  }
  // The synchronisation of one producer -> consumer edge; case `skip` leaves the WaitFlag out,
  // case 15 uses a barrier instead.
  template <AscendC::HardEvent evt>
  __aicore__ inline void Sync(int32_t mine, int32_t skip) {
    if (mine == 15) return AscendC::PipeBarrier<PIPE_ALL>();
    const AscendC::TEventID id = GetTPipePtr()->FetchEventID(evt);
    AscendC::SetFlag<evt>(id);
    if (mine != skip) AscendC::WaitFlag<evt>(id);
  }
  __aicore__ inline void Sum(const AscendC::LocalTensor<float>& x,
                             const AscendC::LocalTensor<float>& y, int32_t mine) {
    AscendC::LocalTensor<float> s = sumBuf_.Get<float>();
    PYASC_LOC("race_sync.py:57:5");
    AscendC::ReduceSum(s, x, s[8], t_.n);
    Sync<AscendC::HardEvent::V_S>(mine, 19);
    PYASC_LOC("race_sync.py:58:5");
    const float v = s.GetValue(0);
    AscendC::Duplicate(y, v, t_.n);
  }

  Tiling t_{};
  bool bad_ = false;
  AscendC::TPipe pipe_;
  AscendC::TBuf<AscendC::TPosition::VECIN> xBuf_, yBuf_;
  AscendC::TBuf<AscendC::TPosition::VECCALC> sumBuf_;
  AscendC::GlobalTensor<float> xGm_, yGm_;
};

}  // namespace race_sync

extern "C" __global__ __aicore__ void race_queue_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR workspace,
                                                         GM_ADDR tiling) {
  race_sync::QueueCase k;
  k.Init(x, y, *reinterpret_cast<const race_sync::Tiling*>(tiling));
  k.Process();
}

extern "C" __global__ __aicore__ void race_flag_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR workspace,
                                                        GM_ADDR tiling) {
  race_sync::FlagCase k;
  k.Init(x, y, *reinterpret_cast<const race_sync::Tiling*>(tiling));
  k.Process();
}
