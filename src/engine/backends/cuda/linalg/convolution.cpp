// Convolution and transposed convolution through cuDNN's convolution API (legacy descriptor API).
// (fp16 / bf16 2-D forward convolutions first try the graph API tactic "cudnn_graph", conv_graph.cpp.)
//
// Tactics (rows in this order: without timing the first that applies wins):
//   "cudnn_nhwc_tf32", "cudnn_nhwc": 2-D convolutions (4-D tensors), not transposed, symmetric padding,
//       channels-last end to end: x, every residual and y are TensorFormat::ChannelsLast (the builder passes
//       them between such convolutions and channels-last pooling without reformats), weights uploaded in KRSC
//       order with a CUDNN_TENSOR_NHWC filter. Where the post-op chain is exactly [residual Sum]? [ReLU]?
//       (with a bias or not) it is one cudnnConvolutionBiasActivationForward call (y = act(conv(x) + alpha2 z
//       + bias)); cuDNN runs the identity activation only with IMPLICIT_PRECOMP_GEMM, so without ReLU the
//       call is fused only when that is the algorithm (else, and for other chains, conv then the post-op
//       pass).
//   "cudnn_tf32", "cudnn": NCHW (1-D convolutions as H = 1), transposed too, groups, dilation, symmetric
//       padding; the bias and post-ops always in the post-op pass.
// fp32 runs with FMA math only (no TF32) except in the *_tf32 tactics (fp32 only, offered when the build
// allows TF32), which let cuDNN use tensor-op math; fp16 / bf16 use tensor cores with fp32 accumulation.
//
// Algorithms: when the builder times tactics (LayerInfo::tune), a forward convolution times cuDNN's
// algorithms at the layer's opt shape (every one cuDNN's heuristic rates, within the workspace and the math
// rules, run as execute runs it on scratch buffers and timed in device time, graph_timer.h; cudnnFind's
// times include host costs, which dominate at batch 1) and keeps the fastest. The search is bounded: an
// algorithm whose single call takes over kSlowCallMs of wall time twice in a row (cuDNN runs some algorithms
// of grouped convolutions as host loops; maxvit_t's depthwise convolutions kept one CPU core busy for minutes
// with the GPU idle) is dropped before it is recorded for timing, as is one whose call takes 4x the fastest
// call so far, and no algorithm starts once a layer's search has spent kSearchBudgetMs. The search never
// takes cuDNN's FFT and Winograd algorithms (tile transforms): in half precision they are less accurate and a
// NaN or infinity spreads over the tile; in fp32 their rounding differs from a direct convolution's by ~1e-6
// relative, which a deep network amplifies (the zoo's inception_v3 took 38 of them among 146 convolutions,
// and its output moved by 6e-3 of its magnitude from eager fp32's, against 5e-5 for eager on the GPU). fp32
// takes them only where the build allows reduced-precision tactics (LayerInfo::reduced_precision), as the
// CPU's Winograd; a plan that recorded one in fp32 keeps it. Kernel::plan_data() records it
// (conv_plan_data.h) and a loaded kernel validates and reuses it for inputs of the opt dims. Other shapes,
// transposed convolutions and untimed builds use cuDNN's heuristic first choice. Per context and input shape
// the descriptors and algorithm are made by the first execute of that shape (before any CUDA-graph
// recording); execute itself only enqueues, using the context's workspace.

#include "engine/backends/cuda/cuda_util.h"

#ifdef KILN_HAVE_CUDNN
#include <cudnn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>

#include "engine/backends/cuda/graph_timer.h"
#include "engine/backends/cuda/linalg/conv_common.h"
#include "engine/backends/cuda/linalg/conv_plan_data.h"
#include "engine/backends/cuda/linalg/post_ops.h"
#include "kiln/support/logging.h"

