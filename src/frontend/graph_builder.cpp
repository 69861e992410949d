// ExportedProgram JSON -> ir::Graph: values (tensor_values, sym_*_values), the signature (user inputs and
// weights), nodes with their arguments, outputs and range constraints.
//
// Node outputs: "as_tensor" and each element of "as_tensors" (list returns) become one output Value each,
// in order; "as_sym_int"/"as_sym_float"/"as_sym_bool" become SymInt/SymFloat/SymBool Values; "as_none"
// keeps its slot as an unused Opaque Value (named "<node>_none<i>") so output indices match the schema.
//
// Higher-order ops (cond, while_loop, map_impl, wrap_with_set_grad_enabled, ...) take their subgraphs as
// "as_graph" arguments: each becomes an ir::Argument::graph holding a graph built the same way from the nested
// Graph (its own values, its inputs in order, its outputs); frontend/higher_order.h then inlines the wrappers.
// Argument kinds Kiln cannot represent (operators, custom objects, complex numbers, ...) do not fail the load:
// the argument keeps its JSON as a string and the node is marked (kUnsupportedArgumentKey) so that it runs in
// PyTorch, or fails at run time with that reason.

#include "frontend/graph_builder.h"

#include <limits>
#include <set>
#include <unordered_map>

#include "frontend/higher_order.h"
#include "kiln/ir/higher_order.h"
#include "kiln/ir/identifier.h"
#include "frontend/serde.h"
#include "kiln/frontend/op_checks.h"
#include "kiln/frontend/op_schema.h"

namespace kiln::frontend {

namespace {

// Range bounds at or above this are sympy's int_oo as torch writes it (null, or a huge integer).
constexpr int64_t kUnboundedThreshold = int64_t{1} << 62;
// Nested graphs deeper than this are refused (a cond inside a loop body inside a map is depth 3).
constexpr int kMaxNesting = 32;

class Builder {
 public:
  Builder(const JsonRef& root, WeightStore& weights, Program& program)
      : root_(root), weights_(weights), program_(program) {}

  void run() {
    program_.graph = std::make_unique<ir::Graph>();
    graph_ = program_.graph.get();
    if (auto v = root_.find("torch_version")) program_.torch_version = v->as_string();

    const JsonRef module = root_.at("graph_module");
    const JsonRef graph = module.at("graph");
    read_value_tables(graph);
    read_inputs(graph, module.at("signature"));
    for (const JsonRef& node : graph.at("nodes").elements()) read_node(node);
    read_outputs(graph, module.at("signature"));
    read_ranges();
    for (const auto& [symbol, hint] : hints_) graph_->symbol_hints()[symbol] = hint;
    inline_higher_order_wrappers(*graph_);
  }

  // A nested graph (an "as_graph" argument's "graph"): its own value tables, inputs, nodes and outputs, and the
  // hints of the shape symbols it names (ranges stay with the program's graph).
  std::shared_ptr<const ir::Graph> run_nested(const JsonRef& graph, int depth) {
    auto nested = std::make_shared<ir::Graph>();
    graph_ = nested.get();
    depth_ = depth;
    read_value_tables(graph);
    for (const JsonRef& input : graph.at("inputs").elements()) read_nested_input(input);
    for (const JsonRef& node : graph.at("nodes").elements()) read_node(node);
    std::vector<ir::Value*> outputs;
    for (const JsonRef& out : graph.at("outputs").elements()) outputs.push_back(nested_output(out));
    graph_->set_outputs(std::move(outputs));
    for (const auto& [symbol, hint] : hints_) graph_->symbol_hints()[symbol] = hint;
    inline_higher_order_wrappers(*graph_);
    return nested;
  }

