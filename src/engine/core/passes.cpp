#include "engine/core/passes.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "engine/ops/common.h"
#include "engine/ops/reference.h"
#include "engine/ops/shape_inference.h"
#include "kiln/engine/pointwise_limits.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::engine::passes {
int64_t reference_numel(const Dims& d);

std::vector<int64_t> consumers_of(const Plan::Impl& g, int64_t id) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    for (int64_t in : g.layers[i].layer.inputs) {
      if (in == id) {
        out.push_back(static_cast<int64_t>(i));
        break;
      }
    }
  }
  return out;
}

int64_t sole_consumer(const Plan::Impl& g, int64_t id) {
  if (g.tensors[id].is_output) return -1;
  auto c = consumers_of(g, id);
  if (c.size() != 1) return -1;
  int64_t uses = std::count(g.layers[c[0]].layer.inputs.begin(), g.layers[c[0]].layer.inputs.end(), id);
  return uses == 1 ? c[0] : -1;
}

namespace {

constexpr int64_t kFoldLimit = int64_t{1} << 24;
constexpr int64_t kPointwiseWeightLimit = int64_t{1} << 16;

bool is_const(const Plan::Impl& g, int64_t id) {
  int64_t p = g.tensors[id].producer;
  return p >= 0 && g.layers[p].layer.kind == LayerKind::Constant;
}

const Weights& const_weights(const Plan::Impl& g, int64_t id) {
  return g.layers[g.tensors[id].producer].layer.weights[0];
}

/// Makes layer `dst` produce `src`'s output tensor and kills `src` (the two layers are merged).
void take_output(Plan::Impl& g, int64_t dst, int64_t victim) {
  Layer& d = g.layers[dst].layer;
  Layer& v = g.layers[victim].layer;
  d.outputs[0] = v.outputs[0];
  g.tensors[d.outputs[0]].producer = dst;
  v.inputs.clear();
  v.outputs.clear();
}

/// Dims with leading 1s removed.
Dims squeeze_leading(Dims d) {
  while (!d.empty() && d[0] == 1) d.erase(d.begin());
  return d;
}

/// The dtypes one fused pointwise program may mix, named by one of them: a floating dtype alone, Float32 with
/// Bool (masks, comparisons and selects among float math: GPT-2's causal mask `and` then `where`; the CPU's
/// vec kernels hold a Bool as 0.0f / 1.0f), or Int64 and Int32 with Bool inputs (index math, T5's
/// relative-position buckets; exact in int64). A cast between integers and floats ends a chain (its layer
/// mixes two families): float math fused after it would run in float where the unfused layers round
/// differently before a cast back to an integer truncates.
std::optional<DType> fusion_family(DType d) {
  if (d == DType::Bool) return DType::Float32;
  if (is_floating(d)) return d;
  if (d == DType::Int64 || d == DType::Int32) return DType::Int64;
  return std::nullopt;
}

/// The fusion family of layer `i` when it may join a fused pointwise program: a pointwise kind, not a host
/// layer (a shape value evaluated at shape inference must stay one), whose inputs and output are of one
/// family, a Bool input joining an integer one; else nullopt. An integer layer joins only with an integer
/// output and no cast but from Bool: the cuda kernels take a program's integer semantics (truncating
/// division, mod) from its output dtype and run a cast inside a program as a copy.
std::optional<DType> pointwise_family(const Plan::Impl& g, size_t i) {
  const PlanLayer& pl = g.layers[i];
  const Layer& l = pl.layer;
  if (pl.host || l.outputs.size() != 1) return std::nullopt;
  const DType out = g.tensors[l.outputs[0]].dtype;
  std::vector<DType> dtypes = {out};
  for (int64_t in : l.inputs) dtypes.push_back(g.tensors[in].dtype);
  const bool integer = std::any_of(dtypes.begin(), dtypes.end(), [](DType d) { return is_integral(d); });
  if (integer &&
      (!is_integral(out) || (l.kind == LayerKind::Cast && g.tensors[l.inputs[0]].dtype != DType::Bool)))
    return std::nullopt;
  std::optional<DType> family;
  for (DType d : dtypes) {
    const std::optional<DType> f = integer && d == DType::Bool ? DType::Int64 : fusion_family(d);
    if (!f || (family && f != family)) return std::nullopt;
    family = f;
  }
  switch (l.kind) {
    case LayerKind::Elementwise:
    case LayerKind::Activation:
    case LayerKind::Unary:
    case LayerKind::Select:
    case LayerKind::Cast: return family;
    default: return std::nullopt;
  }
}

bool pure_transpose(const Layer& l) {
  if (l.kind != LayerKind::Shuffle || l.inputs.size() != 1) return false;
  const auto& p = l.get<ShuffleParams>();
  return !p.has_reshape && p.second_perm.empty() && !p.first_perm.empty();
}

bool pure_reshape(const Plan::Impl& g, const Layer& l) {
  if (l.kind != LayerKind::Shuffle || l.inputs.size() != 1) return false;
  const auto& p = l.get<ShuffleParams>();
  return p.has_reshape && p.first_perm.empty() && p.second_perm.empty() &&
         dims_known(g.tensors[l.outputs[0]].dims);
}

/// Whether permutation `perm` of a tensor of static `dims` (no zero) moves only dims of size 1: the others
/// keep their order, so the elements keep theirs and the permute is a reshape (ViT's batch-first transposes
/// of [1, L, E] <-> [L, 1, E] in its attention blocks).
bool moves_only_unit_dims(const std::vector<int64_t>& perm, const Dims& dims) {
  if (!dims_known(dims)) return false;
  int64_t last = -1;
  for (int64_t d : perm) {
    if (d < 0 || d >= static_cast<int64_t>(dims.size()) || dims[d] == 0) return false;
    if (dims[d] == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
}

bool is_identity_perm(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

}  // namespace

void replace_uses(Plan::Impl& g, int64_t from, int64_t to) {
  for (auto& pl : g.layers) {
    for (auto& in : pl.layer.inputs) {
      if (in == from) in = to;
    }
  }
}

void reindex_producers(Plan::Impl& g) {
  for (auto& t : g.tensors) t.producer = -1;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    for (int64_t o : g.layers[i].layer.outputs) g.tensors[o].producer = static_cast<int64_t>(i);
  }
}

int fold_constants(Plan::Impl& g, bool refittable) {
  int folded = 0;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    Layer& l = g.layers[i].layer;
    if (l.kind == LayerKind::Constant || l.outputs.size() != 1) continue;
    HostTensor value;
    if (l.kind == LayerKind::Shape) {
      const Dims& d = g.tensors[l.inputs[0]].dims;
      if (!dims_known(d)) continue;
      value = HostTensor::from_int64s(d, {static_cast<int64_t>(d.size())});
    } else {
      if (l.inputs.empty() && l.kind != LayerKind::Fill) continue;
      bool all_const = true, named = false;
      std::vector<HostTensor> in;
      for (int64_t id : l.inputs) {
        if (!is_const(g, id)) {
          all_const = false;
          break;
        }
        named = named || !const_weights(g, id).name.empty();
        in.push_back(const_weights(g, id).value);
      }
      for (const auto& w : l.weights) named = named || (w.defined() && !w.name.empty());
      if (!all_const || (refittable && named)) continue;
      const Dims& od = g.tensors[l.outputs[0]].dims;
      if (dims_known(od) && reference_numel(od) > kFoldLimit) continue;
      if (l.kind == LayerKind::Fill && !dims_known(od)) continue;
      try {
        value = ops::evaluate(l, in).at(0);
      } catch (const Error& e) {
        KILN_DEBUG("engine: not folding layer '", l.name, "': ", e.message());
        continue;
      }
    }
    KILN_DEBUG("engine: folded layer '", l.name, "' (", layer_kind_name(l.kind), ") into a constant");
    g.tensors[l.outputs[0]].dims = value.sizes();
    g.tensors[l.outputs[0]].dtype = value.dtype();
    l.kind = LayerKind::Constant;
    l.params = ConstantParams{};
    l.inputs.clear();
    l.weights = {Weights(value)};
    ++folded;
  }
  return folded;
}

int remove_dead_layers(Plan::Impl& g) {
  std::vector<bool> live_t(g.tensors.size(), false), live_l(g.layers.size(), false);
  for (int64_t id : g.outputs) live_t[id] = true;
  for (int64_t i = static_cast<int64_t>(g.layers.size()) - 1; i >= 0; --i) {
    const Layer& l = g.layers[i].layer;
    bool live = std::any_of(l.outputs.begin(), l.outputs.end(), [&](int64_t o) { return live_t[o]; });
    if (!live) continue;
    live_l[i] = true;
    for (int64_t in : l.inputs) live_t[in] = true;
    for (int64_t o : l.outputs) live_t[o] = true;
  }
  for (int64_t id : g.inputs) live_t[id] = true;
  int removed = static_cast<int>(std::count(live_l.begin(), live_l.end(), false));
  std::vector<int64_t> remap(g.tensors.size(), -1);
  std::vector<PlanTensor> tensors;
  for (size_t id = 0; id < g.tensors.size(); ++id) {
    if (!live_t[id]) continue;
    remap[id] = static_cast<int64_t>(tensors.size());
    tensors.push_back(g.tensors[id]);
  }
  std::vector<PlanLayer> layers;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    if (!live_l[i]) {
      if (!g.layers[i].layer.outputs.empty())
        KILN_DEBUG("engine: removed dead layer '", g.layers[i].layer.name, "'");
      continue;
    }
    PlanLayer pl = std::move(g.layers[i]);
    for (auto& in : pl.layer.inputs) in = remap[in];
    for (auto& o : pl.layer.outputs) {
      o = remap[o];
      tensors[o].producer = static_cast<int64_t>(layers.size());
    }
    layers.push_back(std::move(pl));
  }
  for (auto& id : g.inputs) id = remap[id];
  for (auto& id : g.outputs) id = remap[id];
  g.tensors = std::move(tensors);
  g.layers = std::move(layers);
  return removed;
}

