#pragma once
// Capability-validator helpers about dynamic shapes (Torch-TensorRT's has_dynamic_shapes,
// has_dynamic_shapes_in_args, has_static_shapes_in_args).
//
// A value is dynamic when it is a tensor with a non-constant size, or a SymInt/SymFloat/SymBool value whose
// expression is not a known constant.

#include <functional>
#include <vector>

#include "kiln/settings/compilation_settings.h"
#include "kiln/ir/graph.h"

namespace kiln::conversion {

/// A capability validator: (node, settings) -> can this converter handle this node.
using CapabilityValidator = std::function<bool(const ir::Node&, const settings::CompilationSettings&)>;

/// True when the value is dynamic as defined above.
bool is_dynamic_value(const ir::Value& value);
/// True when any tensor (or symbolic scalar) input or output of the node is dynamic.
bool has_dynamic_shapes(const ir::Node& node);
/// True when any argument at the given schema positions refers to a dynamic value (positions past the node's
/// arguments are ignored).
bool has_dynamic_shapes_in_args(const ir::Node& node, const std::vector<size_t>& positions);

/// A validator that passes when some argument at `positions` is dynamic.
CapabilityValidator has_dynamic_shapes_in_args(std::vector<size_t> positions);
/// A validator that passes when every argument at `positions` is static, or when the settings say
/// assume_dynamic_shape_support (which skips every dynamic-shape validator check).
CapabilityValidator has_static_shapes_in_args(std::vector<size_t> positions);

}  // namespace kiln::conversion
