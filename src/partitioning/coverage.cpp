// The coverage report and its text and JSON renderings.

#include "kiln/partitioning/coverage.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "kiln/partitioning/partitioners.h"
#include "kiln/support/error.h"

namespace kiln::partitioning {
namespace {

std::string join(const std::vector<std::string>& items, size_t limit = 8) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < limit; ++i) s += (i ? ", " : "") + items[i];
  if (items.size() > limit) s += ", ... (" + std::to_string(items.size()) + ")";
  return s;
}

}  // namespace

CoverageReport make_coverage_report(const ir::Graph& graph, const settings::CompilationSettings& settings,
                                    const conversion::ConverterRegistry& registry) {
  CoverageReport report;
  report.support = get_graph_converter_support(graph, settings, registry);
  report.partitioner = settings.use_fast_partitioner ? "fast" : "global";
  try {
    PartitionResult r = partition(graph, settings, registry);
    report.segments = describe_segments(*r.graph);
  } catch (const Error& e) {
    report.error = e.what();
  }
  return report;
}

std::string coverage_to_text(const CoverageReport& report) {
  std::ostringstream out;
  out << report.support.to_string();
  if (!report.support.unsupported.empty()) {
    out << "\nunsupported nodes:\n";
    for (const UnsupportedNode& u : report.support.unsupported) {
      out << "  " << u.node << " (" << u.op << "): " << u.reason << "\n";
    }
  }
  out << "\npartition (" << report.partitioner << "):";
  if (!report.error.empty()) {
    out << " failed: " << report.error << "\n";
    return out.str();
  }
  int64_t engines = 0;
  for (const SegmentInfo& s : report.segments) engines += s.engine ? 1 : 0;
  out << " " << report.segments.size() << " segments, " << engines << " engine"
      << (engines == 1 ? "" : "s") << "\n";
  for (const SegmentInfo& s : report.segments) {
    out << "  " << s.name << "  " << (s.engine ? "engine" : "torch") << "  backend=" << s.backend
        << "  nodes=" << s.nodes.size();
    if (s.engine) out << "  weights=" << s.weight_bytes << "B";
    out << "\n    inputs:  " << join(s.inputs) << "\n    outputs: " << join(s.outputs) << "\n";
  }
  return out.str();
}

std::string coverage_to_json(const CoverageReport& report, int indent) {
  nlohmann::ordered_json j;
  j["ops_total"] = report.support.total;
  j["ops_supported"] = report.support.supported;
  j["unsupported"] = nlohmann::ordered_json::array();
  for (const UnsupportedNode& u : report.support.unsupported) {
    j["unsupported"].push_back({{"node", u.node}, {"op", u.op}, {"reason", u.reason}, {"status", to_string(u.status)}});
  }
  j["segments"] = nlohmann::ordered_json::array();
  for (const SegmentInfo& s : report.segments) {
    j["segments"].push_back({{"name", s.name},
                             {"kind", s.engine ? "engine" : "torch"},
                             {"backend", s.backend},
                             {"nodes", s.nodes.size()},
                             {"node_names", s.nodes},
                             {"inputs", s.inputs},
                             {"outputs", s.outputs},
                             {"weight_bytes", s.weight_bytes}});
  }
  nlohmann::ordered_json per_op = nlohmann::ordered_json::object();
  for (const auto& [op, c] : report.support.per_op) {
    per_op[op] = {{"supported", c.supported}, {"unsupported", c.unsupported}, {"reason", c.reason}};
  }
  j["per_op"] = per_op;
  j["partitioner"] = report.partitioner;
  if (!report.error.empty()) j["error"] = report.error;
  return j.dump(indent);
}

}  // namespace kiln::partitioning
