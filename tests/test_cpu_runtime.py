"""Conformance tests of the CPU ``kernel_operator.h`` against the documented Ascend C semantics.

One test library (``kernel.cpp`` + ``cpu_entry.cpp``, built like emitted code) holds a single
kernel ``conformance(x, y, z, o, workspace, tiling)`` whose tiling selects a test case; each test
fills the GM arrays, runs it through :class:`CpuKernel` and compares with a numpy reference
written from docs/CPU_RUNTIME.md and shared/ASCEND_FACTS.md.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from pyasc_mlir.platform import get_platform
from pyasc_mlir.runtime import cpu
from pyasc_mlir.runtime.cpu import CompileError, CpuKernel, KernelError, build_library

PLATFORM = get_platform("910B2")

KERNEL_CPP = r"""
#include "kernel_operator.h"
using namespace AscendC;

struct Tiling {
  int32_t op, dt, n, sx, sy, sz, so;
  int32_t a[8];
  float f[4];
};

struct Args {
  GM_ADDR x;  // GM_ADDR is a macro (as in Ascend C): one declarator per line
  GM_ADDR y;
  GM_ADDR z;
  GM_ADDR o;
  const Tiling* t;
};

template <class T>
GlobalTensor<T> G(GM_ADDR p, int32_t size) {
  GlobalTensor<T> g;
  g.SetGlobalBuffer((__gm__ T*)p, size);
  return g;
}

// dtype codes: 0 half, 1 float, 2 int32, 3 int16, 4 uint8 (casts only)
template <bool kWithU8 = false, class Fn>
void Dispatch(int dt, Fn fn) {
  switch (dt) {
    case 0: fn(half(0)); break;
    case 1: fn(float(0)); break;
    case 2: fn(int32_t(0)); break;
    case 3: fn(int16_t(0)); break;
    case 4:
      if constexpr (kWithU8) {
        fn(uint8_t(0));
        break;
      }
      [[fallthrough]];
    default: cpu::Fail("test: bad dtype code ", dt);
  }
}

template <class T> constexpr bool kFloat = std::is_same_v<T, half> || std::is_same_v<T, float>;

// 1/2/3: DataCopy GM->UB, UB->GM, UB->UB with count n; UB pre-filled with sentinel f[0].
template <class T>
void CaseDataCopy(const Args& a) {
  const Tiling& t = *a.t;
  TPipe pipe;
  TBuf<TPosition::VECIN> b0, b1;
  pipe.InitBuffer(b0, 256 * sizeof(T));
  pipe.InitBuffer(b1, 256 * sizeof(T));
  LocalTensor<T> u0 = b0.Get<T>(), u1 = b1.Get<T>();
  GlobalTensor<T> gx = G<T>(a.x, t.sx), go = G<T>(a.o, t.so);
  Duplicate(u0, (T)t.f[0], 256);
  if (t.op == 1) {
    DataCopy(u0, gx, t.n);
    DataCopy(go, u0, 256);
  } else if (t.op == 2) {
    DataCopy(u0, gx, 256);
    DataCopy(go, u0, t.n);
  } else {
    DataCopy(u1, gx, 256);
    DataCopy(u0, u1, t.n);
    DataCopy(go, u0, 256);
  }
}

// 4: DataCopyPad GM->UB into a UB buffer of a[7] elements pre-filled with f[0].
// 5: DataCopyPad UB->GM from a UB buffer of a[7] elements loaded from x.
template <class T>
void CaseDataCopyPad(const Args& a) {
  const Tiling& t = *a.t;
  const int32_t size = t.a[7];
  TPipe pipe;
  TBuf<TPosition::VECIN> b0;
  pipe.InitBuffer(b0, size * sizeof(T));
  LocalTensor<T> u = b0.Get<T>();
  GlobalTensor<T> gx = G<T>(a.x, t.sx), go = G<T>(a.o, t.so);
  DataCopyExtParams p{(uint16_t)t.a[0], (uint32_t)t.a[1], (uint32_t)t.a[2], (uint32_t)t.a[3], 0};
  if (t.op == 4) {
    Duplicate(u, (T)t.f[0], size);
    DataCopyPad(u, gx, p, DataCopyPadExtParams<T>{t.a[4] != 0, (uint8_t)t.a[5], (uint8_t)t.a[6],
                                                  (T)t.f[1]});
    DataCopy(go, u, size);
  } else {
    DataCopy(u, gx, size);
    DataCopyPad(go, u, p);
  }
}

// Loads x, y into UB buffers of P = a[7] elements; dst pre-filled with f[0]; a[1] = in-place.
template <class T>
struct Three {
  TPipe pipe;
  TBuf<TPosition::VECIN> b0, b1, b2;
  LocalTensor<T> u0, u1, u2;
  GlobalTensor<T> go;
  int32_t P;
  explicit Three(const Args& a) {
    const Tiling& t = *a.t;
    P = t.a[7];
    pipe.InitBuffer(b0, P * sizeof(T));
    pipe.InitBuffer(b1, P * sizeof(T));
    pipe.InitBuffer(b2, P * sizeof(T));
    u0 = b0.Get<T>();
    u1 = b1.Get<T>();
    u2 = b2.Get<T>();
    DataCopy(u0, G<T>(a.x, t.sx), P);
    DataCopy(u1, G<T>(a.y, t.sy), P);
    Duplicate(u2, (T)t.f[0], P);
    go = G<T>(a.o, t.so);
  }
  LocalTensor<T> dst(const Tiling& t) { return t.a[1] ? u0 : u2; }
  void Out(const Tiling& t) { DataCopy(go, dst(t), P); }
};

// 6: binary ops (a[0]: 0 Add 1 Sub 2 Mul 3 Div 4 Max 5 Min)
template <class T>
void CaseBinary(const Args& a) {
  const Tiling& t = *a.t;
  Three<T> s(a);
  LocalTensor<T> d = s.dst(t);
  switch (t.a[0]) {
    case 0: Add(d, s.u0, s.u1, t.n); break;
    case 1: Sub(d, s.u0, s.u1, t.n); break;
    case 2: Mul(d, s.u0, s.u1, t.n); break;
    case 3:
      if constexpr (kFloat<T>) Div(d, s.u0, s.u1, t.n);
      break;
    case 4: Max(d, s.u0, s.u1, t.n); break;
    case 5: Min(d, s.u0, s.u1, t.n); break;
    default: cpu::Fail("test: bad binary op");
  }
  s.Out(t);
}

// 7: unary ops (a[0]: 0 Exp 1 Ln 2 Abs 3 Sqrt 4 Rsqrt 5 Reciprocal 6 Relu 7 Sin 8 Cos)
template <class T>
void CaseUnary(const Args& a) {
  const Tiling& t = *a.t;
  Three<T> s(a);
  LocalTensor<T> d = s.dst(t);
  if constexpr (kFloat<T>) {
    switch (t.a[0]) {
      case 0: Exp(d, s.u0, t.n); break;
      case 1: Ln(d, s.u0, t.n); break;
      case 3: Sqrt(d, s.u0, t.n); break;
      case 4: Rsqrt(d, s.u0, t.n); break;
      case 5: Reciprocal(d, s.u0, t.n); break;
      case 7: Sin(d, s.u0, t.n); break;
      case 8: Cos(d, s.u0, t.n); break;
      default: break;
    }
  }
  if (t.a[0] == 2) Abs(d, s.u0, t.n);
  if (t.a[0] == 6) Relu(d, s.u0, t.n);
  s.Out(t);
}

// 8: scalar ops (a[0]: 0 Adds 1 Muls 2 Maxs 3 Mins, scalar f[1]); 9: Duplicate(f[1]), or
// with a[0] = 1 CreateVecIndex(first f[1]).
template <class T>
void CaseScalar(const Args& a) {
  const Tiling& t = *a.t;
  Three<T> s(a);
  LocalTensor<T> d = s.dst(t);
  const T v = (T)t.f[1];
  if (t.op == 9 && t.a[0] == 1) {
    CreateVecIndex(d, v, (uint32_t)t.n);
  } else if (t.op == 9) {
    Duplicate(d, v, t.n);
  } else {
    switch (t.a[0]) {
      case 0: Adds(d, s.u0, v, t.n); break;
      case 1: Muls(d, s.u0, v, t.n); break;
      case 2: Maxs(d, s.u0, v, t.n); break;
      case 3: Mins(d, s.u0, v, t.n); break;
      default: cpu::Fail("test: bad scalar op");
    }
  }
  s.Out(t);
}

// 10: Cast from dtype dt to dtype a[1] with mode a[0].
template <class D, class S>
void CaseCast(const Args& a) {
  const Tiling& t = *a.t;
  const int32_t P = t.a[7];
  TPipe pipe;
  TBuf<TPosition::VECIN> bs, bd;
  pipe.InitBuffer(bs, P * sizeof(S));
  pipe.InitBuffer(bd, P * sizeof(D));
  LocalTensor<S> us = bs.Get<S>();
  LocalTensor<D> ud = bd.Get<D>();
  DataCopy(us, G<S>(a.x, t.sx), P);
  Duplicate(ud, (D)t.f[0], P);
  Cast(ud, us, (RoundMode)t.a[0], t.n);
  DataCopy(G<D>(a.o, t.so), ud, P);
}

