#include "runtime/run_state.h"

#include <cmath>

#include <ATen/ATen.h>

#include "kiln/support/error.h"
#include "runtime/torch_convert.h"

namespace kiln::runtime {

size_t RunState::slot(const ir::Value* value) const {
  KILN_CHECK(value != nullptr, Internal, "null value referenced during execution");
  auto it = slot_of_->find(value);
  KILN_CHECK(it != slot_of_->end(), Internal, "value '", value->name(), "' does not belong to the executed graph");
  return it->second;
}

c10::IValue RunState::get(const ir::Value* value) const {
  const c10::IValue& stored = values_[slot(value)];
  if (!stored.isNone()) return stored;
  if (value->kind() == ir::ValueKind::SymInt && value->sym_value().has_value()) {
    try {
      return c10::IValue(value->sym_value()->evaluate(bindings_));
    } catch (const Error& e) {
      throw e.with_context(ErrorContext{.tensor = value->name()});
    }
  }
  KILN_FAIL(Internal, "value '", value->name(), "' is read before it is computed");
}

void RunState::set(const ir::Value* value, c10::IValue v) { values_[slot(value)] = std::move(v); }

namespace {

int64_t sym_int_value(const ir::SymIntArg& s, const RunState& state) {
  if (!s.is_value()) return s.constant;
  c10::IValue v = state.get(s.value);
  if (v.isInt()) return v.toInt();
  if (v.isBool()) return v.toBool() ? 1 : 0;
  if (v.isTensor() && v.toTensor().numel() == 1) return v.toTensor().item<int64_t>();
  KILN_FAIL(InvalidInput, "SymInt value '", s.value->name(), "' holds a ", v.tagKind(), ", not an int");
}

c10::List<int64_t> int_list(const std::vector<int64_t>& values) {
  c10::List<int64_t> list;
  list.reserve(values.size());
  for (int64_t v : values) list.push_back(v);
  return list;
}

}  // namespace

c10::IValue argument_to_ivalue(const ir::Argument& arg, const RunState& state) {
  using Kind = ir::Argument::Kind;
  switch (arg.kind()) {
    case Kind::None: return c10::IValue();
    case Kind::Tensor: return state.get(arg.as_tensor());
    case Kind::Tensors: {
      c10::List<at::Tensor> list;
      for (const ir::Value* v : arg.as_tensors()) list.push_back(state.get(v).toTensor());
      return c10::IValue(list);
    }
    case Kind::OptionalTensors: {
      c10::List<c10::optional<at::Tensor>> list;
      for (const ir::Value* v : arg.as_tensors()) {
        if (v == nullptr) {
          list.push_back(c10::nullopt);
        } else {
          list.push_back(state.get(v).toTensor());
        }
      }
      return c10::IValue(list);
    }
    case Kind::Int: return c10::IValue(arg.as_int());
    case Kind::Ints: return c10::IValue(int_list(arg.as_ints()));
    case Kind::Float: return c10::IValue(arg.as_float());
    case Kind::Floats: {
      c10::List<double> list;
      for (double v : arg.as_floats()) list.push_back(v);
      return c10::IValue(list);
    }
    case Kind::Bool: return c10::IValue(arg.as_bool());
    case Kind::Bools: {
      c10::List<bool> list;
      for (bool v : arg.as_bools()) list.push_back(v);
      return c10::IValue(list);
    }
    case Kind::String: return c10::IValue(arg.as_string());
    case Kind::Strings: {
      c10::List<std::string> list;
      for (const std::string& v : arg.as_strings()) list.push_back(v);
      return c10::IValue(list);
    }
    case Kind::SymInt: return c10::IValue(sym_int_value(arg.as_sym_int(), state));
    case Kind::SymInts: {
      c10::List<int64_t> list;
      for (const ir::SymIntArg& s : arg.as_sym_ints()) list.push_back(sym_int_value(s, state));
      return c10::IValue(list);
    }
    case Kind::SymFloat:
    case Kind::SymBool: return state.get(arg.as_sym_value());
    case Kind::ScalarType: return c10::IValue(static_cast<int64_t>(to_scalar_type(arg.as_scalar_type())));
    case Kind::Layout: return c10::IValue(static_cast<int64_t>(to_torch_layout(arg.as_layout())));
    case Kind::MemoryFormat:
      return c10::IValue(static_cast<int64_t>(to_torch_memory_format(arg.as_memory_format())));
    case Kind::Device:
      return c10::IValue(state.device_override() ? *state.device_override() : to_torch_device(arg.as_device()));
    case Kind::Graph: KILN_FAIL(Unsupported, "a nested graph is not a runtime value (only higher-order ops take one)");
  }
  KILN_FAIL(Internal, "unknown argument kind ", static_cast<int>(arg.kind()));
}

bool is_number(const c10::IValue& v) { return v.isInt() || v.isDouble() || v.isBool(); }

namespace {

bool integral_double(double d) { return std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e18; }

c10::IValue coerce_scalar(c10::IValue value, c10::TypeKind kind, const std::string& name) {
  switch (kind) {
    case c10::TypeKind::FloatType:
      if (value.isInt()) return c10::IValue(static_cast<double>(value.toInt()));
      if (value.isBool()) return c10::IValue(value.toBool() ? 1.0 : 0.0);
      break;
    case c10::TypeKind::IntType:
      if (value.isDouble() && integral_double(value.toDouble())) {
        return c10::IValue(static_cast<int64_t>(value.toDouble()));
      }
      if (value.isBool()) return c10::IValue(static_cast<int64_t>(value.toBool()));
      if (value.isTensor() && value.toTensor().numel() == 1) return c10::IValue(value.toTensor().item<int64_t>());
      break;
    case c10::TypeKind::BoolType:
      if (value.isInt()) return c10::IValue(value.toInt() != 0);
      break;
    default: break;
  }
  (void)name;
  return value;
}

}  // namespace

c10::IValue coerce_to_schema_type(c10::IValue value, const c10::TypePtr& type, const std::string& arg_name,
                                  c10::optional<int32_t> list_size) {
  c10::TypePtr t = type;
  if (t->kind() == c10::TypeKind::OptionalType) {
    if (value.isNone()) return value;
    t = t->expectRef<c10::OptionalType>().getElementType();
  }
  switch (t->kind()) {
    case c10::TypeKind::FloatType:
    case c10::TypeKind::IntType:
    case c10::TypeKind::BoolType: return coerce_scalar(std::move(value), t->kind(), arg_name);
    case c10::TypeKind::ListType: {
      c10::TypePtr elem = t->expectRef<c10::ListType>().getElementType();
      c10::TypeKind ek = elem->kind();
      if (ek == c10::TypeKind::IntType || ek == c10::TypeKind::SymIntType) {
        if (value.isInt()) {
          // "int[2] stride=1" style: a single int stands for the whole list.
          c10::List<int64_t> list;
          for (int32_t i = 0; i < list_size.value_or(1); ++i) list.push_back(value.toInt());
          return c10::IValue(list);
        }
        if (value.isDoubleList()) {
          c10::List<int64_t> list;
          for (double d : value.toDoubleVector()) {
            KILN_CHECK(integral_double(d), InvalidInput, "argument '", arg_name, "' expects ints, got ", d);
            list.push_back(static_cast<int64_t>(d));
          }
          return c10::IValue(list);
        }
      } else if (ek == c10::TypeKind::FloatType) {
        if (value.isIntList()) {
          c10::List<double> list;
          for (int64_t v : value.toIntVector()) list.push_back(static_cast<double>(v));
          return c10::IValue(list);
        }
        if (value.isInt() || value.isDouble()) {
          c10::List<double> list;
          double d = value.isInt() ? static_cast<double>(value.toInt()) : value.toDouble();
          for (int32_t i = 0; i < list_size.value_or(1); ++i) list.push_back(d);
          return c10::IValue(list);
        }
      } else if (ek == c10::TypeKind::OptionalType && value.isTensorList()) {
        c10::List<c10::optional<at::Tensor>> list;
        for (const at::Tensor& tensor : value.toTensorVector()) list.push_back(tensor);
        return c10::IValue(list);
      } else if (ek == c10::TypeKind::TensorType && value.isList() && !value.isTensorList()) {
        c10::List<at::Tensor> list;
        for (const c10::IValue& item : value.toListRef()) {
          KILN_CHECK(item.isTensor(), InvalidInput, "argument '", arg_name, "' expects tensors, got None");
          list.push_back(item.toTensor());
        }
        return c10::IValue(list);
      }
      return value;
    }
    case c10::TypeKind::TensorType:
      if (is_number(value)) {
        // A Python scalar where a tensor is expected becomes a 0-d tensor (torch's own wrapping rule).
        if (value.isDouble()) return c10::IValue(at::scalar_tensor(value.toDouble(), at::kDouble));
        if (value.isInt()) return c10::IValue(at::scalar_tensor(value.toInt(), at::kLong));
        return c10::IValue(at::scalar_tensor(value.toBool(), at::kBool));
      }
      return value;
    default: return value;
  }
}

}  // namespace kiln::runtime
