// Conformance kernel: every documented form of Compare (count, level-0 contiguous / bit mask,
// register form + GetCmpMask), Compares / CompareScalar, SetCmpMask / GetCmpMask and Select
// (SELMODE 0, 1, 2 in the count, level-0 and register forms), half and float, the mask types,
// and the refused uses. The tiling selects the call; x and y are loaded into UB, z holds the
// selMask bytes, o receives the mask bytes (Compare) or the Select result.
// Written here from the Ascend C API documentation; built by tests/test_conformance_compare.py.
#include "kernel_operator.h"

namespace cmpsel {

using namespace AscendC;

struct Tiling {
  int32_t op;          // see Run::Go
  int32_t dt;          // 0 half, 1 float, 2 int32_t, 3 int16_t
  int32_t mode;        // CMPMODE / SELMODE code
  int32_t count;       // count of the count forms
  int32_t repeat;      // repeatTime
  int32_t size;        // elements of the x, y and Select dst buffers (a multiple of 128)
  int32_t strides[6];  // dstBlk, src0Blk, src1Blk, dstRep, src0Rep, src1Rep
  uint64_t mask;       // contiguous mask (0: use bits)
  uint64_t bits[2];    // bit mask
  float scalar;        // Compares / Select scalar
  float fill;          // pre-fill of the Select dst
  int32_t maskType;    // U: 0 uint8_t 1 uint16_t 2 uint32_t 3 uint64_t 4 int8_t 5 int16_t
  int32_t variant;     // op-specific
  int32_t maskBytes;   // bytes of the mask buffers (a multiple of 32)
  int32_t counter;     // 1: Counter mode for the register forms
};

template <class T, class U>
struct Run {
  const Tiling& t;
  TPipe& pipe;
  LocalTensor<T> a, b, d;
  LocalTensor<uint8_t> m, z;  // Compare result bytes, selMask bytes (loaded from GM)
  LocalTensor<uint8_t> tmp;   // 64 scratch bytes
  LocalTensor<uint8_t> small;  // 8 bytes (a GetCmpMask dst that is too small)

  BinaryRepeatParams Bin() const {
    return BinaryRepeatParams(t.strides[0], t.strides[1], t.strides[2], t.strides[3],
                              t.strides[4], t.strides[5]);
  }
  UnaryRepeatParams Un() const {
    return UnaryRepeatParams(t.strides[0], t.strides[1], t.strides[3], t.strides[4]);
  }
  CMPMODE Cm() const { return static_cast<CMPMODE>(t.mode); }
  SELMODE Sm() const { return static_cast<SELMODE>(t.mode); }
  LocalTensor<U> M() const { return m.ReinterpretCast<U>(); }
  LocalTensor<U> Z() const { return z.ReinterpretCast<U>(); }
  T S() const { return static_cast<T>(t.scalar); }

  // The mask register for the forms without a mask argument.
  void VectorMask() const {
    if (t.counter) {
      SetMaskCount();
      SetVectorMask<T, MaskMode::COUNTER>(0, t.mask);
    } else if (t.mask) {
      SetVectorMask<T, MaskMode::NORMAL>(static_cast<int32_t>(t.mask));
    } else {
      SetVectorMask<T, MaskMode::NORMAL>(t.bits[1], t.bits[0]);
    }
  }

  void Compares_() const {
    uint64_t bits[2] = {t.bits[0], t.bits[1]};
    switch (t.op) {
      case 0: Compare(M(), a, b, Cm(), t.count); break;
      case 1: Compare(M(), a, b, Cm(), t.mask, t.repeat, Bin()); break;
      case 2: Compare(M(), a, b, Cm(), bits, t.repeat, Bin()); break;
      case 3: Compare(a, b, Cm(), t.mask, Bin()); GetCmpMask(M()); break;
      case 4: Compare(a, b, Cm(), bits, Bin()); GetCmpMask(M()); break;
      case 5:
        VectorMask();
        Compare<T, false>(a, b, Cm(), MASK_PLACEHOLDER, Bin());
        GetCmpMask(M());
        break;
      case 6: Compares(M(), a, S(), Cm(), t.count); break;
      case 7: Compares(M(), a, S(), Cm(), t.mask, t.repeat, Un()); break;
      case 8: Compares(M(), a, S(), Cm(), bits, t.repeat, Un()); break;
      case 9: CompareScalar(M(), a, S(), Cm(), t.count); break;
      case 10: SetCmpMask(z); GetCmpMask(M()); break;
      case 11: Compare(a, b, Cm(), t.mask, Bin()); GetCmpMask(m[8]); break;  // misaligned
      case 12: SetCmpMask(z[16]); GetCmpMask(m[16]); break;  // 16-byte aligned views
      case 13: Compare(a, b, Cm(), t.mask, Bin()); GetCmpMask(small); break;  // 8 bytes
      case 14: CompareScalar(M(), a, S(), Cm(), t.mask, t.repeat, Un()); break;
      case 15: CompareScalar(M(), a, S(), Cm(), bits, t.repeat, Un()); break;
      default: cpu::Fail("test: bad compare op ", t.op);
    }
  }

