// The sample-input check of a reduced-precision build (precision_probe.h).

#include "engine/core/precision_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "engine/core/passes.h"
#include "kiln/engine/execution_context.h"
#include "kiln/support/dtype.h"
#include "kiln/support/error.h"

namespace kiln::engine::passes {

using Values = ProbeValues;

Values run_probe(const std::shared_ptr<const Plan>& plan, const Values& sample) {
  const Backend& backend = *plan->impl().backend;
  ExecutionContext context(plan);
  std::vector<BackendBuffer> buffers;
  auto buffer = [&](size_t bytes) {
    BackendBuffer b;
    b.backend = &backend;
    b.data = backend.allocate(std::max<size_t>(bytes, 1));
    buffers.push_back(std::move(b));
    return buffers.back().data;
  };
  Values values;
  for (const Binding& b : plan->bindings()) {
    if (!b.is_input) continue;
    auto it = sample.find(b.name);
    KILN_CHECK(it != sample.end(), InvalidInput, "sample inputs: no array for input '", b.name, "'");
    // (a program's int64 input may be an int32 binding)
    const HostTensor value = it->second.dtype() == b.dtype ? it->second : it->second.to(b.dtype);
    context.set_input_shape(b.name, value.sizes());
    void* data = buffer(value.nbytes());
    if (value.nbytes() > 0) backend.copy(data, value.data(), value.nbytes(), CopyKind::HostToDevice, nullptr);
    context.set_tensor_address(b.name, data);
    values[b.name] = value;
  }
  std::vector<std::pair<const Binding*, void*>> outputs;
  for (const Binding& b : plan->bindings()) {
    if (b.is_input) continue;
    HostTensor host(b.dtype, context.tensor_shape(b.name));
    outputs.emplace_back(&b, buffer(host.nbytes()));
    context.set_tensor_address(b.name, outputs.back().second);
    values[b.name] = std::move(host);
  }
  context.execute();
  backend.synchronize(nullptr);
  for (auto& [b, data] : outputs) {
    HostTensor& host = values[b->name];
    if (host.nbytes() > 0)
      backend.copy(host.mutable_data(), data, host.nbytes(), CopyKind::DeviceToHost, nullptr);
  }
  return values;
}

namespace {

bool all_finite(const HostTensor& t) {
  if (!is_floating(t.dtype())) return true;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (!std::isfinite(t.get_as_double(i))) return false;
  }
  return true;
}

// The tensor a plan tensor copies (through the builder's reformat layers).
int64_t source_of(const Plan::Impl& g, int64_t id) {
  for (int64_t p = g.tensors[id].producer; p >= 0 && g.layers[p].layer.kind == LayerKind::Reformat;
       p = g.tensors[id].producer) {
    id = g.layers[p].layer.inputs[0];
  }
  return id;
}

}  // namespace

void expose_layer_outputs(Plan::Impl& g) {
  reindex_producers(g);
  g.derive();  // data_dependent
  for (size_t i = 0; i < g.layers.size(); ++i) {
    const PlanLayer& pl = g.layers[i];
    if (pl.host || pl.layer.kind == LayerKind::Constant) continue;
    for (int64_t id : pl.layer.outputs) {
      PlanTensor& t = g.tensors[id];
      if (t.dtype != DType::Float32 || t.is_output || t.is_input || g.data_dependent[id]) continue;
      t.is_output = true;
      g.outputs.push_back(id);
    }
  }
}

std::map<std::string, std::string> find_overflowing_layers(const std::shared_ptr<const Plan>& reduced,
                                                           const std::shared_ptr<const Plan>& reference,
                                                           const std::vector<Values>& reference_values,
                                                           const std::vector<Values>& samples,
                                                           DType reduced_dtype) {
  const Plan::Impl& g = reference->impl();
  std::map<std::string, int64_t> ids;
  for (size_t t = 0; t < g.tensors.size(); ++t) ids.emplace(g.tensors[t].name, static_cast<int64_t>(t));
  std::map<std::string, std::string> found;
  for (size_t s = 0; s < samples.size(); ++s) {
    const Values low = run_probe(reduced, samples[s]);
    const Values& high = reference_values.at(s);
    auto finite_in = [](const Values& v, const std::string& name) {
      auto it = v.find(name);
      return it == v.end() || all_finite(it->second);
    };
    for (const Binding& b : reference->bindings()) {
      if (b.is_input || finite_in(low, b.name) || !finite_in(high, b.name)) continue;
      const int64_t producer = g.tensors[source_of(g, ids.at(b.name))].producer;
      if (producer < 0) continue;
      const Layer& layer = g.layers[producer].layer;
      bool first = true;  // its own inputs are finite in the reduced run
      for (int64_t in : layer.inputs) first = first && finite_in(low, g.tensors[source_of(g, in)].name);
      if (first && found.count(layer.name) == 0) {
        found[layer.name] = std::string("non-finite on sample input ") + std::to_string(s) + " in " +
                            (reduced_dtype == DType::Float16 ? "fp16" : "bf16") + " (finite in fp32)";
      }
    }
  }
  return found;
}

