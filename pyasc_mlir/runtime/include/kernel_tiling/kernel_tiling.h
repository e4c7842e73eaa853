// kernel_tiling/kernel_tiling.h -- the header real Ascend C kernels include for the tiling
// structures of the high-level APIs. In the clean-room CPU runtime those live in
// kernel_operator.h; this header makes them visible as the real one does: TCubeTiling (the
// Matmul tiling, docs/CPU_RUNTIME.md "Matmul") at global scope and as AscendC::tiling::TCubeTiling.
#ifndef PYASC_KERNEL_TILING_KERNEL_TILING_H
#define PYASC_KERNEL_TILING_KERNEL_TILING_H

#include "../kernel_operator.h"

namespace AscendC {
namespace tiling {
using TCubeTiling = ::AscendC::TCubeTiling;
}  // namespace tiling
}  // namespace AscendC

using AscendC::TCubeTiling;

#endif  // PYASC_KERNEL_TILING_KERNEL_TILING_H
