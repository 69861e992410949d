// Dynamic-shape validator helpers.

#include "kiln/conversion/validators.h"

namespace kiln::conversion {

bool is_dynamic_value(const ir::Value& value) {
  switch (value.kind()) {
    case ir::ValueKind::Tensor:
      return !value.meta().is_static();
    case ir::ValueKind::SymInt:
    case ir::ValueKind::SymFloat:
    case ir::ValueKind::SymBool:
      return !(value.sym_value() && value.sym_value()->is_constant());
    case ir::ValueKind::Opaque:
      return false;
  }
  return false;
}

bool has_dynamic_shapes(const ir::Node& node) {
  for (const ir::Value* v : node.inputs()) {
    if (v != nullptr && is_dynamic_value(*v)) return true;
  }
  for (const ir::Value* v : node.outputs()) {
    if (v != nullptr && is_dynamic_value(*v)) return true;
  }
  return false;
}

bool has_dynamic_shapes_in_args(const ir::Node& node, const std::vector<size_t>& positions) {
  for (size_t pos : positions) {
    if (pos >= node.args().size()) continue;
    for (const ir::Value* v : node.args()[pos].value.values()) {
      if (v != nullptr && is_dynamic_value(*v)) return true;
    }
  }
  return false;
}

CapabilityValidator has_dynamic_shapes_in_args(std::vector<size_t> positions) {
  return [positions = std::move(positions)](const ir::Node& node, const settings::CompilationSettings&) {
    return has_dynamic_shapes_in_args(node, positions);
  };
}

CapabilityValidator has_static_shapes_in_args(std::vector<size_t> positions) {
  return [positions = std::move(positions)](const ir::Node& node, const settings::CompilationSettings& settings) {
    return settings.assume_dynamic_shape_support || !has_dynamic_shapes_in_args(node, positions);
  };
}

}  // namespace kiln::conversion
