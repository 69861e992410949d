// The sweep's case list (joined from one file per family) and the helpers cases are written with.

#include <random>

#include "engine/sweep/sweep.h"

namespace kiln::engine::sweep {

std::vector<SweepCase> sweep_cases() {
  std::vector<SweepCase> cases;
  add_linalg_cases(cases);
  add_pointwise_cases(cases);
  add_reduction_cases(cases);
  add_movement_cases(cases);
  add_dynamic_cases(cases);
  add_nonfinite_cases(cases);
  add_larger_cases(cases);
  add_edge_cases(cases);
  add_half_precision_variants(cases);
  return cases;
}

void add_half_precision_variants(std::vector<SweepCase>& cases) {
  // Kinds whose dtypes are params (cast, fill), fixed (constant, shape) or only moved (the movement kinds run
  // the same code for any 2-byte dtype and have f16/bf16 cases of their own).
  auto skip = [](LayerKind k) {
    switch (k) {
      case LayerKind::Cast:
      case LayerKind::Fill:
      case LayerKind::Constant:
      case LayerKind::Shape:
      case LayerKind::Shuffle:
      case LayerKind::Concat:
      case LayerKind::Slice:
      case LayerKind::Gather:
      case LayerKind::Scatter:
      case LayerKind::Padding:
      case LayerKind::NonZero:
      case LayerKind::Reformat: return true;
      default: return false;
    }
  };
  const size_t n = cases.size();
  for (size_t i = 0; i < n; ++i) {
    const SweepCase c = cases[i];  // a copy: push_back below may move the vector
    bool all_f32 = !c.inputs.empty();
    for (const InputSpec& s : c.inputs)
      all_f32 = all_f32 && (s.dtype == DType::Float32 || s.dtype == DType::Bool);
    if (skip(c.layer.kind) || !all_f32 || c.name.rfind("larger_", 0) == 0) continue;
    for (DType half : {DType::Float16, DType::BFloat16}) {
      SweepCase v = c;
      v.name += half == DType::Float16 ? "@f16" : "@bf16";
      v.derived = true;
      for (InputSpec& s : v.inputs) {
        if (s.dtype == DType::Float32) s.dtype = half;
      }
      cases.push_back(std::move(v));
    }
  }
}

Layer make_layer(LayerKind kind, LayerParams params, std::vector<Weights> weights) {
  Layer l;
  l.kind = kind;
  l.params = std::move(params);
  l.weights = std::move(weights);
  return l;
}

Weights random_weights(const Dims& dims, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  int64_t n = 1;
  for (int64_t x : dims) n *= x;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return Weights(HostTensor::from_floats(v, dims));
}

InputSpec in(const Dims& dims, DType dtype, double lo, double hi) { return InputSpec{dtype, dims, lo, hi}; }

InputSpec ints(const Dims& dims, DType dtype, int64_t lo, int64_t hi) {
  return InputSpec{dtype, dims, static_cast<double>(lo), static_cast<double>(hi)};
}

InputSpec bools(const Dims& dims) { return InputSpec{DType::Bool, dims, 0.0, 2.0}; }

InputSpec offered(InputSpec x, TensorFormat format) {
  x.offered = format;
  return x;
}

PoolingParams pooling(PoolingParams::Kind kind, std::vector<int64_t> window, std::vector<int64_t> stride,
                      std::vector<int64_t> pre, std::vector<int64_t> post) {
  PoolingParams p;
  p.kind = kind;
  p.dilation = std::vector<int64_t>(window.size(), 1);
  p.window = std::move(window);
  p.stride = std::move(stride);
  p.pre_padding = std::move(pre);
  p.post_padding = std::move(post);
  return p;
}

PostOp activation_post_op(ActivationKind kind, double alpha, double beta) {
  return PostOp{PostOp::Activation, ActivationParams{kind, alpha, beta}, 1.0};
}

}  // namespace kiln::engine::sweep
