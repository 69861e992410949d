#include "kiln/conversion/impl/reduction.h"

#include <algorithm>
#include <cmath>

#include "kiln/conversion/impl/common.h"
#include "kiln/support/error.h"

namespace kiln::conversion::impl {

engine::Tensor* reduce(ConversionContext& ctx, engine::Tensor* x, engine::ReduceOp op, std::vector<int64_t> dims,
                       bool keep_dims) {
  if (dims.empty()) {
    for (int64_t i = 0; i < x->rank(); ++i) dims.push_back(i);
  }
  for (auto& d : dims) d = normalize_dim(d, x->rank(), ctx.current_node);
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  if (x->rank() == 0) return identity(ctx, x);
  if (op == engine::ReduceOp::Mean && !is_floating(x->dtype())) x = cast(ctx, x, DType::Float32);
  return ctx.net.add_reduce(ctx.name(engine::reduce_op_name(op)), x, op, dims, keep_dims);
}

engine::Tensor* softmax(ConversionContext& ctx, engine::Tensor* x, int64_t dim, bool log) {
  if (!is_floating(x->dtype())) x = cast(ctx, x, DType::Float32);
  return ctx.net.add_softmax(ctx.name(log ? "log_softmax" : "softmax"), x, normalize_dim(dim, x->rank(), ctx.current_node),
                             log);
}

namespace {
engine::Weights named(const HostTensor& t, const std::string& name, ConversionContext& ctx) {
  if (!t.defined()) return engine::Weights();
  HostTensor f = t.dtype() == DType::Float32 ? t : t.to(DType::Float32);
  if (name.empty()) return engine::Weights(f);
  ctx.record_weight(name, f);
  return engine::Weights(name, f);
}
}  // namespace

engine::Tensor* layer_norm(ConversionContext& ctx, engine::Tensor* x, int64_t normalized_rank, const HostTensor& weight,
                           const std::string& weight_name, const HostTensor& bias, const std::string& bias_name,
                           double eps) {
  engine::NormalizationParams p;
  p.kind = engine::NormalizationParams::Layer;
  p.axis = x->rank() - normalized_rank;
  p.epsilon = eps;
  return ctx.net.add_normalization(ctx.name("layer_norm"), x, p, named(weight, weight_name, ctx),
                                   named(bias, bias_name, ctx));
}

engine::Tensor* rms_norm(ConversionContext& ctx, engine::Tensor* x, int64_t normalized_rank,
                         const HostTensor& weight, const std::string& weight_name, double eps) {
  engine::NormalizationParams p;
  p.kind = engine::NormalizationParams::Rms;
  p.axis = x->rank() - normalized_rank;
  p.epsilon = eps;
  return ctx.net.add_normalization(ctx.name("rms_norm"), x, p, named(weight, weight_name, ctx),
                                   engine::Weights());
}

engine::Tensor* group_norm(ConversionContext& ctx, engine::Tensor* x, int64_t groups, const HostTensor& weight,
                           const std::string& weight_name, const HostTensor& bias, const std::string& bias_name,
                           double eps) {
  engine::NormalizationParams p;
  p.kind = engine::NormalizationParams::Group;
  p.axis = 1;
  p.groups = groups;
  p.epsilon = eps;
  return ctx.net.add_normalization(ctx.name("group_norm"), x, p, named(weight, weight_name, ctx),
                                   named(bias, bias_name, ctx));
}

engine::Tensor* batch_norm(ConversionContext& ctx, engine::Tensor* x, const HostTensor& weight, const HostTensor& bias,
                           const HostTensor& mean, const HostTensor& var, double eps) {
  KILN_CHECK(x->rank() >= 2, InvalidInput, ctx.current_node, ": batch norm needs rank >= 2");
  const int64_t c = mean.numel();
  KILN_CHECK(var.numel() == c && (!weight.defined() || weight.numel() == c) && (!bias.defined() || bias.numel() == c),
             InvalidInput, ctx.current_node, ": batch norm statistics have different lengths");
  std::vector<int64_t> shape(static_cast<size_t>(x->rank() - 1), 1);
  shape[0] = c;
  HostTensor scale(DType::Float32, shape), shift(DType::Float32, shape);
  for (int64_t i = 0; i < c; ++i) {
    const double s = (weight.defined() ? weight.get_as_double(i) : 1.0) / std::sqrt(var.get_as_double(i) + eps);
    scale.set_from_double(i, s);
    shift.set_from_double(i, (bias.defined() ? bias.get_as_double(i) : 0.0) - mean.get_as_double(i) * s);
  }
  engine::Tensor* y = ctx.net.add_elementwise(ctx.name("scale"), cast(ctx, x, DType::Float32), constant(ctx, scale),
                                              engine::ElementwiseOp::Mul);
  y = ctx.net.add_elementwise(ctx.name("shift"), y, constant(ctx, shift), engine::ElementwiseOp::Add);
  return cast(ctx, y, x->dtype());
}

}  // namespace kiln::conversion::impl
