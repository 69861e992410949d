// MatrixMultiply through cuBLASLt (tactic "cublaslt"): fp32 (strict fp32 compute, no TF32), fp16 and bf16
// with fp32 accumulation; tactic "cublaslt_tf32" (fp32 only, offered when the build allows TF32) computes
// fp32 with CUBLAS_COMPUTE_32F_FAST_TF32; bias and a leading ReLU / tanh-GELU fused as epilogues; the
// remaining post-ops (other activations, residual sums) in one in-place pass (post_ops.h). Batched operands
// broadcast; a batch that is not a constant stride is run as one call per matrix. The algorithm is cuBLASLt's
// first heuristic candidate for each shape, cached per context (made by the first execute of a shape, before
// any CUDA-graph recording: the matmul itself only enqueues, using the context's preallocated workspace).
// Row-major C = A B is computed as column-major C^T = B^T A^T.

#include <cublasLt.h>

#include <map>
#include <mutex>
#include <tuple>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/post_ops.h"

#define KILN_CUBLAS_CHECK(expr)                                                                            \
  do {                                                                                                     \
    cublasStatus_t kiln_cublas_st_ = (expr);                                                               \
    KILN_CHECK(kiln_cublas_st_ == CUBLAS_STATUS_SUCCESS, Internal, "cuBLASLt error ", int(kiln_cublas_st_), \
               " (", #expr, ")");                                                                          \
  } while (0)

namespace kiln::engine::cuda {
namespace {

constexpr size_t kWorkspace = size_t{32} << 20;

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

int alignment_of(const void* p) {
  auto v = reinterpret_cast<uintptr_t>(p);
  int a = 256;
  while (a > 1 && v % a) a /= 2;
  return a;
}

/// One configured cuBLASLt call shape (descriptor, layouts, algorithm).
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

using PlanKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int, int, int, bool>;

struct MatmulState : KernelState {
  std::map<PlanKey, std::unique_ptr<LtPlan>> plans;
};

class MatmulKernel : public Kernel {
 public:
  MatmulKernel(const LayerInfo& info, bool tf32) : p_(info.params<MatrixMultiplyParams>()), tf32_(tf32) {
    const Layer& l = *info.layer;
    dtype_ = info.outputs[0].dtype;
    if (!l.weights.empty() && l.weights[0].defined()) {
      b_dims_ = l.weights[0].value.sizes();
      b_weight_ = upload(l.weights[0].value, dtype_);
    }
    if (l.weights.size() > 1 && l.weights[1].defined()) bias_ = upload(l.weights[1].value, dtype_);
    size_t first_post = 0;
    epilogue_ = bias_.data() ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    if (!p_.post_ops.empty() && p_.post_ops[0].kind == PostOp::Activation) {
      auto k = p_.post_ops[0].activation.kind;
      if (k == ActivationKind::Relu) {
        epilogue_ = bias_.data() ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
        first_post = 1;
      } else if (k == ActivationKind::GeluTanh) {
        epilogue_ = bias_.data() ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
        first_post = 1;
      }
    }
    // The rest of the post-ops in one pass over the output; residuals follow the operands among the inputs.
    post_ = PostOpPass(p_.post_ops, first_post, nullptr, 0, b_weight_.data() ? 1 : 2, dtype_);
  }

  size_t workspace_size() const override { return kWorkspace; }
  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<MatmulState>(); }

  void execute(KernelArgs& args) const override {
    const TensorView& a = args.inputs[0];
    TensorView b = b_weight_.data() ? TensorView{b_weight_.data(), dtype_, b_dims_} : args.inputs[1];
    const TensorView& y = args.outputs[0];
    size_t ra = a.dims.size(), rb = b.dims.size();
    int64_t m = p_.transpose_a ? a.dims[ra - 1] : a.dims[ra - 2];
    int64_t k = p_.transpose_a ? a.dims[ra - 2] : a.dims[ra - 1];
    int64_t n = p_.transpose_b ? b.dims[rb - 2] : b.dims[rb - 1];
    Dims batch(y.dims.begin(), y.dims.end() - 2);
    int64_t nb = numel(batch);
    if (y.numel() == 0) return;
    // Per output batch index, the element offsets of the a / b matrices (broadcast).
    auto offsets = [&](const Dims& d, int64_t mat) {
      std::vector<int64_t> off(static_cast<size_t>(nb), 0);
      Dims bd(d.begin(), d.end() - 2);
      auto st = row_strides(bd);
      size_t k0 = batch.size() - bd.size();
      for (int64_t i = 0; i < nb; ++i) {
        int64_t rem = i, o = 0;
        for (int64_t q = static_cast<int64_t>(batch.size()) - 1; q >= 0; --q) {
          int64_t idx = rem % batch[q];
          rem /= batch[q];
          if (static_cast<size_t>(q) >= k0 && bd[q - k0] != 1) o += idx * st[q - k0];
        }
        off[i] = o * mat;
      }
      return off;
    };
    auto oa = offsets(a.dims, m * k), ob = offsets(b.dims, k * n);
    auto uniform = [&](const std::vector<int64_t>& off) {
      for (int64_t i = 1; i < nb; ++i) {
        if (off[i] - off[i - 1] != off[1] - off[0]) return false;
      }
      return true;
    };
    bool batched = uniform(oa) && uniform(ob);
    int64_t sa = nb > 1 ? oa[1] - oa[0] : 0, sb = nb > 1 ? ob[1] - ob[0] : 0;
    auto* state = static_cast<MatmulState*>(args.state);
    size_t es = dtype_size(dtype_);
    auto run = [&](const uint8_t* pa, const uint8_t* pb, uint8_t* py, int64_t count) {
      int align = std::min({alignment_of(pa), alignment_of(pb), alignment_of(py)});
      PlanKey key{m, n, k, count, count > 1 ? sa : 0, count > 1 ? sb : 0, align, 0, 0, false};
      auto& slot = state->plans[key];
      if (!slot) slot = make_plan(m, n, k, count, sa, sb, align);
      float alpha = 1.0f, beta = 0.0f;
      KILN_CUBLAS_CHECK(cublasLtMatmul(lt_handle(), slot->desc, &alpha, pb, slot->lb, pa, slot->la, &beta, py, slot->lc, py,
                                       slot->lc, &slot->algo, args.workspace, kWorkspace, stream_of(args)));
    };
    auto* pa = static_cast<const uint8_t*>(a.data);
    auto* pb = static_cast<const uint8_t*>(b.data);
    auto* py = static_cast<uint8_t*>(y.data);
    if (batched && nb > 1 && sb == 0 && !p_.transpose_a && sa == m * k) {
      // A batch of rows against one b (a linear layer): one matrix of nb * m rows.
      int64_t rows = m;
      m = nb * rows;
      run(pa + oa[0] * es, pb + ob[0] * es, py, 1);
      m = rows;
    } else if (batched) {
      run(pa + oa[0] * es, pb + ob[0] * es, py, nb);
    } else {
      for (int64_t i = 0; i < nb; ++i) run(pa + oa[i] * es, pb + ob[i] * es, py + i * m * n * es, 1);
    }
    post_.run(args, "matmul post-ops");
  }

 private:
  /// Descriptor and layouts for `count` matrices (strides sa, sb between a / b matrices; C packed).
  std::unique_ptr<LtPlan> make_plan(int64_t m, int64_t n, int64_t k, int64_t count, int64_t sa, int64_t sb,
                                    int align) const {
    auto plan = std::make_unique<LtPlan>();
    cudaDataType_t t = cuda_type(dtype_);
    KILN_CUBLAS_CHECK(cublasLtMatmulDescCreate(
        &plan->desc, tf32_ ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F));
    // Column-major D (n x m) = X (n x k) * Y (k x m) with X = op(B)^T from b, Y = op(A)^T from a.
    cublasOperation_t ta = p_.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = p_.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    cublasLtEpilogue_t epi = epilogue_;
    KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    if (bias_.data()) {
      const void* bias = bias_.data();
      KILN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    }
    // Stored b: [k, n] row-major = column-major n x k (ld n); transposed [n, k] = column-major k x n (ld k).
    uint64_t xr = p_.transpose_b ? k : n, xc = p_.transpose_b ? n : k;
    uint64_t yr = p_.transpose_a ? m : k, yc = p_.transpose_a ? k : m;
    KILN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->lb, t, xr, xc, static_cast<int64_t>(xr)));
    KILN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->la, t, yr, yc, static_cast<int64_t>(yr)));
    KILN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->lc, t, n, m, n));
    if (count > 1) {
      int32_t c = static_cast<int32_t>(count);
      int64_t sc = m * n;
      KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(plan->lb, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &c, sizeof(c)));
      KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(plan->lb, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sb, sizeof(sb)));
      KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(plan->la, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &c, sizeof(c)));
      KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(plan->la, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sa, sizeof(sa)));
      KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(plan->lc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &c, sizeof(c)));
      KILN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(plan->lc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sc, sizeof(sc)));
    }
    cublasLtMatmulPreference_t pref = nullptr;
    KILN_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = kWorkspace;
    uint32_t al = static_cast<uint32_t>(align);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al, sizeof(al));
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al, sizeof(al));
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al, sizeof(al));
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al, sizeof(al));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_handle(), plan->desc, plan->lb, plan->la, plan->lc, plan->lc,
                                                       pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    KILN_CHECK(st == CUBLAS_STATUS_SUCCESS && found > 0, Unsupported, "cuBLASLt has no algorithm for a ", m, "x", k,
               " by ", k, "x", n, " ", dtype_name(dtype_), " matmul (status ", int(st), ")");
    plan->algo = result.algo;
    return plan;
  }

  MatrixMultiplyParams p_;
  bool tf32_ = false;
  DType dtype_ = DType::Float32;
  Dims b_dims_;
  DeviceBuffer b_weight_, bias_;
  cublasLtEpilogue_t epilogue_ = CUBLASLT_EPILOGUE_DEFAULT;
  PostOpPass post_;
};

