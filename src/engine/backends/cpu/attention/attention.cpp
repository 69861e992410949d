// Scaled-dot-product attention (fp32). Where oneDNN's sgemm runs (onednn::sgemm_runs), one task per (batch,
// block of query rows): the block's scores as one product Q K^T (sgemm), causal and mask applied, a
// max/exp/sum softmax per row, then the probability-weighted values as one product P V (sgemm) written
// straight into the output rows. Otherwise one task per query row: scores by dot products over the head dim,
// the softmax, then the weighted sum of value rows. q, k and v share their batch dims; the mask (bool: keep
// where true; float: added) broadcasts to the scores. Operands may be strided views (AttentionView: rows of
// the head dim contiguous, attention_layout.h).

#include <cmath>
#include <limits>
#include <vector>

#include <oneapi/dnnl/dnnl.h>

#include "engine/backends/cpu/fast_kernels.h"
#include "engine/backends/cpu/onednn/onednn_common.h"
#include "engine/backends/cpu/reduction/softmax_rows.h"
#include "engine/backends/cpu/vec_math.h"
#include "engine/ops/attention_layout.h"
#include "engine/ops/common.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::fast {
namespace {

KILN_SIMD_CLONES
float dot(const float* a, const float* b, int64_t n) {
  float acc[vec::kLanes] = {};
  int64_t i = 0;
  for (; i + vec::kLanes <= n; i += vec::kLanes)
    for (int j = 0; j < vec::kLanes; ++j) acc[j] += a[i + j] * b[i + j];
  float s = 0;
  for (int j = 0; j < vec::kLanes; ++j) s += acc[j];
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

KILN_SIMD_CLONES
void axpy(float a, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

/// A mask broadcast to the scores [batch..., lq, lk]: where the mask row of a score row starts and its step
/// along the keys (0 when the mask broadcasts over them), without materializing an offset per score (for
/// BERT-base's 12 x 128 x 128 scores, computing those offsets on one thread cost more than the attention).
struct MaskRows {
  Dims dims;                     // the scores' leading dims (batch..., lq)
  std::vector<int64_t> strides;  // the mask's stride along each (0 where it broadcasts)
  int64_t key_stride = 0;

  int64_t start(int64_t row) const {
    int64_t off = 0;
    for (size_t d = dims.size(); d-- > 0;) {
      off += (row % dims[d]) * strides[d];
      row /= dims[d];
    }
    return off;
  }
};

MaskRows mask_rows(const Dims& mask, const Dims& scores) {
  size_t r = scores.size(), lead = r - mask.size();
  std::vector<int64_t> stride(r, 0);
  int64_t s = 1;
  for (size_t i = mask.size(); i-- > 0;) {
    stride[lead + i] = mask[i] == 1 ? 0 : s;
    s *= mask[i];
  }
  MaskRows m;
  m.dims.assign(scores.begin(), scores.end() - 1);
  m.strides.assign(stride.begin(), stride.end() - 1);
  m.key_stride = stride.back();
  return m;
}

/// Work per pool task: a smaller split costs more in hand-offs than it saves (tiny_encoder's attention, 80
/// rows of 10 keys x 16 dims: 27 us over 2 threads split in 4 tasks, 10 us on the caller alone).
constexpr int64_t kMacsPerTask = 32768;
/// Query rows per task of the sgemm path: enough rows for sgemm's register blocking, few enough that
/// BERT-base's 12 heads x 128 queries still make 24 tasks for the pool.
constexpr int64_t kQueryBlock = 64;

/// y (m x n, row stride ldy) = alpha * a (m x k) * b or b^T (k x n) through oneDNN's row-major sgemm.
void sgemm(char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* y, int64_t ldy) {
  dnnl_status_t st = dnnl_sgemm('N', transb, m, n, k, alpha, a, lda, b, ldb, 0.0f, y, ldy);
  KILN_CHECK(st == dnnl_success, Internal, "attention: oneDNN sgemm ", m, "x", n, "x", k, " failed (status ",
             static_cast<int>(st), ")");
}

/// One Attention call as both paths see it.
struct Problem {
  const float *q, *k, *v;
  float* y;
  const AttentionRows* rows;  // q, k, v, output
  int64_t nb, lq, lk, e, ev;
  float scale;
  const TensorView* mask;  // null without a mask
  MaskRows mrows;
  const float* float_mask;
  const uint8_t* bool_mask;
};

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// Whether a score is NaN: row_max skips NaN depending on its position, so a row of -inf and NaN scores can
/// report a max of -inf.
bool any_nan(const float* s, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    if (std::isnan(s[j])) return true;
  }
  return false;
}

/// Keys [0, n) of the query rows [first, last]: every key, or with a causal limit (top-left, key j <= query
/// i) those up to the last row's; the keys past it are -inf for every row, so no row needs their scores.
int64_t keys_needed(const AttentionParams& p, int64_t lk, int64_t last) {
  return p.causal ? std::min(lk, last + 1) : lk;
}

/// Adds the mask and the causal limit to the scores s[0, n) of flat score row `row` (query i; n from
/// keys_needed, the keys past it are not computed); returns their max.
float mask_scores(const AttentionParams& p, const Problem& pb, int64_t row, int64_t i, int64_t n, float* s) {
  if (pb.mask != nullptr) {
    const int64_t base = pb.mrows.start(row), step = pb.mrows.key_stride;
    if (pb.bool_mask != nullptr) {
      for (int64_t j = 0; j < n; ++j) s[j] = pb.bool_mask[base + j * step] == 0 ? kNegInf : s[j];
    } else if (pb.float_mask != nullptr) {
      for (int64_t j = 0; j < n; ++j) s[j] += pb.float_mask[base + j * step];
    } else {
      for (int64_t j = 0; j < n; ++j) s[j] += static_cast<float>(ops::load(*pb.mask, base + j * step));
    }
  }
  if (p.causal) {
    for (int64_t j = i + 1; j < n; ++j) s[j] = kNegInf;
  }
  return row_max(s, n);
}

class AttentionKernel : public Kernel {
 public:
  explicit AttentionKernel(const Layer& layer) : p_(layer.get<AttentionParams>()) {}

  void execute(KernelArgs& args) const override {
    const TensorView &q = args.inputs[0], &k = args.inputs[1], &v = args.inputs[2], &y = args.outputs[0];
    // Logical operands: dense, or strided views of the buffers (rows of E / Ev contiguous either way).
    AttentionOperand ops[4];
    AttentionRows rows[4];
    for (int i = 0; i < 4; ++i) {
      ops[i] = attention_operand(p_, i, i < 3 ? args.inputs[i].dims : y.dims);
      rows[i] = attention_rows(ops[i]);
    }
    const Dims& qd = ops[0].dims;
    const size_t r = qd.size();
    const int64_t lq = qd[r - 2], e = qd[r - 1], lk = ops[1].dims[r - 2], ev = ops[2].dims[r - 1];
    int64_t nb = 1;
    for (size_t d = 0; d + 2 < r; ++d) nb *= qd[d];
    const float scale = static_cast<float>(p_.scale > 0 ? p_.scale : 1.0 / std::sqrt(static_cast<double>(e)));
    const TensorView* mask = p_.has_mask ? &args.inputs[3] : nullptr;
    MaskRows mrows;
    if (mask != nullptr) {
      Dims scores(qd.begin(), qd.end() - 1);
      scores.push_back(lk);
      mrows = mask_rows(mask->dims, scores);
    }
    const float* float_mask = mask != nullptr && mask->dtype == DType::Float32 ? mask->as<float>() : nullptr;
    const auto* bool_mask =
        mask != nullptr && mask->dtype == DType::Bool ? static_cast<const uint8_t*>(mask->data) : nullptr;
    const float *qs = q.as<float>(), *ks = k.as<float>(), *vs = v.as<float>();
    float* ys = y.as<float>();
    Problem pb{qs, ks, vs, ys, rows, nb, lq, lk, e, ev, scale, mask, mrows, float_mask, bool_mask};
    // sgemm wants each row stride at least its row (a view of stride-0 rows takes the row path).
    const bool gemm_rows_ok = lq > 0 && lk > 0 && e > 0 && ev > 0 && rows[0].row >= e && rows[1].row >= e &&
                              rows[2].row >= ev && rows[3].row >= ev;
    if (gemm_rows_ok && onednn::sgemm_runs()) {
      run_blocks(args.pool, pb);
    } else {
      run_rows(args.pool, pb);
    }
  }

 private:
  /// One task per query row (dot products per key, then the weighted sum of value rows).
  void run_rows(ThreadPool* pool, const Problem& pb) const {
    const int64_t lq = pb.lq, lk = pb.lk, e = pb.e, ev = pb.ev;
    const AttentionRows* rows = pb.rows;
    // Rows per task: at least kMacsPerTask multiply-adds (a pool hand-off costs about as much as that work).
    const int64_t grain = std::max<int64_t>(1, kMacsPerTask / std::max<int64_t>(1, lk * (e + ev)));
    ops::parallel(pool, pb.nb * lq, grain, [&](int64_t begin, int64_t end) {
      std::vector<float> s(static_cast<size_t>(lk));
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / lq, i = row % lq;
        const float* qi = pb.q + rows[0].start(b) + i * rows[0].row;
        const float* kb = pb.k + rows[1].start(b);
        const float* vb = pb.v + rows[2].start(b);
        const int64_t nk = keys_needed(p_, lk, i);
        for (int64_t j = 0; j < nk; ++j) s[j] = dot(qi, kb + j * rows[1].row, e) * pb.scale;
        const float m = mask_scores(p_, pb, row, i, nk, s.data());
        float* yi = pb.y + rows[3].start(b) + i * rows[3].row;
        if (m == kNegInf) {  // every key masked: 0, as torch's safe softmax (NaN where a score is NaN)
          std::fill(yi, yi + ev, any_nan(s.data(), nk) ? std::nanf("") : 0.0f);
          continue;
        }
        std::fill(yi, yi + ev, 0.0f);
        float sum = 0;
        for (int64_t j = 0; j < nk; ++j) {
          const float pj = s[j] == kNegInf ? 0.0f : vec::exp(s[j] - m);
          sum += pj;
          if (pj != 0.0f) axpy(pj, vb + j * rows[2].row, yi, ev);
        }
        const float inv = 1.0f / sum;
        for (int64_t c = 0; c < ev; ++c) yi[c] *= inv;
      }
    });
  }

  /// One task per (batch, block of kQueryBlock query rows): two sgemm products around a row softmax.
  void run_blocks(ThreadPool* pool, const Problem& pb) const {
    const int64_t lq = pb.lq, lk = pb.lk, ev = pb.ev;
    const AttentionRows* rows = pb.rows;
    const int64_t blocks = (lq + kQueryBlock - 1) / kQueryBlock;
    const int64_t grain =
        std::max<int64_t>(1, kMacsPerTask / std::max<int64_t>(1, kQueryBlock * lk * (pb.e + ev)));
    // Run inline (one chunk or one thread), sgemm may use the pool's threads; inside the team it runs alone.
    onednn::use_pool_threads(pool);
    ops::parallel(pool, pb.nb * blocks, grain, [&](int64_t begin, int64_t end) {
      // The block's scores, then its probabilities (a separate buffer: exp_sum vectorizes only out of place).
      std::vector<float> s(static_cast<size_t>(kQueryBlock * lk)), prob(s.size());
      for (int64_t t = begin; t < end; ++t) {
        const int64_t b = t / blocks, i0 = (t % blocks) * kQueryBlock, n = std::min(kQueryBlock, lq - i0);
        const float* qi = pb.q + rows[0].start(b) + i0 * rows[0].row;
        float* yi = pb.y + rows[3].start(b) + i0 * rows[3].row;
        // Causal: only the keys up to the block's last query (a decoder's blocks need half the keys on
        // average).
        const int64_t nk = keys_needed(p_, lk, i0 + n - 1);
        sgemm('T', n, nk, pb.e, pb.scale, qi, rows[0].row, pb.k + rows[1].start(b), rows[1].row, s.data(),
              nk);
        for (int64_t r = 0; r < n; ++r) {
          float* sr = s.data() + r * nk;
          float* pr = prob.data() + r * nk;
          const float m = mask_scores(p_, pb, b * lq + i0 + r, i0 + r, nk, sr);
          // Every key masked: probabilities 0, as torch's safe softmax (NaN where a score is NaN).
          if (m == kNegInf) {
            std::fill(pr, pr + nk, any_nan(sr, nk) ? std::nanf("") : 0.0f);
          } else {
            scale_row(pr, nk, 1.0f / exp_sum(sr, pr, nk, m));
          }
        }
        sgemm('N', n, ev, nk, 1.0f, prob.data(), nk, pb.v + rows[2].start(b), rows[2].row, yi, rows[3].row);
      }
    });
  }

  AttentionParams p_;
};

bool applies(const LayerInfo& info, std::string* why) {
  for (size_t i = 0; i < 3; ++i) {
    if (!vec_dtype_ok(info.inputs[i].dtype, why)) return false;
  }
  if (!vec_dtype_ok(info.outputs[0].dtype, why)) return false;
  // q, k and v with the same (logical) batch dims over the whole range (no batch broadcasting).
  const auto& p = info.params<AttentionParams>();
  const auto batch = [&](int i, const Dims& d) {
    Dims l = p.view(i).empty() ? d : p.view(i).dims;
    if (i > 0 && p.kv_group > 1 && l.size() >= 3 && l[l.size() - 3] >= 0)
      l[l.size() - 3] *= p.kv_group;  // GQA
    return Dims(l.begin(), l.end() - 2);
  };
  for (int i = 1; i < 3; ++i) {
    if (batch(i, info.inputs[i].min) != batch(0, info.inputs[0].min) ||
        batch(i, info.inputs[i].max) != batch(0, info.inputs[0].max)) {
      return refuse(why, "q, k and v differ in batch dims (no broadcasting)");
    }
  }
  return true;
}

}  // namespace

void register_attention(KernelTable& registry) {
  registry.add(KernelRow{"vec", LayerKind::Attention, applies, make_kernel<AttentionKernel>});
}

}  // namespace kiln::engine::cpu::fast
