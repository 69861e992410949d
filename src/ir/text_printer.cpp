// The IR text printer (the format is described in include/kiln/ir/text.h).

#include <cstring>

#include "kiln/ir/text.h"
#include "kiln/support/error.h"
#include "text_format.h"

namespace kiln::ir {

namespace textfmt {

std::string value_type(const Value& v) {
  switch (v.kind()) {
    case ValueKind::Tensor: return v.meta().to_string();
    case ValueKind::SymInt: return v.sym_value() ? "sym_int(" + v.sym_value()->to_string() + ")" : "sym_int";
    case ValueKind::SymFloat: return "sym_float";
    case ValueKind::SymBool: return "sym_bool";
    case ValueKind::Opaque: return "opaque";
  }
  return "opaque";
}

const char* constant_kind_keyword(ConstantKind k) {
  switch (k) {
    case ConstantKind::Parameter: return "parameter";
    case ConstantKind::Buffer: return "buffer";
    case ConstantKind::Tensor: return "constant";
  }
  return "constant";
}

}  // namespace textfmt

namespace {

std::string format_data(const HostTensor& t) {
  std::string s = "[";
  int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    const uint8_t* p = t.data() + static_cast<size_t>(i) * dtype_size(t.dtype());
    switch (t.dtype()) {
      case DType::Float64: {
        double v;
        std::memcpy(&v, p, 8);
        s += textfmt::format_float(v);
        break;
      }
      case DType::Float32:
      case DType::Float16:
      case DType::BFloat16: s += textfmt::format_float32(static_cast<float>(t.get_as_double(i))); break;
      case DType::Int64: {
        int64_t v;
        std::memcpy(&v, p, 8);
        s += std::to_string(v);
        break;
      }
      case DType::Bool: s += *p ? "True" : "False"; break;
      default: s += std::to_string(static_cast<int64_t>(t.get_as_double(i))); break;
    }
  }
  return s + "]";
}

std::string metadata_comment(const Node& node) {
  std::string s;
  for (const auto& [k, v] : node.metadata()) {
    if (k == "stack_trace") continue;  // multi-line Python traces would drown the graph
    s += s.empty() ? "  # " : "; ";
    s += k + "=" + textfmt::quote(v);
  }
  return s;
}

void print_graph_into(const Graph& g, const PrintOptions& opt, const std::string& indent, std::string& out);

void print_node(const Node& node, const PrintOptions& opt, const std::string& indent, std::string& out) {
  out += indent;
  bool default_name = !node.outputs().empty() && node.outputs()[0]->name() == node.name();
  if (!default_name)
    out += "node " + (textfmt::is_plain_name(node.name()) ? node.name() : textfmt::quote(node.name())) + ": ";
  for (size_t i = 0; i < node.outputs().size(); ++i) {
    if (i) out += ", ";
    const Value* v = node.outputs()[i];
    out += textfmt::value_ref(v->name()) + ": " + textfmt::value_type(*v);
  }
  out += node.outputs().empty() ? "= " : " = ";
  out += node.target().to_string() + "(";
  bool kwarg_section = false;
  for (size_t i = 0; i < node.args().size(); ++i) {
    const auto& a = node.args()[i];
    if (i) out += ", ";
    if (a.kwarg_only && !kwarg_section) {
      out += "*, ";
      kwarg_section = true;
    }
    out += a.name + "=";
    if (a.value.kind() == Argument::Kind::Graph) {
      // Nested graphs print at the node's indentation; the node's line goes on after their '}'.
      print_graph_into(*a.value.as_graph(), opt, indent, out);
      out.pop_back();
    } else {
      out += a.value.to_string();
    }
  }
  out += ")";
  if (node.subgraph()) {
    out += " ";
    print_graph_into(*node.subgraph(), opt, indent, out);
    // The nested graph ends the node's text (with its newline); metadata is not printed for such nodes.
    return;
  }
  if (opt.metadata) out += metadata_comment(node);
  out += "\n";
}

void print_graph_into(const Graph& g, const PrintOptions& opt, const std::string& indent, std::string& out) {
  std::string inner = indent + "  ";
  out += "graph(";
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    if (i) out += ", ";
    out += textfmt::value_ref(g.inputs()[i]->name()) + ": " + textfmt::value_type(*g.inputs()[i]);
  }
  out += ") {\n";
  std::map<std::string, std::pair<std::optional<SymRange>, std::optional<int64_t>>> symbols;
  for (const auto& [name, r] : g.symbol_ranges()) symbols[name].first = r;
  for (const auto& [name, h] : g.symbol_hints()) symbols[name].second = h;
  for (const auto& [name, info] : symbols) {
    out += inner + "symbol " + name;
    if (info.first) {
      const SymRange& r = *info.first;
      out += " in [" + (r.min <= SymRange::kNegUnbounded ? std::string("-inf") : std::to_string(r.min)) +
             ", " + (r.max >= SymRange::kUnbounded ? std::string("inf") : std::to_string(r.max)) + "]";
    }
    if (info.second) out += " hint " + std::to_string(*info.second);
    out += "\n";
  }
  for (const Value* c : g.constants()) {
    out += inner + textfmt::value_ref(c->name()) + ": " + textfmt::value_type(*c) + " = " +
           textfmt::constant_kind_keyword(c->constant_kind()) + "(" + textfmt::quote(c->fqn());
    if (opt.constant_values && c->data().defined() && c->data().numel() <= opt.max_constant_elements) {
      out += ", data=" + format_data(c->data());
    }
    out += ")\n";
  }
  for (const Node* n : g.nodes()) print_node(*n, opt, inner, out);
  out += inner + "return (";
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    if (i) out += ", ";
    out += g.outputs()[i] ? textfmt::value_ref(g.outputs()[i]->name()) : "None";
  }
  out += ")\n" + indent + "}\n";
}

}  // namespace

std::string print_graph(const Graph& graph, const PrintOptions& options) {
  std::string out;
  print_graph_into(graph, options, "", out);
  return out;
}

}  // namespace kiln::ir