 private:
  // --- Value tables --------------------------------------------------------------------------------------
  void read_value_tables(const JsonRef& graph) {
    for (const auto& [name, meta] : graph.at("tensor_values").members()) {
      tensor_meta_.insert_or_assign(name, decode_tensor_meta(meta, &hints_));
      declared_.insert(name);
    }
    if (auto sym_ints = graph.find("sym_int_values")) {
      for (const auto& [name, value] : sym_ints->members()) {
        sym_int_values_.insert_or_assign(name, decode_sym_int(value, &hints_));
        declared_.insert(name);
      }
    }
    for (const char* table : {"sym_bool_values", "sym_float_values"}) {
      if (auto values = graph.find(table)) {
        for (const auto& [name, value] : values->members()) {
          (void)value.union_member();
          declared_.insert(name);
        }
      }
    }
    if (auto objs = graph.find("custom_obj_values")) {
      if (objs->size() > 0) throw objs->unsupported("custom objects (torchbind) are not supported");
    }
  }

  const ir::TensorMeta& tensor_meta(const std::string& name, const JsonRef& where) const {
    auto it = tensor_meta_.find(name);
    if (it == tensor_meta_.end()) throw where.error("tensor '" + name + "' has no entry in graph.tensor_values");
    return it->second;
  }

  // --- Signature inputs ----------------------------------------------------------------------------------
  void read_inputs(const JsonRef& graph, const JsonRef& signature) {
    const std::vector<JsonRef> inputs = graph.at("inputs").elements();
    const std::vector<JsonRef> specs = signature.at("input_specs").elements();
    if (inputs.size() != specs.size()) {
      throw signature.error("has " + std::to_string(specs.size()) + " input specs for " +
                            std::to_string(inputs.size()) + " graph inputs");
    }
    for (size_t i = 0; i < specs.size(); ++i) {
      auto [kind, spec] = specs[i].union_member();
      std::string spec_name;  // the placeholder this spec describes, for tensors
      if (kind == "user_input") {
        spec_name = read_user_input(spec.at("arg"));
      } else if (kind == "parameter" || kind == "buffer" || kind == "tensor_constant") {
        const char* fqn_field = kind == "parameter" ? "parameter_name"
                                : kind == "buffer"  ? "buffer_name"
                                                    : "tensor_constant_name";
        ir::ConstantKind ck = kind == "parameter" ? ir::ConstantKind::Parameter
                              : kind == "buffer"  ? ir::ConstantKind::Buffer
                                                  : ir::ConstantKind::Tensor;
        const JsonRef arg_name = spec.at("arg").at("name");
        spec_name = arg_name.as_string();
        read_constant(spec_name, spec.at(fqn_field).as_string(), ck, arg_name);
      } else if (kind == "custom_obj" || kind == "token" || kind == "constant_input") {
        throw specs[i].unsupported("input kind '" + kind + "' is not supported");
      } else {
        throw specs[i].error("unknown input spec kind '" + kind + "'");
      }
      // The graph's placeholder list must agree with the signature.
      auto [in_kind, in_value] = inputs[i].union_member();
      if (in_kind == "as_tensor" && !spec_name.empty()) {
        const std::string& name = in_value.at("name").as_string();
        if (name != spec_name) {
          throw inputs[i].error("graph input '" + name + "' does not match input spec '" + spec_name + "'");
        }
      }
    }
  }

  // Adds a user input; returns its name for tensors (empty for symbolic inputs).
  std::string read_user_input(const JsonRef& arg) {
    auto [kind, value] = arg.union_member();
    if (kind == "as_tensor") {
      const std::string& name = value.at("name").as_string();
      add_input(name, ir::ValueKind::Tensor, tensor_meta(name, value), value);
      return name;
    } else if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
      auto [sk, sv] = value.union_member();
      if (sk != "as_name") throw value.unsupported("constant symbolic user inputs are not supported");
      const std::string& name = sv.as_string();
      ir::ValueKind vk = kind == "as_sym_int"     ? ir::ValueKind::SymInt
                         : kind == "as_sym_float" ? ir::ValueKind::SymFloat
                                                  : ir::ValueKind::SymBool;
      ir::Value* v = add_input(name, vk, {}, sv);
      if (vk == ir::ValueKind::SymInt) {
        auto it = sym_int_values_.find(name);
        if (it != sym_int_values_.end()) v->set_sym_value(it->second);
      }
      return "";
    }
    throw arg.unsupported("user input of kind '" + kind + "' (a constant input) is not supported");
  }

