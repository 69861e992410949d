#include "kiln/engine/plan.h"

#include "engine/core/int8_policy.h"
#include "engine/core/plan_impl.h"
#include "kiln/support/error.h"

namespace kiln::engine {

Plan::Plan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Plan::~Plan() = default;

const std::vector<Binding>& Plan::bindings() const { return impl_->bindings; }

const Binding& Plan::binding(const std::string& name) const {
  for (const auto& b : impl_->bindings) {
    if (b.name == name) return b;
  }
  KILN_FAIL(InvalidInput, "plan has no input or output named '", name, "'");
}

int Plan::num_profiles() const { return static_cast<int>(impl_->profiles.size()); }

const OptimizationProfile& Plan::profile(int index) const {
  KILN_CHECK(index >= 0 && index < num_profiles(), InvalidInput, "profile index ", index, " out of range (plan has ",
             num_profiles(), ")");
  return impl_->profiles[index].profile;
}

const std::string& Plan::backend_name() const { return impl_->backend_name; }
const std::string& Plan::device() const { return impl_->device; }
std::string Plan::running_device() const { return impl_->backend->device(); }

std::vector<PlanLayerInfo> Plan::layers() const {
  std::vector<PlanLayerInfo> out;
  for (size_t i = 0; i < impl_->layers.size(); ++i) {
    const PlanLayer& pl = impl_->layers[i];
    PlanLayerInfo info{pl.layer.name, pl.layer.kind, pl.host ? "host" : pl.tactic, {}, {}, params_text(pl.layer.params), {}, {}, {}, 0};
    const bool kernel = impl_->is_kernel_layer(static_cast<int64_t>(i));
    info.int8 = kernel && tactic_is_int8(*impl_, static_cast<int64_t>(i));
    info.fp8 = kernel && tactic_is_fp8(*impl_, static_cast<int64_t>(i));
    for (int64_t id : pl.layer.inputs) {
      info.inputs.push_back(impl_->tensors[id].name);
      info.input_formats.push_back(impl_->tensors[id].format);
    }
    for (int64_t id : pl.layer.outputs) {
      info.outputs.push_back(impl_->tensors[id].name);
      info.output_formats.push_back(impl_->tensors[id].format);
      info.output_dtypes.push_back(impl_->tensors[id].dtype);
    }
    for (const Weights& w : pl.layer.weights) {
      if (w.defined()) info.weight_bytes += w.value.nbytes();
    }
    out.push_back(std::move(info));
  }
  return out;
}

uint64_t Plan::workspace_bytes() const { return impl_->workspace_bytes; }

size_t Plan::arena_bytes(int index) const {
  profile(index);
  return impl_->profiles[index].arena_bytes;
}

size_t Plan::live_bytes_lower_bound(int index) const {
  profile(index);
  return impl_->profiles[index].live_lower_bound;
}

std::vector<std::string> Plan::weight_names() const {
  std::vector<std::string> out;
  for (const auto& e : impl_->refit) {
    if (std::find(out.begin(), out.end(), e.name) == out.end()) out.push_back(e.name);
  }
  return out;
}

HostTensor Plan::weight(const std::string& name) const {
  for (const RefitEntry& e : impl_->refit) {
    if (e.name == name) return impl_->layers[e.layer].layer.weights[e.slot].value;
  }
  return {};
}

bool Plan::refittable() const { return impl_->refittable; }
bool Plan::strip_weights() const { return impl_->strip_weights; }
void Plan::set_strip_weights(bool strip) { impl_->strip_weights = strip; }
const TacticStats& tactic_stats(const Plan& plan) { return plan.impl().tactic_stats; }
const std::vector<PrecisionNote>& precision_notes(const Plan& plan) { return plan.impl().precision_notes; }
bool Plan::weights_missing() const { return impl_->weights_missing(); }

}  // namespace kiln::engine
