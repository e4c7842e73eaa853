// pyasc_cpu/brcb.h -- Brcb, the per-DataBlock broadcast of the clean-room CPU runtime
// (included by kernel_operator.h after vector_level0.h).
//
// Source (public Ascend C API reference, Atlas A2): the Brcb page (BrcbRepeatParams) and
// "基础API通用说明" (repeat times, strides in 32-byte DataBlocks).
//
// Model. Brcb(dst, src0, repeatTime, {dstBlkStride, dstRepStride}): each repeat r takes the 8
// consecutive elements src0[8r .. 8r + 7] and fills one 32-byte DataBlock of dst with each:
// element j of repeat r fills DataBlock r*dstRepStride + j*dstBlkStride of dst (all its
// 32 / sizeof(T) elements). repeatTime in [0, 255] (a uint8_t); the strides are uint16_t.
// Element types: 2- and 4-byte types (half, float, int16_t, uint16_t, int32_t, uint32_t;
// bfloat16_t where the API lists it is not modelled). Both operands must be allocated, 32-byte
// aligned and hold every element the call touches. The call reads all of src0 before it writes
// dst. Memory check: a filled DataBlock is defined iff the source element is.
#ifndef PYASC_CPU_BRCB_H
#define PYASC_CPU_BRCB_H

#include <vector>

#include "vector_level0.h"

namespace AscendC {

// Address strides of Brcb's destination, in 32-byte DataBlocks.
struct BrcbRepeatParams {
  BrcbRepeatParams() = default;
  BrcbRepeatParams(uint16_t dstBlkStrideIn, uint16_t dstRepStrideIn)
      : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn) {}
  uint16_t dstBlkStride = 1;
  uint16_t dstRepStride = 8;
};

template <class T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t repeatTime,
                 const BrcbRepeatParams& repeatParams) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Brcb: needs a 2- or 4-byte element type");
  const char* api = "Brcb";
  constexpr int64_t kPerBlock = static_cast<int64_t>(cpu::kBlock / sizeof(T));
  const int64_t reps = repeatTime;
  const int64_t bs = repeatParams.dstBlkStride, rs = repeatParams.dstRepStride;
  if (reps == 0) return;
  const T* s = cpu::detail::CheckUB(api, "src0", src0, reps * 8);
  int64_t last = 0;  // the last DataBlock written
  for (int64_t r = 0; r < reps; ++r)
    for (int64_t j = 0; j < 8; ++j) last = std::max(last, r * rs + j * bs);
  T* d = cpu::detail::CheckUB(api, "dst", dst, (last + 1) * kPerBlock);
  const std::vector<T> vals(s, s + reps * 8);
  std::vector<uint8_t> ok(static_cast<size_t>(reps * 8), 1);
  if constexpr (cpu::kMemcheck)
    for (int64_t i = 0; i < reps * 8; ++i) ok[static_cast<size_t>(i)] = cpu::l0::LaneDefined(src0, i);
  for (int64_t r = 0; r < reps; ++r)
    for (int64_t j = 0; j < 8; ++j) {
      const int64_t at = (r * rs + j * bs) * kPerBlock;
      for (int64_t e = 0; e < kPerBlock; ++e) {
        d[at + e] = vals[static_cast<size_t>(r * 8 + j)];
        if constexpr (cpu::kMemcheck)
          cpu::l0::SetLaneDefined(dst, at + e, ok[static_cast<size_t>(r * 8 + j)] != 0);
      }
    }
}

}  // namespace AscendC

#endif  // PYASC_CPU_BRCB_H