// 11: Compare(mode a[0]) -> mask bytes in o (uint8), mask pre-filled with 0xAB.
// 12: Select(mask z, x, y) (a[2] = 1: tensor/scalar with f[1]).
template <class T>
void CaseCompareSelect(const Args& a) {
  const Tiling& t = *a.t;
  Three<T> s(a);
  TBuf<TPosition::VECIN> bm;
  const int32_t mbytes = (s.P / 8 + 31) / 32 * 32;
  s.pipe.InitBuffer(bm, mbytes);
  LocalTensor<uint8_t> m = bm.Get<uint8_t>();
  if (t.op == 11) {
    Duplicate(m, (uint8_t)0xAB, mbytes);
    Compare(m, s.u0, s.u1, (CMPMODE)t.a[0], t.n);
    DataCopy(G<uint8_t>(a.o, t.so), m, mbytes);
  } else {
    DataCopy(m, G<uint8_t>(a.z, t.sz), mbytes);
    if (t.a[2])
      Select(s.u2, m, s.u0, (T)t.f[1], SELMODE::VSEL_TENSOR_SCALAR_MODE, t.n);
    else
      Select(s.u2, m, s.u0, s.u1, SELMODE::VSEL_TENSOR_TENSOR_MODE, t.n);
    DataCopy(s.go, s.u2, s.P);
  }
}

// 13: reductions (a[0]: 0 Sum 1 Max 2 Min, 3 WholeReduceSum 4 WholeReduceMax, 5/6 Brcb; a[1]
// calIndex); dst (32 B, or the o array's size) pre-filled with f[0].
template <class T>
void CaseReduce(const Args& a) {
  const Tiling& t = *a.t;
  if constexpr (kFloat<T>) {
    const int32_t P = t.a[7];
    TPipe pipe;
    TBuf<TPosition::VECIN> bs, bd, bw;
    const int32_t nd = t.so > int32_t(32 / sizeof(T)) ? t.so : int32_t(32 / sizeof(T));
    pipe.InitBuffer(bs, P * sizeof(T));
    pipe.InitBuffer(bd, nd * sizeof(T));
    pipe.InitBuffer(bw, P * sizeof(T));
    LocalTensor<T> s = bs.Get<T>(), d = bd.Get<T>(), w = bw.Get<T>();
    DataCopy(s, G<T>(a.x, t.sx), P);
    Duplicate(d, (T)t.f[0], nd);
    if (t.a[0] == 0) ReduceSum(d, s, w, t.n);
    if (t.a[0] == 1) ReduceMax(d, s, w, t.n, t.a[1] != 0);
    if (t.a[0] == 2) ReduceMin(d, s, w, t.n, t.a[1] != 0);
    // many rows: a[2] repeats of the first n lanes, src repeats a[3] DataBlocks apart
    if (t.a[0] == 3) WholeReduceSum(d, s, t.n, t.a[2], 1, 1, t.a[3]);
    if (t.a[0] == 4) WholeReduceMax(d, s, t.n, t.a[2], 1, 1, t.a[3], ReduceOrder::ORDER_ONLY_VALUE);
    // 5: Brcb of a[2] repeats, dstBlkStride a[3], dstRepStride a[4]; 6: default strides
    if (t.a[0] == 5) Brcb(d, s, (uint8_t)t.a[2], BrcbRepeatParams(t.a[3], t.a[4]));
    if (t.a[0] == 6) Brcb(d, s, (uint8_t)t.a[2], BrcbRepeatParams());
    DataCopy(G<T>(a.o, t.so), d, nd);
  }
}