int eliminate_shuffles(Plan::Impl& g) {
  int changed = 0;
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < g.layers.size(); ++i) {
      Layer& l = g.layers[i].layer;
      if (l.kind != LayerKind::Shuffle || l.inputs.size() != 1 || l.outputs.empty()) continue;
      int64_t in = l.inputs[0], out = l.outputs[0];
      const auto& p = l.get<ShuffleParams>();
      bool identity =
          is_identity_perm(p.first_perm) && is_identity_perm(p.second_perm) &&
          (!p.has_reshape || (dims_known(g.tensors[in].dims) && g.tensors[in].dims == g.tensors[out].dims));
      if (identity && !g.tensors[out].is_output) {
        KILN_INFO("engine: removed identity shuffle '", l.name, "'");
        replace_uses(g, out, in);
        l.inputs.clear();
        l.outputs.clear();
        ++changed;
        again = true;
        continue;
      }
      if (pure_transpose(l) && moves_only_unit_dims(p.first_perm, g.tensors[in].dims) &&
          dims_known(g.tensors[out].dims)) {
        KILN_INFO("engine: transpose '", l.name, "' moves only dims of size 1: a reshape");
        auto& q = l.get<ShuffleParams>();
        q.first_perm.clear();
        q.has_reshape = true;
        q.reshape = g.tensors[out].dims;
        ++changed;
        again = true;
        continue;
      }
      int64_t next = sole_consumer(g, out);
      if (next < 0) continue;
      Layer& n = g.layers[next].layer;
      if (pure_transpose(l) && pure_transpose(n)) {
        auto p1 = l.get<ShuffleParams>().first_perm;
        auto& p2 = n.get<ShuffleParams>().first_perm;
        std::vector<int64_t> c(p2.size());
        for (size_t k = 0; k < p2.size(); ++k) c[k] = p1[p2[k]];
        KILN_INFO("engine: merged transposes '", l.name, "' and '", n.name, "'");
        p2 = c;
        n.inputs[0] = in;
      } else if (pure_reshape(g, l) && pure_reshape(g, n) && dims_known(g.tensors[in].dims)) {
        KILN_INFO("engine: merged reshapes '", l.name, "' and '", n.name, "'");
        n.get<ShuffleParams>().reshape = g.tensors[n.outputs[0]].dims;
        n.inputs[0] = in;
      } else {
        continue;
      }
      l.inputs.clear();
      l.outputs.clear();
      ++changed;
      again = true;
    }
  }
  return changed;
}

