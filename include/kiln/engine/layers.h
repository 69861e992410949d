#pragma once
// Layer kinds and their parameters: the vocabulary of engine::Network, shared by the builder, the plan
// format and every backend. Each parameter struct lists its fields once in visit(), which drives plan
// serialization, layer signatures (timing cache keys) and printing, so adding a field is one line.

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "kiln/support/dtype.h"

namespace kiln::engine {

/// Tensor dimensions; -1 marks a dimension only known at run time.
using Dims = std::vector<int64_t>;

/// Every layer kind. FusedPointwise and Reformat are made only by the builder (a chain of pointwise layers;
/// a change of activation memory format between kernels that disagree).
enum class LayerKind : uint8_t {
  Constant, Convolution, MatrixMultiply, Elementwise, Activation, Unary, Reduce, Softmax, Normalization,
  Shuffle, Concat, Slice, Gather, Scatter, Pooling, Resize, Select, Cast, Shape, Fill, TopK, Cumulative,
  Padding, Attention, NonZero, FusedPointwise, Reformat,
};
inline constexpr int kNumLayerKinds = static_cast<int>(LayerKind::Reformat) + 1;
/// "convolution", "matrix_multiply", ... (stable: used in plans, logs and timing-cache keys).
const char* layer_kind_name(LayerKind kind);

/// How an activation is laid out in memory between kernels. Plain is dense C order: every binding, and every
/// tensor a kernel reads or writes unless its tactic asks for another format. The others apply to tensors of
/// rank 3-5, [N, C, spatial...]:
///   Blocked8c / Blocked16c: [N, ceil(C/b), spatial..., b] with the channel tail zero-padded to the block b
///                           (oneDNN's nCw8c/nChw8c/nCdhw8c and their 16c forms);
///   ChannelsLast:           [N, spatial..., C] (nwc/nhwc/ndhwc).
/// Formats are chosen by the builder after tactic selection and recorded in the plan per tensor.
enum class TensorFormat : uint8_t { Plain, Blocked8c, Blocked16c, ChannelsLast };
inline constexpr int kNumTensorFormats = static_cast<int>(TensorFormat::ChannelsLast) + 1;
/// "plain", "blocked8c", "blocked16c", "channels_last".
const char* tensor_format_name(TensorFormat format);
/// Whether `format` can hold a tensor of rank `rank` (Plain: any; the others: 3-5).
bool format_applies(TensorFormat format, size_t rank);
/// Elements stored for a tensor of `dims` in `format` (blocked formats round C up to the block; dims < 0
/// count as 0).
int64_t format_numel(TensorFormat format, const std::vector<int64_t>& dims);
/// Offset (in elements) of the element with multi-index `index` of a tensor of `dims` stored in `format`.
int64_t format_offset(TensorFormat format, const std::vector<int64_t>& dims, const std::vector<int64_t>& index);

/// Binary elementwise operations (numpy broadcasting). Comparisons give Bool; And/Or/Xor take Bool.
enum class ElementwiseOp : uint8_t {
  Add, Sub, Mul, Div, FloorDiv, TruncDiv, Mod, Pow, Max, Min,
  Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, And, Or, Xor,
};
const char* elementwise_op_name(ElementwiseOp op);
bool is_comparison(ElementwiseOp op);
bool is_logical(ElementwiseOp op);

/// Activations; alpha/beta meanings per kind: LeakyRelu(alpha=slope), Elu(alpha), Selu(none),
/// Softplus(beta, alpha=threshold), HardSigmoid(alpha=slope, beta=offset), Clip(alpha=min, beta=max).
enum class ActivationKind : uint8_t {
  Relu, Sigmoid, Tanh, GeluErf, GeluTanh, Silu, HardSwish, HardSigmoid, LeakyRelu, Elu, Selu, Softplus,
  Softsign, Clip, Mish,
};
const char* activation_kind_name(ActivationKind kind);

/// Unary math. Not takes Bool; IsNan/IsInf give Bool; the rest keep the input dtype.
enum class UnaryOp : uint8_t {
  Exp, Log, Sqrt, Rsqrt, Abs, Neg, Recip, Erf, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Floor, Ceil,
  Round, Sign, Not, Expm1, Log1p, IsNan, IsInf,
};
const char* unary_op_name(UnaryOp op);

enum class ReduceOp : uint8_t { Sum, Mean, Max, Min, Prod, Any, All, ArgMax, ArgMin };
const char* reduce_op_name(ReduceOp op);

/// Visitor helper: v(name, field) for each field. Visitors accept int64_t, double, bool, std::string,
/// DType, enums (as their underlying integer), std::vector of those, and nested structs with visit().
#define KILN_VISIT_FIELDS(...) \
  template <typename V>        \
  void visit(V& v) { __VA_ARGS__; }

struct ConstantParams {
  KILN_VISIT_FIELDS((void)v)
};

/// An activation with its parameters (also used as a fused post-op).
struct ActivationParams {
  ActivationKind kind = ActivationKind::Relu;
  double alpha = 0.0;
  double beta = 0.0;
  KILN_VISIT_FIELDS(v("kind", kind); v("alpha", alpha); v("beta", beta))
};

/// One step after a convolution / matrix multiply, applied in order: an activation, or adding the next
/// extra layer input (a residual, same shape as the output) scaled by `scale`.
struct PostOp {
  enum Kind : uint8_t { Activation, Sum } kind = Activation;
  ActivationParams activation;
  double scale = 1.0;
  KILN_VISIT_FIELDS(v("kind", kind); v("activation", activation); v("scale", scale))
};

/// Convolution (or transposed convolution when `transposed`) over 1, 2 or 3 spatial dims.
/// Layer inputs: [x, residuals for Sum post-ops...]. Weights: [kernel, bias (may be undefined)].
/// Kernel layout: [O, I/groups, k...] (transposed: [I, O/groups, k...]). All vectors have one entry per
/// spatial dim.
struct ConvolutionParams {
  std::vector<int64_t> stride, pre_padding, post_padding, dilation, output_padding;
  int64_t groups = 1;
  bool transposed = false;
  std::vector<PostOp> post_ops;
  KILN_VISIT_FIELDS(v("stride", stride); v("pre_padding", pre_padding); v("post_padding", post_padding);
                    v("dilation", dilation); v("output_padding", output_padding); v("groups", groups);
                    v("transposed", transposed); v("post_ops", post_ops))
};

/// Batched matrix multiply with broadcasting over leading dims; both operands rank >= 2.
/// Layer inputs: [a, b (absent when weights[0] holds b), residuals for Sum post-ops...].
/// Weights: [b or undefined, bias [N] or undefined] (the builder moves constant operands here).
struct MatrixMultiplyParams {
  bool transpose_a = false;
  bool transpose_b = false;
  std::vector<PostOp> post_ops;
  KILN_VISIT_FIELDS(v("transpose_a", transpose_a); v("transpose_b", transpose_b); v("post_ops", post_ops))
};

struct ElementwiseParams {
  ElementwiseOp op = ElementwiseOp::Add;
  KILN_VISIT_FIELDS(v("op", op))
};

struct UnaryParams {
  UnaryOp op = UnaryOp::Exp;
  KILN_VISIT_FIELDS(v("op", op))
};

/// Reduction over `axes` (non-negative, sorted). ArgMax/ArgMin take exactly one axis and give Int64.
struct ReduceParams {
  ReduceOp op = ReduceOp::Sum;
  std::vector<int64_t> axes;
  bool keep_dims = false;
  KILN_VISIT_FIELDS(v("op", op); v("axes", axes); v("keep_dims", keep_dims))
};

/// Softmax (or log-softmax) along `axis`.
struct SoftmaxParams {
  int64_t axis = -1;
  bool log = false;
  KILN_VISIT_FIELDS(v("axis", axis); v("log", log))
};

/// Layer norm normalizes dims [axis, rank); group norm splits dim 1 into `groups` and normalizes each
/// group with the spatial dims; instance norm is group norm with groups == channels.
/// Weights: [scale or undefined, bias or undefined]; layer: shape of dims [axis, rank); group/instance: [C].
struct NormalizationParams {
  enum Kind : uint8_t { Layer, Group, Instance } kind = Layer;
  int64_t axis = -1;
  int64_t groups = 1;
  double epsilon = 1e-5;
  KILN_VISIT_FIELDS(v("kind", kind); v("axis", axis); v("groups", groups); v("epsilon", epsilon))
};

/// first_perm transpose, then reshape (when has_reshape; 0 copies the input dim, -1 is inferred; or taken
/// from the optional shape-tensor input 1), then second_perm transpose. Empty perms mean identity.
struct ShuffleParams {
  std::vector<int64_t> first_perm;
  bool has_reshape = false;
  std::vector<int64_t> reshape;
  std::vector<int64_t> second_perm;
  KILN_VISIT_FIELDS(v("first_perm", first_perm); v("has_reshape", has_reshape); v("reshape", reshape);
                    v("second_perm", second_perm))
};

struct ConcatParams {
  int64_t axis = 0;
  KILN_VISIT_FIELDS(v("axis", axis))
};

/// out[i] = in[start + i*stride] per dim. Optional shape-tensor inputs 1, 2, 3 override start, size,
/// stride. Start must be in range; stride may be negative; no clamping (converters normalize).
struct SliceParams {
  std::vector<int64_t> start, size, stride;
  KILN_VISIT_FIELDS(v("start", start); v("size", size); v("stride", stride))
};

/// Default: out = data[..., indices, ...] along axis (out rank = data rank - 1 + indices rank).
/// Elements: torch.gather (indices rank == data rank). Negative indices wrap; out of range is an error.
struct GatherParams {
  enum Mode : uint8_t { Default, Elements } mode = Default;
  int64_t axis = 0;
  KILN_VISIT_FIELDS(v("mode", mode); v("axis", axis))
};

/// torch.scatter / scatter_add along axis: inputs [data, indices (Int64/Int32), updates].
struct ScatterParams {
  enum Reduction : uint8_t { None, Add } reduction = None;
  int64_t axis = 0;
  KILN_VISIT_FIELDS(v("reduction", reduction); v("axis", axis))
};

/// Max/average pooling over the trailing spatial dims (1-3) of an [N, C, ...] input; when `adaptive`,
/// window/stride/padding are derived from `output_size` the way torch's adaptive pooling does.
struct PoolingParams {
  enum Kind : uint8_t { Max, Average } kind = Max;
  std::vector<int64_t> window, stride, pre_padding, post_padding, dilation;
  bool ceil_mode = false;
  bool count_include_pad = true;
  bool adaptive = false;
  std::vector<int64_t> output_size;
  KILN_VISIT_FIELDS(v("kind", kind); v("window", window); v("stride", stride); v("pre_padding", pre_padding);
                    v("post_padding", post_padding); v("dilation", dilation); v("ceil_mode", ceil_mode);
                    v("count_include_pad", count_include_pad); v("adaptive", adaptive);
                    v("output_size", output_size))
};

/// Resize of the trailing spatial dims of [N, C, ...]: to `output_size`, or by `scales` (torch semantics:
/// when scales are given they set the source-coordinate ratio), or to the shape-tensor input 1 (full
/// output dims). Nearest follows torch 'nearest' (floor); Linear is (bi/tri)linear.
struct ResizeParams {
  enum Mode : uint8_t { Nearest, Linear } mode = Nearest;
  std::vector<int64_t> output_size;
  std::vector<double> scales;
  bool align_corners = false;
  KILN_VISIT_FIELDS(v("mode", mode); v("output_size", output_size); v("scales", scales);
                    v("align_corners", align_corners))
};

struct SelectParams {
  KILN_VISIT_FIELDS((void)v)
};

struct CastParams {
  DType to = DType::Float32;
  KILN_VISIT_FIELDS(v("to", to))
};

struct ShapeParams {
  KILN_VISIT_FIELDS((void)v)
};

/// Constant: every element = value. Arange: start + i*delta along a 1-D output. Linspace: `dims[0]`
/// points from start to end inclusive. Optional inputs: 0 = shape tensor (output dims), 1 = start
/// scalar, 2 = delta (Arange) or end (Linspace) scalar; all evaluated on the host at shape time.
struct FillParams {
  enum Op : uint8_t { Constant, Arange, Linspace } op = Constant;
  DType dtype = DType::Float32;
  std::vector<int64_t> dims;
  double value = 0.0;  // Constant value, or Arange/Linspace start.
  double delta = 1.0;  // Arange step, or Linspace end.
  KILN_VISIT_FIELDS(v("op", op); v("dtype", dtype); v("dims", dims); v("value", value); v("delta", delta))
};

/// Top k along axis (sorted; ties keep the lower index first). Outputs: values, indices (Int64).
/// k may come from the optional shape-tensor input 1.
struct TopKParams {
  int64_t k = 1;
  int64_t axis = -1;
  bool largest = true;
  KILN_VISIT_FIELDS(v("k", k); v("axis", axis); v("largest", largest))
};

struct CumulativeParams {
  enum Op : uint8_t { Sum, Prod, Max, Min } op = Sum;
  int64_t axis = 0;
  bool exclusive = false;
  bool reverse = false;
  KILN_VISIT_FIELDS(v("op", op); v("axis", axis); v("exclusive", exclusive); v("reverse", reverse))
};

/// Pads each dim by pre[i] / post[i] elements (one entry per dim, >= 0).
struct PaddingParams {
  enum Mode : uint8_t { Constant, Reflect, Replicate, Circular } mode = Constant;
  std::vector<int64_t> pre, post;
  double value = 0.0;
  KILN_VISIT_FIELDS(v("mode", mode); v("pre", pre); v("post", post); v("value", value))
};

/// A strided view through which an Attention layer reads one operand from (or writes its output into) the
/// buffer of a layer tensor: logical element (b, h, s, d) of `dims` [B, H, S, D] is element
/// offset + b*strides[0] + h*strides[1] + s*strides[2] + d*strides[3] of the tensor's dense (C-order) buffer.
/// strides[3] is 1 (rows of D contiguous), the others >= 0. Empty dims: the tensor itself, dense (no view).
/// Made by the builder's attention-view pass (src/engine/core/attention_views.cpp), never by converters.
struct AttentionView {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  bool empty() const { return dims.empty(); }
  KILN_VISIT_FIELDS(v("dims", dims); v("strides", strides); v("offset", offset))
};

/// softmax(q k^T * scale + mask) v over inputs [q [..,Lq,E], k [..,Lk,E], v [..,Lk,Ev], mask?]; mask is
/// Bool (true = keep) or additive float, broadcastable to [..,Lq,Lk]. scale <= 0 means 1/sqrt(E).
/// Causal masks key j > query i (top-left aligned, as torch).
/// Views (rank-4 logical operands only): q_view/k_view/v_view read that operand through a strided view of
/// the layer input (whose dims are then those of the viewed buffer, not [..,L,E]); out_view writes the
/// output [B, H, Lq, Ev] into an output tensor of dims `out_dims` (a permutation of its elements: every
/// element is written once). The mask stays dense over the logical scores [B, H, Lq, Lk].
struct AttentionParams {
  bool causal = false;
  double scale = 0.0;
  bool has_mask = false;
  AttentionView q_view, k_view, v_view, out_view;
  std::vector<int64_t> out_dims;
  KILN_VISIT_FIELDS(v("causal", causal); v("scale", scale); v("has_mask", has_mask); v("q_view", q_view);
                    v("k_view", k_view); v("v_view", v_view); v("out_view", out_view); v("out_dims", out_dims))
  /// The view of operand i (0 q, 1 k, 2 v, 3 the output).
  const AttentionView& view(int i) const { return i == 0 ? q_view : i == 1 ? k_view : i == 2 ? v_view : out_view; }
  AttentionView& view(int i) { return i == 0 ? q_view : i == 1 ? k_view : i == 2 ? v_view : out_view; }
  bool has_views() const { return !q_view.empty() || !k_view.empty() || !v_view.empty() || !out_view.empty(); }
};

/// Indices of non-zero elements: Int64 [count, rank] (torch.nonzero layout); count is known only after
/// execution, so this output needs an OutputAllocator when it is a network output.
struct NonZeroParams {
  KILN_VISIT_FIELDS((void)v)
};

/// One instruction of a fused pointwise program. Operands name a layer input (kInput + i), a weight
/// (kWeight + i) or an earlier instruction's result (kTemp + i).
struct PointwiseInstr {
  static constexpr int64_t kInput = 0, kWeight = 1 << 20, kTemp = 2 << 20;
  LayerKind kind = LayerKind::Elementwise;  // Elementwise, Activation, Unary or Cast
  int64_t op = 0;                           // ElementwiseOp / UnaryOp; Activation uses `activation`
  ActivationParams activation;
  std::vector<int64_t> operands;
  KILN_VISIT_FIELDS(v("kind", kind); v("op", op); v("activation", activation); v("operands", operands))
};

/// A chain of pointwise layers made by the builder; evaluated per output element in float, the last
/// instruction's result is the output (broadcast over all inputs).
struct FusedPointwiseParams {
  std::vector<PointwiseInstr> program;
  KILN_VISIT_FIELDS(v("program", program))
};

/// A change of memory format (made by the builder, never by users): the output holds the input's values in
/// format `to`; the input is in format `from`. Dims and dtype are kept.
struct ReformatParams {
  TensorFormat from = TensorFormat::Plain;
  TensorFormat to = TensorFormat::Plain;
  KILN_VISIT_FIELDS(v("from", from); v("to", to))
};

using LayerParams =
    std::variant<ConstantParams, ConvolutionParams, MatrixMultiplyParams, ElementwiseParams, ActivationParams,
                 UnaryParams, ReduceParams, SoftmaxParams, NormalizationParams, ShuffleParams, ConcatParams,
                 SliceParams, GatherParams, ScatterParams, PoolingParams, ResizeParams, SelectParams, CastParams,
                 ShapeParams, FillParams, TopKParams, CumulativeParams, PaddingParams, AttentionParams,
                 NonZeroParams, FusedPointwiseParams, ReformatParams>;

/// The params alternative index of each LayerKind is the kind's value (checked in layers.cpp).
inline LayerKind params_kind(const LayerParams& params) { return static_cast<LayerKind>(params.index()); }

}  // namespace kiln::engine
