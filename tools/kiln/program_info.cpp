#include "program_info.h"

namespace kiln::cli {
namespace {

TensorInfo tensor_info(const ir::Value& v) {
  TensorInfo info;
  info.name = v.name();
  info.kind = ir::to_string(v.kind());
  if (!v.is_tensor()) return info;
  info.dtype = dtype_name(v.meta().dtype);
  for (const ir::SymExpr& dim : v.meta().sizes) {
    info.shape.push_back(dim.to_string());
    info.static_shape.push_back(dim.as_int());
  }
  return info;
}

}  // namespace

std::vector<size_t> user_output_indices(const frontend::Program& program) {
  std::vector<size_t> indices;
  const size_t n = program.graph->outputs().size();
  for (size_t i = 0; i < n; ++i) {
    if (program.output_kinds.size() != n || program.output_kinds[i] == frontend::OutputKind::UserOutput) {
      indices.push_back(i);
    }
  }
  return indices;
}

ProgramInfo describe_program(const frontend::Program& program) {
  const ir::Graph& graph = *program.graph;
  ProgramInfo info;
  for (const ir::Value* v : graph.inputs()) {
    info.inputs.push_back(tensor_info(*v));
    if (!v->is_tensor()) continue;
    for (const ir::SymExpr& dim : v->meta().sizes) {
      for (const std::string& s : dim.free_symbols()) {
        auto it = graph.symbol_ranges().find(s);
        info.symbols[s] = it != graph.symbol_ranges().end() ? it->second : ir::SymRange{1, ir::SymRange::kUnbounded};
      }
    }
  }
  for (size_t i : user_output_indices(program)) info.outputs.push_back(tensor_info(*graph.outputs()[i]));
  for (const ir::Value* c : graph.constants()) {
    int64_t bytes = c->data().defined() ? static_cast<int64_t>(c->data().nbytes()) : 0;
    info.constant_bytes += bytes;
    if (c->constant_kind() != ir::ConstantKind::Parameter) continue;
    info.parameters += c->data().defined() ? c->data().numel() : 0;
    info.parameter_bytes += bytes;
  }
  for (const ir::Node* node : graph.nodes()) {
    ++info.ops[node->target().to_string()];
    ++info.num_nodes;
  }
  return info;
}

}  // namespace kiln::cli
