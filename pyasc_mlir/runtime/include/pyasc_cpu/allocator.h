// pyasc_cpu/allocator.h -- LocalMemAllocator, the UB allocator of static Tensor programming
// (included by kernel_operator.h). Written here from the public Ascend C API reference pages
// "LocalMemAllocator简介", "Alloc" and "GetCurAddr"; no CANN code.
//
// * Hands out LocalTensors from UB offset 0 upward, each rounded up to a DataBlock (so every
//   tensor starts 32-byte aligned), bounded by PYASC_UB_USABLE (what GetCoreMemSize(UB)
//   reports, docs/CPU_RUNTIME.md "UB available to a kernel"): asking beyond it throws.
// * May not be mixed with TPipe (page: "不可以与TPipe等接口混用"): constructing one while a
//   TPipe exists in the block throws, and so does constructing a TPipe after one.
// * Only Hardware::UB is modelled (the cube-side buffers have no arena on the CPU): other
//   template arguments do not compile.
#ifndef PYASC_CPU_ALLOCATOR_H
#define PYASC_CPU_ALLOCATOR_H

namespace AscendC {

enum class Hardware : uint8_t { GM, UB, L1, L0A, L0B, L0C, BIAS, FIXBUF, MAX };

template <Hardware hard = Hardware::UB>
class LocalMemAllocator {
  static_assert(hard == Hardware::UB,
                "LocalMemAllocator: only Hardware::UB is modelled by the CPU runtime");

 public:
  LocalMemAllocator() {
    if (cpu::State().pipe != nullptr)
      cpu::Fail("LocalMemAllocator: a TPipe exists in this block; LocalMemAllocator (static ",
                "Tensor programming) cannot be mixed with TPipe (LocalMemAllocator page)");
    cpu::Copy().allocator = true;
  }

  // The UB address the next Alloc returns (bytes).
  uint32_t GetCurAddr() const { return static_cast<uint32_t>(cur_); }

  template <class DataType, uint32_t tileSize>
  LocalTensor<DataType> Alloc() {
    return Take<DataType>(tileSize);
  }
  template <TPosition pos, class DataType, uint32_t tileSize>
  LocalTensor<DataType> Alloc() {
    CheckPos<pos>();
    return Take<DataType>(tileSize);
  }
  template <class DataType>
  LocalTensor<DataType> Alloc(uint32_t tileSize) {
    return Take<DataType>(tileSize);
  }
  template <TPosition pos, class DataType>
  LocalTensor<DataType> Alloc(uint32_t tileSize) {
    CheckPos<pos>();
    return Take<DataType>(tileSize);
  }

 private:
  template <TPosition pos>
  static void CheckPos() {
    static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT ||
                      pos == TPosition::VECCALC,
                  "LocalMemAllocator<Hardware::UB>::Alloc: pos must be a UB position (VECIN, "
                  "VECOUT or VECCALC)");
  }
  // tileSize elements of T (the page: "tileSize 不应超过当前物理位置剩余的内存空间").
  template <class T>
  LocalTensor<T> Take(uint32_t tileSize) {
    const uint64_t bytes = cpu::RoundUp32(static_cast<uint64_t>(tileSize) * sizeof(T));
    if (cur_ + bytes > cpu::kUbUsable)
      cpu::Fail("LocalMemAllocator::Alloc: ", tileSize, " elements of ", sizeof(T),
                " bytes need UB up to byte ", cur_ + bytes, " but only ", cpu::kUbUsable,
                " bytes are available (GetCurAddr() = ", cur_, ")");
    LocalTensor<T> t(cur_, tileSize);
    cur_ += bytes;
    return t;
  }
  uint64_t cur_ = 0;
};

}  // namespace AscendC

#endif  // PYASC_CPU_ALLOCATOR_H
