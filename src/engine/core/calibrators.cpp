// The calibrators: a histogram of |x| -> amax (calibration.h).

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kiln/engine/calibration.h"
#include "kiln/support/error.h"

namespace kiln::engine {
namespace {

float percentile_amax(const Histogram& h, double percentile) {
  const double total = std::accumulate(h.counts.begin(), h.counts.end(), 0.0);
  if (total <= 0) return h.max_abs;
  const double wanted = total * percentile / 100.0;
  double seen = 0;
  for (size_t b = 0; b < h.counts.size(); ++b) {
    seen += h.counts[b];
    if (seen >= wanted) return static_cast<float>((b + 1) * h.width());
  }
  return h.max_abs;
}

// KL(P || Q) of clipping at `edge`: P is the first `edge` bins with the tail beyond them folded into the last
// one (what the clipped tensor holds); Q is those bins without the tail quantized to `levels` equal groups,
// each group's mass spread evenly over its nonzero bins (what the quantized tensor can tell apart). The tail
// is in P only, so clipping much mass costs divergence, and a coarse step costs it through the grouping.
double clipped_divergence(const std::vector<double>& counts, size_t edge, size_t levels, double tail) {
  std::vector<double> p(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(edge));
  std::vector<double> q(edge, 0.0);
  for (size_t j = 0; j < levels; ++j) {
    const size_t start = j * edge / levels, end = (j + 1) * edge / levels;
    double mass = 0;
    size_t used = 0;
    for (size_t b = start; b < end; ++b) {
      mass += p[b];
      used += p[b] > 0 ? 1 : 0;
    }
    for (size_t b = start; b < end && used > 0; ++b) q[b] = p[b] > 0 ? mass / static_cast<double>(used) : 0.0;
  }
  p[edge - 1] += tail;
  const double p_total = std::accumulate(p.begin(), p.end(), 0.0);
  const double q_total = std::accumulate(q.begin(), q.end(), 0.0);
  if (p_total <= 0 || q_total <= 0) return std::numeric_limits<double>::infinity();
  double kl = 0;
  for (size_t b = 0; b < edge; ++b) {
    if (p[b] <= 0) continue;
    const double pb = p[b] / p_total;
    const double qb = std::max(q[b] / q_total, 1e-9);  // (a bin only the tail fills: heavily penalized)
    kl += pb * std::log(pb / qb);
  }
  return kl;
}

float entropy_amax(const Histogram& h) {
  const size_t bins = h.counts.size();
  // Quantization steps of |x|: 128 levels (0..127) for s8, 256 (0..255) for a never-negative tensor's u8.
  const size_t levels = h.min >= 0.0f ? 256 : 128;
  if (bins <= levels) return h.max_abs;
  // The first bin holds the exact zeros, half of a ReLU's outputs: as a spike it would dominate the
  // divergence (its group's mass is spread over the group's bins) and favour the finest step, clipping far
  // too much. It counts as much as its neighbour instead; zeros are exact in any quantization anyway.
  std::vector<double> counts = h.counts;
  counts[0] = counts[1];
  std::vector<double> tail_from(bins + 1, 0.0);  // tail_from[e] = sum of counts[e:]
  for (size_t b = bins; b-- > 0;) tail_from[b] = tail_from[b + 1] + counts[b];
  if (tail_from[0] <= 0) return h.max_abs;
  double best = std::numeric_limits<double>::infinity();
  size_t best_edge = bins;
  for (size_t edge = levels; edge <= bins; ++edge) {
    const double kl = clipped_divergence(counts, edge, levels, tail_from[edge]);
    if (kl < best) {
      best = kl;
      best_edge = edge;
    }
  }
  return static_cast<float>(best_edge * h.width());
}

}  // namespace

const char* calibrator_name(CalibratorKind kind) {
  switch (kind) {
    case CalibratorKind::Max: return "max";
    case CalibratorKind::Percentile: return "percentile";
    case CalibratorKind::Entropy: return "entropy";
  }
  return "?";
}

CalibratorKind parse_calibrator(const std::string& name) {
  for (CalibratorKind k : {CalibratorKind::Max, CalibratorKind::Percentile, CalibratorKind::Entropy}) {
    if (name == calibrator_name(k)) return k;
  }
  KILN_FAIL(InvalidInput, "calibrator '", name, "' is not one of max, percentile, entropy");
}

float calibrated_amax(const Histogram& h, const CalibrationConfig& config) {
  if (h.counts.empty() || h.max_abs <= 0.0f) return h.max_abs;
  switch (config.calibrator) {
    case CalibratorKind::Max: return h.max_abs;
    case CalibratorKind::Percentile: return std::min(h.max_abs, percentile_amax(h, config.percentile));
    case CalibratorKind::Entropy: return std::min(h.max_abs, entropy_amax(h));
  }
  return h.max_abs;
}

}  // namespace kiln::engine
