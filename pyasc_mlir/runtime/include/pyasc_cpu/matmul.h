// pyasc_cpu/matmul.h -- the high-level Matmul API of the clean-room CPU runtime (included by
// kernel_operator.h after pyasc_cpu/mix.h; docs/CPU_RUNTIME.md, "Matmul").
//
// Sources (public Ascend C API reference, Matmul Kernel API pages): MatmulType (TPosition,
// CubeFormat, type, isTrans), Matmul<A, B, C, BIAS>, REGIST_MATMUL_OBJ, SetTensorA/B, SetBias,
// DisableBias, SetOrgShape, SetSingleShape, SetTail, Iterate<sync>, IterateAll, GetTensorC
// (to VECIN or GM; enSequentialWrite: contiguous [baseM, baseN] blocks, or each block at its
// place in the [singleCoreM, singleCoreN] result), End; TCubeTiling; the system workspace
// (SetSysWorkSpace). A and B are ND matrices in GM (half, bfloat16_t or float; the Atlas A2
// Matmul API documents bfloat16_t A/B with float C), C is float in GM or VECIN;
// the bias is [1, N] in GM. Products accumulate in float, k in order.
#ifndef PYASC_CPU_MATMUL_H
#define PYASC_CPU_MATMUL_H

#include "mix.h"

// Data formats of Matmul operands (global, as in the real headers; also AscendC::CubeFormat).
enum class CubeFormat { ND = 0, NZ, ND_ALIGN };

