// MatrixMultiply through cuBLASLt (tactic "cublaslt"): fp32 (strict fp32 compute, no TF32), fp16 and bf16
// with fp32 accumulation; tactic "cublaslt_tf32" (fp32 only, offered when the build allows TF32) computes
// fp32 with CUBLAS_COMPUTE_32F_FAST_TF32; tactic "cublaslt_fp8" (Tactic::fp8, offered in FP8 builds)
// multiplies FP8 E4M3 operands, its input A in TensorFormat::E4M3 (matmul_fp8.h); bias and a leading
// tanh-GELU fused as epilogues; a residual sum right after the bias (no GELU epilogue before it) as
// cuBLASLt's C operand (D = A B + scale * C + bias, rounded once) when the residual has the output's dims;
// the remaining post-ops (other activations, residual sums) in one in-place pass (post_ops.h). ReLU is not
// given to cuBLASLt's RELU epilogue: that computes max(x, 0), which maps NaN to 0 where torch.relu propagates
// it. Batched operands broadcast; a batch that is not a constant stride is run as one call per matrix
// (matmul_call.h). Every tactic also writes its output as E4M3 (KernelRow::writes) for an FP8 layer that
// reads it: the result is staged in the workspace and the post-op pass stores it quantized. The FP8 tactic
// writes E4M3 from cuBLASLt itself (D in E4M3, scaled by 1 / the output's scale, saturating) where its
// epilogue takes every post-op: a bias and at most a GELU. There the exact (erf) GELU runs as cuBLASLt's
// tanh form: at most 4.8e-4 apart, against an E4M3 rounding of up to 1/16 of the value
// (docs/quantization.md). Its plan data says which (compute mode 3 for cuBLASLt's E4M3, 2 for the staged
// path, which plans of format 8 hold): a loaded kernel runs as it was built.
//
// Algorithms: when the builder times tactics (LayerInfo::tune), the kernel asks cuBLASLt for up to
// kTuneCandidates heuristic candidates for the call at the layer's opt shape (256-byte aligned buffers, as
// cudaMalloc gives), times each on scratch buffers on a private stream (median of a few runs) and keeps the
// fastest (cuBLASLt's first unless another is kTuneMargin faster), which Kernel::plan_data() records. A
// kernel created from a plan uses the recorded algorithm after cublasLtMatmulAlgoCheck accepts it (else, with
// one warning per process, the heuristic). Per context, every call key gets a plan (descriptor, layouts,
// algorithm) at the first execute that meets it, before any CUDA-graph recording: the tuned algorithm for the
// tuned call whenever the pointers are aligned as that algorithm requires (CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_*;
// arena buffers are only 64-byte aligned), cuBLASLt's first heuristic candidate for any other key. The matmul
// itself only enqueues, using the context's preallocated workspace.
// Row-major C = A B is computed as column-major C^T = B^T A^T.

#include <cublasLt.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/linalg/matmul_call.h"
#include "engine/backends/cuda/linalg/matmul_fp8.h"
#include "engine/backends/cuda/linalg/post_ops.h"
#include "engine/ops/fp8.h"
#include "kiln/support/logging.h"