  ir::Value* add_input(const std::string& name, ir::ValueKind kind, ir::TensorMeta meta, const JsonRef& where) {
    if (graph_->find_value(name) != nullptr) throw where.error("value '" + name + "' is defined twice");
    return graph_->add_input(name, kind, std::move(meta));
  }

  void read_constant(const std::string& name, const std::string& fqn, ir::ConstantKind kind, const JsonRef& where) {
    if (graph_->find_value(name) != nullptr) throw where.error("value '" + name + "' is defined twice");
    const ir::TensorMeta& meta = tensor_meta(name, where);
    HostTensor data = weights_.load(fqn);
    if (data.dtype() != meta.dtype) {
      throw where.error(std::string("weight '") + fqn + "' is stored as " + dtype_name(data.dtype()) +
                        " but the graph says " + dtype_name(meta.dtype));
    }
    auto sizes = meta.static_sizes();
    if (sizes && *sizes != data.sizes()) {
      throw where.error("weight '" + fqn + "' is stored as " + data.describe() + " but the graph says " +
                        meta.to_string());
    }
    graph_->add_constant(name, fqn, kind, std::move(data), meta);
  }

  // --- Nested graphs -------------------------------------------------------------------------------------
  void read_nested_input(const JsonRef& input) {
    auto [kind, value] = input.union_member();
    if (kind == "as_tensor" || kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
      (void)read_user_input(input);
      return;
    }
    throw input.unsupported("nested graph input of kind '" + kind + "' is not supported");
  }

  ir::Value* nested_output(const JsonRef& out) {
    auto [kind, v] = out.union_member();
    if (kind == "as_tensor") return tensor_ref(v, "output");
    if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
      auto [sk, sv] = v.union_member();
      if (sk == "as_name") return lookup(sv.as_string(), sv, "output");
    }
    throw out.unsupported("nested graph output of kind '" + kind + "' is not supported");
  }