bool applies(const LayerInfo& layer, std::string* why) {
  if (!ranks_fit(layer, why)) return false;
  DType dt = layer.outputs[0].dtype;
  for (const auto& t : layer.inputs) {
    if (t.dtype != dt) {
      if (why) *why = "mixed dtypes";
      return false;
    }
  }
  if (dt != DType::Float32 && dt != DType::Float16 && dt != DType::BFloat16) {
    if (why) *why = std::string("dtype ") + dtype_name(dt) + " (cuBLASLt path takes f32, f16, bf16)";
    return false;
  }
  bool b_weight = !layer.layer->weights.empty() && layer.layer->weights[0].defined();
  size_t operands = b_weight ? 1 : 2;
  return PostOpPass::fits(layer.params<MatrixMultiplyParams>().post_ops.size(), false,
                          layer.inputs.size() > operands ? layer.inputs.size() - operands : 0, why);
}

bool applies_tf32(const LayerInfo& layer, std::string* why) { return applies(layer, why) && f32_output(layer, why); }

std::unique_ptr<Kernel> create(const LayerInfo& layer) {
  return std::make_unique<MatmulKernel>(layer, false);
}
std::unique_ptr<Kernel> create_tf32(const LayerInfo& layer) {
  return std::make_unique<MatmulKernel>(layer, true);
}

}  // namespace

void register_matmul(std::vector<CudaKernelFactory>& rows) {
  // TF32 first: when the build allows it and does not time tactics, the first candidate wins.
  rows.push_back({"cublaslt_tf32", LayerKind::MatrixMultiply, &applies_tf32, &create_tf32, true});
  rows.push_back({"cublaslt", LayerKind::MatrixMultiply, &applies, &create});
}

}  // namespace kiln::engine::cuda
