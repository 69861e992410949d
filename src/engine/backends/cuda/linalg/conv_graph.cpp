// Tactic "cudnn_graph": fp16 / bf16 2-D forward convolutions, channels-last end to end (as "cudnn_nhwc"),
// through cuDNN's graph API (conv_graph_plan.h). The graph takes the bias and the longest prefix of the
// post-op chain of the form [residual Sum]? [ReLU]? (one runtime-fusion engine): the Sum only when the
// residual has the output's dtype and dims at every shape (a broadcast one is read by the post-op pass), the
// ReLU only in fp16 (in bf16 cuDNN's fused ReLU turned NaN into 0 on an H100, cuDNN 9.19: the sweep's
// nonfinite_relu@bf16; torch.relu keeps NaN) and only right after the convolution or the Sum. Whatever the
// graph does not take runs in the post-op pass. When cuDNN has no engine for that graph at the opt shape the
// graph is the convolution alone (the bias and every post-op in the pass). Registered ahead of the legacy-API
// NHWC tactics: device time decides between them when the builder times tactics, and within noise (or
// untimed) the graph API wins on the host's cost per call (6-12 us against 34-125 us on an H100).
//
// Tactic "cudnn_int8" (Tactic::int8, offered to the layers the INT8 policy allows: int8_policy.h): the same
// graph in INT8, y = relu(conv(x, w) * scale + bias + alpha2 z) with s8 x and w and int32 sums, taken whole
// (applies_int8: [Sum]? [ReLU]? after the convolution, nothing for a post-op pass). Every INT8 tensor is s8
// with the step amax / 127 of its range (DynamicRange::symmetric_scale; Backend::int8_unsigned is false).
//   x       s8, or floating: then quantized by the kernel into its workspace (fp8_quantize.h) first;
//   w       s8, symmetric, one step per output channel (ops::quantize_per_channel, a Q/DQ program's scales);
//   scale   fp32 per output channel: x's step x w's step / y's step (1 for a floating y);
//   bias    fp32, over y's step; z (the residual) like y's dims, floating or s8, added as it is: its factor f
//           (the Sum's scale x z's step (1 floating) / y's step) divides scale and bias and multiplies the
//           result after the ReLU (cuDNN has no INT8 engine for a residual add with an alpha2: post_scale);
//   y       floating, or s8 when the builder keeps it INT8 (its readers are INT8 convolutions: cuDNN rounds
//           to nearest even and saturates); its post-ops are ReLU, which commutes with the scale.
//
// Engine configurations: when the builder times tactics (LayerInfo::tune) the kernel times up to
// kTuneCandidates of cuDNN's heuristic candidates at the opt shape in device time (graph_timer.h) and keeps
// the fastest (the heuristic's first unless another is kTuneMargin faster); the plan data records its rank in
// the heuristic's list (conv_plan_data.h, layout 2). Other shapes, untimed builds and a rank the loaded
// cuDNN no longer offers take the heuristic's first. Kernel creation fails (the builder then takes the next
// tactic) when cuDNN has no engine even for the convolution alone at the opt shape.
//
// Plans: a plan is finalized for one cuDNN handle (one per thread), and finalizing a runtime-fusion engine
// compiles its kernel (tens to hundreds of ms), so the kernel keeps its plans per (handle, input dims),
// shared by every context that runs on that thread: the opt shape's plan is made at creation (the build, or
// the plan's loading, pays it), other threads and shapes make theirs at their first execute (before any
// CUDA-graph recording), and a second context on a thread (kiln bench's graph and profile runs, a module
// called again) makes none. Pointers must be 16-byte aligned, as plans declare them (every buffer of a plan
// is: the arena, bindings through their reformats); a call with others (a view at an element offset) is an
// error, because cuDNN's engines gave wrong results for plans declaring element alignment (an H100,
// cuDNN 9.19).

#include "engine/backends/cuda/cuda_util.h"

#ifdef KILN_HAVE_CUDNN
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "engine/backends/cuda/graph_timer.h"
#include "engine/backends/cuda/linalg/conv_common.h"
#include "engine/backends/cuda/linalg/conv_graph_plan.h"
#include "engine/backends/cuda/linalg/conv_plan_data.h"
#include "engine/backends/cuda/linalg/fp8_quantize.h"
#include "engine/backends/cuda/linalg/post_ops.h"
#include "engine/ops/common.h"
#include "engine/ops/quantize.h"
#include "engine/ops/shape_inference.h"
#include "kiln/support/logging.h"

