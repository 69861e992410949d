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
#include <map>
#include <mutex>
#include <utility>

#include "engine/backends/cuda/graph_timer.h"
#include "engine/backends/cuda/linalg/conv_common.h"
#include "engine/backends/cuda/linalg/conv_graph_plan.h"
#include "engine/backends/cuda/linalg/conv_plan_data.h"
#include "engine/backends/cuda/linalg/post_ops.h"
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
  explicit GraphConvKernel(const LayerInfo& info) : p_(info.params<ConvolutionParams>()) {
    const Layer& l = *info.layer;
    dtype_ = info.outputs[0].dtype;
    w_dims_ = l.weights[0].value.sizes();
    KILN_CHECK(!p_.transposed && w_dims_.size() == 4, Internal, "cudnn_graph: layer '", l.name,
               "' is not a 2-D forward convolution");
    weight_ = upload(to_krsc(l.weights[0].value), dtype_);
    const bool has_bias = l.weights.size() > 1 && l.weights[1].defined();
    if (has_bias) bias_ = upload(l.weights[1].value, dtype_);
    spec_.dtype = dtype_;
    spec_.w = w_dims_;
    auto two = [](const std::vector<int64_t>& v, int64_t fill) {
      return std::vector<int64_t>{v.size() > 0 ? v[0] : fill, v.size() > 1 ? v[1] : fill};
    };
    spec_.padding = two(p_.pre_padding, 0);
    spec_.stride = two(p_.stride, 1);
    spec_.dilation = two(p_.dilation, 1);
    tuned_.dtype = static_cast<int64_t>(dtype_);
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
      fuse(epilogue, has_bias, residual_like_output(info));
      if (!concrete) break;
      cands = ConvGraphPlan::candidates(cudnn_handle(), spec_for(xd, yd), kWorkspace, want, rank);
      if (!cands.empty()) break;
    }
    if (!concrete) return;
    // cuDNN must have an engine for the graph, or the builder takes another tactic.
    KILN_CHECK(!cands.empty(), Unsupported, "convolution '", l.name,
               "': cuDNN's graph API has no engine for it");
    const size_t pick = tune_now ? tune(info, cands) : 0;
    // The opt shape's plan serves every context on this thread (see the file comment).
    plans_[{cudnn_handle(), xd}] = std::move(cands[pick]);
  }

  size_t workspace_size() const override { return kWorkspace; }
  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<GraphConvState>(); }
  std::vector<uint8_t> plan_data() const override {
    return has_tuned_ ? encode_conv_plan_data(tuned_) : std::vector<uint8_t>{};
  }

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    if (y.numel() == 0) return;
    auto* state = static_cast<GraphConvState*>(args.state);
    const void* z = spec_.residual ? args.inputs[1].data : nullptr;
    KILN_CHECK(
        aligned16({x.data, y.data, z, args.workspace}), Unsupported, "convolution (cuda tactic ",
        "'cudnn_graph'): a buffer not 16-byte aligned (a view at an element offset), which cuDNN's graph "
        "engines do not run correctly");
    cudnnHandle_t h = cudnn_handle();
    GraphConvState::Entry& e = state->plans[x.dims];
    if (e.handle != h) e = {h, plan_for(h, x.dims, y.dims)};
    KILN_CUDNN_CHECK(cudnnSetStream(h, stream_of(args)));
    KILN_CUDNN_CHECK(e.plan->execute(h, x.data, weight_.data(), y.data, bias_.data(), z, args.workspace));
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
      spec_.alpha2 = static_cast<float>(ops[i].scale);
      ++i;
    }
    if (epilogue && dtype_ == DType::Float16 && i == (spec_.residual ? 1u : 0u) && i < ops.size() &&
        ops[i].kind == PostOp::Activation && ops[i].activation.kind == ActivationKind::Relu) {
      spec_.relu = true;
      ++i;
    }
    post_ = PostOpPass(ops, i, spec_.bias ? nullptr : bias_.data(), 1, spec_.residual ? 2 : 1, dtype_, true);
  }

  /// Whether the first residual (input 1) has the output's dtype and dims at every shape: the graph reads it
  /// as a tensor like y (a broadcast residual stays in the post-op pass).
  static bool residual_like_output(const LayerInfo& info) {
    if (info.inputs.size() < 2) return false;
    const TensorInfo &r = info.inputs[1], &y = info.outputs[0];
    return r.dtype == y.dtype && r.min == y.min && r.opt == y.opt && r.max == y.max && r.format == y.format;
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
      size_t es = dtype_size(dtype_);
      DeviceBuffer x(static_cast<size_t>(numel(xd)) * es), y(static_cast<size_t>(numel(yd)) * es),
          z(spec_.residual ? static_cast<size_t>(numel(yd)) * es : 0), ws(kWorkspace);
      KILN_CUDA_CHECK(cudaMemset(x.data(), 0, static_cast<size_t>(numel(xd)) * es));
      cudnnHandle_t h = cudnn_handle();
      std::vector<float> ms(cands.size(), -1.0f);
      for (size_t c = 0; c < cands.size(); ++c) {
        try {
          ms[c] = graph_time_ms([&](cudaStream_t s) {
            KILN_CUDNN_CHECK(cudnnSetStream(h, s));
            KILN_CUDNN_CHECK(
                cands[c]->execute(h, x.data(), weight_.data(), y.data(), bias_.data(), z.data(), ws.data()));
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
  DType dtype_ = DType::Float16;
  Dims w_dims_;
  DeviceBuffer weight_, bias_;
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

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<GraphConvKernel>(layer); }

}  // namespace

void register_conv_graph(KernelTable& rows) {
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
