// Reductions, softmax, cumulative sums and top-k.

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/conversion/impl/reduction.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;
using engine::ReduceOp;

std::vector<int64_t> dims_arg(const ConverterArgs& a, const char* name) {
  const ir::Argument* d = a.raw(name);
  if (d == nullptr || d->is_none()) return {};
  return a.ints(name);
}

template <ReduceOp Op>
Outputs reduce_dims(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const DType t = detail::out_dtype(n);
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "self"), t);
  return {impl::reduce(ctx, x, Op, dims_arg(a, "dim"), a.bool_("keepdim", false))};
}

template <ReduceOp Op>
Outputs reduce_all(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "self"), detail::out_dtype(n));
  return {impl::reduce(ctx, x, Op, {}, false)};
}

template <ReduceOp Op>
Outputs amax_amin(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  return {impl::reduce(ctx, a.tensor(ctx, "self"), Op, dims_arg(a, "dim"), a.bool_("keepdim", false))};
}

// max.dim / min.dim: values and indices.
template <ReduceOp Op, ReduceOp Arg>
Outputs with_indices(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  const int64_t dim = a.int_("dim");
  const bool keep = a.bool_("keepdim", false);
  return {impl::reduce(ctx, x, Op, {dim}, keep), impl::reduce(ctx, x, Arg, {dim}, keep)};
}

template <ReduceOp Arg>
Outputs arg_reduce(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  const bool keep = a.bool_("keepdim", false);
  const ir::Argument* d = a.raw("dim");
  if (d == nullptr || d->is_none()) {
    engine::Tensor* flat = impl::flatten(ctx, x, 0, -1);
    engine::Tensor* y = impl::reduce(ctx, flat, Arg, {0}, false);
    if (!keep) return {y};
    return {impl::reshape(ctx, y, std::vector<SymIntValue>(static_cast<size_t>(x->rank()), SymIntValue{1, nullptr}))};
  }
  return {impl::reduce(ctx, x, Arg, {a.int_("dim")}, keep)};
}

template <bool Log>
Outputs softmax(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "self"), detail::out_dtype(n));
  return {impl::softmax(ctx, x, a.int_("dim"), Log)};
}

Outputs cumsum(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "self"), detail::out_dtype(n));
  engine::CumulativeParams p;
  p.op = engine::CumulativeParams::Sum;
  p.axis = impl::normalize_dim(a.int_("dim"), x->rank(), ctx.current_node);
  return {ctx.net.add_cumulative(ctx.name("cumsum"), x, p)};
}

Outputs topk(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  engine::Tensor* x = a.tensor(ctx, "self");
  engine::TopKParams p;
  p.k = a.int_("k");
  p.axis = impl::normalize_dim(a.int_("dim", -1), x->rank(), ctx.current_node);
  p.largest = a.bool_("largest", true);
  auto [values, indices] = ctx.net.add_topk(ctx.name("topk"), x, p);
  return {values, indices};
}

bool static_k(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* k = n.find_arg("k");
  if (k == nullptr) return false;
  if (k->kind() == ir::Argument::Kind::Int) return true;
  return k->kind() == ir::Argument::Kind::SymInt && !k->as_sym_int().is_value();
}

}  // namespace

void register_reduce_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.mean.dim"}, reduce_dims<ReduceOp::Mean>, true);
  add(r, {"aten.mean.default"}, reduce_all<ReduceOp::Mean>, true);
  add(r, {"aten.sum.dim_IntList"}, reduce_dims<ReduceOp::Sum>, true);
  add(r, {"aten.sum.default"}, reduce_all<ReduceOp::Sum>, true);
  add(r, {"aten.prod.dim_int"}, reduce_dims<ReduceOp::Prod>, true);
  add(r, {"aten.amax.default"}, amax_amin<ReduceOp::Max>, true);
  add(r, {"aten.amin.default"}, amax_amin<ReduceOp::Min>, true);
  add(r, {"aten.max.dim"}, with_indices<ReduceOp::Max, ReduceOp::ArgMax>, true);
  add(r, {"aten.min.dim"}, with_indices<ReduceOp::Min, ReduceOp::ArgMin>, true);
  add(r, {"aten.argmax.default"}, arg_reduce<ReduceOp::ArgMax>, true);
  add(r, {"aten.argmin.default"}, arg_reduce<ReduceOp::ArgMin>, true);
  add(r, {"aten.softmax.int", "aten._softmax.default"}, softmax<false>, true);
  add(r, {"aten.log_softmax.int", "aten._log_softmax.default"}, softmax<true>, true);
  add(r, {"aten.cumsum.default"}, cumsum, true);
  add(r, {"aten.topk.default"}, topk, true, static_k);
}

}  // namespace kiln::conversion
