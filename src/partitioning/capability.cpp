// Capability queries: is_node_supported and graph coverage.

#include "kiln/partitioning/capability.h"

#include <algorithm>
#include <sstream>

#include "kiln/ir/higher_order.h"
#include "kiln/partitioning/segments.h"

namespace kiln::partitioning {
namespace {

// Side-effecting operators by packet (namespace.name).
const std::set<std::string>& impure_packets() {
  static const std::set<std::string> kPackets = {
      "aten._assert_async",          "aten._assert_scalar",       "aten._assert_tensor_metadata",
      "aten.sym_constrain_range",    "aten.sym_constrain_range_for_size",
      "aten._functional_sym_constrain_range", "aten._functional_sym_constrain_range_for_size",
      "aten._functional_assert_async", "aten._functional_assert_scalar",
      "aten._print",                 "aten.print",                "builtins.print",
      "profiler._record_function_enter", "profiler._record_function_enter_new",
      "profiler._record_function_exit", "aten.seed",               "aten.manual_seed",
      "aten.set_",                   "aten.resize_",              "aten.copy_",
      "aten.record_stream",          "_operator.setitem",         "aten._set_grad_enabled",
  };
  return kPackets;
}

const std::set<std::string>& non_compute_packets() {
  static const std::set<std::string> kPackets = {"aten.sym_size", "aten.sym_numel", "aten.sym_stride",
                                                 "aten.sym_storage_offset", "aten.view"};
  return kPackets;
}

void count_node(const ir::Node& node, const settings::CompilationSettings& settings,
                const conversion::ConverterRegistry& registry, GraphSupport& out) {
  if (ir::is_engine_segment(node) && node.subgraph()) {
    for (const ir::Node* inner : node.subgraph()->nodes()) count_node(*inner, settings, registry, out);
    return;
  }
  const NodeSupport s = is_node_supported(node, settings, registry);
  const std::string op = ir::canonical_op_name(node.target());
  OpSupport& per = out.per_op[op];
  ++out.total;
  if (s.supported) {
    ++out.supported;
    ++per.supported;
  } else {
    ++per.unsupported;
    if (per.reason.empty()) per.reason = s.reason;
    out.unsupported.push_back({node.name(), op, s.status, s.reason});
  }
}

}  // namespace

const char* to_string(SupportStatus status) {
  switch (status) {
    case SupportStatus::Supported: return "supported";
    case SupportStatus::NoConverter: return "no converter";
    case SupportStatus::ValidatorRejected: return "validator rejected";
    case SupportStatus::TorchExecuted: return "in torch_executed_ops";
    case SupportStatus::DynamicShapes: return "dynamic shapes";
    case SupportStatus::Impure: return "impure";
    case SupportStatus::HigherOrder: return "higher-order op";
    case SupportStatus::UnsupportedArgument: return "unsupported argument";
    case SupportStatus::PrecisionConstraint: return "precision constraint";
  }
  return "?";
}

bool is_impure_op(const ir::OpName& op) {
  if (impure_packets().count(ir::canonical_op_packet(op))) return true;
  if (op.is_python_operator()) return false;
  // In-place variants (aten.add_) and out= overloads write into tensors the engine does not own. Dunder
  // names (aten.__and__) are not in-place.
  if (op.name.size() > 1 && op.name.back() == '_' && op.name.find("__") == std::string::npos) return true;
  if (op.overload == "out" || op.overload.rfind("out_", 0) == 0 || op.overload.ends_with("_out")) return true;
  return false;
}

bool is_compute_node(const ir::Node& node) {
  if (node.target().is_python_operator()) return false;
  return non_compute_packets().count(ir::canonical_op_packet(node.target())) == 0;
}

NodeSupport is_node_supported(const ir::Node& node, const settings::CompilationSettings& settings,
                              const conversion::ConverterRegistry& registry) {
  NodeSupport out;
  const std::string op = ir::canonical_op_name(node.target());
  if (ir::op_in_set(node.target(), settings.torch_executed_ops)) {
    out.status = SupportStatus::TorchExecuted;
    out.reason = op + " is in torch_executed_ops";
    return out;
  }
  if (is_impure_op(node.target())) {
    out.status = SupportStatus::Impure;
    out.reason = op + " has side effects (impure) and stays in PyTorch";
    return out;
  }
  auto unreadable = node.metadata().find(ir::kUnsupportedArgumentKey);
  if (unreadable != node.metadata().end()) {
    out.status = SupportStatus::UnsupportedArgument;
    out.reason = op + ": " + unreadable->second;
    return out;
  }
  auto autocast = node.metadata().find(ir::kAutocastKey);
  if (autocast != node.metadata().end() && autocast->second.ends_with(":disabled") &&
      (settings.enabled_precisions.count(settings::Precision::F16) ||
       settings.enabled_precisions.count(settings::Precision::BF16))) {
    // Engines would run the node in a lower precision; the program asked for its own dtype here (HF rotary
    // tables are such regions: positions lose their low bits in fp16).
    out.status = SupportStatus::PrecisionConstraint;
    out.reason = op + " is in an autocast-disabled region (" + autocast->second +
                 "): it stays in PyTorch in its exported dtype while engines may run in reduced precision";
    return out;
  }
  if (ir::is_higher_order(node.target())) {
    out.status = SupportStatus::HigherOrder;
    out.reason = op + " is a higher-order op: its nested graphs run in PyTorch, its control flow in Kiln's runtime";
    return out;
  }
  conversion::LookupResult r = registry.lookup(node, settings);
  if (r.match) {
    out.supported = true;
    out.status = SupportStatus::Supported;
    return out;
  }
  switch (r.miss) {
    case conversion::LookupMiss::Disallowed: out.status = SupportStatus::TorchExecuted; break;
    case conversion::LookupMiss::ValidatorRejected: out.status = SupportStatus::ValidatorRejected; break;
    case conversion::LookupMiss::DynamicShapes: out.status = SupportStatus::DynamicShapes; break;
    default: out.status = SupportStatus::NoConverter; break;
  }
  out.reason = r.reason;
  return out;
}

GraphSupport get_graph_converter_support(const ir::Graph& graph, const settings::CompilationSettings& settings,
                                         const conversion::ConverterRegistry& registry) {
  GraphSupport out;
  for (const ir::Node* node : graph.nodes()) count_node(*node, settings, registry, out);
  return out;
}

std::string GraphSupport::to_string() const {
  std::ostringstream s;
  s << supported << "/" << total << " ops supported\n";
  size_t width = 2;
  for (const auto& [op, c] : per_op) width = std::max(width, op.size());
  s << "op" << std::string(width - 2 + 2, ' ') << "supported  unsupported  reason\n";
  for (const auto& [op, c] : per_op) {
    std::string sup = std::to_string(c.supported), uns = std::to_string(c.unsupported);
    s << op << std::string(width - op.size() + 2, ' ') << sup << std::string(11 - std::min<size_t>(sup.size(), 10), ' ')
      << uns << std::string(13 - std::min<size_t>(uns.size(), 12), ' ') << (c.unsupported ? c.reason : "") << "\n";
  }
  return s.str();
}

}  // namespace kiln::partitioning
