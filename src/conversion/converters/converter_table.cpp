// The one table of built-in converter families.

#include "kiln/conversion/converter_table.h"

namespace kiln::conversion {

void register_activation_converters(ConverterRegistry& r);
void register_elementwise_converters(ConverterRegistry& r);
void register_unary_converters(ConverterRegistry& r);
void register_special_converters(ConverterRegistry& r);
void register_gamma_converters(ConverterRegistry& r);
void register_reduce_converters(ConverterRegistry& r);
void register_norm_converters(ConverterRegistry& r);
void register_normalization_converters(ConverterRegistry& r);
void register_shuffle_converters(ConverterRegistry& r);
void register_as_strided_converters(ConverterRegistry& r);
void register_reorder_converters(ConverterRegistry& r);
void register_indexing_converters(ConverterRegistry& r);
void register_data_dependent_converters(ConverterRegistry& r);
void register_linalg_converters(ConverterRegistry& r);
void register_einsum_converters(ConverterRegistry& r);
void register_spatial_converters(ConverterRegistry& r);
void register_factory_converters(ConverterRegistry& r);
void register_symbolic_converters(ConverterRegistry& r);

const std::vector<ConverterFamily>& converter_families() {
  static const std::vector<ConverterFamily> kFamilies = {
      {"activation", register_activation_converters},
      {"elementwise", register_elementwise_converters},
      {"unary", register_unary_converters},
      {"special", register_special_converters},
      {"gamma", register_gamma_converters},
      {"reduce", register_reduce_converters},
      {"norm", register_norm_converters},
      {"normalization", register_normalization_converters},
      {"shuffle", register_shuffle_converters},
      {"as_strided", register_as_strided_converters},
      {"reorder", register_reorder_converters},
      {"indexing", register_indexing_converters},
      {"data_dependent", register_data_dependent_converters},
      {"linalg", register_linalg_converters},
      {"einsum", register_einsum_converters},
      {"spatial", register_spatial_converters},
      {"factories", register_factory_converters},
      {"symbolic", register_symbolic_converters},
  };
  return kFamilies;
}

void register_builtin_converters(ConverterRegistry& registry) {
  for (const ConverterFamily& f : converter_families()) f.register_fn(registry);
}

}  // namespace kiln::conversion