// 14: error cases (a[0] selects); o[0] = 1 when the case did not throw.
void CaseErrors(const Args& a) {
  const Tiling& t = *a.t;
  TPipe pipe;
  GlobalTensor<float> gx = G<float>(a.x, t.sx);
  switch (t.a[0]) {
    case 0: {  // one TBuf of a[1] bytes
      TBuf<TPosition::VECIN> b;
      pipe.InitBuffer(b, t.a[1]);
      break;
    }
    case 1: {  // GetValue past the end
      TBuf<TPosition::VECIN> b;
      pipe.InitBuffer(b, 64);
      (void)b.Get<float>().GetValue(16);
      break;
    }
    case 2: {  // SetValue at -1
      TBuf<TPosition::VECIN> b;
      pipe.InitBuffer(b, 64);
      b.Get<float>().SetValue(-1, 1.0f);
      break;
    }
    case 3: {  // Add with count > size
      TBuf<TPosition::VECIN> b0, b1;
      pipe.InitBuffer(b0, 128);
      pipe.InitBuffer(b1, 256);
      Add(b1.Get<float>(), b1.Get<float>(), b0.Get<float>(), 64);
      break;
    }
    case 4: {  // misaligned view in a vector op
      TBuf<TPosition::VECIN> b;
      pipe.InitBuffer(b, 256);
      LocalTensor<float> v = b.Get<float>();
      Add(v, v[1], v, 8);
      break;
    }
    case 5: {  // allocating a buffer that is not freed
      TQue<TPosition::VECIN, 1> q;
      pipe.InitBuffer(q, 1, 64);
      (void)q.AllocTensor<float>();
      (void)q.AllocTensor<float>();
      break;
    }
    case 6: {  // DeQue on an empty queue
      TQue<TPosition::VECIN, 1> q;
      pipe.InitBuffer(q, 1, 64);
      (void)q.DeQue<float>();
      break;
    }
    case 7:  // GlobalTensor index past the end
      (void)gx.GetValue(t.sx);
      break;
    case 8: {  // DataCopy beyond the GM tensor
      TBuf<TPosition::VECIN> b;
      pipe.InitBuffer(b, 1024);
      DataCopy(b.Get<float>(), gx, t.sx + 8);
      break;
    }
    case 9: {  // Compare count not a multiple of 256 B
      TBuf<TPosition::VECIN> b, m;
      pipe.InitBuffer(b, 1024);
      pipe.InitBuffer(m, 32);
      Compare(m.Get<uint8_t>(), b.Get<float>(), b.Get<float>(), CMPMODE::LT, 32);
      break;
    }
    case 10: {  // double free
      TQue<TPosition::VECIN, 1> q;
      pipe.InitBuffer(q, 1, 64);
      LocalTensor<float> x = q.AllocTensor<float>();
      q.FreeTensor(x);
      q.FreeTensor(x);
      break;
    }
    case 11: {  // view offset past the end
      TBuf<TPosition::VECIN> b;
      pipe.InitBuffer(b, 64);
      (void)b.Get<float>()[17];
      break;
    }
    case 12: {  // DataCopyPad UB side past the end (2 blocks of 40 B need 2 x 64 B of UB)
      TBuf<TPosition::VECIN> b;
      pipe.InitBuffer(b, 64);
      DataCopyPad(b.Get<float>(), gx, DataCopyExtParams{2, 40, 0, 0, 0},
                  DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
      break;
    }
    case 13: {  // two buffers that together exceed the usable UB
      TBuf<TPosition::VECIN> b0, b1;
      pipe.InitBuffer(b0, t.a[1]);
      pipe.InitBuffer(b1, t.a[2]);
      break;
    }
    case 14: {  // a LocalTensor that was never allocated
      LocalTensor<float> x;
      Duplicate(x, 1.0f, 8);
      break;
    }
    case 15: {  // DataCopy into a misaligned UB view
      TBuf<TPosition::VECIN> b;
      pipe.InitBuffer(b, 1024);
      DataCopy(b.Get<float>()[4], gx, 8);
      break;
    }
    case 16: {  // round robin over 2 buffers: the third AllocTensor finds buffer 0 busy
      TQue<TPosition::VECIN, 2> q;
      pipe.InitBuffer(q, 2, 64);
      (void)q.AllocTensor<float>();
      (void)q.AllocTensor<float>();
      (void)q.AllocTensor<float>();
      break;
    }
    case 17: {  // UB->GM DataCopyPad beyond the GM tensor
      TBuf<TPosition::VECIN> b;
      pipe.InitBuffer(b, 1024);
      DataCopyPad(gx, b.Get<float>(), DataCopyExtParams{1, (uint32_t)(t.sx * 4 + 4), 0, 0, 0});
      break;
    }
    default: cpu::Fail("test: bad error case");
  }
  G<int32_t>(a.o, t.so).SetValue(0, 1);
}

// 15: multi-block: o[8*idx..] = {idx, num, UB word read before writing, 0...}; fails in block
// a[0] when a[0] >= 0.
void CaseBlocks(const Args& a) {
  const Tiling& t = *a.t;
  if (t.a[0] >= 0 && GetBlockIdx() == t.a[0])
    cpu::Fail("test: failing on purpose in block ", t.a[0]);
  TPipe pipe;
  TBuf<TPosition::VECIN> b;
  pipe.InitBuffer(b, 64);
  LocalTensor<int32_t> u = b.Get<int32_t>();
  const int32_t prev = u.GetValue(8);
  u.SetValue(8, 100 + (int32_t)GetBlockIdx());
  u.SetValue(0, (int32_t)GetBlockIdx());
  u.SetValue(1, (int32_t)GetBlockNum());
  u.SetValue(2, prev);
  DataCopy(G<int32_t>(a.o, t.so)[GetBlockIdx() * 8], u, 8);
}

// 18: the hard SyncAll: block b writes 10 + b into its 64-byte slot of the workspace, waits at
// SyncAll(), then writes o[8*b..] = {every block's slot value in block order}; a block that
// read before the others wrote would see 0 (the host zero-fills the workspace); the writes leave
// the data cache (DataCacheCleanAndInvalid). a[0] = 1: only
// SyncAll() (the launch without a workspace that it must refuse).
void CaseSyncAll(const Args& a, GM_ADDR workspace) {
  const Tiling& t = *a.t;
  if (t.a[0] == 1) {
    SyncAll();
    return;
  }
  GlobalTensor<int32_t> ws;
  ws.SetGlobalBuffer((__gm__ int32_t*)workspace, GetBlockNum() * 16);
  ws.SetValue(GetBlockIdx() * 16, 10 + (int32_t)GetBlockIdx());
  // the scalar write leaves this core's data cache before the others read it
  DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(
      ws[GetBlockIdx() * 16]);
  SyncAll();
  GlobalTensor<int32_t> o = G<int32_t>(a.o, t.so);
  for (int64_t c = 0; c < GetBlockNum(); ++c)
    o.SetValue(GetBlockIdx() * 8 + c, ws.GetValue(c * 16));
  DataCacheCleanAndInvalid<int32_t, CacheLine::ENTIRE_DATA_CACHE, DcciDst::CACHELINE_OUT>(o);
}

// 16: the canonical double-buffered pipeline, o = x * 2 + 1 in tiles of a[0] floats; y (int32)
// gets the UB offsets (relative to the first one) of every allocated tensor: in, out per tile.
void CasePipeline(const Args& a) {
  const Tiling& t = *a.t;
  const int32_t tile = t.a[0], tiles = t.n / tile;
  TPipe pipe;
  TQue<TPosition::VECIN, 2> qin;
  TQue<TPosition::VECOUT, 2> qout;
  pipe.InitBuffer(qin, 2, tile * sizeof(float));
  pipe.InitBuffer(qout, 2, tile * sizeof(float));
  GlobalTensor<float> gx = G<float>(a.x, t.sx), go = G<float>(a.o, t.so);
  GlobalTensor<int32_t> log = G<int32_t>(a.y, t.sy);
  uint8_t* base = nullptr;
  for (int32_t i = 0; i < tiles; ++i) {
    LocalTensor<float> xin = qin.AllocTensor<float>();
    if (base == nullptr) base = (uint8_t*)xin.GetPhyAddr();
    log.SetValue(2 * i, (int32_t)((uint8_t*)xin.GetPhyAddr() - base));
    DataCopy(xin, gx[i * tile], tile);
    qin.EnQue(xin);
    LocalTensor<float> xv = qin.DeQue<float>();
    LocalTensor<float> yv = qout.AllocTensor<float>();
    log.SetValue(2 * i + 1, (int32_t)((uint8_t*)yv.GetPhyAddr() - base));
    Muls(yv, xv, 2.0f, tile);
    Adds(yv, yv, 1.0f, tile);
    qout.EnQue(yv);
    qin.FreeTensor(xv);
    LocalTensor<float> yo = qout.DeQue<float>();
    DataCopy(go[i * tile], yo, tile);
    qout.FreeTensor(yo);
  }
}

// 17: events and barriers are no-ops; o = {1, UB bytes, usable UB bytes, TPipe bytes used}.
void CaseEvents(const Args& a) {
  const Tiling& t = *a.t;
  TPipe pipe;
  TBuf<TPosition::VECIN> b;
  pipe.InitBuffer(b, 100);
  TEventID e = GetTPipePtr()->FetchEventID(HardEvent::MTE2_V);
  SetFlag<HardEvent::MTE2_V>(e);
  WaitFlag<HardEvent::MTE2_V>(e);
  TEventID e2 = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
  SetFlag<HardEvent::V_MTE3>(e2);
  WaitFlag<HardEvent::V_MTE3>(e2);
  PipeBarrier<PIPE_V>();
  PipeBarrier<PIPE_ALL>();
  GlobalTensor<int32_t> go = G<int32_t>(a.o, t.so);
  go.SetValue(0, 1);
  go.SetValue(1, (int32_t)cpu::kUbBytes);
  go.SetValue(2, (int32_t)cpu::kUbUsable);
  go.SetValue(3, (int32_t)pipe.CpuUsedBytes());
}

// The tests pass round and compare modes as integer codes (Cast: a[0] sweeps MODES, Compare:
// a[0] sweeps CMP); these are the codes of the modes by name.
static_assert((int)RoundMode::CAST_NONE == 0 && (int)RoundMode::CAST_RINT == 1 &&
              (int)RoundMode::CAST_FLOOR == 2 && (int)RoundMode::CAST_CEIL == 3 &&
              (int)RoundMode::CAST_ROUND == 4 && (int)RoundMode::CAST_TRUNC == 5 &&
              (int)RoundMode::CAST_ODD == 6, "Cast tests: MODES order");
static_assert((int)CMPMODE::LT == 0 && (int)CMPMODE::GT == 1 && (int)CMPMODE::EQ == 2 &&
              (int)CMPMODE::LE == 3 && (int)CMPMODE::GE == 4 && (int)CMPMODE::NE == 5,
              "Compare tests: CMP order");

// 30: the scalar path of emitted kernels with every HardEvent by name: o[0..P) = max(x[0..n))
// (DataCopy in, MTE2->V, ReduceMax, V->S, GetValue, S->V, Duplicate, V->MTE3, DataCopy out;
// the remaining events around them are no-ops on the CPU as well).
template <class T>
void CaseScalarPath(const Args& a) {
  const Tiling& t = *a.t;
  if constexpr (kFloat<T>) {
    const int32_t P = t.a[7];
    TPipe pipe;
    TBuf<TPosition::VECIN> bs, bd, bw;
    pipe.InitBuffer(bs, P * sizeof(T));
    pipe.InitBuffer(bd, P * sizeof(T));
    pipe.InitBuffer(bw, P * sizeof(T));
    LocalTensor<T> s = bs.Get<T>(), d = bd.Get<T>(), w = bw.Get<T>();
    TEventID e = GetTPipePtr()->FetchEventID(HardEvent::MTE3_MTE2);
    SetFlag<HardEvent::MTE3_MTE2>(e);
    WaitFlag<HardEvent::MTE3_MTE2>(e);
    DataCopy(s, G<T>(a.x, t.sx), P);
    e = GetTPipePtr()->FetchEventID(HardEvent::MTE2_V);
    SetFlag<HardEvent::MTE2_V>(e);
    WaitFlag<HardEvent::MTE2_V>(e);
    e = GetTPipePtr()->FetchEventID(HardEvent::MTE2_S);
    SetFlag<HardEvent::MTE2_S>(e);
    WaitFlag<HardEvent::MTE2_S>(e);
    ReduceMax(d, s, w, t.n);
    e = GetTPipePtr()->FetchEventID(HardEvent::V_MTE2);  // a next copy-in into s would wait
    SetFlag<HardEvent::V_MTE2>(e);
    WaitFlag<HardEvent::V_MTE2>(e);
    e = GetTPipePtr()->FetchEventID(HardEvent::V_S);
    SetFlag<HardEvent::V_S>(e);
    WaitFlag<HardEvent::V_S>(e);
    const T v = d.GetValue(0);
    e = GetTPipePtr()->FetchEventID(HardEvent::S_V);
    SetFlag<HardEvent::S_V>(e);
    WaitFlag<HardEvent::S_V>(e);
    Duplicate(d, v, P);
    e = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
    SetFlag<HardEvent::V_MTE3>(e);
    WaitFlag<HardEvent::V_MTE3>(e);
    e = GetTPipePtr()->FetchEventID(HardEvent::S_MTE3);
    SetFlag<HardEvent::S_MTE3>(e);
    WaitFlag<HardEvent::S_MTE3>(e);
    DataCopy(G<T>(a.o, t.so), d, P);
    e = GetTPipePtr()->FetchEventID(HardEvent::MTE3_V);
    SetFlag<HardEvent::MTE3_V>(e);
    WaitFlag<HardEvent::MTE3_V>(e);
  }
}

// 31: Matmul (half/float A, B in GM; f32 C to UB). a[0..2] = singleCoreM/N/K, a[3]/a[4] =
// transpose A/B, a[5] = baseK, a[6] = baseM, a[7] = baseN; f[1..3] = SetTail(m, n, k) (f[1] == 0:
// no SetTail); f[0] = error case (0: none). C blocks go one after another (baseM * baseN each,
// pre-filled with -7) while Iterate() returns true; o = all blocks, then the block count.
template <class T>
void CaseMatmul(const Args& a) {
  if constexpr (kFloat<T>) {
    const Tiling& t = *a.t;
    const int err = static_cast<int>(t.f[0]);
    const int m = t.a[0], n = t.a[1], k = t.a[2];
    const bool ta = t.a[3] != 0, tb = t.a[4] != 0;
    TCubeTiling ct{};
    ct.usedCoreNum = 1;
    ct.M = m;
    ct.N = n;
    ct.Ka = k;
    ct.Kb = k;
    ct.singleCoreM = m;
    ct.singleCoreN = n;
    ct.singleCoreK = k;
    ct.baseM = t.a[6];
    ct.baseN = t.a[7];
    ct.baseK = err == 7 ? 4096 : t.a[5];
    ct.depthA1 = 2;
    ct.depthB1 = 2;
    ct.stepM = 1;
    ct.stepN = 1;
    ct.stepKa = 1;
    ct.stepKb = 1;
    ct.dbL0A = 1;
    ct.dbL0B = 1;
    ct.dbL0C = 1;
    ct.iterateOrder = 0;
    TPipe pipe;
    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, T, true>,
           MatmulType<TPosition::GM, CubeFormat::ND, T, true>,
           MatmulType<TPosition::VECIN, CubeFormat::ND, float>,
           MatmulType<TPosition::GM, CubeFormat::ND, float>> mm;
    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, T, false>,
           MatmulType<TPosition::GM, CubeFormat::ND, T, false>,
           MatmulType<TPosition::VECIN, CubeFormat::ND, float>,
           MatmulType<TPosition::GM, CubeFormat::ND, float>> plain;
    TBuf<TPosition::VECCALC> early;
    if (err == 6) pipe.InitBuffer(early, 32);
    // as the emitted Cube kernels: MIX 1:1, the system workspace set first (this case's
    // Matmul never touches it, so any GM buffer serves)
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_1);
    SetSysWorkspace(a.o);
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &ct, plain, &ct);
    const int64_t blk = static_cast<int64_t>(ct.baseM) * ct.baseN;
    const int64_t cap = t.so - 1;
    TBuf<TPosition::VECIN> cb;
    pipe.InitBuffer(cb, cap * sizeof(float));
    LocalTensor<float> c = cb.Get<float>();
    Duplicate(c, -7.0f, cap);
    GlobalTensor<T> ga = G<T>(a.x, t.sx), gb = G<T>(a.y, t.sy);
    GlobalTensor<float> go = G<float>(a.o, t.so);
    if (err == 2) plain.SetTensorA(ga, true);
    mm.SetTensorA(ga, ta);
    if (err != 3) mm.SetTensorB(gb, tb);
    if (t.f[1] != 0 || err == 5)
      mm.SetTail(err == 5 ? m + 1 : static_cast<int>(t.f[1]), static_cast<int>(t.f[2]),
                 static_cast<int>(t.f[3]));
    if (err == 8) mm.GetTensorC(c, 0, true);
    int64_t count = 0;
    while (mm.Iterate()) {
      if (err == 1) {
        mm.GetTensorC(c[cap - blk + 8], 0, true);
      }
      mm.GetTensorC(c[count * blk], 0, true);
      ++count;
    }
    mm.End();
    if (err == 4) mm.Iterate();
    DataCopy(go, c, cap);
    go.SetValue(cap, static_cast<float>(count));
  }
}

