#include "kiln/conversion/converter_args.h"

#include "kiln/conversion/conversion_context.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/shape.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
const std::string& node_name(const ir::Node& n) { return n.name(); }
}  // namespace

engine::Tensor* ConverterArgs::lookup(const ir::Value* value) const {
  auto it = tensors_->find(value);
  return it == tensors_->end() ? nullptr : it->second;
}

ArgValue ConverterArgs::resolve(const ir::Value* value) const {
  ArgValue out;
  if (value == nullptr) return out;
  out.value = value;
  if (engine::Tensor* t = lookup(value)) {
    out.state = ArgValue::State::Tensor;
    out.tensor = t;
    return out;
  }
  if (value->role() == ir::ValueRole::Constant) {
    KILN_CHECK(value->data().defined(), InvalidInput, "node '", node_name(*node_), "': constant '", value->name(),
               "' has no data");
    out.state = ArgValue::State::Weight;
    out.weight = value->data();
    out.weight_name = value->fqn().empty() ? value->name() : value->fqn();
    return out;
  }
  KILN_FAIL(Internal, "node '", node_name(*node_), "': value '", value->name(), "' was not converted before its use");
}

ArgValue ConverterArgs::get(const std::string& name) const {
  const ir::Argument* a = node_->find_arg(name);
  ArgValue out;
  if (a == nullptr || a->is_none()) return out;
  if (a->kind() == ir::Argument::Kind::Tensor) return resolve(a->as_tensor());
  out.state = ArgValue::State::Scalar;
  out.scalar = a;
  return out;
}

std::vector<ArgValue> ConverterArgs::list(const std::string& name) const {
  const ir::Argument* a = node_->find_arg(name);
  KILN_CHECK(a != nullptr, InvalidInput, "node '", node_name(*node_), "' has no argument '", name, "'");
  std::vector<ArgValue> out;
  for (ir::Value* v : a->as_tensors()) out.push_back(resolve(v));
  return out;
}

engine::Tensor* ConverterArgs::materialize(ConversionContext& ctx, const ArgValue& arg, const std::string& what) {
  switch (arg.state) {
    case ArgValue::State::Tensor: return arg.tensor;
    case ArgValue::State::Weight: return impl::constant(ctx, arg.weight, arg.weight_name);
    case ArgValue::State::Scalar: {
      const ir::Argument& s = *arg.scalar;
      switch (s.kind()) {
        case ir::Argument::Kind::Int: return impl::scalar(ctx, static_cast<double>(s.as_int()), DType::Int64);
        case ir::Argument::Kind::Float: return impl::scalar(ctx, s.as_float(), DType::Float32);
        case ir::Argument::Kind::Bool: return impl::scalar(ctx, s.as_bool() ? 1 : 0, DType::Bool);
        default: KILN_FAIL(Unsupported, what, ": a ", ir::to_string(s.kind()), " argument cannot become a tensor");
      }
    }
    case ArgValue::State::None: break;
  }
  KILN_FAIL(InvalidInput, what, " is None where a tensor is needed");
}

engine::Tensor* ConverterArgs::tensor(ConversionContext& ctx, const std::string& name) const {
  return materialize(ctx, get(name), "node '" + node_->name() + "' argument '" + name + "'");
}

int64_t ConverterArgs::int_(const std::string& name, std::optional<int64_t> fallback) const {
  const ir::Argument* a = node_->find_arg(name);
  if (a == nullptr || a->is_none()) {
    KILN_CHECK(fallback.has_value(), InvalidInput, "node '", node_->name(), "' lacks int argument '", name, "'");
    return *fallback;
  }
  if (a->kind() == ir::Argument::Kind::SymInt && a->as_sym_int().is_value()) {
    const auto& sv = a->as_sym_int().value->sym_value();
    KILN_CHECK(sv && sv->is_constant(), Unsupported, "node '", node_->name(), "': argument '", name,
               "' is only known at run time");
    return *sv->as_int();
  }
  return a->as_int();
}

double ConverterArgs::float_(const std::string& name, std::optional<double> fallback) const {
  const ir::Argument* a = node_->find_arg(name);
  if (a == nullptr || a->is_none()) {
    KILN_CHECK(fallback.has_value(), InvalidInput, "node '", node_->name(), "' lacks float argument '", name, "'");
    return *fallback;
  }
  if (a->kind() == ir::Argument::Kind::Bool) return a->as_bool() ? 1.0 : 0.0;
  return a->as_float();
}

