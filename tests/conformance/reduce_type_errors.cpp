// Must NOT compile: element types the Atlas A2 pages do not list for the reductions and
// GatherMask, and a GatherMask pattern type that does not match the element size.
// tests/test_conformance_reduce.py checks that g++ reports an error on each marked line.
#include "kernel_operator.h"

using namespace AscendC;

void whole_int(LocalTensor<int32_t> d, LocalTensor<int32_t> s) {
  WholeReduceSum<int32_t>(d, s, 64, 1, 1, 1, 8);  // ERR
}
void block_int(LocalTensor<int16_t> d, LocalTensor<int16_t> s) {
  BlockReduceMax<int16_t>(d, s, 1, 128, 1, 1, 8);  // ERR
}
void pair_int(LocalTensor<int32_t> d, LocalTensor<int32_t> s) {
  PairReduceSum<int32_t>(d, s, 1, 64, 1, 1, 8);  // ERR
}
void sum_int(LocalTensor<int32_t> d, LocalTensor<int32_t> s, LocalTensor<int32_t> w) {
  ReduceSum<int32_t>(d, s, w, 64);  // ERR
}
void max_int(LocalTensor<int16_t> d, LocalTensor<int16_t> s, LocalTensor<int16_t> w) {
  ReduceMax<int16_t>(d, s, w, 128, 1, 8, true);  // ERR
}
void gather_pattern(LocalTensor<float> d, LocalTensor<float> s, LocalTensor<uint16_t> p) {
  uint64_t n = 0;
  GatherMask(d, s, p, false, 0, GatherMaskParams{1, 1, 0, 0}, n);  // ERR
}
void gather_int8(LocalTensor<int8_t> d, LocalTensor<int8_t> s) {
  uint64_t n = 0;
  GatherMask(d, s, uint8_t(1), false, 0, GatherMaskParams{1, 1, 0, 0}, n);  // ERR
}
