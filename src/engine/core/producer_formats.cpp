// Formats written by producers (producer_formats.h).

#include "engine/core/producer_formats.h"

#include <algorithm>

namespace kiln::engine {

namespace {

/// What producer_writes and producer_copies share: tensor `id` (read only by kernel layers) is output 0 of a
/// kernel layer with a tactic, neither a binding nor written as Plain-only, and no profile gives that layer
/// an empty input.
bool written_by_kernel(const Plan::Impl& g, int64_t id, TensorFormat format) {
  const PlanTensor& t = g.tensors[static_cast<size_t>(id)];
  if (t.is_input || t.is_output || t.producer < 0 || format == TensorFormat::Plain) return false;
  const int64_t p = t.producer;
  if (!g.is_kernel_layer(p) || g.layers[p].tactic.empty() || g.layers[p].layer.outputs.at(0) != id)
    return false;
  if (static_cast<size_t>(id) >= g.consumers.size() || g.consumers[id].empty()) return false;
  for (int64_t c : g.consumers[id]) {
    if (!g.is_kernel_layer(c)) return false;
  }
  for (const PlanProfile& prof : g.profiles) {
    for (int64_t in : g.layers[p].layer.inputs) {
      const Dims& min = prof.min.at(static_cast<size_t>(in));
      if (std::find(min.begin(), min.end(), 0) != min.end()) return false;
    }
  }
  return true;
}

}  // namespace

int64_t view_source(const Plan::Impl& g, int64_t id, TensorFormat format) {
  constexpr int kMaxViews = 8;  // (a chain is a reshape or two; the bound keeps a forged plan's walk short)
  int64_t t = id;
  for (int step = 0; step < kMaxViews; ++step) {
    const int64_t p = g.tensors[static_cast<size_t>(t)].producer;
    if (p < 0 || !g.is_kernel_layer(p) || g.layers[p].tactic.empty() || !is_reshape_view(g.layers[p].layer))
      return t;
    const int64_t in = g.layers[p].layer.inputs[0];
    const PlanTensor& it = g.tensors[static_cast<size_t>(in)];
    if (it.is_input || it.is_output || static_cast<size_t>(in) >= g.consumers.size() ||
        g.consumers[in].size() != 1)
      return t;
    LayerInfo info = g.layer_info(p);
    info.inputs[0].format = format;
    const TacticFormats f = g.backend->formats(info, g.layers[p].tactic);
    if (f.inputs.empty() || f.inputs[0] != format || f.outputs.empty() || f.outputs[0] != format) return t;
    t = in;
  }
  return t;
}

bool producer_writes(const Plan::Impl& g, int64_t tensor, TensorFormat format, size_t workspace_limit) {
  const int64_t id = view_source(g, tensor, format);
  if (id != tensor) {  // through reshape views: the last one's output is read once and is no binding
    const PlanTensor& t = g.tensors[static_cast<size_t>(tensor)];
    if (t.is_input || t.is_output || g.consumers[tensor].size() != 1 ||
        !g.is_kernel_layer(g.consumers[tensor][0]))
      return false;
  }
  if (!written_by_kernel(g, id, format)) return false;
  // (consumers lists a layer once per input it reads the tensor as)
  if (g.consumers[id].size() != 1) return false;
  const int64_t p = g.tensors[static_cast<size_t>(id)].producer;
  // The producer's kernel is made for profile 0's shapes (Plan::Impl::layer_info): what it keeps for writing
  // another format (a staging buffer) is sized by them, so no other profile may hold a larger tensor.
  const auto elements = [&](const PlanProfile& prof) {
    return format_numel(TensorFormat::Plain, prof.max.at(static_cast<size_t>(id)));
  };
  for (const PlanProfile& prof : g.profiles) {
    if (elements(prof) > elements(g.profiles.front())) return false;
  }
  const std::optional<size_t> workspace =
      g.backend->writes_format(g.layer_info(p), g.layers[p].tactic, format);
  return workspace && *workspace <= workspace_limit;
}

bool producer_copies(const Plan::Impl& g, int64_t id, TensorFormat format) {
  if (!written_by_kernel(g, id, format)) return false;
  const int64_t p = g.tensors[static_cast<size_t>(id)].producer;
  const LayerInfo info = g.layer_info(p);
  // (a copy sits beside a Plain output 0: the builder makes none for a producer writing another format)
  const TacticFormats own = g.backend->formats(info, g.layers[p].tactic);
  if (!own.outputs.empty() && own.outputs[0] != TensorFormat::Plain) return false;
  return g.backend->writes_copy(info, g.layers[p].tactic, format);
}

bool producer_provides(const Plan::Impl& g, int64_t id, TensorFormat format, size_t workspace_limit) {
  return producer_writes(g, id, format, workspace_limit) || producer_copies(g, id, format);
}

}  // namespace kiln::engine