namespace AscendC {
using ::CubeFormat;

template <TPosition POSITION, CubeFormat FORMAT, class TYPE, bool ISTRANS = false>
struct MatmulType {
  constexpr static TPosition pos = POSITION;
  constexpr static CubeFormat format = FORMAT;
  using T = TYPE;
  constexpr static bool isTrans = ISTRANS;
};

// The documented TCubeTiling fields (int; all zero unless set).
struct TCubeTiling {
  int32_t usedCoreNum = 0, M = 0, N = 0, Ka = 0, Kb = 0;
  int32_t singleCoreM = 0, singleCoreN = 0, singleCoreK = 0;
  int32_t baseM = 0, baseN = 0, baseK = 0, depthA1 = 0, depthB1 = 0, stepM = 0, stepN = 0;
  int32_t isBias = 0, transLength = 0, iterateOrder = 0, shareMode = 0, shareL1Size = 0;
  int32_t shareL0CSize = 0, shareUbSize = 0, batchM = 0, batchN = 0, singleBatchM = 0;
  int32_t singleBatchN = 0, stepKa = 0, stepKb = 0, depthAL1CacheUB = 0, depthBL1CacheUB = 0;
  int32_t dbL0A = 0, dbL0B = 0, dbL0C = 0;
};

namespace cpu {
constexpr uint64_t kL1Bytes = PYASC_L1_BYTES;
constexpr uint64_t kL0ABytes = PYASC_L0A_BYTES;
constexpr uint64_t kL0BBytes = PYASC_L0B_BYTES;
constexpr uint64_t kL0CBytes = PYASC_L0C_BYTES;
constexpr int64_t kNdStrideMax = PYASC_ND_STRIDE_MAX;  // documented ND row-stride range

// Throw unless `t` meets the documented TCubeTiling constraints for A/B elements of
// `elem` bytes (the same list as pyasc_mlir.cube_tiling.tiling_violations).
inline void CheckCubeTiling(const TCubeTiling& t, uint64_t elem, bool transA, bool transB) {
  const char* api = "REGIST_MATMUL_OBJ";
  const std::pair<const char*, int32_t> positive[] = {
      {"M", t.M}, {"N", t.N}, {"Ka", t.Ka}, {"Kb", t.Kb}, {"singleCoreM", t.singleCoreM},
      {"singleCoreN", t.singleCoreN}, {"singleCoreK", t.singleCoreK}, {"baseM", t.baseM},
      {"baseN", t.baseN}, {"baseK", t.baseK}, {"depthA1", t.depthA1}, {"depthB1", t.depthB1},
      {"stepM", t.stepM}, {"stepN", t.stepN}, {"stepKa", t.stepKa}, {"stepKb", t.stepKb},
      {"dbL0A", t.dbL0A}, {"dbL0B", t.dbL0B}, {"dbL0C", t.dbL0C},
      {"usedCoreNum", t.usedCoreNum}};
  for (const auto& f : positive)
    if (f.second <= 0) Fail(api, ": invalid TCubeTiling: ", f.first, " = ", f.second,
                            " must be positive");
  const std::pair<const char*, int32_t> fractal[] = {
      {"baseM", t.baseM}, {"baseN", t.baseN}, {"baseK", t.baseK}};
  for (const auto& f : fractal)
    if (f.second % kFractal) Fail(api, ": invalid TCubeTiling: ", f.first, " = ", f.second,
                                  " is not a multiple of ", kFractal);
  const uint64_t bm = t.baseM, bn = t.baseN, bk = t.baseK;
  auto limit = [&](const char* what, uint64_t need, const char* mem, uint64_t have) {
    if (need > have) Fail(api, ": invalid TCubeTiling: ", what, " = ", need,
                          " bytes exceeds ", mem, " (", have, " bytes)");
  };
  limit("dbL0A * baseM * baseK * sizeof(A)", t.dbL0A * bm * bk * elem, "L0A", kL0ABytes);
  limit("dbL0B * baseK * baseN * sizeof(B)", t.dbL0B * bk * bn * elem, "L0B", kL0BBytes);
  limit("dbL0C * baseM * baseN * 4", t.dbL0C * bm * bn * 4, "L0C", kL0CBytes);
  limit("(depthA1 * baseM + depthB1 * baseN) * baseK * sizeof(A)",
        (t.depthA1 * bm + t.depthB1 * bn) * bk * elem, "L1", kL1Bytes);
  if (t.depthA1 % (t.stepM * t.stepKa))
    Fail(api, ": invalid TCubeTiling: depthA1 is not a multiple of stepM * stepKa");
  if (t.depthB1 % (t.stepN * t.stepKb))
    Fail(api, ": invalid TCubeTiling: depthB1 is not a multiple of stepN * stepKb");
  if (t.singleCoreM > t.M || t.singleCoreN > t.N || t.singleCoreK > t.Ka ||
      t.singleCoreK > t.Kb)
    Fail(api, ": invalid TCubeTiling: singleCoreM/N/K = ", t.singleCoreM, "/", t.singleCoreN,
         "/", t.singleCoreK, " exceed M/N/Ka/Kb = ", t.M, "/", t.N, "/", t.Ka, "/", t.Kb);
  if ((transA ? t.M : t.Ka) > kNdStrideMax || (transB ? t.Kb : t.N) > kNdStrideMax)
    Fail(api, ": invalid TCubeTiling: an ND row stride (", transA ? "M" : "Ka", " = ",
         transA ? t.M : t.Ka, ", ", transB ? "Kb" : "N", " = ", transB ? t.Kb : t.N,
         ") exceeds ", kNdStrideMax);
  if (t.iterateOrder != 0 && t.iterateOrder != 1)
    Fail(api, ": invalid TCubeTiling: iterateOrder = ", t.iterateOrder, " must be 0 or 1");
  if (t.isBias != 0 && t.isBias != 1)
    Fail(api, ": invalid TCubeTiling: isBias = ", t.isBias, " must be 0 or 1");
}

// Throw unless the UB tensor `t` lies in a TPosition::VECIN buffer of the current TPipe (the
// documented destination of GetTensorC into UB: "C to VECIN").
template <class T>
inline void CheckVecin(const char* api, const LocalTensor<T>& t) {
  TPosition pos;
  if (!t.CpuValid() || State().pipe == nullptr || !State().pipe->CpuPositionOf(t.CpuOffset(), pos))
    return;  // not a TQue/TBuf tensor: CheckUB reports what is wrong with it
  if (pos != TPosition::VECIN)
    Fail(api, ": C LocalTensor at UB offset ", t.CpuOffset(), " is in a TPosition::",
         pos == TPosition::VECOUT ? "VECOUT" : pos == TPosition::VECCALC ? "VECCALC" : "GM",
         " buffer; the Matmul API writes C to TPosition::VECIN (a TQue or TBuf of VECIN)");
}
}  // namespace cpu

// The bias type a Matmul gets when none is given: C's type, in GM.
template <class C_TYPE>
using DefaultBiasType = MatmulType<TPosition::GM, CubeFormat::ND, typename C_TYPE::T>;

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = DefaultBiasType<C_TYPE>>
class Matmul {
 public:
  using SrcT = typename A_TYPE::T;
  using DstT = typename C_TYPE::T;
  using BiasT = typename BIAS_TYPE::T;
  static_assert(std::is_same_v<SrcT, typename B_TYPE::T>, "Matmul: A and B share one type");
  static_assert(std::is_same_v<SrcT, half> || std::is_same_v<SrcT, bfloat16_t> ||
                    std::is_same_v<SrcT, float>,
                "Matmul (CPU): A/B must be half, bfloat16_t or float");
  static_assert(std::is_same_v<DstT, float>, "Matmul (CPU): C must be float");
  static_assert(std::is_same_v<BiasT, float> || std::is_same_v<BiasT, half>,
                "Matmul (CPU): the bias must be float or half");
  static_assert(A_TYPE::pos == TPosition::GM && B_TYPE::pos == TPosition::GM,
                "Matmul (CPU): A and B must be in GM");
  static_assert(A_TYPE::format == CubeFormat::ND && B_TYPE::format == CubeFormat::ND &&
                    C_TYPE::format == CubeFormat::ND,
                "Matmul (CPU): ND formats only");
  static_assert(C_TYPE::pos == TPosition::VECIN || C_TYPE::pos == TPosition::GM,
                "Matmul: C goes to TPosition::GM or TPosition::VECIN");
  static_assert(BIAS_TYPE::pos == TPosition::GM, "Matmul (CPU): the bias must be in GM");

