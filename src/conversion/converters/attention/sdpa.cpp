// Attention: scaled_dot_product_attention as the engine's fused Attention layer (no dropout); a boolean mask
// holding transformers' causal factor becomes the layer's causal flag (causal_mask below); enable_gqa (key
// and value with fewer heads than the query, static head counts) becomes the layer's kv_group.

#include <optional>
#include <vector>

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/attention.h"
#include "kiln/ir/attention_mask_facts.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;

/// A boolean mask that is transformers' causal mask `kv_idx <= q_idx` AND at most one other factor (factors
/// true everywhere dropped): the engine's causal flag, which skips the key tiles past each query, and that
/// factor
/// (`rest`, nullptr when none) as the mask, so that a decoder's [B, 1, Lq, Lk] mask becomes its padding row.
/// torch's scaled_dot_product_attention refuses is_causal with a mask, so this is the converter's reading of
/// the mask, not a rewrite of the graph.
struct CausalMask {
  bool found = false;
  engine::Tensor* rest = nullptr;
};

CausalMask causal_mask(const ir::Node& node, const ConverterArgs& a) {
  const ir::Argument* m = node.find_arg("attn_mask");
  const ir::Argument* q = node.find_arg("query");
  const ir::Argument* k = node.find_arg("key");
  if (m == nullptr || q == nullptr || k == nullptr || m->kind() != ir::Argument::Kind::Tensor ||
      q->kind() != ir::Argument::Kind::Tensor || k->kind() != ir::Argument::Kind::Tensor) {
    return {};
  }
  const ir::Value* mask = m->as_tensor();
  const ir::Value& query = *q->as_tensor();
  const ir::Value& key = *k->as_tensor();
  if (mask->meta().dtype != DType::Bool || query.meta().rank() < 2 || key.meta().rank() < 2 ||
      !ir::mask_within_scores(*mask, query, key)) {
    return {};
  }
  const ir::SymExpr& lq = query.meta().sizes[query.meta().sizes.size() - 2];
  const ir::SymExpr& lk = key.meta().sizes[key.meta().sizes.size() - 2];
  int causal = 0;
  std::vector<const ir::Value*> others;
  for (const ir::Value* f : ir::and_factors(*mask)) {
    if (ir::is_causal_pattern(*f, lq, lk)) {
      ++causal;
    } else if (!ir::provably_all_true(*f)) {
      others.push_back(f);
    }
  }
  if (causal == 0 || others.size() > 1) return {};
  CausalMask out{true, nullptr};
  if (!others.empty()) {
    out.rest = a.lookup(others[0]);  // computed in this engine (or one of its inputs); else the whole mask
    if (out.rest == nullptr) return {};
  }
  return out;
}

/// The layer's kv_group: 1 without enable_gqa (or with as many key as query heads), query heads / key heads
/// with it; nullopt where torch's enable_gqa would refuse the shapes or a head count is not static.
std::optional<int64_t> kv_group_of(const ir::Node& node) {
  const ir::Argument* gqa = node.find_arg("enable_gqa");
  if (gqa == nullptr || gqa->is_none() || !gqa->as_bool()) return 1;
  const ir::Argument* args[] = {node.find_arg("query"), node.find_arg("key"), node.find_arg("value")};
  std::optional<int64_t> heads[3];
  for (int i = 0; i < 3; ++i) {
    if (args[i] == nullptr || args[i]->kind() != ir::Argument::Kind::Tensor) return std::nullopt;
    const auto& sizes = args[i]->as_tensor()->meta().sizes;
    if (sizes.size() < 3) return std::nullopt;
    heads[i] = sizes[sizes.size() - 3].as_int();
    if (!heads[i] || *heads[i] <= 0) return std::nullopt;
  }
  if (*heads[1] != *heads[2] || *heads[0] % *heads[1] != 0) return std::nullopt;
  return *heads[0] / *heads[1];
}

Outputs sdpa(ConversionContext& ctx, const ir::Node& node, const ConverterArgs& a) {
  bool causal = a.bool_("is_causal", false);
  engine::Tensor* mask = nullptr;
  if (a.has("attn_mask")) {
    const CausalMask split = causal ? CausalMask{} : causal_mask(node, a);
    causal = causal || split.found;
    mask = split.found ? split.rest : a.tensor(ctx, "attn_mask");
  }
  const double scale = a.has("scale") ? a.float_("scale") : 0.0;
  KILN_CHECK(!a.has("scale") || scale > 0, Unsupported, ctx.current_node, ": attention scale ", scale);
  const std::optional<int64_t> kv_group = kv_group_of(node);
  KILN_CHECK(kv_group.has_value(), Unsupported, ctx.current_node,
             ": enable_gqa needs static head counts, the key's dividing the query's");
  return {impl::attention(ctx, a.tensor(ctx, "query"), a.tensor(ctx, "key"), a.tensor(ctx, "value"), mask,
                          causal, scale, *kv_group)};
}

bool sdpa_supported(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* p = n.find_arg("dropout_p");
  if (p && !p->is_none() && p->as_float() != 0.0) return false;
  if (!kv_group_of(n)) return false;
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
