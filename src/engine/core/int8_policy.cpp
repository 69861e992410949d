// The layers an INT8 build may quantize (int8_policy.h).

#include "engine/core/int8_policy.h"

#include <algorithm>
#include <optional>

#include "engine/ops/shape_inference.h"

namespace kiln::engine {
namespace {

// A convolution or matrix multiply whose weights (kernel, or the constant operand b) are in the layer.
bool weighted_layer(const Layer& l) {
  if (l.kind == LayerKind::Convolution) return !l.get<ConvolutionParams>().transposed;
  return l.kind == LayerKind::MatrixMultiply && !l.weights.empty() && l.weights[0].defined();
}

// Whether convolution `l`'s post-ops are all ReLU (or residual sums): they commute with the quantization.
bool relu_only(const Layer& l) {
  const auto& ops = l.get<ConvolutionParams>().post_ops;
  return std::all_of(ops.begin(), ops.end(), [](const PostOp& p) {
    return p.kind == PostOp::Sum || p.activation.kind == ActivationKind::Relu;
  });
}

}  // namespace

std::vector<bool> int8_allowed_layers(const Plan::Impl& g, const BuilderConfig& config) {
  std::vector<bool> allowed(g.layers.size(), false);
  if (!config.allows(Precision::INT8) && !config.allows(Precision::FP8)) return allowed;
  std::vector<size_t> weighted;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    if (g.is_kernel_layer(static_cast<int64_t>(i)) && weighted_layer(g.layers[i].layer))
      weighted.push_back(i);
  }
  for (size_t k = 0; k < weighted.size(); ++k) {
    const bool first_or_last = k == 0 || k + 1 == weighted.size();
    if (first_or_last && !config.int8_first_last) continue;
    const Layer& l = g.layers[weighted[k]].layer;
    allowed[weighted[k]] = g.tensors[l.inputs[0]].range.has_value();
  }
  return allowed;
}

DType int8_storage(const Backend& backend, const DynamicRange& range) {
  return range.non_negative() && backend.int8_unsigned() ? DType::UInt8 : DType::Int8;
}

bool may_stay_int8(const Plan::Impl& g, const std::vector<bool>& allowed, int64_t id) {
  const PlanTensor& t = g.tensors[static_cast<size_t>(id)];
  if (t.is_input || t.is_output || !is_floating(t.dtype) || !t.range || !t.range->usable() || t.producer < 0 ||
      static_cast<size_t>(id) >= g.consumers.size() || g.consumers[id].empty())
    return false;
  auto int8_conv = [&](int64_t l) {
    return allowed[static_cast<size_t>(l)] && g.layers[l].layer.kind == LayerKind::Convolution;
  };
  // (the producer's tactic is chosen: layers are timed in order; the readers' are a guess)
  if (!int8_conv(t.producer) || !tactic_is_int8(g, t.producer) || !relu_only(g.layers[t.producer].layer))
    return false;
  return std::all_of(g.consumers[id].begin(), g.consumers[id].end(), [&](int64_t c) {
    const auto& in = g.layers[c].layer.inputs;
    return int8_conv(c) && std::count(in.begin(), in.end(), id) == 1;
  });
}

