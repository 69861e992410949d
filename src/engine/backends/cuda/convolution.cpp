// Convolution and transposed convolution through cuDNN's convolution API (tactic "cudnn"; a first version on
// the legacy descriptor API): NCHW (1-D convolutions as H = 1), groups, dilation, symmetric padding. fp32
// runs with FMA math only (no TF32); fp16 / bf16 with tensor cores and fp32 accumulation. Tactic "cudnn_tf32"
// (fp32 only, offered when the build allows TF32) lets fp32 use tensor-op math (TF32). The algorithm is
// cuDNN's heuristic first choice within the workspace, per input shape and context (made by the first execute
// of a shape, before any CUDA-graph recording; the convolution itself only enqueues, using the context's
// workspace). Bias and post-ops (activations, residual sums) follow as one in-place pass (post_ops.h).

#include "engine/backends/cuda/cuda_util.h"

#ifdef KILN_HAVE_CUDNN
#include <cudnn.h>

#include <map>

#include "engine/backends/cuda/post_ops.h"

#define KILN_CUDNN_CHECK(expr)                                                                             \
  do {                                                                                                     \
    cudnnStatus_t kiln_cudnn_st_ = (expr);                                                                 \
    KILN_CHECK(kiln_cudnn_st_ == CUDNN_STATUS_SUCCESS, Internal, "cuDNN error ",                          \
               cudnnGetErrorString(kiln_cudnn_st_), " (", #expr, ")");                                     \
  } while (0)

namespace kiln::engine::cuda {
namespace {

constexpr size_t kWorkspace = size_t{64} << 20;

/// One cuDNN handle per thread (cudnnSetStream changes a handle, so contexts on other threads need their own).
cudnnHandle_t cudnn_handle() {
  thread_local struct Holder {
    cudnnHandle_t h = nullptr;
    ~Holder() {
      if (h) cudnnDestroy(h);
    }
  } holder;
  if (!holder.h) KILN_CUDNN_CHECK(cudnnCreate(&holder.h));
  return holder.h;
}

cudnnDataType_t cudnn_type(DType dt) {
  return dt == DType::Float16 ? CUDNN_DATA_HALF : dt == DType::BFloat16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

/// Descriptors for one input shape, and the chosen algorithm.
struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;
  ~ConvPlan() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
  }
};

struct ConvState : KernelState {
  std::map<Dims, std::unique_ptr<ConvPlan>> plans;
};

std::vector<int> as_int(const Dims& d) { return std::vector<int>(d.begin(), d.end()); }

class ConvKernel : public Kernel {
 public:
  ConvKernel(const LayerInfo& info, bool tf32) : p_(info.params<ConvolutionParams>()), tf32_(tf32) {
    const Layer& l = *info.layer;
    dtype_ = info.outputs[0].dtype;
    w_dims_ = l.weights[0].value.sizes();
    weight_ = upload(l.weights[0].value, dtype_);
    if (l.weights.size() > 1 && l.weights[1].defined()) bias_ = upload(l.weights[1].value, dtype_);
    // The bias (per output channel, dim 1) and every post-op in one pass; residuals are inputs 1, 2, ...
    post_ = PostOpPass(p_.post_ops, 0, bias_.data(), 1, 1, dtype_);
  }
  size_t workspace_size() const override { return kWorkspace; }
  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<ConvState>(); }

  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    if (y.numel() == 0) return;
    auto* state = static_cast<ConvState*>(args.state);
    auto& plan = state->plans[x.dims];
    if (!plan) plan = make_plan(x.dims, y.dims);
    cudnnHandle_t h = cudnn_handle();
    KILN_CUDNN_CHECK(cudnnSetStream(h, stream_of(args)));
    float alpha = 1.0f, beta = 0.0f;
    if (!p_.transposed) {
      KILN_CUDNN_CHECK(cudnnConvolutionForward(h, &alpha, plan->x, x.data, plan->w, weight_.data(), plan->conv,
                                               static_cast<cudnnConvolutionFwdAlgo_t>(plan->algo), args.workspace,
                                               kWorkspace, &beta, plan->y, y.data));
    } else {
      KILN_CUDNN_CHECK(cudnnConvolutionBackwardData(h, &alpha, plan->w, weight_.data(), plan->x, x.data, plan->conv,
                                                    static_cast<cudnnConvolutionBwdDataAlgo_t>(plan->algo),
                                                    args.workspace, kWorkspace, &beta, plan->y, y.data));
    }
    post_.run(args, "convolution post-ops");
  }

 private:
  std::unique_ptr<ConvPlan> make_plan(const Dims& xd, const Dims& yd) const {
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
    KILN_CUDNN_CHECK(cudnnSetTensorNdDescriptor(plan->x, t, static_cast<int>(xdims.size()), xdims.data(), packed(xdims).data()));
    KILN_CUDNN_CHECK(cudnnSetTensorNdDescriptor(plan->y, t, static_cast<int>(ydims.size()), ydims.data(), packed(ydims).data()));
    KILN_CUDNN_CHECK(cudnnSetFilterNdDescriptor(plan->w, t, CUDNN_TENSOR_NCHW, static_cast<int>(wdims.size()), wdims.data()));
    auto pad = spatial(p_.pre_padding, 0), stride = spatial(p_.stride, 1), dil = spatial(p_.dilation, 1);
    KILN_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(plan->conv, static_cast<int>(pad.size()), pad.data(), stride.data(),
                                                     dil.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    KILN_CUDNN_CHECK(cudnnSetConvolutionGroupCount(plan->conv, static_cast<int>(p_.groups)));
    bool strict = dtype_ == DType::Float32 && !tf32_;  // no TF32 for fp32 layers unless the tactic is TF32
    KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->conv, strict ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
    cudnnHandle_t h = cudnn_handle();
    constexpr int kMax = 16;
    int found = 0;
    bool ok = false;
    cudnnMathType_t chosen_math = CUDNN_DEFAULT_MATH;
    // cuDNN's candidates in its order of preference: the first that succeeds within the workspace (and, when
    // strict, computes without tensor-op math) wins.
    auto pick = [&](const auto* perf) {
      for (int i = 0; i < found && !ok; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > kWorkspace) continue;
        if (strict && perf[i].mathType != CUDNN_FMA_MATH && perf[i].mathType != CUDNN_DEFAULT_MATH) continue;
        plan->algo = perf[i].algo;
        chosen_math = perf[i].mathType;
        ok = true;
      }
    };
    if (!p_.transposed) {
      cudnnConvolutionFwdAlgoPerf_t perf[kMax];
      KILN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, plan->x, plan->w, plan->conv, plan->y, kMax, &found, perf));
      pick(perf);
    } else {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
      KILN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, plan->w, plan->x, plan->conv, plan->y, kMax, &found, perf));
      pick(perf);
    }
    KILN_CHECK(ok, Unsupported, "cuDNN offers no convolution algorithm for this layer within ", kWorkspace, " bytes");
    // TF32: run the algorithm with the math type cuDNN reported for it (tensor-op math, i.e. TF32, for the
    // tensor-core algorithms; FMA for the others).
    if (tf32_ && dtype_ == DType::Float32)
      KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(plan->conv, chosen_math));
    return plan;
  }

  ConvolutionParams p_;
  bool tf32_ = false;
  DType dtype_ = DType::Float32;
  Dims w_dims_;
  DeviceBuffer weight_, bias_;
  PostOpPass post_;
};

