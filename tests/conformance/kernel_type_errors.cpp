// Must NOT compile: every KERNEL_TASK_TYPE_DEFAULT below is refused at compile time (an int, an
// unknown name, the KERNEL_TYPE_MAX bound). tests/test_conformance_level0.py checks that g++
// reports an error on each marked line.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void bad_int(GM_ADDR) { KERNEL_TASK_TYPE_DEFAULT(0); }  // ERR
extern "C" __global__ __aicore__ void bad_name(GM_ADDR) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_VECTOR_ONLY);  // ERR
}
extern "C" __global__ __aicore__ void bad_max(GM_ADDR) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MAX);  // ERR
}