  // Mode 2 without a mask argument: a scratch tensor holds the address of selMask.
  void Address() const {
    const int64_t p = reinterpret_cast<int64_t>(z.GetPhyAddr());
    if (t.variant == 0) tmp.ReinterpretCast<int64_t>().SetValue(0, p);
    else if (t.variant == 1) tmp.ReinterpretCast<uint32_t>().SetValue(0, static_cast<uint32_t>(p));
    else tmp.ReinterpretCast<int64_t>().SetValue(0, 0x7);
    event_t e = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::S_V));
    SetFlag<HardEvent::S_V>(e);
    WaitFlag<HardEvent::S_V>(e);
  }

  void Selects() const {
    uint64_t bits[2] = {t.bits[0], t.bits[1]};
    switch (t.op) {
      case 20: Select(d, Z(), a, b, Sm(), t.count); break;
      case 21: Select(d, Z(), a, S(), Sm(), t.count); break;
      case 22: Select(d, Z(), a, b, Sm(), t.mask, t.repeat, Bin()); break;
      case 23: Select(d, Z(), a, b, Sm(), bits, t.repeat, Bin()); break;
      case 24: Select(d, Z(), a, S(), Sm(), t.mask, t.repeat, Bin()); break;
      case 25: Select(d, Z(), a, S(), Sm(), bits, t.repeat, Bin()); break;
      case 26:  // mode 0: selection bits in CMPMASK (SetCmpMask)
        SetCmpMask(z);
        PipeBarrier<PIPE_V>();
        VectorMask();
        Select<T, SELMODE::VSEL_CMPMASK_SPR>(d, a, b, t.repeat, Bin());
        break;
      case 27:  // mode 2: CMPMASK holds the address of selMask
        Address();
        SetCmpMask(tmp);
        PipeBarrier<PIPE_V>();
        VectorMask();
        Select<T, SELMODE::VSEL_TENSOR_TENSOR_MODE>(d, a, b, t.repeat, Bin());
        break;
      case 28: {  // mode 1: the scalar in CMPMASK
        LocalTensor<T> s = tmp.ReinterpretCast<T>();
        Duplicate(s, S(), static_cast<int32_t>(32 / sizeof(T)));
        SetCmpMask(s);
        PipeBarrier<PIPE_V>();
        VectorMask();
        Select(d, Z(), a, t.repeat, Bin());
        break;
      }
      case 29:  // register Compare (count lanes, default all) feeding Select mode 0
        Compare(a, b, Cm(), t.count ? static_cast<uint64_t>(t.count) : 256 / sizeof(T), Bin());
        PipeBarrier<PIPE_V>();
        VectorMask();
        Select<T, SELMODE::VSEL_CMPMASK_SPR>(d, a, b, t.repeat, Bin());
        break;
      case 30: Select<T, SELMODE::VSEL_TENSOR_SCALAR_MODE>(d, a, b, t.repeat, Bin()); break;
      default: cpu::Fail("test: bad select op ", t.op);
    }
  }
};

template <class T, class U>
void Kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR o, const Tiling& t) {
  TPipe pipe;
  TBuf<TPosition::VECIN> bx, by, bd, bm, bz, btmp, bsmall;
  pipe.InitBuffer(bx, t.size * sizeof(T));
  pipe.InitBuffer(by, t.size * sizeof(T));
  pipe.InitBuffer(bd, t.size * sizeof(T));
  pipe.InitBuffer(bm, t.maskBytes);
  pipe.InitBuffer(bz, t.maskBytes);
  pipe.InitBuffer(btmp, 64);
  pipe.InitBuffer(bsmall, 32);
  Run<T, U> run{t,  pipe, bx.Get<T>(), by.Get<T>(), bd.Get<T>(), bm.Get<uint8_t>(),
                bz.Get<uint8_t>(), btmp.Get<uint8_t>(), bsmall.Get<uint8_t>(8)};
  GlobalTensor<T> gx, gy, gd;
  GlobalTensor<uint8_t> gz, gm;
  gx.SetGlobalBuffer((__gm__ T*)x, t.size);
  gy.SetGlobalBuffer((__gm__ T*)y, t.size);
  gz.SetGlobalBuffer((__gm__ uint8_t*)z, t.maskBytes);
  DataCopy(run.a, gx, t.size);
  DataCopy(run.b, gy, t.size);
  DataCopy(run.z, gz, t.maskBytes);
  // TBufs order nothing: the vector unit waits for the copies in, MTE3 for the vector results.
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  if (t.op < 20) {
    Duplicate(run.m, static_cast<uint8_t>(0xAB), t.maskBytes);
    run.Compares_();
    gm.SetGlobalBuffer((__gm__ uint8_t*)o, t.maskBytes);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(gm, run.m, t.maskBytes);
  } else {
    Duplicate(run.d, static_cast<T>(t.fill), t.size);
    run.Selects();
    gd.SetGlobalBuffer((__gm__ T*)o, t.size);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(gd, run.d, t.size);
  }
  SetMaskNorm();
  ResetMask();
}

template <class T>
void ByMask(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR o, const Tiling& t) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, float>) {
    switch (t.maskType) {
      case 0: return Kernel<T, uint8_t>(x, y, z, o, t);
      case 1: return Kernel<T, uint16_t>(x, y, z, o, t);
      case 2: return Kernel<T, uint32_t>(x, y, z, o, t);
      case 3: return Kernel<T, uint64_t>(x, y, z, o, t);
      case 4: return Kernel<T, int8_t>(x, y, z, o, t);
      default: return Kernel<T, int16_t>(x, y, z, o, t);
    }
  } else {
    Kernel<T, uint8_t>(x, y, z, o, t);
  }
}

}  // namespace cmpsel

extern "C" __global__ __aicore__ void cmpsel_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR o,
                                                    GM_ADDR workspace, GM_ADDR tiling) {
  const auto& t = *reinterpret_cast<const cmpsel::Tiling*>(tiling);
  switch (t.dt) {
    case 0: cmpsel::ByMask<half>(x, y, z, o, t); break;
    case 1: cmpsel::ByMask<float>(x, y, z, o, t); break;
    case 2: cmpsel::ByMask<int32_t>(x, y, z, o, t); break;
    default: cmpsel::ByMask<int16_t>(x, y, z, o, t); break;
  }
}
