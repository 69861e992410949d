// CUDA graphs for ExecutionContext (GraphRecorder, kiln/engine/backend.h): the work of one execute() is
// recorded by stream capture on a private stream (so that nothing else enqueued on the caller's stream, and
// no other thread, ends up in the graph, and so that the legacy default stream, which cannot be captured, may
// still be the caller's), instantiated, and updated in place (cudaGraphExecUpdate) when a later recording has
// the same topology.
//
// Capture mode: cudaStreamCaptureModeThreadLocal. Calls that could wait for the device or allocate
// (cudaMalloc, cudaMemcpy, cudaStreamSynchronize) fail on the recording thread instead of breaking the graph
// silently, while other threads (contexts of other plans, PyTorch) go on undisturbed.

#include <cuda_runtime.h>

#include "engine/backends/cuda/cuda_util.h"

namespace kiln::engine::cuda {
namespace {

thread_local bool t_recording = false;

/// An instantiated graph; destroying it while a launch is in flight is allowed (CUDA frees it on completion).
class CudaGraph : public DeviceGraph {
 public:
  explicit CudaGraph(cudaGraphExec_t exec) : exec_(exec) {}
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  ~CudaGraph() override {
    if (exec_) cudaGraphExecDestroy(exec_);
  }
  void launch(void* stream) override {
    KILN_CUDA_CHECK(cudaGraphLaunch(exec_, static_cast<cudaStream_t>(stream)));
  }
  cudaGraphExec_t exec() const { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

struct StreamHolder {
  cudaStream_t stream = nullptr;
  ~StreamHolder() {
    if (stream) cudaStreamDestroy(stream);
  }
};

struct GraphHolder {
  cudaGraph_t graph = nullptr;
  ~GraphHolder() {
    if (graph) cudaGraphDestroy(graph);
  }
};

/// Ends a capture that an exception left open (the recording is discarded) and clears the error it left.
void abandon_capture(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream, &partial);
    if (partial) cudaGraphDestroy(partial);
  }
  cudaGetLastError();
}

/// Sets the thread's recording flag for its lifetime.
struct RecordingFlag {
  RecordingFlag() { t_recording = true; }
  ~RecordingFlag() { t_recording = false; }
};

}  // namespace

bool recording_graph() { return t_recording; }

void check_not_recording(Stream stream, const char* what) {
  bool capturing = t_recording;
  if (!capturing && stream != nullptr) {
    // A stream the caller is capturing itself (e.g. a whole-module graph recorded by PyTorch around the
    // engine).
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    capturing =
        cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone;
  }
  KILN_CHECK(!capturing, Unsupported, "cuda: ", what,
             " while the stream is being recorded into a CUDA graph");
}

bool record_graph(const std::function<void(void*)>& record, std::unique_ptr<DeviceGraph>& graph) {
  KILN_CHECK(!t_recording, Internal, "cuda: a CUDA graph recording started inside another one");
  std::unique_ptr<DeviceGraph> previous = std::move(graph);  // `graph` stays null unless recording succeeds
  StreamHolder stream;
  KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream.stream, cudaStreamNonBlocking));
  KILN_CUDA_CHECK(cudaStreamBeginCapture(stream.stream, cudaStreamCaptureModeThreadLocal));
  GraphHolder recorded;
  try {
    RecordingFlag flag;
    record(stream.stream);
  } catch (...) {
    abandon_capture(stream.stream);
    throw;
  }
  cudaError_t e = cudaStreamEndCapture(stream.stream, &recorded.graph);
  if (e != cudaSuccess) {
    cudaGetLastError();
    KILN_FAIL(Unsupported, "cuda: the work could not be recorded as a graph (", cudaGetErrorName(e), ": ",
              cudaGetErrorString(e), ")");
  }
  KILN_CHECK(recorded.graph != nullptr, Internal, "cuda: stream capture returned no graph");
  if (auto* old = dynamic_cast<CudaGraph*>(previous.get())) {
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(old->exec(), recorded.graph, &info) == cudaSuccess) {
      graph = std::move(previous);
      return true;
    }
    cudaGetLastError();  // an update refused (another topology, other kernels) is no error: instantiate anew
  }
  previous.reset();
  cudaGraphExec_t exec = nullptr;
  e = cudaGraphInstantiate(&exec, recorded.graph, 0);
  if (e != cudaSuccess) {
    cudaGetLastError();
    KILN_FAIL(Unsupported, "cuda: the recorded graph could not be instantiated (", cudaGetErrorName(e), ": ",
              cudaGetErrorString(e), ")");
  }
  graph = std::make_unique<CudaGraph>(exec);
  return false;
}

}  // namespace kiln::engine::cuda
