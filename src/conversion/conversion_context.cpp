#include "kiln/conversion/conversion_context.h"

namespace kiln::conversion {

engine::Weights ConversionContext::weights(const std::string& name, const HostTensor& value) const {
  engine::Weights w = name.empty() ? engine::Weights(value) : engine::Weights(name, value);
  if (auto it = int8_weight_scales.find(name); !name.empty() && it != int8_weight_scales.end())
    w.int8_scales = it->second;
  return w;
}

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
