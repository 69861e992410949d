#include "latency_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace kiln::cli {

LatencyStats latency_stats(std::vector<double> ms) {
  LatencyStats s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  // Nearest rank: the smallest value with at least q of the calls at or below it.
  auto at = [&](double q) {
    const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(ms.size())));
    return ms[std::min(ms.size(), std::max<size_t>(rank, 1)) - 1];
  };
  s.min = ms.front();
  s.median = at(0.5);
  s.mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  s.p90 = at(0.9);
  s.p99 = at(0.99);
  s.spread = s.median > 0.0 ? (s.p90 - s.min) / s.median : 0.0;
  return s;
}

std::string format_latency(const LatencyStats& s) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "min %.3f  median %.3f  mean %.3f  p90 %.3f  p99 %.3f ms  spread %.1f%%",
                s.min, s.median, s.mean, s.p90, s.p99, 100 * s.spread);
  return buf;
}

}  // namespace kiln::cli
