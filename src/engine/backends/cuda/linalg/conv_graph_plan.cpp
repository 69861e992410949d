#include "engine/backends/cuda/linalg/conv_graph_plan.h"

#ifdef KILN_HAVE_CUDNN
#include <algorithm>
#include <array>

#include "engine/backends/cuda/linalg/conv_plan_data.h"
#include "kiln/support/error.h"

namespace kiln::engine::cuda {
namespace {

/// A backend descriptor, destroyed with its owner.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) {
    cudnnStatus_t st = cudnnBackendCreateDescriptor(type, &d_);
    KILN_CHECK(st == CUDNN_STATUS_SUCCESS, Internal, "cuDNN graph: creating descriptor ", int(type), ": ",
               cudnnGetErrorString(st));
  }
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  Desc(Desc&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}

  cudnnBackendDescriptor_t get() const { return d_; }
  cudnnBackendDescriptor_t release() { return std::exchange(d_, nullptr); }

  template <typename T>
  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T* values,
            int64_t count = 1) {
    cudnnStatus_t st = cudnnBackendSetAttribute(d_, name, type, count, values);
    KILN_CHECK(st == CUDNN_STATUS_SUCCESS, Internal, "cuDNN graph: setting attribute ", int(name), ": ",
               cudnnGetErrorString(st));
    return *this;
  }
  Desc& set_desc(cudnnBackendAttributeName_t name, const Desc& other) {
    cudnnBackendDescriptor_t v = other.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &v);
  }
  /// Finalizes; throws on failure.
  Desc& finalize(const char* what) {
    cudnnStatus_t st = cudnnBackendFinalize(d_);
    KILN_CHECK(st == CUDNN_STATUS_SUCCESS, Internal, "cuDNN graph: finalizing ", what, ": ",
               cudnnGetErrorString(st));
    return *this;
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

cudnnDataType_t io_type(DType dt) {
  switch (dt) {
    case DType::Float16: return CUDNN_DATA_HALF;
    case DType::BFloat16: return CUDNN_DATA_BFLOAT16;
    case DType::Float32: return CUDNN_DATA_FLOAT;
    case DType::Int8: return CUDNN_DATA_INT8;
    default: KILN_FAIL(Internal, "cuDNN graph convolution: dtype ", dtype_name(dt), " (takes f16, bf16, f32, s8)");
  }
}

/// Tensor ids in the graph and in the variant pack.
enum Uid : int64_t { kX = 1, kW, kY, kBias, kZ, kScale, kPost, kConvOut = 100, kBiased, kSummed, kScaled, kActivated };

/// A tensor of logical dims [n, c, h, w] stored channels-last (packed), `virt` for one inside the graph.
/// Every pointer is declared 16-byte aligned (conv_graph.cpp checks x, y and z at each call).
Desc tensor(int64_t uid, const Dims& d, cudnnDataType_t type, bool virt) {
  const int64_t align = 16;
  KILN_CHECK(d.size() == 4, Internal, "cuDNN graph convolution: a tensor of rank ", d.size());
  const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
  (void)n;
  const int64_t strides[4] = {c * h * w, 1, w * c, c};
  const bool is_virtual = virt;
  Desc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type)
      .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, d.data(), 4)
      .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides, 4)
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &align)
      .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &is_virtual)
      .finalize("a tensor");
  return t;
}

/// y = mode(x[, b]) computed in fp32; `alpha2` scales b.
Desc pointwise(cudnnPointwiseMode_t mode, const Desc& x, const Desc* b, const Desc& y, float alpha2 = 1.0f) {
  const cudnnDataType_t prec = CUDNN_DATA_FLOAT;
  Desc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode)
      .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &prec)
      .finalize("a pointwise descriptor");
  Desc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)
      .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  if (b) {
    op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (alpha2 != 1.0f) op.set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, &alpha2);
  }
  op.set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y).finalize("a pointwise operation");
  return op;
}

