// Argument checks, part 1: NodeView, and each argument's kind against the op schema's type.

#include "kiln/frontend/op_checks.h"

#include "frontend/op_checks_util.h"
#include "kiln/frontend/op_schema.h"
#include "kiln/ir/higher_order.h"

namespace kiln::frontend {
namespace checks {

void NodeView::fail(const std::string& arg, const std::string& what) const {
  throw Error(ErrorKind::InvalidInput,
              "argument '" + arg + "' of " + node_.target().to_string() + ": " + what,
              ErrorContext{"", node_.name(), node_.target().to_string(), ""});
}

const ir::Argument* NodeView::arg(const std::string& name) const {
  const ir::Argument* a = node_.find_arg(name);
  return a == nullptr || a->is_none() ? nullptr : a;
}

std::optional<std::vector<std::optional<int64_t>>> NodeView::maybe_ints(const std::string& name) const {
  const ir::Argument* a = arg(name);
  if (a == nullptr) return std::nullopt;
  using K = ir::Argument::Kind;
  std::vector<std::optional<int64_t>> out;
  switch (a->kind()) {
    case K::Int: out.push_back(a->as_int()); break;
    case K::Ints:
      for (int64_t x : a->as_ints()) out.push_back(x);
      break;
    case K::SymInt:
    case K::SymInts:
      for (const ir::SymIntArg& s : a->as_sym_ints()) {
        out.push_back(s.is_value() ? std::nullopt : std::optional<int64_t>(s.constant));
      }
      break;
    default: return std::nullopt;
  }
  return out;
}

std::optional<int64_t> NodeView::int_(const std::string& name) const {
  const ir::Argument* a = arg(name);
  if (a == nullptr) return std::nullopt;
  if (a->kind() == ir::Argument::Kind::Int) return a->as_int();
  if (a->kind() == ir::Argument::Kind::SymInt && !a->as_sym_int().is_value()) return a->as_sym_int().constant;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> NodeView::ints(const std::string& name) const {
  auto m = maybe_ints(name);
  if (!m) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& x : *m) {
    if (!x) return std::nullopt;
    out.push_back(*x);
  }
  return out;
}

const ir::TensorMeta* NodeView::tensor(const std::string& name) const {
  const ir::Argument* a = arg(name);
  if (a == nullptr || a->kind() != ir::Argument::Kind::Tensor) return nullptr;
  const ir::Value* v = a->as_tensor();
  return v != nullptr && v->is_tensor() ? &v->meta() : nullptr;
}

const ir::TensorMeta* NodeView::first_tensor() const {
  for (const ir::NamedArgument& na : node_.args()) {
    using K = ir::Argument::Kind;
    if (na.value.kind() != K::Tensor && na.value.kind() != K::Tensors && na.value.kind() != K::OptionalTensors) {
      continue;
    }
    for (const ir::Value* v : na.value.values()) {
      if (v != nullptr && v->is_tensor()) return &v->meta();
    }
    return nullptr;
  }
  return nullptr;
}

std::optional<int64_t> static_dim(const ir::TensorMeta& meta, int64_t d) {
  if (d < 0 || d >= meta.rank()) return std::nullopt;
  return meta.sizes[static_cast<size_t>(d)].as_int();
}

int64_t wrap_dim(const NodeView& v, const std::string& arg, int64_t dim, int64_t rank) {
  const int64_t r = rank > 0 ? rank : 1;
  if (dim < -r || dim >= r) {
    v.fail(arg, "dimension " + std::to_string(dim) + " is out of range for a tensor of rank " + std::to_string(rank) +
                    " (expected [" + std::to_string(-r) + ", " + std::to_string(r - 1) + "])");
  }
  return dim < 0 ? dim + r : dim;
}

}  // namespace checks

namespace {

using K = ir::Argument::Kind;

/// Whether an argument of kind `k` fits the schema type `type` ("float", "SymInt[2]", "Tensor?", ...); true for
/// types this check does not know.
bool kind_fits(K k, std::string type) {
  if (!type.empty() && type.back() == '?') {
    if (k == K::None) return true;
    type.pop_back();
  }
  const bool list = type.size() > 2 && type.back() == ']';
  std::string base = list ? type.substr(0, type.find('[')) : type;
  if (list) {
    if (base == "Tensor") return k == K::Tensors || k == K::OptionalTensors;
    if (base == "Tensor?") return k == K::OptionalTensors || k == K::Tensors;
    // A fixed-length int list may be given as one int (torch broadcasts it).
    if (base == "int" || base == "SymInt") return k == K::Ints || k == K::SymInts || k == K::Int || k == K::SymInt;
    if (base == "float") return k == K::Floats || k == K::Ints;
    if (base == "bool") return k == K::Bools;
    if (base == "str") return k == K::Strings;
    return true;
  }
  // A Python number where a tensor is expected is legal: export writes `add.Tensor(x, 1)`, torch wraps it.
  if (base == "Tensor") {
    return k == K::Tensor || k == K::Int || k == K::Float || k == K::Bool || k == K::SymInt || k == K::SymFloat ||
           k == K::SymBool;
  }
  if (base == "int" || base == "SymInt") return k == K::Int || k == K::SymInt;
  if (base == "float") return k == K::Float || k == K::Int || k == K::SymFloat || k == K::SymInt;
  if (base == "bool") return k == K::Bool || k == K::SymBool;
  if (base == "str") return k == K::String;
  if (base == "Scalar") {
    return k == K::Int || k == K::Float || k == K::Bool || k == K::SymInt || k == K::SymFloat || k == K::SymBool;
  }
  if (base == "ScalarType") return k == K::ScalarType;
  if (base == "Layout") return k == K::Layout;
  if (base == "MemoryFormat") return k == K::MemoryFormat;
  if (base == "Device") return k == K::Device;
  return true;
}

}  // namespace

void check_node_arguments(const ir::Node& node) {
  const checks::NodeView v(node);
  // Arguments the frontend could not represent keep their JSON as a string (kUnsupportedArgumentKey): their
  // kind says nothing, and such a node fails at run time with that reason.
  const bool unrepresented = node.metadata().count(ir::kUnsupportedArgumentKey) != 0;
  if (const OpSchema* schema = unrepresented ? nullptr : find_op_schema(node.target())) {
    if (!schema->returns_list() && node.outputs().size() > schema->num_returns()) {
      throw Error(ErrorKind::InvalidInput,
                  "the node declares " + std::to_string(node.outputs().size()) + " outputs but " +
                      node.target().to_string() + " returns " + std::to_string(schema->num_returns()),
                  ErrorContext{"", node.name(), node.target().to_string(), ""});
    }
    for (const ir::NamedArgument& na : node.args()) {
      const SchemaArgument* sa = schema->find_argument(na.name);
      if (sa == nullptr || kind_fits(na.value.kind(), sa->type)) continue;
      v.fail(na.name, std::string("is ") + ir::to_string(na.value.kind()) + " '" + na.value.to_string() +
                          "', the schema expects " + sa->type);
    }
  }
  checks::check_family(v);
}

}  // namespace kiln::frontend
