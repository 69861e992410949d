#pragma once
// Private helpers for the converter families: registration shorthand and common argument patterns.

#include <string>
#include <vector>

#include "kiln/conversion/conversion_context.h"
#include "kiln/conversion/converter_args.h"
#include "kiln/conversion/registry.h"
#include "kiln/ir/graph.h"

namespace kiln::conversion::detail {

using Outputs = std::vector<engine::Tensor*>;
using Fn = Outputs (*)(ConversionContext&, const ir::Node&, const ConverterArgs&);

/// Registers `fn` for each key. `dynamic`: the converter was tested with dynamic ranges.
inline void add(ConverterRegistry& r, std::initializer_list<const char*> keys, Fn fn, bool dynamic,
                CapabilityValidator validator = {}) {
  for (const char* k : keys) {
    RegistrationOptions o;
    o.supports_dynamic_shapes = dynamic;
    o.capability_validator = validator;
    r.register_converter(k, ConverterImpl(fn), o);
  }
}

/// True when the node's argument `name` is absent, None, or a constant (a frozen weight) with data.
inline bool is_weight_or_none(const ir::Node& n, const std::string& name) {
  const ir::Argument* a = n.find_arg(name);
  if (a == nullptr || a->is_none()) return true;
  if (a->kind() != ir::Argument::Kind::Tensor) return false;
  return a->as_tensor()->role() == ir::ValueRole::Constant;
}

/// The output dtype the program states for output i (Float32 when not a tensor).
inline DType out_dtype(const ir::Node& n, size_t i = 0) {
  return n.outputs().size() > i && n.outputs()[i]->is_tensor() ? n.outputs()[i]->meta().dtype : DType::Float32;
}

}  // namespace kiln::conversion::detail