  ir::Argument nested_graph(const JsonRef& graph_argument, const std::string& node) const {
    // Bounds recursion so that a hostile archive nesting graphs without end fails with an error.
    if (depth_ >= kMaxNesting) {
      throw node_error(graph_argument, node, ErrorKind::InvalidInput,
                       "graphs nested deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    Builder child(root_, weights_, program_);
    std::shared_ptr<const ir::Graph> nested;
    try {
      nested = child.run_nested(graph_argument.at("graph"), depth_ + 1);
    } catch (const Error& e) {
      throw e.with_context(ErrorContext{label(), node, "", ""});
    }
    return ir::Argument::graph(std::move(nested));
  }

  // --- Nodes ---------------------------------------------------------------------------------------------
  ir::Value* lookup(const std::string& name, const JsonRef& where, const std::string& node) const {
    ir::Value* v = graph_->find_value(name);
    if (v == nullptr) {
      throw Error(ErrorKind::InvalidInput,
                  where.error("argument names value '" + name + "', which is not defined before node '" + node +
                              "'")
                      .message(),
                  ErrorContext{label(), node, "", name});
    }
    return v;
  }

  ir::Value* lookup_kind(const std::string& name, ir::ValueKind kind, const JsonRef& where,
                         const std::string& node) const {
    ir::Value* v = lookup(name, where, node);
    if (v->kind() != kind) {
      throw Error(ErrorKind::InvalidInput,
                  where.error(std::string("value '") + name + "' is a " + ir::to_string(v->kind()) + ", expected a " +
                              ir::to_string(kind))
                      .message(),
                  ErrorContext{label(), node, "", name});
    }
    return v;
  }

  ir::Value* tensor_ref(const JsonRef& tensor_argument, const std::string& node) const {
    const JsonRef name = tensor_argument.at("name");
    return lookup_kind(name.as_string(), ir::ValueKind::Tensor, name, node);
  }

  ir::SymIntArg sym_int_ref(const JsonRef& arg, const std::string& node) const {
    auto [kind, value] = arg.union_member();
    if (kind == "as_name") return ir::SymIntArg{lookup_kind(value.as_string(), ir::ValueKind::SymInt, value, node), 0};
    if (kind == "as_int") return ir::SymIntArg{nullptr, value.as_int()};
    throw arg.error("unknown SymInt argument kind '" + kind + "'");
  }

  ir::Argument convert_argument(const JsonRef& arg, const std::string& node) const {
    auto [kind, v] = arg.union_member();
    if (kind == "as_none") return ir::Argument::none();
    if (kind == "as_tensor") return ir::Argument::tensor(tensor_ref(v, node));
    if (kind == "as_tensors") {
      std::vector<ir::Value*> values;
      for (const JsonRef& t : v.elements()) values.push_back(tensor_ref(t, node));
      return ir::Argument::tensors(std::move(values));
    }
    if (kind == "as_optional_tensors") {
      std::vector<ir::Value*> values;
      for (const JsonRef& t : v.elements()) values.push_back(optional_tensor(t, node));
      return ir::Argument::optional_tensors(std::move(values));
    }
    if (kind == "as_optional_tensor") {
      ir::Value* t = optional_tensor(v, node);
      return t ? ir::Argument::tensor(t) : ir::Argument::none();
    }
    if (kind == "as_int") return ir::Argument::int_(v.as_int());
    if (kind == "as_ints") return ir::Argument::ints(v.as_ints());
    if (kind == "as_float") return ir::Argument::float_(v.as_double());
    if (kind == "as_floats") {
      std::vector<double> values;
      for (const JsonRef& f : v.elements()) values.push_back(f.as_double());
      return ir::Argument::floats(std::move(values));
    }
    if (kind == "as_bool") return ir::Argument::bool_(v.as_bool());
    if (kind == "as_bools") {
      std::vector<bool> values;
      for (const JsonRef& b : v.elements()) values.push_back(b.as_bool());
      return ir::Argument::bools(std::move(values));
    }
    if (kind == "as_string") return ir::Argument::string(v.as_string());
    if (kind == "as_strings") {
      std::vector<std::string> values;
      for (const JsonRef& s : v.elements()) values.push_back(s.as_string());
      return ir::Argument::strings(std::move(values));
    }
    if (kind == "as_sym_int") return ir::Argument::sym_int(sym_int_ref(v, node));
    if (kind == "as_sym_ints") {
      std::vector<ir::SymIntArg> values;
      for (const JsonRef& s : v.elements()) values.push_back(sym_int_ref(s, node));
      return ir::Argument::sym_ints(std::move(values));
    }
    if (kind == "as_sym_float" || kind == "as_sym_bool") {
      const bool is_float = kind == "as_sym_float";
      auto [sk, sv] = v.union_member();
      if (sk == "as_name") {
        ir::Value* value =
            lookup_kind(sv.as_string(), is_float ? ir::ValueKind::SymFloat : ir::ValueKind::SymBool, sv, node);
        return is_float ? ir::Argument::sym_float(value) : ir::Argument::sym_bool(value);
      }
      if (is_float && sk == "as_float") return ir::Argument::float_(sv.as_double());
      if (!is_float && sk == "as_bool") return ir::Argument::bool_(sv.as_bool());
      throw v.error("unknown " + kind + " kind '" + sk + "'");
    }
    if (kind == "as_sym_floats" || kind == "as_sym_bools") {
      // Kiln's IR has no lists of symbolic floats/bools: accept them when every entry is a constant.
      const bool is_float = kind == "as_sym_floats";
      std::vector<double> floats;
      std::vector<bool> bools;
      for (const JsonRef& e : v.elements()) {
        auto [ek, ev] = e.union_member();
        if (is_float && ek == "as_float") floats.push_back(ev.as_double());
        else if (!is_float && ek == "as_bool") bools.push_back(ev.as_bool());
        else if (ek == "as_name") throw node_error(e, node, ErrorKind::Unsupported, "lists of symbolic values are not supported");
        else throw e.error("unknown element kind '" + ek + "'");
      }
      return is_float ? ir::Argument::floats(std::move(floats)) : ir::Argument::bools(std::move(bools));
    }
    if (kind == "as_scalar_type") return ir::Argument::scalar_type(decode_dtype(v));
    if (kind == "as_layout") return ir::Argument::layout(decode_layout(v));
    if (kind == "as_memory_format") return ir::Argument::memory_format(decode_memory_format(v));
    if (kind == "as_device") return ir::Argument::device(decode_device(v));
    if (kind == "as_graph") return nested_graph(v, node);
    if (kind == "as_custom_obj" || kind == "as_operator" || kind == "as_complex" || kind == "as_int_lists" ||
        kind == "as_nested_tensors" || kind == "as_string_to_argument") {
      // Kinds of the schema Kiln has no argument for: kept as their JSON text; read_node marks the node.
      unsupported_kind_ = kind;
      return ir::Argument::string(v.raw().dump());
    }
    throw node_error(arg, node, ErrorKind::InvalidInput, "unknown argument kind '" + kind + "'");
  }

  ir::Value* optional_tensor(const JsonRef& arg, const std::string& node) const {
    auto [kind, value] = arg.union_member();
    if (kind == "as_none") return nullptr;
    if (kind == "as_tensor") return tensor_ref(value, node);
    throw arg.error("unknown optional tensor kind '" + kind + "'");
  }

  Error node_error(const JsonRef& where, const std::string& node, ErrorKind kind, const std::string& message) const {
    Error located = where.error(message);
    return Error(kind, located.message(), ErrorContext{label(), node, "", ""});
  }

  std::string none_output_name(const std::string& node, size_t index) {
    std::string name = node + "_none" + std::to_string(index);
    while (declared_.count(name) || graph_->find_value(name) != nullptr) name += "_";
    declared_.insert(name);
    return name;
  }

  void add_output(const JsonRef& out, const std::string& node, std::vector<ir::OutputSpec>& specs,
                  std::vector<std::optional<ir::SymExpr>>& sym_values) {
    auto [kind, v] = out.union_member();
    auto tensor_output = [&](const JsonRef& t) {
      const std::string& name = t.at("name").as_string();
      specs.push_back(ir::OutputSpec{name, ir::ValueKind::Tensor, tensor_meta(name, t)});
      sym_values.emplace_back();
    };
    auto opaque_output = [&]() {
      specs.push_back(ir::OutputSpec{none_output_name(node, specs.size()), ir::ValueKind::Opaque, {}});
      sym_values.emplace_back();
    };
    if (kind == "as_tensor") {
      tensor_output(v);
    } else if (kind == "as_tensors") {
      for (const JsonRef& t : v.elements()) tensor_output(t);
    } else if (kind == "as_optional_tensors") {
      for (const JsonRef& t : v.elements()) {
        auto [tk, tv] = t.union_member();
        if (tk == "as_tensor") tensor_output(tv);
        else if (tk == "as_none") opaque_output();
        else throw t.error("unknown optional tensor kind '" + tk + "'");
      }
    } else if (kind == "as_none") {
      opaque_output();
    } else if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
      auto [sk, sv] = v.union_member();
      if (sk != "as_name") throw node_error(out, node, ErrorKind::Unsupported, "constant node outputs are not supported");
      const std::string& name = sv.as_string();
      ir::ValueKind vk = kind == "as_sym_int"     ? ir::ValueKind::SymInt
                         : kind == "as_sym_float" ? ir::ValueKind::SymFloat
                                                  : ir::ValueKind::SymBool;
      specs.push_back(ir::OutputSpec{name, vk, {}});
      std::optional<ir::SymExpr> expr;
      if (vk == ir::ValueKind::SymInt) {
        auto it = sym_int_values_.find(name);
        if (it != sym_int_values_.end()) expr = it->second;
      }
      sym_values.push_back(std::move(expr));
    } else {
      throw node_error(out, node, ErrorKind::Unsupported, "node output kind '" + kind + "' is not supported");
    }
  }

  void read_node(const JsonRef& node_json) {
    const JsonRef target_json = node_json.at("target");
    std::string node_name;
    if (auto n = node_json.find("name")) node_name = n->as_string();

    ir::OpName target;
    try {
      target = ir::OpName::parse(target_json.as_string());
    } catch (const Error& e) {
      throw target_json.wrap(e);
    }

    // Outputs are read first only for the node's name (older archives have none); their values are created
    // with the node, after the arguments are resolved, so a node cannot read its own outputs.
    const std::vector<JsonRef> outputs_json = node_json.at("outputs").elements();
    if (node_name.empty()) {
      node_name = graph_->unique_name(target.name);
    }

    std::vector<ir::NamedArgument> args;
    std::string unsupported;  // why Kiln cannot read some argument, if it cannot
    for (const JsonRef& input : node_json.at("inputs").elements()) {
      ir::NamedArgument named;
      const JsonRef name_json = input.at("name");
      named.name = name_json.as_string();
      if (!named.name.empty() && !ir::is_identifier(named.name)) {
        throw name_json.error("argument name '" + named.name + "' is not an identifier (letters, digits, '_')");
      }
      // Higher-order ops have no schema: torch writes their arguments unnamed. Kiln names them by position
      // (arg0, arg1, ...) so that the IR text can print them.
      if (named.name.empty()) named.name = "arg" + std::to_string(args.size());
      unsupported_kind_.clear();
      named.value = convert_argument(input.at("arg"), node_name);
      if (!unsupported_kind_.empty()) {
        std::string reason =
            "argument '" + named.name + "' of kind '" + unsupported_kind_ + "' is not supported by Kiln";
        unsupported += (unsupported.empty() ? "" : "; ") + reason;
      }
      if (auto kind = input.find("kind")) {
        // schema.py ArgumentKind: 0 unknown, 1 positional, 2 keyword.
        int64_t k = kind->as_int();
        if (k < 0 || k > 2) throw kind->error("unknown argument kind code " + std::to_string(k));
        named.kwarg_only = k == 2;
      }
      args.push_back(std::move(named));
    }

    std::vector<ir::OutputSpec> specs;
    std::vector<std::optional<ir::SymExpr>> sym_values;
    for (const JsonRef& out : outputs_json) add_output(out, node_name, specs, sym_values);
    for (const auto& spec : specs) {
      if (graph_->find_value(spec.name) != nullptr) {
        throw node_error(node_json, node_name, ErrorKind::InvalidInput,
                         "output value '" + spec.name + "' is defined twice");
      }
    }
    if (graph_->find_node(node_name) != nullptr) {
      throw node_error(node_json, node_name, ErrorKind::InvalidInput, "node name '" + node_name + "' is used twice");
    }

    ir::Node* node = graph_->create_node(target, std::move(args), std::move(specs), nullptr, node_name);
    for (size_t i = 0; i < sym_values.size(); ++i) {
      if (sym_values[i]) node->output(i)->set_sym_value(sym_values[i]);
    }
    if (auto metadata = node_json.find("metadata")) {
      for (const auto& [key, value] : metadata->members()) {
        node->mutable_metadata()[key] = value.is_string() ? value.as_string() : value.raw().dump();
      }
    }
    if (!unsupported.empty()) node->mutable_metadata()[ir::kUnsupportedArgumentKey] = unsupported;
    try {
      fill_default_arguments(*node);
    } catch (const Error& e) {
      throw e.with_context(ErrorContext{label(), node_name, target.to_string(), ""});
    }
  }

  // --- Outputs and ranges --------------------------------------------------------------------------------
  void read_outputs(const JsonRef& graph, const JsonRef& signature) {
    const std::vector<JsonRef> outputs = graph.at("outputs").elements();
    const std::vector<JsonRef> specs = signature.at("output_specs").elements();
    if (outputs.size() != specs.size()) {
      throw signature.error("has " + std::to_string(specs.size()) + " output specs for " +
                            std::to_string(outputs.size()) + " graph outputs");
    }
    std::vector<ir::Value*> values;
    for (size_t i = 0; i < outputs.size(); ++i) {
      auto [kind, v] = outputs[i].union_member();
      if (kind == "as_tensor") {
        values.push_back(tensor_ref(v, "output"));
      } else if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
        auto [sk, sv] = v.union_member();
        if (sk != "as_name") throw outputs[i].unsupported("constant graph outputs are not supported");
        values.push_back(lookup(sv.as_string(), sv, "output"));
      } else {
        throw outputs[i].unsupported("graph output of kind '" + kind + "' is not supported");
      }
      auto [spec_kind, spec] = specs[i].union_member();
      check_output_spec(spec_kind, spec, values.back());
      static const std::unordered_map<std::string, OutputKind> kKinds = {
          {"user_output", OutputKind::UserOutput},
          {"loss_output", OutputKind::LossOutput},
          {"buffer_mutation", OutputKind::BufferMutation},
          {"gradient_to_parameter", OutputKind::GradientToParameter},
          {"gradient_to_user_input", OutputKind::GradientToUserInput},
          {"user_input_mutation", OutputKind::UserInputMutation},
          {"token", OutputKind::Token},
          {"parameter_mutation", OutputKind::ParameterMutation}};
      auto it = kKinds.find(spec_kind);
      if (it == kKinds.end()) throw specs[i].error("unknown output spec kind '" + spec_kind + "'");
      program_.output_kinds.push_back(it->second);
    }
    graph_->set_outputs(std::move(values));
  }

