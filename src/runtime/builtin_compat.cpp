// Implementations of torch 2.x operators that an older libtorch (Debian's 1.13) lacks. Each one is used only
// when the dispatcher does not know the op (BuiltinMode::IfMissing), so a newer libtorch runs its own kernel.

#include <algorithm>
#include <cmath>
#include <limits>

#include <ATen/ATen.h>

#include "kiln/support/dtype.h"
#include "kiln/support/error.h"
#include "runtime/builtin_ops.h"
#include "runtime/torch_convert.h"

namespace kiln::runtime {
namespace {

using Values = std::vector<c10::IValue>;

int64_t wrap_dim(int64_t dim, int64_t rank, const NodeArgs& args) {
  int64_t r = std::max<int64_t>(rank, 1);
  int64_t d = dim < 0 ? dim + r : dim;
  KILN_CHECK(d >= 0 && d < r, InvalidInput, "dimension ", dim, " out of range for rank ", rank, " in node '",
             args.node().name(), "'");
  return d;
}

// Dimensions normalized, unique, sorted descending (so reducing one does not shift the next).
std::vector<int64_t> dims_descending(const std::vector<int64_t>& dims, int64_t rank, const NodeArgs& args) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(wrap_dim(d, rank, args));
  std::sort(out.begin(), out.end(), std::greater<>());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// `t` with its dimensions laid out in memory in the same order as `like`'s (same values).
at::Tensor with_layout_of(const at::Tensor& t, const at::Tensor& like) {
  if (t.dim() != like.dim() || t.dim() < 2) return t;
  std::vector<int64_t> order(static_cast<size_t>(t.dim()));
  for (int64_t d = 0; d < t.dim(); ++d) order[static_cast<size_t>(d)] = d;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return like.stride(a) > like.stride(b); });
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return t.permute(order).contiguous().permute(inverse);
}

}  // namespace

at::Tensor sdpa_math(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                     const c10::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                     c10::optional<double> scale, bool enable_gqa, at::Tensor* logsumexp) {
  KILN_CHECK(dropout_p == 0.0, Unsupported, "scaled_dot_product_attention with dropout_p=", dropout_p,
             " (only inference, dropout_p=0, is supported)");
  KILN_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, InvalidInput,
             "scaled_dot_product_attention needs query/key/value of rank >= 2");
  at::Tensor k = key;
  at::Tensor v = value;
  if (enable_gqa && query.dim() >= 3 && k.dim() >= 3 && query.size(-3) != k.size(-3)) {
    int64_t hq = query.size(-3);
    int64_t hk = k.size(-3);
    KILN_CHECK(hk > 0 && hq % hk == 0, InvalidInput, "grouped-query attention with ", hq, " query heads and ", hk,
               " key heads");
    k = k.repeat_interleave(hq / hk, -3);
    v = v.repeat_interleave(hq / hk, -3);
  }
  const int64_t l = query.size(-2);
  const int64_t s = k.size(-2);
  const double factor = scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
  at::Tensor scores = at::matmul(query, k.transpose(-2, -1)).mul(factor);
  const double neg_inf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    at::Tensor keep = at::ones({l, s}, query.options().dtype(at::kBool)).tril();
    scores = scores.masked_fill(keep.logical_not(), neg_inf);
  }
  if (attn_mask.has_value() && attn_mask->defined()) {
    if (attn_mask->scalar_type() == at::kBool) {
      scores = scores.masked_fill(attn_mask->logical_not(), neg_inf);
    } else {
      scores = scores.add(*attn_mask);
    }
  }
  if (logsumexp != nullptr) *logsumexp = at::logsumexp(scores, {-1}, false);
  // Rows where every score is -inf attend to nothing: torch 2.x returns zeros there (its "safe" softmax).
  at::Tensor masked_rows = scores.eq(neg_inf).all(-1, true);
  at::Tensor weights = at::softmax(scores, -1).masked_fill(masked_rows, 0.0);
  at::Tensor out = at::matmul(weights, v);
  // torch 2.x returns the attention output in the query's memory layout, and exported graphs rely on it: a
  // later aten.view of the permuted output is only valid for that layout.
  return with_layout_of(out, query);
}

Values native_batch_norm_legit_no_training(const NodeArgs& args) {
  at::Tensor input = args.tensor("input");
  at::Tensor out = at::batch_norm(input, args.optional_tensor("weight"), args.optional_tensor("bias"),
                                  args.optional_tensor("running_mean"), args.optional_tensor("running_var"),
                                  /*training=*/false, args.float_or("momentum", 0.1), args.float_or("eps", 1e-5),
                                  /*cudnn_enabled=*/false);
  return {c10::IValue(out), c10::IValue(at::empty({0}, input.options())),
          c10::IValue(at::empty({0}, input.options()))};
}

Values native_batch_norm_legit(const NodeArgs& args) {
  auto [out, mean, rstd] = at::native_batch_norm(
      args.tensor("input"), args.optional_tensor("weight"), args.optional_tensor("bias"),
      args.optional_tensor("running_mean"), args.optional_tensor("running_var"), args.bool_or("training", false),
      args.float_or("momentum", 0.1), args.float_or("eps", 1e-5));
  return {c10::IValue(out), c10::IValue(mean), c10::IValue(rstd)};
}

