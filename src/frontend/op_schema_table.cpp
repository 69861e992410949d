// Kiln's op-schema table: the operators Kiln knows, as PyTorch schema strings (torch 2.x,
// native_functions.yaml), parsed once on first use. To teach Kiln an op's defaults, add its schema here.

#include <mutex>
#include <unordered_map>

#include "kiln/frontend/op_schema.h"

namespace kiln::frontend {

namespace {

// clang-format off
constexpr const char* kSchemas[] = {
  // --- Convolution ---------------------------------------------------------------------------------
  "aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0, SymInt[1] dilation=1, SymInt groups=1) -> Tensor",
  "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
  "aten::conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] padding=0, SymInt[3] dilation=1, SymInt groups=1) -> Tensor",
  "aten::conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, str padding=\"valid\", SymInt[1] dilation=1, SymInt groups=1) -> Tensor",
  "aten::conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, str padding=\"valid\", SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
  "aten::conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, str padding=\"valid\", SymInt[3] dilation=1, SymInt groups=1) -> Tensor",
  "aten::conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0, SymInt[1] output_padding=0, SymInt groups=1, SymInt[1] dilation=1) -> Tensor",
  "aten::conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] output_padding=0, SymInt groups=1, SymInt[2] dilation=1) -> Tensor",
  "aten::conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] padding=0, SymInt[3] output_padding=0, SymInt groups=1, SymInt[3] dilation=1) -> Tensor",
  "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",

  // --- Normalization -------------------------------------------------------------------------------
  "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
  "aten::_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
  "aten::_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
  "aten::_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
  "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
  "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
  "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
  "aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor",
  "aten::native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)",
  "aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor",
  "aten::rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor",

  // --- Matrix multiply -----------------------------------------------------------------------------
  "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
  "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
  "aten::mm(Tensor self, Tensor mat2) -> Tensor",
  "aten::bmm(Tensor self, Tensor mat2) -> Tensor",
  "aten::matmul(Tensor self, Tensor other) -> Tensor",
  "aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
  "aten::addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
  "aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
  "aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",

  // --- Activations ---------------------------------------------------------------------------------
  "aten::relu(Tensor self) -> Tensor",
  "aten::relu_(Tensor(a!) self) -> Tensor(a!)",
  "aten::relu6(Tensor self) -> Tensor",
  "aten::gelu(Tensor self, *, str approximate='none') -> Tensor",
  "aten::gelu_(Tensor(a!) self, *, str approximate='none') -> Tensor(a!)",
  "aten::silu(Tensor self) -> Tensor",
  "aten::silu_(Tensor(a!) self) -> Tensor(a!)",
  "aten::sigmoid(Tensor self) -> Tensor",
  "aten::sigmoid_(Tensor(a!) self) -> Tensor(a!)",
  "aten::tanh(Tensor self) -> Tensor",
  "aten::hardswish(Tensor self) -> Tensor",
  "aten::hardswish_(Tensor(a!) self) -> Tensor(a!)",
  "aten::hardsigmoid(Tensor self) -> Tensor",
  "aten::hardsigmoid_(Tensor(a!) self) -> Tensor(a!)",
  "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
  "aten::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)",
  "aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
  "aten::leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)",
  "aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
  "aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
  "aten::prelu(Tensor self, Tensor weight) -> Tensor",
  "aten::mish(Tensor self) -> Tensor",
  "aten::glu(Tensor self, int dim=-1) -> Tensor",
  "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
  "aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
  "aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
  "aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",

  // --- Reductions ----------------------------------------------------------------------------------
  "aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
  "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
  "aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
  "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
  "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
  "aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
  "aten::max(Tensor self) -> Tensor",
  "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
  "aten::min(Tensor self) -> Tensor",
  "aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
  "aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
  "aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
  "aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
  "aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)",
  "aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
  "aten::var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)",
  "aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
  "aten::any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
  "aten::any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
  "aten::any(Tensor self) -> Tensor",
  "aten::all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
  "aten::all(Tensor self) -> Tensor",
  "aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor",
  "aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",

  // --- Pooling and resizing ------------------------------------------------------------------------
  "aten::max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, bool ceil_mode=False) -> Tensor",
  "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
  "aten::max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor",
  "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
  "aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
  "aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True) -> Tensor",
  "aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
  "aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
  "aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
  "aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
  "aten::_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
  "aten::adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
  "aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
  "aten::upsample_nearest1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
  "aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
  "aten::upsample_nearest3d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
  "aten::upsample_linear1d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor",
  "aten::upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor",
  "aten::upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor",
  "aten::upsample_trilinear3d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor",
  "aten::upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor",
  "aten::upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor",
  "aten::upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor",
  "aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
  "aten::pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor",
  "aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor",

  // --- Shapes and views ----------------------------------------------------------------------------
  "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
  "aten::view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)",
  "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
  "aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor",
  "aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)",
  "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
  "aten::t(Tensor(a) self) -> Tensor(a)",
  "aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
  "aten::unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)",
  "aten::squeeze(Tensor(a) self) -> Tensor(a)",
  "aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
  "aten::squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
  "aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
  "aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
  "aten::concat(Tensor[] tensors, int dim=0) -> Tensor",
  "aten::stack(Tensor[] tensors, int dim=0) -> Tensor",
  "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
  "aten::split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
  "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
  "aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
  "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)",
  "aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
  "aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
  "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
  "aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)",
  "aten::repeat(Tensor self, SymInt[] repeats) -> Tensor",
  "aten::flip(Tensor self, int[] dims) -> Tensor",
  "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
  "aten::index_select(Tensor self, int dim, Tensor index) -> Tensor",
  "aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
  "aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
  "aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
  "aten::tril(Tensor self, int diagonal=0) -> Tensor",
  "aten::triu(Tensor self, int diagonal=0) -> Tensor",

  // --- Elementwise ---------------------------------------------------------------------------------
  "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
  "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
  "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
  "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
  "aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
  "aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
  "aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
  "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::mul.Scalar(Tensor self, Scalar other) -> Tensor",
  "aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
  "aten::div.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::div.Scalar(Tensor self, Scalar other) -> Tensor",
  "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
  "aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",
  "aten::floor_divide(Tensor self, Tensor other) -> Tensor",
  "aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor",
  "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
  "aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
  "aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
  "aten::maximum(Tensor self, Tensor other) -> Tensor",
  "aten::minimum(Tensor self, Tensor other) -> Tensor",
  "aten::sqrt(Tensor self) -> Tensor",
  "aten::rsqrt(Tensor self) -> Tensor",
  "aten::exp(Tensor self) -> Tensor",
  "aten::log(Tensor self) -> Tensor",
  "aten::erf(Tensor self) -> Tensor",
  "aten::abs(Tensor self) -> Tensor",
  "aten::neg(Tensor self) -> Tensor",
  "aten::reciprocal(Tensor self) -> Tensor",
  "aten::sin(Tensor self) -> Tensor",
  "aten::cos(Tensor self) -> Tensor",
  "aten::floor(Tensor self) -> Tensor",
  "aten::ceil(Tensor self) -> Tensor",
  "aten::round(Tensor self) -> Tensor",
  "aten::sign(Tensor self) -> Tensor",
  "aten::lgamma(Tensor self) -> Tensor",
  "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
  "aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
  "aten::clamp_min(Tensor self, Scalar min) -> Tensor",
  "aten::clamp_max(Tensor self, Scalar max) -> Tensor",
  "aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
  "aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
  "aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
  "aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor",
  "aten::eq.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::eq.Scalar(Tensor self, Scalar other) -> Tensor",
  "aten::ne.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::ne.Scalar(Tensor self, Scalar other) -> Tensor",
  "aten::lt.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::lt.Scalar(Tensor self, Scalar other) -> Tensor",
  "aten::le.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::le.Scalar(Tensor self, Scalar other) -> Tensor",
  "aten::gt.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::gt.Scalar(Tensor self, Scalar other) -> Tensor",
  "aten::ge.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::ge.Scalar(Tensor self, Scalar other) -> Tensor",
  "aten::logical_not(Tensor self) -> Tensor",
  "aten::logical_and(Tensor self, Tensor other) -> Tensor",
  "aten::__and__.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::__or__.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::__xor__.Tensor(Tensor self, Tensor other) -> Tensor",
  "aten::logical_or(Tensor self, Tensor other) -> Tensor",
  "aten::logical_xor(Tensor self, Tensor other) -> Tensor",
  "aten::bitwise_not(Tensor self) -> Tensor",
  "aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
  "aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
  "aten::addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
  "aten::addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",

  // --- Creation ------------------------------------------------------------------------------------
  "aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
  "aten::scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
  "aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
  "aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
  "aten::empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
  "aten::new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "aten::new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
  "aten::new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",

  // --- Copies, casts, dropout ----------------------------------------------------------------------
  "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
  "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
  "aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
  "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
  "aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
  "aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
  "aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
  "aten::type_as(Tensor self, Tensor other) -> Tensor",
  "aten::copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
  "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
  "aten::detach(Tensor(a) self) -> Tensor(a)",
  "aten::alias(Tensor(a) self) -> Tensor(a)",
  "aten::lift_fresh_copy(Tensor self) -> Tensor",
  "aten::dropout(Tensor input, float p, bool train) -> Tensor",
  "aten::dropout_(Tensor(a!) self, float p, bool train) -> Tensor(a!)",
  "aten::slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor",
  "aten::select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor",
  "aten::fill.Scalar(Tensor self, Scalar value) -> Tensor",
  "aten::fill.Tensor(Tensor self, Tensor value) -> Tensor",
  "aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
  "aten::fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)",
  "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",

  // --- Symbolic sizes and assertions ---------------------------------------------------------------
  "aten::sym_size.int(Tensor self, int dim) -> SymInt",
  "aten::sym_stride.int(Tensor self, int dim) -> SymInt",
  "aten::sym_numel(Tensor self) -> SymInt",
  "aten::_assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, ScalarType? dtype=None, *, Device? device=None, Layout? layout=None) -> ()",
  "aten::_assert_scalar(Scalar self, str assert_msg) -> ()",
  "aten::_assert_async.msg(Tensor self, str assert_msg) -> ()",
  "aten::sym_constrain_range(Scalar size, *, int? min=None, int? max=None) -> ()",
  "aten::sym_constrain_range_for_size(Scalar size, *, int? min=None, int? max=None) -> ()",
};
// clang-format on

struct Table {
  std::vector<OpSchema> schemas;
  std::unordered_map<std::string, size_t> by_name;
};

const Table& table() {
  static const Table t = [] {
    Table out;
    for (const char* text : kSchemas) {
      OpSchema s = parse_op_schema(text);
      std::string key = s.op.to_string();
      out.by_name.emplace(key, out.schemas.size());
      out.schemas.push_back(std::move(s));
    }
    return out;
  }();
  return t;
}

}  // namespace

const OpSchema* find_op_schema(const ir::OpName& op) {
  const Table& t = table();
  auto it = t.by_name.find(op.to_string());
  return it == t.by_name.end() ? nullptr : &t.schemas[it->second];
}

const std::vector<OpSchema>& known_op_schemas() { return table().schemas; }

}  // namespace kiln::frontend