#define KILN_CUBLAS_CHECK(expr)                                                                             \
  do {                                                                                                      \
    cublasStatus_t kiln_cublas_st_ = (expr);                                                                \
    KILN_CHECK(kiln_cublas_st_ == CUBLAS_STATUS_SUCCESS, Internal, "cuBLASLt error ", int(kiln_cublas_st_), \
               " (", #expr, ")");                                                                           \
  } while (0)

namespace kiln::engine::cuda {

static_assert(sizeof(cublasLtMatmulAlgo_t) == sizeof(MatmulPlanData::algo),
              "the plan data stores cublasLtMatmulAlgo_t as 8 uint64");

namespace {

constexpr size_t kWorkspace = size_t{32} << 20;
/// Heuristic candidates timed at build.
constexpr int kTuneCandidates = 8;
/// The pointer alignment the tuned call key assumes (cudaMalloc'd bindings and weights, arena buffers).
constexpr int kTuneAlign = 256;
/// Timing: warm-up runs per candidate, then samples (each `reps` runs between two events; median).
constexpr int kTuneWarmup = 2;
constexpr int kTuneSamples = 7;
/// A sample lasts at least about this long (short matmuls repeat within a sample).
constexpr float kTuneSampleMs = 0.02f;
/// Another candidate replaces cuBLASLt's first choice only when it is this much faster (timing noise).
constexpr float kTuneMargin = 0.03f;

/// How a kernel computes (MatmulPlanData::compute records it: 0, 1, 2; see kFp8ToE4m3 for 3).
enum class Compute : int64_t { Exact = 0, Tf32 = 1, Fp8 = 2 };
/// MatmulPlanData::compute of an FP8 kernel whose cuBLASLt call writes the output as E4M3 itself.
constexpr int64_t kFp8ToE4m3 = 3;

/// Floats between the scales in an FP8 kernel's scale buffer (the weight's, A's, then 1 / D's): cuBLASLt
/// refused (status 15, NOT_SUPPORTED, at the call) scale pointers 4 bytes apart.
constexpr int kFp8ScaleStride = 4;
/// cuBLASLt's FP8 fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM: the tensor cores' partial sums are not
/// promoted to fp32 along K): on. BERT-base at 32x128 on an H100 (scripts/device/fp8_accumulation.sh times it
/// off): with it
/// the q/k/v and FFN-in GEMMs (quantization included) took 21.1 and 45.6 us against fp16's 25.2 and 50.5, and
/// the model 1.829 ms against fp16's 2.004 (1.10x; without it 1.957 ms, 1.02x: FP8 won only within noise);
/// output SQNR against eager fp32 24.8 dB (26.0 without). Inference FP8 GEMMs commonly run it (the forward
/// GEMMs of NVIDIA's Transformer Engine do).
constexpr int8_t kFp8FastAccumulation = 1;

/// Bytes of a kernel's workspace in front of cuBLASLt's that stage its result, rounded to 256.
size_t round_up_256(size_t bytes) { return (bytes + 255) / 256 * 256; }
/// An output written as E4M3 is staged whole in the workspace: up to this many bytes at its max shape.
constexpr int64_t kMaxStagedBytes = int64_t{64} << 20;

/// Whether post-op 0 is the tanh-GELU cuBLASLt applies as its epilogue.
bool gelu_epilogue(const std::vector<PostOp>& ops) {
  return !ops.empty() && ops[0].kind == PostOp::Activation &&
         ops[0].activation.kind == ActivationKind::GeluTanh;
}
/// Whether cuBLASLt's epilogue takes every post-op when it writes FP8: none, or one GELU (an exact one as the
/// tanh form, see the file comment).
bool epilogue_takes_all(const std::vector<PostOp>& ops) {
  return ops.empty() || (ops.size() == 1 && ops[0].kind == PostOp::Activation &&
                         (ops[0].activation.kind == ActivationKind::GeluTanh ||
                          ops[0].activation.kind == ActivationKind::GeluErf));
}
/// Whether post-op 0 is a residual sum cuBLASLt can add as C (an epilogue applies GELU after adding C, so
/// not after a GELU epilogue; a broadcast residual still goes to the pass at run time).
bool residual_as_c(const std::vector<PostOp>& ops) { return !ops.empty() && ops[0].kind == PostOp::Sum; }

/// Whether the plan data of an FP8 kernel writing E4M3 says it stages its result (compute mode 2, as plans of
/// format 8 made every such kernel) rather than writing E4M3 from cuBLASLt (mode 3): the kernel then runs as
/// it was built, an exact GELU exact.
bool staged_by_plan(const LayerInfo& layer) {
  MatmulPlanData d;
  return layer.plan_data && decode_matmul_plan_data(*layer.plan_data, &d, nullptr) &&
         d.compute == static_cast<int64_t>(Compute::Fp8);
}
/// Whether `format` is E4M3 and the output of `layer` has a usable scale for it.
bool e4m3_scale_known(const LayerInfo& layer, TensorFormat format) {
  return format == TensorFormat::E4M3 && usable_fp8_scale(layer.outputs[0].range) > 0;
}
/// Whether a cuBLASLt kernel of `layer` can write its output as E4M3 (KernelRow::writes), and its workspace
/// then: the output has a usable dynamic range (its scale) and concrete max dims whose result fits
/// kMaxStagedBytes, and the kernel runs a post-op pass after the call anyway (an exact GELU, ...), which then
/// stores the codes. Without such a pass, staging and quantizing would cost what a Reformat costs: the
/// builder had better time the Reformat.
std::optional<size_t> writes_e4m3(const LayerInfo& layer, TensorFormat format) {
  const TensorInfo& y = layer.outputs[0];
  if (!e4m3_scale_known(layer, format)) return std::nullopt;
  const std::vector<PostOp>& ops = layer.params<MatrixMultiplyParams>().post_ops;
  if (ops.size() <= (gelu_epilogue(ops) || residual_as_c(ops) ? 1u : 0u)) return std::nullopt;
  if (std::any_of(y.max.begin(), y.max.end(), [](int64_t d) { return d < 0; }) ||
      numel(y.max) > kMaxStagedBytes / static_cast<int64_t>(dtype_size(y.dtype))) {
    return std::nullopt;
  }
  return round_up_256(static_cast<size_t>(numel(y.max)) * dtype_size(y.dtype)) + kWorkspace;
}
/// The FP8 tactic's: from cuBLASLt itself where its epilogue takes every post-op (no staging), else as
/// writes_e4m3.
std::optional<size_t> fp8_writes_e4m3(const LayerInfo& layer, TensorFormat format) {
  if (e4m3_scale_known(layer, format) && epilogue_takes_all(layer.params<MatrixMultiplyParams>().post_ops)) {
    return kWorkspace;
  }
  return writes_e4m3(layer, format);
}

std::atomic<int64_t> g_tuned{0}, g_stored{0}, g_rejected{0}, g_used{0};
std::atomic<bool> g_warned_rejected{false};

cublasLtHandle_t lt_handle() {
  static cublasLtHandle_t handle = [] {
    cublasLtHandle_t h = nullptr;
    KILN_CUBLAS_CHECK(cublasLtCreate(&h));
    return h;
  }();
  return handle;
}

cudaDataType_t cuda_type(DType dt) {
  switch (dt) {
    case DType::Float16: return CUDA_R_16F;
    case DType::BFloat16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

std::string ms_text(float ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f ms", static_cast<double>(ms));
  return buf;
}

/// One configured cuBLASLt call shape (descriptor, layouts, algorithm).
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr, ld = nullptr;  // (ld: D's, when not C's)
  cublasLtMatmulAlgo_t algo{};
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  cublasLtMatrixLayout_t d_layout() const { return ld ? ld : lc; }
  ~LtPlan() {
    for (cublasLtMatrixLayout_t l : {la, lb, lc, ld}) {
      if (l) cublasLtMatrixLayoutDestroy(l);
    }
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

struct MatmulState : KernelState {
  std::map<MatmulCallKey, std::unique_ptr<LtPlan>> plans;
};

/// A private stream and events for timing candidates at build (released on every path).
struct TuneResources {
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> events;
  TuneResources(const TuneResources&) = delete;
  TuneResources& operator=(const TuneResources&) = delete;
  explicit TuneResources(size_t n_events) {
    KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    events.reserve(n_events);
    for (size_t i = 0; i < n_events; ++i) {
      cudaEvent_t e = nullptr;
      KILN_CUDA_CHECK(cudaEventCreate(&e));
      events.push_back(e);
    }
  }
  ~TuneResources() {
    if (stream) cudaStreamSynchronize(stream);
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    if (stream) cudaStreamDestroy(stream);
  }
};

/// The pointer alignment (bytes) `algo` needs for every matrix; kTuneAlign when cuBLASLt does not say.
int required_alignment(const cublasLtMatmulAlgo_t& algo) {
  uint32_t need = 1;
  for (cublasLtMatmulAlgoCapAttributes_t cap :
       {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES}) {
    uint32_t v = 0;
    size_t written = 0;
    if (cublasLtMatmulAlgoCapGetAttribute(&algo, cap, &v, sizeof(v), &written) != CUBLAS_STATUS_SUCCESS ||
        written != sizeof(v)) {
      return kTuneAlign;
    }
    need = std::max(need, v);
  }
  return static_cast<int>(std::min<uint32_t>(need, kTuneAlign));
}

/// A scratch device buffer of `n` elements with values in [-1, 1) (never all zeros or ones): of `dtype`, or
/// E4M3 codes (one byte each) when `e4m3`.
DeviceBuffer scratch(DType dtype, int64_t n, uint32_t seed, bool e4m3 = false) {
  HostTensor t(DType::Float32, {std::max<int64_t>(n, 1)});
  float* v = t.mutable_data_as<float>();
  uint32_t x = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<float>(x >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  if (!e4m3) return upload(t, dtype);
  std::vector<uint8_t> codes(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = ops::float_to_e4m3(v[i]);
  return DeviceBuffer(codes.data(), codes.size());
}

class MatmulKernel : public Kernel {
 public:
  MatmulKernel(const LayerInfo& info, Compute compute)
      : p_(info.params<MatrixMultiplyParams>()), compute_(compute) {
    const Layer& l = *info.layer;
    dtype_ = info.outputs[0].dtype;
    if (info.outputs[0].format == TensorFormat::E4M3) {
      direct_e4m3_ = fp8() && epilogue_takes_all(p_.post_ops) && !staged_by_plan(info);
      const auto writes =
          direct_e4m3_ ? fp8_writes_e4m3(info, TensorFormat::E4M3) : writes_e4m3(info, TensorFormat::E4M3);
      KILN_CHECK(
          writes.has_value(), InvalidInput, "matrix multiply '", l.name,
          "': its output cannot be written as e4m3 (no usable dynamic range, no post-op pass to store it ",
          "or over ", kMaxStagedBytes, " bytes at its max shape)");
      e4m3_inverse_scale_ = 1.0f / fp8_activation_scale(*info.outputs[0].range);
      if (!direct_e4m3_) {
        staged_bytes_ = round_up_256(static_cast<size_t>(numel(info.outputs[0].max)) * dtype_size(dtype_));
      }
    }
    if (fp8()) {
      std::string why;
      KILN_CHECK(fp8_matmul_fits(info, &why), InvalidInput, "matrix multiply '", l.name,
                 "': the FP8 tactic does not take it: ", why);
      Fp8Weight w = upload_fp8_weight(l.weights[0].value, p_.transpose_b);
      b_dims_ = {w.n, w.k};
      b_weight_ = std::move(w.values);
      // (each scale on its own 16 bytes)
      const float scales[2 * kFp8ScaleStride + 1] = {
          w.scale, 0, 0, 0, fp8_activation_scale(*info.inputs[0].range), 0, 0, 0, e4m3_inverse_scale_};
      fp8_scales_ = DeviceBuffer(scales, sizeof(scales));
    } else if (!l.weights.empty() && l.weights[0].defined()) {
      b_dims_ = l.weights[0].value.sizes();
      b_weight_ = upload(l.weights[0].value, dtype_);
    }
    if (l.weights.size() > 1 && l.weights[1].defined()) bias_ = upload(l.weights[1].value, dtype_);
    size_t first_post = 0;
    epilogue_ = bias_.data() ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    if (gelu_epilogue(p_.post_ops) || (direct_e4m3_ && !p_.post_ops.empty())) {
      epilogue_ = bias_.data() ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
      first_post = 1;
    }
    // The rest of the post-ops in one pass over the output; residuals follow the operands among the inputs.
    first_residual_ = b_weight_.data() ? 1 : 2;
    post_ = PostOpPass(p_.post_ops, first_post, nullptr, 0, first_residual_, dtype_);
    // A residual sum that comes first can be cuBLASLt's C; the pass then starts after it, with the next
    // residual.
    if (residual_as_c(p_.post_ops)) {
      residual_in_c_ = true;
      post_after_c_ = PostOpPass(p_.post_ops, 1, nullptr, 0, first_residual_ + 1, dtype_);
    }
    tuned_.dtype = static_cast<int64_t>(dtype_);
    tuned_.compute = direct_e4m3_ ? kFp8ToE4m3 : static_cast<int64_t>(compute_);
    tuned_.transpose_a = p_.transpose_a;
    tuned_.transpose_b = p_.transpose_b;
    tuned_.epilogue = static_cast<int64_t>(epilogue_);
    if (info.plan_data) {
      use_stored(info);
    } else if (info.tune) {
      tune(info);
    }
    if (fp8() && !has_tuned_) require_fp8_algorithm(info);
  }

  size_t workspace_size() const override { return staged_bytes_ + kWorkspace; }
  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<MatmulState>(); }
  std::vector<uint8_t> plan_data() const override {
    return has_tuned_ ? encode_matmul_plan_data(tuned_) : std::vector<uint8_t>{};
  }

  void execute(KernelArgs& args) const override {
    KILN_CHECK(args.workspace_size >= workspace_size(), Internal, "matmul: a workspace of ",
               args.workspace_size, " bytes where the kernel needs ", workspace_size());
    const TensorView& a = args.inputs[0];
    TensorView b = b_weight_.data() ? TensorView{b_weight_.data(), dtype_, b_dims_} : args.inputs[1];
    // The result: the output, or staged in front of cuBLASLt's workspace when the output is E4M3.
    const bool staged = staged_bytes_ > 0;
    TensorView y = args.outputs[0];
    if (y.numel() == 0) return;
    if (staged) {
      y = TensorView{args.workspace, dtype_, y.dims, TensorFormat::Plain};
      KILN_CHECK(
          y.nbytes() <= staged_bytes_, InvalidInput, "matrix multiply: an output of ", y.nbytes(),
          " bytes, larger than the ", staged_bytes_,
          " its E4M3 staging was made for (the builder writes E4M3 only where profile 0 is the largest)");
    }
    void* const lt_workspace = static_cast<uint8_t*>(args.workspace) + staged_bytes_;
    MatmulCalls c =
        fp8() ? matmul_calls(fp8_params(), a.dims, b.dims, y.dims) : matmul_calls(p_, a.dims, b.dims, y.dims);
    auto* state = static_cast<MatmulState*>(args.state);
    const size_t es = dtype_size(dtype_), ea = fp8() ? 1 : es;  // (A's elements: E4M3 codes in FP8)
    // The residual as C: laid out as y (same dims, packed), so call i reads it at y's offset.
    const TensorView* residual = residual_in_c_ ? &args.inputs[first_residual_] : nullptr;
    if (residual &&
        (residual->dims != y.dims || residual->dtype != y.dtype || residual->format != y.format)) {
      residual = nullptr;  // a broadcast residual: the pass adds it
    }
    const float beta = residual ? static_cast<float>(p_.post_ops[0].scale) : 0.0f;
    // One call of shape `key` (its align set here) with the given cuBLASLt workspace.
    auto run = [&](MatmulCallKey key, const uint8_t* pa, const uint8_t* pb, const uint8_t* pc, uint8_t* py,
                   void* workspace) {
      key.align = std::min({pointer_alignment(reinterpret_cast<uintptr_t>(pa)),
                            pointer_alignment(reinterpret_cast<uintptr_t>(pb)),
                            pointer_alignment(reinterpret_cast<uintptr_t>(pc)),
                            pointer_alignment(reinterpret_cast<uintptr_t>(py))});
      auto& slot = state->plans[key];
      if (!slot) slot = make_plan(key);
      KILN_CUBLAS_CHECK(enqueue(*slot, slot->algo, pa, pb, pc, beta, py, workspace, stream_of(args)));
    };
    auto* pa = static_cast<const uint8_t*>(a.data);
    auto* pb = static_cast<const uint8_t*>(b.data);
    auto* py = static_cast<uint8_t*>(y.data);
    auto* pc = residual ? static_cast<const uint8_t*>(residual->data) : py;  // (beta 0: C unread)
    KILN_CHECK(!fp8() || (!c.per_matrix && c.call.count == 1), Internal, "FP8 matmul: A is not one matrix");
    if (!c.per_matrix) {
      run(c.call, pa + c.offset_a[0] * ea, pb + c.offset_b[0] * es, pc, py, lt_workspace);
    } else {
      for (int64_t i = 0; i < c.batches; ++i) {
        const int64_t at = i * c.m * c.n * static_cast<int64_t>(es);
        run(c.call, pa + c.offset_a[i] * ea, pb + c.offset_b[i] * es, pc + at, py + at, lt_workspace);
      }
    }
    const PostOpPass& post = residual ? post_after_c_ : post_;
    if (direct_e4m3_) return;  // (cuBLASLt's epilogue took every post-op)
    if (staged) {
      KernelArgs result = args;
      result.outputs[0] = y;
      post.run_to_e4m3(result, args.outputs[0].data, e4m3_inverse_scale_, "matmul post-ops to e4m3");
    } else {
      post.run(args, "matmul post-ops");
    }
  }

 private:
  bool fp8() const { return compute_ == Compute::Fp8; }

  /// The operand layout of the FP8 calls: the weight stored [N, K] (transposed), A as the layer has it.
  MatrixMultiplyParams fp8_params() const {
    MatrixMultiplyParams p = p_;
    p.transpose_b = true;
    return p;
  }

  /// FP8 without a tuned algorithm: fails (Unsupported) unless cuBLASLt has one for the call at the opt
  /// shape, so that tactic selection passes over the tactic (and a plan load fails naming the layer) instead
  /// of the first execute failing.
  void require_fp8_algorithm(const LayerInfo& info) const {
    std::optional<MatmulCallKey> key = opt_call(info);
    if (!key) return;
    KILN_CHECK(!heuristic(*describe(*key), *key, 1).empty(), Unsupported, "matrix multiply '",
               info.layer->name, "': cuBLASLt has no FP8 algorithm for ", key->m, "x", key->k, " by ", key->k,
               "x", key->n);
  }

  /// Descriptor and layouts of call `c` (count matrices, strides between a / b matrices; C packed); no
  /// algorithm.
  std::unique_ptr<LtPlan> describe(const MatmulCallKey& c) const {
    auto plan = std::make_unique<LtPlan>();
    cudaDataType_t t = cuda_type(dtype_);
    // FP8: E4M3 operands (the output, C and bias keep the layer's dtype).
    cudaDataType_t operand_t = fp8() ? CUDA_R_8F_E4M3 : t;
    const MatrixMultiplyParams p = fp8() ? fp8_params() : p_;
    int64_t m = c.m, n = c.n, k = c.k;
    KILN_CUBLAS_CHECK(cublasLtMatmulDescCreate(
        &plan->desc, compute_ == Compute::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
        CUDA_R_32F));
    // Column-major D (n x m) = X (n x k) * Y (k x m) with X = op(B)^T from b, Y = op(A)^T from a.
    cublasOperation_t ta = p.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = p.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    KILN_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    KILN_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    cublasLtEpilogue_t epi = epilogue_;
    KILN_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    if (bias_.data()) {
      const void* bias = bias_.data();
      KILN_CUBLAS_CHECK(
          cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    }
    if (fp8()) {
      // cuBLASLt's A is the weight (its scale first in fp8_scales_), its B the activations.
      const float* scales = fp8_scales_.as<float>();
      const float* w_scale = scales;
      const float* a_scale = scales + kFp8ScaleStride;
      KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                       &w_scale, sizeof(w_scale)));
      KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                                       &a_scale, sizeof(a_scale)));
      const int8_t fast = kFp8FastAccumulation;
      KILN_CUBLAS_CHECK(
          cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)));
    }
    // Stored b: [k, n] row-major = column-major n x k (ld n); transposed [n, k] = column-major k x n (ld k).
    uint64_t xr = p.transpose_b ? k : n, xc = p.transpose_b ? n : k;
    uint64_t yr = p.transpose_a ? m : k, yc = p.transpose_a ? k : m;
    KILN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->lb, operand_t, xr, xc, static_cast<int64_t>(xr)));
    KILN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->la, operand_t, yr, yc, static_cast<int64_t>(yr)));
    KILN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->lc, t, n, m, n));
    if (direct_e4m3_) {
      // D in E4M3, scaled by 1 / its scale; the bias keeps the layer's dtype (C's; D's by default).
      KILN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->ld, CUDA_R_8F_E4M3, n, m, n));
      const float* d_scale = fp8_scales_.as<float>() + 2 * kFp8ScaleStride;
      KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                                                       &d_scale, sizeof(d_scale)));
      const int32_t bias_type = t;
      KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                       &bias_type, sizeof(bias_type)));
    }
    if (c.count > 1) {
      int32_t cnt = static_cast<int32_t>(c.count);
      int64_t sa = c.stride_a, sb = c.stride_b, sc = m * n;
      KILN_CUBLAS_CHECK(
          cublasLtMatrixLayoutSetAttribute(plan->lb, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &cnt, sizeof(cnt)));
      KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
          plan->lb, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sb, sizeof(sb)));
      KILN_CUBLAS_CHECK(
          cublasLtMatrixLayoutSetAttribute(plan->la, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &cnt, sizeof(cnt)));
      KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
          plan->la, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sa, sizeof(sa)));
      for (cublasLtMatrixLayout_t l : {plan->lc, plan->ld}) {
        if (!l) continue;
        KILN_CUBLAS_CHECK(
            cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &cnt, sizeof(cnt)));
        KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                           &sc, sizeof(sc)));
      }
    }
    return plan;
  }

  /// Up to `max` heuristic candidates for `plan` (workspace kWorkspace, the key's pointer alignment), best
  /// first.
  std::vector<cublasLtMatmulHeuristicResult_t> heuristic(const LtPlan& plan, const MatmulCallKey& c,
                                                         int max) const {
    cublasLtMatmulPreference_t pref = nullptr;
    KILN_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = kWorkspace;
    uint32_t al = static_cast<uint32_t>(c.align);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al, sizeof(al));
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al, sizeof(al));
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al, sizeof(al));
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al, sizeof(al));
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(max));
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_handle(), plan.desc, plan.lb, plan.la, plan.lc,
                                                       plan.d_layout(), pref, max, results.data(), &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS) found = 0;
    results.resize(static_cast<size_t>(std::max(found, 0)));
    std::erase_if(results,
                  [](const cublasLtMatmulHeuristicResult_t& r) { return r.state != CUBLAS_STATUS_SUCCESS; });
    return results;
  }

  /// The per-context plan of call `c`: the tuned algorithm for the tuned call (pointers aligned as it needs),
  /// else cuBLASLt's first choice.
  std::unique_ptr<LtPlan> make_plan(const MatmulCallKey& c) const {
    auto plan = describe(c);
    MatmulCallKey shape = c;
    shape.align = tuned_.call.align;
    if (has_tuned_ && shape == tuned_.call && c.align >= tuned_align_) {
      std::memcpy(&plan->algo, tuned_.algo.data(), sizeof(plan->algo));
      ++g_used;
      return plan;
    }
    auto results = heuristic(*plan, c, 1);
    KILN_CHECK(!results.empty(), Unsupported, "cuBLASLt has no algorithm for a ", c.m, "x", c.k, " by ", c.k,
               "x", c.n, " ", dtype_name(dtype_), " matmul");
    plan->algo = results[0].algo;
    return plan;
  }

  /// Enqueues the call of `plan` with algorithm `algo`: y = a b + beta * c (+ the epilogue's bias), a, b, c
  /// and y at their call's start (c laid out as y; beta 0 reads nothing from it).
  cublasStatus_t enqueue(const LtPlan& plan, const cublasLtMatmulAlgo_t& algo, const void* pa, const void* pb,
                         const void* pc, float beta, void* py, void* workspace, cudaStream_t stream) const {
    const float alpha = 1.0f;
    // A D of its own type (E4M3) never has a C to add (beta 0), but cuBLASLt refuses C == D with differing
    // descriptors as an in-place call: C then points at A, unread.
    if (plan.ld) pc = pa;
    return cublasLtMatmul(lt_handle(), plan.desc, &alpha, pb, plan.lb, pa, plan.la, &beta, pc, plan.lc, py,
                          plan.d_layout(), &algo, workspace, kWorkspace, stream);
  }

  /// The dims of a, b and y at the layer's opt shape, when they are concrete and not empty.
  bool opt_dims(const LayerInfo& info, Dims* a, Dims* b, Dims* y) const {
    *a = info.inputs[0].opt;
    *b = b_weight_.data() ? b_dims_ : info.inputs.size() > 1 ? info.inputs[1].opt : Dims{};
    *y = info.outputs[0].opt;
    for (const Dims* d : {a, b, y}) {
      if (d->size() < 2 || std::any_of(d->begin(), d->end(), [](int64_t x) { return x < 0; })) return false;
    }
    return numel(*y) > 0;
  }

  /// The key of the (first) call at the opt shape with kTuneAlign-aligned buffers.
  std::optional<MatmulCallKey> opt_call(const LayerInfo& info) const {
    Dims a, b, y;
    if (!opt_dims(info, &a, &b, &y)) return std::nullopt;
    MatmulCallKey key = matmul_calls(fp8() ? fp8_params() : p_, a, b, y).call;
    key.align = kTuneAlign;
    return key;
  }

  /// Times cuBLASLt's heuristic candidates for the opt-shape call and keeps the fastest (see the file
  /// comment).
  void tune(const LayerInfo& info) {
    Dims a, b, y;
    if (!opt_dims(info, &a, &b, &y)) return;
    const std::string& name = info.layer->name;
    MatmulCallKey key = *opt_call(info);
    std::unique_ptr<LtPlan> plan = describe(key);
    auto cands = heuristic(*plan, key, kTuneCandidates);
    if (cands.empty()) return;  // the first execute reports it
    std::string shape = std::to_string(key.m) + "x" + std::to_string(key.k) + "x" + std::to_string(key.n) +
                        (key.count > 1 ? " (batch " + std::to_string(key.count) + ")" : "");
    size_t best = 0;
    if (cands.size() > 1) {
      try {
        std::optional<size_t> pick = time_candidates(*plan, cands, a, b, y, name, shape);
        if (!pick) return;
        best = *pick;
      } catch (const Error& e) {
        (void)cudaGetLastError();  // leave no launch error behind for the next kernel
        KILN_DEBUG("engine: matmul '", name, "': timing cuBLASLt candidates failed (", e.message(),
                   "); cuBLASLt's first choice at run time");
        return;
      }
    } else {
      KILN_DEBUG("engine: matmul '", name, "' ", shape, ": 1 cuBLASLt candidate");
    }
    std::memcpy(tuned_.algo.data(), &cands[best].algo, sizeof(tuned_.algo));
    tuned_.call = key;
    tuned_align_ = required_alignment(cands[best].algo);
    has_tuned_ = true;
    ++g_tuned;
  }

  /// Runs every candidate on scratch buffers and returns the index of the fastest median, or nothing when
  /// none ran. Logs the choice.
  std::optional<size_t> time_candidates(const LtPlan& plan,
                                        const std::vector<cublasLtMatmulHeuristicResult_t>& cands,
                                        const Dims& a, const Dims& b, const Dims& y, const std::string& name,
                                        const std::string& shape) const {
    DeviceBuffer da = scratch(dtype_, numel(a), 1, fp8()), db,
                 dy(static_cast<size_t>(numel(y)) * dtype_size(dtype_));
    if (!b_weight_.data()) db = scratch(dtype_, numel(b), 2);
    const void* pb = b_weight_.data() ? b_weight_.data() : db.data();
    DeviceBuffer ws(kWorkspace);
    size_t nc = cands.size();
    TuneResources res(2 * nc * kTuneSamples);
    std::vector<bool> ok(nc, true);
    auto launch = [&](size_t c, int times) {
      for (int r = 0; r < times && ok[c]; ++r) {
        ok[c] = enqueue(plan, cands[c].algo, da.data(), pb, dy.data(), 0.0f, dy.data(), ws.data(),
                        res.stream) == CUBLAS_STATUS_SUCCESS;
      }
    };
    for (size_t c = 0; c < nc; ++c) launch(c, kTuneWarmup);
    KILN_CUDA_CHECK(cudaStreamSynchronize(res.stream));
    // Repetitions per sample: the first candidate that runs, timed once, sets how many make kTuneSampleMs.
    int reps = 1;
    for (size_t c = 0; c < nc; ++c) {
      if (!ok[c]) continue;
      KILN_CUDA_CHECK(cudaEventRecord(res.events[0], res.stream));
      launch(c, 1);
      KILN_CUDA_CHECK(cudaEventRecord(res.events[1], res.stream));
      KILN_CUDA_CHECK(cudaEventSynchronize(res.events[1]));
      float ms = 0;
      KILN_CUDA_CHECK(cudaEventElapsedTime(&ms, res.events[0], res.events[1]));
      if (ok[c] && ms > 0) reps = static_cast<int>(std::clamp(kTuneSampleMs / ms + 1.0f, 1.0f, 64.0f));
      break;
    }
    // Samples in rounds (one of each candidate per round), so that other load hits all candidates alike.
    for (int s = 0; s < kTuneSamples; ++s) {
      for (size_t c = 0; c < nc; ++c) {
        if (!ok[c]) continue;
        size_t e = 2 * (c * kTuneSamples + s);
        KILN_CUDA_CHECK(cudaEventRecord(res.events[e], res.stream));
        launch(c, reps);
        KILN_CUDA_CHECK(cudaEventRecord(res.events[e + 1], res.stream));
      }
    }
    KILN_CUDA_CHECK(cudaStreamSynchronize(res.stream));
    std::vector<float> median(nc, -1.0f);
    std::optional<size_t> best;
    for (size_t c = 0; c < nc; ++c) {
      if (!ok[c]) continue;
      std::vector<float> t(kTuneSamples);
      for (int s = 0; s < kTuneSamples; ++s) {
        size_t e = 2 * (c * kTuneSamples + s);
        KILN_CUDA_CHECK(cudaEventElapsedTime(&t[s], res.events[e], res.events[e + 1]));
      }
      std::nth_element(t.begin(), t.begin() + kTuneSamples / 2, t.end());
      median[c] = t[kTuneSamples / 2] / static_cast<float>(reps);
      if (!best || median[c] < median[*best]) best = c;
    }
    if (best && ok[0] && median[*best] > (1.0f - kTuneMargin) * median[0]) best = 0;
    size_t failed = static_cast<size_t>(std::count(ok.begin(), ok.end(), false));
    if (!best) {
      KILN_DEBUG("engine: matmul '", name, "' ", shape, ": none of ", nc,
                 " cuBLASLt candidates ran; cuBLASLt's first choice at run time");
      return std::nullopt;
    }
    KILN_INFO("engine: matmul '", name, "' ", shape, ": ", nc, " cuBLASLt candidates",
              failed ? " (" + std::to_string(failed) + " failed)" : std::string(), ", chose #", *best + 1,
              " ", ms_text(median[*best]), " vs first ", ok[0] ? ms_text(median[0]) : std::string("failed"));
    return best;
  }

  /// Takes the algorithm the plan recorded when it was made for this kernel's opt-shape call and
  /// configuration and cuBLASLt accepts it; otherwise warns (once per process) and keeps the heuristic.
  void use_stored(const LayerInfo& info) {
    std::string why;
    MatmulPlanData d;
    std::optional<MatmulCallKey> key = opt_call(info);
    if (!decode_matmul_plan_data(*info.plan_data, &d, &why)) {
      why = "malformed: " + why;
    } else if (!key || d.call != *key || d.dtype != tuned_.dtype || d.compute != tuned_.compute ||
               d.transpose_a != tuned_.transpose_a || d.transpose_b != tuned_.transpose_b ||
               d.epilogue != tuned_.epilogue) {
      why = "made for another shape or configuration";
    } else {
      std::unique_ptr<LtPlan> plan = describe(d.call);
      cublasLtMatmulAlgo_t algo;
      std::memcpy(&algo, d.algo.data(), sizeof(algo));
      cublasLtMatmulHeuristicResult_t check{};
      cublasStatus_t st = cublasLtMatmulAlgoCheck(lt_handle(), plan->desc, plan->lb, plan->la, plan->lc,
                                                  plan->d_layout(), &algo, &check);
      if (st != CUBLAS_STATUS_SUCCESS) {
        why = "cuBLASLt refuses the algorithm (status " + std::to_string(int(st)) + ")";
      } else if (check.workspaceSize > kWorkspace) {
        why = "the algorithm needs " + std::to_string(check.workspaceSize) + " bytes of workspace";
      } else {
        tuned_ = d;
        tuned_align_ = required_alignment(algo);
        has_tuned_ = true;
        ++g_stored;
        return;
      }
    }
    ++g_rejected;
    if (!g_warned_rejected.exchange(true)) {
      KILN_WARN("engine: layer '", info.layer->name, "': the plan's cuBLASLt algorithm is not usable (", why,
                "); using cuBLASLt's heuristic (further such layers are logged at debug level)");
    } else {
      KILN_DEBUG("engine: layer '", info.layer->name, "': the plan's cuBLASLt algorithm is not usable (", why,
                 "); using cuBLASLt's heuristic");
    }
  }

  MatrixMultiplyParams p_;
  Compute compute_ = Compute::Exact;
  DType dtype_ = DType::Float32;
  // FP8: the weight's and A's scales on the device (cuBLASLt reads them there).
  DeviceBuffer fp8_scales_;
  // An E4M3 output: the workspace bytes in front of cuBLASLt's that stage the result, and 1 / its scale.
  size_t staged_bytes_ = 0;
  float e4m3_inverse_scale_ = 1.0f;
  bool direct_e4m3_ = false;  // cuBLASLt writes the E4M3 output itself (no staging, no pass)
  Dims b_dims_;
  DeviceBuffer b_weight_, bias_;
  cublasLtEpilogue_t epilogue_ = CUBLASLT_EPILOGUE_DEFAULT;
  int first_residual_ = 1;  // the layer input of the first residual
  PostOpPass post_;
  bool residual_in_c_ = false;  // post-op 0 is a residual sum cuBLASLt can add as C
  PostOpPass post_after_c_;     // the post-ops after it, for calls that did
  /// The configuration, and when has_tuned_ the tuned call and its algorithm (what plan_data() records).
  MatmulPlanData tuned_;
  bool has_tuned_ = false;
  int tuned_align_ = kTuneAlign;  // the pointer alignment the tuned algorithm needs
};