bool applies(const LayerInfo& layer, std::string* why) {
  const auto& p = layer.params<ConvolutionParams>();
  DType dt = layer.outputs[0].dtype;
  if (dt != DType::Float32 && dt != DType::Float16 && dt != DType::BFloat16) {
    if (why) *why = "dtype is not f32/f16/bf16";
    return false;
  }
  size_t r = layer.inputs[0].max.size();
  if (r < 3 || r > 5) {
    if (why) *why = "needs 1 to 3 spatial dims";
    return false;
  }
  if (p.pre_padding != p.post_padding) {
    if (why) *why = "asymmetric padding (cuDNN pads both sides alike)";
    return false;
  }
  bool bias = layer.layer->weights.size() > 1 && layer.layer->weights[1].defined();
  return PostOpPass::fits(p.post_ops.size(), bias, layer.inputs.size() - 1, why);
}

bool applies_tf32(const LayerInfo& layer, std::string* why) { return applies(layer, why) && f32_output(layer, why); }

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<ConvKernel>(layer, false); }
std::unique_ptr<Kernel> create_tf32(const LayerInfo& layer) {
  return std::make_unique<ConvKernel>(layer, true);
}

}  // namespace

void register_convolution(std::vector<CudaKernelFactory>& rows) {
  // TF32 first: when the build allows it and does not time tactics, the first candidate wins.
  rows.push_back({"cudnn_tf32", LayerKind::Convolution, &applies_tf32, &create_tf32, true});
  rows.push_back({"cudnn", LayerKind::Convolution, &applies, &create});
}

}  // namespace kiln::engine::cuda

#else

namespace kiln::engine::cuda {
// Built without cuDNN: no convolution kernels (supports() says so).
void register_convolution(std::vector<CudaKernelFactory>&) {}
}  // namespace kiln::engine::cuda

#endif
