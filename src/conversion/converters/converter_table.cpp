// The one table of built-in converter groups, each in the op family of the layers it builds
// (converters/<family>/<name>.cpp, the taxonomy of docs/engine.md).

#include "kiln/conversion/converter_table.h"

namespace kiln::conversion {

// pointwise/
void register_activation_converters(ConverterRegistry& r);
void register_elementwise_converters(ConverterRegistry& r);
void register_unary_converters(ConverterRegistry& r);
void register_special_converters(ConverterRegistry& r);
void register_gamma_converters(ConverterRegistry& r);
void register_fake_quantize_converters(ConverterRegistry& r);
// reduction/
void register_reduce_converters(ConverterRegistry& r);
void register_norm_converters(ConverterRegistry& r);
void register_normalization_converters(ConverterRegistry& r);
// movement/
void register_shuffle_converters(ConverterRegistry& r);
void register_as_strided_converters(ConverterRegistry& r);
void register_reorder_converters(ConverterRegistry& r);
void register_indexing_converters(ConverterRegistry& r);
void register_nonzero_converters(ConverterRegistry& r);
void register_factory_converters(ConverterRegistry& r);
// linalg/
void register_matmul_converters(ConverterRegistry& r);
void register_einsum_converters(ConverterRegistry& r);
void register_convolution_converters(ConverterRegistry& r);
// attention/
void register_sdpa_converters(ConverterRegistry& r);
// spatial/
void register_pooling_resize_converters(ConverterRegistry& r);
// not an op family: shape arithmetic on SymInts
void register_sym_int_converters(ConverterRegistry& r);

const std::vector<ConverterGroup>& converter_groups() {
  static const std::vector<ConverterGroup> kGroups = {
      {"pointwise", "activation", register_activation_converters},
      {"pointwise", "elementwise", register_elementwise_converters},
      {"pointwise", "unary", register_unary_converters},
      {"pointwise", "special", register_special_converters},
      {"pointwise", "gamma", register_gamma_converters},
      {"pointwise", "fake_quantize", register_fake_quantize_converters},
      {"reduction", "reduce", register_reduce_converters},
      {"reduction", "norm", register_norm_converters},
      {"reduction", "normalization", register_normalization_converters},
      {"movement", "shuffle", register_shuffle_converters},
      {"movement", "as_strided", register_as_strided_converters},
      {"movement", "reorder", register_reorder_converters},
      {"movement", "indexing", register_indexing_converters},
      {"movement", "nonzero", register_nonzero_converters},
      {"movement", "factories", register_factory_converters},
      {"linalg", "matmul", register_matmul_converters},
      {"linalg", "einsum", register_einsum_converters},
      {"linalg", "convolution", register_convolution_converters},
      {"attention", "sdpa", register_sdpa_converters},
      {"spatial", "pooling_resize", register_pooling_resize_converters},
      {"", "sym_int", register_sym_int_converters},
  };
  return kGroups;
}

void register_builtin_converters(ConverterRegistry& registry) {
  for (const ConverterGroup& g : converter_groups()) g.register_fn(registry);
}

}  // namespace kiln::conversion
