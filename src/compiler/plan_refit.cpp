#include "compiler/plan_refit.h"

#include <set>

#include "kiln/engine/refitter.h"
#include "kiln/support/error.h"
#include "kiln/support/hash.h"

namespace kiln::compiler::detail {

std::map<std::string, const ir::Value*> constants_by_refit_name(const ir::Graph& graph) {
  std::map<std::string, const ir::Value*> out;
  for (const ir::Value* c : graph.constants()) out[c->fqn().empty() ? c->name() : c->fqn()] = c;
  return out;
}

std::shared_ptr<engine::Plan> refitted_copy(const engine::Plan& plan, const ir::Graph& segment) {
  KILN_CHECK(plan.refittable(), InvalidInput,
             "the engine was built with immutable weights; compile with immutable_weights=false to refit it");
  std::shared_ptr<engine::Plan> copy = engine::Plan::deserialize(plan.serialize(/*strip_weights=*/true));
  refit_from_graph(copy, segment);
  copy->set_strip_weights(plan.strip_weights());
  return copy;
}

void refit_from_graph(const std::shared_ptr<engine::Plan>& plan, const ir::Graph& segment) {
  const std::shared_ptr<engine::Plan>& copy = plan;
  engine::Refitter refitter(copy);
  const auto constants = constants_by_refit_name(segment);
  for (const std::string& name : copy->weight_names()) {
    auto it = constants.find(name);
    KILN_CHECK(it != constants.end(), InvalidInput, "the engine's weight '", name, "' is not a constant of the program");
    const HostTensor& value = it->second->data();
    KILN_CHECK(value.defined(), InvalidInput, "constant '", name, "' has no data");
    try {
      refitter.set_weights(name, value);
    } catch (const Error&) {
      // Converters hand half-precision and double weights to the engine as float32.
      if (!is_floating(value.dtype()) || value.dtype() == DType::Float32) throw;
      refitter.set_weights(name, value.to(DType::Float32));
    }
  }
  refitter.refit();
  const std::vector<std::string> missing = refitter.missing_weights();
  KILN_CHECK(missing.empty(), InvalidInput, "refit left weight '", missing.empty() ? "" : missing.front(), "' unset");
}

std::string tensor_digest(const HostTensor& tensor) {
  Sha256 sha;
  sha.update(tensor.describe());
  if (tensor.defined()) sha.update(tensor.data(), tensor.nbytes());
  return sha.hex_digest();
}

std::map<std::string, std::string> baked_constant_digests(const engine::Plan& plan, const ir::Graph& segment) {
  const std::vector<std::string> names = plan.weight_names();
  const std::set<std::string> refittable(names.begin(), names.end());
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : constants_by_refit_name(segment)) {
    if (refittable.count(name) == 0) out[name] = tensor_digest(value->data());
  }
  return out;
}

}  // namespace kiln::compiler::detail
