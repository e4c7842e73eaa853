// Conformance kernel: every documented form of WholeReduceSum/Max/Min (ReduceOrder),
// BlockReduceSum/Max/Min, PairReduceSum, ReduceSum/Max/Min (count form with sharedTmpBuffer,
// level-0 forms with calIndex) and the accessors GetReduceRepeatSumSpr / GetReduceMaxMinCount,
// half and float. The tiling selects the call; x is loaded into UB, the destination is
// pre-filled (or left untouched, to test definedness) and copied to o. Written here from the
// Ascend C API documentation.
#include "kernel_operator.h"

namespace reduce_ops {

// SetFlag/WaitFlag of one HardEvent: pipe DST waits for what pipe SRC issued before (TBufs order
// nothing by themselves).
template <AscendC::HardEvent E>
void Sync() {
  AscendC::SetFlag<E>(EVENT_ID0);
  AscendC::WaitFlag<E>(EVENT_ID0);
}

struct Tiling {
  int32_t op;       // 0-2 WholeReduceSum/Max/Min, 3-5 BlockReduceSum/Max/Min, 6 PairReduceSum,
                    // 10-12 ReduceSum/Max/Min count form, 13-15 ReduceSum/Max/Min level 0,
                    // 20 GetReduceRepeatSumSpr after the count ReduceSum (into dst[2]),
                    // 21 GetReduceMaxMinCount(value) after the count ReduceMax (into dst[2]),
                    // 22 GetReduceMaxMinCount(value, index), 23 GetReduceRepeatSumSpr alone,
                    // 24 GetReduceRepeatSumSpr after a level-0 ReduceSum
  int32_t dt;       // 0 half, 1 float
  int32_t form;     // 0 contiguous mask, 1 bit mask, 2 SetVectorMask(bits) + isSetMask = false,
                    // 3 Counter mode + contiguous mask (the element count)
  int32_t repeat;   // repeatTime (the count of the count forms)
  int32_t size;     // elements of the src buffer
  int32_t dsize;    // elements of the dst buffer
  int32_t work;     // elements of the sharedTmpBuffer
  int32_t inputs;   // elements of x loaded into UB
  int32_t fill;     // 1: pre-fill dst with fillValue
  int32_t mask;
  int32_t dstRep;
  int32_t srcBlk;
  int32_t srcRep;
  int32_t order;    // ReduceOrder
  int32_t calIndex;
  int32_t dstOffset;  // dst view offset (elements)
  uint64_t bits[2];
  float fillValue;
  int32_t pad;
};

template <class T>
struct Run {
  const Tiling& t;
  AscendC::LocalTensor<T> d, s, w;

  template <bool kSet, class M>
  void Call(M mask) const {
    const auto order = static_cast<AscendC::ReduceOrder>(t.order);
    const int32_t r = t.repeat;
    switch (t.op) {
      case 0: AscendC::WholeReduceSum<T, kSet>(d, s, mask, r, t.dstRep, t.srcBlk, t.srcRep); break;
      case 1:
        AscendC::WholeReduceMax<T, kSet>(d, s, mask, r, t.dstRep, t.srcBlk, t.srcRep, order);
        break;
      case 2:
        AscendC::WholeReduceMin<T, kSet>(d, s, mask, r, t.dstRep, t.srcBlk, t.srcRep, order);
        break;
      case 3: AscendC::BlockReduceSum<T, kSet>(d, s, r, mask, t.dstRep, t.srcBlk, t.srcRep); break;
      case 4: AscendC::BlockReduceMax<T, kSet>(d, s, r, mask, t.dstRep, t.srcBlk, t.srcRep); break;
      case 5: AscendC::BlockReduceMin<T, kSet>(d, s, r, mask, t.dstRep, t.srcBlk, t.srcRep); break;
      case 6: AscendC::PairReduceSum<T, kSet>(d, s, r, mask, t.dstRep, t.srcBlk, t.srcRep); break;
      case 13: AscendC::ReduceSum<T, kSet>(d, s, w, mask, r, t.srcRep); break;
      case 14: AscendC::ReduceMax<T>(d, s, w, mask, r, t.srcRep, t.calIndex != 0); break;
      case 15: AscendC::ReduceMin<T>(d, s, w, mask, r, t.srcRep, t.calIndex != 0); break;
      default: AscendC::cpu::Fail("test: bad op ", t.op);
    }
  }

