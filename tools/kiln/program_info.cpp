#include "program_info.h"

namespace kiln::cli {

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

nlohmann::json tensor_json(const TensorInfo& t) {
  nlohmann::json shape = nlohmann::json::array();
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (t.static_shape[i].has_value()) {
      shape.push_back(*t.static_shape[i]);
    } else {
      shape.push_back(t.shape[i]);
    }
  }
  nlohmann::json j = {{"name", t.name}, {"dtype", t.dtype.empty() ? t.kind : t.dtype}, {"shape", shape}};
  return j;
}

std::string shape_text(const TensorInfo& t) {
  if (t.dtype.empty()) return t.kind;
  std::string text = t.dtype + "[";
  for (size_t i = 0; i < t.shape.size(); ++i) text += (i ? ", " : "") + t.shape[i];
  return text + "]";
}

nlohmann::json program_info_json(const ProgramInfo& info) {
  nlohmann::json j;
  j["inputs"] = nlohmann::json::array();
  for (const TensorInfo& t : info.inputs) j["inputs"].push_back(tensor_json(t));
  j["outputs"] = nlohmann::json::array();
  for (const TensorInfo& t : info.outputs) j["outputs"].push_back(tensor_json(t));
  j["parameters"] = info.parameters;
  j["parameter_bytes"] = info.parameter_bytes;
  j["symbols"] = nlohmann::json::object();
  for (const auto& [name, range] : info.symbols) {
    // An unbounded maximum is null.
    j["symbols"][name] = {
        {"min", range.min},
        {"max", range.max == ir::SymRange::kUnbounded ? nlohmann::json(nullptr) : nlohmann::json(range.max)}};
  }
  j["ops"] = nlohmann::json::object();
  for (const auto& [op, count] : info.ops) j["ops"][op] = count;
  return j;
}

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