int fuse_linear(Plan::Impl& g, bool refittable) {
  int fused = 0;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    Layer& l = g.layers[i].layer;
    if (l.kind != LayerKind::MatrixMultiply && l.kind != LayerKind::Convolution) continue;
    if (l.outputs.empty()) continue;
    bool is_conv = l.kind == LayerKind::Convolution;
    auto& post = is_conv ? l.get<ConvolutionParams>().post_ops : l.get<MatrixMultiplyParams>().post_ops;
    if (!is_conv && (l.weights.empty() || !l.weights[0].defined()) && l.inputs.size() == 2 &&
        is_const(g, l.inputs[1]) && sole_consumer(g, l.inputs[1]) == static_cast<int64_t>(i) &&
        post.empty()) {
      l.weights = {const_weights(g, l.inputs[1]), Weights()};
      l.inputs.pop_back();
      KILN_INFO("engine: matrix multiply '", l.name, "' takes its constant operand as weights");
    }
    if (l.weights.size() < 2) l.weights.resize(2);
    for (;;) {
      int64_t out = l.outputs[0];
      int64_t c = sole_consumer(g, out);
      if (c < 0) break;
      Layer& n = g.layers[c].layer;
      const Dims& od = g.tensors[out].dims;
      bool b_weight = l.weights[0].defined();
      if (n.kind == LayerKind::Activation) {
        // An activation that would cost a pass of its own here but can join the pointwise layer that reads it
        // (SwiGLU's silu(gate) * up on cuda) stays a layer: fuse_pointwise makes one pass of both.
        const bool pass_before = g.backend->post_ops_need_a_pass(l);
        post.push_back(PostOp{PostOp::Activation, n.get<ActivationParams>(), 1.0});
        const int64_t next = n.outputs.size() == 1 ? sole_consumer(g, n.outputs[0]) : -1;
        if (!pass_before && g.backend->post_ops_need_a_pass(l) && next >= 0 &&
            pointwise_family(g, static_cast<size_t>(c)) &&
            pointwise_family(g, static_cast<size_t>(next)) == pointwise_family(g, static_cast<size_t>(c))) {
          post.pop_back();
          KILN_INFO("engine: activation '", n.name, "' stays a layer to fuse with '",
                    g.layers[next].layer.name, "' (", g.backend_name, " would apply it to '", l.name,
                    "' in a pass of its own)");
          break;
        }
        if (!g.backend->fuses_post_ops(l)) {
          post.pop_back();
          KILN_INFO("engine: activation '", n.name, "' stays a layer: ", g.backend_name,
                    " cannot fuse it into '", l.name, "'");
          break;
        }
        KILN_INFO("engine: fused activation '", n.name, "' (",
                  activation_kind_name(n.get<ActivationParams>().kind), ") into '", l.name, "'");
        take_output(g, static_cast<int64_t>(i), c);
        ++fused;
        continue;
      }
      if (n.kind != LayerKind::Elementwise) break;
      auto op = n.get<ElementwiseParams>().op;
      int64_t other = n.inputs[0] == out ? n.inputs[1] : n.inputs[0];
      // Bias / scale from a per-channel constant, before any post-op.
      if (post.empty() && is_const(g, other) &&
          (op == ElementwiseOp::Add || (op == ElementwiseOp::Mul && is_conv))) {
        const Weights& k = const_weights(g, other);
        int64_t channels = is_conv ? od[1] : od.back();
        Dims kd = squeeze_leading(k.value.sizes());
        bool per_channel = channels > 0 && k.value.numel() == channels && !kd.empty() && kd[0] == channels;
        if (per_channel && is_conv) per_channel = kd.size() == od.size() - 1;
        if (per_channel && !is_conv) per_channel = kd.size() == 1 && (b_weight || l.inputs.size() >= 1);
        if (per_channel && is_floating(k.value.dtype())) {
          Weights& bias = l.weights[1];
          bool named = !k.name.empty() || (bias.defined() && !bias.name.empty()) ||
                       (op == ElementwiseOp::Mul && !l.weights[0].name.empty());
          if (!refittable || !named || (op == ElementwiseOp::Add && !bias.defined())) {
            std::vector<float> kv = ops::host_floats(k.value);
            if (op == ElementwiseOp::Add) {
              if (!bias.defined()) {
                bias = Weights(k.name, k.value.reshaped({channels}));
              } else {
                std::vector<float> bv = ops::host_floats(bias.value);
                for (int64_t j = 0; j < channels; ++j) bv[j] += kv[j];
                bias = Weights(HostTensor::from_floats(bv, {channels}));
              }
              KILN_INFO("engine: fused bias add '", n.name, "' into '", l.name, "'");
            } else {
              std::vector<float> wv = ops::host_floats(l.weights[0].value);
              int64_t per = static_cast<int64_t>(wv.size()) / channels;
              bool transposed = l.get<ConvolutionParams>().transposed;
              if (!transposed) {
                for (int64_t j = 0; j < static_cast<int64_t>(wv.size()); ++j) wv[j] *= kv[j / per];
              } else {
                break;  // scaling a transposed kernel per output channel is not done here
              }
              l.weights[0] = Weights(HostTensor::from_floats(wv, l.weights[0].value.sizes()));
              if (bias.defined()) {
                std::vector<float> bv = ops::host_floats(bias.value);
                for (int64_t j = 0; j < channels; ++j) bv[j] *= kv[j];
                bias = Weights(HostTensor::from_floats(bv, {channels}));
              }
              KILN_INFO("engine: folded channel scale '", n.name, "' into the weights of '", l.name, "'");
            }
            take_output(g, static_cast<int64_t>(i), c);
            ++fused;
            continue;
          }
        }
      }
      // Residual add: the other operand has exactly the output's shape and exists before this layer.
      if (op == ElementwiseOp::Add && g.tensors[other].dtype == g.tensors[out].dtype && other != out) {
        int64_t prod = g.tensors[other].producer;
        bool same = g.tensors[other].dims == od && dims_known(od);
        if (!same && !g.profiles.empty()) {
          same = true;
          for (const auto& pr : g.profiles) {
            same = same && pr.min[other] == pr.min[out] && pr.max[other] == pr.max[out] &&
                   pr.opt[other] == pr.opt[out];
          }
          same = same && g.tensors[other].dims.size() == od.size();
        }
        if (same && prod < static_cast<int64_t>(i)) {
          l.inputs.push_back(other);
          post.push_back(PostOp{PostOp::Sum, ActivationParams{}, 1.0});
          if (!g.backend->fuses_post_ops(l)) {
            post.pop_back();
            l.inputs.pop_back();
            KILN_INFO("engine: residual add '", n.name, "' stays a layer: ", g.backend_name,
                      " cannot fuse it into '", l.name, "'");
            break;
          }
          KILN_INFO("engine: fused residual add '", n.name, "' into '", l.name, "'");
          take_output(g, static_cast<int64_t>(i), c);
          ++fused;
          continue;
        }
      }
      break;
    }
  }
  return fused;
}

