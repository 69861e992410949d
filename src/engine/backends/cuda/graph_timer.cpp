#include "engine/backends/cuda/graph_timer.h"

#include <algorithm>
#include <vector>

#include "engine/backends/cuda/cuda_util.h"

namespace kiln::engine::cuda {
namespace {

/// The stream, events, graph and executable graph of one measurement, released on every path.
struct Resources {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  Resources() {
    KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    KILN_CUDA_CHECK(cudaEventCreate(&start));
    KILN_CUDA_CHECK(cudaEventCreate(&stop));
  }
  Resources(const Resources&) = delete;
  Resources& operator=(const Resources&) = delete;
  ~Resources() {
    if (stream) {
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
        cudaGraph_t abandoned = nullptr;
        cudaStreamEndCapture(stream, &abandoned);
        if (abandoned) cudaGraphDestroy(abandoned);
      }
      cudaStreamSynchronize(stream);
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (stream) cudaStreamDestroy(stream);
    (void)cudaGetLastError();  // a failed measurement leaves no sticky error for the next launch check
  }
};

}  // namespace

float graph_time_ms(const std::function<void(cudaStream_t)>& enqueue, int repeats, int samples) {
  repeats = std::max(repeats, 1);
  samples = std::max(samples, 1);
  Resources r;
  enqueue(r.stream);
  KILN_CUDA_CHECK(cudaStreamSynchronize(r.stream));
  KILN_CUDA_CHECK(cudaStreamBeginCapture(r.stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < repeats; ++i) enqueue(r.stream);
  KILN_CUDA_CHECK(cudaStreamEndCapture(r.stream, &r.graph));
  KILN_CHECK(r.graph != nullptr, Internal, "cuda: timing capture returned no graph");
  KILN_CUDA_CHECK(cudaGraphInstantiate(&r.exec, r.graph, 0));
  KILN_CUDA_CHECK(cudaGraphLaunch(r.exec, r.stream));  // warm-up replay
  std::vector<float> ms(static_cast<size_t>(samples));
  for (float& t : ms) {
    KILN_CUDA_CHECK(cudaEventRecord(r.start, r.stream));
    KILN_CUDA_CHECK(cudaGraphLaunch(r.exec, r.stream));
    KILN_CUDA_CHECK(cudaEventRecord(r.stop, r.stream));
    KILN_CUDA_CHECK(cudaEventSynchronize(r.stop));
    KILN_CUDA_CHECK(cudaEventElapsedTime(&t, r.start, r.stop));
  }
  std::nth_element(ms.begin(), ms.begin() + samples / 2, ms.end());
  return ms[static_cast<size_t>(samples / 2)] / static_cast<float>(repeats);
}

}  // namespace kiln::engine::cuda
