// Conformance kernel: the DataCopy family (DataCopyParams forms GM->UB, UB->GM, UB->UB;
// DataCopyPad GM->UB / UB->GM with DataCopyExtParams / DataCopyPadExtParams and SetPadValue),
// the queue rules (TQue depth, InitBuffer num), LocalMemAllocator and GM accesses past the
// SetGlobalBuffer size, written here from the Ascend C API documentation. The tiling selects a
// case; `x` is the GM input, `o` the GM output the host compares with numpy.
#include "kernel_operator.h"

namespace copyc {
struct Tiling {
  int32_t op;    // case
  int32_t dt;    // 0 half, 1 float, 2 bfloat16_t
  int32_t a[12]; // case arguments
  float fv;      // a value (sentinel / padding), converted to the element type
};
constexpr int32_t kBuf = 4096;  // bytes of every UB buffer

template <class T>
void Fill(const AscendC::LocalTensor<T>& t, float v) {  // scalar writes: defined in memcheck
  for (uint32_t i = 0; i < t.GetSize(); ++i) t.SetValue(i, static_cast<T>(v));
}

// The documented pairing of one HardEvent: pipe DST waits for what pipe SRC issued before it. A
// TQue<VECIN> EnQue/DeQue only orders MTE2 -> V, so an MTE2 copy in and an MTE3 copy out of one
// buffer, scalar writes before a copy, and TBuf / LocalMemAllocator buffers need these.
template <AscendC::HardEvent E>
void Sync() {
  AscendC::SetFlag<E>(EVENT_ID0);
  AscendC::WaitFlag<E>(EVENT_ID0);
}

template <class T>
AscendC::DataCopyParams Params(const int32_t* a) {
  return AscendC::DataCopyParams(a[0], a[1], a[2], a[3]);
}

// 0: GM->UB with DataCopyParams a[0..3], then UB->GM with {a[0], a[1], a[3], a[4]}.
// 1: GM->UB with DataCopyParams a[0..3] into a buffer filled with fv, whole buffer to GM.
// 2: GM->UB contiguous, UB->UB (VECIN->VECOUT) with a[0..3] into fv, whole buffer to GM.
template <class T>
void Strided(const copyc::Tiling& t, AscendC::GlobalTensor<T>& gx, AscendC::GlobalTensor<T>& go) {
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> qin;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> qout;
  pipe.InitBuffer(qin, 1, kBuf);
  pipe.InitBuffer(qout, 1, kBuf);
  const int32_t n = kBuf / sizeof(T);
  auto in = qin.AllocTensor<T>();
  if (t.op == 0) {
    AscendC::DataCopy(in, gx, Params<T>(t.a));
    Sync<AscendC::HardEvent::MTE2_MTE3>();
    AscendC::DataCopy(go, in, AscendC::DataCopyParams(t.a[0], t.a[1], t.a[3], t.a[4]));
  } else if (t.op == 1) {
    Fill(in, t.fv);
    Sync<AscendC::HardEvent::S_MTE2>();
    AscendC::DataCopy(in, gx, Params<T>(t.a));
    Sync<AscendC::HardEvent::MTE2_MTE3>();
    AscendC::DataCopy(go, in, n);
  } else {
    AscendC::DataCopy(in, gx, n);
    qin.EnQue(in);
    in = qin.DeQue<T>();
    auto out = qout.AllocTensor<T>();
    Fill(out, t.fv);
    Sync<AscendC::HardEvent::S_V>();
    AscendC::DataCopy(out, in, Params<T>(t.a));
    qout.EnQue(out);
    out = qout.DeQue<T>();
    AscendC::DataCopy(go, out, n);
    qout.FreeTensor(out);
  }
  qin.FreeTensor(in);
}

// 3: DataCopyPad GM->UB: ext {a[0], a[1] bytes, a[2] bytes, a[3] blocks}, pad {a[4], a[5], a[6],
//    fv}; a[7]: 1 = SetPadValue(a[8]) first; a[9]: 1 = do not fill the buffer first. The whole
//    buffer goes to GM.
// 4: GM->UB contiguous, DataCopyPad UB->GM ext {a[0], a[1] bytes, a[2] blocks, a[3] bytes}.
template <class T>
void Pad(const copyc::Tiling& t, AscendC::GlobalTensor<T>& gx, AscendC::GlobalTensor<T>& go) {
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> qin;
  pipe.InitBuffer(qin, 1, kBuf);
  const int32_t n = kBuf / sizeof(T);
  auto in = qin.AllocTensor<T>();
  if (t.op == 3) {
    if (t.a[9] == 0) Fill(in, -7.0f);
    if (t.a[7] == 1) AscendC::SetPadValue(static_cast<T>(static_cast<float>(t.a[8])));
    AscendC::DataCopyExtParams ext(t.a[0], t.a[1], t.a[2], t.a[3], 0);
    AscendC::DataCopyPadExtParams<T> pad(t.a[4] != 0, t.a[5], t.a[6], static_cast<T>(t.fv));
    Sync<AscendC::HardEvent::S_MTE2>();
    AscendC::DataCopyPad(in, gx, ext, pad);
    Sync<AscendC::HardEvent::MTE2_MTE3>();
    AscendC::DataCopy(go, in, n);
  } else {
    AscendC::DataCopy(in, gx, n);
    Sync<AscendC::HardEvent::MTE2_MTE3>();
    AscendC::DataCopyPad(go, in, AscendC::DataCopyExtParams(t.a[0], t.a[1], t.a[2], t.a[3], 0));
  }
  qin.FreeTensor(in);
}

// 5: queue rules, case a[0]; o[0] = 1 when the case completes.
void Queues(const copyc::Tiling& t, int32_t* out) {
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> q1;
  AscendC::TQue<AscendC::TPosition::VECIN, 2> q2;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> other;
  switch (t.a[0]) {
    case 0: {  // two EnQue in a row on a depth-1 queue with two buffers
      pipe.InitBuffer(q1, 2, 64);
      auto a = q1.AllocTensor<float>();
      auto b = q1.AllocTensor<float>();
      q1.EnQue(a);
      q1.EnQue(b);
      break;
    }
    case 1: {  // the same on a depth-2 queue: legal (the TQue page's preload example)
      pipe.InitBuffer(q2, 2, 64);
      auto a = q2.AllocTensor<float>();
      auto b = q2.AllocTensor<float>();
      q2.EnQue(a);
      q2.EnQue(b);
      a = q2.DeQue<float>();
      b = q2.DeQue<float>();
      q2.FreeTensor(a);
      q2.FreeTensor(b);
      break;
    }
    case 2: {  // DeQue of an empty queue
      pipe.InitBuffer(q1, 1, 64);
      (void)q1.DeQue<float>();
      break;
    }
    case 3: {  // more live tensors than buffers
      pipe.InitBuffer(q1, 1, 64);
      (void)q1.AllocTensor<float>();
      (void)q1.AllocTensor<float>();
      break;
    }
    case 4: {  // FreeTensor of a tensor of another queue
      pipe.InitBuffer(q1, 1, 64);
      pipe.InitBuffer(other, 1, 64);
      auto a = other.AllocTensor<float>();
      q1.FreeTensor(a);
      break;
    }
    case 5: {  // EnQue of a tensor of another queue
      pipe.InitBuffer(q1, 1, 64);
      pipe.InitBuffer(other, 1, 64);
      q1.EnQue(other.AllocTensor<float>());
      break;
    }
    case 6: {  // queue buffers of the kernel: a[1] and a[2] in two InitBuffer calls
      pipe.InitBuffer(q1, t.a[1], 32);
      pipe.InitBuffer(other, t.a[2], 32);
      break;
    }
    case 7: pipe.InitBuffer(q1, t.a[1], 32); break;  // num past uint8_t
    default: AscendC::cpu::Fail("test: bad queue case ", t.a[0]);
  }
  out[0] = 1;
}

// 7: LocalMemAllocator, case a[0]: 0 copy x through two allocated tensors (a[1] elements) and
// report GetCurAddr() before, the distance of the two tensors and GetCurAddr() after in the last
// three int32 of o; 1 allocate a[1] then a[2]
// elements; 2 TPipe then LocalMemAllocator; 3 LocalMemAllocator then TPipe.
template <class T>
void Allocator(const copyc::Tiling& t, AscendC::GlobalTensor<T>& gx, AscendC::GlobalTensor<T>& go,
               int32_t* out) {
  if (t.a[0] == 2) {
    AscendC::TPipe pipe;
    AscendC::LocalMemAllocator<AscendC::Hardware::UB> al;
    return;
  }
  AscendC::LocalMemAllocator<> al;
  if (t.a[0] == 3) {
    AscendC::TPipe pipe;
    return;
  }
  if (t.a[0] == 1) {
    (void)al.Alloc<AscendC::TPosition::VECIN, T>(t.a[1]);
    (void)al.Alloc<T>(t.a[2]);
    out[0] = static_cast<int32_t>(al.GetCurAddr());
    return;
  }
  const uint32_t before = al.GetCurAddr();
  auto a = al.Alloc<AscendC::TPosition::VECIN, T>(t.a[1]);
  auto b = al.Alloc<AscendC::TPosition::VECOUT, T, 256>();
  AscendC::DataCopy(a, gx, t.a[1]);
  Sync<AscendC::HardEvent::MTE2_V>();
  AscendC::DataCopy(b, a, t.a[1]);
  Sync<AscendC::HardEvent::V_MTE3>();
  AscendC::DataCopy(go, b, t.a[1]);
  int32_t* info = out + kBuf - 3;  // the last three int32 of o (4 * kBuf bytes)
  info[0] = static_cast<int32_t>(before);
  info[1] = static_cast<int32_t>(b.GetPhyAddr() - a.GetPhyAddr());  // elements apart
  info[2] = static_cast<int32_t>(al.GetCurAddr());
}

// 8: GM past the SetGlobalBuffer size: x is given a[0] elements, DataCopy a[1] elements GM->UB
//    ->GM, then GetValue(a[2]) into o[a[1]].
template <class T>
void PastSize(const copyc::Tiling& t, GM_ADDR x, AscendC::GlobalTensor<T>& go) {
  AscendC::GlobalTensor<T> gx;
  gx.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), t.a[0]);
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::TPosition::VECIN> buf;
  pipe.InitBuffer(buf, kBuf);
  auto b = buf.Get<T>();
  AscendC::DataCopy(b, gx, t.a[1]);
  Sync<AscendC::HardEvent::MTE2_MTE3>();
  AscendC::DataCopy(go, b, t.a[1]);
  go.SetValue(t.a[1], gx.GetValue(t.a[2]));
}