namespace kiln::engine::cuda {
namespace {

constexpr size_t kWorkspace = size_t{64} << 20;
/// Without ReLU the fused call needs IMPLICIT_PRECOMP_GEMM: tuning prefers it when it is within this factor
/// of the fastest algorithm (the separate post-op pass it saves is a full read and write of the output).
constexpr float kFusedMargin = 1.10f;
/// One call of an algorithm slower than this (wall time, after a first call that may load its kernels) is not
/// worth timing: no convolution of an inference network needs it on a GPU, and timing it in device time
/// (graph_time_ms: 8 calls recorded, replayed 6 times) would cost about 50 such calls.
constexpr double kSlowCallMs = 50.0;
/// An algorithm whose call takes kHopelessFactor times the fastest call so far (and over kHopelessMinMs,
/// where host costs no longer hide the GPU's) cannot win: it is dropped before its 8 recorded runs are timed
/// (fp32 depthwise convolutions: maxvit_t and efficientnet_v2_s compiled in 14 s and 10 s in fp16, and in
/// over 90 s and 57 s in fp32, where cuDNN rates more algorithms).
constexpr double kHopelessFactor = 4.0;
constexpr double kHopelessMinMs = 1.0;
/// A layer's algorithm search starts no further algorithm after this much wall time.
constexpr double kSearchBudgetMs = 1000.0;

/// Whether `algo` transforms tiles (FFT, Winograd): not used in half precision (see the file comment).
bool transforms_tiles(int algo) {
  return algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT || algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
         algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD || algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::atomic<bool> g_warned_rejected{false};

cudnnDataType_t cudnn_type(DType dt) {
  return dt == DType::Float16    ? CUDNN_DATA_HALF
         : dt == DType::BFloat16 ? CUDNN_DATA_BFLOAT16
                                 : CUDNN_DATA_FLOAT;
}

/// Descriptors for one input shape, and the chosen algorithm.
struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  int algo = 0;
  bool fused = false;  // one cudnnConvolutionBiasActivationForward call
  ConvPlan() = default;
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;
  ~ConvPlan() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (act) cudnnDestroyActivationDescriptor(act);
  }
};

struct ConvState : KernelState {
  std::map<Dims, std::unique_ptr<ConvPlan>> plans;
};

std::vector<int> as_int(const Dims& d) { return std::vector<int>(d.begin(), d.end()); }

class ConvKernel : public Kernel {
 public:
  ConvKernel(const LayerInfo& info, bool tf32, bool nhwc)
      : p_(info.params<ConvolutionParams>()),
        tf32_(tf32),
        nhwc_(nhwc),
        reduced_precision_(info.reduced_precision) {
    const Layer& l = *info.layer;
    dtype_ = info.outputs[0].dtype;
    w_dims_ = l.weights[0].value.sizes();
    if (nhwc_) {
      KILN_CHECK(!p_.transposed && w_dims_.size() == 4, Internal, "cudnn_nhwc: layer '", l.name,
                 "' is not a 2-D forward convolution");
      weight_ = upload(to_krsc(l.weights[0].value), dtype_);
    } else {
      weight_ = upload(l.weights[0].value, dtype_);
    }
    bool has_bias = l.weights.size() > 1 && l.weights[1].defined();
    if (has_bias) bias_ = upload(l.weights[1].value, dtype_);
    // The fused call: NHWC forward convolutions whose chain is [Sum]? [ReLU]? with something to do.
    const auto& ops = p_.post_ops;
    size_t i = 0;
    if (i < ops.size() && ops[i].kind == PostOp::Sum) {
      fuse_residual_ = true;
      alpha2_ = static_cast<float>(ops[i].scale);
      ++i;
    }
    if (i < ops.size() && ops[i].kind == PostOp::Activation &&
        ops[i].activation.kind == ActivationKind::Relu) {
      fuse_relu_ = true;
      ++i;
    }
    fusable_ = nhwc_ && i == ops.size() && (has_bias || !ops.empty());
    if (fusable_ && !has_bias) {  // cuDNN's fused call always adds a bias: zeros
      HostTensor zeros(dtype_, {w_dims_[0]});
      bias_ = upload(zeros, dtype_);
    }
    // The bias (per output channel, dim 1) and every post-op in one pass; residuals are inputs 1, 2, ...
    post_ = PostOpPass(p_.post_ops, 0, has_bias ? bias_.data() : nullptr, 1, 1, dtype_, nhwc_);
    config_.dtype = static_cast<int64_t>(dtype_);
    config_.layout = nhwc_ ? 1 : 0;
    config_.tf32 = tf32_ ? 1 : 0;
    if (!p_.transposed) {
      if (info.plan_data) {
        use_stored(info);
      } else if (info.tune) {
        tune(info);
      }
    }
  }
  size_t workspace_size() const override { return kWorkspace; }
  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<ConvState>(); }
  std::vector<uint8_t> plan_data() const override {
    return has_tuned_ ? encode_conv_plan_data(tuned_) : std::vector<uint8_t>{};
  }

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    if (y.numel() == 0) return;
    auto* state = static_cast<ConvState*>(args.state);
    auto& plan = state->plans[x.dims];
    if (!plan) plan = make_plan(x.dims, y.dims);
    cudnnHandle_t h = cudnn_handle();
    KILN_CUDNN_CHECK(cudnnSetStream(h, stream_of(args)));
    if (plan->fused &&
        (!fuse_residual_ || (args.inputs[1].dims == y.dims && args.inputs[1].dtype == y.dtype))) {
      cudnnStatus_t st =
          fused_call(*plan, x.data, y.data, fuse_residual_ ? args.inputs[1].data : y.data, args.workspace);
      if (st == CUDNN_STATUS_SUCCESS) return;
      // Refused (this cuDNN does not fuse this configuration): the convolution and the post-op pass from now
      // on for this shape. A refusal is found in the first (plain) run of a shape, before any recording.
      KILN_DEBUG("engine: cuDNN refused the fused convolution (", cudnnGetErrorString(st),
                 "); convolution + post-op pass");
      count_conv_event(ConvEvent::FusedRefused);
      plan->fused = false;
    }
    if (!p_.transposed) {
      forward_call(*plan, x.data, y.data, args.workspace);
    } else {
      float alpha = 1.0f, beta = 0.0f;
      KILN_CUDNN_CHECK(cudnnConvolutionBackwardData(h, &alpha, plan->w, weight_.data(), plan->x, x.data,
                                                    plan->conv,
                                                    static_cast<cudnnConvolutionBwdDataAlgo_t>(plan->algo),
                                                    args.workspace, kWorkspace, &beta, plan->y, y.data));
    }
    post_.run(args, "convolution post-ops");
  }

 private:
  /// fp32 without TF32 (FMA math only) unless the tactic is a TF32 one.
  bool strict() const { return dtype_ == DType::Float32 && !tf32_; }
  /// fp32 in a TF32 tactic: runs with the math type cuDNN reports for the algorithm.
  bool tf32_math() const { return dtype_ == DType::Float32 && tf32_; }

  /// cuDNN's fused call for `plan`: y = act(conv(x) + alpha2 z + bias), z read only with a fused residual.
  cudnnStatus_t fused_call(const ConvPlan& plan, const void* x, void* y, const void* z,
                           void* workspace) const {
    float alpha = 1.0f, alpha2 = fuse_residual_ ? alpha2_ : 0.0f;
    return cudnnConvolutionBiasActivationForward(cudnn_handle(), &alpha, plan.x, x, plan.w, weight_.data(),
                                                 plan.conv, static_cast<cudnnConvolutionFwdAlgo_t>(plan.algo),
                                                 workspace, kWorkspace, &alpha2, plan.y, z, plan.bias,
                                                 bias_.data(), plan.act, plan.y, y);
  }

  /// The forward convolution of `plan` as execute runs it (the fused call when the plan fuses; without the
  /// post-op pass otherwise), on the handle's stream. Throws when cuDNN refuses it.
  void enqueue(const ConvPlan& plan, const void* x, void* y, const void* z, void* workspace) const {
    if (plan.fused) {
      KILN_CUDNN_CHECK(fused_call(plan, x, y, z, workspace));
    } else {
      forward_call(plan, x, y, workspace);
    }
  }

  /// The plain forward convolution y = conv(x) of `plan` on the handle's stream (bias and post-ops apart).
  void forward_call(const ConvPlan& plan, const void* x, void* y, void* workspace) const {
    float alpha = 1.0f, beta = 0.0f;
    KILN_CUDNN_CHECK(cudnnConvolutionForward(cudnn_handle(), &alpha, plan.x, x, plan.w, weight_.data(),
                                             plan.conv, static_cast<cudnnConvolutionFwdAlgo_t>(plan.algo),
                                             workspace, kWorkspace, &beta, plan.y, y));
  }

  /// The descriptors for input dims `xd` and output dims `yd` (algorithm not chosen yet).
  std::unique_ptr<ConvPlan> describe(const Dims& xd, const Dims& yd) const {
    auto plan = std::make_unique<ConvPlan>();
    size_t ns = xd.size() - 2;
    // 1-D convolutions become 2-D with H = 1 (cuDNN's Nd descriptors need 4 or 5 dims).
    auto spatial = [&](const std::vector<int64_t>& v, int64_t fill) {
      std::vector<int> out;
      if (ns == 1) out.push_back(static_cast<int>(fill));
      for (size_t i = 0; i < ns; ++i) out.push_back(static_cast<int>(i < v.size() ? v[i] : fill));
      return out;
    };
    auto dims4 = [&](const Dims& d) {
      std::vector<int> out = as_int(d);
      if (ns == 1) out.insert(out.begin() + 2, 1);
      return out;
    };
    auto packed = [](const std::vector<int>& d) {
      std::vector<int> st(d.size(), 1);
      for (int k = static_cast<int>(d.size()) - 2; k >= 0; --k) st[k] = st[k + 1] * d[k + 1];
      return st;
    };
    cudnnDataType_t t = cudnn_type(dtype_);
    auto xdims = dims4(xd), ydims = dims4(yd), wdims = dims4(w_dims_);
    KILN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->x));
    KILN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->y));
    KILN_CUDNN_CHECK(cudnnCreateFilterDescriptor(&plan->w));
    KILN_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&plan->conv));
    if (nhwc_) {
      // Logical NCHW dims, NHWC memory (the descriptors' format gives the strides).
      KILN_CUDNN_CHECK(
          cudnnSetTensor4dDescriptor(plan->x, CUDNN_TENSOR_NHWC, t, xdims[0], xdims[1], xdims[2], xdims[3]));
      KILN_CUDNN_CHECK(
          cudnnSetTensor4dDescriptor(plan->y, CUDNN_TENSOR_NHWC, t, ydims[0], ydims[1], ydims[2], ydims[3]));
      KILN_CUDNN_CHECK(
          cudnnSetFilter4dDescriptor(plan->w, t, CUDNN_TENSOR_NHWC, wdims[0], wdims[1], wdims[2], wdims[3]));
    } else {
      KILN_CUDNN_CHECK(cudnnSetTensorNdDescriptor(plan->x, t, static_cast<int>(xdims.size()), xdims.data(),
                                                  packed(xdims).data()));
      KILN_CUDNN_CHECK(cudnnSetTensorNdDescriptor(plan->y, t, static_cast<int>(ydims.size()), ydims.data(),
                                                  packed(ydims).data()));
      KILN_CUDNN_CHECK(cudnnSetFilterNdDescriptor(plan->w, t, CUDNN_TENSOR_NCHW,
                                                  static_cast<int>(wdims.size()), wdims.data()));
    }
    auto pad = spatial(p_.pre_padding, 0), stride = spatial(p_.stride, 1), dil = spatial(p_.dilation, 1);
    KILN_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(plan->conv, static_cast<int>(pad.size()), pad.data(),
                                                     stride.data(), dil.data(), CUDNN_CROSS_CORRELATION,
                                                     CUDNN_DATA_FLOAT));
    KILN_CUDNN_CHECK(cudnnSetConvolutionGroupCount(plan->conv, static_cast<int>(p_.groups)));
    KILN_CUDNN_CHECK(
        cudnnSetConvolutionMathType(plan->conv, strict() ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
    if (fusable_) {
      // The bias [1, K, 1, 1] (same dtype as y: cuDNN's fused call takes it so for fp32, fp16 and bf16 data),
      // and the activation (ReLU propagating NaN, as the reference; identity otherwise).
      KILN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->bias));
      KILN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->bias, CUDNN_TENSOR_NHWC, t, 1, ydims[1], 1, 1));
      KILN_CUDNN_CHECK(cudnnCreateActivationDescriptor(&plan->act));
      KILN_CUDNN_CHECK(cudnnSetActivationDescriptor(
          plan->act, fuse_relu_ ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY, CUDNN_PROPAGATE_NAN,
          0.0));
    }
    return plan;
  }

  /// Sets the plan's algorithm and math type (and whether the call is fused).
  void choose(ConvPlan& plan, int algo, cudnnMathType_t math, bool count = true) const {
    plan.algo = algo;
    // Strict fp32 keeps FMA math whatever cuDNN reports (DEFAULT_MATH would allow TF32 on Ampere and later);
    // fp16 / bf16 keep tensor-op math; the TF32 tactics run the algorithm with the math type cuDNN reported
    // for it (tensor-op, i.e. TF32, for the tensor-core algorithms; FMA for the others).
    if (tf32_math()) KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(plan.conv, math));
    plan.fused = fusable_ && (fuse_relu_ || algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
    if (fusable_ && count) count_conv_event(plan.fused ? ConvEvent::FusedPlan : ConvEvent::UnfusedPlan);
  }

  /// Whether cuDNN's reported math type is allowed for this kernel.
  bool math_ok(cudnnMathType_t m) const {
    return !strict() || m == CUDNN_FMA_MATH || m == CUDNN_DEFAULT_MATH;
  }

  /// Whether a forward algorithm is allowed for this kernel's dtype in a plan (see the file comment).
  bool forward_algo_ok(int algo) const { return dtype_ == DType::Float32 || !transforms_tiles(algo); }
  /// Whether the search (or cuDNN's heuristic pick) may choose a forward algorithm: not a tile transform,
  /// unless fp32 with reduced precision allowed.
  bool searchable_algo(int algo) const {
    return !transforms_tiles(algo) || (dtype_ == DType::Float32 && reduced_precision_);
  }

  std::unique_ptr<ConvPlan> make_plan(const Dims& xd, const Dims& yd) const {
    auto plan = describe(xd, yd);
    if (has_tuned_ && xd == tuned_.input) {
      choose(*plan, static_cast<int>(tuned_.algo), static_cast<cudnnMathType_t>(tuned_.math));
      return plan;
    }
    cudnnHandle_t h = cudnn_handle();
    constexpr int kMax = 16;
    int found = 0;
    bool ok = false;
    int algo = 0;
    cudnnMathType_t chosen_math = CUDNN_DEFAULT_MATH;
    // cuDNN's candidates in its order of preference: the first that succeeds within the workspace (and, when
    // strict, computes without tensor-op math) wins.
    auto pick = [&](const auto* perf, bool forward) {
      for (int i = 0; i < found && !ok; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > kWorkspace ||
            !math_ok(perf[i].mathType) || (forward && !searchable_algo(static_cast<int>(perf[i].algo))))
          continue;
        algo = perf[i].algo;
        chosen_math = perf[i].mathType;
        ok = true;
      }
    };
    if (!p_.transposed) {
      cudnnConvolutionFwdAlgoPerf_t perf[kMax];
      KILN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, plan->x, plan->w, plan->conv, plan->y, kMax,
                                                              &found, perf));
      pick(perf, true);
    } else {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
      KILN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, plan->w, plan->x, plan->conv, plan->y,
                                                                   kMax, &found, perf));
      pick(perf, false);
    }
    KILN_CHECK(ok, Unsupported, "cuDNN offers no convolution algorithm for this layer within ", kWorkspace,
               " bytes");
    KILN_DEBUG("engine: convolution: cuDNN's heuristic algorithm ", algo, " (math ", chosen_math, ", ",
               nhwc_ ? "nhwc" : "nchw", ")");
    if (!p_.transposed) {
      choose(*plan, algo, chosen_math);
    } else {
      plan->algo = algo;
      if (tf32_math()) KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->conv, chosen_math));
    }
    return plan;
  }

  /// Times cuDNN's forward algorithms at the opt shape and keeps the fastest allowed one (see the file
  /// comment).
  void tune(const LayerInfo& info) {
    const Dims& xd = info.inputs[0].opt;
    const Dims& yd = info.outputs[0].opt;
    const std::string& name = info.layer->name;
    if (numel(xd) == 0 || numel(yd) == 0) return;
    try {
      std::unique_ptr<ConvPlan> plan = describe(xd, yd);
      cudnnHandle_t h = cudnn_handle();
      constexpr int kMax = 2 * CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
      cudnnConvolutionFwdAlgoPerf_t perf[kMax];
      int found = 0;
      KILN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, plan->x, plan->w, plan->conv, plan->y, kMax,
                                                              &found, perf));
      size_t es = dtype_size(dtype_);
      DeviceBuffer x(static_cast<size_t>(numel(xd)) * es), y(static_cast<size_t>(numel(yd)) * es),
          z(fuse_residual_ ? static_cast<size_t>(numel(yd)) * es : 0), ws(kWorkspace);
      KILN_CUDA_CHECK(cudaMemset(x.data(), 0, static_cast<size_t>(numel(xd)) * es));
      // Each allowed (algorithm, math) cuDNN rates, timed as the call execute makes with it (the fused one
      // where the plan would fuse), in device time (graph_timer.h): cudnnFind's times include the host's
      // costs, which at batch 1 exceed the kernels' and picked algorithms 3-5x slower on the GPU.
      struct Timed {
        int algo;
        cudnnMathType_t math;
        float ms;
      };
      std::vector<Timed> timed;
      const auto search_start = std::chrono::steady_clock::now();
      double best_call_ms = kSlowCallMs;  // the fastest plain call of an algorithm timed so far
      for (int i = 0; i < found; ++i) {
        const auto& c = perf[i];
        if (c.status != CUDNN_STATUS_SUCCESS || c.memory > kWorkspace || !math_ok(c.mathType) ||
            !searchable_algo(static_cast<int>(c.algo)))
          continue;
        bool seen = std::any_of(timed.begin(), timed.end(), [&](const Timed& t) {
          return t.algo == c.algo && (!tf32_math() || t.math == c.mathType);
        });
        if (seen) continue;
        if (!timed.empty() && ms_since(search_start) > kSearchBudgetMs) {
          KILN_INFO("engine: convolution '", name, "': algorithm search stopped after ",
                    ms_since(search_start), " ms (budget ", kSearchBudgetMs, " ms); ", timed.size(),
                    " timed");
          break;
        }
        choose(*plan, c.algo, c.mathType, /*count=*/false);
        KILN_DEBUG("engine: convolution '", name, "': timing algorithm ", c.algo, " (math ", c.mathType,
                   ", workspace ", c.memory, " bytes)");
        try {
          // Two plain calls by wall clock first: the first may load kernels; when the second is still slow
          // the algorithm is dropped (see the file comment).
          double call_ms = 0.0;
          for (int call = 0; call < 2; ++call) {
            KILN_CUDNN_CHECK(cudnnSetStream(h, nullptr));
            const auto t0 = std::chrono::steady_clock::now();
            enqueue(*plan, x.data(), y.data(), fuse_residual_ ? z.data() : y.data(), ws.data());
            KILN_CUDA_CHECK(cudaDeviceSynchronize());
            call_ms = ms_since(t0);
            if (call_ms <= kSlowCallMs) break;
          }
          if (call_ms > kSlowCallMs ||
              (call_ms > kHopelessMinMs && call_ms > kHopelessFactor * best_call_ms)) {
            KILN_INFO("engine: convolution '", name, "': algorithm ", c.algo, " dropped: one call took ",
                      call_ms, " ms (fastest call so far ", best_call_ms, " ms)");
            continue;
          }
          best_call_ms = std::min(best_call_ms, call_ms);
          float ms = graph_time_ms([&](cudaStream_t s) {
            KILN_CUDNN_CHECK(cudnnSetStream(h, s));
            enqueue(*plan, x.data(), y.data(), fuse_residual_ ? z.data() : y.data(), ws.data());
          });
          timed.push_back({c.algo, c.mathType, ms});
        } catch (const Error& e) {
          KILN_DEBUG("engine: convolution '", name, "': algorithm ", c.algo, " did not run (", e.message(),
                     ")");
        }
      }
      KILN_CUDNN_CHECK(cudnnSetStream(h, nullptr));
      if (timed.empty()) {
        KILN_DEBUG("engine: convolution '", name,
                   "': no cuDNN algorithm ran at the opt shape; heuristic at run time");
        return;
      }
      auto best = std::min_element(timed.begin(), timed.end(),
                                   [](const Timed& a, const Timed& b) { return a.ms < b.ms; });
      auto pick = best;
      // Without ReLU the fused call needs IMPLICIT_PRECOMP_GEMM; it saves the post-op pass (a full read and
      // write of the output), so it wins when close.
      if (fusable_ && !fuse_relu_) {
        for (auto it = timed.begin(); it != timed.end(); ++it) {
          if (it->algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM &&
              it->ms <= kFusedMargin * best->ms && (pick == best || it->ms < pick->ms))
            pick = it;
        }
      }
      tuned_ = config_;
      tuned_.algo = pick->algo;
      tuned_.math = strict() ? CUDNN_FMA_MATH : pick->math;
      tuned_.input = xd;
      has_tuned_ = true;
      count_conv_event(ConvEvent::Tuned);
      KILN_INFO("engine: convolution '", name, "': ", timed.size(), " cuDNN algorithms timed in ",
                ms_since(search_start), " ms, chose ", pick->algo, " (", pick->ms, " ms; fastest ",
                best->algo, " ", best->ms, " ms; cuDNN's first ", timed[0].algo, " ", timed[0].ms, " ms)");
    } catch (const Error& e) {
      (void)cudaGetLastError();
      cudnnSetStream(cudnn_handle(), nullptr);
      KILN_DEBUG("engine: convolution '", name, "': timing cuDNN algorithms failed (", e.message(),
                 "); heuristic at run time");
    }
  }

  /// Takes the algorithm the plan recorded when it was made for this configuration and opt dims and cuDNN
  /// accepts it within the workspace; otherwise warns (once per process) and keeps the heuristic.
  void use_stored(const LayerInfo& info) {
    std::string why;
    ConvPlanData d;
    if (!decode_conv_plan_data(*info.plan_data, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, CUDNN_FMA_MATH + 1, &d,
                               &why)) {
      why = "malformed: " + why;
    } else if (d.dtype != config_.dtype || d.layout != config_.layout || d.tf32 != config_.tf32 ||
               d.input != info.inputs[0].opt) {
      why = "made for another shape or configuration";
    } else if (!math_ok(static_cast<cudnnMathType_t>(d.math))) {
      why = "its math type is not allowed for strict fp32";
    } else if (!forward_algo_ok(static_cast<int>(d.algo))) {
      why = "it is an FFT or Winograd algorithm, not used in half precision";
    } else {
      try {
        std::unique_ptr<ConvPlan> plan = describe(d.input, info.outputs[0].opt);
        if (tf32_math())
          KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->conv, static_cast<cudnnMathType_t>(d.math)));
        size_t bytes = 0;
        cudnnStatus_t st =
            cudnnGetConvolutionForwardWorkspaceSize(cudnn_handle(), plan->x, plan->w, plan->conv, plan->y,
                                                    static_cast<cudnnConvolutionFwdAlgo_t>(d.algo), &bytes);
        if (st != CUDNN_STATUS_SUCCESS) {
          why = std::string("cuDNN refuses the algorithm (") + cudnnGetErrorString(st) + ")";
        } else if (bytes > kWorkspace) {
          why = "the algorithm needs " + std::to_string(bytes) + " bytes of workspace";
        } else {
          tuned_ = d;
          has_tuned_ = true;
          count_conv_event(ConvEvent::Stored);
          return;
        }
      } catch (const Error& e) {
        why = e.message();
      }
    }
    count_conv_event(ConvEvent::Rejected);
    if (!g_warned_rejected.exchange(true)) {
      KILN_WARN("engine: layer '", info.layer->name, "': the plan's cuDNN algorithm is not usable (", why,
                "); using cuDNN's heuristic (further such layers are logged at debug level)");
    } else {
      KILN_DEBUG("engine: layer '", info.layer->name, "': the plan's cuDNN algorithm is not usable (", why,
                 "); using cuDNN's heuristic");
    }
  }

  ConvolutionParams p_;
  bool tf32_ = false, nhwc_ = false, reduced_precision_ = false;
  DType dtype_ = DType::Float32;
  Dims w_dims_;
  DeviceBuffer weight_, bias_;
  PostOpPass post_;
  // The fused call (NHWC only): whether the chain allows it, with a residual (scaled by alpha2_) and ReLU.
  bool fusable_ = false, fuse_residual_ = false, fuse_relu_ = false;
  float alpha2_ = 0.0f;
  ConvPlanData config_;  // dtype, layout, tf32 of this kernel
  ConvPlanData tuned_;   // the tuned or stored algorithm, when has_tuned_
  bool has_tuned_ = false;
};

