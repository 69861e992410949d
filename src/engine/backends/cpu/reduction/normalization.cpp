// Vectorized layer / RMS / group / instance normalization (fp32): one normalization group per task, groups
// spread over the pool. Mean and variance use two passes over the group in float with 16 partial sums (RMS:
// one pass, the mean of squares).

#include <cmath>

#include "engine/backends/cpu/fast_kernels.h"
#include "engine/backends/cpu/vec_math.h"
#include "engine/ops/common.h"

namespace kiln::engine::cpu::fast {
namespace {

KILN_SIMD_CLONES
void mean_inv_std(const float* x, int64_t n, float eps, float* mean_out, float* inv_out) {
  float acc[vec::kLanes] = {};
  int64_t i = 0;
  for (; i + vec::kLanes <= n; i += vec::kLanes)
    for (int j = 0; j < vec::kLanes; ++j) acc[j] += x[i + j];
  float s = 0;
  for (int j = 0; j < vec::kLanes; ++j) s += acc[j];
  for (; i < n; ++i) s += x[i];
  float mean = s / static_cast<float>(n);
  float acc2[vec::kLanes] = {};
  i = 0;
  for (; i + vec::kLanes <= n; i += vec::kLanes)
    for (int j = 0; j < vec::kLanes; ++j) {
      float d = x[i + j] - mean;
      acc2[j] += d * d;
    }
  float v = 0;
  for (int j = 0; j < vec::kLanes; ++j) v += acc2[j];
  for (; i < n; ++i) v += (x[i] - mean) * (x[i] - mean);
  *mean_out = mean;
  *inv_out = 1.0f / std::sqrt(v / static_cast<float>(n) + eps);
}

/// 1 / sqrt(mean(x^2) + eps): RMS norm's factor.
KILN_SIMD_CLONES
float rms_inv(const float* x, int64_t n, float eps) {
  float acc[vec::kLanes] = {};
  int64_t i = 0;
  for (; i + vec::kLanes <= n; i += vec::kLanes)
    for (int j = 0; j < vec::kLanes; ++j) acc[j] += x[i + j] * x[i + j];
  float s = 0;
  for (int j = 0; j < vec::kLanes; ++j) s += acc[j];
  for (; i < n; ++i) s += x[i] * x[i];
  return 1.0f / std::sqrt(s / static_cast<float>(n) + eps);
}

/// y = (x - mean) * inv * scale[j] + bias[j] (scale/bias may be null).
KILN_SIMD_CLONES
void normalize_vector(const float* x, float* y, int64_t n, float mean, float inv, const float* scale,
                      const float* bias) {
  if (scale && bias) {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - mean) * inv * scale[j] + bias[j];
  } else if (scale) {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - mean) * inv * scale[j];
  } else if (bias) {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - mean) * inv + bias[j];
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - mean) * inv;
  }
}

/// y = (x - mean) * inv * s + b with scalar s, b (one channel of a group norm).
KILN_SIMD_CLONES
void normalize_scalar(const float* x, float* y, int64_t n, float mean, float inv, float s, float b) {
  float a = inv * s, c = b - mean * inv * s;
  for (int64_t j = 0; j < n; ++j) y[j] = x[j] * a + c;
}

class NormalizationKernel : public Kernel {
 public:
  explicit NormalizationKernel(const Layer& layer) : p_(layer.get<NormalizationParams>()) {
    if (layer.weights.size() > 0 && layer.weights[0].defined()) scale_ = ops::host_floats(layer.weights[0].value);
    if (layer.weights.size() > 1 && layer.weights[1].defined()) bias_ = ops::host_floats(layer.weights[1].value);
  }

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    const float* xs = x.as<float>();
    float* ys = y.as<float>();
    const float* scale = scale_.empty() ? nullptr : scale_.data();
    const float* bias = bias_.empty() ? nullptr : bias_.data();
    float eps = static_cast<float>(p_.epsilon);
    if (p_.over_trailing_dims()) {
      const bool rms = p_.kind == NormalizationParams::Rms;
      int64_t n = 1;
      for (size_t i = static_cast<size_t>(p_.axis); i < x.dims.size(); ++i) n *= x.dims[i];
      int64_t rows = n ? x.numel() / n : 0;
      ops::parallel(args.pool, rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          float mean = 0, inv;
          if (rms) {
            inv = rms_inv(xs + r * n, n, eps);
          } else {
            mean_inv_std(xs + r * n, n, eps, &mean, &inv);
          }
          normalize_vector(xs + r * n, ys + r * n, n, mean, inv, scale, bias);
        }
      });
      return;
    }
    int64_t channels = x.dims[1];
    int64_t g = p_.kind == NormalizationParams::Instance ? channels : p_.groups;
    int64_t spatial = 1;
    for (size_t i = 2; i < x.dims.size(); ++i) spatial *= x.dims[i];
    int64_t cpg = channels / g, group_size = cpg * spatial;
    ops::parallel(args.pool, x.dims[0] * g, 1, [&](int64_t b, int64_t e) {
      for (int64_t gi = b; gi < e; ++gi) {
        float mean, inv;
        const float* src = xs + gi * group_size;
        mean_inv_std(src, group_size, eps, &mean, &inv);
        for (int64_t c = 0; c < cpg; ++c) {
          int64_t ch = (gi % g) * cpg + c;
          normalize_scalar(src + c * spatial, ys + gi * group_size + c * spatial, spatial, mean, inv,
                           scale ? scale[ch] : 1.0f, bias ? bias[ch] : 0.0f);
        }
      }
    });
  }

 private:
  NormalizationParams p_;
  std::vector<float> scale_, bias_;
};

bool applies(const LayerInfo& info, std::string* why) {
  if (!vec_dtype_ok(info.inputs[0].dtype, why) || !vec_dtype_ok(info.outputs[0].dtype, why)) return false;
  const auto& p = info.params<NormalizationParams>();
  if (p.over_trailing_dims()) return p.axis >= 0 || refuse(why, "layer / RMS norm without an axis");
  return info.inputs[0].opt.size() >= 2 || refuse(why, "group / instance norm of rank < 2");
}

}  // namespace

void register_normalization(KernelTable& registry) {
  registry.add(KernelRow{"vec", LayerKind::Normalization, applies, make_kernel<NormalizationKernel>});
}

}  // namespace kiln::engine::cpu::fast
