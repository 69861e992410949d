#pragma once
// Host-side helpers of the CUDA backend: error checks, shapes and strides for the launch functions (launch.h,
// <family>/<family>_launch.h), device copies of weights, and the backend's kernel table (one row per tactic,
// like the CPU backend's).

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/backends/cuda/launch.h"
#include "engine/core/kernel_table.h"
#include "kiln/engine/backend.h"
#include "kiln/support/error.h"

#define KILN_CUDA_CHECK(expr)                                                                                  \
  do {                                                                                                         \
    cudaError_t kiln_cuda_err_ = (expr);                                                                       \
    KILN_CHECK(kiln_cuda_err_ == cudaSuccess, Internal, "CUDA error ", cudaGetErrorName(kiln_cuda_err_), ": ", \
               cudaGetErrorString(kiln_cuda_err_), " (", #expr, ")");                                          \
  } while (0)

namespace kiln::engine::cuda {

/// Throws kiln::Error when the last kernel launch failed (bad configuration, no device code for this GPU).
inline void check_launch(const char* what) {
  cudaError_t e = cudaGetLastError();
  KILN_CHECK(e == cudaSuccess, Internal, what, ": CUDA kernel launch failed: ", cudaGetErrorString(e));
}

inline Stream stream_of(const KernelArgs& args) { return static_cast<Stream>(args.stream); }

inline Shape to_shape(const Dims& d) {
  KILN_CHECK(d.size() <= static_cast<size_t>(kMaxRank), Unsupported, "cuda backend: rank ", d.size(), " > ", kMaxRank);
  Shape s;
  s.rank = static_cast<int>(d.size());
  for (size_t k = 0; k < d.size(); ++k) s.d[k] = d[k];
  return s;
}

inline std::vector<int64_t> row_strides(const Dims& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (int64_t k = static_cast<int64_t>(d.size()) - 2; k >= 0; --k) s[k] = s[k + 1] * d[k + 1];
  return s;
}

/// Element strides of each logical dim of `dims` stored in `format` (Plain or ChannelsLast: N, spatial..., C
/// in memory; reformat_kernels.cpp).
std::vector<int64_t> format_strides(TensorFormat format, const Dims& dims);
/// The logical dims in the order `format` (Plain or ChannelsLast) stores them, outermost first.
std::vector<size_t> format_order(TensorFormat format, size_t rank);

inline int64_t numel(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

inline int dcode(DType dt) { return static_cast<int>(dt); }

/// A device buffer owned by a kernel (weights uploaded at kernel creation).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) {
    if (bytes) KILN_CUDA_CHECK(cudaMalloc(&data_, bytes));
  }
  /// Uploads `bytes` host bytes (synchronously: only at kernel creation).
  DeviceBuffer(const void* host, size_t bytes) : DeviceBuffer(bytes) {
    if (bytes) KILN_CUDA_CHECK(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : data_(o.data_) { o.data_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }
  void* data() const { return data_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }

 private:
  void* data_ = nullptr;
};

/// Uploads a host tensor converted to `dtype` (weights in the layer's compute dtype).
DeviceBuffer upload(const HostTensor& t, DType dtype);

/// The table, built once (rows from each family's register function).
const KernelTable& cuda_kernels();

void register_pointwise(KernelTable& rows);
void register_movement(KernelTable& rows);
void register_reduction(KernelTable& rows);
void register_pooling(KernelTable& rows);
void register_flash_attention(KernelTable& rows);
void register_attention(KernelTable& rows);
void register_matmul(KernelTable& rows);
void register_convolution(KernelTable& rows);
void register_conv_graph(KernelTable& rows);
void register_nhwc_conv(KernelTable& rows);
void register_scatter(KernelTable& rows);
void register_resize(KernelTable& rows);
void register_fill(KernelTable& rows);
void register_topk(KernelTable& rows);
void register_cumulative(KernelTable& rows);
void register_nonzero(KernelTable& rows);
void register_reformat(KernelTable& rows);

// ---- CUDA graphs (cuda_graph.cpp) ----

/// Records what `record` enqueues on the stream it is given into `graph` (GraphRecorder::record, backend.h).
bool record_graph(const std::function<void(void*)>& record, std::unique_ptr<DeviceGraph>& graph);
/// Whether this thread is recording a CUDA graph now (allocations and waits are errors then).
bool recording_graph();
/// Throws kiln::Error when this thread records a graph or `stream` is being captured (by Kiln or by the
/// caller): `what` (a wait for the device, an allocation) cannot be part of a graph.
void check_not_recording(Stream stream, const char* what);

/// Ranks of every tensor of the layer are <= kMaxRank (else `why` says so).
bool ranks_fit(const LayerInfo& layer, std::string* why);
/// The layer's floating tensors are fp32, fp16 or bf16 only.
bool float_dtypes(const LayerInfo& layer, std::string* why);
/// True when the layer's output is f32 (TF32 tactics); otherwise false with `why` set.
bool f32_output(const LayerInfo& layer, std::string* why);
/// The compute capability of the current device (90 for sm_90); throws kiln::Error without one.
int current_compute_capability();
/// Every input and output of the layer channels-last (the tactics that run channels-last end to end: the
/// NHWC convolutions, whose residuals are then read in the output's format).
TacticFormats all_channels_last(const LayerInfo& layer);

}  // namespace kiln::engine::cuda
