// pyasc_cpu/copy.h -- the DataCopy forms with DataCopyParams (strided / blocked), the DataCopy and
// DataCopyPad parameter ranges, the TPosition pairs of a UB->UB copy and SetPadValue (included
// by kernel_operator.h at its "Data movement" section).
//
// Written here from the public Ascend C API reference (pages DataCopy, "DataCopyParams",
// DataCopyPad, SetPadValue, LocalMemAllocator, InitBuffer, TQue) and the CCE intrinsic page of
// the GM<->UB padded move ("搬运并补padding"); no CANN code. docs/CPU_RUNTIME.md ("Copies") is
// the contract.
#ifndef PYASC_CPU_COPY_H
#define PYASC_CPU_COPY_H

#if !defined(PYASC_MAX_BLOCK_COUNT) || !defined(PYASC_MAX_PAD_BLOCK_LEN) ||                      \
    !defined(PYASC_MAX_QUE_BUFFERS)
#error "copy.h needs PYASC_MAX_BLOCK_COUNT, PYASC_MAX_PAD_BLOCK_LEN, PYASC_MAX_QUE_BUFFERS: pyasc_mlir.platform.header_defines()"
#endif

namespace AscendC {
namespace cpu {

// Per-block state: the DataCopyPad pad register (SetPadValue) and whether a LocalMemAllocator
// was constructed (it may not be mixed with TPipe).
struct CopyState {
  bool pad_set = false;
  size_t pad_size = 0;
  uint8_t pad[8] = {};
  bool allocator = false;
};
__attribute__((visibility("hidden"))) inline CopyState& Copy() {
  static thread_local CopyState s;
  return s;
}
inline void ResetCopyState() { Copy() = CopyState{}; }
inline void CheckNoStaticAllocator(const char* api) {
  if (Copy().allocator)
    Fail(api, ": a LocalMemAllocator was constructed in this block; LocalMemAllocator (static ",
         "Tensor programming) cannot be mixed with TPipe (LocalMemAllocator page)");
}

constexpr uint64_t kMaxU16 = std::numeric_limits<uint16_t>::max();

inline void CheckRange(const char* api, const char* field, uint64_t v, uint64_t lo, uint64_t hi) {
  if (v < lo || v > hi) Fail(api, ": ", field, " ", v, " is outside [", lo, ", ", hi, "]");
}

inline const char* PositionName(TPosition p) {
  switch (p) {
    case TPosition::GM: return "GM";
    case TPosition::VECIN: return "VECIN";
    case TPosition::VECOUT: return "VECOUT";
    case TPosition::VECCALC: return "VECCALC";
    default: return "MAX";
  }
}

// A UB->UB DataCopy connects VECIN->VECOUT, VECIN->VECCALC, VECCALC->VECOUT (and VECCALC
// scratch copies); a copy into a VECIN buffer is not one of the documented paths (VECIN is
// filled from GM only). Buffers outside the current TPipe are not checked.
template <class T>
inline void CheckUbPath(const char* api, const LocalTensor<T>& dst) {
  TPosition pos;
  if (dst.CpuValid() && State().pipe != nullptr &&
      State().pipe->CpuPositionOf(dst.CpuOffset(), pos) && pos == TPosition::VECIN)
    Fail(api, ": dst at UB offset ", dst.CpuOffset(), " is in a TPosition::VECIN buffer; a UB->UB ",
         "DataCopy goes VECIN->VECOUT, VECIN->VECCALC or VECCALC->VECOUT (VECIN is filled from GM)");
}

// The pad register value as a T (nullptr when SetPadValue was not called in this block).
template <class T>
inline const T* PadRegister(const char* api) {
  if (!Copy().pad_set) return nullptr;
  if (Copy().pad_size != sizeof(T))
    Fail(api, ": SetPadValue was given a ", Copy().pad_size, "-byte value, the copy moves ",
         sizeof(T), "-byte elements (the pad value has the type of the copied data)");
  return reinterpret_cast<const T*>(Copy().pad);
}

}  // namespace cpu

// DataCopyParams (DataCopy page, "DataCopyParams"): blockCount blocks of blockLen DataBlocks
// (32 B); srcStride / dstStride: the gap between the end of one block and the start of the next,
// in DataBlocks, on each side (GM and UB alike). Documented ranges: blockCount [1, 4095],
// blockLen [1, 65535], strides [0, 65535] (uint16_t fields). The fields here are uint32_t so a
// value past the documented range is refused instead of wrapping silently.
struct DataCopyParams {
  uint32_t blockCount = 1;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  DataCopyParams() = default;
  DataCopyParams(uint32_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
};

namespace cpu {
inline void CheckCopyParams(const char* api, const DataCopyParams& p) {
  CheckRange(api, "blockCount", p.blockCount, 1, PYASC_MAX_BLOCK_COUNT);
  CheckRange(api, "blockLen", p.blockLen, 1, kMaxU16);
  CheckRange(api, "srcStride", p.srcStride, 0, kMaxU16);
  CheckRange(api, "dstStride", p.dstStride, 0, kMaxU16);
}

// Byte geometry of a blocked copy: block k starts at k*step on a side and is len bytes long.
struct Blocks {
  uint64_t n, len, src_step, dst_step;
  uint64_t SrcEnd() const { return (n - 1) * src_step + len; }
  uint64_t DstEnd() const { return (n - 1) * dst_step + len; }
};
inline Blocks BlocksOf(const DataCopyParams& p) {
  const uint64_t len = static_cast<uint64_t>(p.blockLen) * kBlock;
  return {p.blockCount, len, len + static_cast<uint64_t>(p.srcStride) * kBlock,
          len + static_cast<uint64_t>(p.dstStride) * kBlock};
}
}  // namespace cpu

// GM -> UB (GM->VECIN): block k of blockLen*32 bytes from GM byte k*(blockLen+srcStride)*32 to
// UB byte k*(blockLen+dstStride)*32. Refuses a VECCALC destination like the count form.
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                     const DataCopyParams& p) {
  const char* api = "DataCopy(GM->UB, DataCopyParams)";
  cpu::CheckCopyParams(api, p);
  cpu::detail::CheckGmPath(api, "dst", dst);
  const cpu::Blocks b = cpu::BlocksOf(p);
  uint8_t* d = cpu::detail::CheckUBBytes(api, "dst", dst, b.DstEnd());
  const uint8_t* s = cpu::detail::CheckGMBytes(api, "src", src, b.SrcEnd());
  for (uint64_t k = 0; k < b.n; ++k) {
    if constexpr (cpu::kMemcheck) cpu::mc::Define(dst.CpuOffset() + k * b.dst_step, b.len);
    std::memmove(d + k * b.dst_step, s + k * b.src_step, b.len);
  }
}

// UB -> GM (VECOUT->GM): the same geometry, UB side the source. Every byte moved must be
// defined in memory-check builds.
template <class T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                     const DataCopyParams& p) {
  const char* api = "DataCopy(UB->GM, DataCopyParams)";
  cpu::CheckCopyParams(api, p);
  const cpu::Blocks b = cpu::BlocksOf(p);
  const uint8_t* s = cpu::detail::CheckUBBytes(api, "src", src, b.SrcEnd());
  uint8_t* d = cpu::detail::CheckGMBytes(api, "dst", dst, b.DstEnd());
  if constexpr (cpu::kMemcheck) {
    for (uint64_t k = 0; k < b.n; ++k) {
      const std::string what = cpu::Cat(" block ", k, " of ", b.n, ",");
      cpu::mc::RequireDefined(api, "src", src, k * b.src_step, b.len, what.c_str());
    }
  }
  for (uint64_t k = 0; k < b.n; ++k) std::memmove(d + k * b.dst_step, s + k * b.src_step, b.len);
}