  // A's / B's top-left element in GM; a transpose needs isTrans in the MatmulType.
  void SetTensorA(const GlobalTensor<SrcT>& gm, bool isTransposeA = false) {
    Live("Matmul::SetTensorA");
    if (isTransposeA && !A_TYPE::isTrans)
      cpu::Fail("Matmul::SetTensorA: isTransposeA = true needs isTrans = true in A's MatmulType");
    a_ = gm;
    transA_ = isTransposeA;
    hasA_ = true;
    Restart();
  }
  void SetTensorB(const GlobalTensor<SrcT>& gm, bool isTransposeB = false) {
    Live("Matmul::SetTensorB");
    if (isTransposeB && !B_TYPE::isTrans)
      cpu::Fail("Matmul::SetTensorB: isTransposeB = true needs isTrans = true in B's MatmulType");
    b_ = gm;
    transB_ = isTransposeB;
    hasB_ = true;
    Restart();
  }
  // The [1, N] bias added to every row of C (needs isBias = 1 in the tiling).
  void SetBias(const GlobalTensor<BiasT>& gm) {
    const TCubeTiling& t = Live("Matmul::SetBias");
    if (t.isBias == 0)
      cpu::Fail("Matmul::SetBias: the TCubeTiling has isBias = 0 (the tiling was made without a "
                "bias)");
    bias_ = gm;
    hasBias_ = true;
    Restart();
  }
  void DisableBias() {
    Live("Matmul::DisableBias");
    hasBias_ = false;
    Restart();
  }