std::vector<Values> run_probes(const std::shared_ptr<const Plan>& plan, const std::vector<Values>& samples) {
  std::vector<Values> values;
  for (const Values& sample : samples) values.push_back(run_probe(plan, sample));
  return values;
}

double output_cosine(const std::vector<Values>& low, const std::vector<Values>& high,
                     const std::vector<std::string>& outputs) {
  double worst = 1.0;
  for (size_t s = 0; s < low.size() && s < high.size(); ++s) {
    for (const std::string& name : outputs) {
      auto a = low[s].find(name), b = high[s].find(name);
      if (a == low[s].end() || b == high[s].end() || !is_floating(b->second.dtype())) continue;
      double dot = 0, aa = 0, bb = 0;
      for (int64_t i = 0; i < b->second.numel() && i < a->second.numel(); ++i) {
        const double x = a->second.get_as_double(i), y = b->second.get_as_double(i);
        if (!std::isfinite(x)) return std::nan("");
        dot += x * y;
        aa += x * x;
        bb += y * y;
      }
      const double cosine = aa > 0 && bb > 0 ? dot / std::sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
      worst = std::min(worst, cosine);
    }
  }
  return worst;
}

std::vector<std::string> precision_layers(const Plan& plan) {
  const Plan::Impl& g = plan.impl();
  std::vector<std::string> names;
  for (const PlanLayer& pl : g.layers) {
    const LayerKind kind = pl.layer.kind;
    if (pl.host || kind == LayerKind::Constant || kind == LayerKind::Reformat) continue;
    names.push_back(pl.layer.name);
  }
  return names;
}

double storage_loss(const HostTensor& t, DType to) {
  if (!is_floating(t.dtype())) return 0.0;
  double norm = 0, lost = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double x = t.get_as_double(i);
    const float f = static_cast<float>(x);
    const double r =
        to == DType::BFloat16 ? bfloat16_to_float(float_to_bfloat16(f)) : half_to_float(float_to_half(f));
    if (!std::isfinite(x) || !std::isfinite(r)) continue;
    norm += x * x;
    lost += (x - r) * (x - r);
  }
  return norm > 0 ? std::sqrt(lost / norm) : 0.0;
}

std::map<std::string, std::string> find_underflowing_layers(const std::shared_ptr<const Plan>& reference,
                                                            const std::vector<Values>& reference_values,
                                                            DType reduced_dtype) {
  const Plan::Impl& g = reference->impl();
  const char* type = reduced_dtype == DType::Float16 ? "fp16" : "bf16";
  const double roundoff = reduced_dtype == DType::Float16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
  std::map<std::string, int64_t> ids;
  for (size_t t = 0; t < g.tensors.size(); ++t) ids.emplace(g.tensors[t].name, static_cast<int64_t>(t));
  std::map<std::string, std::string> found;
  for (size_t s = 0; s < reference_values.size(); ++s) {
    const Values& high = reference_values[s];
    for (const Binding& b : reference->bindings()) {
      if (b.is_input) continue;
      const double loss = storage_loss(high.at(b.name), reduced_dtype);
      if (loss <= kUnderflowLossRoundoffs * roundoff) continue;
      const int64_t id = source_of(g, ids.at(b.name));
      const int64_t producer = g.tensors[id].producer;
      if (producer < 0) continue;
      char percent[32];
      std::snprintf(percent, sizeof percent, "%.2g%%", 100 * loss);
      const std::string why = std::string("below ") + type + "'s range on sample input " + std::to_string(s) +
                              " (" + percent + " of it lost in " + type + ")";
      found.emplace(g.layers[producer].layer.name, why);
      for (const PlanLayer& reader : g.layers) {
        if (reader.layer.kind == LayerKind::Reformat) continue;
        for (int64_t in : reader.layer.inputs) {
          if (source_of(g, in) == id) found.emplace(reader.layer.name, "reads '" + b.name + "', " + why);
        }
      }
    }
  }
  return found;
}

}  // namespace kiln::engine::passes
