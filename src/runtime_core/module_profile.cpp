// A CompiledModule's per-layer profile: PyTorch run times and the profile in program order.

#include "runtime_core/module_profile.h"

namespace kiln::runtime {

TorchRunProfile::TorchRunProfile(const std::vector<ModuleStep>& steps) : records_(steps.size()) {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].torch_graph == nullptr) continue;
    records_[i] = {step_name(steps[i], i), "torch", "libtorch", 0.0, 0};
  }
}

void TorchRunProfile::add(size_t step, double ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  records_[step].total_ms += ms;
  ++records_[step].calls;
}

void TorchRunProfile::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (engine::LayerProfileRecord& r : records_) {
    r.total_ms = 0.0;
    r.calls = 0;
  }
}

engine::LayerProfileRecord TorchRunProfile::record(size_t step) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return records_[step];
}

std::vector<engine::LayerProfileRecord> module_layer_profile(
    const std::vector<ModuleStep>& steps,
    const std::vector<std::vector<engine::LayerProfileRecord>>& engine_records,
    const TorchRunProfile& torch_runs) {
  std::vector<engine::LayerProfileRecord> profile;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].segment == nullptr) {
      engine::LayerProfileRecord r = torch_runs.record(i);
      if (r.calls > 0) profile.push_back(std::move(r));
      continue;
    }
    for (engine::LayerProfileRecord r : engine_records[steps[i].engine_index]) {
      r.name = steps[i].segment->name() + "/" + r.name;
      profile.push_back(std::move(r));
    }
  }
  return profile;
}

}  // namespace kiln::runtime