namespace kiln::engine::cuda {
namespace {

constexpr size_t kWorkspace = size_t{64} << 20;
constexpr int kTuneCandidates = 6;
/// Another engine configuration replaces the heuristic's first only when it is this much faster.
constexpr float kTuneMargin = 0.03f;
/// The largest heuristic rank plan data may name.
constexpr int64_t kMaxRank = 15;
/// ConvPlanData::layout of this tactic.
constexpr int64_t kGraphLayout = 2;

/// Whether `t` is stored INT8 (signed: this backend keeps no u8 tensors, Backend::int8_unsigned) with a range
/// to read it by.
bool int8_readable(const TensorInfo& t) { return t.dtype == DType::Int8 && t.range && t.range->usable(); }

/// Whether every pointer is aligned to 16 bytes (what plans declare).
bool aligned16(std::initializer_list<const void*> pointers) {
  for (const void* p : pointers) {
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
  }
  return true;
}

/// A context's plans per input dims (taken from the kernel's, see the file comment), with the handle they
/// were finalized for: a context called from another thread looks its plan up again.
struct GraphConvState : KernelState {
  struct Entry {
    cudnnHandle_t handle = nullptr;
    std::shared_ptr<ConvGraphPlan> plan;
  };
  std::map<Dims, Entry> plans;
};

class GraphConvKernel : public Kernel {
 public:
  /// `int8`: the "cudnn_int8" tactic (see the file comment).
  GraphConvKernel(const LayerInfo& info, bool int8) : p_(info.params<ConvolutionParams>()), int8_(int8) {
    const Layer& l = *info.layer;
    dtype_ = info.outputs[0].dtype;
    w_dims_ = l.weights[0].value.sizes();
    KILN_CHECK(!p_.transposed && w_dims_.size() == 4, Internal, "cudnn_graph: layer '", l.name,
               "' is not a 2-D forward convolution");
    const bool has_bias = l.weights.size() > 1 && l.weights[1].defined();
    if (int8_) {
      quantize_weights(info, has_bias);
    } else {
      weight_ = upload(to_krsc(l.weights[0].value), dtype_);
      if (has_bias) bias_ = upload(l.weights[1].value, dtype_);
      spec_.dtype = dtype_;
    }
    spec_.w = w_dims_;
    auto two = [](const std::vector<int64_t>& v, int64_t fill) {
      return std::vector<int64_t>{v.size() > 0 ? v[0] : fill, v.size() > 1 ? v[1] : fill};
    };
    spec_.padding = two(p_.pre_padding, 0);
    spec_.stride = two(p_.stride, 1);
    spec_.dilation = two(p_.dilation, 1);
    tuned_.dtype = static_cast<int64_t>(spec_.dtype);
    tuned_.layout = kGraphLayout;
    const Dims& xd = info.inputs[0].opt;
    const Dims& yd = info.outputs[0].opt;
    const bool concrete = numel(xd) > 0 && numel(yd) > 0;
    // A plan's stored engine configuration (its rank) is only a preference: decoded first so that the probe
    // below finalizes just that configuration.
    if (info.plan_data) use_stored(info);
    const bool tune_now = info.tune && !info.plan_data;
    const int want = tune_now ? kTuneCandidates : 1;
    const int rank = has_tuned_ ? static_cast<int>(tuned_.algo) : -1;
    // The graph takes the bias and the chain's prefix [Sum]? [ReLU]? (see the file comment); when cuDNN has
    // no engine for that graph at the opt shape, the convolution alone.
    std::vector<std::unique_ptr<ConvGraphPlan>> cands;
    for (bool epilogue : {true, false}) {
      fuse(epilogue, has_bias, residual_like_output(info, int8_));
      if (!concrete) break;
      cands = ConvGraphPlan::candidates(cudnn_handle(), spec_for(xd, yd), kWorkspace, want, rank);
      if (!cands.empty() || int8_) break;  // (INT8: the whole chain in the graph, or no kernel)
    }
    if (!concrete) return;
    // cuDNN must have an engine for the graph, or the builder takes another tactic.
    KILN_CHECK(!cands.empty(), Unsupported, "convolution '", l.name, "': cuDNN's graph API has no engine for it",
               int8_ ? std::string(" in INT8 (output ") + dtype_name(spec_.y_dtype) +
                           (spec_.residual ? std::string(", residual ") + dtype_name(spec_.z_dtype) : "") + ")"
                     : std::string());
    const size_t pick = tune_now ? tune(info, cands) : 0;
    // The opt shape's plan serves every context on this thread (see the file comment).
    plans_[{cudnn_handle(), xd}] = std::move(cands[pick]);
  }