extern "C" __global__ __aicore__ void conformance(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR o,
                                                  GM_ADDR workspace, GM_ADDR tiling) {
  const Args a{x, y, z, o, reinterpret_cast<const Tiling*>(tiling)};
  const Tiling& t = *a.t;
  auto typed = [&](auto tag) {
    using T = decltype(tag);
    switch (t.op) {
      case 1: case 2: case 3: CaseDataCopy<T>(a); break;
      case 4: case 5: CaseDataCopyPad<T>(a); break;
      case 6: CaseBinary<T>(a); break;
      case 7: CaseUnary<T>(a); break;
      case 8: case 9: CaseScalar<T>(a); break;
      case 11: case 12: CaseCompareSelect<T>(a); break;
      case 13: CaseReduce<T>(a); break;
      default: cpu::Fail("test: bad op ", t.op);
    }
  };
  switch (t.op) {
    case 10:
      Dispatch<true>(t.dt, [&](auto s) {
        Dispatch<true>(t.a[1], [&](auto d) { CaseCast<decltype(d), decltype(s)>(a); });
      });
      break;
    case 14: CaseErrors(a); break;
    case 15: CaseBlocks(a); break;
    case 16: CasePipeline(a); break;
    case 17: CaseEvents(a); break;
    case 18: CaseSyncAll(a, workspace); break;
    case 30: Dispatch(t.dt, [&](auto tag) { CaseScalarPath<decltype(tag)>(a); }); break;
    case 31: Dispatch(t.dt, [&](auto tag) { CaseMatmul<decltype(tag)>(a); }); break;
    default: Dispatch(t.dt, typed);
  }
}
"""

ENTRY_CPP = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void conformance(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR o,
                                                  GM_ADDR workspace, GM_ADDR tiling);
PYASC_CPU_ENTRY(conformance)
"""

SOURCES = {"kernel.cpp": KERNEL_CPP, "cpu_entry.cpp": ENTRY_CPP}

DT = {np.float16: 0, np.float32: 1, np.int32: 2, np.int16: 3, np.uint8: 4}
MODES = ["NONE", "RINT", "FLOOR", "CEIL", "ROUND", "TRUNC", "ODD"]
USABLE = PLATFORM.ub_kernel_bytes  # the runtime bound: what GetCoreMemSize(UB) reports


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory):
    return tmp_path_factory.mktemp("pyasc_cache")


@pytest.fixture(scope="module")
def kernel(cache_root):
    return CpuKernel(build_library(SOURCES, PLATFORM, cache_dir=cache_root))


def _arr(a, dtype=np.float32, size=1):
    return np.zeros(size, dtype) if a is None else np.ascontiguousarray(a)


def run(
    kernel, op, dtype=np.float32, n=0, x=None, y=None, z=None, o=None, a=(), f=(), block_dim=1, ws=0
):
    """Run case `op` (`ws`: workspace bytes); returns the o array (after the run)."""
    x, z, o = _arr(x), _arr(z), _arr(o)
    y = np.zeros_like(x) if y is None else _arr(y)  # some cases load y even when unused
    ints = list(a) + [0] * (8 - len(a))
    floats = list(f) + [0.0] * (4 - len(f))
    tiling = struct.pack("<15i4f", op, DT[dtype], n, x.size, y.size, z.size, o.size, *ints, *floats)
    kernel.run(block_dim, [x, y, z, o], tiling, workspace_bytes=ws)
    return o


RNG = np.random.default_rng(1234)


def rand(n, dtype, lo=-4.0, hi=4.0):
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-1000, 1000, n).astype(dtype)
    return RNG.uniform(lo, hi, n).astype(dtype)


# --------------------------------------------------------------------------------- DataCopy


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("n", [0, 7, 8, 15, 16, 17, 33, 256])
def test_datacopy_rounds_down_to_32_bytes(kernel, dtype, n):
    x = rand(256, dtype)
    per_block = 32 // np.dtype(dtype).itemsize
    moved = n // per_block * per_block
    # GM -> UB
    o = run(kernel, 1, dtype, n, x=x, o=np.zeros(256, dtype), f=[-7])
    expect = np.full(256, -7, dtype)
    expect[:moved] = x[:moved]
    np.testing.assert_array_equal(o, expect)
    # UB -> GM (GM keeps what it had past the moved bytes)
    o = run(kernel, 2, dtype, n, x=x, o=np.full(256, 5, dtype))
    expect = np.full(256, 5, dtype)
    expect[:moved] = x[:moved]
    np.testing.assert_array_equal(o, expect)
    # UB -> UB
    o = run(kernel, 3, dtype, n, x=x, o=np.zeros(256, dtype), f=[-7])
    expect = np.full(256, -7, dtype)
    expect[:moved] = x[:moved]
    np.testing.assert_array_equal(o, expect)


def test_datacopy_seven_halves_copy_nothing(kernel):
    x = np.arange(1, 17, dtype=np.float16)
    o = run(kernel, 1, np.float16, 7, x=np.resize(x, 256), o=np.zeros(256, np.float16), f=[0])
    assert not o.any()


# ------------------------------------------------------------------------------ DataCopyPad


def pad_gm_to_ub_ref(ub, gm, count, blen, sstride, dstride, is_pad, left, right, value):
    ub = ub.copy()
    isz = gm.itemsize
    block = math.ceil((left * isz + blen + right * isz) / 32) * 32 // isz
    step_ub = block + dstride * 32 // isz
    step_gm = (blen + sstride) // isz
    ne = blen // isz
    for k in range(count):
        seg = ub[k * step_ub : k * step_ub + block]
        if is_pad:
            seg[:] = value
        seg[left : left + ne] = gm[k * step_gm : k * step_gm + ne]
    return ub


@pytest.mark.parametrize(
    "dtype,count,blen,sstride,dstride,is_pad,left,right",
    [
        (np.float16, 1, 14, 0, 0, 1, 0, 0),  # 7 halves padded to 16
        (np.float16, 1, 14, 0, 0, 0, 0, 0),  # no isPad: padding keeps UB contents
        (np.float16, 3, 10, 4, 1, 0, 0, 0),  # GM gap 4 B, UB gap one 32-B block
        (np.float16, 4, 64, 2, 0, 1, 0, 0),  # aligned blocks, odd GM gap
        (np.float32, 2, 40, 0, 0, 1, 0, 2),  # rightPadding within the 32-B round-up
        (np.float32, 3, 16, 8, 2, 1, 2, 0),  # leftPadding shifts the data
        (np.float32, 2, 20, 12, 0, 1, 0, 0),
    ],
)
def test_datacopypad_gm_to_ub(kernel, dtype, count, blen, sstride, dstride, is_pad, left, right):
    size = 256
    x = rand(256, dtype)
    o = run(
        kernel,
        4,
        dtype,
        x=x,
        o=np.zeros(size, dtype),
        a=[count, blen, sstride, dstride, is_pad, left, right, size],
        f=[-7, 9],
    )
    expect = pad_gm_to_ub_ref(
        np.full(size, -7, dtype), x, count, blen, sstride, dstride, is_pad, left, right, 9
    )
    np.testing.assert_array_equal(o, expect)


