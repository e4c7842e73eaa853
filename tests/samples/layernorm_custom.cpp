// Sample family "basic-API LayerNorm" (written here from the public Ascend C documentation:
// ReduceSum, Adds, Mul, Muls, Add, Duplicate, Rsqrt, GetValue, SetFlag/WaitFlag with
// HardEvent::V_S and S_V): z[r] = (x[r] - mean) * rsqrt(var + eps) * gamma + beta over rows of
// `cols` floats (a multiple of 8). Rows are split over the cores, ceil(rows / blockDim) each
// (the last cores fewer or none); one row per double-buffered tile.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

struct LayerNormTilingData {
  uint32_t rows;
  uint32_t cols;
  float eps;
};

class KernelLayerNorm {
 public:
  __aicore__ inline KernelLayerNorm() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR z,
                              const LayerNormTilingData& t) {
    cols_ = t.cols;
    eps_ = t.eps;
    const uint32_t per = (t.rows + GetBlockNum() - 1) / GetBlockNum();
    const uint32_t first = per * GetBlockIdx();
    rows_ = first >= t.rows ? 0 : std::min(per, t.rows - first);
    xGm_.SetGlobalBuffer((__gm__ float*)x + first * cols_, rows_ * cols_);
    zGm_.SetGlobalBuffer((__gm__ float*)z + first * cols_, rows_ * cols_);
    gammaGm_.SetGlobalBuffer((__gm__ float*)gamma, cols_);
    betaGm_.SetGlobalBuffer((__gm__ float*)beta, cols_);
    pipe_.InitBuffer(inQueue_, BUFFER_NUM, cols_ * sizeof(float));
    pipe_.InitBuffer(outQueue_, BUFFER_NUM, cols_ * sizeof(float));
    pipe_.InitBuffer(gammaBuf_, cols_ * sizeof(float));
    pipe_.InitBuffer(betaBuf_, cols_ * sizeof(float));
    pipe_.InitBuffer(centered_, cols_ * sizeof(float));
    pipe_.InitBuffer(work_, cols_ * sizeof(float));
    pipe_.InitBuffer(stat_, 8 * sizeof(float));
  }
  __aicore__ inline void Process() {
    if (rows_ == 0) return;
    LocalTensor<float> gamma = gammaBuf_.Get<float>();
    LocalTensor<float> beta = betaBuf_.Get<float>();
    DataCopy(gamma, gammaGm_, cols_);
    DataCopy(beta, betaGm_, cols_);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    for (uint32_t r = 0; r < rows_; r++) {
      LocalTensor<float> xLocal = inQueue_.AllocTensor<float>();
      DataCopy(xLocal, xGm_[r * cols_], cols_);
      inQueue_.EnQue(xLocal);
      Compute(gamma, beta);
      LocalTensor<float> zLocal = outQueue_.DeQue<float>();
      DataCopy(zGm_[r * cols_], zLocal, cols_);
      outQueue_.FreeTensor(zLocal);
    }
  }

 private:
  __aicore__ inline float RowSum(const LocalTensor<float>& src) {
    LocalTensor<float> stat = stat_.Get<float>();
    ReduceSum(stat, src, work_.Get<float>(), cols_);
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
    return stat.GetValue(0);
  }
  __aicore__ inline void Compute(const LocalTensor<float>& gamma, const LocalTensor<float>& beta) {
    LocalTensor<float> xLocal = inQueue_.DeQue<float>();
    LocalTensor<float> zLocal = outQueue_.AllocTensor<float>();
    LocalTensor<float> d = centered_.Get<float>();
    const float mean = RowSum(xLocal) / static_cast<float>(cols_);
    SetFlag<HardEvent::S_V>(EVENT_ID0);
    WaitFlag<HardEvent::S_V>(EVENT_ID0);
    Adds(d, xLocal, -mean, cols_);
    Mul(zLocal, d, d, cols_);
    const float var = RowSum(zLocal) / static_cast<float>(cols_);
    LocalTensor<float> stat = stat_.Get<float>();
    Duplicate(stat, var + eps_, 8);
    Rsqrt(stat, stat, 8);
    SetFlag<HardEvent::V_S>(EVENT_ID1);
    WaitFlag<HardEvent::V_S>(EVENT_ID1);
    const float rstd = stat.GetValue(0);
    SetFlag<HardEvent::S_V>(EVENT_ID1);
    WaitFlag<HardEvent::S_V>(EVENT_ID1);
    Muls(d, d, rstd, cols_);
    Mul(zLocal, d, gamma, cols_);
    Add(zLocal, zLocal, beta, cols_);
    outQueue_.EnQue(zLocal);
    inQueue_.FreeTensor(xLocal);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, BUFFER_NUM> inQueue_;
  TQue<QuePosition::VECOUT, BUFFER_NUM> outQueue_;
  TBuf<TPosition::VECIN> gammaBuf_, betaBuf_;
  TBuf<TPosition::VECCALC> centered_, work_, stat_;
  GlobalTensor<float> xGm_, gammaGm_, betaGm_, zGm_;
  uint32_t rows_ = 0, cols_ = 0;
  float eps_ = 0;
};

extern "C" __global__ __aicore__ void layernorm_custom(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta,
                                                       GM_ADDR z, GM_ADDR tiling) {
  KernelLayerNorm op;
  op.Init(x, gamma, beta, z, *(__gm__ LayerNormTilingData*)tiling);
  op.Process();
}
