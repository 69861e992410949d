// Weakly typed reduced precision and its policy (the rules are stated in kiln/engine/precision_policy.h).

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "engine/core/passes.h"
#include "kiln/support/error.h"

namespace kiln::engine::passes {
namespace {

constexpr double kFp16Max = 65504.0;

// A pointwise layer (or fused program) that squares, raises to a power or exponentiates: its values grow
// faster than its inputs.
bool grows(const Layer& l) {
  auto squares = [](LayerKind kind, int64_t op, const std::vector<int64_t>& operands) {
    return (kind == LayerKind::Elementwise && op == static_cast<int64_t>(ElementwiseOp::Pow)) ||
           (kind == LayerKind::Elementwise && op == static_cast<int64_t>(ElementwiseOp::Mul) &&
            operands.size() == 2 && operands[0] == operands[1]) ||
           (kind == LayerKind::Unary && op == static_cast<int64_t>(UnaryOp::Exp));
  };
  switch (l.kind) {
    case LayerKind::Elementwise:
      return squares(l.kind, static_cast<int64_t>(l.get<ElementwiseParams>().op), l.inputs);
    case LayerKind::Unary: return l.get<UnaryParams>().op == UnaryOp::Exp;
    case LayerKind::FusedPointwise:
      for (const PointwiseInstr& ins : l.get<FusedPointwiseParams>().program) {
        if (squares(ins.kind, ins.op, ins.operands)) return true;
      }
      return false;
    default: return false;
  }
}

bool floating32(const PlanTensor& t) { return t.dtype == DType::Float32; }

bool is_pointwise(LayerKind kind) {
  return kind == LayerKind::Elementwise || kind == LayerKind::Unary || kind == LayerKind::Activation ||
         kind == LayerKind::FusedPointwise;
}

// Layer index -> why it stays in fp32.
std::map<size_t, std::string> fp32_layers(const Plan::Impl& g, DType to,
                                          const std::map<std::string, std::string>& found) {
  std::map<size_t, std::string> keep;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    auto it = found.find(g.layers[i].layer.name);
    if (it != found.end() && !g.layers[i].host) keep[i] = it->second;
  }
  if (to != DType::Float16) return keep;  // bf16 has fp32's range
  for (size_t i = 0; i < g.layers.size(); ++i) {
    const PlanLayer& pl = g.layers[i];
    if (pl.host || pl.layer.kind != LayerKind::Reduce || !floating32(g.tensors[pl.layer.outputs[0]]))
      continue;
    const ReduceOp op = pl.layer.get<ReduceParams>().op;
    const int64_t producer = g.tensors[pl.layer.inputs[0]].producer;
    if (producer >= 0 && !g.layers[producer].host && grows(g.layers[producer].layer) &&
        floating32(g.tensors[pl.layer.inputs[0]])) {
      keep[static_cast<size_t>(producer)] = "square, power or exp feeding reduction '" + pl.layer.name +
                                            "': fp32 so its terms cannot pass fp16's 65504";
      keep[i] = std::string("reduction (") + reduce_op_name(op) + ") of squares, powers or exps: fp32";
    } else if (op == ReduceOp::Sum || op == ReduceOp::Prod) {
      keep[i] = std::string("reduction (") + reduce_op_name(op) + "): its result can pass fp16's 65504";
    } else {
      continue;
    }
    // Its pointwise readers (the rsqrt of a variance, the division of a sum) take the fp32 value as it is.
    for (size_t j = i + 1; j < g.layers.size(); ++j) {
      const Layer& c = g.layers[j].layer;
      const bool reads = std::find(c.inputs.begin(), c.inputs.end(), pl.layer.outputs[0]) != c.inputs.end();
      if (reads && !g.layers[j].host && is_pointwise(c.kind) && !c.outputs.empty() &&
          floating32(g.tensors[c.outputs[0]]) && keep.count(j) == 0) {
        keep[j] = "reads the fp32 reduction '" + pl.layer.name + "', whose value can pass fp16's 65504";
      }
    }
  }
  return keep;
}

// Clamps the finite values of `w` beyond fp16's range to +-65504; returns how many it changed.
int64_t clamp_to_fp16(HostTensor& w) {
  if (w.dtype() != DType::Float32) return 0;
  int64_t changed = 0;
  for (int64_t i = 0; i < w.numel(); ++i) {
    const double v = w.get_as_double(i);
    if (std::isfinite(v) && std::abs(v) > kFp16Max) {
      w.set_from_double(i, v > 0 ? kFp16Max : -kFp16Max);  // copy on write: shared weights stay as they were
      ++changed;
    }
  }
  return changed;
}

std::string clamp_note(int64_t n) {
  return std::to_string(n) + " constant value(s) beyond fp16's range clamped to +-65504 (not +-inf)";
}

}  // namespace