  size_t workspace_size() const override { return kWorkspace + quantized_bytes_; }
  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<GraphConvState>(); }
  std::vector<uint8_t> plan_data() const override {
    return has_tuned_ ? encode_conv_plan_data(tuned_) : std::vector<uint8_t>{};
  }

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    if (y.numel() == 0) return;
    auto* state = static_cast<GraphConvState*>(args.state);
    const void* z = spec_.residual ? args.inputs[1].data : nullptr;
    KILN_CHECK(aligned16({x.data, y.data, z, args.workspace}), Unsupported, "convolution (cuda tactic '",
               int8_ ? "cudnn_int8" : "cudnn_graph",
               "'): a buffer not 16-byte aligned (a view at an element offset), which cuDNN's graph engines do not "
               "run correctly");
    cudnnHandle_t h = cudnn_handle();
    GraphConvState::Entry& e = state->plans[x.dims];
    if (e.handle != h) e = {h, plan_for(h, x.dims, y.dims)};
    const void* input = x.data;
    if (quantized_bytes_ > 0) {  // a floating input: quantized into the workspace behind cuDNN's
      auto* q = static_cast<int8_t*>(args.workspace) + kWorkspace;
      launch_quantize_s8(x.data, dcode(x.dtype), x.numel(), 1.0f / input_scale_, q, stream_of(args));
      check_launch("INT8 convolution input quantization");
      input = q;
    }
    KILN_CUDNN_CHECK(cudnnSetStream(h, stream_of(args)));
    KILN_CUDNN_CHECK(e.plan->execute(h, input, weight_.data(), y.data, bias_.data(), z, args.workspace,
                                     scale_.data(), post_scale_.data()));
    if (!post_.empty()) post_.run(args, "convolution post-ops");
  }

 private:
  /// Sets what the graph computes and the post-op pass for the rest. With `epilogue` the graph takes the
  /// bias, a leading residual Sum and then a ReLU (not in bf16: cuDNN's fused bf16 ReLU turns NaN into 0);
  /// without, the convolution alone and the pass everything else.
  void fuse(bool epilogue, bool has_bias, bool residual_like_output) {
    const auto& ops = p_.post_ops;
    size_t i = 0;
    spec_.bias = epilogue && has_bias;
    spec_.residual = spec_.relu = false;
    if (epilogue && residual_like_output && i < ops.size() && ops[i].kind == PostOp::Sum) {
      spec_.residual = true;
      spec_.alpha2 = int8_ ? 1.0f : static_cast<float>(ops[i].scale);  // (INT8: the factor is post_scale_)
      spec_.post_scale = int8_ && residual_factor_ != 1.0f;
      ++i;
    }
    if (epilogue && (dtype_ == DType::Float16 || int8_) && i == (spec_.residual ? 1u : 0u) && i < ops.size() &&
        ops[i].kind == PostOp::Activation && ops[i].activation.kind == ActivationKind::Relu) {
      spec_.relu = true;
      ++i;
    }
    if (int8_) {
      KILN_CHECK(i == ops.size(), Unsupported, "INT8 convolution: cuDNN's graph takes only [Sum]? [ReLU]?");
      return;
    }
    post_ = PostOpPass(ops, i, spec_.bias ? nullptr : bias_.data(), 1, spec_.residual ? 2 : 1, dtype_, true);
  }

  /// Whether the first residual (input 1) has the output's dims at every shape, and its dtype (INT8: any
  /// floating dtype, or INT8 with a range, whatever y's): the graph reads it as a tensor like y (a broadcast
  /// residual stays in the post-op pass).
  static bool residual_like_output(const LayerInfo& info, bool int8) {
    if (info.inputs.size() < 2) return false;
    const TensorInfo &r = info.inputs[1], &y = info.outputs[0];
    const bool dtype_ok = int8 ? is_floating(r.dtype) || int8_readable(r) : r.dtype == y.dtype;
    return dtype_ok && r.min == y.min && r.opt == y.opt && r.max == y.max && r.format == y.format;
  }

