#include "kiln/conversion/conversion_context.h"

namespace kiln::conversion {

void ConversionContext::record_weight(const std::string& name, const HostTensor& weight) {
  weight_refit_map[name] = weight;
  cpu_weights_reference_holder.push_back(weight);
}

std::string ConversionContext::name(const std::string& suffix) {
  const std::string base = current_node.empty() ? std::string("layer") : current_node;
  const std::string key = suffix.empty() ? base : base + "/" + suffix;
  const int64_t k = name_counts_[key]++;
  return k == 0 ? key : key + "_" + std::to_string(k);
}

}  // namespace kiln::conversion