@pytest.mark.parametrize(
    "dtype,count,blen,sstride,dstride",
    [
        (np.float16, 1, 14, 0, 0),  # exactly 7 halves written
        (np.float16, 2, 30, 0, 2),  # UB blocks at 32-B starts, GM gap 2 B
        (np.float32, 3, 12, 1, 8),  # UB gap one block, GM gap 8 B
        (np.float32, 2, 4, 0, 0),
    ],
)
def test_datacopypad_ub_to_gm(kernel, dtype, count, blen, sstride, dstride):
    x = rand(256, dtype)
    o = run(
        kernel,
        5,
        dtype,
        x=x,
        o=np.full(128, 3, dtype),
        a=[count, blen, sstride, dstride, 0, 0, 0, 256],
    )
    isz = np.dtype(dtype).itemsize
    expect = np.full(128, 3, dtype)
    step_ub = (math.ceil(blen / 32) * 32 + sstride * 32) // isz
    step_gm = (blen + dstride) // isz
    for k in range(count):
        expect[k * step_gm : k * step_gm + blen // isz] = x[k * step_ub : k * step_ub + blen // isz]
    np.testing.assert_array_equal(o, expect)


# ------------------------------------------------------------------------------- vector ops

BINARY = {0: np.add, 1: np.subtract, 2: np.multiply, 3: np.divide, 4: np.maximum, 5: np.minimum}


@pytest.mark.parametrize(
    "dtype,op",
    [
        (d, op)
        for d in (np.float16, np.float32, np.int32, np.int16)
        for op in sorted(BINARY)
        if op != 3 or d in (np.float16, np.float32)
    ],
)  # Div: fp
def test_binary_ops(kernel, dtype, op):
    n, p = 1000, 1024
    x, y = rand(p, dtype), rand(p, dtype)
    if op == 3:
        y[np.abs(y) < 0.1] = 0.5
    o = run(
        kernel, 6, dtype, n, x=x, y=y, o=np.zeros(p, dtype), a=[op, 0, 0, 0, 0, 0, 0, p], f=[-7]
    )
    expect = np.full(p, -7, dtype)
    with np.errstate(over="ignore"):
        expect[:n] = BINARY[op](x[:n], y[:n]).astype(dtype)
    np.testing.assert_array_equal(o, expect)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_binary_in_place_and_odd_counts(kernel, dtype):
    for n in (1, 31, 129, 777):
        p = 800
        x, y = rand(p, dtype), rand(p, dtype)
        o = run(
            kernel, 6, dtype, n, x=x, y=y, o=np.zeros(p, dtype), a=[0, 1, 0, 0, 0, 0, 0, p]
        )  # dst = src0
        expect = x.copy()
        expect[:n] = (x[:n] + y[:n]).astype(dtype)
        np.testing.assert_array_equal(o, expect)


def _unary_ref(op, x):
    with np.errstate(all="ignore"):
        xf = x.astype(np.float64)
        r = {
            0: np.exp,
            1: np.log,
            2: np.abs,
            3: np.sqrt,
            4: lambda v: 1 / np.sqrt(v),
            5: lambda v: 1 / v,
            6: lambda v: np.maximum(v, 0),
            7: np.sin,
            8: np.cos,
        }[op](xf)
    return r.astype(x.dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("op", range(9))
def test_unary_ops(kernel, dtype, op):
    n, p = 300, 320
    lo = 0.05 if op in (1, 3, 4, 5) else -4.0
    x = rand(p, dtype, lo, 4.0)
    o = run(kernel, 7, dtype, n, x=x, o=np.zeros(p, dtype), a=[op, 0, 0, 0, 0, 0, 0, p], f=[-7])
    expect = _unary_ref(op, x[:n])
    assert (o[n:] == -7).all()
    if op in (2, 3, 6):  # exact ops: bit-identical
        np.testing.assert_array_equal(o[:n], expect)
    else:
        rtol = 1e-3 if dtype == np.float16 else 1e-6
        np.testing.assert_allclose(
            o[:n].astype(np.float64), expect.astype(np.float64), rtol=rtol, atol=0
        )


@pytest.mark.parametrize("dtype", [np.int32, np.int16])
@pytest.mark.parametrize("op", [2, 6])
def test_unary_int(kernel, dtype, op):
    n, p = 100, 128
    x = rand(p, dtype)
    o = run(kernel, 7, dtype, n, x=x, o=np.zeros(p, dtype), a=[op, 0, 0, 0, 0, 0, 0, p], f=[-7])
    ref = np.abs(x[:n]) if op == 2 else np.maximum(x[:n], 0)
    np.testing.assert_array_equal(o[:n], ref)
    assert (o[n:] == -7).all()


SCALAR = {0: np.add, 1: np.multiply, 2: np.maximum, 3: np.minimum}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32])
@pytest.mark.parametrize("op", sorted(SCALAR))
def test_scalar_ops(kernel, dtype, op):
    n, p = 517, 544
    x = rand(p, dtype)
    s = 1.3 if np.issubdtype(dtype, np.floating) else 3
    o = run(kernel, 8, dtype, n, x=x, o=np.zeros(p, dtype), a=[op, 0, 0, 0, 0, 0, 0, p], f=[-7, s])
    expect = np.full(p, -7, dtype)
    # the scalar is converted to T first (documented: scalar is T)
    expect[:n] = SCALAR[op](x[:n], np.array(np.float32(s)).astype(dtype)).astype(dtype)
    np.testing.assert_array_equal(o, expect)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32, np.int16])
def test_duplicate(kernel, dtype):
    n, p = 45, 64
    o = run(
        kernel,
        9,
        dtype,
        n,
        x=rand(p, dtype),
        o=np.zeros(p, dtype),
        a=[0, 0, 0, 0, 0, 0, 0, p],
        f=[-7, 2.5],
    )
    expect = np.full(p, -7, dtype)
    expect[:n] = np.array(np.float32(2.5)).astype(dtype)
    np.testing.assert_array_equal(o, expect)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32, np.int16])
def test_create_vec_index(kernel, dtype):
    """``dst[i] = first + i`` for i < count, the lanes after count untouched."""
    n, p = 45, 64
    o = run(
        kernel,
        9,
        dtype,
        n,
        x=rand(p, dtype),
        o=np.zeros(p, dtype),
        a=[1, 0, 0, 0, 0, 0, 0, p],
        f=[-7, -3],
    )
    expect = np.full(p, -7, dtype)
    expect[:n] = (np.arange(n) - 3).astype(dtype)
    np.testing.assert_array_equal(o, expect)


# ------------------------------------------------------------------------------------- Cast


def _neighbours(x: float, dtype):
    """Largest value <= x and smallest value >= x in a float dtype (x in range)."""
    r = dtype(x)
    if float(r) == x:
        return r, r
    with np.errstate(over="ignore"):  # past the largest finite value the neighbour is inf
        if float(r) < x:
            return r, np.nextafter(r, dtype(np.inf))
        return np.nextafter(r, dtype(-np.inf)), r


def _pick(x, lo, hi, mode, is_odd):
    """Choose lo or hi (lo < x < hi) per round mode; is_odd(v) says if v has an odd last digit."""
    flo, fhi = float(lo), float(hi)
    mid = (flo + fhi) / 2
    if mode in ("NONE", "RINT"):
        if x != mid:
            return lo if x < mid else hi
        return hi if is_odd(lo) else lo
    if mode == "ROUND":
        if x != mid:
            return lo if x < mid else hi
        return hi if x > 0 else lo
    if mode == "FLOOR":
        return lo
    if mode == "CEIL":
        return hi
    if mode == "TRUNC":
        return lo if x > 0 else hi
    assert mode == "ODD"
    return lo if is_odd(lo) else hi


def cast_ref_float(x: float, dtype, mode):
    lo, hi = _neighbours(x, dtype)
    if lo == hi:
        return lo
    bits = np.uint16 if dtype == np.float16 else np.uint32
    return _pick(x, lo, hi, mode, lambda v: int(np.array(v).view(bits)) & 1)


def cast_ref_int(x: float, mode):
    lo, hi = math.floor(x), math.ceil(x)
    if lo == hi:
        return lo
    return _pick(x, lo, hi, mode, lambda v: v % 2 == 1)


HALF_TIES = [
    1 + 2**-11,
    -(1 + 2**-11),
    1 + 3 * 2**-11,
    2**-25,
    3 * 2**-25,
    -(3 * 2**-25),
    2049.0,
    2051.0,
    -2051.0,
    0.1,
    -0.1,
    1 / 3,
    100.03,
    65504.0,
    65519.0,
    6e-8,
    0.0,
]
INT_TIES = [
    0.5,
    1.5,
    2.5,
    -0.5,
    -1.5,
    -2.5,
    3.7,
    -3.7,
    0.2,
    -0.2,
    7.0,
    -8.0,
    1e6 + 0.5,
    123456.5,
    -123457.5,
    0.0,
]


@pytest.mark.parametrize("mode", range(7))
def test_cast_float_to_half_modes(kernel, mode):
    vals = np.array(HALF_TIES + list(RNG.uniform(-300, 300, 47)), np.float32)
    vals = np.resize(vals, 64)
    o = run(
        kernel,
        10,
        np.float32,
        64,
        x=vals,
        o=np.zeros(64, np.float16),
        a=[mode, 0, 0, 0, 0, 0, 0, 64],
    )
    expect = np.array([cast_ref_float(float(v), np.float16, MODES[mode]) for v in vals], np.float16)
    np.testing.assert_array_equal(o.view(np.uint16), expect.view(np.uint16))


