// Per-layer profiles: LayerTimer (ExecutionContext::set_profiling) and summing profiles.

#include "engine/core/layer_timer.h"

#include <unordered_map>

namespace kiln::engine {

void accumulate_layer_profile(std::vector<LayerProfileRecord>& into,
                              const std::vector<LayerProfileRecord>& from) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < into.size(); ++i) index.emplace(into[i].name, i);
  for (const LayerProfileRecord& r : from) {
    auto [it, added] = index.emplace(r.name, into.size());
    if (added) {
      into.push_back(r);
      continue;
    }
    into[it->second].total_ms += r.total_ms;
    into[it->second].host_ms += r.host_ms;
    into[it->second].calls += r.calls;
  }
}

LayerTimer::LayerTimer(const Plan::Impl& plan)
    : plan_(&plan),
      clock_(plan.backend->device_clock()),
      total_ms_(plan.layers.size(), 0.0),
      host_ms_(plan.layers.size(), 0.0),
      calls_(plan.layers.size(), 0) {}

void LayerTimer::start_run(void* stream) {
  if (!clock_) return;
  clock_->reset();
  marked_.clear();
  clock_->hold(stream);
  holding_ = true;
}

void LayerTimer::begin(void* stream) {
  if (clock_) {
    begin_mark_ = clock_->mark(stream);
    start_ = std::chrono::steady_clock::now();
    return;
  }
  plan_->backend->synchronize(stream);
  start_ = std::chrono::steady_clock::now();
}

void LayerTimer::end(size_t layer, void* stream) {
  if (clock_) {
    const double host_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    marked_.push_back({layer, begin_mark_, clock_->mark(stream), host_ms});
    return;
  }
  plan_->backend->synchronize(stream);
  total_ms_[layer] +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  ++calls_[layer];
}

void LayerTimer::abandon_run() noexcept {
  if (clock_ && holding_) clock_->release();
  holding_ = false;
  marked_.clear();
}

void LayerTimer::finish_run(void* stream) {
  if (!clock_) return;
  if (holding_) clock_->release();
  holding_ = false;
  plan_->backend->synchronize(stream);
  for (const Marked& m : marked_) {
    total_ms_[m.layer] += clock_->elapsed_ms(m.begin, m.end);
    host_ms_[m.layer] += m.host_ms;
    ++calls_[m.layer];
  }
  marked_.clear();
}

std::vector<LayerProfileRecord> LayerTimer::records() const {
  std::vector<LayerProfileRecord> records;
  for (size_t i = 0; i < plan_->layers.size(); ++i) {
    const PlanLayer& pl = plan_->layers[i];
    const Layer& l = pl.layer;
    const bool constant = l.kind == LayerKind::Constant;
    if (calls_[i] == 0 || (constant && !plan_->tensors[l.outputs[0]].is_output)) continue;
    const std::string tactic = constant ? "copy" : pl.host ? "host" : pl.tactic;
    records.push_back(
        {l.name, layer_kind_name(l.kind), tactic, total_ms_[i], calls_[i], clock_ != nullptr, host_ms_[i]});
  }
  return records;
}

}  // namespace kiln::engine