// 9: UB->UB into a VECIN buffer. 10: SetPadValue of another width than the copy's elements.
template <class T>
void Refused(const copyc::Tiling& t, AscendC::GlobalTensor<T>& gx) {
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
  AscendC::TBuf<AscendC::TPosition::VECCALC> calc;
  pipe.InitBuffer(q, 1, kBuf);
  pipe.InitBuffer(calc, kBuf);
  auto in = q.AllocTensor<T>();
  if (t.op == 9) {
    AscendC::DataCopy(in, calc.Get<T>(), AscendC::DataCopyParams(1, 1, 0, 0));
  } else {
    AscendC::SetPadValue(static_cast<int8_t>(1));
    AscendC::DataCopyPad(in, gx, AscendC::DataCopyExtParams(1, 2 * sizeof(T), 0, 0, 0),
                         AscendC::DataCopyPadExtParams<T>(false, 0, 1, T(0)));
  }
}

// 6: a limit, case a[0]: 0 DataCopy GM->UB, 1 UB->GM, 2 UB->UB with DataCopyParams a[1..4];
//    3 DataCopyPad GM->UB, 4 UB->GM with ext {a[1], a[2], 0, 0} (pads a[3], a[4]); 5 DataCopy
//    GM->UB into a misaligned view.
template <class T>
void Limits(const copyc::Tiling& t, AscendC::GlobalTensor<T>& gx, AscendC::GlobalTensor<T>& go) {
  AscendC::TPipe pipe;
  AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
  AscendC::TQue<AscendC::TPosition::VECOUT, 1> qo;
  pipe.InitBuffer(q, 1, kBuf);
  pipe.InitBuffer(qo, 1, kBuf);
  auto in = q.AllocTensor<T>();
  auto out = qo.AllocTensor<T>();
  const AscendC::DataCopyParams p(t.a[1], t.a[2], t.a[3], t.a[4]);
  const AscendC::DataCopyExtParams e(t.a[1], t.a[2], 0, 0, 0);
  switch (t.a[0]) {
    case 0: AscendC::DataCopy(in, gx, p); break;
    case 1: AscendC::DataCopy(go, in, p); break;
    case 2: AscendC::DataCopy(out, in, p); break;
    case 3:
      AscendC::DataCopyPad(in, gx, e, AscendC::DataCopyPadExtParams<T>(true, t.a[3], t.a[4], T(0)));
      break;
    case 4: AscendC::DataCopyPad(go, in, e); break;
    default: AscendC::DataCopy(in[1], gx, p); break;  // 5: a UB operand 4 bytes off a DataBlock
  }
}

