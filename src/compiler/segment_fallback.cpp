// Inlining failed engine segments back into the top-level graph as PyTorch nodes.

#include "compiler/segment_fallback.h"

#include "kiln/ir/segment.h"
#include "kiln/support/error.h"
#include "partitioning/graph_copy.h"

namespace kiln::compiler {
namespace {

// The PyTorch-run name for an inlined segment: "_run_on_acc_3" -> "_run_on_gpu_3".
std::string torch_run_name(const std::string& segment) {
  const std::string prefix = "_run_on_acc_";
  if (segment.rfind(prefix, 0) == 0) return "_run_on_gpu_" + segment.substr(prefix.size());
  return segment + "_fallback";
}

// The constant of `dst` standing for the segment constant `c`: an existing one with the same name and data, or a
// new one (renamed when its name is taken by something else).
ir::Value* outer_constant(ir::Graph& dst, const ir::Value& c) {
  if (ir::Value* existing = dst.find_value(c.name())) {
    if (existing->role() == ir::ValueRole::Constant && existing->fqn() == c.fqn() &&
        existing->data().data() == c.data().data()) {
      return existing;
    }
    ir::Value* v = dst.add_constant(dst.unique_name(c.name()), c.fqn(), c.constant_kind(), c.data(), c.meta());
    v->set_meta(c.meta());
    return v;
  }
  return partitioning::copy_constant(dst, c);
}

}  // namespace

std::unique_ptr<ir::Graph> inline_segments(const ir::Graph& graph, const std::set<std::string>& segments) {
  auto out = std::make_unique<ir::Graph>();
  partitioning::copy_symbols(*out, graph);
  partitioning::ValueMap map;
  for (const ir::Value* v : graph.inputs()) map[v] = partitioning::copy_as_input(*out, *v);
  for (const ir::Value* v : graph.constants()) map[v] = partitioning::copy_constant(*out, *v);
  for (const ir::Node* node : graph.nodes()) {
    if (!ir::is_engine_segment(*node) || segments.count(node->name()) == 0) {
      partitioning::copy_node(*out, *node, map);
      continue;
    }
    const ir::Graph& sub = *node->subgraph();
    partitioning::ValueMap inner;
    const std::vector<ir::Value*> args = ir::segment_inputs(*node);
    for (size_t i = 0; i < args.size(); ++i) inner[sub.inputs()[i]] = partitioning::mapped(map, args[i]);
    for (const ir::Value* c : sub.constants()) inner[c] = outer_constant(*out, *c);
    const std::string run = torch_run_name(node->name());
    for (const ir::Node* n : sub.nodes()) {
      ir::Node* copy = partitioning::copy_node(*out, *n, inner);
      copy->mutable_metadata()[ir::kSegmentRunKey] = run;
      copy->mutable_metadata().erase(ir::kSegmentBackendKey);
    }
    for (size_t i = 0; i < node->outputs().size(); ++i) {
      map[node->outputs()[i]] = partitioning::mapped(inner, sub.outputs()[i]);
    }
  }
  std::vector<ir::Value*> outputs;
  for (const ir::Value* v : graph.outputs()) outputs.push_back(partitioning::mapped(map, v));
  out->set_outputs(std::move(outputs));
  return out;
}

}  // namespace kiln::compiler