bool applies(const LayerInfo& layer, std::string* why) {
  if (!ranks_fit(layer, why)) return false;
  DType dt = layer.outputs[0].dtype;
  for (const auto& t : layer.inputs) {
    if (t.dtype != dt) return refuse(why, "mixed dtypes");
  }
  if (dt != DType::Float32 && dt != DType::Float16 && dt != DType::BFloat16) {
    return refuse(why, std::string("dtype ") + dtype_name(dt) + " (cuBLASLt path takes f32, f16, bf16)");
  }
  bool b_weight = !layer.layer->weights.empty() && layer.layer->weights[0].defined();
  size_t operands = b_weight ? 1 : 2;
  return PostOpPass::fits(layer.params<MatrixMultiplyParams>().post_ops.size(), false,
                          layer.inputs.size() > operands ? layer.inputs.size() - operands : 0, why);
}

bool applies_tf32(const LayerInfo& layer, std::string* why) {
  return applies(layer, why) && f32_output(layer, why);
}

bool applies_fp8(const LayerInfo& layer, std::string* why) {
  return applies(layer, why) && fp8_matmul_fits(layer, why);
}

std::unique_ptr<Kernel> create(const LayerInfo& layer) {
  return std::make_unique<MatmulKernel>(layer, Compute::Exact);
}
std::unique_ptr<Kernel> create_tf32(const LayerInfo& layer) {
  return std::make_unique<MatmulKernel>(layer, Compute::Tf32);
}
std::unique_ptr<Kernel> create_fp8(const LayerInfo& layer) {
  return std::make_unique<MatmulKernel>(layer, Compute::Fp8);
}

