// Convolutions: convolution / conv1d-3d / conv_transpose1d-3d with frozen weights.

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/linalg.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;

Outputs convolution(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const ArgValue w = a.get("weight"), b = a.get("bias");
  const bool transposed =
      n.target().name.find("transpose") != std::string::npos || a.bool_("transposed", false);
  return {impl::convolution(ctx, a.tensor(ctx, "input"), w.weight, w.weight_name, b.weight, b.weight_name,
                            a.ints("stride", std::vector<int64_t>{}),
                            a.ints("padding", std::vector<int64_t>{}),
                            a.ints("dilation", std::vector<int64_t>{}), transposed,
                            a.ints("output_padding", std::vector<int64_t>{}), a.int_("groups", 1))};
}

bool frozen_conv_weights(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* w = n.find_arg("weight");
  if (w == nullptr || w->is_none() || !detail::is_weight_or_none(n, "weight") ||
      !detail::is_weight_or_none(n, "bias")) {
    return false;
  }
  const ir::Argument* pad = n.find_arg("padding");
  if (pad && pad->kind() == ir::Argument::Kind::String) return false;  // "same"/"valid" stay in torch
  const int64_t k = w->as_tensor()->meta().rank() - 2;
  return k >= 1 && k <= 3 && detail::window_args_within_bounds(n);
}

}  // namespace

void register_convolution_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.convolution.default", "aten.conv1d.default", "aten.conv2d.default", "aten.conv3d.default",
          "aten.conv_transpose1d.input", "aten.conv_transpose2d.input", "aten.conv_transpose3d.input"},
      convolution, true, frozen_conv_weights);
}

}  // namespace kiln::conversion
