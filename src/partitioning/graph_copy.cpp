// Copying values and nodes between graphs.

#include "graph_copy.h"

#include "kiln/support/error.h"

namespace kiln::partitioning {

ir::Value* copy_as_input(ir::Graph& dst, const ir::Value& src) {
  ir::Value* v = dst.add_input(src.name(), src.kind(), src.meta());
  v->set_sym_value(src.sym_value());
  return v;
}

ir::Value* copy_constant(ir::Graph& dst, const ir::Value& src) {
  ir::Value* v = dst.add_constant(src.name(), src.fqn(), src.constant_kind(), src.data(), src.meta());
  v->set_meta(src.meta());
  return v;
}

ir::Value* mapped(const ValueMap& map, const ir::Value* value) {
  auto it = map.find(value);
  KILN_CHECK(it != map.end(), Internal, "partitioning: value '", value ? value->name() : std::string("<null>"),
             "' is used before it is defined in the partitioned graph");
  return it->second;
}

ir::Node* copy_node(ir::Graph& dst, const ir::Node& src, ValueMap& map) {
  std::vector<ir::NamedArgument> args = src.args();
  for (ir::NamedArgument& a : args) {
    for (ir::Value* v : a.value.values()) a.value.replace_value(v, mapped(map, v));
  }
  std::vector<ir::OutputSpec> specs;
  for (const ir::Value* out : src.outputs()) specs.push_back({out->name(), out->kind(), out->meta()});
  ir::Node* node = dst.create_node(src.target(), std::move(args), std::move(specs), nullptr, src.name());
  node->mutable_metadata() = src.metadata();
  node->set_subgraph(src.subgraph());
  for (size_t i = 0; i < src.outputs().size(); ++i) {
    node->outputs()[i]->set_sym_value(src.outputs()[i]->sym_value());
    map[src.outputs()[i]] = node->outputs()[i];
  }
  return node;
}

ir::Argument argument_for(ir::Value* value) {
  switch (value->kind()) {
    case ir::ValueKind::SymInt: return ir::Argument::sym_int(ir::SymIntArg{value, 0});
    case ir::ValueKind::SymFloat: return ir::Argument::sym_float(value);
    case ir::ValueKind::SymBool: return ir::Argument::sym_bool(value);
    default: return ir::Argument::tensor(value);
  }
}

void copy_symbols(ir::Graph& dst, const ir::Graph& src) {
  dst.symbol_ranges() = src.symbol_ranges();
  dst.symbol_hints() = src.symbol_hints();
}

}  // namespace kiln::partitioning