void lower_precision(Plan::Impl& g, DType to, std::map<std::string, DType>& original_dtypes,
                     const std::map<std::string, std::string>& keep_fp32) {
  reindex_producers(g);
  g.precision_notes.clear();
  const std::map<size_t, std::string> keep = fp32_layers(g, to, keep_fp32);
  std::vector<std::vector<size_t>> consumers(g.tensors.size());
  for (size_t i = 0; i < g.layers.size(); ++i) {
    for (int64_t in : g.layers[i].layer.inputs) consumers[static_cast<size_t>(in)].push_back(i);
  }
  // Tensors that stay fp32: those kept layers produce, and constants only kept layers read.
  std::vector<bool> stays(g.tensors.size(), false);
  for (const auto& [i, why] : keep) {
    for (int64_t o : g.layers[i].layer.outputs) stays[static_cast<size_t>(o)] = floating32(g.tensors[o]);
  }
  for (const PlanLayer& pl : g.layers) {
    if (pl.layer.kind != LayerKind::Constant) continue;
    const auto& users = consumers[static_cast<size_t>(pl.layer.outputs[0])];
    bool all_kept = !users.empty();
    for (size_t u : users) all_kept = all_kept && keep.count(u) > 0;
    if (all_kept) stays[static_cast<size_t>(pl.layer.outputs[0])] = true;
  }
  const size_t original_tensors = g.tensors.size();
  std::vector<bool> originally_fp32(original_tensors);
  for (size_t id = 0; id < original_tensors; ++id) originally_fp32[id] = floating32(g.tensors[id]);

  auto new_tensor = [&](int64_t base, DType dt, const std::string& suffix) {
    PlanTensor t = g.tensors[static_cast<size_t>(base)];
    t.name += suffix;
    t.dtype = dt;
    t.is_input = t.is_output = false;
    g.tensors.push_back(t);
    return static_cast<int64_t>(g.tensors.size()) - 1;
  };
  auto cast_layer = [](int64_t in, int64_t out, DType dt, const std::string& name) {
    Layer l;
    l.name = name;
    l.kind = LayerKind::Cast;
    l.params = CastParams{dt};
    l.inputs = {in};
    l.outputs = {out};
    return PlanLayer{l, "", false, {}};
  };
  auto is_kept = [&](size_t layer) { return keep.count(layer) > 0; };

  std::vector<PlanLayer> front, back;
  for (int64_t id : g.inputs) {
    if (!floating32(g.tensors[id])) continue;
    const int64_t t = new_tensor(id, to, "/lowered");
    for (size_t u : consumers[static_cast<size_t>(id)]) {
      if (is_kept(u)) continue;  // fp32 layers read the binding itself
      for (auto& in : g.layers[u].layer.inputs) {
        if (in == id) in = t;
      }
    }
    front.push_back(cast_layer(id, t, to, g.tensors[id].name + "/cast_in"));
  }
  for (int64_t id : g.outputs) {
    const int64_t producer = g.tensors[id].producer;
    if (!floating32(g.tensors[id]) || producer < 0 || is_kept(static_cast<size_t>(producer))) continue;
    const int64_t t = new_tensor(id, DType::Float32, "/lowered");
    for (auto& o : g.layers[producer].layer.outputs) {
      if (o == id) o = t;
    }
    replace_uses(g, id, t);
    back.push_back(cast_layer(t, id, DType::Float32, g.tensors[id].name + "/cast_out"));
  }
  for (size_t id = 0; id < g.tensors.size(); ++id) {
    PlanTensor& t = g.tensors[id];
    const bool keeps = id < original_tensors && stays[id];
    if (t.dtype == DType::Float32 && !t.is_input && !t.is_output && !keeps) t.dtype = to;
  }
  const bool fp16 = to == DType::Float16;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    Layer& l = g.layers[i].layer;
    if (is_kept(i)) continue;
    if (l.kind == LayerKind::Constant && l.weights[0].value.dtype() == DType::Float32 &&
        g.tensors[l.outputs[0]].dtype == to) {
      if (fp16) {
        if (int64_t n = clamp_to_fp16(l.weights[0].value))
          g.precision_notes.push_back({l.name, clamp_note(n)});
      }
      if (!l.weights[0].name.empty()) original_dtypes[l.weights[0].name] = DType::Float32;
      l.weights[0].value = l.weights[0].value.to(to);
    } else if (l.kind == LayerKind::Fill && l.get<FillParams>().dtype == DType::Float32) {
      FillParams& f = l.get<FillParams>();
      f.dtype = to;
      if (fp16 && f.op == FillParams::Constant && std::isfinite(f.value) && std::abs(f.value) > kFp16Max) {
        f.value = f.value > 0 ? kFp16Max : -kFp16Max;
        g.precision_notes.push_back({l.name, clamp_note(1)});
      }
    } else if (l.kind == LayerKind::Cast && l.get<CastParams>().to == DType::Float32) {
      l.get<CastParams>().to = to;
    } else if (fp16 && l.kind == LayerKind::FusedPointwise) {
      // The program evaluates in float, but its result is stored in fp16.
      int64_t n = 0;
      for (Weights& w : l.weights) {
        if (w.defined()) n += clamp_to_fp16(w.value);
      }
      if (n > 0) g.precision_notes.push_back({l.name, clamp_note(n)});
    }
  }
  for (const auto& [i, why] : keep) g.precision_notes.push_back({g.layers[i].layer.name, "fp32: " + why});

  // Casts at the borders between fp32 and reduced layers (one per tensor and direction).
  std::map<std::pair<int64_t, DType>, int64_t> casts;
  std::vector<PlanLayer> all = std::move(front);
  for (size_t i = 0; i < g.layers.size(); ++i) {
    PlanLayer& pl = g.layers[i];
    if (!pl.host && pl.layer.kind != LayerKind::Cast) {
      const DType want = is_kept(i) ? DType::Float32 : to;
      for (auto& in : pl.layer.inputs) {
        const size_t id = static_cast<size_t>(in);
        const DType have = g.tensors[id].dtype;
        const bool was_float = id >= original_tensors || originally_fp32[id];
        if (!was_float || have == want || (have != DType::Float32 && have != to)) continue;
        auto [it, fresh] = casts.try_emplace({in, want}, -1);
        if (fresh) {
          it->second = new_tensor(in, want, want == DType::Float32 ? "/fp32" : "/reduced");
          all.push_back(cast_layer(in, it->second, want, g.tensors[id].name + "/cast_" + dtype_name(want)));
        }
        in = it->second;
      }
    }
    all.push_back(std::move(pl));
  }
  for (auto& pl : back) all.push_back(std::move(pl));
  g.layers = std::move(all);
  reindex_producers(g);
}

}  // namespace kiln::engine::passes
