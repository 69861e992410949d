#include <ATen/ATen.h>

#include "kiln/support/error.h"
#include "runtime/builtin_ops.h"

namespace kiln::runtime {

bool NodeArgs::has(const std::string& name) const {
  const ir::Argument* arg = node_.find_arg(name);
  return arg != nullptr && !arg->is_none();
}

c10::IValue NodeArgs::value(size_t index) const {
  KILN_CHECK(index < node_.args().size(), InvalidInput, "node '", node_.name(), "' has ", node_.args().size(),
             " arguments, argument ", index, " is required");
  return argument_to_ivalue(node_.args()[index].value, state_);
}

c10::IValue NodeArgs::value(const std::string& name) const {
  const ir::Argument* arg = node_.find_arg(name);
  if (arg == nullptr) return c10::IValue();
  return argument_to_ivalue(*arg, state_);
}

const ir::Argument& NodeArgs::required(const std::string& name) const {
  const ir::Argument* arg = node_.find_arg(name);
  KILN_CHECK(arg != nullptr && !arg->is_none(), InvalidInput, "node '", node_.name(), "' (",
             node_.target().to_string(), ") lacks required argument '", name, "'");
  return *arg;
}

at::Tensor NodeArgs::tensor(const std::string& name) const {
  c10::IValue v = argument_to_ivalue(required(name), state_);
  KILN_CHECK(v.isTensor(), InvalidInput, "argument '", name, "' of node '", node_.name(), "' is a ", v.tagKind(),
             ", expected a tensor");
  return v.toTensor();
}

c10::optional<at::Tensor> NodeArgs::optional_tensor(const std::string& name) const {
  if (!has(name)) return c10::nullopt;
  return tensor(name);
}

int64_t NodeArgs::int_(const std::string& name) const {
  c10::IValue v = coerce_to_schema_type(argument_to_ivalue(required(name), state_), c10::IntType::get(), name,
                                        c10::nullopt);
  KILN_CHECK(v.isInt(), InvalidInput, "argument '", name, "' of node '", node_.name(), "' is a ", v.tagKind(),
             ", expected an int");
  return v.toInt();
}

int64_t NodeArgs::int_or(const std::string& name, int64_t fallback) const {
  return has(name) ? int_(name) : fallback;
}

double NodeArgs::float_or(const std::string& name, double fallback) const {
  return optional_float(name).value_or(fallback);
}

c10::optional<double> NodeArgs::optional_float(const std::string& name) const {
  if (!has(name)) return c10::nullopt;
  c10::IValue v = coerce_to_schema_type(argument_to_ivalue(required(name), state_), c10::FloatType::get(), name,
                                        c10::nullopt);
  KILN_CHECK(v.isDouble(), InvalidInput, "argument '", name, "' of node '", node_.name(), "' is a ", v.tagKind(),
             ", expected a float");
  return v.toDouble();
}

bool NodeArgs::bool_or(const std::string& name, bool fallback) const {
  if (!has(name)) return fallback;
  c10::IValue v = coerce_to_schema_type(argument_to_ivalue(required(name), state_), c10::BoolType::get(), name,
                                        c10::nullopt);
  KILN_CHECK(v.isBool(), InvalidInput, "argument '", name, "' of node '", node_.name(), "' is a ", v.tagKind(),
             ", expected a bool");
  return v.toBool();
}

std::vector<int64_t> NodeArgs::ints(const std::string& name) const {
  c10::IValue v = coerce_to_schema_type(argument_to_ivalue(required(name), state_),
                                        c10::ListType::ofInts(), name, c10::nullopt);
  KILN_CHECK(v.isIntList(), InvalidInput, "argument '", name, "' of node '", node_.name(), "' is a ", v.tagKind(),
             ", expected a list of ints");
  return v.toIntVector();
}

c10::optional<std::vector<int64_t>> NodeArgs::optional_ints(const std::string& name) const {
  if (!has(name)) return c10::nullopt;
  return ints(name);
}

std::string NodeArgs::string_or(const std::string& name, const std::string& fallback) const {
  if (!has(name)) return fallback;
  c10::IValue v = argument_to_ivalue(required(name), state_);
  KILN_CHECK(v.isString(), InvalidInput, "argument '", name, "' of node '", node_.name(), "' is a ", v.tagKind(),
             ", expected a string");
  return v.toStringRef();
}

}  // namespace kiln::runtime
