#include "engine/backends/cpu/onednn/max_relu.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "engine/backends/cpu/reduction/max_abs.h"

namespace kiln::engine::cpu::onednn {
namespace {

constexpr double kLimit = FLT_MAX / 8.0;

/// max |v| over a weight tensor's values (any floating dtype), as double.
double max_abs(const HostTensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(t.get_as_double(i)));
  return m;
}

}  // namespace

std::optional<MaxRelu> MaxRelu::for_convolution(const Layer& layer, bool winograd) {
  const auto& p = layer.get<ConvolutionParams>();
  if (winograd || p.transposed || layer.weights.empty() || !layer.weights[0].defined()) return std::nullopt;
  bool relu = false;
  MaxRelu m;
  dnnl::post_ops ops;
  for (const PostOp& op : p.post_ops) {
    if (op.kind == PostOp::Sum) {
      m.sum_scale_ += std::fabs(op.scale);
      ops.append_sum(static_cast<float>(op.scale));
    } else if (op.activation.kind == ActivationKind::Relu) {
      relu = true;
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    } else {
      return std::nullopt;
    }
  }
  if (!relu) return std::nullopt;
  // Weights [O, I/groups, k...]: one output channel's weights are contiguous.
  const HostTensor& w = layer.weights[0].value;
  const int64_t outputs = w.sizes()[0], per_output = outputs > 0 ? w.numel() / outputs : 0;
  for (int64_t o = 0; o < outputs; ++o) {
    double sum = 0;
    for (int64_t i = 0; i < per_output; ++i) sum += std::fabs(w.get_as_double(o * per_output + i));
    m.weights_bound_ = std::max(m.weights_bound_, sum);
  }
  if (layer.weights.size() > 1 && layer.weights[1].defined()) m.bias_bound_ = max_abs(layer.weights[1].value);
  if (!(m.weights_bound_ + m.bias_bound_ < kLimit)) return std::nullopt;  // (NaN weights too)
  m.attr_.set_post_ops(ops);
  m.attr_.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // as make_attr: each state owns its scratchpad
  return m;
}

bool MaxRelu::holds(const TensorView& x, const TensorView* residual, ThreadPool* pool) const {
  const auto floats = [](const TensorView& t) { return static_cast<int64_t>(t.nbytes() / sizeof(float)); };
  double bound = static_cast<double>(fast::max_abs_or_inf(x.as<float>(), floats(x), pool)) * weights_bound_ +
                 bias_bound_;
  if (!(bound < kLimit)) return false;
  if (residual != nullptr) {
    bound += sum_scale_ * static_cast<double>(fast::max_abs_or_inf(residual->as<float>(), floats(*residual), pool));
  }
  return bound < kLimit;
}

}  // namespace kiln::engine::cpu::onednn
