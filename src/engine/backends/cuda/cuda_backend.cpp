// The CUDA backend: device memory, stream-ordered copies, CUDA graphs, and kernels from the CUDA kernel table
// (supports, tactics, formats and create_kernel are TableBackend's).
// Creating it without a usable GPU is a clear kiln::Error.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/linalg/post_ops.h"
#include "engine/backends/cuda/movement/movement_launch.h"

namespace kiln::engine::cuda {

std::unique_ptr<DeviceClock> make_device_clock();  // device_clock.cpp

namespace {

// Host-to-device copies up to this size travel as a kernel parameter (copied at launch), so the host source
// may be released at once without waiting for the stream (host-layer values, shape tensors). Larger host
// sources (constants bound as outputs) are the plan's own weights, alive as long as the plan.
constexpr size_t kInlineCopyBytes = 1024;

}  // namespace

DeviceBuffer upload(const HostTensor& t, DType dtype) {
  if (!t.defined()) return DeviceBuffer();
  HostTensor c = t.dtype() == dtype ? t : t.to(dtype);
  return DeviceBuffer(c.data(), c.nbytes());
}

bool ranks_fit(const LayerInfo& layer, std::string* why) {
  for (const auto* list : {&layer.inputs, &layer.outputs}) {
    for (const auto& t : *list) {
      if (t.max.size() > static_cast<size_t>(kMaxRank)) {
        return refuse(why, "tensor '" + t.name + "' has rank " + std::to_string(t.max.size()) +
                               " (cuda kernels take <= 8)");
      }
    }
  }
  return true;
}

bool float_dtypes(const LayerInfo& layer, std::string* why) {
  for (const auto* list : {&layer.inputs, &layer.outputs}) {
    for (const auto& t : *list) {
      if (t.dtype == DType::Float64) {
        return refuse(why, "tensor '" + t.name + "' is f64 (cuda kernels take f32, f16, bf16)");
      }
    }
  }
  return true;
}

int current_compute_capability() {
  int device = 0, major = 0, minor = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

bool f32_output(const LayerInfo& layer, std::string* why) {
  if (layer.outputs[0].dtype == DType::Float32) return true;
  return refuse(why, "TF32 is for f32 layers");
}

TacticFormats all_channels_last(const LayerInfo& layer) {
  TacticFormats f;
  f.inputs.assign(layer.inputs.size(), TensorFormat::ChannelsLast);
  f.outputs.assign(layer.outputs.size(), TensorFormat::ChannelsLast);
  return f;
}

const KernelTable& cuda_kernels() {
  static const KernelTable kRows = [] {
    KernelTable rows;
    register_pointwise(rows);
    register_movement(rows);
    register_reduction(rows);
    register_flash_attention(
        rows);  // before register_attention: "flash" is the Attention tactic without timing
    register_attention(rows);
    register_pooling(rows);
    register_matmul(rows);
    register_nhwc_conv(rows);   // before cuDNN's: untimed builds take Kiln's depthwise and grouped kernels
    register_conv_graph(rows);  // before register_convolution: the graph API wins within noise
    register_convolution(rows);
    register_scatter(rows);
    register_resize(rows);
    register_fill(rows);
    register_topk(rows);
    register_cumulative(rows);
    register_nonzero(rows);
    register_reformat(rows);
    return rows;
  }();
  return kRows;
}

namespace {

class CudaBackend : public TableBackend, public GraphRecorder {
 public:
  explicit CudaBackend(const BackendOptions&) : TableBackend(cuda_kernels(), TacticOrder::Registration) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    KILN_CHECK(e == cudaSuccess && count > 0, Unsupported,
               "engine backend 'cuda': no CUDA GPU is available (",
               e == cudaSuccess ? "no device found" : cudaGetErrorString(e), ")");
    KILN_CUDA_CHECK(cudaGetDevice(&device_));
    cudaDeviceProp prop{};
    KILN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
    sm_ = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    device_name_ = "cuda " + sm_ + " " + prop.name;
  }
  std::string name() const override { return "cuda"; }
  std::string device() const override { return device_name_; }
  bool supports_precision(LayerKind, DType dtype) const override {
    return dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16;
  }
  bool fuses_post_ops(const Layer& layer) const override {
    // Convolution and matrix multiply apply their post-ops in one pass of bounded size (post_ops.h).
    bool conv = layer.kind == LayerKind::Convolution;
    if (!conv && layer.kind != LayerKind::MatrixMultiply) return true;
    const auto& post =
        conv ? layer.get<ConvolutionParams>().post_ops : layer.get<MatrixMultiplyParams>().post_ops;
    size_t residuals =
        std::count_if(post.begin(), post.end(), [](const PostOp& op) { return op.kind == PostOp::Sum; });
    bool bias = conv && layer.weights.size() > 1 && layer.weights[1].defined();
    return PostOpPass::fits(post.size(), bias, residuals, nullptr);
  }
  bool post_ops_need_a_pass(const Layer& layer) const override {
    return layer.kind == LayerKind::MatrixMultiply &&
           matmul_post_ops_need_a_pass(layer.get<MatrixMultiplyParams>().post_ops);
  }
  bool int8_unsigned() const override { return false; }  // (cuDNN's INT8 convolutions read s8)
  ThreadPool* thread_pool() const override { return nullptr; }
  const GraphRecorder* graph_recorder() const override { return this; }
  std::unique_ptr<DeviceClock> device_clock() const override { return make_device_clock(); }
  bool record(const std::function<void(void* stream)>& record,
              std::unique_ptr<DeviceGraph>& graph) const override {
    return record_graph(record, graph);
  }
  void* allocate(size_t bytes) const override {
    if (bytes == 0) return nullptr;
    KILN_CHECK(!recording_graph(), Internal, "cuda: allocating ", bytes,
               " bytes of device memory while recording a CUDA graph (kernels must not allocate in execute)");
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes);
    KILN_CHECK(e == cudaSuccess, Io, "out of device memory allocating ", bytes,
               " bytes: ", cudaGetErrorString(e));
    return p;
  }
  void deallocate(void* pointer) const override {
    if (pointer) cudaFree(pointer);
  }
  bool host_accessible() const override { return false; }
  void copy(void* dst, const void* src, size_t bytes, CopyKind kind, void* stream) const override {
    if (bytes == 0) return;
    auto s = static_cast<cudaStream_t>(stream);
    if (kind == CopyKind::HostToDevice && bytes <= kInlineCopyBytes) {
      launch_inline_copy(dst, src, bytes, s);
      check_launch("host-to-device copy");
      return;
    }
    cudaMemcpyKind k = kind == CopyKind::HostToDevice   ? cudaMemcpyHostToDevice
                       : kind == CopyKind::DeviceToHost ? cudaMemcpyDeviceToHost
                                                        : cudaMemcpyDeviceToDevice;
    KILN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, k, s));
  }
  void synchronize(void* stream) const override {
    check_not_recording(static_cast<cudaStream_t>(stream), "waiting for the stream");
    KILN_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  }
  void check_plan_device(const std::string& plan_device) const override {
    // "cuda sm_90 NVIDIA H200": the second word is the compute capability the plan's kernels were chosen for.
    std::string recorded = plan_device.substr(0, plan_device.find(' ', 5));
    KILN_CHECK(recorded == "cuda " + sm_, InvalidInput, "plan was built for '", plan_device,
               "' but this GPU is ", sm_, " ('", device_name_, "'): rebuild the plan on this GPU");
  }

 private:
  int device_ = 0;
  std::string sm_, device_name_;
};

}  // namespace

std::unique_ptr<Backend> create_cuda_backend(const BackendOptions& options) {
  return std::make_unique<CudaBackend>(options);
}

}  // namespace kiln::engine::cuda