def test_cast_float_to_half_rint_matches_numpy(kernel):
    vals = np.concatenate([RNG.normal(0, 100, 900), RNG.normal(0, 1e-5, 100)]).astype(np.float32)
    vals = np.resize(vals, 1024)
    for mode in (0, 1):
        o = run(
            kernel,
            10,
            np.float32,
            1024,
            x=vals,
            o=np.zeros(1024, np.float16),
            a=[mode, 0, 0, 0, 0, 0, 0, 1024],
        )
        np.testing.assert_array_equal(o.view(np.uint16), vals.astype(np.float16).view(np.uint16))


def test_cast_float_to_half_overflow(kernel):
    vals = np.resize(np.array([70000, -70000, 65520, -65520], np.float32), 16)
    inf, big = np.inf, 65504.0
    expect = {  # IEEE overflow per mode
        "NONE": [inf, -inf, inf, -inf],
        "RINT": [inf, -inf, inf, -inf],
        "FLOOR": [big, -inf, big, -inf],
        "CEIL": [inf, -big, inf, -big],
        "ROUND": [inf, -inf, inf, -inf],
        "TRUNC": [big, -big, big, -big],
        "ODD": [big, -big, big, -big],
    }
    for mode, name in enumerate(MODES):
        o = run(
            kernel,
            10,
            np.float32,
            16,
            x=vals,
            o=np.zeros(16, np.float16),
            a=[mode, 0, 0, 0, 0, 0, 0, 16],
        )
        np.testing.assert_array_equal(o[:4], np.array(expect[name], np.float16), err_msg=name)


def cast_refused(kernel, src, dst, mode, n=16):
    """Cast src -> dst with `mode` is outside the Atlas A2 table: the kernel raises (the
    supported pairs and modes are tested in tests/test_conformance_level0.py)."""
    with pytest.raises(KernelError, match="Cast: .* not supported|SetDeqScale"):
        run(
            kernel,
            10,
            src,
            n,
            x=np.zeros(n, src),
            o=np.zeros(n, dst),
            a=[mode, DT[dst], 0, 0, 0, 0, 0, n],
        )


@pytest.mark.parametrize("src", [np.float32, np.float16])
@pytest.mark.parametrize("mode", range(7))
def test_cast_to_int32_modes(kernel, src, mode):
    if MODES[mode] in ("NONE", "ODD"):  # not documented for float/half -> int32_t
        return cast_refused(kernel, src, np.int32, mode)
    vals = np.array(
        INT_TIES if src == np.float32 else INT_TIES[:12] + [1000.5, -0.0, 2.25, 0.75], src
    )
    vals = np.resize(vals, 16)
    o = run(kernel, 10, src, 16, x=vals, o=np.zeros(16, np.int32), a=[mode, 2, 0, 0, 0, 0, 0, 16])
    expect = np.array([cast_ref_int(float(v), MODES[mode]) for v in vals], np.int32)
    np.testing.assert_array_equal(o, expect)


def test_cast_int32_saturates_and_nan(kernel):
    vals = np.resize(np.array([3e9, -3e9, np.nan, np.inf, -np.inf, 2147483520.0], np.float32), 16)
    o = run(
        kernel, 10, np.float32, 16, x=vals, o=np.zeros(16, np.int32), a=[5, 2, 0, 0, 0, 0, 0, 16]
    )
    imax, imin = 2**31 - 1, -(2**31)
    np.testing.assert_array_equal(o[:6], [imax, imin, 0, imax, imin, 2147483520])


@pytest.mark.parametrize("dst", [np.float32, np.float16])
@pytest.mark.parametrize("mode", range(7))
def test_cast_int32_to_float_modes(kernel, dst, mode):
    if dst == np.float16 or MODES[mode] == "ODD":  # int32 -> half needs SetDeqScale
        return cast_refused(kernel, np.int32, dst, mode)
    if dst == np.float32:
        vals = [
            2**24 + 1,
            2**24 + 3,
            -(2**24 + 1),
            2**25 + 2,
            2**25 + 6,
            16777217 * 3,
            7,
            -123456789,
            2**31 - 1,
            -(2**31),
            0,
            5,
        ]
    else:
        vals = [2049, 2051, -2049, -2051, 4097, 4101, 65504, 65519, 1, -7, 0, 1023]
    vals = np.resize(np.array(vals, np.int32), 16)
    o = run(
        kernel, 10, np.int32, 16, x=vals, o=np.zeros(16, dst), a=[mode, DT[dst], 0, 0, 0, 0, 0, 16]
    )
    expect = np.array([cast_ref_float(float(v), dst, MODES[mode]) for v in vals], dst)
    np.testing.assert_array_equal(o, expect)


def test_cast_half_to_float_exact_and_same_type(kernel):
    vals = rand(64, np.float16, -1000, 1000)
    vals[:4] = [np.inf, -np.inf, 6e-8, -0.0]
    o = run(
        kernel, 10, np.float16, 64, x=vals, o=np.zeros(64, np.float32), a=[0, 1, 0, 0, 0, 0, 0, 64]
    )
    np.testing.assert_array_equal(o, vals.astype(np.float32))
    # float -> float with a round mode rounds to an integral value; NONE is not documented
    f = np.array([0.5, 1.5, 2.5, -2.5, 1.25, -0.75, 1e10, 3.0] * 2, np.float32)
    o = run(
        kernel, 10, np.float32, 16, x=f, o=np.zeros(16, np.float32), a=[1, 1, 0, 0, 0, 0, 0, 16]
    )
    np.testing.assert_array_equal(o, np.rint(f))
    cast_refused(kernel, np.float32, np.float32, 0)


def test_cast_count_is_respected(kernel):
    vals = rand(64, np.float32)
    o = run(
        kernel,
        10,
        np.float32,
        21,
        x=vals,
        o=np.zeros(64, np.float16),
        a=[1, 0, 0, 0, 0, 0, 0, 64],
        f=[-7],
    )
    np.testing.assert_array_equal(o[:21], vals[:21].astype(np.float16))
    assert (o[21:] == -7).all()


# ---------------------------------------------------------------------------- Compare/Select