  // The original matrices: A [orgM, orgKa], B [orgKb, orgN] (the ND row strides).
  void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0) {
    Live("Matmul::SetOrgShape");
    const int v[4] = {orgM, orgN, orgKa, orgKb};
    const char* const names[4] = {"orgM", "orgN", "orgKa", "orgKb"};
    for (int i = 0; i < 4; ++i)
      if (v[i] < 1 || v[i] > cpu::kNdStrideMax)
        cpu::Fail("Matmul::SetOrgShape: ", names[i], " = ", v[i], " is outside [1, ",
                  cpu::kNdStrideMax, "]");
    (void)orgKc;
    m_ = orgM;
    n_ = orgN;
    ka_ = orgKa;
    kb_ = orgKb;
    Restart();
  }
  void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK); }

  // This computation's shape: each in [1, the original extent].
  void SetSingleShape(int singleM, int singleN, int singleK) {
    Live("Matmul::SetSingleShape");
    const int v[3] = {singleM, singleN, singleK};
    const int64_t top[3] = {m_, n_, std::min(ka_, kb_)};
    for (int i = 0; i < 3; ++i)
      if (v[i] < 1 || v[i] > top[i])
        cpu::Fail("Matmul::SetSingleShape: single", "MNK"[i], " = ", v[i],
                  " is outside [1, ", top[i], "] (the original shape)");
    tm_ = v[0];
    tn_ = v[1];
    tk_ = v[2];
    Restart();
  }

  // This computation's singleCoreM/N/K (-1 keeps the tiling's); each in [1, singleCore*].
  void SetTail(int tailM = -1, int tailN = -1, int tailK = -1) {
    const TCubeTiling& t = Live("Matmul::SetTail");
    const int v[3] = {tailM < 0 ? t.singleCoreM : tailM, tailN < 0 ? t.singleCoreN : tailN,
                      tailK < 0 ? t.singleCoreK : tailK};
    const int top[3] = {t.singleCoreM, t.singleCoreN, t.singleCoreK};
    for (int i = 0; i < 3; ++i)
      if (v[i] < 1 || v[i] > top[i])
        cpu::Fail("Matmul::SetTail: tail", "MNK"[i], " = ", v[i], " is outside [1, singleCore",
                  "MNK"[i], " = ", top[i], "]");
    tm_ = v[0];
    tn_ = v[1];
    tk_ = v[2];
    Restart();
  }

  // Computes the next [baseM, baseN] block of C (M first when iterateOrder == 0) over the
  // whole K with float accumulation; false when every block was computed.
  template <bool sync = true>
  bool Iterate(bool enPartialSum = false) {
    const TCubeTiling& t = Live("Matmul::Iterate");
    if (!sync) cpu::Fail("Matmul::Iterate<false>: the asynchronous form is not modelled");
    if (enPartialSum) cpu::Fail("Matmul::Iterate: enPartialSum is not supported");
    if (!hasA_ || !hasB_) cpu::Fail("Matmul::Iterate: SetTensorA and SetTensorB must come first");
    const int64_t mBlocks = (tm_ + t.baseM - 1) / t.baseM;
    const int64_t nBlocks = (tn_ + t.baseN - 1) / t.baseN;
    if (next_ >= mBlocks * nBlocks) {
      rows_ = 0;
      return false;
    }
    const int64_t mi = t.iterateOrder == 0 ? next_ % mBlocks : next_ / nBlocks;
    const int64_t ni = t.iterateOrder == 0 ? next_ / mBlocks : next_ % nBlocks;
    seq_ = next_++;
    r0_ = mi * t.baseM;
    c0_ = ni * t.baseN;
    rows_ = std::min<int64_t>(t.baseM, tm_ - r0_);
    cols_ = std::min<int64_t>(t.baseN, tn_ - c0_);
    Compute();
    return true;
  }

  // The block Iterate computed, into a VECIN tensor. enSequentialWrite: [baseM, baseN] ND at
  // c[0] (its rows; columns past its width are 0; c holds at least baseM * baseN elements);
  // otherwise at its place (r0, c0) of the [singleM, singleN] result in c (row stride singleN,
  // 32-byte aligned rows).
  template <bool sync = true>
  void GetTensorC(const LocalTensor<DstT>& c, uint8_t enAtomic = 0, bool enSequentialWrite = false) {
    static_assert(C_TYPE::pos == TPosition::VECIN,
                  "Matmul::GetTensorC(LocalTensor): C's MatmulType must be TPosition::VECIN");
    const char* api = "Matmul::GetTensorC";
    const TCubeTiling& t = TakeBlock<sync>(api, enAtomic);
    cpu::CheckVecin(api, c);
    const uint64_t bn = static_cast<uint64_t>(t.baseN);
    if (enSequentialWrite) {
      const uint64_t need = static_cast<uint64_t>(t.baseM) * bn;
      if (c.CpuValid() && c.CpuSize() < need)
        cpu::FailAccess(api, ": C LocalTensor at UB offset ", c.CpuOffset(), " holds ",
                        c.CpuSize(), " elements; baseM * baseN = ", need, " are required");
      float* d = cpu::detail::CheckUB(api, "C", c, static_cast<int64_t>(rows_ * bn));
      for (int64_t i = 0; i < rows_; ++i) {
        float* row = d + static_cast<uint64_t>(i) * bn;
        std::memcpy(row, acc_.data() + i * cols_, static_cast<size_t>(cols_) * sizeof(float));
        std::fill(row + cols_, row + bn, 0.0f);
      }
      if constexpr (cpu::kMemcheck) cpu::mc::Define(c.CpuOffset(), rows_ * bn * sizeof(float));
    } else {
      if (tn_ * sizeof(float) % cpu::kBlock)
        cpu::Fail(api, ": singleN = ", tn_, " floats is not a whole number of ", cpu::kBlock,
                  "-byte blocks: an ND C in UB needs aligned rows (use enSequentialWrite)");
      const int64_t end = (r0_ + rows_ - 1) * tn_ + c0_ + cols_;
      float* d = cpu::detail::CheckUB(api, "C", c, end);
      for (int64_t i = 0; i < rows_; ++i) {
        std::memcpy(d + (r0_ + i) * tn_ + c0_, acc_.data() + i * cols_,
                    static_cast<size_t>(cols_) * sizeof(float));
        if constexpr (cpu::kMemcheck)
          cpu::mc::Define(c.CpuOffset() + ((r0_ + i) * tn_ + c0_) * sizeof(float),
                          cols_ * sizeof(float));
      }
    }
    rows_ = 0;
  }

  // The block Iterate computed, into GM. enSequentialWrite: the k-th block (iteration order)
  // at gm[k * baseM * baseN], ND with row stride baseN; otherwise at its place (r0, c0) of C,
  // row stride N (the original shape). Only the block's [rows, cols] elements are written.
  template <bool sync = true>
  void GetTensorC(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0,
                  bool enSequentialWrite = false) {
    static_assert(C_TYPE::pos == TPosition::GM,
                  "Matmul::GetTensorC(GlobalTensor): C's MatmulType must be TPosition::GM");
    const TCubeTiling& t = TakeBlock<sync>("Matmul::GetTensorC", enAtomic);
    StoreGM(t, gm, enSequentialWrite);
    rows_ = 0;
  }

  // Every block of C into GM (C at TPosition::GM), as GetTensorC after each Iterate.
  template <bool sync = true>
  void IterateAll(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0,
                  bool enSequentialWrite = false, bool waitIterateAll = false,
                  bool fakeMsg = false) {
    static_assert(C_TYPE::pos == TPosition::GM,
                  "Matmul::IterateAll(GlobalTensor): C's MatmulType must be TPosition::GM");
    const char* api = "Matmul::IterateAll";
    const TCubeTiling& t = Live(api);
    if (!sync) cpu::Fail(api, "<false>: the asynchronous form is not modelled");
    if (enAtomic != 0) cpu::Fail(api, ": enAtomic is not modelled");
    (void)waitIterateAll;
    (void)fakeMsg;
    Restart();
    while (Iterate()) StoreGM(t, gm, enSequentialWrite);
    rows_ = 0;
  }

  // The object's last call in this core.
  void End() {
    Live("Matmul::End");
    ended_ = true;
  }

  // ---- CPU internals: REGIST_MATMUL_OBJ ----
  void CpuRegister(TPipe* pipe, const TCubeTiling* tiling) {
    if (tiling == nullptr) cpu::Fail("REGIST_MATMUL_OBJ: null TCubeTiling");
    if (tiling_ != nullptr) cpu::Fail("REGIST_MATMUL_OBJ: the Matmul object is already registered");
    cpu::CheckCubeTiling(*tiling, sizeof(SrcT), A_TYPE::isTrans, B_TYPE::isTrans);
    tiling_ = tiling;
    if (tiling->transLength > 0)
      pipe->CpuTake(cpu::RoundUp32(static_cast<uint64_t>(tiling->transLength)));
    m_ = tiling->M;
    n_ = tiling->N;
    ka_ = tiling->Ka;
    kb_ = tiling->Kb;
    tm_ = tiling->singleCoreM;
    tn_ = tiling->singleCoreN;
    tk_ = tiling->singleCoreK;
  }

 private:
  const TCubeTiling& Live(const char* api) const {
    if (tiling_ == nullptr)
      cpu::Fail(api, ": the Matmul object was not registered (REGIST_MATMUL_OBJ)");
    if (ended_) cpu::Fail(api, ": the Matmul object was already ended (End)");
    return *tiling_;
  }
  template <bool sync>
  const TCubeTiling& TakeBlock(const char* api, uint8_t enAtomic) const {
    const TCubeTiling& t = Live(api);
    if (!sync) cpu::Fail(api, "<false>: the asynchronous form is not modelled");
    if (enAtomic != 0) cpu::Fail(api, ": enAtomic is not modelled");
    if (rows_ == 0)
      cpu::Fail(api, ": no block to get: Iterate computed none since the last GetTensorC / "
                "SetTensorA / SetTensorB / SetBias / SetTail / SetSingleShape / SetOrgShape");
    return t;
  }
  void Restart() {
    next_ = 0;
    rows_ = 0;
  }
  void StoreGM(const TCubeTiling& t, const GlobalTensor<DstT>& gm, bool sequential) {
    const int64_t ld = sequential ? t.baseN : n_;
    const int64_t at = sequential ? seq_ * t.baseM * t.baseN : r0_ * n_ + c0_;
    float* d = cpu::detail::CheckGM("Matmul::GetTensorC", "C", gm,
                                    static_cast<uint64_t>(at + (rows_ - 1) * ld + cols_));
    for (int64_t i = 0; i < rows_; ++i)
      std::memcpy(d + at + i * ld, acc_.data() + i * cols_,
                  static_cast<size_t>(cols_) * sizeof(float));
  }
  // A [rows, cols] ND matrix view with row stride ld, bounds-checked.
  static const SrcT* View(const char* role, const GlobalTensor<SrcT>& g, int64_t rows,
                          int64_t cols, int64_t ld) {
    const uint64_t last = static_cast<uint64_t>((rows - 1) * ld + cols);
    return cpu::detail::CheckGM("Matmul::Iterate", role, g, last);
  }
  void Compute() {
    const int64_t k = tk_;
    // A block [rows_, k] and B block [k, cols_] as float (half and bfloat16_t convert exactly).
    std::vector<float> a(static_cast<size_t>(rows_ * k)), b(static_cast<size_t>(k * cols_));
    if (transA_) {  // A stored [K, M], row stride M
      const SrcT* p = View("A", a_, k, r0_ + rows_, m_);
      for (int64_t q = 0; q < k; ++q)
        for (int64_t i = 0; i < rows_; ++i) a[i * k + q] = static_cast<float>(p[q * m_ + r0_ + i]);
    } else {  // A stored [M, Ka]
      const SrcT* p = View("A", a_, r0_ + rows_, k, ka_);
      for (int64_t i = 0; i < rows_; ++i)
        for (int64_t q = 0; q < k; ++q) a[i * k + q] = static_cast<float>(p[(r0_ + i) * ka_ + q]);
    }
    if (transB_) {  // B stored [N, Kb], row stride Kb
      const SrcT* p = View("B", b_, c0_ + cols_, k, kb_);
      for (int64_t j = 0; j < cols_; ++j)
        for (int64_t q = 0; q < k; ++q) b[q * cols_ + j] = static_cast<float>(p[(c0_ + j) * kb_ + q]);
    } else {  // B stored [Kb, N]
      const SrcT* p = View("B", b_, k, c0_ + cols_, n_);
      for (int64_t q = 0; q < k; ++q)
        for (int64_t j = 0; j < cols_; ++j) b[q * cols_ + j] = static_cast<float>(p[q * n_ + c0_ + j]);
    }
    acc_.assign(static_cast<size_t>(rows_ * cols_), 0.0f);
    for (int64_t i = 0; i < rows_; ++i) {
      float* out = acc_.data() + i * cols_;
      for (int64_t q = 0; q < k; ++q) {
        const float x = a[i * k + q];
        const float* brow = b.data() + q * cols_;
        for (int64_t j = 0; j < cols_; ++j) out[j] += x * brow[j];
      }
    }
    if (hasBias_) {  // bias[c0 + j] (converted to float) added once after the K sum
      const BiasT* p = cpu::detail::CheckGM("Matmul::Iterate", "bias", bias_,
                                            static_cast<uint64_t>(c0_ + cols_));
      for (int64_t i = 0; i < rows_; ++i)
        for (int64_t j = 0; j < cols_; ++j) acc_[i * cols_ + j] += static_cast<float>(p[c0_ + j]);
    }
  }

  const TCubeTiling* tiling_ = nullptr;
  GlobalTensor<SrcT> a_, b_;
  GlobalTensor<BiasT> bias_;
  bool hasA_ = false, hasB_ = false, hasBias_ = false, transA_ = false, transB_ = false;
  bool ended_ = false;
  int64_t m_ = 0, n_ = 0, ka_ = 0, kb_ = 0;  // original shape (ND row strides)
  int64_t tm_ = 0, tn_ = 0, tk_ = 0, next_ = 0, seq_ = 0, r0_ = 0, c0_ = 0, rows_ = 0, cols_ = 0;
  std::vector<float> acc_;
};

