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

/// Bound on the window arguments (stride, padding, dilation, output padding, kernel size, groups) that
/// convolution and pooling layers take: larger values are legal in torch (a stride of 2^31) but far outside what
/// the engine's kernels are built and tested for, so such nodes run in PyTorch (their validators say no).
inline constexpr int64_t kMaxWindowArgument = int64_t{1} << 24;

/// True when every static entry of the node's window arguments lies within kMaxWindowArgument.
inline bool window_args_within_bounds(const ir::Node& n) {
  for (const char* name : {"stride", "padding", "dilation", "output_padding", "kernel_size", "groups"}) {
    const ir::Argument* a = n.find_arg(name);
    if (a == nullptr || a->is_none()) continue;
    std::vector<int64_t> values;
    if (a->kind() == ir::Argument::Kind::Int) values.push_back(a->as_int());
    if (a->kind() == ir::Argument::Kind::Ints) values = a->as_ints();
    if (a->kind() == ir::Argument::Kind::SymInts || a->kind() == ir::Argument::Kind::SymInt) {
      for (const ir::SymIntArg& s : a->as_sym_ints()) {
        if (!s.is_value()) values.push_back(s.constant);
      }
    }
    for (int64_t v : values) {
      if (v > kMaxWindowArgument || v < -kMaxWindowArgument) return false;
    }
  }
  return true;
}

/// The output dtype the program states for output i (Float32 when not a tensor).
inline DType out_dtype(const ir::Node& n, size_t i = 0) {
  return n.outputs().size() > i && n.outputs()[i]->is_tensor() ? n.outputs()[i]->meta().dtype : DType::Float32;
}

/// A capability check: the node's output is floating point (converters whose kernels compute in float only).
inline bool floating_output(const ir::Node& n, const settings::CompilationSettings&) {
  return is_floating(out_dtype(n));
}

}  // namespace kiln::conversion::detail
