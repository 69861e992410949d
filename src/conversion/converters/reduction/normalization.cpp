// Normalizations: layer_norm / native_layer_norm, rms_norm, batch_norm /
// _native_batch_norm_legit_no_training, group_norm / native_group_norm.

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/movement.h"
#include "kiln/conversion/impl/pointwise.h"
#include "kiln/conversion/impl/reduction.h"
#include "kiln/support/dtype.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;

// Affine parameters: frozen weights go into the layer; tensors are applied after it (reshaped to broadcast
// along `channel_dim` of a rank-`rank` output, or as is for layer norm when channel_dim < 0).
struct Affine {
  HostTensor weight, bias;
  std::string weight_name, bias_name;
  engine::Tensor* weight_t = nullptr;
  engine::Tensor* bias_t = nullptr;
};

Affine affine(ConversionContext& ctx, const ConverterArgs& a) {
  Affine f;
  ArgValue w = a.get("weight"), b = a.get("bias");
  if (w.is_weight() && (b.is_weight() || b.is_none())) {
    f.weight = w.weight;
    f.weight_name = w.weight_name;
    if (b.is_weight()) {
      f.bias = b.weight;
      f.bias_name = b.weight_name;
    }
    return f;
  }
  if (!w.is_none()) f.weight_t = ConverterArgs::materialize(ctx, w, "weight");
  if (!b.is_none()) f.bias_t = ConverterArgs::materialize(ctx, b, "bias");
  return f;
}

engine::Tensor* apply_affine(ConversionContext& ctx, engine::Tensor* y, const Affine& f, int64_t channel_dim) {
  auto shaped = [&](engine::Tensor* p) {
    if (channel_dim < 0) return p;
    std::vector<SymIntValue> dims(static_cast<size_t>(y->rank() - channel_dim), SymIntValue{1, nullptr});
    dims[0] = p->dims()[0] >= 0 ? SymIntValue{p->dims()[0], nullptr} : SymIntValue{-1, nullptr};
    return impl::reshape(ctx, p, dims);
  };
  if (f.weight_t) {
    y = impl::binary(ctx, impl::Operand::of(y), impl::Operand::of(shaped(f.weight_t)), engine::ElementwiseOp::Mul,
                     y->dtype());
  }
  if (f.bias_t) {
    y = impl::binary(ctx, impl::Operand::of(y), impl::Operand::of(shaped(f.bias_t)), engine::ElementwiseOp::Add,
                     y->dtype());
  }
  return y;
}

Outputs layer_norm(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "input"), detail::out_dtype(n));
  const int64_t r = static_cast<int64_t>(a.ints("normalized_shape").size());
  const double eps = a.float_("eps", 1e-5);
  Affine f = affine(ctx, a);
  engine::Tensor* y = impl::layer_norm(ctx, x, r, f.weight, f.weight_name, f.bias, f.bias_name, eps);
  return {apply_affine(ctx, y, f, -1)};
}

// rms_norm(input, normalized_shape, weight=None, eps=None): eps None is the epsilon of the input's opmath
// type (fp32 for fp16 / bf16 / fp32), as ATen's rms_norm_composite and Kiln's builtin for libtorch without
// the op (runtime/builtin_compat.cpp) read it. normalized_shape must be x's trailing dims, as torch checks.
Outputs rms_norm(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* input = a.tensor(ctx, "input");
  const std::vector<int64_t> shape = a.ints("normalized_shape");
  const int64_t r = static_cast<int64_t>(shape.size());
  KILN_CHECK(r >= 1 && r <= input->rank(), InvalidInput, ctx.current_node,
             ": rms_norm normalized_shape of rank ", r, " for an input of rank ", input->rank());
  for (int64_t i = 0; i < r; ++i) {
    const int64_t d = input->dims()[input->rank() - r + i];
    KILN_CHECK(d < 0 || d == shape[i], InvalidInput, ctx.current_node, ": rms_norm normalized_shape entry ",
               i, " is ", shape[i], ", the input's dim is ", d);
  }
  const double eps = a.float_("eps", opmath_epsilon(input->dtype()));
  engine::Tensor* x = impl::cast(ctx, input, detail::out_dtype(n));
  Affine f = affine(ctx, a);
  engine::Tensor* y = impl::rms_norm(ctx, x, r, f.weight, f.weight_name, eps);
  return {apply_affine(ctx, y, f, -1)};
}

Outputs batch_norm(ConversionContext& ctx, const ir::Node&, const ConverterArgs& a) {
  ArgValue w = a.get("weight"), b = a.get("bias"), mean = a.get("running_mean"), var = a.get("running_var");
  const double eps = a.float_("eps", 1e-5);
  engine::Tensor* x = a.tensor(ctx, "input");
  return {impl::batch_norm(ctx, x, w.weight, b.weight, mean.weight, var.weight, eps)};
}

Outputs group_norm(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  engine::Tensor* x = impl::cast(ctx, a.tensor(ctx, "input"), detail::out_dtype(n));
  const int64_t groups = a.raw("num_groups") ? a.int_("num_groups") : a.int_("group");
  const double eps = a.float_("eps", 1e-5);
  Affine f = affine(ctx, a);
  engine::Tensor* y = impl::group_norm(ctx, x, groups, f.weight, f.weight_name, f.bias, f.bias_name, eps);
  return {apply_affine(ctx, y, f, 1)};
}

// Only the first output of the native forms is produced: the statistics must have no users.
bool only_first_output_used(const ir::Node& n, const settings::CompilationSettings&) {
  if (n.owner() == nullptr) return true;
  for (size_t i = 1; i < n.outputs().size(); ++i) {
    if (!n.owner()->users(n.outputs()[i]).empty() || n.owner()->is_output(n.outputs()[i])) return false;
  }
  return true;
}

bool frozen_batch_norm(const ir::Node& n, const settings::CompilationSettings& s) {
  const ir::Argument* training = n.find_arg("training");
  if (training && training->kind() == ir::Argument::Kind::Bool && training->as_bool()) return false;
  for (const char* k : {"weight", "bias", "running_mean", "running_var"}) {
    if (!detail::is_weight_or_none(n, k)) return false;
  }
  const ir::Argument* mean = n.find_arg("running_mean");
  const ir::Argument* var = n.find_arg("running_var");
  if (mean == nullptr || mean->is_none() || var == nullptr || var->is_none()) return false;
  return only_first_output_used(n, s);
}

}  // namespace

void register_normalization_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.layer_norm.default"}, layer_norm, true);
  add(r, {"aten.native_layer_norm.default"}, layer_norm, true, only_first_output_used);
  add(r, {"aten.rms_norm.default"}, rms_norm, true);
  add(r, {"aten.batch_norm.default", "aten._native_batch_norm_legit_no_training.default"}, batch_norm, true,
      frozen_batch_norm);
  add(r, {"aten.group_norm.default"}, group_norm, true);
  add(r, {"aten.native_group_norm.default"}, group_norm, true, only_first_output_used);
}

}  // namespace kiln::conversion
