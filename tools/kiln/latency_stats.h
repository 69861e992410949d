#pragma once
// Latency statistics of `kiln bench`: the order statistics of a set of timed calls and the spread that says
// whether they can be trusted.

#include <string>
#include <vector>

namespace kiln::cli {

/// `kiln bench` warns when a spread (LatencyStats::spread) is above this: the machine was busy, or the
/// module's calls vary, and medians may move by that much from one run to the next.
inline constexpr double kUnreliableSpread = 0.25;

struct LatencyStats {
  double min = 0.0, median = 0.0, mean = 0.0, p90 = 0.0, p99 = 0.0;  // milliseconds
  /// (p90 - min) / median: how far a tenth of the calls strayed above the fastest, relative to the typical
  /// call.
  double spread = 0.0;
};

/// The statistics of `ms` (nearest-rank percentiles; all zero when empty).
LatencyStats latency_stats(std::vector<double> ms);

/// "min 0.101  median 0.104  mean 0.109  p90 0.118  p99 0.161 ms  spread 16.3%".
std::string format_latency(const LatencyStats& stats);

}  // namespace kiln::cli