/// Whether an engine configuration's numerics are allowed (see the file comment).
bool numerics_allowed(cudnnBackendDescriptor_t cfg) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t n = 0;
  if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e) !=
      CUDNN_STATUS_SUCCESS) {
    return false;
  }
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t count = 0;
  if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes) != CUDNN_STATUS_SUCCESS) {
    return false;
  }
  for (int64_t i = 0; i < count; ++i) {
    switch (notes[i]) {
      case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
      case CUDNN_NUMERICAL_NOTE_FFT:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13: return false;
      default: break;
    }
  }
  return true;
}

}  // namespace

ConvGraphPlan::~ConvGraphPlan() {
  if (pack_) cudnnBackendDestroyDescriptor(pack_);
  if (plan_) cudnnBackendDestroyDescriptor(plan_);
}

std::vector<std::unique_ptr<ConvGraphPlan>> ConvGraphPlan::candidates(cudnnHandle_t handle,
                                                                      const ConvGraphSpec& s,
                                                                      size_t workspace_limit, int max,
                                                                      int rank) {
  KILN_CHECK(s.padding.size() == 2 && s.stride.size() == 2 && s.dilation.size() == 2, Internal,
             "cuDNN graph convolution: needs 2 spatial dims");
  const bool int8 = s.dtype == DType::Int8;
  const cudnnDataType_t io = io_type(s.dtype), f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32;
  // (INT8: y, z of their own dtypes, the bias fp32; otherwise all of the spec's dtype)
  const cudnnDataType_t y_type = int8 ? io_type(s.y_dtype) : io, z_type = int8 ? io_type(s.z_dtype) : io,
                        bias_type = int8 ? f32 : io;
  const bool epilogue = int8 || s.bias || s.residual || s.relu;
  Desc x = tensor(kX, s.x, io, false), w = tensor(kW, s.w, io, false), y = tensor(kY, s.y, y_type, false);
  Desc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const int64_t spatial = 2;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, int8 ? &i32 : &f32)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode)
      .set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial)
      .set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, s.dilation.data(), 2)
      .set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, s.stride.data(), 2)
      .set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, s.padding.data(), 2)
      .set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, s.padding.data(), 2)
      .finalize("the convolution descriptor");
  // The chain: conv -> [* scale] -> [+ bias] -> [+ alpha2 z] -> [relu] -> y; intermediate values virtual,
  // in fp32.
  std::vector<Desc> tensors;  // virtual tensors and the scale / bias / residual, alive until the graph is final
  tensors.reserve(10);
  const Desc* last = epilogue ? &tensors.emplace_back(tensor(kConvOut, s.y, f32, true)) : &y;
  const Desc* conv_out = last;
  const float alpha = 1.0f, beta = 0.0f;
  Desc conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  conv_op.set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x)
      .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w)
      .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, *conv_out)
      .set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta)
      .finalize("the convolution operation");
  std::vector<Desc> ops;
  ops.reserve(4);
  std::vector<int64_t> uids = {kX, kW, kY};
  // Each pointwise step writes y when it is the last, else a new virtual tensor.
  auto step = [&](cudnnPointwiseMode_t m, const Desc* b, bool is_last, int64_t uid, float a2 = 1.0f) {
    const Desc* out = is_last ? &y : &tensors.emplace_back(tensor(uid, s.y, f32, true));
    ops.push_back(pointwise(m, *last, b, *out, a2));
    last = out;
  };
  if (int8) {
    const Desc& scale = tensors.emplace_back(tensor(kScale, {1, s.y[1], 1, 1}, f32, false));
    step(CUDNN_POINTWISE_MUL, &scale, !s.bias && !s.residual && !s.relu && !s.post_scale, kScaled);
    uids.push_back(kScale);
  }
  if (s.bias) {
    const Desc& b = tensors.emplace_back(tensor(kBias, {1, s.y[1], 1, 1}, bias_type, false));
    step(CUDNN_POINTWISE_ADD, &b, !s.residual && !s.relu && !s.post_scale, kBiased);
    uids.push_back(kBias);
  }
  if (s.residual) {
    const Desc& z = tensors.emplace_back(tensor(kZ, s.y, z_type, false));
    step(CUDNN_POINTWISE_ADD, &z, !s.relu && !s.post_scale, kSummed, s.alpha2);
    uids.push_back(kZ);
  }
  if (s.relu) step(CUDNN_POINTWISE_RELU_FWD, nullptr, !s.post_scale, kActivated);
  if (s.post_scale) {
    const Desc& post = tensors.emplace_back(tensor(kPost, {1, s.y[1], 1, 1}, f32, false));
    step(CUDNN_POINTWISE_MUL, &post, true, 0);
    uids.push_back(kPost);
  }

  std::vector<cudnnBackendDescriptor_t> all = {conv_op.get()};
  for (const Desc& op : ops) all.push_back(op.get());
  Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph
      .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, all.data(),
           static_cast<int64_t>(all.size()))
      .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle);
  std::vector<std::unique_ptr<ConvGraphPlan>> out;
  if (cudnnBackendFinalize(graph.get()) != CUDNN_STATUS_SUCCESS) return out;  // no engine takes this graph
  Desc heuristic(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  const cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_A;
  heuristic.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &heur_mode);
  if (cudnnBackendFinalize(heuristic.get()) != CUDNN_STATUS_SUCCESS) return out;
  constexpr int kConfigs = 16;
  std::vector<Desc> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int i = 0; i < kConfigs; ++i)
    raw.push_back(configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR).get());
  int64_t found = 0;
  if (cudnnBackendGetAttribute(heuristic.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                               kConfigs, &found, raw.data()) != CUDNN_STATUS_SUCCESS) {
    return out;
  }
  // One plan of configuration i, when it qualifies.
  auto make_plan = [&](int64_t i) -> std::unique_ptr<ConvGraphPlan> {
    if (!numerics_allowed(raw[static_cast<size_t>(i)])) return nullptr;
    Desc plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle)
        .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR,
             &raw[static_cast<size_t>(i)]);
    if (cudnnBackendFinalize(plan.get()) != CUDNN_STATUS_SUCCESS) return nullptr;
    count_conv_event(ConvEvent::GraphPlan);
    int64_t bytes = 0, n = 0;
    if (cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                 &n, &bytes) != CUDNN_STATUS_SUCCESS ||
        bytes < 0 || static_cast<size_t>(bytes) > workspace_limit) {
      return nullptr;
    }
    std::unique_ptr<ConvGraphPlan> p(new ConvGraphPlan());
    p->plan_ = plan.release();
    p->uids_ = uids;
    p->workspace_ = static_cast<size_t>(bytes);
    p->rank_ = static_cast<int>(i);
    return p;
  };
  const int64_t usable = std::min<int64_t>(found, kConfigs);
  if (rank >= 0 && rank < usable) {
    if (auto p = make_plan(rank)) {
      out.push_back(std::move(p));
      return out;
    }
    max = 1;
  }
  for (int64_t i = 0; i < usable && static_cast<int>(out.size()) < max; ++i) {
    if (auto p = make_plan(i)) out.push_back(std::move(p));
  }
  return out;
}