int fuse_pointwise(Plan::Impl& g) {
  int fused = 0;
  std::vector<bool> taken(g.layers.size(), false);
  for (size_t s = 0; s < g.layers.size(); ++s) {
    if (taken[s] || g.layers[s].layer.outputs.empty()) continue;
    const std::optional<DType> family = pointwise_family(g, s);
    if (!family) continue;
    std::vector<int64_t> chain = {static_cast<int64_t>(s)};
    // The sources (distinct outside inputs plus small constants, one weight per use) the fused program reads;
    // the chain stops before it would exceed kiln/engine/pointwise_limits.h (a longer one is fused in parts).
    std::set<int64_t> chain_inputs;
    size_t chain_weights = 0;
    auto add_sources = [&](const Layer& l, std::set<int64_t>& ins, size_t& weights) {
      for (int64_t in : l.inputs) {
        const int64_t p = g.tensors[in].producer;
        if (p >= 0 && std::find(chain.begin(), chain.end(), p) != chain.end()) continue;  // a temporary
        if (is_const(g, in) && const_weights(g, in).value.numel() <= kPointwiseWeightLimit) {
          ++weights;
        } else {
          ins.insert(in);
        }
      }
    };
    add_sources(g.layers[s].layer, chain_inputs, chain_weights);
    for (;;) {
      int64_t out = g.layers[chain.back()].layer.outputs[0];
      int64_t c = sole_consumer(g, out);
      if (c < 0 || pointwise_family(g, static_cast<size_t>(c)) != family ||
          chain.size() >= kMaxFusedPointwiseInstrs)
        break;
      std::set<int64_t> ins = chain_inputs;
      size_t weights = chain_weights;
      add_sources(g.layers[c].layer, ins, weights);
      if (ins.size() + weights > kMaxFusedPointwiseSources) break;
      chain.push_back(c);
      chain_inputs = std::move(ins);
      chain_weights = weights;
    }
    if (chain.size() < 2) continue;
    FusedPointwiseParams fp;
    std::vector<int64_t> inputs;
    std::vector<Weights> weights;
    std::map<int64_t, int64_t> temp_of;  // tensor -> instruction index
    std::string names;
    for (int64_t li : chain) {
      const Layer& l = g.layers[li].layer;
      PointwiseInstr ins;
      ins.kind = l.kind;
      if (l.kind == LayerKind::Elementwise) ins.op = static_cast<int64_t>(l.get<ElementwiseParams>().op);
      if (l.kind == LayerKind::Unary) ins.op = static_cast<int64_t>(l.get<UnaryParams>().op);
      if (l.kind == LayerKind::Activation) ins.activation = l.get<ActivationParams>();
      if (l.kind == LayerKind::Cast) ins.op = static_cast<int64_t>(l.get<CastParams>().to);
      for (int64_t in : l.inputs) {
        auto t = temp_of.find(in);
        if (t != temp_of.end()) {
          ins.operands.push_back(PointwiseInstr::kTemp + t->second);
        } else if (is_const(g, in) && const_weights(g, in).value.numel() <= kPointwiseWeightLimit) {
          ins.operands.push_back(PointwiseInstr::kWeight + static_cast<int64_t>(weights.size()));
          weights.push_back(const_weights(g, in));
        } else {
          auto it = std::find(inputs.begin(), inputs.end(), in);
          if (it == inputs.end()) {
            inputs.push_back(in);
            it = inputs.end() - 1;
          }
          ins.operands.push_back(PointwiseInstr::kInput + (it - inputs.begin()));
        }
      }
      temp_of[l.outputs[0]] = static_cast<int64_t>(fp.program.size());
      fp.program.push_back(ins);
      names += (names.empty() ? "" : "+") + l.name;
    }
    int64_t last = chain.back();
    Layer& dst = g.layers[last].layer;
    KILN_INFO("engine: fused pointwise chain of ", chain.size(), " layers: ", names);
    dst.kind = LayerKind::FusedPointwise;
    dst.params = fp;
    dst.inputs = inputs;
    dst.weights = weights;
    for (size_t k = 0; k + 1 < chain.size(); ++k) {
      g.layers[chain[k]].layer.inputs.clear();
      g.layers[chain[k]].layer.outputs.clear();
      taken[chain[k]] = true;
    }
    taken[last] = true;
    ++fused;
  }
  return fused;
}

int64_t reference_numel(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

}  // namespace kiln::engine::passes
