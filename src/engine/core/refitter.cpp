#include "kiln/engine/refitter.h"

#include <set>

#include "engine/core/plan_impl.h"
#include "engine/ops/shape_inference.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::engine {

Refitter::Refitter(std::shared_ptr<Plan> plan) : plan_(std::move(plan)) {
  KILN_CHECK(plan_ != nullptr, InvalidInput, "Refitter needs a plan");
  const auto& g = plan_->impl();
  KILN_CHECK(g.refittable || g.strip_weights, InvalidInput,
             "plan was built without refittable or strip_weights: its weights cannot be replaced");
}

void Refitter::set_weights(const std::string& name, const HostTensor& value) {
  const auto& g = plan_->impl();
  const RefitEntry* entry = nullptr;
  for (const auto& e : g.refit) {
    if (e.name == name) entry = &e;
  }
  KILN_CHECK(entry != nullptr, InvalidInput, "refit: the plan has no refittable weight named '", name, "'");
  KILN_CHECK(value.defined(), InvalidInput, "refit: weight '", name, "' is undefined");
  KILN_CHECK(value.dtype() == entry->original_dtype, InvalidInput, "refit: weight '", name, "' has dtype ",
             dtype_name(value.dtype()), ", expected ", dtype_name(entry->original_dtype));
  KILN_CHECK(value.sizes() == entry->original_dims, InvalidInput, "refit: weight '", name, "' has shape ", value.describe(),
             ", expected ", HostTensor(entry->original_dtype, entry->original_dims).describe());
  for (auto& s : staged_) {
    if (s.first == name) {
      s.second = value;
      return;
    }
  }
  staged_.push_back({name, value});
}

std::vector<std::string> Refitter::missing_weights() const {
  const auto& g = plan_->impl();
  std::vector<std::string> out;
  for (const auto& e : g.refit) {
    if (g.layers[e.layer].layer.weights[e.slot].defined()) continue;
    bool staged = false;
    for (const auto& s : staged_) staged = staged || s.first == e.name;
    if (!staged && std::find(out.begin(), out.end(), e.name) == out.end()) out.push_back(e.name);
  }
  return out;
}

int Refitter::refit() {
  auto& g = plan_->impl();
  std::set<int64_t> touched;
  for (const auto& [name, value] : staged_) {
    for (const auto& e : g.refit) {
      if (e.name != name) continue;
      Weights& slot = g.layers[e.layer].layer.weights[e.slot];
      // The recorded transform: the builder only changes a named weight's dtype (reduced precision);
      // kernel-specific preparation (reorders, casts) is re-done when the kernel is re-created.
      DType stored = slot.defined() ? slot.value.dtype() : e.original_dtype;
      if (g.layers[e.layer].layer.kind == LayerKind::Constant) stored = g.tensors[g.layers[e.layer].layer.outputs[0]].dtype;
      slot = Weights(name, stored == value.dtype() ? value : value.to(stored));
      touched.insert(e.layer);
    }
  }
  staged_.clear();
  ++g.refit_generation;
  for (int64_t li : touched) {
    const Layer& l = g.layers[li].layer;
    std::vector<ShapeIn> in;
    // (an INT8 tensor between INT8 layers has its floating dtype to shape inference, as when the plan is loaded)
    for (int64_t id : l.inputs) in.push_back({logical_dtype(g, id), g.tensors[id].dims, nullptr});
    bool all_defined = true;
    for (const auto& e : g.refit) {
      if (e.layer == li && !l.weights[e.slot].defined()) all_defined = false;
    }
    if (all_defined) infer_shapes(l, in);
    g.create_kernels(li);
    KILN_DEBUG("engine: refit layer '", l.name, "'");
  }
  return static_cast<int>(touched.size());
}

}  // namespace kiln::engine