  /// INT8: the weights quantized per output channel (symmetric, s8), the per-channel scale that turns the
  /// int32 sums into the output (input step x weight step / output step, 1 for a floating output), the bias
  /// in fp32 over the output step, the residual's factor, and the input's quantization when it is floating.
  void quantize_weights(const LayerInfo& info, bool has_bias) {
    const Layer& l = *info.layer;
    const TensorInfo &x = info.inputs[0], &y = info.outputs[0];
    KILN_CHECK(x.range && x.range->usable(), Internal, "INT8 convolution '", l.name, "' without an input range");
    input_scale_ = x.range->symmetric_scale();
    const float out_scale = y.dtype == DType::Int8 ? y.range->symmetric_scale() : 1.0f;
    const int64_t k = w_dims_[0];
    const std::vector<float> w = ops::host_floats(l.weights[0].value);
    const ops::QuantizedWeights q =
        ops::quantize_per_channel(w, 1, k, static_cast<int64_t>(w.size()) / k, l.weights[0].int8_scales);
    HostTensor codes(DType::Int8, w_dims_);
    std::memcpy(codes.mutable_data(), q.values.data(), q.values.size());
    weight_ = upload(to_krsc(codes), DType::Int8);
    std::vector<float> scale(static_cast<size_t>(k)), bias(static_cast<size_t>(k), 0.0f);
    // y = f relu(conv * scale / f + bias / f + z) with f the residual's factor: its step (1 floating) times the
    // Sum's scale over y's step (positive: applies_int8), which cuDNN's INT8 engines take only after the
    // ReLU (post_scale_, conv_graph_plan.h).
    spec_.dtype = DType::Int8;
    spec_.y_dtype = y.dtype;
    if (info.inputs.size() > 1) {
      const TensorInfo& r = info.inputs[1];
      spec_.z_dtype = r.dtype;
      residual_factor_ = static_cast<float>(p_.post_ops.at(0).scale) *
                         (r.dtype == DType::Int8 ? r.range->symmetric_scale() : 1.0f) / out_scale;
      post_scale_ = upload(
          HostTensor::from_floats(std::vector<float>(static_cast<size_t>(k), residual_factor_), {k}),
          DType::Float32);
    }
    const std::vector<float> b = has_bias ? ops::host_floats(l.weights[1].value) : std::vector<float>{};
    for (int64_t c = 0; c < k; ++c) {
      scale[c] = input_scale_ * q.scales[c] / out_scale / residual_factor_;
      if (has_bias) bias[c] = b[c] / out_scale / residual_factor_;
    }
    scale_ = upload(HostTensor::from_floats(scale, {k}), DType::Float32);
    bias_ = upload(HostTensor::from_floats(bias, {k}), DType::Float32);
    if (x.dtype != DType::Int8) quantized_bytes_ = (static_cast<size_t>(numel(x.max)) + 255) / 256 * 256;
  }

  ConvGraphSpec spec_for(const Dims& xd, const Dims& yd) const {
    ConvGraphSpec s = spec_;
    s.x = xd;
    s.y = yd;
    return s;
  }

  /// The plan for handle `h` and input dims `xd`: the kernel's, else made now with the tuned engine
  /// configuration at the tuned dims or the heuristic's first.
  std::shared_ptr<ConvGraphPlan> plan_for(cudnnHandle_t h, const Dims& xd, const Dims& yd) const {
    std::lock_guard<std::mutex> lock(plans_mutex_);
    std::shared_ptr<ConvGraphPlan>& plan = plans_[{h, xd}];
    if (plan) return plan;
    const int rank = has_tuned_ && xd == tuned_.input ? static_cast<int>(tuned_.algo) : -1;
    auto cands = ConvGraphPlan::candidates(h, spec_for(xd, yd), kWorkspace, 1, rank);
    KILN_CHECK(!cands.empty(), Unsupported, "cuDNN's graph API has no engine for a convolution of input ",
               dims_str(xd));
    plan = std::move(cands.front());
    return plan;
  }