Values native_batch_norm_legit_no_stats(const NodeArgs& args) {
  auto [out, mean, rstd] = at::native_batch_norm(args.tensor("input"), args.optional_tensor("weight"),
                                                 args.optional_tensor("bias"), c10::nullopt, c10::nullopt,
                                                 /*training=*/true, args.float_or("momentum", 0.1),
                                                 args.float_or("eps", 1e-5));
  return {c10::IValue(out), c10::IValue(mean), c10::IValue(rstd)};
}

Values scaled_dot_product_attention(const NodeArgs& args) {
  return {c10::IValue(sdpa_math(args.tensor("query"), args.tensor("key"), args.tensor("value"),
                                args.optional_tensor("attn_mask"), args.float_or("dropout_p", 0.0),
                                args.bool_or("is_causal", false), args.optional_float("scale"),
                                args.bool_or("enable_gqa", false)))};
}

Values sdpa_flash_attention_for_cpu(const NodeArgs& args) {
  at::Tensor logsumexp;
  at::Tensor out = sdpa_math(args.tensor("query"), args.tensor("key"), args.tensor("value"),
                             args.optional_tensor("attn_mask"), args.float_or("dropout_p", 0.0),
                             args.bool_or("is_causal", false), args.optional_float("scale"), false, &logsumexp);
  return {c10::IValue(out), c10::IValue(logsumexp)};
}

Values squeeze_dims(const NodeArgs& args) {
  at::Tensor t = args.tensor("self");
  at::Tensor out = t;
  for (int64_t d : dims_descending(args.ints("dim"), t.dim(), args)) {
    if (t.dim() > 0 && out.size(d) == 1) out = out.squeeze(d);
  }
  return {c10::IValue(out)};
}

Values safe_softmax(const NodeArgs& args) {
  at::Tensor t = args.tensor("self");
  int64_t dim = args.int_("dim");
  c10::IValue dtype = args.value(std::string("dtype"));
  at::Tensor out = dtype.isInt() ? at::softmax(t, dim, static_cast<c10::ScalarType>(dtype.toInt()))
                                 : at::softmax(t, dim);
  at::Tensor masked = t.eq(-std::numeric_limits<double>::infinity()).all(dim, true);
  return {c10::IValue(out.masked_fill(masked, 0.0))};
}

Values rms_norm(const NodeArgs& args) {
  // As ATen's rms_norm_composite (torch >= 2.4): in the opmath type (fp16 / bf16 upcast to fp32), the weight
  // applied there, the result cast back to the input's dtype.
  at::Tensor input = args.tensor("input");
  std::vector<int64_t> shape = args.ints("normalized_shape");
  KILN_CHECK(static_cast<int64_t>(shape.size()) <= input.dim(), InvalidInput, "rms_norm normalized_shape of rank ",
             shape.size(), " for an input of rank ", input.dim());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) dims.push_back(input.dim() - 1 - i);
  double eps = args.optional_float("eps").value_or(opmath_epsilon(from_scalar_type(input.scalar_type())));
  bool low_precision = input.scalar_type() == at::kHalf || input.scalar_type() == at::kBFloat16;
  at::Tensor x = low_precision ? input.to(at::kFloat) : input;
  at::Tensor out = x.mul(at::rsqrt(x.pow(2).mean(dims, true).add(eps)));
  if (auto weight = args.optional_tensor("weight")) out = out.mul(*weight);
  return {c10::IValue(out.to(input.scalar_type()))};
}

Values unsafe_index(const NodeArgs& args) {
  c10::IValue list = coerce_to_schema_type(args.value(std::string("indices")),
                                           c10::ListType::create(c10::OptionalType::create(c10::TensorType::get())),
                                           "indices", c10::nullopt);
  KILN_CHECK(list.isList(), InvalidInput, "_unsafe_index needs a list of indices in node '", args.node().name(), "'");
  c10::List<c10::optional<at::Tensor>> indices;
  for (const c10::IValue& item : list.toListRef()) {
    if (item.isNone()) {
      indices.push_back(c10::nullopt);
    } else {
      indices.push_back(item.toTensor());
    }
  }
  return {c10::IValue(at::index(args.tensor("self"), indices))};
}

Values any_dims(const NodeArgs& args) {
  at::Tensor t = args.tensor("self");
  bool keepdim = args.bool_or("keepdim", false);
  auto dims = args.optional_ints("dim");
  if (!dims.has_value() || dims->empty()) {
    if (!keepdim) return {c10::IValue(at::any(t))};
    dims = std::vector<int64_t>();
    for (int64_t d = 0; d < t.dim(); ++d) dims->push_back(d);
  }
  at::Tensor out = t;
  for (int64_t d : dims_descending(*dims, t.dim(), args)) out = at::any(out, d, keepdim);
  return {c10::IValue(out)};
}

Values all_dims(const NodeArgs& args) {
  at::Tensor t = args.tensor("self");
  bool keepdim = args.bool_or("keepdim", false);
  auto dims = args.optional_ints("dim");
  if (!dims.has_value() || dims->empty()) {
    if (!keepdim) return {c10::IValue(at::all(t))};
    dims = std::vector<int64_t>();
    for (int64_t d = 0; d < t.dim(); ++d) dims->push_back(d);
  }
  at::Tensor out = t;
  for (int64_t d : dims_descending(*dims, t.dim(), args)) out = at::all(out, d, keepdim);
  return {c10::IValue(out)};
}

}  // namespace kiln::runtime
