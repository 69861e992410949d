#pragma once
// Refitting built plans from a lowered graph's constants (shared by the engine cache and refit_module_weights).
// A plan's refittable weights are named after the constants the converters read them from: the state-dict name
// (fqn), else the value name (constants made by lowering, e.g. a batch norm folded into a convolution). Converters
// record weights as the program holds them or cast to float32; refit re-applies that cast.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/engine/plan.h"
#include "kiln/ir/graph.h"

namespace kiln::compiler::detail {

/// The constants of `graph` by refit name (fqn, else value name).
std::map<std::string, const ir::Value*> constants_by_refit_name(const ir::Graph& graph);

/// A copy of `plan` whose refittable weights are all taken from `segment`'s constants. Throws kiln::Error naming
/// the first weight that `segment` lacks or holds with another shape or dtype.
std::shared_ptr<engine::Plan> refitted_copy(const engine::Plan& plan, const ir::Graph& segment);

/// Refits `plan` in place with every refittable weight from `segment`'s constants (same errors as refitted_copy).
void refit_from_graph(const std::shared_ptr<engine::Plan>& plan, const ir::Graph& segment);

/// SHA-256 digests of the constants of `segment` that are not refittable weights of `plan` (values a converter or
/// the builder compiled into the plan): they must be unchanged for the plan to compute the segment.
std::map<std::string, std::string> baked_constant_digests(const engine::Plan& plan, const ir::Graph& segment);

/// The SHA-256 (hex) of a tensor's dtype, shape and bytes.
std::string tensor_digest(const HostTensor& tensor);

}  // namespace kiln::compiler::detail
