// Vectorized softmax / log-softmax (fp32). The common case, the last axis, runs one row per task with
// max, exp-and-sum and scale passes; another axis runs over [outer, n, inner] with the inner dim as the
// vector dim.

#include "engine/backends/cpu/reduction/softmax_rows.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/backends/cpu/fast_kernels.h"
#include "engine/backends/cpu/vec_math.h"
#include "engine/ops/common.h"

namespace kiln::engine::cpu::fast {

namespace {
/// 16 floats as one GCC vector (one AVX-512 register; two AVX2 / four SSE registers in the other clones):
/// the max below is written on it because GCC leaves `a > b ? a : b` over an array of partials scalar.
typedef float Lanes __attribute__((vector_size(vec::kLanes * sizeof(float))));
}  // namespace

KILN_SIMD_CLONES
float row_max(const float* x, int64_t n) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  Lanes acc;
  for (int j = 0; j < vec::kLanes; ++j) acc[j] = kNegInf;
  int64_t i = 0;
  for (; i + vec::kLanes <= n; i += vec::kLanes) {
    Lanes v;
    std::memcpy(&v, x + i, sizeof(v));
    acc = acc > v ? acc : v;
  }
  float m = kNegInf;
  for (int j = 0; j < vec::kLanes; ++j) m = m > acc[j] ? m : acc[j];
  for (; i < n; ++i) m = m > x[i] ? m : x[i];
  return m;
}

KILN_SIMD_CLONES
float exp_sum(const float* x, float* y, int64_t n, float m) {
  float acc[vec::kLanes] = {};
  int64_t i = 0;
  for (; i + vec::kLanes <= n; i += vec::kLanes)
    for (int j = 0; j < vec::kLanes; ++j) {
      float e = vec::exp(x[i + j] - m);
      y[i + j] = e;
      acc[j] += e;
    }
  if (i < n) {  // the tail as one more vector, padded with -inf (exp gives 0): scalar exps cost 2-3x per value
    float t[vec::kLanes], e[vec::kLanes];
    for (int j = 0; j < vec::kLanes; ++j) t[j] = i + j < n ? x[i + j] : -std::numeric_limits<float>::infinity();
    for (int j = 0; j < vec::kLanes; ++j) {
      e[j] = vec::exp(t[j] - m);
      acc[j] += e[j];
    }
    for (int64_t j = 0; i + j < n; ++j) y[i + j] = e[j];
  }
  float s = 0;
  for (int j = 0; j < vec::kLanes; ++j) s += acc[j];
  return s;
}

KILN_SIMD_CLONES
void scale_row(float* y, int64_t n, float f) {
  for (int64_t i = 0; i < n; ++i) y[i] *= f;
}

namespace {

KILN_SIMD_CLONES
void shift(const float* x, float* y, int64_t n, float c) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - c;
}

/// One [n, inner] slab: softmax over n for every inner position, vectorized across inner.
KILN_SIMD_CLONES
void slab(const float* x, float* y, int64_t n, int64_t inner, bool log, float* mx, float* sum) {
  for (int64_t i = 0; i < inner; ++i) {
    mx[i] = -std::numeric_limits<float>::infinity();
    sum[i] = 0;
  }
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < inner; ++i) mx[i] = mx[i] > x[j * inner + i] ? mx[i] : x[j * inner + i];
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < inner; ++i) {
      float e = vec::exp(x[j * inner + i] - mx[i]);
      sum[i] += e;
      if (!log) y[j * inner + i] = e;
    }
  if (log) {
    for (int64_t i = 0; i < inner; ++i) mx[i] += std::log(sum[i]);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i) y[j * inner + i] = x[j * inner + i] - mx[i];
  } else {
    for (int64_t i = 0; i < inner; ++i) sum[i] = 1.0f / sum[i];
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i) y[j * inner + i] *= sum[i];
  }
}

class SoftmaxKernel : public Kernel {
 public:
  explicit SoftmaxKernel(const Layer& layer) : p_(layer.get<SoftmaxParams>()) {}

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    int64_t axis = p_.axis < 0 ? p_.axis + static_cast<int64_t>(x.dims.size()) : p_.axis;
    int64_t outer = 1, n = x.dims[axis], inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= x.dims[i];
    for (size_t i = static_cast<size_t>(axis) + 1; i < x.dims.size(); ++i) inner *= x.dims[i];
    const float* xs = x.as<float>();
    float* ys = y.as<float>();
    if (n == 0 || outer * inner == 0) return;
    if (inner == 1) {
      ops::parallel(args.pool, outer, std::max<int64_t>(1, 8192 / n), [&](int64_t b, int64_t e) {
        std::vector<float> tmp;
        for (int64_t r = b; r < e; ++r) {
          const float* xr = xs + r * n;
          float* yr = ys + r * n;
          float m = row_max(xr, n);
          if (p_.log) {
            // y = x - m - log(sum exp(x - m)); the exps go to a scratch row so y may alias x.
            tmp.resize(static_cast<size_t>(n));
            float s = exp_sum(xr, tmp.data(), n, m);
            shift(xr, yr, n, m + std::log(s));
          } else {
            float s = exp_sum(xr, yr, n, m);
            scale_row(yr, n, 1.0f / s);
          }
        }
      });
      return;
    }
    ops::parallel(args.pool, outer, 1, [&](int64_t b, int64_t e) {
      std::vector<float> mx(static_cast<size_t>(inner)), sum(static_cast<size_t>(inner));
      for (int64_t o = b; o < e; ++o) slab(xs + o * n * inner, ys + o * n * inner, n, inner, p_.log, mx.data(), sum.data());
    });
  }

 private:
  SoftmaxParams p_;
};

bool applies(const LayerInfo& info, std::string* why) {
  return vec_dtype_ok(info.inputs[0].dtype, why) && vec_dtype_ok(info.outputs[0].dtype, why);
}

}  // namespace

void register_softmax(KernelTable& registry) {
  registry.add(KernelRow{"vec", LayerKind::Softmax, applies, make_kernel<SoftmaxKernel>});
}

}  // namespace kiln::engine::cpu::fast