  void Accessors() const {
    T v{}, i{};
    switch (t.op) {
      case 10: AscendC::ReduceSum<T>(d, s, w, t.repeat); break;
      case 11: AscendC::ReduceMax<T>(d, s, w, t.repeat, t.calIndex != 0); break;
      case 12: AscendC::ReduceMin<T>(d, s, w, t.repeat, t.calIndex != 0); break;
      case 20:
        AscendC::ReduceSum<T>(d, s, w, t.repeat);
        Sync<AscendC::HardEvent::V_S>();
        d.SetValue(2, AscendC::GetReduceRepeatSumSpr<T>());
        break;
      case 21:
        AscendC::ReduceMax<T>(d, s, w, t.repeat, false);
        Sync<AscendC::HardEvent::V_S>();
        AscendC::GetReduceMaxMinCount<T>(v);
        d.SetValue(2, v);
        break;
      case 22:
        AscendC::ReduceMin<T>(d, s, w, t.repeat, true);
        Sync<AscendC::HardEvent::V_S>();
        AscendC::GetReduceMaxMinCount<T>(v, i);
        break;
      case 23: Sync<AscendC::HardEvent::V_S>(); d.SetValue(2, AscendC::GetReduceRepeatSumSpr<T>()); break;
      case 24:
        AscendC::ReduceSum<T>(d, s, w, t.mask, t.repeat, t.srcRep);
        Sync<AscendC::HardEvent::V_S>();
        d.SetValue(2, AscendC::GetReduceRepeatSumSpr<T>());
        break;
      default: AscendC::cpu::Fail("test: bad op ", t.op);
    }
  }

  void Go() const {
    if (t.op >= 10 && t.op <= 12) return Accessors();
    if (t.op >= 20) return Accessors();
    if (t.form == 2) AscendC::SetVectorMask<T, AscendC::MaskMode::NORMAL>(t.bits[1], t.bits[0]);
    if (t.form == 3) AscendC::SetMaskCount();
    if (t.form == 0 || t.form == 3) {
      Call<true>(t.mask);
    } else if (t.form == 1) {
      uint64_t m[2] = {t.bits[0], t.bits[1]};
      Call<true>(m);
    } else {
      Call<false>(AscendC::MASK_PLACEHOLDER);
    }
    AscendC::SetMaskNorm();
    AscendC::ResetMask();
  }
};

template <class T>
void Kernel(GM_ADDR x, GM_ADDR o, const Tiling& t) {
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::TPosition::VECIN> bs;
  AscendC::TBuf<AscendC::TPosition::VECOUT> bd;
  AscendC::TBuf<AscendC::TPosition::VECCALC> bw;
  pipe.InitBuffer(bs, t.size * sizeof(T));
  pipe.InitBuffer(bd, t.dsize * sizeof(T));
  pipe.InitBuffer(bw, (t.work > 0 ? t.work : 1) * sizeof(T));
  AscendC::LocalTensor<T> dst = bd.Get<T>(t.dsize);
  Run<T> run{t, dst[t.dstOffset], bs.Get<T>(t.size), bw.Get<T>(t.work)};
  AscendC::GlobalTensor<T> gx, go;
  gx.SetGlobalBuffer((__gm__ T*)x, t.size);
  go.SetGlobalBuffer((__gm__ T*)o, t.dsize);
  AscendC::DataCopy(run.s, gx, t.inputs);
  Sync<AscendC::HardEvent::MTE2_V>();
  if (t.fill) AscendC::Duplicate(dst, static_cast<T>(t.fillValue), t.dsize);
  run.Go();
  Sync<AscendC::HardEvent::V_MTE3>();
  Sync<AscendC::HardEvent::S_MTE3>();
  AscendC::DataCopy(go, dst, t.dsize);
}

}  // namespace reduce_ops

extern "C" __global__ __aicore__ void reduce_ops_kernel(GM_ADDR x, GM_ADDR o, GM_ADDR workspace,
                                                        GM_ADDR tiling) {
  const auto& t = *reinterpret_cast<const reduce_ops::Tiling*>(tiling);
  if (t.dt == 0) reduce_ops::Kernel<half>(x, o, t);
  else reduce_ops::Kernel<float>(x, o, t);
}