CMP = {
    0: np.less,
    1: np.greater,
    2: np.equal,
    3: np.less_equal,
    4: np.greater_equal,
    5: np.not_equal,
}


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("mode", sorted(CMP))
def test_compare_bit_mask(kernel, dtype, mode):
    n, p = 256, 512  # 256 halves = 2 repeats, 256 floats = 4 repeats
    x = rand(p, dtype).round()
    y = rand(p, dtype).round()
    o = run(kernel, 11, dtype, n, x=x, y=y, o=np.zeros(64, np.uint8), a=[mode, 0, 0, 0, 0, 0, 0, p])
    bits = np.packbits(CMP[mode](x[:n], y[:n]), bitorder="little")
    np.testing.assert_array_equal(o[: n // 8], bits)
    assert (o[n // 8 :] == 0xAB).all()  # bytes past count/8 untouched


def test_compare_mask_lsb_first(kernel):
    x = np.zeros(128, np.float16)
    x[[0, 3, 9, 127]] = 1
    o = run(
        kernel,
        11,
        np.float16,
        128,
        x=x,
        y=np.zeros(128, np.float16),
        o=np.zeros(32, np.uint8),
        a=[1, 0, 0, 0, 0, 0, 0, 128],
    )
    assert list(o[:2]) == [0b00001001, 0b00000010]
    assert o[15] == 0x80


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("scalar", [0, 1])
def test_select(kernel, dtype, scalar):
    n, p = 300, 512
    x, y = rand(p, dtype), rand(p, dtype)
    mask = RNG.integers(0, 256, p // 8).astype(np.uint8)
    mask = np.resize(mask, max(64, p // 8))
    o = run(
        kernel,
        12,
        dtype,
        n,
        x=x,
        y=y,
        z=mask,
        o=np.zeros(p, dtype),
        a=[0, 0, scalar, 0, 0, 0, 0, p],
        f=[-7, 2.5],
    )
    bits = np.unpackbits(mask, bitorder="little")[:n].astype(bool)
    other = np.full(n, 2.5, dtype) if scalar else y[:n]
    expect = np.full(p, -7, dtype)
    expect[:n] = np.where(bits, x[:n], other)
    np.testing.assert_array_equal(o, expect)


# ------------------------------------------------------------------------------- reductions


def tree_sum_ref(x, dtype):
    """Documented order: binary tree of adjacent pairs in each 256-B repeat (zero padded), then
    the repeat results added left to right; every addition rounded to dtype."""
    r = 256 // np.dtype(dtype).itemsize
    reps = -(-x.size // r)
    v = np.zeros(reps * r, dtype)
    v[: x.size] = x
    v = v.reshape(reps, r)
    while v.shape[1] > 1:
        v = (v[:, 0::2] + v[:, 1::2]).astype(dtype)
    acc = v[0, 0]
    for k in range(1, reps):
        acc = dtype(acc + v[k, 0])
    return acc


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("n", [1, 64, 100, 129, 1000])
def test_reduce_sum(kernel, dtype, n):
    p = 1024
    x = rand(p, dtype, 0, 1)
    o = run(
        kernel,
        13,
        dtype,
        n,
        x=x,
        o=np.zeros(32 // np.dtype(dtype).itemsize, dtype),
        a=[0, 0, 0, 0, 0, 0, 0, p],
        f=[-7],
    )
    assert o[0] == tree_sum_ref(x[:n], dtype)
    assert (o[1:] == -7).all()  # result only in dst[0]
    rtol = 2e-3 if dtype == np.float16 else 1e-5
    assert abs(float(o[0]) - float(x[:n].astype(np.float64).sum())) <= rtol * n


def test_reduce_sum_tree_order_is_observable(kernel):
    # fp16 [2048, 0, 1, 1, 0, ...]: adjacent pairs give (2048 + 0) + (1 + 1) = 2050, while a
    # sequential sum (2048 + 1 = 2049 -> 2048, twice) or a halving tree gives 2048.
    x = np.zeros(128, np.float16)
    x[0], x[2], x[3] = 2048, 1, 1
    o = run(
        kernel,
        13,
        np.float16,
        128,
        x=x,
        o=np.zeros(16, np.float16),
        a=[0, 0, 0, 0, 0, 0, 0, 128],
        f=[-7],
    )
    assert o[0] == 2050 == tree_sum_ref(x, np.float16)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("which", [1, 2])
def test_reduce_max_min(kernel, dtype, which):
    n, p = 777, 1024
    x = rand(p, dtype)
    nd = 32 // np.dtype(dtype).itemsize
    o = run(
        kernel, 13, dtype, n, x=x, o=np.zeros(nd, dtype), a=[which, 0, 0, 0, 0, 0, 0, p], f=[-7]
    )
    ref = x[:n].max() if which == 1 else x[:n].min()
    assert o[0] == ref
    assert (o[1:] == -7).all()
    o = run(
        kernel, 13, dtype, n, x=x, o=np.zeros(nd, dtype), a=[which, 1, 0, 0, 0, 0, 0, p], f=[-7]
    )
    idx_type = np.uint16 if dtype == np.float16 else np.uint32
    assert o[0] == ref
    assert int(o[1:2].view(idx_type)[0]) == int(
        np.argmax(x[:n]) if which == 1 else np.argmin(x[:n])
    )


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("which,mask,reps,rep", [(3, 64, 8, 8), (3, 13, 5, 12), (4, 33, 8, 8)])
def test_whole_reduce_agrees_with_interpreter(kernel, dtype, which, mask, reps, rep):
    """WholeReduceSum/Max (ORDER_ONLY_VALUE) bit for bit as the interpreter's
    ``ascendc.whole_reduce`` (tests/test_ascendc_rows.py checks both against the documented
    model)."""
    from test_ascendc_interp import run as interp
    from test_ascendc_rows import API, _src

    p = 1024
    x = (rand(p, dtype) * 300).astype(dtype)
    x[5] = -0.0
    nd = 32 // np.dtype(dtype).itemsize
    reps = min(reps, nd)
    a = [which, 0, reps, rep, 0, 0, 0, p]
    o = run(kernel, 13, dtype, mask, x=x, o=np.zeros(nd, dtype), a=a, f=[-7])
    want = np.zeros(16, dtype)
    api = API["sum" if which == 3 else "max"]
    t = "f16" if dtype == np.float16 else "f32"
    interp(_src(t, p, 16, api, mask, reps, (1, 1, rep)), x, want)
    np.testing.assert_array_equal(o[:reps].view(np.uint8), want[:reps].view(np.uint8))
    assert (o[reps:] == -7).all()


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("reps,blk,rep", [(2, 1, 8), (3, 2, 16), (1, 0, 8), (2, 16, 1)])
def test_brcb_agrees_with_interpreter(kernel, dtype, reps, blk, rep):
    """Brcb bit for bit as the interpreter's ``ascendc.brcb`` (and as documented: block
    ``r*rep + j*blk`` of dst holds src[8r + j]; blocks never written keep the fill)."""
    from test_ascendc_rows import brcb_model, run_brcb

    e = 32 // np.dtype(dtype).itemsize
    out = 2048
    x = rand(1024, dtype)
    x[2] = -0.0
    a = [5, 0, reps, blk, rep, 0, 0, 1024]
    o = run(kernel, 13, dtype, 0, x=x, o=np.zeros(out, dtype), a=a, f=[-7])
    want = run_brcb(dtype, x, np.full(out, -7, dtype), reps, (blk, rep))
    np.testing.assert_array_equal(o.view(np.uint8), want.view(np.uint8))
    ref = brcb_model(x, np.full(out, -7, dtype), reps, (blk, rep), e)
    np.testing.assert_array_equal(o.view(np.uint8), ref.view(np.uint8))
    o = run(
        kernel, 13, dtype, 0, x=x, o=np.zeros(out, dtype), a=[6, 0, 2, 0, 0, 0, 0, 1024], f=[-7]
    )
    ref = brcb_model(x, np.full(out, -7, dtype), 2, (1, 8), e)
    np.testing.assert_array_equal(o.view(np.uint8), ref.view(np.uint8))


# ----------------------------------------------------------------------------------- errors


def err(kernel, case, a=(), sx=16):
    with pytest.raises(KernelError) as info:
        run(kernel, 14, x=np.zeros(sx, np.float32), o=np.zeros(8, np.int32), a=[case, *a])
    assert info.value.block_idx == 0
    return str(info.value)


def test_initbuffer_overflow(kernel):
    o = run(kernel, 14, x=np.zeros(16, np.float32), o=np.zeros(8, np.int32), a=[0, USABLE])
    assert o[0] == 1  # exactly the usable UB fits
    msg = err(kernel, 0, [USABLE + 1])
    assert f"TPipe::InitBuffer: UB overflow: need {USABLE + 32} bytes, usable {USABLE}" in msg
    msg = err(kernel, 13, [1 << 17, 1 << 16])
    assert f"need {(1 << 17) + (1 << 16)} bytes, usable {USABLE}" in msg


def test_local_tensor_out_of_bounds(kernel):
    msg = err(kernel, 1)
    assert "LocalTensor::GetValue" in msg and "index 16" in msg and "16 elements" in msg
    msg = err(kernel, 2)
    assert "LocalTensor::SetValue" in msg and "index -1" in msg
    msg = err(kernel, 3)
    assert "Add" in msg and "src1" in msg and "32 elements" in msg and "64 elements" in msg
    msg = err(kernel, 11)
    assert "LocalTensor::operator[]" in msg and "offset 17" in msg
    msg = err(kernel, 12)
    # two 40-B blocks each padded to 64 B in UB need 128 B; the buffer has 64
    assert "DataCopyPad(GM->UB)" in msg and "byte 128" in msg and "64 bytes" in msg
    assert "never allocated" in err(kernel, 14)


def test_misaligned_view_raises(kernel):
    msg = err(kernel, 4)
    assert "Add" in msg and "UB offset 4 is not 32-byte aligned" in msg
    msg = err(kernel, 15)
    assert "DataCopy(GM->UB)" in msg and "UB offset 16 is not 32-byte aligned" in msg


def test_queue_errors(kernel):
    assert "TQue::AllocTensor" in err(kernel, 5) and "not freed" in err(kernel, 5)
    assert "TQue::DeQue: queue is empty" in err(kernel, 6)
    assert "TQue::FreeTensor" in err(kernel, 10) and "already free" in err(kernel, 10)
    assert "buffer 0 of 2" in err(kernel, 16)


def test_global_tensor_out_of_bounds(kernel):
    msg = err(kernel, 7)
    assert "GlobalTensor::GetValue" in msg and "index 16" in msg
    msg = err(kernel, 8)
    assert "DataCopy(GM->UB)" in msg and "64 bytes" in msg and "96" in msg
    msg = err(kernel, 17)
    assert "DataCopyPad(UB->GM)" in msg and "68" in msg


def test_compare_count_must_fill_256_bytes(kernel):
    msg = err(kernel, 9)
    assert "Compare" in msg and "256" in msg and "128" in msg


# ------------------------------------------------------------------------ blocks / pipeline


def test_multi_block(kernel):
    o = run(kernel, 15, o=np.full(5 * 8, -1, np.int32), a=[-1], block_dim=5)
    o = o.reshape(5, 8)
    np.testing.assert_array_equal(o[:, 0], np.arange(5))
    np.testing.assert_array_equal(o[:, 1], 5)
    np.testing.assert_array_equal(o[:, 2], 0)  # every block starts with a fresh (zeroed) UB


def test_kernel_error_names_block(kernel):
    o = np.full(5 * 8, -1, np.int32)
    with pytest.raises(KernelError) as info:
        run(kernel, 15, o=o, a=[2], block_dim=5)
    assert info.value.block_idx == 2 and info.value.block_num == 5
    assert "failing on purpose in block 2" in str(info.value)
    assert "block 2 of 5" in str(info.value)
    np.testing.assert_array_equal(o.reshape(5, 8)[:2, 0], [0, 1])  # blocks 0, 1 ran
    assert (o.reshape(5, 8)[2:] == -1).all()


def test_sync_all_orders_the_blocks_through_the_workspace(kernel):
    """Every block reads every other block's workspace write after SyncAll(): the blocks wait
    for each other (run one after another, block 0 would read zeros)."""
    for blocks in (1, 3, 8):
        o = run(kernel, 18, o=np.full(blocks * 8, -1, np.int32), block_dim=blocks, ws=blocks * 64)
        want = np.full((blocks, 8), -1, np.int32)
        want[:, :blocks] = 10 + np.arange(blocks)
        np.testing.assert_array_equal(o.reshape(blocks, 8), want)


def test_sync_all_without_a_workspace_is_refused(kernel):
    """The documented hard form needs a nonzero workspace size."""
    with pytest.raises(KernelError, match="workspace"):
        run(kernel, 18, o=np.zeros(16, np.int32), a=[1], block_dim=2)


def test_double_buffered_pipeline(kernel):
    n, tile = 4096, 512
    x = rand(n, np.float32)
    log = np.zeros(2 * (n // tile), np.int32)
    o = run(kernel, 16, n=n, x=x, y=log, o=np.zeros(n, np.float32), a=[tile])
    np.testing.assert_array_equal(o, x * np.float32(2) + np.float32(1))
    b = tile * 4
    # in-queue buffers alternate 0, b; out-queue buffers follow at 2b, 3b (round robin)
    np.testing.assert_array_equal(log[0::2], [0, b] * (n // tile // 2))
    np.testing.assert_array_equal(log[1::2], [2 * b, 3 * b] * (n // tile // 2))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("n", [1, 100, 300])
def test_scalar_path_and_every_event(kernel, dtype, n):
    """ReduceMax -> V_S -> GetValue -> S_V -> Duplicate (how emitted kernels broadcast a
    reduction result), bracketed by every HardEvent, all no-ops on the CPU."""
    p = 320
    x = rand(p, dtype)
    o = run(kernel, 30, dtype, n, x=x, o=np.zeros(p, dtype), a=[0, 0, 0, 0, 0, 0, 0, p])
    np.testing.assert_array_equal(o, np.full(p, x[:n].max(), dtype))


def test_events_are_noops_and_ub_macros(kernel):
    o = run(kernel, 17, o=np.zeros(8, np.int32))
    assert list(o[:4]) == [1, PLATFORM.ub_bytes, USABLE, 128]


# --------------------------------------------------------------------------- Python side


def test_wrong_argument_count(kernel):
    tiling = struct.pack("<15i4f", 17, 1, *[0] * 13, *[0.0] * 4)
    with pytest.raises(KernelError, match="kernel takes 6 arguments, got 5"):
        kernel.run(1, [np.zeros(8, np.int32)] * 3, tiling)


def test_non_contiguous_rejected(kernel):
    x = np.zeros((8, 8), np.float32)[:, ::2]
    with pytest.raises(ValueError, match="C-contiguous"):
        kernel.run(1, [x] * 4, b"")
    with pytest.raises(ValueError, match="block_dim"):
        kernel.run(0, [], b"")


def test_cache_hit_does_not_compile(kernel, cache_root, monkeypatch):
    lib = build_library(SOURCES, PLATFORM, cache_dir=cache_root)
    assert lib == kernel.so_path and lib.parent.parent == cache_root / "cpu"
    assert lib.parent.name == cpu.library_key(SOURCES, PLATFORM)
    assert (lib.parent / "kernel.cpp").read_text() == KERNEL_CPP
    mtime = lib.stat().st_mtime_ns

    def no_compiler(*args, **kwargs):
        raise AssertionError("g++ invoked on a cache hit")

    monkeypatch.setattr(cpu.subprocess, "Popen", no_compiler)
    monkeypatch.setattr(cpu.subprocess, "run", no_compiler)
    assert build_library(dict(SOURCES), PLATFORM, cache_dir=cache_root) == lib
    assert lib.stat().st_mtime_ns == mtime
    # the key covers the platform's UB sizes and the sources
    assert cpu.library_key(SOURCES, get_platform("310P3")) != lib.parent.name
    assert (
        cpu.library_key({**SOURCES, "kernel.cpp": KERNEL_CPP + "\n"}, PLATFORM) != lib.parent.name
    )
    assert not list((cache_root / "cpu").glob(".tmp-*"))


def test_default_cache_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("PYASC_CACHE_DIR", str(tmp_path))
    assert cpu.default_cache_dir() == tmp_path
    monkeypatch.delenv("PYASC_CACHE_DIR")
    assert cpu.default_cache_dir().name == "pyasc_mlir"


def test_compile_error_carries_diagnostics(tmp_path):
    bad = {"kernel.cpp": '#include "kernel_operator.h"\nint f() { return undeclared_name; }\n'}
    with pytest.raises(CompileError) as info:
        build_library(bad, PLATFORM, cache_dir=tmp_path)
    assert "undeclared_name" in str(info.value) and "kernel.cpp:2" in info.value.diagnostics
    left = [p for p in (tmp_path / "cpu").iterdir() if p.name != "pch"]  # pch: valid cache
    assert not left  # nothing half-built left behind


# ----------------------------------------------------------------------------------- Matmul


def _r16(v):
    return -(-v // 16) * 16


def matmul_ref(x, y, m, n, k, ta, tb):
    """C = A @ B in float64 (f32 accumulation is compared with a tolerance)."""
    a = x.astype(np.float64).reshape((k, m) if ta else (m, k))
    b = y.astype(np.float64).reshape((n, k) if tb else (k, n))
    return (a.T if ta else a) @ (b.T if tb else b)


def run_matmul(kernel, dtype, m, n, k, ta=False, tb=False, tail=None, base=None, err=0, sx=None):
    bm, bn = base or (_r16(min(m, 64)), _r16(min(n, 128)))
    tm, tn, tk = tail or (m, n, k)
    blocks = -(-tm // bm) * -(-tn // bn)
    x = rand(sx if sx is not None else m * k, dtype)
    y = rand(k * n, dtype)
    o = np.zeros(max(blocks, 1) * bm * bn + 1, np.float32)
    f = [err, *(tail or (0, 0, 0))]
    out = run(
        kernel,
        31,
        dtype,
        x=x,
        y=y,
        o=o,
        a=[m, n, k, int(ta), int(tb), _r16(min(k, 256)), bm, bn],
        f=f,
    )
    return x, y, out, (bm, bn, tm, tn, tk)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize(
    "m,n,k,ta,tb",
    [
        (1, 1, 1, False, False),
        (15, 17, 100, True, False),
        (17, 15, 513, False, True),
        (100, 33, 17, True, True),
        (40, 200, 15, False, False),
    ],
)
def test_matmul_blocks_and_layout(kernel, dtype, m, n, k, ta, tb):
    """Iterate walks [baseM, baseN] blocks M first; GetTensorC writes each block's rows with
    row stride baseN, zero columns past its width, and leaves the rows past its height."""
    x, y, out, (bm, bn, tm, tn, _) = run_matmul(kernel, dtype, m, n, k, ta, tb)
    ref = matmul_ref(x, y, m, n, k, ta, tb)
    m_blocks, n_blocks = -(-tm // bm), -(-tn // bn)
    assert out[-1] == m_blocks * n_blocks
    got = out[:-1].reshape(-1, bm, bn)
    i = 0
    for ni in range(n_blocks):  # iterateOrder 0: M first
        for mi in range(m_blocks):
            r0, c0 = mi * bm, ni * bn
            rows, cols = min(bm, tm - r0), min(bn, tn - c0)
            np.testing.assert_allclose(
                got[i, :rows, :cols], ref[r0 : r0 + rows, c0 : c0 + cols], rtol=1e-5, atol=1e-4
            )
            assert (got[i, :rows, cols:] == 0).all()
            assert (got[i, rows:] == -7).all()
            i += 1


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_matmul_set_tail(kernel, dtype):
    """SetTail(m, n, k) computes the top-left [m, n] block over the first k of K with the
    original row strides (Ka, N)."""
    m, n, k = 40, 50, 30
    x, y, out, (bm, bn, tm, tn, tk) = run_matmul(
        kernel, dtype, m, n, k, tail=(33, 17, 20), base=(16, 32)
    )
    a = x.astype(np.float64).reshape(m, k)[:tm, :tk]
    b = y.astype(np.float64).reshape(k, n)[:tk, :tn]
    got = out[:-1].reshape(-1, bm, bn)
    assert out[-1] == 3
    for i in range(3):
        rows = min(bm, tm - i * bm)
        np.testing.assert_allclose(
            got[i, :rows, :tn], (a @ b)[i * bm : i * bm + rows], rtol=1e-5, atol=1e-4
        )
        assert (got[i, :rows, tn:] == 0).all()


@pytest.mark.parametrize(
    "err,needle",
    [
        (1, "Matmul::GetTensorC: C LocalTensor"),
        (2, "Matmul::SetTensorA: isTransposeA = true needs isTrans = true"),
        (3, "Matmul::Iterate: SetTensorA and SetTensorB must come first"),
        (4, "Matmul::Iterate: the Matmul object was already ended (End)"),
        (5, "Matmul::SetTail: tailM = 17 is outside [1, singleCoreM = 16]"),
        (6, "REGIST_MATMUL_OBJ: must come before the first InitBuffer"),
        (7, "REGIST_MATMUL_OBJ: invalid TCubeTiling: dbL0A * baseM * baseK * sizeof(A)"),
        (8, "Matmul::GetTensorC: no block to get"),
    ],
)
def test_matmul_errors(kernel, err, needle):
    with pytest.raises(
        KernelError,
        match=needle.replace("(", r"\(")
        .replace(")", r"\)")
        .replace("*", r"\*")
        .replace("[", r"\["),
    ):
        run_matmul(kernel, np.float16, 16, 16, 16, err=err, tail=(16, 16, 16) if err == 5 else None)


def test_matmul_gm_bounds_and_tiling_checks(kernel):
    with pytest.raises(KernelError, match="Matmul::Iterate: A GlobalTensor holds 100 elements"):
        run_matmul(kernel, np.float32, 16, 16, 16, sx=100)
    with pytest.raises(KernelError, match="baseN = 24 is not a multiple of 16"):
        run_matmul(kernel, np.float32, 16, 16, 16, base=(16, 24))