template <class T>
void Run(const copyc::Tiling& t, GM_ADDR x, GM_ADDR o) {
  AscendC::GlobalTensor<T> gx, go;
  gx.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), kBuf * 4 / sizeof(T));
  go.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(o), kBuf * 4 / sizeof(T));
  auto* out = reinterpret_cast<int32_t*>(o);
  switch (t.op) {
    case 0: case 1: case 2: Strided(t, gx, go); break;
    case 3: case 4: Pad(t, gx, go); break;
    case 5: Queues(t, out); break;
    case 6: Limits(t, gx, go); break;
    case 7: Allocator(t, gx, go, out); break;
    case 8: PastSize<T>(t, x, go); break;
    case 9: case 10: Refused(t, gx); break;
    default: AscendC::cpu::Fail("test: bad op ", t.op);
  }
}
}  // namespace copyc

extern "C" __global__ __aicore__ void copy_kernel(GM_ADDR x, GM_ADDR o, GM_ADDR workspace,
                                                  GM_ADDR tiling) {
  const auto& t = *reinterpret_cast<const copyc::Tiling*>(tiling);
  if (t.dt == 0) copyc::Run<half>(t, x, o);
  else if (t.dt == 1) copyc::Run<float>(t, x, o);
  else copyc::Run<bfloat16_t>(t, x, o);
}
