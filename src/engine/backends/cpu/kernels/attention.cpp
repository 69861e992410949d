// Vectorized scaled-dot-product attention (fp32): one task per (batch, query row) — scores by dot products
// over the head dim, causal and mask applied, a max/exp/sum softmax, then the probability-weighted sum of
// value rows. q, k and v share their batch dims; the mask (bool: keep where true; float: added) broadcasts to
// the scores. Operands may be strided views (AttentionView: rows of the head dim contiguous,
// attention_layout.h).

#include <cmath>
#include <limits>
#include <vector>

#include "engine/backends/cpu/kernels/fast_kernels.h"
#include "engine/backends/cpu/kernels/vec_math.h"
#include "engine/reference/attention_layout.h"
#include "engine/reference/common.h"

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
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    // Rows per task: at least kMacsPerTask multiply-adds (a pool hand-off costs about as much as that work).
    const int64_t grain = std::max<int64_t>(1, kMacsPerTask / std::max<int64_t>(1, lk * (e + ev)));
    ref::parallel(args.pool, nb * lq, grain, [&](int64_t begin, int64_t end) {
      std::vector<float> s(static_cast<size_t>(lk));
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / lq, i = row % lq;
        const float* qi = qs + rows[0].start(b) + i * rows[0].row;
        const float* kb = ks + rows[1].start(b);
        const float* vb = vs + rows[2].start(b);
        const int64_t kst = rows[1].row, vst = rows[2].row;
        float m = kNegInf;
        const int64_t mbase = mask != nullptr ? mrows.start(row) : 0, mstep = mrows.key_stride;
        for (int64_t j = 0; j < lk; ++j) {
          float d = dot(qi, kb + j * kst, e) * scale;
          if (p_.causal && j > i) d = kNegInf;
          if (mask != nullptr) {
            const int64_t at = mbase + j * mstep;
            if (bool_mask != nullptr) {
              if (bool_mask[at] == 0) d = kNegInf;
            } else if (float_mask != nullptr) {
              d += float_mask[at];
            } else {
              d += static_cast<float>(ref::load(*mask, at));
            }
          }
          s[j] = d;
          m = d > m ? d : m;
        }
        float* yi = ys + rows[3].start(b) + i * rows[3].row;
        for (int64_t c = 0; c < ev; ++c) yi[c] = 0.0f;
        if (m == kNegInf) {  // every key masked: torch gives NaN rows
          for (int64_t c = 0; c < ev; ++c) yi[c] = std::numeric_limits<float>::quiet_NaN();
          continue;
        }
        float sum = 0;
        for (int64_t j = 0; j < lk; ++j) {
          const float pj = s[j] == kNegInf ? 0.0f : vec::exp(s[j] - m);
          sum += pj;
          if (pj != 0.0f) axpy(pj, vb + j * vst, yi, ev);
        }
        const float inv = 1.0f / sum;
        for (int64_t c = 0; c < ev; ++c) yi[c] *= inv;
      }
    });
  }

 private:
  AttentionParams p_;
};

bool applies(const LayerInfo& info) {
  for (size_t i = 0; i < 3; ++i) {
    if (info.inputs[i].dtype != DType::Float32) return false;
  }
  if (info.outputs[0].dtype != DType::Float32) return false;
  // q, k and v with the same (logical) batch dims over the whole range (no batch broadcasting).
  const auto& p = info.params<AttentionParams>();
  const auto batch = [&](int i, const Dims& d) {
    Dims l = p.view(i).empty() ? d : p.view(i).dims;
    return Dims(l.begin(), l.end() - 2);
  };
  for (int i = 1; i < 3; ++i) {
    if (batch(i, info.inputs[i].min) != batch(0, info.inputs[0].min) ||
        batch(i, info.inputs[i].max) != batch(0, info.inputs[0].max)) {
      return false;
    }
  }
  return true;
}

}  // namespace

void register_attention(CpuKernelRegistry& registry) {
  registry.add(CpuKernelFactory{"vec", LayerKind::Attention, applies, [](const LayerInfo& info) {
                                  return std::unique_ptr<Kernel>(
                                      std::make_unique<AttentionKernel>(*info.layer));
                                }});
}

}  // namespace kiln::engine::cpu::fast
