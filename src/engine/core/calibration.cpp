// INT8 calibration: probe runs of the fp32 build, per-tensor histograms, calibrators (calibration.h).

#include "kiln/engine/calibration.h"

#include <algorithm>
#include <cmath>

#include "engine/core/precision_probe.h"
#include "engine/ops/shape_inference.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::engine {
namespace {

using Batch = std::map<std::string, HostTensor>;

// Throws InvalidInput naming the batch and input unless every network input is given with fitting dims.
void check_batches(const Network& network, const std::vector<Batch>& batches) {
  KILN_CHECK(!batches.empty(), InvalidInput, "calibration: no calibration batches");
  for (size_t b = 0; b < batches.size(); ++b) {
    for (const auto& [name, value] : batches[b]) {
      const Tensor* t = network.find_tensor(name);
      KILN_CHECK(t != nullptr && t->is_input(), InvalidInput, "calibration batch ", b, ": '", name,
                 "' is not an input of the network");
    }
    for (int64_t id : network.inputs()) {
      const Tensor* t = network.tensor(id);
      auto it = batches[b].find(t->name());
      KILN_CHECK(it != batches[b].end(), InvalidInput, "calibration batch ", b, ": no array for input '",
                 t->name(), "'");
      const HostTensor& v = it->second;
      bool fits = v.dim() == t->rank();
      for (int64_t d = 0; fits && d < t->rank(); ++d) fits = t->dims()[d] < 0 || t->dims()[d] == v.sizes()[d];
      KILN_CHECK(fits, InvalidInput, "calibration batch ", b, ": input '", t->name(), "' has shape ",
                 dims_str(v.sizes()), ", the network wants ", dims_str(t->dims()));
      KILN_CHECK(is_floating(v.dtype()) == is_floating(t->dtype()), InvalidInput, "calibration batch ", b,
                 ": input '", t->name(), "' is ", dtype_name(v.dtype()), ", the network wants ",
                 dtype_name(t->dtype()));
    }
  }
}

// The fp32 values of a probe run worth a range: floating bindings as float.
std::vector<float> floats_of(const HostTensor& t) {
  const HostTensor f = t.dtype() == DType::Float32 ? t : t.to(DType::Float32);
  const float* p = f.data_as<float>();
  return std::vector<float>(p, p + f.numel());
}

}  // namespace

int set_dynamic_ranges(Network& network, const std::map<std::string, DynamicRange>& ranges) {
  int set = 0;
  for (const auto& [name, range] : ranges) {
    if (Tensor* t = network.find_tensor(name)) {
      t->set_dynamic_range(range.min, range.max);
      ++set;
    }
  }
  return set;
}

std::map<std::string, DynamicRange> calibrate(const Network& network, const BuilderConfig& config,
                                              const std::vector<Batch>& batches,
                                              const CalibrationConfig& calibration) {
  check_batches(network, batches);
  KILN_CHECK(calibration.bins >= 256 && calibration.bins <= (1 << 20), InvalidInput,
             "calibration: ", calibration.bins, " histogram bins (need 256 .. 2^20)");
  KILN_CHECK(calibration.percentile > 0 && calibration.percentile <= 100, InvalidInput,
             "calibration: percentile ", calibration.percentile, " is not in (0, 100]");
  PhaseTimer timer("calibration");
  BuilderConfig fp32 = config;
  fp32.precisions = {Precision::FP32};
  fp32.sample_inputs.clear();
  const std::shared_ptr<const Plan> probe = passes::build_probe_plan(fp32, network);
  std::vector<std::string> names;
  for (const Binding& b : probe->bindings()) {
    if (b.dtype == DType::Float32) names.push_back(b.name);
  }
  // Pass 1: the extremes; pass 2 (histogram calibrators): |x| in bins over [0, max |x|].
  std::map<std::string, Histogram> histograms;
  for (const std::string& n : names) {
    Histogram& h = histograms[n];
    h.min = INFINITY;
    h.max = -INFINITY;
  }
  for (const Batch& batch : batches) {
    const passes::ProbeValues values = passes::run_probe(probe, batch);
    for (const std::string& n : names) {
      Histogram& h = histograms[n];
      for (float x : floats_of(values.at(n))) {
        if (!std::isfinite(x)) continue;
        h.min = std::min(h.min, x);
        h.max = std::max(h.max, x);
      }
    }
  }
  for (auto& [n, h] : histograms)
    h.max_abs = std::isfinite(h.min) ? std::max(std::fabs(h.min), std::fabs(h.max)) : 0.0f;
  if (calibration.calibrator != CalibratorKind::Max) {
    for (auto& [n, h] : histograms) h.counts.assign(static_cast<size_t>(calibration.bins), 0.0);
    for (const Batch& batch : batches) {
      const passes::ProbeValues values = passes::run_probe(probe, batch);
      for (const std::string& n : names) {
        Histogram& h = histograms[n];
        if (h.max_abs <= 0.0f) continue;
        const double per_bin = calibration.bins / static_cast<double>(h.max_abs);
        for (float x : floats_of(values.at(n))) {
          if (!std::isfinite(x)) continue;
          const auto b = std::min(static_cast<size_t>(std::fabs(x) * per_bin), h.counts.size() - 1);
          h.counts[b] += 1;
        }
      }
    }
  }
  std::map<std::string, DynamicRange> ranges;
  for (const auto& [n, h] : histograms) {
    const float amax = calibrated_amax(h, calibration);
    const DynamicRange range{h.min >= 0.0f ? 0.0f : -amax, amax};
    if (range.usable()) ranges.emplace(n, range);
  }
  KILN_INFO("engine: calibration (", calibrator_name(calibration.calibrator), "): ", ranges.size(),
            " tensor ranges from ", batches.size(), " batches");
  return ranges;
}

}  // namespace kiln::engine
