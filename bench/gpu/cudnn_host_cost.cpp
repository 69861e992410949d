// Host cost of one convolution call: cuDNN's legacy API (cudnnConvolutionForward, what the CUDA backend's
// convolution kernels call) against its graph API (backend descriptors) with an execution plan built once and
// a variant pack reused or rebuilt per call. Also a graph of convolution + bias + ReLU (one runtime-fusion
// engine). fp16, NHWC, a few resnet50 layers at batch 1 and 32. For each: host microseconds per call (the
// enqueue loop, no synchronisation inside), device milliseconds per call (CUDA events around the loop), and
// the largest difference between the two APIs' outputs.
//
//   nvcc -O2 -std=c++17 bench/gpu/cudnn_host_cost.cpp -lcudnn -o /tmp/cudnn_host_cost && /tmp/cudnn_host_cost
// (scripts/device/cudnn_host_cost.sh does this on the GPU machine.)

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cudnn_graph_util.h"

namespace {

using namespace cudnn_bench;

struct Shape {
  int n, c, h, w, k, r, stride, pad;
  int p() const { return (h + 2 * pad - r) / stride + 1; }
  int q() const { return (w + 2 * pad - r) / stride + 1; }
};

struct GraphPlan {
  Desc plan = nullptr;
  int64_t workspace = 0;
  std::vector<int64_t> uids;
};

/// Convolution x (uid 1) * w (uid 2) -> y (uid 3); with `fused`, y = relu(conv + bias (uid 4)).
GraphPlan build(cudnnHandle_t handle, const Shape& s, bool fused) {
  const cudnnDataType_t half = CUDNN_DATA_HALF, fl = CUDNN_DATA_FLOAT;
  Desc x = tensor(1, s.n, s.c, s.h, s.w, half, false);
  Desc w = tensor(2, s.k, s.c, s.r, s.r, half, false);
  Desc y = tensor(3, s.n, s.k, s.p(), s.q(), half, false);
  Desc conv_out = fused ? tensor(10, s.n, s.k, s.p(), s.q(), fl, true) : y;
  Desc op = conv_forward_op(x, w, conv_out, fl, s.stride, s.pad);
  if (!op) {
    std::fprintf(stderr, "cuDNN refused the convolution\n");
    std::exit(1);
  }
  std::vector<Desc> ops = {op};
  GraphPlan g;
  g.uids = {1, 2, 3};
  if (fused) {
    Desc bias = tensor(4, 1, s.k, 1, 1, half, false);
    Desc biased = tensor(11, s.n, s.k, s.p(), s.q(), fl, true);
    ops.push_back(pointwise_op(CUDNN_POINTWISE_ADD, conv_out, bias, biased));
    ops.push_back(pointwise_op(CUDNN_POINTWISE_RELU_FWD, biased, nullptr, y));
    g.uids.push_back(4);
  }
  Desc graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(ops.size()), ops.data());
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  CK(cudnnBackendFinalize(graph));
  Desc heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendHeurMode_t hm = CUDNN_HEUR_MODE_A;
  set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
  set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm);
  CK(cudnnBackendFinalize(heur));
  std::vector<Desc> cfgs(8);
  for (auto& c : cfgs) c = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  int64_t found = 0;
  CK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                              int64_t(cfgs.size()), &found, cfgs.data()));
  for (int64_t i = 0; i < found; ++i) {
    Desc plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i]);
    if (cudnnBackendFinalize(plan) != CUDNN_STATUS_SUCCESS) {
      cudnnBackendDestroyDescriptor(plan);
      continue;
    }
    int64_t n = 0;
    CK(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                &g.workspace));
    g.plan = plan;
    std::printf("    graph%s: engine config %lld of %lld finalized, workspace %lld bytes\n",
                fused ? " conv+bias+relu" : " conv", (long long)i, (long long)found, (long long)g.workspace);
    return g;
  }
  std::printf("    graph%s: no engine config of %lld finalized\n", fused ? " conv+bias+relu" : " conv",
              (long long)found);
  return g;
}

Desc variant_pack(const GraphPlan& g, std::vector<void*> ptrs, void* ws) {
  Desc vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  set(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, int64_t(g.uids.size()), g.uids.data());
  set(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, int64_t(ptrs.size()), ptrs.data());
  set(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
  CK(cudnnBackendFinalize(vp));
  return vp;
}

void* random_half(size_t n, unsigned seed) {
  std::vector<__half> h(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    h[i] = __float2half(float(seed >> 8) / float(1u << 23) - 1.0f);
  }
  void* d = nullptr;
  CK(cudaMalloc(&d, n * 2));
  CK(cudaMemcpy(d, h.data(), n * 2, cudaMemcpyHostToDevice));
  return d;
}

float max_diff(const void* a, const void* b, size_t n) {
  std::vector<__half> ha(n), hb(n);
  CK(cudaMemcpy(ha.data(), a, n * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hb.data(), b, n * 2, cudaMemcpyDeviceToHost));
  float m = 0;
  for (size_t i = 0; i < n; ++i) m = std::fmax(m, std::fabs(__half2float(ha[i]) - __half2float(hb[i])));
  return m;
}

/// Host µs per call of `call` over `reps` calls, and device ms per call.
template <typename F>
void time_calls(const char* what, cudaStream_t stream, int reps, F call) {
  for (int i = 0; i < 5; ++i) call();
  CK(cudaStreamSynchronize(stream));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0, stream));
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) call();
  double host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
  CK(cudaEventRecord(e1, stream));
  CK(cudaEventSynchronize(e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  std::printf("    %-34s host %8.2f us/call   device %8.4f ms/call\n", what, host_us, ms / reps);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
}

}  // namespace

