#pragma once
// The coverage report behind `kiln inspect --coverage`: converter coverage, the reason for every unsupported
// node, and the partition the settings produce.

#include <string>
#include <vector>

#include "kiln/settings/compilation_settings.h"
#include "kiln/conversion/registry.h"
#include "kiln/ir/graph.h"
#include "kiln/partitioning/capability.h"
#include "kiln/partitioning/segments.h"

namespace kiln::partitioning {

struct CoverageReport {
  GraphSupport support;
  /// The partition in order (empty when partitioning failed).
  std::vector<SegmentInfo> segments;
  /// "fast" or "global".
  std::string partitioner;
  /// The partitioning error (e.g. require_full_compilation with unsupported nodes); empty on success.
  std::string error;
};

/// Computes the report with partition(graph, settings, registry). Never throws for a partitioning failure: the
/// message lands in `error`.
CoverageReport make_coverage_report(const ir::Graph& graph, const settings::CompilationSettings& settings,
                                    const conversion::ConverterRegistry& registry = conversion::converters());

/// Text: "N/M ops supported", the per-op table with reasons, then one line per segment with its kind, backend,
/// node count and boundary tensors.
std::string coverage_to_text(const CoverageReport& report);
/// JSON: {"ops_total", "ops_supported", "unsupported": [{"node", "op", "reason"}], "segments": [{"name",
/// "kind": "engine"|"torch", "backend", "nodes" (count), "node_names", "inputs", "outputs", "weight_bytes"}],
/// "per_op": {op: {"supported", "unsupported", "reason"}}, "partitioner", "error" (only when set)}.
std::string coverage_to_json(const CoverageReport& report, int indent = 2);

}  // namespace kiln::partitioning
