// Folds an inference batch norm into the convolution that feeds it, when the convolution's output has no
// other reader and the weights and statistics are constants with data:
//   scale = gamma / sqrt(running_var + eps)
//   weight' = weight * scale (per output channel)    bias' = (bias - running_mean) * scale + beta
// Handles aten.batch_norm.default (training=False) and _native_batch_norm_legit_no_training (saved
// statistics unused). Transposed convolutions are left alone (their output channels are grouped in dim 1).

#include <cmath>

#include "../rewrite.h"
#include "kiln/lowering/passes.h"

namespace kiln::lowering {
namespace {

bool has_data(const ir::Value* v) { return v != nullptr && v->role() == ir::ValueRole::Constant && v->data().defined(); }

bool fold_one(ir::Graph& graph, ir::Node* bn) {
  const bool legit = detail::is_op(*bn, "aten._native_batch_norm_legit_no_training.default");
  if (!legit && !(detail::is_op(*bn, "aten.batch_norm.default") && !detail::bool_arg(*bn, "training", true))) {
    return false;
  }
  for (size_t i = 1; i < bn->outputs().size(); ++i) {
    if (graph.is_output(bn->output(i)) || !graph.users(bn->output(i)).empty()) return false;
  }
  ir::Value* conv_out = detail::tensor_arg(*bn, "input");
  ir::Node* conv = conv_out ? conv_out->producer() : nullptr;
  if (conv == nullptr || !detail::is_op(*conv, "aten.convolution.default") ||
      detail::bool_arg(*conv, "transposed", false)) {
    return false;
  }
  if (graph.is_output(conv_out) || graph.users(conv_out).size() != 1) return false;
  ir::Value* weight = detail::tensor_arg(*conv, "weight");
  ir::Value* bias = detail::tensor_arg(*conv, "bias");
  ir::Value* gamma = detail::tensor_arg(*bn, "weight");
  ir::Value* beta = detail::tensor_arg(*bn, "bias");
  ir::Value* mean = detail::tensor_arg(*bn, "running_mean");
  ir::Value* var = detail::tensor_arg(*bn, "running_var");
  if (!has_data(weight) || !has_data(mean) || !has_data(var)) return false;
  if ((bias && !has_data(bias)) || (gamma && !has_data(gamma)) || (beta && !has_data(beta))) return false;
  const HostTensor& w = weight->data();
  if (w.dim() < 1 || !is_floating(w.dtype())) return false;
  const int64_t channels = w.sizes()[0];
  const int64_t per_channel = channels == 0 ? 0 : w.numel() / channels;
  auto matches = [&](ir::Value* v) { return v == nullptr || v->data().numel() == channels; };
  if (!matches(bias) || !matches(gamma) || !matches(beta) || !matches(mean) || !matches(var)) return false;
  const double eps = detail::float_arg(*bn, "eps", 1e-5);

  HostTensor new_weight(w.dtype(), w.sizes());
  HostTensor new_bias(bias ? bias->data().dtype() : w.dtype(), {channels});
  auto fold_bias = [&](int64_t c, double scale) {
    const double b = beta ? beta->data().get_as_double(c) : 0.0;
    const double conv_bias = bias ? bias->data().get_as_double(c) : 0.0;
    new_bias.set_from_double(c, (conv_bias - mean->data().get_as_double(c)) * scale + b);
  };
  for (int64_t c = 0; c < channels; ++c) {
    const double g = gamma ? gamma->data().get_as_double(c) : 1.0;
    const double scale = g / std::sqrt(var->data().get_as_double(c) + eps);
    if (w.dtype() == DType::Float32) {  // the common case, without per-element dtype dispatch (same arithmetic)
      const float* src = w.data_as<float>() + c * per_channel;
      float* dst = new_weight.mutable_data_as<float>() + c * per_channel;
      for (int64_t i = 0; i < per_channel; ++i) dst[i] = static_cast<float>(static_cast<double>(src[i]) * scale);
      fold_bias(c, scale);
      continue;
    }
    for (int64_t i = c * per_channel; i < (c + 1) * per_channel; ++i) {
      new_weight.set_from_double(i, w.get_as_double(i) * scale);
    }
    fold_bias(c, scale);
  }
  ir::Value* w_const = detail::tensor_constant(graph, std::move(new_weight), conv->name() + "_folded_weight");
  ir::Value* b_const = detail::tensor_constant(graph, std::move(new_bias), conv->name() + "_folded_bias");
  conv->set_arg("weight", ir::Argument::tensor(w_const));
  conv->set_arg("bias", ir::Argument::tensor(b_const));
  detail::replace_node(graph, bn, {conv_out});
  for (ir::Value* v : {weight, bias, gamma, beta, mean, var}) detail::erase_if_dead_constant(graph, v);
  return true;
}

bool run_fold_bn(ir::Graph& graph, const PassContext& context) {
  if (!context.inference_mode) return false;
  bool changed = false;
  for (ir::Node* node : graph.nodes()) changed |= fold_one(graph, node);
  return changed;
}

}  // namespace

std::shared_ptr<Pass> make_fold_batch_norm_into_conv_pass() {
  return std::make_shared<FunctionPass>(
      "fold_batch_norm_into_conv", "Folds inference batch norm with constant statistics into the preceding "
      "convolution's weight and bias.",
      run_fold_bn);
}

}  // namespace kiln::lowering