  // The output spec must name the graph output it describes.
  void check_output_spec(const std::string& kind, const JsonRef& spec, const ir::Value* output) const {
    const JsonRef arg = spec.at("arg");
    std::string name;
    if (kind == "user_output") {
      auto [ak, av] = arg.union_member();
      if (ak == "as_tensor") name = av.at("name").as_string();
      else if (ak == "as_sym_int" || ak == "as_sym_float" || ak == "as_sym_bool") name = av.union_member().second.as_string();
      else throw arg.unsupported("user output of kind '" + ak + "' is not supported");
    } else {
      name = arg.at("name").as_string();
    }
    if (name != output->name()) {
      throw arg.error("output spec names '" + name + "' but the graph output is '" + output->name() + "'");
    }
  }

  static int64_t range_bound(const std::optional<JsonRef>& bound, int64_t if_null) {
    if (!bound) return if_null;
    const nlohmann::json& raw = bound->raw();
    if (raw.is_number_unsigned() && raw.get<uint64_t>() > static_cast<uint64_t>(kUnboundedThreshold)) {
      return ir::SymRange::kUnbounded;
    }
    if (raw.is_number_integer()) {
      int64_t v = bound->as_int();
      if (v >= kUnboundedThreshold) return ir::SymRange::kUnbounded;
      if (v <= -kUnboundedThreshold) return if_null;
      return v;
    }
    double d = bound->as_double();  // "Infinity" or a float
    if (d != d) throw bound->error("NaN range bound");
    if (d >= static_cast<double>(kUnboundedThreshold)) return ir::SymRange::kUnbounded;
    if (d <= -static_cast<double>(kUnboundedThreshold)) return if_null;
    return static_cast<int64_t>(d);
  }

