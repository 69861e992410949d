// Attention: scaled_dot_product_attention as the engine's fused Attention layer (no dropout, no GQA).

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/attention.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;

Outputs sdpa(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* mask = a.has("attn_mask") ? a.tensor(ctx, "attn_mask") : nullptr;
  const double scale = a.has("scale") ? a.float_("scale") : 0.0;
  KILN_CHECK(!a.has("scale") || scale > 0, Unsupported, ctx.current_node, ": attention scale ", scale);
  return {impl::attention(ctx, a.tensor(ctx, "query"), a.tensor(ctx, "key"), a.tensor(ctx, "value"), mask,
                          a.bool_("is_causal", false), scale)};
}

bool sdpa_supported(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* p = n.find_arg("dropout_p");
  if (p && !p->is_none() && p->as_float() != 0.0) return false;
  const ir::Argument* gqa = n.find_arg("enable_gqa");
  if (gqa && !gqa->is_none() && gqa->as_bool()) return false;
  const ir::Argument* scale = n.find_arg("scale");
  if (scale && !scale->is_none() && scale->kind() == ir::Argument::Kind::Float && scale->as_float() <= 0)
    return false;
  return true;
}

}  // namespace

void register_sdpa_converters(ConverterRegistry& r) {
  detail::add(r, {"aten.scaled_dot_product_attention.default"}, sdpa, true, sdpa_supported);
}

}  // namespace kiln::conversion
