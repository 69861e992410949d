#include "npz_inputs.h"

#include "kiln/support/error.h"
#include "kiln/support/npz.h"

namespace kiln::cli {

const HostTensor& pick(const std::map<std::string, HostTensor>& arrays, const std::string& indexed,
                       const std::string& name, const std::string& file) {
  auto it = arrays.find(indexed);
  if (it == arrays.end()) it = arrays.find(name);
  KILN_CHECK(it != arrays.end(), InvalidInput, "'", file, "' has neither '", indexed, "' nor '", name, "'");
  return it->second;
}

std::vector<HostTensor> pick_inputs(const std::vector<ir::Value*>& graph_inputs, const std::string& path) {
  std::map<std::string, HostTensor> arrays = read_npz(path);
  std::vector<HostTensor> inputs;
  for (size_t k = 0; k < graph_inputs.size(); ++k) {
    inputs.push_back(pick(arrays, "input_" + std::to_string(k), graph_inputs[k]->name(), path));
  }
  return inputs;
}

}  // namespace kiln::cli
