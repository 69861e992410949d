// The partitioned graph's form: segment queries, listing and flattening.

#include "kiln/partitioning/segments.h"

#include <unordered_set>

#include "kiln/ir/graph_extract.h"
#include "kiln/support/error.h"

namespace kiln::partitioning {

int64_t constant_bytes(const ir::Value& constant) {
  if (constant.data().defined()) return static_cast<int64_t>(constant.data().nbytes());
  std::optional<std::vector<int64_t>> sizes = constant.meta().static_sizes();
  if (!sizes) return 0;
  int64_t n = 1;
  for (int64_t s : *sizes) n *= s;
  return n * static_cast<int64_t>(dtype_size(constant.meta().dtype));
}

std::vector<SegmentInfo> describe_segments(const ir::Graph& graph) {
  std::vector<SegmentInfo> out;
  const ir::UseMap uses(graph);
  const std::vector<ir::Node*> nodes = graph.nodes();
  size_t torch_count = 0;
  for (size_t i = 0; i < nodes.size();) {
    const ir::Node* node = nodes[i];
    if (ir::is_engine_segment(*node)) {
      SegmentInfo s;
      s.name = node->name();
      s.engine = true;
      s.backend = ir::segment_backend(*node);
      if (node->subgraph()) {
        for (const ir::Node* n : node->subgraph()->nodes()) s.nodes.push_back(n->name());
        for (const ir::Value* v : node->subgraph()->inputs()) s.inputs.push_back(v->name());
        for (const ir::Value* v : node->subgraph()->outputs()) s.outputs.push_back(v->name());
        for (const ir::Value* c : node->subgraph()->constants()) s.weight_bytes += constant_bytes(*c);
      }
      out.push_back(std::move(s));
      ++i;
      continue;
    }
    // A run of consecutive PyTorch nodes (split where the recorded segment name changes).
    auto tag = [](const ir::Node* n) {
      auto it = n->metadata().find(ir::kSegmentRunKey);
      return it == n->metadata().end() ? std::string() : it->second;
    };
    const std::string name = tag(node);
    size_t j = i;
    std::unordered_set<const ir::Node*> members;
    while (j < nodes.size() && !ir::is_engine_segment(*nodes[j]) && tag(nodes[j]) == name)
      members.insert(nodes[j++]);
    SegmentInfo s;
    s.name = name.empty() ? "_run_on_gpu_torch_" + std::to_string(torch_count) : name;
    ++torch_count;
    s.backend = "torch";
    std::unordered_set<const ir::Value*> seen;
    for (size_t k = i; k < j; ++k) {
      s.nodes.push_back(nodes[k]->name());
      for (const ir::Value* v : nodes[k]->inputs()) {
        if (v->role() == ir::ValueRole::Constant || !seen.insert(v).second) continue;
        if (v->producer() == nullptr || !members.count(v->producer())) s.inputs.push_back(v->name());
      }
      for (const ir::Value* v : nodes[k]->outputs()) {
        bool external = graph.is_output(v);
        for (const ir::Node* u : uses.users(v)) external = external || !members.count(u);
        if (external) s.outputs.push_back(v->name());
      }
    }
    out.push_back(std::move(s));
    i = j;
  }
  return out;
}

std::unique_ptr<ir::Graph> flatten_partitions(const ir::Graph& graph) {
  auto out = std::make_unique<ir::Graph>();
  ir::ValueMap map = ir::copy_inputs_and_constants(*out, graph);
  for (const ir::Node* node : graph.nodes()) {
    if (!ir::is_engine_segment(*node)) {
      ir::Node* copy = ir::copy_node(*out, *node, map);
      copy->mutable_metadata().erase(ir::kSegmentRunKey);
      continue;
    }
    const ir::Graph* sub = node->subgraph().get();
    KILN_CHECK(sub != nullptr, InvalidInput, "engine segment '", node->name(), "' has no subgraph");
    const std::vector<ir::Value*> args = node->inputs();
    KILN_CHECK(args.size() == sub->inputs().size() && node->outputs().size() == sub->outputs().size(),
               InvalidInput, "engine segment '", node->name(), "' has ", args.size(), " inputs and ",
               node->outputs().size(), " outputs but its subgraph has ", sub->inputs().size(), " and ",
               sub->outputs().size());
    ir::ValueMap sub_map;
    for (size_t i = 0; i < args.size(); ++i) sub_map[sub->inputs()[i]] = ir::mapped(map, args[i]);
    for (const ir::Value* c : sub->constants()) {
      ir::Value* existing = out->find_value(c->name());
      sub_map[c] = existing != nullptr ? existing : ir::copy_constant(*out, *c);
    }
    for (const ir::Node* inner : sub->nodes()) ir::copy_node(*out, *inner, sub_map);
    for (size_t i = 0; i < node->outputs().size(); ++i) {
      map[node->outputs()[i]] = ir::mapped(sub_map, sub->outputs()[i]);
    }
  }
  ir::copy_outputs(*out, graph, map);
  return out;
}

}  // namespace kiln::partitioning