int main() {
  cudnnHandle_t handle;
  CK(cudnnCreate(&handle));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CK(cudnnSetStream(handle, stream));
  std::printf("cuDNN %zu\n", cudnnGetVersion());
  const Shape shapes[] = {{1, 64, 56, 56, 64, 3, 1, 1},   {1, 256, 56, 56, 64, 1, 1, 0},
                          {1, 512, 7, 7, 512, 3, 1, 1},   {32, 64, 56, 56, 64, 3, 1, 1},
                          {32, 256, 56, 56, 64, 1, 1, 0}, {32, 512, 7, 7, 512, 3, 1, 1}};
  const int reps = 200;
  void* ws = nullptr;
  CK(cudaMalloc(&ws, size_t{256} << 20));
  for (const Shape& s : shapes) {
    std::printf("N=%d C=%d %dx%d K=%d %dx%d stride %d\n", s.n, s.c, s.h, s.w, s.k, s.r, s.r, s.stride);
    size_t nx = size_t(s.n) * s.c * s.h * s.w, nw = size_t(s.k) * s.c * s.r * s.r,
           ny = size_t(s.n) * s.k * s.p() * s.q();
    void* x = random_half(nx, 1);
    void* w = random_half(nw, 2);
    void* b = random_half(s.k, 3);
    void *y0 = nullptr, *y1 = nullptr;
    CK(cudaMalloc(&y0, ny * 2));
    CK(cudaMalloc(&y1, ny * 2));
    // Legacy API, as the CUDA backend calls it (descriptors made once, cudnnSetStream + the call each time).
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CK(cudnnCreateTensorDescriptor(&xd));
    CK(cudnnCreateTensorDescriptor(&yd));
    CK(cudnnCreateFilterDescriptor(&wd));
    CK(cudnnCreateConvolutionDescriptor(&cd));
    CK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, s.n, s.c, s.h, s.w));
    CK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, s.n, s.k, s.p(), s.q()));
    CK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, s.k, s.c, s.r, s.r));
    CK(cudnnSetConvolution2dDescriptor(cd, s.pad, s.pad, s.stride, s.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                       CUDNN_DATA_FLOAT));
    CK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH));
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int got = 0;
    CK(cudnnGetConvolutionForwardAlgorithm_v7(handle, xd, wd, cd, yd, 8, &got, perf));
    cudnnConvolutionFwdAlgo_t algo = perf[0].algo;
    for (int i = 0; i < got; ++i) {
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= (size_t{256} << 20)) {
        algo = perf[i].algo;
        break;
      }
    }
    float one = 1.0f, zero = 0.0f;
    time_calls("legacy cudnnConvolutionForward", stream, reps, [&] {
      CK(cudnnSetStream(handle, stream));
      CK(cudnnConvolutionForward(handle, &one, xd, x, wd, w, cd, algo, ws, size_t{256} << 20, &zero, yd, y0));
    });
    GraphPlan g = build(handle, s, false);
    if (g.plan) {
      Desc vp = variant_pack(g, {x, w, y1}, ws);
      time_calls("graph API, variant pack reused", stream, reps,
                 [&] { CK(cudnnBackendExecute(handle, g.plan, vp)); });
      time_calls("graph API, variant pack per call", stream, reps, [&] {
        Desc v = variant_pack(g, {x, w, y1}, ws);
        CK(cudnnBackendExecute(handle, g.plan, v));
        cudnnBackendDestroyDescriptor(v);
      });
      CK(cudaStreamSynchronize(stream));
      std::printf("    max |legacy - graph| = %g\n", max_diff(y0, y1, ny));
    }
    GraphPlan f = build(handle, s, true);
    if (f.plan) {
      Desc vp = variant_pack(f, {x, w, y1, b}, ws);
      time_calls("graph API conv+bias+relu", stream, reps, [&] { CK(cudnnBackendExecute(handle, f.plan, vp)); });
    }
    cudaFree(x);
    cudaFree(w);
    cudaFree(b);
    cudaFree(y0);
    cudaFree(y1);
  }
  return 0;
}
