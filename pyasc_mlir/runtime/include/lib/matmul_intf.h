// lib/matmul_intf.h -- the header real Ascend C kernels include for the high-level Matmul API.
// In the clean-room CPU runtime the Matmul API lives in kernel_operator.h (docs/CPU_RUNTIME.md).
#ifndef PYASC_LIB_MATMUL_INTF_H
#define PYASC_LIB_MATMUL_INTF_H
#include "kernel_operator.h"
#endif  // PYASC_LIB_MATMUL_INTF_H