cudnnStatus_t ConvGraphPlan::execute(cudnnHandle_t handle, const void* x, const void* w, void* y,
                                     const void* bias, const void* z, void* workspace, const void* scale,
                                     const void* post) {
  // Unused slots (no bias or residual in the graph) stay null; no allocation unless the pointers changed.
  const std::array<const void*, 8> pointers = {x, w, y, bias, z, workspace, scale, post};
  if (!pack_ || pointers != pack_pointers_) {
    if (pack_) cudnnBackendDestroyDescriptor(pack_);
    pack_ = nullptr;
    Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    std::vector<void*> data;  // in uids_ order
    for (int64_t uid : uids_) {
      const void* p = uid == kX      ? x
                      : uid == kW    ? w
                      : uid == kY    ? y
                      : uid == kBias ? bias
                      : uid == kZ    ? z
                      : uid == kScale ? scale
                                      : post;
      data.push_back(const_cast<void*>(p));
    }
    void* ws = workspace;
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids_.data(),
             static_cast<int64_t>(uids_.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, data.data(),
             static_cast<int64_t>(data.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &ws);
    cudnnStatus_t st = cudnnBackendFinalize(pack.get());
    if (st != CUDNN_STATUS_SUCCESS) return st;
    pack_ = pack.release();
    pack_pointers_ = pointers;
  }
  return cudnnBackendExecute(handle, plan_, pack_);
}

}  // namespace kiln::engine::cuda

#endif
