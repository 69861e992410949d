// Inlining failed engine segments back into the top-level graph as PyTorch nodes.

#include "compiler/segment_fallback.h"

#include "kiln/ir/graph_extract.h"
#include "kiln/ir/segment.h"
#include "kiln/support/error.h"

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
  return ir::copy_constant(dst, c);
}

}  // namespace

std::unique_ptr<ir::Graph> inline_segments(const ir::Graph& graph, const std::set<std::string>& segments) {
  auto out = std::make_unique<ir::Graph>();
  ir::ValueMap map = ir::copy_inputs_and_constants(*out, graph);
  for (const ir::Node* node : graph.nodes()) {
    if (!ir::is_engine_segment(*node) || segments.count(node->name()) == 0) {
      ir::copy_node(*out, *node, map);
      continue;
    }
    const ir::Graph& sub = *node->subgraph();
    ir::ValueMap inner;
    const std::vector<ir::Value*> args = ir::segment_inputs(*node);
    for (size_t i = 0; i < args.size(); ++i) inner[sub.inputs()[i]] = ir::mapped(map, args[i]);
    for (const ir::Value* c : sub.constants()) inner[c] = outer_constant(*out, *c);
    const std::string run = torch_run_name(node->name());
    for (const ir::Node* n : sub.nodes()) {
      ir::Node* copy = ir::copy_node(*out, *n, inner);
      copy->mutable_metadata()[ir::kSegmentRunKey] = run;
      copy->mutable_metadata().erase(ir::kSegmentBackendKey);
    }
    for (size_t i = 0; i < node->outputs().size(); ++i) {
      map[node->outputs()[i]] = ir::mapped(inner, sub.outputs()[i]);
    }
  }
  ir::copy_outputs(*out, graph, map);
  return out;
}

}  // namespace kiln::compiler