int keep_int8_between_layers(Plan::Impl& g, bool explicit_quantization, bool timed) {
  g.derive();  // consumers
  const size_t nl = g.layers.size();
  std::vector<bool> int8(nl, false);
  for (size_t i = 0; i < nl; ++i) {
    int8[i] = g.is_kernel_layer(static_cast<int64_t>(i)) &&
              g.layers[i].layer.kind == LayerKind::Convolution && tactic_is_int8(g, static_cast<int64_t>(i));
  }
  // (explicit quantization: whether a convolution adds a residual, always fp32 there)
  auto adds_residual = [&](int64_t layer) {
    return count_sum_post_ops(g.layers[layer].layer.get<ConvolutionParams>().post_ops) > 0;
  };
  std::vector<bool> quantized(g.tensors.size(), false);
  for (size_t id = 0; id < g.tensors.size(); ++id) {
    const PlanTensor& t = g.tensors[id];
    if (t.is_input || t.is_output || !is_floating(t.dtype) || !t.range || !t.range->usable() ||
        t.producer < 0 || !int8[t.producer] || !relu_only(g.layers[t.producer].layer) ||
        g.consumers[id].empty() || (explicit_quantization && adds_residual(t.producer))) {
      continue;
    }
    quantized[id] = std::all_of(g.consumers[id].begin(), g.consumers[id].end(), [&](int64_t c) {
      const Layer& l = g.layers[c].layer;
      // (read as the input or as a residual, never as anything else)
      if (explicit_quantization && l.inputs[0] != static_cast<int64_t>(id)) return false;
      return int8[c] && std::count(l.inputs.begin(), l.inputs.end(), static_cast<int64_t>(id)) == 1;
    });
  }
  // Each layer that writes or reads a tensor held in INT8 must still apply with its new dtypes (a kernel row
  // may take fewer combinations than the rule above: cuda's takes whole chains only); where one does not, the
  // tensors around it stay floating, until nothing changes.
  std::vector<DType> floating(g.tensors.size());
  for (size_t id = 0; id < g.tensors.size(); ++id) {
    floating[id] = g.tensors[id].dtype;
    if (quantized[id]) g.tensors[id].dtype = int8_storage(*g.backend, *g.tensors[id].range);
  }
  auto still_applies = [&](int64_t layer) {
    const std::string& tactic = g.layers[layer].tactic;
    const std::vector<Tactic> offered = g.backend->tactics(g.layer_info(layer));
    return std::any_of(offered.begin(), offered.end(), [&](const Tactic& t) { return t.name == tactic; });
  };
  std::vector<bool> touched(nl, false);
  for (bool changed = true; changed;) {
    changed = false;
    std::fill(touched.begin(), touched.end(), false);
    for (size_t id = 0; id < g.tensors.size(); ++id) {
      if (!quantized[id]) continue;
      touched[g.tensors[id].producer] = true;
      for (int64_t c : g.consumers[id]) touched[c] = true;
    }
    for (size_t l = 0; l < nl; ++l) {
      if (!touched[l] || still_applies(static_cast<int64_t>(l))) continue;
      const Layer& layer = g.layers[l].layer;
      for (const auto* ids : {&layer.inputs, &layer.outputs}) {
        for (int64_t id : *ids) {
          if (!quantized[id]) continue;
          quantized[id] = false;
          g.tensors[id].dtype = floating[id];
          changed = true;
        }
      }
    }
  }
  // The layers around them are made again with the new dtypes (recreate_kernels); in a timed build they time
  // themselves again (their kernel data was for the floating tensors: a cuda INT8 convolution writing s8 runs
  // another cuDNN graph than the one timed).
  int count = 0;
  for (size_t id = 0; id < g.tensors.size(); ++id) count += quantized[id] ? 1 : 0;
  for (size_t l = 0; l < nl && timed; ++l) {
    if (!touched[l]) continue;
    g.layers[l].retime = true;
    g.layers[l].kernel_data.clear();
  }
  return count;
}

namespace {

// The backend's Tactic of kernel layer `layer`'s chosen tactic when that may quantize (a weighted layer with
// a range on its input: quantized tactics need one), else nothing.
std::optional<Tactic> quantizing_tactic(const Plan::Impl& g, int64_t layer) {
  const Layer& l = g.layers[layer].layer;
  if (!g.backend || g.layers[layer].tactic.empty() || !weighted_layer(l) || !g.tensors[l.inputs[0]].range)
    return std::nullopt;
  for (const Tactic& t : g.backend->tactics(g.layer_info(layer))) {
    if (t.name == g.layers[layer].tactic) return t;
  }
  return std::nullopt;
}

}  // namespace

bool tactic_is_int8(const Plan::Impl& g, int64_t layer) {
  const std::optional<Tactic> t = quantizing_tactic(g, layer);
  return t && t->int8;
}

bool tactic_is_fp8(const Plan::Impl& g, int64_t layer) {
  const std::optional<Tactic> t = quantizing_tactic(g, layer);
  return t && t->fp8;
}

}  // namespace kiln::engine