  void read_ranges() {
    auto ranges = root_.find("range_constraints");
    if (!ranges) return;
    for (const auto& [symbol, range] : ranges->members()) {
      ir::SymRange r;
      r.min = range_bound(range.find("min_val"), 0);
      r.max = range_bound(range.find("max_val"), ir::SymRange::kUnbounded);
      if (r.max == ir::SymRange::kUnbounded && r.min == ir::SymRange::kUnbounded) r.min = 0;
      if (r.min > r.max) throw range.error("empty range [" + std::to_string(r.min) + ", " + std::to_string(r.max) + "]");
      if (!ir::is_identifier(symbol)) throw range.error("symbol name '" + symbol + "' is not an identifier");
      graph_->symbol_ranges()[symbol] = r;
    }
  }

  const std::string& label() const { return program_.source_path; }

  const JsonRef& root_;
  WeightStore& weights_;
  Program& program_;
  ir::Graph* graph_ = nullptr;
  std::unordered_map<std::string, ir::TensorMeta> tensor_meta_;
  std::unordered_map<std::string, ir::SymExpr> sym_int_values_;
  std::set<std::string> declared_;
  SymbolHints hints_;
  int depth_ = 0;                 // nesting level of the graph being built (0: the program's graph)
  mutable std::string unsupported_kind_;  // set by convert_argument for an argument kind Kiln cannot represent
};

}  // namespace

void build_program(const JsonRef& root, WeightStore& weights, Program& program) {
  Builder(root, weights, program).run();
}

}  // namespace kiln::frontend