bool ConverterArgs::bool_(const std::string& name, std::optional<bool> fallback) const {
  const ir::Argument* a = node_->find_arg(name);
  if (a == nullptr || a->is_none()) {
    KILN_CHECK(fallback.has_value(), InvalidInput, "node '", node_->name(), "' lacks bool argument '", name, "'");
    return *fallback;
  }
  return a->as_bool();
}

std::vector<int64_t> ConverterArgs::ints(const std::string& name, std::optional<std::vector<int64_t>> fallback) const {
  const ir::Argument* a = node_->find_arg(name);
  if (a == nullptr || a->is_none()) {
    KILN_CHECK(fallback.has_value(), InvalidInput, "node '", node_->name(), "' lacks int list argument '", name, "'");
    return *fallback;
  }
  if (a->kind() == ir::Argument::Kind::Int) return {a->as_int()};
  if (a->kind() == ir::Argument::Kind::SymInts) {
    std::vector<int64_t> out;
    for (const ir::SymIntArg& s : a->as_sym_ints()) {
      if (!s.is_value()) {
        out.push_back(s.constant);
        continue;
      }
      const auto& sv = s.value->sym_value();
      KILN_CHECK(sv && sv->is_constant(), Unsupported, "node '", node_->name(), "': argument '", name,
                 "' is only known at run time");
      out.push_back(*sv->as_int());
    }
    return out;
  }
  return a->as_ints();
}

std::string ConverterArgs::string(const std::string& name, std::optional<std::string> fallback) const {
  const ir::Argument* a = node_->find_arg(name);
  if (a == nullptr || a->is_none()) {
    KILN_CHECK(fallback.has_value(), InvalidInput, "node '", node_->name(), "' lacks string argument '", name, "'");
    return *fallback;
  }
  return a->as_string();
}

std::optional<DType> ConverterArgs::dtype(const std::string& name) const {
  const ir::Argument* a = node_->find_arg(name);
  if (a == nullptr || a->is_none()) return std::nullopt;
  return a->as_scalar_type();
}

SymIntValue ConverterArgs::resolve_sym(ConversionContext& ctx, const ir::SymIntArg& arg) const {
  SymIntValue out;
  if (!arg.is_value()) {
    out.value = arg.constant;
    return out;
  }
  const auto& sv = arg.value->sym_value();
  if (sv && sv->is_constant()) {
    out.value = *sv->as_int();
    return out;
  }
  if (engine::Tensor* t = lookup(arg.value)) {
    out.tensor = t;
    return out;
  }
  KILN_CHECK(sv.has_value(), Unsupported, "node '", node_->name(), "': SymInt '", arg.value->name(),
             "' has no known expression");
  out.tensor = impl::sym_expr_tensor(ctx, *sv);
  return out;
}

SymIntValue ConverterArgs::sym_int(ConversionContext& ctx, const std::string& name) const {
  const ir::Argument* a = node_->find_arg(name);
  KILN_CHECK(a != nullptr && !a->is_none(), InvalidInput, "node '", node_->name(), "' lacks argument '", name, "'");
  if (a->kind() == ir::Argument::Kind::Tensor) {
    // A 0-d integer tensor used as a size (rare): read at run time.
    SymIntValue v;
    v.tensor = impl::cast(ctx, tensor(ctx, name), DType::Int64);
    return v;
  }
  return resolve_sym(ctx, a->as_sym_int());
}

std::vector<SymIntValue> ConverterArgs::sym_ints(ConversionContext& ctx, const std::string& name) const {
  const ir::Argument* a = node_->find_arg(name);
  KILN_CHECK(a != nullptr && !a->is_none(), InvalidInput, "node '", node_->name(), "' lacks argument '", name, "'");
  std::vector<SymIntValue> out;
  if (a->kind() == ir::Argument::Kind::Int) {
    out.push_back(SymIntValue{a->as_int(), nullptr});
    return out;
  }
  for (const ir::SymIntArg& s : a->as_sym_ints()) out.push_back(resolve_sym(ctx, s));
  return out;
}

}  // namespace kiln::conversion