// UB -> UB (VECIN->VECOUT, VECIN->VECCALC, VECCALC->VECOUT): strides in DataBlocks on both
// sides; definedness moves with the bytes.
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                     const DataCopyParams& p) {
  const char* api = "DataCopy(UB->UB, DataCopyParams)";
  cpu::CheckCopyParams(api, p);
  cpu::CheckUbPath(api, dst);
  const cpu::Blocks b = cpu::BlocksOf(p);
  uint8_t* d = cpu::detail::CheckUBBytes(api, "dst", dst, b.DstEnd());
  const uint8_t* s = cpu::detail::CheckUBBytes(api, "src", src, b.SrcEnd());
  for (uint64_t k = 0; k < b.n; ++k) {
    if constexpr (cpu::kMemcheck)
      cpu::mc::CopyShadow(dst.CpuOffset() + k * b.dst_step, src.CpuOffset() + k * b.src_step,
                          b.len);
    std::memmove(d + k * b.dst_step, s + k * b.src_step, b.len);
  }
}

// SetPadValue<T, pos>(v) (SetPadValue page; GM->VECIN / GM->VECOUT): sets the value a GM->UB
// DataCopyPad with isPad = false writes into its padding (the page's example: isPad false,
// rightPadding 1, SetPadValue(37) gives 37 in the padding). One register per block, reset at
// every block start; VECIN and VECOUT (and MAX, meaning either) share it.
template <class T, TPosition pos = TPosition::MAX>
inline void SetPadValue(T paddingValue) {
  static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::MAX,
                "SetPadValue: pos must be TPosition::VECIN, VECOUT or MAX");
  static_assert(sizeof(T) <= sizeof(cpu::CopyState::pad), "SetPadValue: element type too wide");
  cpu::Copy().pad_set = true;
  cpu::Copy().pad_size = sizeof(T);
  std::memcpy(cpu::Copy().pad, &paddingValue, sizeof(T));
}

}  // namespace AscendC

#endif  // PYASC_CPU_COPY_H