/// The FP8 tactic reads A as E4M3, the rest Plain.
TacticFormats fp8_formats(const LayerInfo& layer) {
  TacticFormats f;
  f.inputs.assign(layer.inputs.size(), TensorFormat::Plain);
  f.inputs[0] = TensorFormat::E4M3;
  f.outputs.assign(layer.outputs.size(), TensorFormat::Plain);
  return f;
}

}  // namespace

bool matmul_post_ops_need_a_pass(const std::vector<PostOp>& post_ops) {
  return post_ops.size() > (gelu_epilogue(post_ops) || residual_as_c(post_ops) ? 1u : 0u);
}

MatmulTuningStats matmul_tuning_stats() {
  return {g_tuned.load(), g_stored.load(), g_rejected.load(), g_used.load()};
}

void register_matmul(KernelTable& rows) {
  // FP8 first, then TF32: offered only to builds that allow them, and when the build does not time tactics
  // the first candidate wins (as INT8 does on the CPU).
  rows.add({.name = "cublaslt_fp8",
            .kind = LayerKind::MatrixMultiply,
            .applies = &applies_fp8,
            .create = &create_fp8,
            .formats = &fp8_formats,
            .writes = &fp8_writes_e4m3,
            .fp8 = true});
  rows.add({.name = "cublaslt_tf32",
            .kind = LayerKind::MatrixMultiply,
            .applies = &applies_tf32,
            .create = &create_tf32,
            .writes = &writes_e4m3,
            .tf32 = true});
  rows.add({.name = "cublaslt",
            .kind = LayerKind::MatrixMultiply,
            .applies = &applies,
            .create = &create,
            .writes = &writes_e4m3});
}

}  // namespace kiln::engine::cuda