  /// Times the candidates at the opt shape in device time, records the fastest (see the file comment) and
  /// returns its index.
  size_t tune(const LayerInfo& info, std::vector<std::unique_ptr<ConvGraphPlan>>& cands) {
    const Dims& xd = info.inputs[0].opt;
    const Dims& yd = info.outputs[0].opt;
    const std::string& name = info.layer->name;
    if (cands.size() == 1) {
      record(xd, cands[0]->rank());
      return 0;
    }
    try {
      const size_t xs = dtype_size(int8_ ? DType::Int8 : dtype_), ys = dtype_size(dtype_),
                   zs = dtype_size(int8_ ? spec_.z_dtype : dtype_);
      DeviceBuffer x(static_cast<size_t>(numel(xd)) * xs), y(static_cast<size_t>(numel(yd)) * ys),
          z(spec_.residual ? static_cast<size_t>(numel(yd)) * zs : 0), ws(kWorkspace);
      KILN_CUDA_CHECK(cudaMemset(x.data(), 0, static_cast<size_t>(numel(xd)) * xs));
      cudnnHandle_t h = cudnn_handle();
      std::vector<float> ms(cands.size(), -1.0f);
      for (size_t c = 0; c < cands.size(); ++c) {
        try {
          ms[c] = graph_time_ms([&](cudaStream_t s) {
            KILN_CUDNN_CHECK(cudnnSetStream(h, s));
            KILN_CUDNN_CHECK(cands[c]->execute(h, x.data(), weight_.data(), y.data(), bias_.data(), z.data(),
                                               ws.data(), scale_.data(), post_scale_.data()));
          });
        } catch (const Error& e) {
          (void)cudaGetLastError();
          KILN_DEBUG("engine: convolution '", name, "': engine configuration ", cands[c]->rank(),
                     " did not run (", e.message(), ")");
        }
      }
      cudnnSetStream(h, nullptr);
      size_t best = 0;
      for (size_t c = 1; c < cands.size(); ++c) {
        if (ms[c] >= 0 && (ms[best] < 0 || ms[c] < ms[best])) best = c;
      }
      if (ms[best] < 0) return 0;  // none ran: the heuristic's first
      if (ms[0] >= 0 && ms[best] > (1.0f - kTuneMargin) * ms[0]) best = 0;
      record(xd, cands[best]->rank());
      KILN_INFO("engine: convolution '", name, "': ", cands.size(),
                " cuDNN graph engine configurations timed, chose #", cands[best]->rank(), " (", ms[best],
                " ms; heuristic's first ", ms[0], " ms)");
      return best;
    } catch (const Error& e) {
      (void)cudaGetLastError();
      cudnnSetStream(cudnn_handle(), nullptr);
      KILN_DEBUG("engine: convolution '", name, "': timing cuDNN graph engines failed (", e.message(),
                 "); the heuristic's first");
      return 0;
    }
  }

  void record(const Dims& xd, int rank) {
    tuned_.algo = rank;
    tuned_.input = xd;
    has_tuned_ = true;
    count_conv_event(ConvEvent::Tuned);
  }

  /// Takes the rank the plan recorded when it was made for this configuration and opt dims; otherwise the
  /// heuristic's first (a debug note: the rank is only a preference).
  void use_stored(const LayerInfo& info) {
    std::string why;
    ConvPlanData d;
    if (!decode_conv_plan_data(*info.plan_data, kMaxRank + 1, 1, &d, &why)) {
      why = "malformed: " + why;
    } else if (d.dtype != tuned_.dtype || d.layout != kGraphLayout || d.tf32 != 0 ||
               d.input != info.inputs[0].opt) {
      why = "made for another shape or configuration";
    } else {
      tuned_ = d;
      has_tuned_ = true;
      count_conv_event(ConvEvent::Stored);
      return;
    }
    count_conv_event(ConvEvent::Rejected);
    KILN_DEBUG("engine: layer '", info.layer->name, "': the plan's cuDNN graph engine is not usable (", why,
               "); using cuDNN's heuristic");
  }

  ConvolutionParams p_;
  bool int8_ = false;
  DType dtype_ = DType::Float16;  // the output's
  Dims w_dims_;
  DeviceBuffer weight_, bias_, scale_, post_scale_;  // (scale_, post_scale_: INT8 only)
  float input_scale_ = 1.0f;            // INT8: the input's step
  float residual_factor_ = 1.0f;  // INT8: the Sum's scale x the residual's step over the output's (post_scale_)
  size_t quantized_bytes_ = 0;          // INT8 with a floating input: its quantized copy, behind cuDNN's workspace
  ConvGraphSpec spec_;  // without x and y dims
  PostOpPass post_;     // what the graph does not take
  // Plans per (cuDNN handle, input dims), shared by the contexts on the handle's thread (plan_for).
  mutable std::mutex plans_mutex_;
  mutable std::map<std::pair<cudnnHandle_t, Dims>, std::shared_ptr<ConvGraphPlan>> plans_;
  ConvPlanData tuned_;  // dtype and layout; the tuned or stored rank and dims when has_tuned_
  bool has_tuned_ = false;
};