bool applies_tf32(const LayerInfo& layer, std::string* why) {
  return conv_applies(layer, why) && f32_output(layer, why);
}

bool applies_nhwc_tf32(const LayerInfo& layer, std::string* why) {
  return conv_applies_nhwc(layer, why) && f32_output(layer, why);
}

std::unique_ptr<Kernel> create(const LayerInfo& layer) {
  return std::make_unique<ConvKernel>(layer, false, false);
}
std::unique_ptr<Kernel> create_tf32(const LayerInfo& layer) {
  return std::make_unique<ConvKernel>(layer, true, false);
}
std::unique_ptr<Kernel> create_nhwc(const LayerInfo& layer) {
  return std::make_unique<ConvKernel>(layer, false, true);
}
std::unique_ptr<Kernel> create_nhwc_tf32(const LayerInfo& layer) {
  return std::make_unique<ConvKernel>(layer, true, true);
}

}  // namespace

void register_convolution(KernelTable& rows) {
  // NHWC first, and TF32 before strict: when the build does not time tactics, the first candidate wins.
  rows.add({.name = "cudnn_nhwc_tf32",
            .kind = LayerKind::Convolution,
            .applies = &applies_nhwc_tf32,
            .create = &create_nhwc_tf32,
            .formats = &all_channels_last,
            .tf32 = true});
  rows.add({.name = "cudnn_nhwc",
            .kind = LayerKind::Convolution,
            .applies = &conv_applies_nhwc,
            .create = &create_nhwc,
            .formats = &all_channels_last});
  rows.add({.name = "cudnn_tf32",
            .kind = LayerKind::Convolution,
            .applies = &applies_tf32,
            .create = &create_tf32,
            .tf32 = true});
  rows.add({"cudnn", LayerKind::Convolution, &conv_applies, &create});
}

}  // namespace kiln::engine::cuda

#else

namespace kiln::engine::cuda {
// Built without cuDNN: no convolution kernels (supports() says so).
void register_convolution(KernelTable&) {}
}  // namespace kiln::engine::cuda

#endif
