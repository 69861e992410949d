// Vectorized fp32 reductions (sum, mean, max, min) over one run of consecutive axes: the input is viewed as
// [outer, n, inner] with the reduced axes in n. inner == 1 (trailing axes, e.g. a mean over the last dim)
// reduces contiguous rows with 16 partial results (e.g. a mean over H, W of NCHW); otherwise the inner dim
// is the vector dim (e.g. a sum over C of NCHW, where inner = H*W).

#include <cmath>
#include <limits>

#include "engine/backends/cpu/fast_kernels.h"
#include "engine/backends/cpu/vec_math.h"
#include "engine/ops/common.h"

namespace kiln::engine::cpu::fast {
namespace {

/// Combines accumulator and value; max/min propagate NaN like the reference.
inline float combine(ReduceOp op, float acc, float v) {
  switch (op) {
    case ReduceOp::Max: return (v > acc || v != v) ? v : acc;
    case ReduceOp::Min: return (v < acc || v != v) ? v : acc;
    default: return acc + v;
  }
}

inline float init_of(ReduceOp op) {
  if (op == ReduceOp::Max) return -std::numeric_limits<float>::infinity();
  if (op == ReduceOp::Min) return std::numeric_limits<float>::infinity();
  return 0.0f;
}

KILN_SIMD_CLONES
float reduce_row(ReduceOp op, const float* x, int64_t n) {
  float acc[vec::kLanes];
  for (int j = 0; j < vec::kLanes; ++j) acc[j] = init_of(op);
  int64_t i = 0;
  if (op == ReduceOp::Max || op == ReduceOp::Min) {
    for (; i + vec::kLanes <= n; i += vec::kLanes)
      for (int j = 0; j < vec::kLanes; ++j) acc[j] = combine(op, acc[j], x[i + j]);
  } else {
    for (; i + vec::kLanes <= n; i += vec::kLanes)
      for (int j = 0; j < vec::kLanes; ++j) acc[j] += x[i + j];
  }
  float r = init_of(op);
  for (int j = 0; j < vec::kLanes; ++j) r = combine(op, r, acc[j]);
  for (; i < n; ++i) r = combine(op, r, x[i]);
  return r;
}

KILN_SIMD_CLONES
void reduce_columns(ReduceOp op, const float* x, float* y, int64_t n, int64_t inner) {
  for (int64_t i = 0; i < inner; ++i) y[i] = init_of(op);
  for (int64_t j = 0; j < n; ++j) {
    const float* row = x + j * inner;
    if (op == ReduceOp::Max || op == ReduceOp::Min) {
      for (int64_t i = 0; i < inner; ++i) y[i] = combine(op, y[i], row[i]);
    } else {
      for (int64_t i = 0; i < inner; ++i) y[i] += row[i];
    }
  }
}

class ReduceKernel : public Kernel {
 public:
  explicit ReduceKernel(const Layer& layer) : p_(layer.get<ReduceParams>()) {}

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    int64_t first = p_.axes.front(), last = p_.axes.back();
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t i = 0; i < first; ++i) outer *= x.dims[i];
    for (int64_t i = first; i <= last; ++i) n *= x.dims[i];
    for (size_t i = static_cast<size_t>(last) + 1; i < x.dims.size(); ++i) inner *= x.dims[i];
    const float* xs = x.as<float>();
    float* ys = y.as<float>();
    float div = p_.op == ReduceOp::Mean ? 1.0f / static_cast<float>(n) : 1.0f;
    bool mean = p_.op == ReduceOp::Mean;
    if (inner == 1) {
      ops::parallel(args.pool, outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          float r = reduce_row(p_.op, xs + o * n, n);
          ys[o] = mean ? r * div : r;
        }
      });
      return;
    }
    ops::parallel(args.pool, outer, 1, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        float* yo = ys + o * inner;
        reduce_columns(p_.op, xs + o * n * inner, yo, n, inner);
        if (mean)
          for (int64_t i = 0; i < inner; ++i) yo[i] *= div;
      }
    });
  }

 private:
  ReduceParams p_;
};

bool applies(const LayerInfo& info, std::string* why) {
  const auto& p = info.params<ReduceParams>();
  if (!vec_dtype_ok(info.inputs[0].dtype, why) || !vec_dtype_ok(info.outputs[0].dtype, why)) return false;
  if (p.op != ReduceOp::Sum && p.op != ReduceOp::Mean && p.op != ReduceOp::Max && p.op != ReduceOp::Min) {
    return refuse(why, std::string("reduce op ") + reduce_op_name(p.op) + " (vec takes sum, mean, max, min)");
  }
  if (p.axes.empty()) return refuse(why, "no axes");
  for (size_t i = 1; i < p.axes.size(); ++i)
    if (p.axes[i] != p.axes[i - 1] + 1) return refuse(why, "axes not consecutive");
  return true;
}

}  // namespace

void register_reduce(KernelTable& registry) {
  registry.add(KernelRow{"vec", LayerKind::Reduce, applies, make_kernel<ReduceKernel>});
}

}  // namespace kiln::engine::cpu::fast