bool applies(const LayerInfo& layer, std::string* why) {
  if (!conv_applies_nhwc(layer, why)) return false;
  DType dt = layer.outputs[0].dtype;
  if (dt != DType::Float16 && dt != DType::BFloat16) return refuse(why, "dtype is not f16/bf16");
  return true;
}

/// The INT8 tactic: a 2-D forward convolution (no groups), its input with a range (floating or INT8), its
/// output floating or INT8 with a range, and a post-op chain the graph takes whole: [Sum]? [ReLU]?, the
/// residual like the output (its dims; floating or INT8 with a range).
bool applies_int8(const LayerInfo& layer, std::string* why) {
  const auto& p = layer.params<ConvolutionParams>();
  const TensorInfo &x = layer.inputs[0], &y = layer.outputs[0];
  if (p.transposed || p.groups != 1) return refuse(why, "transposed or grouped");
  if (p.pre_padding != p.post_padding) return refuse(why, "asymmetric padding");
  if (layer.layer->weights.empty() || !layer.layer->weights[0].defined() ||
      !is_floating(layer.layer->weights[0].value.dtype()) || layer.layer->weights[0].value.dim() != 4)
    return refuse(why, "no 2-D floating-point kernel weight");
  for (const auto* list : {&layer.inputs, &layer.outputs}) {
    for (const TensorInfo& t : *list) {
      if (t.max.size() != 4) return refuse(why, "NHWC needs 4-D tensors");
    }
  }
  if (!x.range || !x.range->usable()) return refuse(why, "no usable dynamic range on the input");
  auto storable = [](const TensorInfo& t) {
    return t.dtype == DType::Float16 || t.dtype == DType::BFloat16 || t.dtype == DType::Float32 ||
           int8_readable(t);
  };
  if (!storable(x) || !storable(y)) return refuse(why, "tensors neither f16/bf16/f32 nor INT8 with a range");
  const std::vector<PostOp>& ops = p.post_ops;
  size_t i = 0;
  if (i < ops.size() && ops[i].kind == PostOp::Sum) {
    if (layer.inputs.size() != 2) return refuse(why, "not one residual");
    const TensorInfo& r = layer.inputs[1];
    if (!storable(r) || r.min != y.min || r.opt != y.opt || r.max != y.max)
      return refuse(why, "a residual of other dims than the output");
    if (!(ops[i].scale > 0.0) || !std::isfinite(ops[i].scale))
      return refuse(why, "a residual scale that is not positive (it is applied after the ReLU)");
    ++i;
  }
  if (i < ops.size() && ops[i].kind == PostOp::Activation && ops[i].activation.kind == ActivationKind::Relu) ++i;
  if (i != ops.size()) return refuse(why, "post-ops other than [Sum]? [ReLU]? (cuDNN's INT8 graph takes them whole)");
  if (layer.inputs.size() != (ops.empty() || ops[0].kind != PostOp::Sum ? 1u : 2u))
    return refuse(why, "inputs other than the data and one residual");
  return true;
}

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<GraphConvKernel>(layer, false); }
std::unique_ptr<Kernel> create_int8(const LayerInfo& layer) {
  return std::make_unique<GraphConvKernel>(layer, true);
}

}  // namespace

void register_conv_graph(KernelTable& rows) {
  // (INT8 first: offered only where the build asks for INT8 and the policy allows the layer, and an untimed
  // build takes it there)
  KernelRow int8{.name = "cudnn_int8",
                 .kind = LayerKind::Convolution,
                 .applies = &applies_int8,
                 .create = &create_int8,
                 .formats = &all_channels_last};
  int8.int8 = true;
  rows.add(std::move(int8));
  rows.add({.name = "cudnn_graph",
            .kind = LayerKind::Convolution,
            .applies = &applies,
            .create = &create,
            .formats = &all_channels_last});
}

}  // namespace kiln::engine::cuda

#else

namespace kiln::engine::cuda {
// Built without cuDNN: no convolution kernels.
void register_conv_graph(KernelTable&) {}
}  // namespace kiln::engine::cuda

#endif