namespace cpu {
inline void RegistMatmulPairs(TPipe*) {}
template <class MM, class... Rest>
inline void RegistMatmulPairs(TPipe* pipe, MM& mm, const TCubeTiling* tiling, Rest&&... rest) {
  mm.CpuRegister(pipe, tiling);
  RegistMatmulPairs(pipe, rest...);
}
// REGIST_MATMUL_OBJ: needs a Cube core (not KERNEL_TYPE_AIV_ONLY), the system workspace
// (SetSysWorkspace before it, so GetSysWorkSpacePtr() is not null) and must come before the
// first InitBuffer (documented for split-core mode; the CPU build requires it always, so the
// Matmul library's UB share comes first).
template <class... Pairs>
inline void RegistMatmul(TPipe* pipe, GM_ADDR workspace, Pairs&&... pairs) {
  static_assert(sizeof...(Pairs) % 2 == 0 && sizeof...(Pairs) <= 8,
                "REGIST_MATMUL_OBJ takes 1 to 4 (Matmul object, &TCubeTiling) pairs");
  if (pipe == nullptr) Fail("REGIST_MATMUL_OBJ: null TPipe");
  const KernelMetaType kt = DeclaredKernelType();
  if (kt == KERNEL_TYPE_AIV_ONLY || kt == KERNEL_TYPE_MIX_AIV_1_0)
    Fail("REGIST_MATMUL_OBJ: the kernel is declared ", KernelTypeName(kt),
         ", which has no Cube core: declare KERNEL_TYPE_MIX_AIC_1_1 or KERNEL_TYPE_MIX_AIC_1_2");
  if (GetSysWorkSpacePtr() == nullptr || workspace == nullptr)
    Fail("REGIST_MATMUL_OBJ: no system workspace: call SetSysWorkspace(workspace) with the "
         "kernel's workspace (the host allocates GetLibApiWorkSpaceSize() bytes) before it; "
         "GetSysWorkSpacePtr() is null");
  if (pipe->CpuUsedBytes() != 0)
    Fail("REGIST_MATMUL_OBJ: must come before the first InitBuffer (", pipe->CpuUsedBytes(),
         " bytes of UB were already handed out)");
  RegistMatmulPairs(pipe, pairs...);
}
}  // namespace cpu
}  // namespace AscendC

#define REGIST_MATMUL_OBJ(tpipe, workspace, ...) \
  ::AscendC::cpu::RegistMatmul((tpipe), (workspace), __VA_ARGS__)

// The matmul:: names of the samples (matmul::Matmul, matmul::MatmulType).
namespace matmul {
using AscendC::Matmul;
using AscendC::MatmulType;
}  // namespace matmul

#endif  // PYASC_CPU_MATMUL_H
