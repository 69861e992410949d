#pragma once
// INT8 calibration (TensorRT's IInt8Calibrator, done by the engine library): run the fp32 build of a network
// on calibration batches with every layer output exposed, collect per tensor the range and a histogram of |x|
// over all batches, and choose each tensor's dynamic range with a calibrator:
//   max         amax = the largest |x| seen (no clipping; one outlier stretches the step for every value);
//   percentile  amax = the |x| below which `percentile` % of the values lie (clips the rare tail);
//   entropy     amax = the clipping threshold whose quantized distribution (127 steps, or 255 for a tensor
//   that
//               is never negative) is closest to the observed one in Kullback-Leibler divergence (TensorRT's
//               entropy calibrator's criterion).
// A tensor whose values are never negative gets [0, amax] (stored u8), any other [-amax, amax] (s8). The
// ranges go onto the network's tensors with set_dynamic_ranges (Tensor::set_dynamic_range); a build with
// Precision::INT8 then quantizes the layers its policy allows (int8_policy.h).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/engine/builder.h"
#include "kiln/engine/dynamic_range.h"
#include "kiln/engine/network.h"
#include "kiln/support/host_tensor.h"

namespace kiln::engine {

enum class CalibratorKind : uint8_t { Max, Percentile, Entropy };
/// "max", "percentile", "entropy".
const char* calibrator_name(CalibratorKind kind);
/// The kind named `name`; throws kiln::Error(InvalidInput) listing the names otherwise.
CalibratorKind parse_calibrator(const std::string& name);

struct CalibrationConfig {
  CalibratorKind calibrator = CalibratorKind::Percentile;
  /// The percentile calibrator's percentile (in (0, 100]).
  double percentile = 99.99;
  /// Histogram bins over [0, max |x|].
  int bins = 2048;
};

/// A histogram of |x| over [0, max_abs] in equal bins, and the signed extremes seen.
struct Histogram {
  float max_abs = 0.0f;
  float min = 0.0f, max = 0.0f;
  std::vector<double> counts;
  /// Bin width (max_abs / bins).
  double width() const { return counts.empty() ? 0.0 : static_cast<double>(max_abs) / counts.size(); }
};

/// The amax `config`'s calibrator chooses for a histogram (max_abs for an empty one).
float calibrated_amax(const Histogram& histogram, const CalibrationConfig& config);

/// The dynamic range of every fp32 tensor a kernel layer of the fp32 build of `network` writes (and of the
/// network's fp32 inputs), by tensor name, calibrated on `batches` (input name -> value; each batch must give
/// every network input with the network's static dims and an fp32 dtype). `config` is the build's config
/// (backend, profiles, threads); it is built in fp32 whatever its precisions. A tensor that is zero on every
/// batch gets no range. Throws kiln::Error(InvalidInput) naming the batch and input when a batch does not fit
/// the network.
std::map<std::string, DynamicRange> calibrate(const Network& network, const BuilderConfig& config,
                                              const std::vector<std::map<std::string, HostTensor>>& batches,
                                              const CalibrationConfig& calibration);

/// Sets each range on the network tensor of that name (names the network does not have are ignored: the fused
/// build names its tensors after the network's). Returns how many were set.
int set_dynamic_ranges(Network& network, const std::map<std::string, DynamicRange>& ranges);

}  // namespace kiln::engine
